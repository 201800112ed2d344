"""Calendar risk and the macro gate (catalog/analytics/macro.py, catalog/products/risk/macro.py):
the gate closes within ±MACRO_GATE_HOURS of a high-impact event and opens after; the calendar
lists events by time with its filters; both are bought with credits, and answer 503
uncharged before any calendar is ingested."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import override_settings
from django.utils import timezone

from billing.models import Account
from catalog.analytics.macro import macro_gate
from catalog.models import CalendarEvent, Sku
from tests.support.marketdata import calendar_write
from tests.support.wallets import funded_buyer

pytestmark = pytest.mark.django_db

GATE = "/api/a2a/x402/risk/macro-gate"
CAL = "/api/a2a/x402/calendar/risk"
SKUS = {GATE: "macro_gate", CAL: "calendar_risk"}


@pytest.fixture
def buyer(api) -> tuple[str, Account]:
    return funded_buyer(api, 5_000_000)


def buy(api, buyer, path: str, params: dict[str, Any] | None = None, status: int = 200) -> dict[str, Any]:
    key, account = buyer
    before = Account.objects.get(pk=account.pk).credit_balance_atomic
    resp = api.get(path, params or {}, HTTP_X_API_KEY=key)
    assert resp.status_code == status, resp.content
    after = Account.objects.get(pk=account.pk).credit_balance_atomic
    assert before - after == (Sku.objects.get(sku=SKUS[path]).price_atomic if status == 200 else 0)
    return resp.json()


@override_settings(MACRO_GATE_HOURS=4.0)
def test_the_gate_is_closed_an_hour_before_a_high_impact_event_and_open_a_day_later(api, buyer):
    fomc = calendar_write(title="FOMC rate decision", in_hours=1, impact="high")
    calendar_write(title="PMI", in_hours=0.5, impact="medium")
    body = buy(api, buyer, GATE)
    assert body["state"] == "closed" and body["allows_new_risk"] is False
    assert [e["title"] for e in body["blocking_events"]] == ["FOMC rate decision"]
    assert body["blocking_events"][0]["hours_to_event"] == pytest.approx(1.0, abs=0.01)
    assert "FOMC rate decision in 1.0 h" in body["reason"]
    # Reopens 4 h after the event's start.
    reopens = timezone.datetime.fromisoformat(body["reopens_at"])
    assert reopens == fomc.starts_at + timedelta(hours=4)
    assert body["sources"] == [
        {"name": "manual", "venue": None, "replay": False, "items": 2, "as_of": body["as_of"]}
    ]
    assert body["stale"] is False and body["method"]
    # A day after the event: open, and the decision is the same gate's.
    later = macro_gate(now=fomc.starts_at + timedelta(days=1))
    assert later.state == "open" and later.blocking == []
    # The same a day later for real: the event moved back 25 h.
    CalendarEvent.objects.filter(pk=fomc.pk).update(starts_at=timezone.now() - timedelta(hours=24))
    cpi = calendar_write(title="CPI", in_hours=30, impact="high")
    body = buy(api, buyer, GATE)
    assert body["state"] == "open" and body["allows_new_risk"] is True and body["blocking_events"] == []
    assert body["next_high_impact"]["title"] == "CPI"
    assert timezone.datetime.fromisoformat(body["next_close_at"]) == cpi.starts_at - timedelta(hours=4)


def test_overlapping_windows_reopen_after_the_last_event():
    now = timezone.now()
    calendar_write(title="CPI", in_hours=-1, impact="high")
    last = calendar_write(title="FOMC", in_hours=6, impact="high")  # its window starts in 2 h
    gate = macro_gate(now=now, hours=4)
    assert gate.state == "closed" and [e.title for e in gate.blocking] == ["CPI"]
    assert gate.reopens_at == last.starts_at + timedelta(hours=4)


def test_calendar_lists_by_time_with_impact_and_country_filters(api, buyer):
    calendar_write(title="ECB decision", in_hours=50, impact="high", country="EU")
    calendar_write(title="Retail sales", in_hours=5, impact="medium")
    calendar_write(title="CPI", in_hours=20, impact="high")
    calendar_write(title="Fed speaker", in_hours=2, impact="low")
    calendar_write(title="Far away", in_hours=24 * 10, impact="high")
    calendar_write(title="Yesterday", in_hours=-30, impact="high")
    body = buy(api, buyer, CAL)
    assert [e["title"] for e in body["events"]] == ["Fed speaker", "Retail sales", "CPI", "ECB decision"]
    assert body["count"] == 4 and body["high_impact"] == 2 and body["days"] == 7
    assert body["events"][2]["hours_to_event"] == pytest.approx(20, abs=0.01)
    assert body["gate"]["state"] == "open"
    body = buy(api, buyer, CAL, {"min_impact": "high", "days": "3"})
    assert [e["title"] for e in body["events"]] == ["CPI", "ECB decision"]
    body = buy(api, buyer, CAL, {"min_impact": "medium", "country": "us"})
    assert [e["title"] for e in body["events"]] == ["Retail sales", "CPI"] and body["country"] == "US"
    body = buy(api, buyer, CAL, {"days": "30"})
    assert body["events"][-1]["title"] == "Far away"
    key, _ = buyer
    resp = api.get(CAL, {"min_impact": "huge"}, HTTP_X_API_KEY=key)
    assert resp.status_code == 422 and resp.json()["detail"][0]["loc"][-1] == "min_impact"


def test_no_calendar_is_503_uncharged_and_an_empty_future_is_open_with_the_reason(api, buyer):
    buy(api, buyer, GATE, status=503)
    buy(api, buyer, CAL, status=503)
    calendar_write(title="Old CPI", in_hours=-48, impact="high")
    body = buy(api, buyer, GATE)
    assert body["state"] == "open" and "no event ahead" in body["reason"]
    assert body["next_high_impact"] is None and body["next_close_at"] is None
    assert buy(api, buyer, CAL)["events"] == []
