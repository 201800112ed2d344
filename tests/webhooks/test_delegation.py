"""Execution delegation and the coordination pool: a desk signal becomes a signed order on the
agent's loopback receiver (verified with standardwebhooks), sized by the signal and capped by the
limits; fills are checked against the limits; FIFO PnL on a worked example; the scorecard's
live_fills; a pool of three members whose allocations fit the published size, in staggered slots."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from catalog.analytics.track import Outcome
from catalog.editorial.track_record import desk_signal_close, desk_signal_publish
from catalog.models import Candle, DeskSignal
from tests.support.wallets import register_wallet
from webhooks import services as webhook_services
from webhooks.delegation.selectors import Book
from webhooks.models import (
    DelegatedFill,
    DelegatedOrder,
    Delegation,
    PoolDelivery,
    PushEntitlement,
    WebhookDelivery,
)
from webhooks.pool.services import allocate
from webhooks.services import delivery_attempt

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

DESK = "trend-momentum"
SYMBOL = "BTC/USDT"
VENUE = "binance"


@pytest.fixture
def queued(monkeypatch):
    """Deliveries queued (id, countdown); the tests run the task body themselves."""
    calls: list[tuple[int, float]] = []
    monkeypatch.setattr(
        webhook_services, "_enqueue", lambda delivery_id, countdown=0: calls.append((delivery_id, countdown))
    )
    return calls


@pytest.fixture
def market():
    """BTC/USDT on binance: its newest 1m close is 105 (the mark); the two bars traded between
    98 and 112 (the range a fill reported now is checked against)."""
    now = timezone.now().replace(second=0, microsecond=0)
    for i, close in enumerate((104, 105)):
        Candle.objects.create(
            exchange=VENUE,
            symbol=SYMBOL,
            timeframe="1m",
            open_time=now - timedelta(minutes=3 - i),
            open=close,
            high=112,
            low=98,
            close=close,
            volume=1,
            source="exchanges",
            replay=False,
        )


def account_with_pack():
    reg = register_wallet()
    PushEntitlement.objects.create(account=reg.account, expires_at=timezone.now() + timedelta(days=30))
    return reg


def publish(side: str, entry: float, stop: float, basis: dict | None = None) -> DeskSignal:
    signal = desk_signal_publish(
        desk=DESK,
        symbol=SYMBOL,
        side=side,
        venue=VENUE,
        timeframe="1h",
        entry_price=entry,
        stop_price=stop,
        target_price=None,
        expires_at=timezone.now() + timedelta(hours=24),
        basis=basis,
    )
    assert signal is not None
    return signal


def activate(api, key: str, url: str, **over):
    body = {
        "desk": DESK,
        "symbols": [SYMBOL],
        "max_notional_per_signal_usdc": 1000,
        "max_notional_total_usdc": 1500,
        "expires_in_hours": 24,
        "webhook_url": url,
        **over,
    }
    return api.post("/api/a2a/account/delegation/activate", body, format="json", HTTP_X_API_KEY=key)


def fill(api, key: str, order_id: str, price: float, size: float, fee: float = 0.0, **over):
    body = {
        "order_id": order_id,
        "venue": VENUE,
        "fill_price": price,
        "size": size,
        "fee_usdc": fee,
        "filled_at": timezone.now().isoformat(),
        **over,
    }
    return api.post("/api/a2a/account/delegation/report-fill", body, format="json", HTTP_X_API_KEY=key)


def test_activation_refuses_unknown_desks_symbols_limits_and_private_targets(api, market):
    key = register_wallet().api_key
    assert activate(api, key, "https://example.com/h", desk="nope").json()["detail"][0]["loc"] == [
        "body",
        "desk",
    ]
    bad = activate(api, key, "https://example.com/h", symbols=["NOPE/USDT"])
    assert bad.status_code == 422 and "NOPE/USDT" in bad.json()["detail"][0]["msg"]
    bad = activate(api, key, "https://example.com/h", max_notional_per_signal_usdc=2000)
    assert bad.status_code == 422 and bad.json()["detail"][0]["type"] == "limits_inconsistent"
    bad = activate(api, key, "http://127.0.0.1:9/hook")
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "webhook_url"]
    assert activate(api, "", "https://example.com/h").status_code == 401
    assert not Delegation.objects.exists()


def test_delegation_orders_fills_pnl_and_scorecard(
    api, receiver, queued, market, django_capture_on_commit_callbacks
):
    reg = account_with_pack()
    resp = activate(api, reg.api_key, receiver.url)
    assert resp.status_code == 201, resp.content
    created = resp.json()
    receiver.secret = created["secret"]
    assert created["secret"].startswith("whsec_") and created["status"] == "active"
    assert created["max_notional_total_usdc"] == 1500 and created["orders"] == []

    # A long signal with its stop 1% away: risk 1% of equity / 1% = size fraction 1 -> 1000 USDC.
    with django_capture_on_commit_callbacks(execute=True):
        first = publish("long", 100, 99)
    order1 = DelegatedOrder.objects.get(signal=first)
    assert (order1.side, order1.notional_atomic, order1.size) == ("buy", 1_000_000_000, Decimal("10"))
    delivery = WebhookDelivery.objects.get(event=order1.event)
    assert delivery_attempt(delivery_id=delivery.pk) == "delivered"
    got = receiver.received[-1]
    assert got["verified"], "the signature verifies with the official standardwebhooks library"
    data = got["payload"]["data"]
    assert got["payload"]["type"] == "delegated_order"
    assert data["order_id"] == str(order1.id) and data["notional_usdc"] == 1000 and data["size"] == 10
    assert data["side"] == "buy" and data["reference_price"] == 100 and data["size_fraction"] == 1

    # Fills: 4 @ 100 and 5.9 @ 101 = 995.9 of 1000; 0.2 more @ 101 (1016.1) is past the 1% tolerance.
    assert fill(api, reg.api_key, str(order1.id), 100, 4, 0.4, tx_hash="0xaa").status_code == 201
    r = fill(api, reg.api_key, str(order1.id), 101, 5.9, 0.6, client_fill_id="f-2")
    assert r.status_code == 201 and r.json()["order"]["filled_notional_usdc"] == 995.9
    over = fill(api, reg.api_key, str(order1.id), 101, 0.2)
    assert over.status_code == 422 and over.json()["detail"][0]["type"] == "order_limit"
    again = fill(api, reg.api_key, str(order1.id), 100, 4, 0.4, tx_hash="0xaa")
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert DelegatedFill.objects.count() == 2

    # The desk closes it at 102: the exit order sells back the 9.9 filled.
    with django_capture_on_commit_callbacks(execute=True):
        desk_signal_close(
            signal=first,
            result=Outcome(exit_price=102.0, pnl_pct=2.0, reason="target", closed_at=timezone.now()),
        )
    exit1 = DelegatedOrder.objects.get(signal=first, kind="exit")
    assert (exit1.side, exit1.size, exit1.closes_id, exit1.notional_atomic) == (
        "sell",
        Decimal("9.9"),
        order1.id,
        1_009_800_000,
    )
    assert delivery_attempt(delivery_id=WebhookDelivery.objects.get(event=exit1.event).pk) == "delivered"
    data = receiver.received[-1]["payload"]["data"]
    assert (
        data["kind"] == "exit"
        and data["closes_order_id"] == str(order1.id)
        and data["reference_price"] == 102
    )
    assert fill(api, reg.api_key, str(exit1.id), 102, 5, 0.5).status_code == 201
    over = fill(api, reg.api_key, str(exit1.id), 102, 5)  # 10 > 9.9 x 1.01
    assert over.status_code == 422 and over.json()["detail"][0]["type"] == "order_limit"

    # A short comes: 1000 wanted, 500 left of the total (exits do not count) -> a 500 USDC sell.
    with django_capture_on_commit_callbacks(execute=True):
        second = publish("short", 110, 111.1)
    order2 = DelegatedOrder.objects.get(signal=second)
    assert (order2.side, order2.notional_atomic) == ("sell", 500_000_000)
    assert order2.size == Decimal("4.545454545454")
    assert fill(api, reg.api_key, str(order2.id), 110, 4, 0.44).status_code == 201

    # Worked example, FIFO: the exit's 5 @ 102 close 4 bought @ 100 and 1 @ 101 (8 + 1); the
    # short's 4 @ 110 close 4 more @ 101 (36): realized 45. 0.9 @ 101 stay open, marked at the
    # newest 1m close 105: unrealized 3.6. Fees 0.4 + 0.6 + 0.5 + 0.44 = 1.94.
    status = api.get("/api/a2a/account/delegation/status", HTTP_X_API_KEY=reg.api_key).json()
    d = status["delegations"][0]
    assert d["pnl"]["realized_pnl_usdc"] == 45 and d["pnl"]["fees_usdc"] == 1.94
    assert d["pnl"]["realized_net_usdc"] == 43.06 and d["pnl"]["unrealized_pnl_usdc"] == 3.6
    assert d["pnl"]["total_pnl_usdc"] == 46.66 and d["pnl"]["replay"] is False
    (pos,) = d["positions"]
    assert pos["size"] == 0.9 and pos["avg_entry_price"] == 101 and pos["mark"]["price"] == 105
    assert pos["mark"]["source"] == "candle 1m:exchanges" and pos["mark"]["venue"] == VENUE
    assert [(o["kind"], o["delivery"]) for o in d["orders"]] == [
        ("entry", "delivered"),
        ("exit", "delivered"),
        ("entry", "pending"),
    ]
    assert d["ordered_notional_usdc"] == 1500 and d["remaining_notional_usdc"] == 0
    assert d["filled_notional_usdc"] == 1435.9

    # The desk's scorecard counts the real fills beside its paper record.
    card = api.get("/api/a2a/program/scorecard-30d").json()
    live = next(x for x in card["desks"] if x["desk"] == DESK)["live_fills"]
    assert live == {
        "fills": 4,
        "notional_usdc": 1945.9,
        "fees_usdc": 1.94,
        "realized_pnl_usdc": 43.06,
        "unchecked_fills": 0,
        "basis": "self_reported",
    }
    assert card["overall"]["live_fills"]["fills"] == 4
    assert api.get("/api/a2a/performance").json()["live_fills"]["notional_usdc"] == 1945.9

    # The delegation's total (staff lowered it to 1450): 55 more would make 1490.9 > 1464.5.
    Delegation.objects.filter(pk=d["id"]).update(max_notional_total_atomic=1_450_000_000)
    r = fill(api, reg.api_key, str(order2.id), 110, 0.5)
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "delegation_limit"

    # Another account's key, and an expired delegation: refused, nothing recorded.
    other = register_wallet().api_key
    r = fill(api, other, str(order2.id), 110, 0.1)
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "order_unknown"
    Delegation.objects.filter(pk=d["id"]).update(expires_at=timezone.now() - timedelta(minutes=1))
    r = fill(api, reg.api_key, str(order2.id), 110, 0.1)
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "delegation_expired"
    assert DelegatedFill.objects.count() == 4
    assert (
        api.get(f"/api/a2a/account/delegation/{d['id']}", HTTP_X_API_KEY=reg.api_key).json()["status"]
        == "expired"
    )


def test_revoked_delegations_get_no_orders_and_refuse_fills(
    api, receiver, queued, market, django_capture_on_commit_callbacks
):
    reg = account_with_pack()
    created = activate(api, reg.api_key, receiver.url, max_notional_per_signal_usdc=100).json()
    # A gate at half size and a stop 4% away: 1% / 4% x 0.5 = 0.125 of 100 USDC.
    with django_capture_on_commit_callbacks(execute=True):
        signal = publish("long", 100, 96, basis={"size_factor": 0.5})
    order = DelegatedOrder.objects.get(signal=signal)
    assert order.notional_atomic == 12_500_000 and order.size_fraction == 0.125
    other = register_wallet().api_key
    assert (
        api.post(f"/api/a2a/account/delegation/{created['id']}/revoke", HTTP_X_API_KEY=other).status_code
        == 404
    )
    revoked = api.post(
        f"/api/a2a/account/delegation/{created['id']}/revoke", HTTP_X_API_KEY=reg.api_key
    ).json()
    assert revoked["status"] == "revoked" and revoked["webhook_active"] is False
    r = fill(api, reg.api_key, str(order.id), 100, 0.1)
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "delegation_revoked"
    # Its pending push is not delivered to a revoked delegation's disabled webhook.
    assert delivery_attempt(delivery_id=WebhookDelivery.objects.get(event=order.event).pk) == "dead"
    assert receiver.received == []


def test_fifo_book_shorts_and_partial_closes():
    book = Book()
    assert book.apply(side="sell", size=Decimal(2), price=Decimal(50)) == 0  # opens a short
    assert book.apply(side="buy", size=Decimal(3), price=Decimal(40)) == 20  # closes it, 1 long left
    assert book.position == 1 and book.avg_entry == 40 and book.unrealized(Decimal(45)) == 5


def test_allocations_never_exceed_the_size():
    assert allocate(100, [30, 20]) == [30, 20]
    assert allocate(100, [150, 50, 50]) == [50, 25, 25]  # each ask capped at the size first
    for asks in ([7, 7, 7], [1, 10**9], [33, 33, 34, 1]):
        assert sum(allocate(99, asks)) <= 99


def test_pool_three_members_pro_rata_and_staggered(
    api, receiver, queued, market, settings, django_capture_on_commit_callbacks
):
    settings.POOL_SLOT_SECONDS = 2.0
    settings.POOL_SIGNAL_SIZE_USDC = 10_000
    a, b, c = account_with_pack(), account_with_pack(), account_with_pack()

    def join(key, **body):
        return api.post("/api/a2a/pool/join", {"desk": DESK, **body}, format="json", HTTP_X_API_KEY=key)

    ra = join(a.api_key, max_size_usdc=6000, webhook_url=receiver.url)
    assert ra.status_code == 201 and ra.json()["slot"] == 0 and ra.json()["secret"].startswith("whsec_")
    receiver.secret = ra.json()["secret"]
    # b uses its account webhook subscribed to pool_signal; c has none until it gives a URL.
    hook = api.post(
        "/api/a2a/account/webhooks/register",
        {"url": receiver.url, "events": ["pool_signal"]},
        format="json",
        HTTP_X_API_KEY=b.api_key,
    )
    assert hook.status_code == 201
    rb = join(b.api_key, share=0.5)
    assert rb.status_code == 201 and rb.json()["slot"] == 1 and rb.json()["secret"] is None
    missing = join(c.api_key, max_size_usdc=4000)
    assert missing.status_code == 422 and missing.json()["detail"][0]["type"] == "webhook_missing"
    assert join(c.api_key, max_size_usdc=4000, webhook_url=receiver.url).json()["slot"] == 2
    assert join(c.api_key, max_size_usdc=1).status_code == 409
    assert join(c.api_key, max_size_usdc=1, share=0.1).status_code == 422

    queued.clear()
    with django_capture_on_commit_callbacks(execute=True):
        signal = publish("long", 100, 99)  # size fraction 1: the desk publishes 10000 USDC
    rows = list(PoolDelivery.objects.filter(signal=signal).order_by("slot"))
    # Asks 6000 + 5000 + 4000 = 15000 > 10000: each scaled by 2/3, rounded down to the atomic unit.
    assert [r.allocation_atomic for r in rows] == [4_000_000_000, 3_333_333_333, 2_666_666_666]
    assert sum(r.allocation_atomic for r in rows) <= rows[0].published_size_atomic == 10_000_000_000
    deliveries = [WebhookDelivery.objects.get(event=r.event) for r in rows]
    gaps = [(d.next_attempt_at - deliveries[0].next_attempt_at).total_seconds() for d in deliveries]
    assert [round(g) for g in gaps] == [0, 2, 4]
    assert sorted(round(cd) for _, cd in queued) == [0, 2, 4]
    # Slot 0 goes now; slot 1 is not due before its time.
    assert delivery_attempt(delivery_id=deliveries[0].pk) == "delivered"
    assert delivery_attempt(delivery_id=deliveries[1].pk) == "not_due"
    got = receiver.received[-1]
    assert got["verified"] and got["payload"]["type"] == "pool_signal"
    assert got["payload"]["data"]["allocation_usdc"] == 4000 and got["payload"]["data"]["slots"] == 3

    state = api.get("/api/a2a/pool/status", {"desk": DESK}, HTTP_X_API_KEY=b.api_key).json()["pools"][0]
    assert state["members"] == 3 and state["slots"] == [0, 2, 4]
    assert state["you"]["slot"] == 1 and state["you"]["allocation_usdc"] == 3333.333333
    assert state["recent_deliveries"][0]["allocation_usdc"] == 3333.333333
    assert state["recent_deliveries"][0]["delivery"] == "pending"

    left = api.post("/api/a2a/pool/leave", {"desk": DESK}, format="json", HTTP_X_API_KEY=a.api_key)
    assert left.status_code == 200 and left.json()["left_at"] is not None
    state = api.get("/api/a2a/pool/status", {"desk": DESK}, HTTP_X_API_KEY=c.api_key).json()["pools"][0]
    # c moves up to slot 1; 5000 + 4000 fit in 10000 unscaled.
    assert state["members"] == 2 and state["you"]["slot"] == 1 and state["you"]["allocation_usdc"] == 4000


def test_the_sweep_hands_over_signals_the_publish_hook_missed(api, receiver, queued, market):
    reg = account_with_pack()
    # Created a moment before the signal: the sweep covers signals published after activation only.
    activate(api, reg.api_key, receiver.url)
    Delegation.objects.update(created_at=timezone.now() - timedelta(seconds=5))
    member = account_with_pack()
    api.post(
        "/api/a2a/pool/join",
        {"desk": DESK, "share": 0.25, "webhook_url": receiver.url},
        format="json",
        HTTP_X_API_KEY=member.api_key,
    )
    signal = publish("long", 100, 98)  # no commit in the test transaction: the hook never ran
    assert not DelegatedOrder.objects.exists() and not PoolDelivery.objects.exists()
    from webhooks.dispatch import desk_signals_dispatch_due

    assert desk_signals_dispatch_due() == 1
    # 1% / 2% = half size: a 500 USDC order; the pool's size 5000, a quarter of it 1250.
    assert DelegatedOrder.objects.get(signal=signal).notional_atomic == 500_000_000
    assert PoolDelivery.objects.get(signal=signal).allocation_atomic == 1_250_000_000
    assert desk_signals_dispatch_due() == 0  # once
    # A fill, then the desk closes the signal (no commit: the close hook never ran): the exit.
    assert fill(api, reg.api_key, str(DelegatedOrder.objects.get().id), 100, 2).status_code == 201
    desk_signal_close(
        signal=signal, result=Outcome(exit_price=97.0, pnl_pct=-3.0, reason="stop", closed_at=timezone.now())
    )
    assert desk_signals_dispatch_due() == 1
    exit_order = DelegatedOrder.objects.get(kind="exit")
    assert (exit_order.side, exit_order.size, exit_order.reference_price) == ("sell", Decimal(2), Decimal(97))
    assert desk_signals_dispatch_due() == 0


def test_the_demo_gets_an_order_reports_its_fill_and_prints_the_pnl(
    live_server, transactional_db, settings, monkeypatch, tmp_path, capsys, market
):
    """a2a_service/scripts/demos/delegation.py against a live server: deliveries run in threads
    here (the stack's webhook worker does it there)."""
    import json
    import threading

    from eth_account import Account as EthAccount

    from a2a_service.scripts.demos import delegation as demo_delegation

    settings.WEBHOOKS_ALLOW_PRIVATE_TARGETS = True

    def enqueue(delivery_id, countdown=0):
        threading.Timer(countdown + 0.2, delivery_attempt, kwargs={"delivery_id": delivery_id}).start()

    monkeypatch.setattr(webhook_services, "_enqueue", enqueue)
    wallet = EthAccount.create()
    reg = register_wallet(wallet)
    PushEntitlement.objects.create(account=reg.account, expires_at=timezone.now() + timedelta(days=1))
    publish("long", 100, 98)  # open: include_open makes it an order of 250 x (1% / 2%) = 125 USDC
    (tmp_path / ".run").mkdir()
    (tmp_path / ".run" / "stack.json").write_text(
        json.dumps({"base_url": live_server.url, "demo_payer_private_key": wallet.key.hex()})
    )
    monkeypatch.setattr(demo_delegation, "ROOT", tmp_path)
    monkeypatch.setattr(demo_delegation, "SYMBOLS", ["BTC/USDT", "NOPE/USDT"])
    assert demo_delegation.main() == 0
    out = capsys.readouterr().out
    assert "standardwebhooks verified" in out and "buy 1.25000000 BTC/USDT" in out
    assert "unrealized 6.25;" in out  # 1.25 bought at 100, marked at 105
    fill = DelegatedFill.objects.get()
    assert fill.delegation.account_id == reg.account.pk and fill.notional_atomic == 125_000_000
    assert fill.delegation.status == "revoked"


def test_an_order_never_sent_leaves_its_notional_to_the_next(
    api, receiver, queued, market, django_capture_on_commit_callbacks
):
    """No pack and no credit: the push is skipped (never sent, never charged) and the order
    does not use up the delegation's total."""
    reg = register_wallet()
    activate(api, reg.api_key, receiver.url, max_notional_total_usdc=1000)
    with django_capture_on_commit_callbacks(execute=True):
        first = publish("long", 100, 99)
    order = DelegatedOrder.objects.get(signal=first)
    assert WebhookDelivery.objects.get(event=order.event).state == "skipped"
    d = api.get("/api/a2a/account/delegation/status", HTTP_X_API_KEY=reg.api_key).json()["delegations"][0]
    assert d["orders"][0]["delivery"] == "skipped" and d["remaining_notional_usdc"] == 1000
    assert api.get("/api/a2a/account/delegation/nope", HTTP_X_API_KEY=reg.api_key).status_code == 404


def test_concurrent_fills_never_pass_the_order_limit(api, receiver, queued, market, transactional_db):
    """Two fills of 600 against a 1000 USDC order at the same time: the delegation's row lock
    lets exactly one in."""
    import threading

    from django.db import connection

    from webhooks.delegation.services import fill_report

    reg = account_with_pack()
    activate(api, reg.api_key, receiver.url)
    signal = publish("long", 100, 99)  # committed (transactional test): the hook made the order
    order = DelegatedOrder.objects.get(signal=signal)
    results: list[str] = []
    barrier = threading.Barrier(2)

    def one(n: int) -> None:
        barrier.wait()
        try:
            fill_report(
                account=reg.account,
                order_id=str(order.id),
                venue=VENUE,
                fill_price=100,
                size=6,
                fee_usdc=0,
                filled_at=timezone.now(),
                client_fill_id=f"c{n}",
            )
            results.append("ok")
        except Exception as exc:  # the 422
            results.append(type(exc).__name__)
        finally:
            connection.close()

    threads = [threading.Thread(target=one, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["RequestValidationError", "ok"]
    assert DelegatedFill.objects.filter(order=order).count() == 1


def test_fills_far_from_the_market_never_reach_the_public_record(
    api, receiver, queued, market, django_capture_on_commit_callbacks
):
    """The attack: an entry reported at a millionth of the market with a size that keeps its
    notional inside the order, then an exit at the market: trillions of "live fills" PnL. Now
    the off-market fill is refused, a time without a known price is refused, a notional past
    what the ledger holds is a 422 (not a 500), the exit is sized from the order, and the
    scorecard shows the checked fills apart from the desk's record."""
    reg = account_with_pack()
    activate(api, reg.api_key, receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        signal = publish("long", 100, 99)
    order = DelegatedOrder.objects.get(signal=signal)
    assert (order.notional_atomic, order.size) == (1_000_000_000, Decimal(10))

    cheap = fill(api, reg.api_key, str(order.id), 100e-6, 10_000_000)  # 1000 USDC of notional
    assert cheap.status_code == 422, cheap.content
    assert cheap.json()["detail"][0]["type"] == "fill_price_off_market"
    assert "98 to 112" in cheap.json()["detail"][0]["msg"]
    # 3% tolerance around the bars' 98..112: 94.9 and 115.5 are out, 95.1 and 115.3 in range.
    for price in (94.9, 115.5):
        r = fill(api, reg.api_key, str(order.id), price, 1)
        assert r.json()["detail"][0]["type"] == "fill_price_off_market", price
    old = (timezone.now() - timedelta(days=2)).isoformat()
    unknown = fill(api, reg.api_key, str(order.id), 101, 1, filled_at=old)
    assert unknown.status_code == 422 and unknown.json()["detail"][0]["type"] == "market_price_unknown"
    huge = fill(api, reg.api_key, str(order.id), 1e12, 1e7)  # inside each field's bounds: 1e19 USDC
    assert huge.status_code == 422 and "ledger" in huge.json()["detail"][0]["msg"]
    assert not DelegatedFill.objects.exists()

    ok = fill(api, reg.api_key, str(order.id), 101, 10)
    assert ok.status_code == 201, ok.content
    assert ok.json()["fill"]["market"] == {"low": 98, "high": 112, "source": f"candle 1m:{VENUE}/exchanges"}
    assert fill(api, reg.api_key, str(order.id), 95.1, 0.2).json()["detail"][0]["type"] == "order_limit"
    # A row from before the check (no market recorded), at an absurd price and size: the exit is
    # still sized from the order, and the scorecard leaves the row out.
    DelegatedFill.objects.create(
        order=order,
        delegation=order.delegation,
        desk=DESK,
        symbol=SYMBOL,
        side="buy",
        venue=VENUE,
        price=Decimal("0.0001"),
        size=Decimal(10_000_000),
        notional_atomic=1_000_000_000,
        filled_at=timezone.now(),
    )
    with django_capture_on_commit_callbacks(execute=True):
        desk_signal_close(
            signal=signal,
            result=Outcome(exit_price=102.0, pnl_pct=2.0, reason="target", closed_at=timezone.now()),
        )
    exit_order = DelegatedOrder.objects.get(signal=signal, kind="exit")
    assert exit_order.size == Decimal(10) and exit_order.notional_atomic == 1_020_000_000
    assert fill(api, reg.api_key, str(exit_order.id), 102, 10).status_code == 201

    card = api.get("/api/a2a/program/scorecard-30d").json()
    desk = next(x for x in card["desks"] if x["desk"] == DESK)
    # The desk's own record: one closed signal at +2%; the live fills beside it: 10 bought at 101
    # and sold at 102, realized 10 USDC, the unchecked row left out of every figure.
    assert (desk["trades"], desk["wins"], desk["win_rate"], desk["expectancy_pct"]) == (1, 1, 1.0, 2.0)
    assert desk["live_fills"] == {
        "fills": 2,
        "notional_usdc": 2030.0,
        "fees_usdc": 0.0,
        "realized_pnl_usdc": 10.0,
        "unchecked_fills": 1,
        "basis": "self_reported",
    }
    perf = api.get("/api/a2a/performance").json()
    assert perf["win_rate"] == 1.0 and perf["live_fills"]["realized_pnl_usdc"] == 10.0


def test_a_fill_with_no_market_at_all_is_refused(api, receiver, queued, market, django_capture_on_commit_callbacks):
    """A symbol whose bars are gone (pruned): the fill is refused rather than taken on trust; a
    ticker updated at the fill's time is enough."""
    from catalog.models import ExchangeMarket

    reg = account_with_pack()
    activate(api, reg.api_key, receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        signal = publish("long", 100, 99)
    order = DelegatedOrder.objects.get(signal=signal)
    Candle.objects.all().delete()
    r = fill(api, reg.api_key, str(order.id), 100, 1)
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "market_price_unknown"
    ExchangeMarket.objects.create(
        exchange="kraken", symbol=SYMBOL, base="BTC", quote="USDT", last_price=100, bid=99.9, ask=100.1
    )
    assert fill(api, reg.api_key, str(order.id), 102.9, 1).status_code == 201  # 100.1 x 1.03 = 103.1
    r = fill(api, reg.api_key, str(order.id), 103.2, 1)
    assert r.json()["detail"][0]["type"] == "fill_price_off_market"
    assert DelegatedFill.objects.get().market_source == "ticker:kraken"
