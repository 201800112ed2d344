"""Cross-venue matching of prediction markets, and the fee model of their price gap.

Matching (`prediction_matches_refresh`, run at the end of every Polymarket and Kalshi feed pass
and by `manage.py match_predictions`):

1. Each open market's question is normalized: lowercased, numbers unified ("$150,000", "150k"
   -> 150000; "3.0%" -> 3; "25bps" -> 25 bps), month names unified, a few venue synonyms
   mapped ("decreases" -> cut, "no change" -> hold, "nomination" -> nominee), stop words dropped.
2. Question similarity = 0.7 x IDF-weighted token Jaccard (a word shared by few markets, a name,
   counts more than "2026") + 0.3 x difflib's SequenceMatcher ratio of the normalized texts
   (word order). rapidfuzz is not installed and no dependency is added.
3. Resolution-rules differences are flagged and lower the confidence, never hidden: another
   numeric threshold (x0.5), another date (x0.5), close times more than
   PREDICTION_MATCH_CLOSE_HOURS apart (x0.8), differently named resolution sources (x0.8).
4. Pairs are assigned one to one per venue pair, best confidence first, after the pairs staff
   confirmed (confidence 1); a pair staff rejected is never suggested again. A pair at or over
   PREDICTION_MATCH_MIN_CONFIDENCE is a match; under it (a "near miss": similar wording,
   another threshold or date) it is stored for staff to confirm or reject, and not sold as a
   match.

Fees: a yes contract bought at price P costs rate x P x (1 - P) per contract (Kalshi's published
taker formula with rate 0.07, before its round-up to the cent per order; Polymarket charges no
trading fee on most markets, rate 0). Buying yes on the cheaper venue and no on the dearer one
pays 1 at resolution whichever way it goes: the gap net of both legs' fees is the edge."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from difflib import SequenceMatcher
from itertools import combinations

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from catalog.models import PredictionMarket, PredictionMatch

SIMILARITY_FLOOR = 0.65  # under this the two questions are about different things: not stored
JACCARD_WEIGHT = 0.7
THRESHOLD_FACTOR = 0.5
DATE_FACTOR = 0.5
CLOSE_FACTOR = 0.8
SOURCE_FACTOR = 0.8
# A token shared by more than this share of a venue's markets ("2026") does not nominate pairs
# (it still counts, lightly, in the similarity).
COMMON_TOKEN_SHARE = 0.25

STOP_WORDS = frozenset(
    "a an the will be is are was by in on at of to for from their its his her after before "
    "than this that with as or and any end what who which there it does do vs v".split()
)
MONTHS = {
    "jan": "january", "feb": "february", "mar": "march", "apr": "april", "jun": "june",
    "jul": "july", "aug": "august", "sep": "september", "sept": "september", "oct": "october",
    "nov": "november", "dec": "december",
}  # fmt: skip
MONTH_NAMES = frozenset(MONTHS.values()) | {"may"}
SYNONYMS = {
    "decrease": "cut", "decreases": "cut", "lower": "cut", "lowers": "cut", "cuts": "cut",
    "increase": "hike", "increases": "hike", "raise": "hike", "raises": "hike", "hikes": "hike",
    "holds": "hold", "unchanged": "hold", "pause": "hold", "nomination": "nominee",
    "wins": "win", "beat": "win", "beats": "win", "over": "above", "exceed": "above",
    "exceeds": "above", "higher": "above", "under": "below", "lower than": "below",
    "interest": "", "rate": "rates", "bp": "bps", "basis": "", "points": "bps",
    "reaches": "reach", "hit": "reach", "hits": "reach", "usa": "us", "u.s.": "us",
}  # fmt: skip
PHRASES = (("no change", "hold"), ("more than", "above"), ("greater than", "above"), ("less than", "below"))
TIME_UNITS = frozenset({"am", "pm", "et", "est", "edt", "utc"})


@dataclass(frozen=True)
class Question:
    """A question normalized for comparison."""

    tokens: tuple[str, ...]
    thresholds: frozenset[str]  # numbers that are neither years nor days of a month
    years: frozenset[str]
    days: frozenset[tuple[str, str]]  # (month, day)


def _number(raw: str) -> str:
    """'150,000' -> '150000', '3.0' -> '3', '2.50' -> '2.5', '150k' -> '150000'."""
    scale = 1
    if raw[-1] in "km":
        scale = 1000 if raw[-1] == "k" else 1_000_000
        raw = raw[:-1]
    value = Decimal(raw.replace(",", "")) * scale
    text = format(value.normalize(), "f")
    return text


def question_normalize(question: str) -> Question:
    text = question.lower()
    for phrase, word in PHRASES:
        text = text.replace(phrase, word)
    # Numbers first: thousands separators, k/m suffixes, decimals, units glued on ("25bps").
    text = re.sub(r"(?<![\w.])\d[\d,]*(?:\.\d+)?[km]?(?![\w])", lambda m: f" {_number(m.group())} ", text)
    text = re.sub(r"(\d)([a-z%])", r"\1 \2", text)
    words = [w for w in re.split(r"[^a-z0-9.]+", text) if w and w != "."]
    tokens: list[str] = []
    for word in words:
        word = word.strip(".")
        word = MONTHS.get(word, word)
        word = SYNONYMS.get(word, word)
        if word and word not in STOP_WORDS:
            tokens.append(word)
    thresholds, years, days = set(), set(), set()
    for i, tok in enumerate(tokens):
        if not re.fullmatch(r"\d+(?:\.\d+)?", tok):
            continue
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        before = tokens[i - 1] if i else ""
        if after in TIME_UNITS:
            continue  # a time of day (5 pm): the close time says it
        if re.fullmatch(r"(19|20)\d\d", tok):
            years.add(tok)
        elif before in MONTH_NAMES and tok.isdigit() and 1 <= int(tok) <= 31:
            days.add((before, tok))
        else:
            thresholds.add(tok)
    return Question(
        tokens=tuple(tokens),
        thresholds=frozenset(thresholds),
        years=frozenset(years),
        days=frozenset(days),
    )


def idf_weights(questions: list[Question]) -> dict[str, float]:
    """Smoothed inverse document frequency of each token over the markets compared."""
    df: dict[str, int] = defaultdict(int)
    for q in questions:
        for tok in set(_wording(q)):
            df[tok] += 1
    n = len(questions)
    return {tok: math.log((n + 1) / (count + 1)) + 1.0 for tok, count in df.items()}


def _wording(q: Question) -> tuple[str, ...]:
    """The question's words with each threshold as "#": the threshold is compared on its own
    (a near miss is the same wording with another number, flagged, not a weaker likeness)."""
    return tuple("#" if t in q.thresholds else t for t in q.tokens)


def question_similarity(a: Question, b: Question, idf: dict[str, float]) -> float:
    wa, wb = _wording(a), _wording(b)
    sa, sb = set(wa), set(wb)
    union = sa | sb
    if not union:
        return 0.0
    default = max(idf.values(), default=1.0)
    weight = sum(idf.get(t, default) for t in sa & sb) / sum(idf.get(t, default) for t in union)
    ratio = SequenceMatcher(None, " ".join(wa), " ".join(wb), autojunk=False).ratio()
    return JACCARD_WEIGHT * weight + (1 - JACCARD_WEIGHT) * ratio


def _source_key(text: str) -> str:
    text = text.strip().lower()
    host = re.sub(r"^https?://(www\.)?", "", text).split("/", 1)[0]
    return host or text


@dataclass
class Candidate:
    a: PredictionMarket
    b: PredictionMarket
    similarity: float
    confidence: float
    close_gap_hours: float | None
    mismatch: list[str] = field(default_factory=list)


def pair_score(
    a: PredictionMarket, b: PredictionMarket, qa: Question, qb: Question, idf: dict[str, float]
) -> Candidate:
    """The similarity of two markets' questions, the rules differences, and the confidence."""
    similarity = question_similarity(qa, qb, idf)
    confidence = similarity
    mismatch: list[str] = []
    if qa.thresholds != qb.thresholds:
        mismatch.append(
            f"threshold: {', '.join(sorted(qa.thresholds)) or 'none'} vs {', '.join(sorted(qb.thresholds)) or 'none'}"
        )
        confidence *= THRESHOLD_FACTOR
    # A date only one side states is less specific, not another date; both stating differ.
    if (qa.years and qb.years and qa.years != qb.years) or (qa.days and qb.days and qa.days != qb.days):
        da = " ".join(sorted(f"{m} {d}" for m, d in qa.days) + sorted(qa.years))
        db = " ".join(sorted(f"{m} {d}" for m, d in qb.days) + sorted(qb.years))
        mismatch.append(f"date: {da} vs {db}")
        confidence *= DATE_FACTOR
    gap: float | None = None
    if a.closes_at is not None and b.closes_at is not None:
        gap = abs((a.closes_at - b.closes_at).total_seconds()) / 3600
        if gap > settings.PREDICTION_MATCH_CLOSE_HOURS:
            mismatch.append(f"close time: {gap:.0f} h apart")
            confidence *= CLOSE_FACTOR
    sa, sb = _source_key(a.resolution_source), _source_key(b.resolution_source)
    if sa and sb and sa != sb:
        mismatch.append(f"resolution source: {a.resolution_source} vs {b.resolution_source}")
        confidence *= SOURCE_FACTOR
    return Candidate(
        a=a,
        b=b,
        similarity=round(similarity, 4),
        confidence=round(min(max(confidence, 0.0), 1.0), 4),
        close_gap_hours=round(gap, 2) if gap is not None else None,
        mismatch=mismatch,
    )


