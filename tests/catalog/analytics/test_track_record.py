"""The desks' track record (catalog/editorial/track_record.py, catalog/analytics/track.py): signals
closed at target, stop or expiry on later candles, the scorecard and performance from known
outcomes, the live/scout modes and the kill state, and the analytics pass that publishes and
closes the trend desk's signals, on generated markets (tests/support/marketdata/)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from catalog.analytics.signals import symbol_signal
from catalog.analytics.track import record_of
from catalog.editorial.intel import TREND_DESK, intel_compute
from catalog.editorial.track_record import desk_kill_check, desk_signal_publish, desk_signals_settle
from catalog.models import DeskSignal, DeskState
from tests.support.marketdata import (
    bars_write,
    signals_market_write,
)
from webhooks.models import WebhookEvent

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("without_sentiment")]


# --- the track record ---------------------------------------------------------------------------
def _publish(symbol: str, side: str, entry: float, stop: float, target: float, opened, hours: float = 24):
    row = desk_signal_publish(
        desk=TREND_DESK,
        symbol=symbol,
        side=side,
        venue="binance",
        timeframe="1h",
        entry_price=entry,
        stop_price=stop,
        target_price=target,
        expires_at=opened + timedelta(hours=hours),
        opened_at=opened,
    )
    assert row is not None
    return row


def test_signals_close_at_target_stop_or_expiry_on_later_candles():
    now = timezone.now().replace(second=0, microsecond=0)
    opened = now - timedelta(hours=2)
    win = _publish("BTC/USDT", "long", 100, 98, 104, opened)
    bars_write(
        symbol="BTC/USDT",
        start=opened,
        bars=[(100, 101, 99.5, 100.8), (100.8, 103, 100.5, 102.9), (102.9, 104.6, 102.5, 104.2)],
    )
    loss = _publish("ETH/USDT", "long", 100, 98, 104, opened)
    bars_write(symbol="ETH/USDT", start=opened, bars=[(100, 100.5, 99, 99.2), (99.2, 99.4, 97.5, 97.8)])
    gap = _publish("SOL/USDT", "short", 50, 51, 46, opened)
    bars_write(symbol="SOL/USDT", start=opened, bars=[(50, 50.2, 49.5, 49.8), (52, 52.5, 51.8, 52.2)])
    both = _publish("LTC/USDT", "long", 100, 98, 104, opened)
    bars_write(symbol="LTC/USDT", start=opened, bars=[(100, 105, 97, 101)])
    # XRP: no level touched in the hour it lives; a bar after its expiry would have hit the
    # target but does not count.
    expired = _publish("XRP/USDT", "short", 1.0, 1.03, 0.94, opened, hours=1)
    path = [(1.0, 1.002, 0.995, 0.998)] * 59 + [(0.998, 0.999, 0.985, 0.99)] + [(0.99, 0.99, 0.90, 0.91)]
    bars_write(symbol="XRP/USDT", start=opened, bars=path)
    still_open = _publish("ADA/USDT", "long", 1.0, 0.98, 1.04, opened)  # nothing touched, not expired
    bars_write(symbol="ADA/USDT", start=opened, bars=[(1.0, 1.01, 0.99, 1.005)] * 10)

    closed = desk_signals_settle(now=now)
    assert {s.pk for s in closed} == {win.pk, loss.pk, gap.pk, both.pk, expired.pk}
    rows = {s.symbol: s for s in DeskSignal.objects.all()}
    expect = {
        "BTC/USDT": ("target", Decimal("104"), Decimal("4.0000"), opened + timedelta(minutes=3)),
        "ETH/USDT": ("stop", Decimal("98"), Decimal("-2.0000"), opened + timedelta(minutes=2)),
        # the short's stop gapped: filled at the bar's open, 52: -(52 - 50) / 50
        "SOL/USDT": ("stop", Decimal("52"), Decimal("-4.0000"), opened + timedelta(minutes=2)),
        # stop and target in one bar: the worse (the stop)
        "LTC/USDT": ("stop", Decimal("98"), Decimal("-2.0000"), opened + timedelta(minutes=1)),
        # expiry at the last close before it (0.99): a short from 1.0 made 1 %
        "XRP/USDT": ("expiry", Decimal("0.99"), Decimal("1.0000"), opened + timedelta(hours=1)),
    }
    for symbol, (reason, exit_price, pnl, at) in expect.items():
        row = rows[symbol]
        assert (row.exit_reason, row.exit_price, row.pnl_pct, row.closed_at, row.status) == (
            reason,
            exit_price,
            pnl,
            at,
            "closed",
        ), symbol
    assert rows["ADA/USDT"].pk == still_open.pk
    assert rows["ADA/USDT"].status == "open" and rows["ADA/USDT"].closed_at is None
    # Every opening pushed copy_signal; every loss pushed risk_exit_alert, once.
    assert WebhookEvent.objects.filter(kind="copy_signal").count() == 6
    alerts = {e.payload["symbol"]: e.payload for e in WebhookEvent.objects.filter(kind="risk_exit_alert")}
    assert set(alerts) == {"ETH/USDT", "SOL/USDT", "LTC/USDT"}
    assert (
        alerts["ETH/USDT"]["reason"] == "stop hit: long closed at -2.00%"
        and alerts["ETH/USDT"]["exit_price"] == 98.0
    )
    assert desk_signals_settle(now=now) == []  # nothing closes twice
    assert WebhookEvent.objects.filter(kind="risk_exit_alert").count() == 3


def _closed(desk: str, pnl: float, at, symbol: str = "BTC/USDT") -> DeskSignal:
    return DeskSignal.objects.create(
        desk=desk,
        symbol=symbol,
        side="long",
        entry_price=100,
        exit_price=Decimal(str(100 + pnl)),
        pnl_pct=Decimal(str(pnl)),
        opened_at=at - timedelta(hours=1),
        closed_at=at,
        exit_reason="expiry",
    )


def test_scorecard_and_performance_from_known_outcomes(api):
    now = timezone.now()
    for i, pnl in enumerate([4.0, -2.0, 1.0, -3.0, 2.0]):
        _closed(TREND_DESK, pnl, now - timedelta(days=5 - i))
    _closed("grid-range", 1.5, now - timedelta(hours=1))
    _closed(TREND_DESK, -50.0, now - timedelta(days=40))  # outside the 30 days
    _publish("ETH/USDT", "long", 100, 98, 104, now - timedelta(minutes=5))
    body = api.get("/api/a2a/program/scorecard-30d").json()
    desks = {d["desk"]: d for d in body["desks"]}
    trend = desks[TREND_DESK]
    # pnl 4, -2, 1, -3, 2: running sum 4, 2, 3, 0, 2 (peak 4, trough 0).
    assert (trend["trades"], trend["wins"], trend["losses"], trend["win_rate"]) == (5, 3, 2, 0.6)
    assert trend["avg_win_pct"] == pytest.approx(7 / 3, abs=1e-4) and trend["avg_loss_pct"] == -2.5
    assert trend["expectancy_pct"] == pytest.approx(0.4) and trend["max_drawdown_pct"] == 4.0
    assert (trend["signals"], trend["open_signals"], trend["kill_state"]) == (6, 1, "active")
    assert desks["grid-range"]["trades"] == 1 and desks["grid-range"]["expectancy_pct"] == 1.5
    overall = body["overall"]
    assert overall["trades"] == 6 and overall["expectancy_pct"] == pytest.approx(3.5 / 6, abs=1e-4)
    perf = api.get("/api/a2a/performance").json()
    assert (perf["closed_trades"], perf["win_rate"], perf["max_drawdown_pct"]) == (6, round(4 / 6, 4), 4.0)
    assert perf["avg_loss_pct"] == -2.5 and perf["desks"] == 2 and perf["killed_desks"] == []
    # The desk's record as each of its signals carries it.
    record = record_of([4.0, -2.0, 1.0, -3.0, 2.0])
    from catalog.editorial.intel import desk_performance

    hp = desk_performance(TREND_DESK)
    assert (hp["closed_signals"], hp["expectancy_pct"], hp["max_drawdown_pct"], hp["state"]) == (
        5,
        record.expectancy_pct,
        4.0,
        "active",
    )


def test_strategies_are_live_once_their_record_says_so(api, settings):
    settings.DESK_LIVE_MIN_SIGNALS = 3
    now = timezone.now()
    for pnl in (1.0, 2.0, -0.5):
        _closed(TREND_DESK, pnl, now - timedelta(hours=3))
    for pnl in (1.0, -2.0, -0.5):
        _closed("grid-range", pnl, now - timedelta(hours=3))
    body = api.get("/api/mcp/strategies").json()
    mods = {m["slug"]: m for m in body["strategies"]}
    assert mods[TREND_DESK]["mode"] == "live" and mods[TREND_DESK]["closed_signals_30d"] == 3
    assert mods["grid-range"]["mode"] == "scout" and "expectancy -0.50%" in mods["grid-range"]["mode_reason"]
    assert mods["pair-arb"]["mode"] == "scout" and mods["pair-arb"]["state"] == "no_data"
    assert (body["live"], body["scout"]) == (1, len(mods) - 1)


def test_the_kill_state_stops_publishing_until_staff_reenable(api, client, settings):
    settings.DESK_KILL_DRAWDOWN_PCT = 5.0
    now = timezone.now()
    _closed(TREND_DESK, -3.0, now - timedelta(hours=3))
    _closed(TREND_DESK, -3.0, now - timedelta(hours=2), symbol="ETH/USDT")
    signals_market_write()
    run = intel_compute()
    assert run.killed == [TREND_DESK] and run.published == []
    state = DeskState.objects.get(desk=TREND_DESK)
    assert (
        state.killed_at is not None and "drawdown 6.00% reached the kill threshold 5.00%" in state.kill_reason
    )
    assert not DeskSignal.objects.filter(closed_at__isnull=True).exists()
    assert (
        desk_signal_publish(
            desk=TREND_DESK,
            symbol="BTC/USDT",
            side="long",
            venue="binance",
            timeframe="1h",
            entry_price=1,
            stop_price=0.9,
            target_price=1.2,
            expires_at=None,
        )
        is None
    )
    score = {d["desk"]: d for d in api.get("/api/a2a/program/scorecard-30d").json()["desks"]}[TREND_DESK]
    assert score["kill_state"] == "killed" and score["killed_at"] and "6.00%" in score["kill_reason"]
    mods = {m["slug"]: m for m in api.get("/api/mcp/strategies").json()["strategies"]}
    assert mods[TREND_DESK]["state"] == "killed" and mods[TREND_DESK]["mode"] == "scout"
    assert api.get("/api/a2a/performance").json()["killed_desks"] == [TREND_DESK]
    # Staff re-enable it in the admin: it publishes again, and the old losses do not kill it again.
    staff = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw-not-used")
    client.force_login(staff)
    resp = client.post(
        "/admin/catalog/deskstate/", {"action": "reenable_desks", "_selected_action": [state.pk]}
    )
    assert resp.status_code == 302
    state.refresh_from_db()
    assert state.killed_at is None and state.kill_reason == "" and state.record_since is not None
    run = intel_compute()
    assert run.killed == []
    assert set(DeskSignal.objects.filter(closed_at__isnull=True).values_list("symbol", "side")) == {
        ("BTC/USDT", "long"),
        ("ETH/USDT", "long"),
        ("SOL/USDT", "short"),
    }
    assert desk_kill_check() == []


def test_the_analytics_pass_publishes_the_trend_desk_and_closes_on_later_prices():
    signals_market_write()
    run = intel_compute()
    assert run.regime == "risk_on" and run.fresh == 4 and run.intel_snapshot is not None
    rows = {s.symbol: s for s in DeskSignal.objects.filter(pk__in=run.published)}
    # XRP is neutral (and ranging: trend following is closed there); the others are published.
    assert set(rows) == {"BTC/USDT", "ETH/USDT", "SOL/USDT"}
    btc = rows["BTC/USDT"]
    sig = symbol_signal("BTC/USDT")
    assert (btc.side, btc.label, btc.venue, btc.timeframe) == ("long", sig.label, "binance", "1h")
    assert float(btc.entry_price) == pytest.approx(sig.entry) and float(btc.stop_price) == pytest.approx(
        sig.stop
    )
    assert btc.expires_at - btc.opened_at == timedelta(hours=24)
    assert btc.basis["gate"] == "open" and btc.basis["size_factor"] == 1.0
    # A second pass publishes nothing new (one open signal per desk and symbol).
    assert intel_compute().published == []
    # BTC then falls through its stop: the next pass closes it at the stop.
    after = btc.opened_at.replace(second=0, microsecond=0) + timedelta(minutes=1)
    stop = float(btc.stop_price)
    bars_write(symbol="BTC/USDT", start=after, bars=[(sig.entry, sig.entry, stop * 0.999, stop * 0.999)])
    later = intel_compute(now=after + timedelta(minutes=1))
    assert btc.pk in later.closed
    btc.refresh_from_db()
    assert (btc.exit_reason, float(btc.exit_price)) == ("stop", pytest.approx(stop))
    assert float(btc.pnl_pct) == pytest.approx((stop - sig.entry) / sig.entry * 100, abs=1e-4)


def test_compute_intel_command(capsys):
    signals_market_write()
    call_command("compute_intel")
    out = capsys.readouterr().out
    assert "4 signals (4 fresh), market regime risk_on (new snapshot)" in out and "published 3" in out
