"""The calendar risk and the macro gate (catalog/analytics/macro.py): the scheduled events that
can move markets, and whether the gate around the high-impact ones is open."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso
from a2a_service.core.inputs import QueryModel
from catalog.analytics.macro import (
    CALENDAR_MAX_AGE,
    MacroGate,
    calendar_sources,
    hours_to,
    macro_gate,
    upcoming,
)
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.models import CalendarEvent
from catalog.products.registry import (
    ProductCall,
    ProductFailed,
    ProductSpec,
    TeaserSpec,
    fresh_required,
    register,
)


class CalendarRiskParams(QueryModel):
    days: float = Field(7.0, gt=0, le=60, description="how many days ahead, up to 60")
    min_impact: Literal["low", "medium", "high"] = Field("low", description="the lowest impact listed")
    country: Annotated[
        str,
        Field(
            max_length=8,
            pattern=r"^[A-Za-z]{0,8}$",
            description="ISO country or region code (US, EU); empty for all",
        ),
    ] = ""


class CalendarEventOut(BaseModel):
    id: int
    title: str
    starts_at: str | None = Field(description="ISO 8601 UTC; an all-day event: that day's midnight UTC")
    all_day: bool
    hours_to_event: float = Field(description="hours from now to the start (negative: started)")
    impact: Literal["low", "medium", "high"]
    impact_basis: str = Field(
        description="priority (the feed's PRIORITY), rule (title/category rules), default or manual"
    )
    country: str
    category: str
    calendar: str = Field(description="the ICS calendar it came from; empty for staff events")
    source: str = Field(description="the calendar feed, or manual")
    url: str
    in_gate_window: bool = Field(description="a high-impact event within ±MACRO_GATE_HOURS of now")


class GateBriefOut(BaseModel):
    state: Literal["open", "closed"]
    window_hours: float
    reason: str


class CalendarRiskOut(Provenanced):
    days: float
    min_impact: str
    country: str
    count: int
    high_impact: int = Field(description="listed events of high impact")
    events: list[CalendarEventOut] = Field(description="by start time")
    gate: GateBriefOut


class MacroGateOut(Provenanced):
    state: Literal["open", "closed"]
    allows_new_risk: bool
    reason: str = Field(description="one sentence")
    window_hours: float = Field(
        description="closed within this many hours before or after a high-impact event"
    )
    blocking_events: list[CalendarEventOut] = Field(description="the high-impact events that close the gate")
    reopens_at: str | None = Field(description="closed: when the gate opens again")
    next_high_impact: CalendarEventOut | None = Field(description="the nearest high-impact event ahead")
    next_close_at: str | None = Field(description="when the gate next closes (the next window's start)")
    calendar_rows: int
    events_ahead: int = Field(description="calendar events of any impact still ahead")


def _has_calendar() -> tuple[bool, str]:
    if CalendarEvent.objects.exists():
        return True, ""
    return False, "no calendar has been ingested"


def event_payload(event: CalendarEvent, *, now: datetime, gate_hours: float) -> dict[str, Any]:
    to = hours_to(event, now)
    return {
        "id": event.id,
        "title": event.title,
        "starts_at": iso(event.starts_at),
        "all_day": event.all_day,
        "hours_to_event": round(to, 3),
        "impact": event.impact,
        "impact_basis": event.impact_basis,
        "country": event.country,
        "category": event.category,
        "calendar": event.calendar,
        "source": event.source,
        "url": event.url,
        "in_gate_window": event.impact == CalendarEvent.Impact.HIGH and abs(to) <= gate_hours,
    }


def _gate_or_fail(now: datetime) -> tuple[MacroGate, Provenance]:
    gate = macro_gate(now=now)
    if gate.state == "unknown":
        raise ProductFailed("no calendar has been ingested; nothing was charged")
    prov = Provenance(
        method=(
            "calendar events (ICS feeds and staff events) by start time; the gate is closed within "
            f"±{gate.hours:g} h of a high-impact event"
        ),
        max_age=CALENDAR_MAX_AGE,
        now=now,
    )
    calendar_sources(prov)
    fresh_required(prov, "calendar rows")
    return gate, prov


def calendar_risk(call: ProductCall) -> dict[str, Any]:
    params = call.params if isinstance(call.params, CalendarRiskParams) else CalendarRiskParams()
    now = timezone.now()
    gate, prov = _gate_or_fail(now)
    events = list(upcoming(now=now, days=params.days, min_impact=params.min_impact, country=params.country))
    if gate.state == "closed":
        state: Literal["open", "closed"] = "closed"
    else:
        state = "open"
    return {
        "days": params.days,
        "min_impact": params.min_impact,
        "country": params.country.upper(),
        "count": len(events),
        "high_impact": sum(e.impact == CalendarEvent.Impact.HIGH for e in events),
        "events": [event_payload(e, now=now, gate_hours=gate.hours) for e in events],
        "gate": {"state": state, "window_hours": gate.hours, "reason": gate.reason},
        **prov.out(),
    }


def macro_gate_product(call: ProductCall) -> dict[str, Any]:
    now = timezone.now()
    gate, prov = _gate_or_fail(now)
    closed = gate.state == "closed"
    return {
        "state": "closed" if closed else "open",
        "allows_new_risk": not closed,
        "reason": gate.reason,
        "window_hours": gate.hours,
        "blocking_events": [event_payload(e, now=now, gate_hours=gate.hours) for e in gate.blocking],
        "reopens_at": iso(gate.reopens_at),
        "next_high_impact": (
            event_payload(gate.next_high, now=now, gate_hours=gate.hours) if gate.next_high else None
        ),
        "next_close_at": iso(gate.next_close_at),
        "calendar_rows": gate.calendar_rows,
        "events_ahead": gate.ahead,
        **prov.out(),
    }


register(
    ProductSpec(
        sku="macro_gate",
        path="/risk/macro-gate",
        headline="Macro gate: whether today's macro calendar allows new risk",
        price="0.06",
        family="risk",
        rank=34,
        session_callable=True,
        teaser="macro-gate",
        teasers=(
            TeaserSpec(
                name="macro-gate",
                title="Macro gate",
                summary="Whether today's macro calendar allows new risk.",
                highlights=("gate state", "blocking events"),
            ),
        ),
        run=macro_gate_product,
        output=MacroGateOut,
        pure=True,
        available=_has_calendar,
    )
)


register(
    ProductSpec(
        sku="calendar_risk",
        path="/calendar/risk",
        headline="Calendar risk: scheduled events that move markets this week",
        price="0.05",
        family="risk",
        rank=37,
        session_callable=True,
        teaser="calendar-risk",
        teasers=(
            TeaserSpec(
                name="calendar-risk",
                title="Calendar risk",
                summary="Scheduled events that can move markets in the coming week.",
                highlights=("event time", "expected impact"),
            ),
        ),
        run=calendar_risk,
        params=CalendarRiskParams,
        output=CalendarRiskOut,
        available=_has_calendar,
    )
)