# --- fees and the gap -------------------------------------------------------------------------
def fee_rate(venue: str) -> float:
    """The venue's fee rate in the rate x P x (1 - P) per-contract formula (settings)."""
    return float(getattr(settings, f"PREDICTION_FEE_{venue.upper()}", 0.0))


def fee_per_contract(venue: str, price: float) -> float:
    return fee_rate(venue) * price * (1 - price)


@dataclass(frozen=True)
class Gap:
    gross: float  # |yes_a - yes_b|
    fee_cheap: float  # buying yes where it is cheaper
    fee_dear: float  # buying no where yes is dearer (no at 1 - P has the same P(1 - P))
    net: float
    buy_yes_venue: str
    buy_no_venue: str


def gap_of(venue_a: str, yes_a: float, venue_b: str, yes_b: float) -> Gap:
    cheap, dear = (
        ((venue_a, yes_a), (venue_b, yes_b)) if yes_a <= yes_b else ((venue_b, yes_b), (venue_a, yes_a))
    )
    gross = dear[1] - cheap[1]
    fee_cheap, fee_dear = fee_per_contract(cheap[0], cheap[1]), fee_per_contract(dear[0], dear[1])
    return Gap(
        gross=gross,
        fee_cheap=fee_cheap,
        fee_dear=fee_dear,
        net=gross - fee_cheap - fee_dear,
        buy_yes_venue=cheap[0],
        buy_no_venue=dear[0],
    )


