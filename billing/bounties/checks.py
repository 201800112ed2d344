"""The automatic checks of bounty submissions. Each answers accept, reject or undecided (what
our own records cannot settle stays submitted for staff): a reward is never paid on a guess."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from pydantic import BaseModel

from billing.bounties.models import Bounty, BountyClaim
from catalog.api.bodies import ResolutionMismatchSubmission, SpreadSnapshotIngest
from catalog.models import PredictionMarket, PredictionMatch, SpreadSnapshot

# A resolved market's last yes price: at or above this it resolved yes, at or below 1 - this, no.
RESOLVED_AT = Decimal("0.99")
FUTURE_SKEW = timedelta(seconds=60)


@dataclass(frozen=True)
class Verdict:
    decision: Literal["accept", "reject", "undecided"]
    reason: str


def check_submission(bounty: Bounty, submission: BaseModel, *, claim_id: int) -> Verdict:
    if isinstance(submission, SpreadSnapshotIngest):
        return spread_snapshot_check(bounty, submission)
    if isinstance(submission, ResolutionMismatchSubmission):
        return resolution_mismatch_check(bounty, submission, claim_id=claim_id)
    return Verdict("undecided", f"no automatic check for {bounty.kind}: staff decide")


def spread_snapshot_check(bounty: Bounty, body: SpreadSnapshotIngest) -> Verdict:
    """Well-formed (the body model), for the bounty's symbol and venue, fresh, and within the
    tolerance of our own reading of the same venue pair (the exchanges feed) at that time."""
    criteria = _criteria(bounty)
    symbol = str(criteria.get("symbol", ""))
    venue = str(criteria.get("venue", "")).lower()
    max_age = timedelta(
        seconds=_number(criteria, "max_age_seconds", settings.BOUNTY_SNAPSHOT_MAX_AGE_SECONDS)
    )
    tolerance = _number(criteria, "tolerance_bps", settings.BOUNTY_SPREAD_TOLERANCE_BPS)
    now = timezone.now()
    unmatched: list[str] = []
    for i, r in enumerate(body.readings):
        name = f"reading {i} ({r.symbol} {r.venue_a}/{r.venue_b})"
        if symbol and r.symbol.upper() != symbol.upper():
            return Verdict("reject", f"{name}: the bounty asks for {symbol}")
        if venue and venue not in (r.venue_a.lower(), r.venue_b.lower()):
            return Verdict("reject", f"{name}: the bounty asks for a pair with {venue}")
        if r.captured_at is None:
            return Verdict("reject", f"{name}: captured_at is missing, so its freshness cannot be checked")
        captured = r.captured_at if timezone.is_aware(r.captured_at) else timezone.make_aware(r.captured_at)
        if captured > now + FUTURE_SKEW:
            return Verdict("reject", f"{name}: captured_at is in the future")
        if now - captured > max_age:
            return Verdict("reject", f"{name}: older than {max_age.total_seconds():g} s")
        ours = _our_reading(r.symbol, r.venue_a, r.venue_b, captured, max_age)
        if ours is None:
            unmatched.append(name)
            continue
        gap = abs(float(ours.spread_bps) - r.spread_bps)
        if gap > tolerance:
            return Verdict(
                "reject",
                f"{name}: {r.spread_bps:g} bps, ours {float(ours.spread_bps):g} bps at "
                f"{ours.captured_at:%H:%M:%S}Z: {gap:g} bps apart (tolerance {tolerance:g})",
            )
    if unmatched:
        return Verdict(
            "undecided", f"no reading of ours to compare with for {', '.join(unmatched)}: staff decide"
        )
    return Verdict("accept", f"{len(body.readings)} reading(s) fresh and within {tolerance:g} bps of ours")


def _criteria(bounty: Bounty) -> dict[str, Any]:
    return bounty.criteria if isinstance(bounty.criteria, dict) else {}


def _number(criteria: dict[str, Any], name: str, default: float) -> float:
    """A positive number of the criteria, else the setting (rows written outside the admin's
    validation must not break a submission)."""
    value = criteria.get(name)
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return float(default)


def _our_reading(
    symbol: str, venue_a: str, venue_b: str, at: datetime, window: timedelta
) -> SpreadSnapshot | None:
    """Our feed's reading of the same ordered venue pair closest in time to `at`."""
    rows = SpreadSnapshot.objects.filter(
        Q(symbol__iexact=symbol, venue_a__iexact=venue_a, venue_b__iexact=venue_b, source="exchanges"),
        captured_at__gte=at - window,
        captured_at__lte=at + window,
    )
    return min(rows[:200], key=lambda s: abs((s.captured_at - at).total_seconds()), default=None)


def _outcome(market: PredictionMarket) -> str | None:
    if market.status != PredictionMarket.Status.RESOLVED or market.yes_price is None:
        return None
    if market.yes_price >= RESOLVED_AT:
        return "yes"
    if market.yes_price <= 1 - RESOLVED_AT:
        return "no"
    return None


def resolution_mismatch_check(
    bounty: Bounty, body: ResolutionMismatchSubmission, *, claim_id: int
) -> Verdict:
    """An existing cross-venue match (not rejected by staff) whose two markets both resolved,
    one yes and one no; a match already rewarded by this bounty is not paid again."""
    match = PredictionMatch.objects.select_related("market_a", "market_b").filter(pk=body.match_id).first()
    if match is None:
        return Verdict("reject", f"no cross-venue match {body.match_id}")
    if match.status == PredictionMatch.Status.REJECTED:
        return Verdict("reject", f"match {match.id} was rejected by staff: not the same event")
    listed = _criteria(bounty).get("venues")
    venues = [str(v).lower() for v in listed] if isinstance(listed, list) else []
    if venues and not {match.market_a.venue.lower(), match.market_b.venue.lower()} <= set(venues):
        return Verdict("reject", f"match {match.id} is not between the bounty's venues ({', '.join(venues)})")
    resolved = [m for m in (match.market_a, match.market_b) if m.status == PredictionMarket.Status.RESOLVED]
    if len(resolved) < 2:
        return Verdict("reject", f"match {match.id}: both markets have not resolved yet")
    a, b = _outcome(match.market_a), _outcome(match.market_b)
    if a is None or b is None:
        return Verdict("undecided", f"match {match.id}: a final price is not known: staff decide")
    if a == b:
        return Verdict("reject", f"match {match.id}: both venues resolved {a}")
    # A courtesy for the usual case; the guarantee is the unique (bounty, award_key) that the
    # accept writes (billing/bounties/services.py), which concurrent claimants cannot both pass.
    rewarded = BountyClaim.objects.filter(
        bounty=bounty, status=BountyClaim.Status.ACCEPTED, submission__match_id=match.id
    ).exclude(pk=claim_id)
    if rewarded.exists():
        return Verdict("reject", f"match {match.id} was already rewarded by this bounty")
    return Verdict(
        "accept",
        f"match {match.id}: {match.market_a.venue} resolved {a}, {match.market_b.venue} resolved {b}",
    )
