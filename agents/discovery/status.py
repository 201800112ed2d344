"""Agent status, measured rather than asserted.

Our own agents (catalog agents and the hub, "agenthub"): from the answers every agent surface
recorded (agents.models.AgentInteraction) in the last AGENT_STATUS_WINDOW_MINUTES:

- disabled: the agent is switched off in the admin;
- idle: it gave no answer in the window;
- degraded: its error rate (answers that failed on our side, 5xx, over all answers) is at or
  above AGENT_STATUS_DEGRADED_ERROR_RATE, or its median latency is at or above
  AGENT_STATUS_DEGRADED_LATENCY_MS;
- online: otherwise.

Federated partners (catalog PartnerAgent): from the federation feed's last pass, which reads
each partner's signals_url:

- disabled: switched off in the admin;
- idle: it publishes no signals_url, the feed never fetched it, or the feed's last pass is older
  than three of its intervals (nobody is checking the partner);
- degraded: the last pass could not fetch or read its document;
- online: the last pass read its document."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Max, Q
from django.utils import timezone

from a2a_service.core.formats import iso
from agents.discovery import schemas as s
from agents.models import AgentInteraction
from catalog.feeds.registry import feed_get
from catalog.models import FeedState, PartnerAgent, PartnerSignal

HUB = "agenthub"
# The median is over the newest answers in the window, at most this many per agent.
MEDIAN_SAMPLE = 2000
FEDERATION_FEED = "federation"


def _failed() -> Q:
    return Q(status_code__gte=500)


def agent_activity(agent: str, *, now: datetime | None = None) -> s.AgentActivityOut:
    now = now or timezone.now()
    window = timedelta(minutes=settings.AGENT_STATUS_WINDOW_MINUTES)
    rows = AgentInteraction.objects.filter(agent=agent)
    recent = rows.filter(at__gt=now - window)
    counts = recent.aggregate(answers=Count("id"), errors=Count("id", filter=_failed()))
    day = rows.filter(at__gt=now - timedelta(hours=24)).aggregate(
        answers=Count("id"), errors=Count("id", filter=_failed())
    )
    latencies = list(recent.order_by("-at").values_list("latency_ms", flat=True)[:MEDIAN_SAMPLE])
    by_surface = dict(recent.values_list("surface").annotate(n=Count("id")).values_list("surface", "n"))
    last = rows.exclude(_failed()).aggregate(at=Max("at"))["at"]
    answers, errors = counts["answers"], counts["errors"]
    return s.AgentActivityOut(
        window_minutes=settings.AGENT_STATUS_WINDOW_MINUTES,
        answers=answers,
        errors=errors,
        error_rate=round(errors / answers, 4) if answers else 0.0,
        median_latency_ms=float(statistics.median(latencies)) if latencies else None,
        by_surface=by_surface,
        answers_24h=day["answers"],
        errors_24h=day["errors"],
        last_answer_at=iso(last),
    )


def agent_status_of(activity: s.AgentActivityOut, *, enabled: bool) -> tuple[s.AgentState, str]:
    """(status, why) by the module's rules."""
    if not enabled:
        return "disabled", "switched off by the operators"
    if activity.answers == 0:
        return "idle", f"no answer in the last {activity.window_minutes} min"
    if activity.error_rate >= settings.AGENT_STATUS_DEGRADED_ERROR_RATE:
        return "degraded", (
            f"error rate {activity.error_rate:.0%} >= {settings.AGENT_STATUS_DEGRADED_ERROR_RATE:.0%} "
            f"in the last {activity.window_minutes} min"
        )
    median = activity.median_latency_ms or 0.0
    if median >= settings.AGENT_STATUS_DEGRADED_LATENCY_MS:
        return "degraded", f"median latency {median:g} ms >= {settings.AGENT_STATUS_DEGRADED_LATENCY_MS} ms"
    return "online", f"{activity.answers} answers, error rate {activity.error_rate:.0%}"


@dataclass(frozen=True)
class FetchOutcome:
    outcome: str  # "ok", "failed", "not_fetched"
    at: datetime | None
    error: str


def _federation_outcomes(partners: list[PartnerAgent]) -> tuple[dict[str, FetchOutcome], bool]:
    """Each partner's outcome in the federation feed's last pass (the runner keeps the pass's
    per-partner warnings in last_note, or the reasons in last_error when every partner failed),
    and whether that pass is recent (within three feed intervals)."""
    state = FeedState.objects.filter(name=FEDERATION_FEED).first()
    source = feed_get(FEDERATION_FEED)
    interval = source.interval_seconds if source else 300
    if state is None or state.last_attempt_at is None:
        return {}, False
    fresh = timezone.now() - state.last_attempt_at <= timedelta(seconds=3 * interval)
    failed_pass = state.consecutive_failures > 0
    text = (state.last_error if failed_pass else state.last_note) or ""
    text = text.removeprefix("every partner failed: ")
    segments = [seg.strip() for seg in text.split("; ")]
    out: dict[str, FetchOutcome] = {}
    for p in partners:
        if not p.signals_url:
            continue
        mine = [seg for seg in segments if seg.startswith(f"{p.slug}: ")]
        # A warning about skipped signals is a read document; anything else named after the
        # partner is a failed fetch or parse.
        failures = [seg for seg in mine if "signal(s) without" not in seg]
        if failures:
            kind = failures[0].removeprefix(f"{p.slug}: ").split(":", 1)[0][:80]
            out[p.slug] = FetchOutcome("failed", state.last_attempt_at, kind)
        elif failed_pass:
            # Only some reasons survive a truncated note: a failed pass read nobody.
            out[p.slug] = FetchOutcome("failed", state.last_attempt_at, "federation pass failed")
        else:
            out[p.slug] = FetchOutcome("ok", state.last_attempt_at, "")
    return out, fresh


def partner_statuses(partners: list[PartnerAgent]) -> dict[str, s.PartnerStatusOut]:
    outcomes, fresh = _federation_outcomes(partners)
    day_ago = timezone.now() - timedelta(hours=24)
    signals = {
        row["partner__slug"]: row
        for row in PartnerSignal.objects.filter(partner__in=partners)
        .values("partner__slug")
        .annotate(n=Count("id", filter=Q(observed_at__gt=day_ago)), last=Max("published_at"))
    }
    out = {}
    for p in partners:
        fetch = outcomes.get(p.slug)
        status: s.AgentState
        if not p.enabled:
            status, why = "disabled", "switched off by the operators"
        elif not p.signals_url:
            status, why = "idle", "publishes no signals feed to check"
        elif fetch is None:
            status, why = "idle", "the federation feed has not fetched it yet"
        elif not fresh:
            status, why = "idle", "the federation feed's last pass is stale"
        elif fetch.outcome == "failed":
            status, why = "degraded", f"last fetch failed: {fetch.error}"
        else:
            status, why = "online", "last fetch read its signals"
        sig = signals.get(p.slug, {})
        out[p.slug] = s.PartnerStatusOut(
            status=status,
            reason=why,
            last_fetch=fetch.outcome if fetch else "not_fetched",
            last_fetch_at=iso(fetch.at) if fetch else None,
            last_fetch_error=fetch.error if fetch else "",
            signals_24h=sig.get("n", 0),
            last_signal_at=iso(sig.get("last")),
        )
    return out