def match_counts(match: PredictionMatch) -> bool:
    """Whether a stored pair is sold as a match: staff confirmed it, or it was computed at or
    over the minimum confidence and not rejected."""
    if match.status == PredictionMatch.Status.CONFIRMED:
        return True
    return (
        match.status == PredictionMatch.Status.AUTO
        and match.confidence >= settings.PREDICTION_MATCH_MIN_CONFIDENCE
    )


def _priced(value: Decimal | None) -> float | None:
    if value is None:
        return None
    price = float(value)
    return price if 0 < price < 1 else None


def match_prices_update(match: PredictionMatch, *, now: datetime) -> None:
    """Set the pair's prices, gap and divergence from its markets' current yes prices (the
    caller saves: a switch of `divergent` to true pushes prediction_alert)."""
    a, b = match.market_a, match.market_b
    match.yes_a, match.yes_b = a.yes_price, b.yes_price
    pa, pb = _priced(a.yes_price), _priced(b.yes_price)
    open_both = a.status == b.status == PredictionMarket.Status.OPEN
    if pa is None or pb is None:
        match.gap = match.net_gap = None
        divergent = False
    else:
        gap = gap_of(a.venue, pa, b.venue, pb)
        match.gap, match.net_gap = round(gap.gross, 6), round(gap.net, 6)
        divergent = open_both and match_counts(match) and gap.net > 0
    if divergent and not match.divergent:
        match.divergent_since = now
    elif not divergent:
        match.divergent_since = None
    match.divergent = divergent
    match.computed_at = now


