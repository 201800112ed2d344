"""The morning brief, composed from the data (beat at MORNING_BRIEF_HOUR_UTC, `manage.py
compose_brief`, and once when the local stack's first feed and analytics passes end).

Five sections, each line linked to its source (the item's URL, else the API path that sells
or lists it): the market regime (the newest intel snapshot), the top movers (24 h change of
the 1h closes), the highest-impact news (sentiment magnitude over the last 24 h), today's
calendar with the macro gate and the nearest high-impact event, and notable prediction moves
(a yes price that moved PREDICTION_ALERT_MOVE or more in 24 h).

The brief is an EditorialPiece (kind morning_brief) with `composed_at`, `brief_date` and its
sections (and the inputs' provenance) as JSON. Staff may edit it or write their own in the
admin: a piece of the day that staff saved (it has an author), wrote (not composed), or
unpublished is never overwritten by the next composition of that day."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from a2a_service.core.formats import iso
from a2a_service.core.locks import advisory_xact_lock
from catalog.analytics import desks, macro
from catalog.analytics.provenance import Provenance
from catalog.analytics.sentiment import scored_news
from catalog.analytics.series import ohlcv, symbols_with_candles
from catalog.models import EditorialPiece, IntelSnapshot, PredictionPrice, RegimeSnapshot

BRIEF = EditorialPiece.Kind.MORNING_BRIEF
WINDOW = timedelta(hours=24)  # movers, news and prediction moves: the day before the brief
MOVERS = 5
NEWS = 5
PREDICTIONS = 5
CALENDAR_LINES = 8
# A snapshot older than two analytics passes' worth of failures says nothing about this morning.
INTEL_MAX_AGE = timedelta(hours=2)
METHOD = (
    "composed from the newest intel snapshot's regime, 24 h change of 1h closes, news by "
    "sentiment magnitude over 24 h, the next 24 h of the calendar with the macro gate, and "
    "prediction yes-price moves over 24 h; each line names its source"
)


@dataclass
class Section:
    name: str
    title: str
    lines: list[dict[str, str]] = field(default_factory=list)

    def add(self, text: str, source: str) -> None:
        self.lines.append({"text": text, "source": source})

    def out(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "lines": self.lines}


@dataclass
class Composed:
    title: str
    summary: str
    body: str
    sections: list[dict[str, Any]]
    provenance: dict[str, Any]


@dataclass(frozen=True)
class BriefRun:
    action: str  # created, updated, kept (staff's piece of the day), empty (no data)
    piece: EditorialPiece | None = None
    detail: str = ""


def _pct(x: float) -> str:
    return f"{x * 100:+.2f}%"


def regime_section(prov: Provenance, now: datetime) -> tuple[Section, str | None]:
    sec = Section("regime", "Market regime")
    snap = IntelSnapshot.objects.filter(computed_at__gte=now - INTEL_MAX_AGE).order_by("-computed_at").first()
    if snap is None:
        return sec, None
    prov.add(source="intel", replay=snap.replay, as_of=snap.as_of or snap.computed_at)
    market = (snap.payload or {}).get("regime") or {}
    since = RegimeSnapshot.objects.filter(regime=snap.regime).order_by("-computed_at").first()
    conf = market.get("confidence")
    text = f"Market regime: {snap.regime.replace('_', ' ')}"
    if isinstance(conf, int | float):
        text += f" (confidence {conf:.2f})"
    if since is not None:
        text += f", since {since.computed_at:%Y-%m-%d %H:%M} UTC"
    sec.add(text + ".", "/api/a2a/intel/latest")
    for major in market.get("majors") or []:
        label = str(major.get("label", "unknown")).replace("_", " ")
        sec.add(
            f"{major.get('symbol')}: {label} on 1h bars.",
            f"/api/a2a/signals?symbol={quote(str(major.get('symbol')))}",
        )
    return sec, snap.regime


@dataclass(frozen=True)
class Mover:
    symbol: str
    exchange: str
    change: float
    last: float


def movers(prov: Provenance, now: datetime) -> list[Mover]:
    """Each symbol's 24 h change: the newest 1h close against the close 24 bars before, for
    series still fresh; largest absolute change first."""
    out = []
    for symbol in symbols_with_candles("1h"):
        series = ohlcv(symbol, "1h", limit=25)
        if (
            series is None
            or len(series) < 25
            or not desks.series_fresh(series, max_age=desks.CANDLES_1H_MAX_AGE, now=now)
        ):
            continue
        before, last = float(series.close[0]), float(series.close[-1])
        if before <= 0:
            continue
        prov.add(
            source=series.source, venue=series.exchange, replay=series.replay, as_of=series.last_at, items=25
        )
        out.append(Mover(symbol, series.exchange, last / before - 1, last))
    out.sort(key=lambda m: (-abs(m.change), m.symbol))
    return out


def movers_section(found: list[Mover]) -> Section:
    sec = Section("movers", "Top movers (24 h)")
    for m in found[:MOVERS]:
        sec.add(
            f"{m.symbol} {_pct(m.change)} in 24 h to {m.last:,.6g} ({m.exchange}).",
            f"/api/a2a/signals?symbol={quote(m.symbol)}",
        )
    return sec


def news_section(prov: Provenance, now: datetime) -> Section:
    sec = Section("news", "Highest-impact news (24 h)")
    items = scored_news(since=now - WINDOW, now=now)
    items.sort(key=lambda n: (-abs(n.compound), -n.at.timestamp(), n.id))
    for n in items[:NEWS]:
        prov.add(source="news", venue=n.source or None, replay=n.replay, as_of=n.at)
        sec.add(
            f"{n.title} ({n.source or 'news'}, {n.category}; sentiment {n.label} {n.compound:+.2f}).",
            n.url or f"/api/a2a/news/{n.id}/unlock",
        )
    return sec


def calendar_section(prov: Provenance, now: datetime) -> tuple[Section, macro.MacroGate]:
    sec = Section("calendar", "Today's calendar")
    gate = macro.macro_gate(now=now)
    if gate.state == "unknown":
        return sec, gate
    macro.calendar_sources(prov)
    nearest = gate.next_high or (gate.blocking[0] if gate.blocking else None)
    if nearest is not None:
        sec.add(
            f"Nearest high-impact event: {nearest.title} ({nearest.country or 'global'}) at "
            f"{nearest.starts_at:%Y-%m-%d %H:%M} UTC, in {macro.hours_to(nearest, now):.1f} h.",
            nearest.url or "/api/a2a/x402/calendar/risk",
        )
    sec.add(f"Macro gate {gate.state}: {gate.reason}", "/api/a2a/x402/risk/macro-gate")
    for e in macro.upcoming(now=now, days=1, min_impact="medium")[:CALENDAR_LINES]:
        sec.add(
            f"{e.starts_at:%H:%M} UTC {e.title} ({e.country or 'global'}, {e.impact} impact)."
            if not e.all_day
            else f"All day: {e.title} ({e.country or 'global'}, {e.impact} impact).",
            e.url or "/api/a2a/x402/calendar/risk",
        )
    return sec, gate


def predictions_section(prov: Provenance, now: datetime) -> Section:
    """Markets whose yes price moved PREDICTION_ALERT_MOVE or more: the newest price against
    the last one at or before 24 h ago (else the oldest in the window)."""
    sec = Section("predictions", "Notable prediction moves (24 h)")
    threshold = float(settings.PREDICTION_ALERT_MOVE)
    rows = (
        PredictionPrice.objects.filter(observed_at__gte=now - WINDOW - timedelta(hours=6))
        .select_related("market")
        .order_by("market_id", "observed_at")
    )
    by_market: dict[int, list[PredictionPrice]] = {}
    for row in rows:
        by_market.setdefault(row.market_id, []).append(row)
    moves = []
    for prices in by_market.values():
        newest = prices[-1]
        if newest.observed_at < now - WINDOW:
            continue
        before = [p for p in prices if p.observed_at <= now - WINDOW]
        base = before[-1] if before else prices[0]
        if base is newest:
            continue
        move = float(newest.yes_price) - float(base.yes_price)
        if abs(move) >= threshold:
            moves.append((move, base, newest))
    moves.sort(key=lambda m: (-abs(m[0]), m[2].market_id))
    for move, base, newest in moves[:PREDICTIONS]:
        market = newest.market
        prov.add(
            source=market.source or "manual",
            venue=market.venue,
            replay=newest.replay,
            as_of=newest.observed_at,
        )
        sec.add(
            f"{market.question}: yes {float(base.yes_price):.0%} to {float(newest.yes_price):.0%} "
            f"({move * 100:+.1f} pts) on {market.venue}.",
            market.url or f"/api/a2a/prediction/catalog?venue={quote(market.venue)}",
        )
    return sec


def render(sections: list[dict[str, Any]], *, lines: int | None = None) -> str:
    """Markdown: each section a heading, each line a bullet with its source."""
    parts = []
    for sec in sections:
        chosen = sec["lines"] if lines is None else sec["lines"][:lines]
        if not chosen:
            continue
        parts.append(
            f"## {sec['title']}\n" + "\n".join(f"- {x['text']} [source]({x['source']})" for x in chosen)
        )
    return "\n\n".join(parts)


def brief_build(*, now: datetime) -> Composed | None:
    """The brief from the stored data, or None when no section has anything to say."""
    prov = Provenance(method=METHOD, max_age=WINDOW, now=now)
    regime, label = regime_section(prov, now)
    found = movers(prov, now)
    calendar, gate = calendar_section(prov, now)
    sections = [
        regime,
        movers_section(found),
        news_section(prov, now),
        calendar,
        predictions_section(prov, now),
    ]
    if not any(s.lines for s in sections):
        return None
    out = [s.out() for s in sections]
    day = now.date()
    headline = []
    if label:
        headline.append(label.replace("_", " "))
    if found:
        headline.append(f"{found[0].symbol} {_pct(found[0].change)}")
    summary = []
    if label:
        summary.append(f"The market regime is {label.replace('_', ' ')}.")
    if found:
        summary.append(f"Largest 24 h mover: {found[0].symbol} {_pct(found[0].change)}.")
    nearest = gate.next_high or (gate.blocking[0] if gate.blocking else None)
    if nearest is not None:
        summary.append(
            f"Nearest high-impact event: {nearest.title} in {macro.hours_to(nearest, now):.1f} h; "
            f"the macro gate is {gate.state}."
        )
    elif gate.state != "unknown":
        summary.append(f"No high-impact event ahead; the macro gate is {gate.state}.")
    title = f"Morning brief {day:%Y-%m-%d}" + (f": {', '.join(headline)}" if headline else "")
    return Composed(
        title=title,
        summary=" ".join(summary) or "What moved and what is scheduled, from the feeds.",
        body=render(out),
        sections=out,
        provenance=prov.out(),
    )


def _day_bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return start, start + timedelta(days=1)


def staff_piece_of_day(day: date) -> EditorialPiece | None:
    """The day's brief staff own: a composed one they saved (author) or unpublished, or one
    they wrote (not composed) created or published that day."""
    start, end = _day_bounds(day)
    return (
        EditorialPiece.objects.filter(kind=BRIEF)
        .filter(
            Q(brief_date=day, author__isnull=False)
            | Q(brief_date=day, published_at__isnull=True)
            | Q(composed_at__isnull=True, created_at__gte=start, created_at__lt=end)
            | Q(composed_at__isnull=True, published_at__gte=start, published_at__lt=end)
        )
        .first()
    )


def brief_compose(*, now: datetime | None = None) -> BriefRun:
    """Compose the day's brief and publish it (after MORNING_BRIEF_PUBLISH_DELAY_MINUTES, the
    time staff have to review it first); recomposing the same day updates the composed piece
    unless staff own the day's brief."""
    now = now or timezone.now()
    day = now.date()
    with transaction.atomic():
        # One composition of a day at a time (two beats both sending compose-morning-brief):
        # the second waits, then finds the first's piece and updates it instead of creating a
        # second brief of the day (pushed to subscribers a second time).
        advisory_xact_lock(f"brief-compose:{day.isoformat()}")
        kept = staff_piece_of_day(day)
        if kept is not None:
            return BriefRun("kept", kept, "staff edited or wrote today's brief; it is left as it is")
        composed = brief_build(now=now)
        if composed is None:
            return BriefRun("empty", None, "no data to compose a brief from")
        fields = {
            "title": composed.title[:300],
            "summary": composed.summary,
            "body": composed.body,
            "composed_at": now,
            "sections": {"sections": composed.sections, "provenance": composed.provenance},
        }
        piece = (
            EditorialPiece.objects.select_for_update()
            .filter(kind=BRIEF, brief_date=day, author__isnull=True)
            .order_by("-id")
            .first()
        )
        if piece is not None:
            for name, value in fields.items():
                setattr(piece, name, value)
            piece.save()
            return BriefRun("updated", piece)
        delay = timedelta(minutes=float(settings.MORNING_BRIEF_PUBLISH_DELAY_MINUTES))
        piece = EditorialPiece.objects.create(kind=BRIEF, brief_date=day, published_at=now + delay, **fields)
        return BriefRun("created", piece, iso(piece.published_at) or "")