# --- the matching pass ----------------------------------------------------------------------
def _candidates(markets: list[PredictionMarket], taken_pairs: set[tuple[int, int]]) -> list[Candidate]:
    questions = {m.pk: question_normalize(m.question) for m in markets}
    idf = idf_weights(list(questions.values()))
    by_venue: dict[str, list[PredictionMarket]] = defaultdict(list)
    for m in markets:
        by_venue[m.venue].append(m)
    found: list[Candidate] = []
    for va, vb in combinations(sorted(by_venue), 2):
        # An inverted index on the venue's less common tokens nominates the pairs worth scoring.
        cap = max(2, int(len(by_venue[vb]) * COMMON_TOKEN_SHARE))
        index: dict[str, list[PredictionMarket]] = defaultdict(list)
        for m in by_venue[vb]:
            for tok in set(questions[m.pk].tokens):
                index[tok].append(m)
        for a in by_venue[va]:
            nominated: dict[int, PredictionMarket] = {}
            for tok in set(questions[a.pk].tokens):
                if len(index.get(tok, ())) <= cap:
                    nominated.update({m.pk: m for m in index.get(tok, ())})
            for b in nominated.values():
                if (a.pk, b.pk) in taken_pairs:
                    continue
                cand = pair_score(a, b, questions[a.pk], questions[b.pk], idf)
                if cand.similarity >= SIMILARITY_FLOOR:
                    found.append(cand)
    return found


def prediction_matches_refresh(*, now: datetime | None = None) -> int:
    """Recompute the computed pairs over the open markets of every venue, and the prices, gap
    and divergence of every stored pair. Returns the pairs stored (confirmed and computed)."""
    now = now or timezone.now()
    with transaction.atomic():
        stored = list(PredictionMatch.objects.select_related("market_a", "market_b"))
        rejected = {
            (m.market_a_id, m.market_b_id) for m in stored if m.status == PredictionMatch.Status.REJECTED
        }
        confirmed = [m for m in stored if m.status == PredictionMatch.Status.CONFIRMED]
        auto = {(m.market_a_id, m.market_b_id): m for m in stored if m.status == PredictionMatch.Status.AUTO}
        markets = list(PredictionMarket.objects.filter(status=PredictionMarket.Status.OPEN))
        # A market is in at most one pair per other venue: confirmed pairs first, then by confidence.
        taken: set[tuple[int, str]] = set()
        for m in confirmed:
            taken |= {(m.market_a_id, m.market_b.venue), (m.market_b_id, m.market_a.venue)}
        keep: set[tuple[int, int]] = set()
        for cand in sorted(
            _candidates(markets, rejected | {(m.market_a_id, m.market_b_id) for m in confirmed}),
            key=lambda c: (-c.confidence, -c.similarity, c.a.pk, c.b.pk),
        ):
            if (cand.a.pk, cand.b.venue) in taken or (cand.b.pk, cand.a.venue) in taken:
                continue
            taken |= {(cand.a.pk, cand.b.venue), (cand.b.pk, cand.a.venue)}
            key = (cand.a.pk, cand.b.pk)
            keep.add(key)
            match = auto.get(key) or PredictionMatch(market_a=cand.a, market_b=cand.b)
            match.market_a, match.market_b = cand.a, cand.b
            match.confidence = cand.confidence
            match.question_similarity = cand.similarity
            match.close_gap_hours = cand.close_gap_hours
            match.rules_mismatch = cand.mismatch
            match_prices_update(match, now=now)
            match.save()
        # Computed pairs no longer suggested (a market closed, a better pair took it) go.
        gone = [m.pk for key, m in auto.items() if key not in keep]
        PredictionMatch.objects.filter(pk__in=gone).delete()
        for match in confirmed:
            match.confidence = 1.0
            match_prices_update(match, now=now)
            match.save()
        return len(keep) + len(confirmed)


def prediction_match_review(*, match_id: int, status: str, now: datetime | None = None) -> PredictionMatch:
    """Staff's verdict on a pair: confirmed keeps confidence 1; rejected is never re-suggested
    and stops counting at once (no divergence, no alert)."""
    if status not in (PredictionMatch.Status.CONFIRMED, PredictionMatch.Status.REJECTED):
        raise ValueError(f"not a review status: {status}")
    now = now or timezone.now()
    with transaction.atomic():
        match = (
            PredictionMatch.objects.select_for_update()
            .select_related("market_a", "market_b")
            .get(pk=match_id)
        )
        match.status = status
        if status == PredictionMatch.Status.CONFIRMED:
            match.confidence = 1.0
        match_prices_update(match, now=now)
        match.save()
        return match
