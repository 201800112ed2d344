"""The service on two nodes (issue 24, item 4): two web nodes (granian) behind haproxy, two
Celery worker nodes and two beats (one started by mistake) on one PostgreSQL and one Redis
(a2a_service/scripts/twonodes.py starts them; docs/deployment/topology.md describes the
production topology).

- A price saved in the admin is in the next 402 challenge of both nodes; a free document one
  node stored is served by the other, and a write drops it on both.
- A client taken past its rate limit on one node is refused by the other from its first request
  (a process new to a client's window learns the window's total before admitting anything).
- Two beats each send every scheduled pass: a deposit is credited once, each webhook event is
  delivered once, the deposit cursor never moves back, one morning brief is composed per day,
  and each counted hit reaches the database once."""

from __future__ import annotations

import os
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connections
from django.utils import timezone

from a2a_service.scripts import twonodes
from billing.chain.localchain import dev_account, free_port
from billing.deposits import CURSOR_NAME, CursorMoved, ScanResult, _cursor, _read_range, chain, deposits_scan
from billing.models import ChainCursor, Deposit, LedgerEntry
from tests.support.deposits import mine, send
from tests.support.wallets import register_wallet

USDC = 10**6


def wait_for(predicate, seconds: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s: {what}")
        time.sleep(0.2)


# --- rate limits across processes ------------------------------------------------------------
def test_a_process_new_to_a_client_refuses_it_at_once_when_another_took_it_past_its_rate(settings):
    """Node A's fast path takes the client to its rate; node B, which has never seen this client
    in this window, refuses its first request (before: B admitted requests until its first flush
    told it the window's total)."""
    if not settings.REDIS_URL:
        pytest.skip("the shared windows live in Redis (CI sets REDIS_URL)")
    from a2a_service.core.throttling import BufferedWindows

    node_a, node_b = BufferedWindows(background=False), BufferedWindows(background=False)
    take = {"ident": "198.51.100.77", "num_requests": 5, "duration": 86400}  # no window ends mid-test
    assert [node_a.take(**take) for _ in range(5)] == [None] * 5
    assert node_a.take(**take) > 0  # A refuses the sixth itself...
    node_a.flush()  # ...and adds what it admitted to Redis (the fast path flushes on a refusal)
    assert node_b.take(**take) > 0  # B's first request: refused
    assert node_b.take(**take) > 0

    fresh = {**take, "ident": "198.51.100.78"}
    assert node_b.take(**fresh) is None  # a client within its rate: admitted, counted in Redis at once
    assert node_a.take(**fresh) is None  # A learns 1 (B's), counts its own: 2
    assert [node_a.take(**fresh) for _ in range(3)] == [None] * 3
    assert node_a.take(**fresh) > 0  # 5 in all, over both nodes


# --- two beats: the scheduled passes run twice, concurrently ----------------------------------
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_slower_overlapping_scan_never_takes_the_deposit_cursor_back(watcher, settings):
    """Two scans that overlap (two beats; a scan that outlived its lock): the faster one reads
    every range; the slower one, still holding the cursor it read at its start, must not move the
    cursor back over what the faster one read (nor credit anything again)."""
    settings.DEPOSIT_BLOCK_RANGE = 2
    register_wallet(dev_account(4))
    send(watcher, 4, 3 * USDC)
    mine(watcher, 8)
    w3 = chain()
    slower = _cursor(w3, w3.eth.block_number)  # the cursor as the slower scan read it
    faster = deposits_scan(max_ranges=20)
    assert faster.credited == 1
    read = ChainCursor.objects.get(name=CURSOR_NAME)
    assert read.block_number > slower.block_number + 2

    with pytest.raises(CursorMoved):
        _read_range(w3, slower, slower.block_number + 1, slower.block_number + 2, ScanResult())
    after = ChainCursor.objects.get(name=CURSOR_NAME)
    assert (after.block_number, after.block_hash, after.checkpoints) == (
        read.block_number,
        read.block_hash,
        read.checkpoints,
    )
    assert LedgerEntry.objects.filter(kind=LedgerEntry.Kind.DEPOSIT).count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_compositions_make_one_morning_brief_of_the_day():
    """compose-morning-brief sent by two beats at the same minute: one brief of the day (a second
    piece would be pushed to the brief's subscribers a second time)."""
    from catalog.editorial.briefs import brief_compose
    from catalog.editorial.intel import intel_compute
    from catalog.models import EditorialPiece
    from catalog.services import catalog_seed
    from tests.support.marketdata import brief_market_write, signals_market_write

    catalog_seed()
    signals_market_write()
    intel_compute()
    brief_market_write()
    barrier = threading.Barrier(2)
    actions: list[str] = []

    def compose() -> None:
        try:
            barrier.wait()
            actions.append(brief_compose().action)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=compose) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(actions) == ["created", "updated"]
    assert EditorialPiece.objects.filter(kind="morning_brief", brief_date=timezone.now().date()).count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_counter_flushes_move_each_hit_once(settings, monkeypatch):
    """flush-counters sent by two beats: the second flush, while the first is between reading
    Redis and subtracting what it read, must not add the same counts to the database again."""
    if not settings.REDIS_URL:
        pytest.skip("the counters live in Redis (CI sets REDIS_URL)")
    import catalog.counters as counters
    from catalog.models import DailyCounter

    for _ in range(7):
        counters.counter_increment(metric="free", key="two-nodes")
    inside, go_on = threading.Event(), threading.Event()
    real_add = counters.counter_add_to_db

    def slow_add(**kwargs) -> None:
        if threading.current_thread().name == "first-flush":
            inside.set()
            assert go_on.wait(30)
        real_add(**kwargs)

    monkeypatch.setattr(counters, "counter_add_to_db", slow_add)
    moved: dict[str, int] = {}

    def flush(name: str) -> None:
        try:
            moved[name] = counters.counters_flush()
        finally:
            connections.close_all()

    first = threading.Thread(target=flush, args=("first-flush",), name="first-flush")
    first.start()
    assert inside.wait(30)
    flush("second")  # while the first holds the counts it read
    go_on.set()
    first.join()
    assert moved == {"first-flush": 7, "second": 0}
    assert DailyCounter.objects.get(metric="free", key="two-nodes").count == 7
    assert counters.counters_pending(since=timezone.now().date()).get("free", 0) == 0


# --- the two-node setup, for real -------------------------------------------------------------
RATE = "300/min"  # the nodes' anonymous rate: low enough to cross in a second, above the setup's own traffic


@pytest.fixture
def two_nodes(chain, transactional_db, settings, tmp_path: Path):
    """haproxy, two web nodes, two worker nodes (each consuming both queues) and two beats on the
    test database and Redis; the deposit watcher reads the session's anvil chain."""
    if not settings.REDIS_URL:
        pytest.skip("two nodes share Redis (CI sets REDIS_URL)")
    if not Path(twonodes.haproxy_binary()).exists():
        pytest.fail(f"haproxy is not installed at {twonodes.haproxy_binary()} (`make install` installs it)")
    from django.db import connection
    from django_celery_beat.models import PeriodicTask

    from catalog.services import catalog_seed

    catalog_seed()
    # No feed passes (they would reach the network and keep the workers busy): beat's own tasks only.
    PeriodicTask.objects.filter(task="feeds.run_source").update(enabled=False)
    snapshot = chain.w3.provider.make_request("evm_snapshot", [])["result"]
    db = connection.settings_dict
    queue = f"webhooks-two-nodes-{os.getpid()}"
    settings.WEBHOOK_DELIVERY_QUEUE = queue
    settings.WEBHOOKS_ALLOW_PRIVATE_TARGETS = True
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "a2a_service.settings.test",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "THROTTLE_ANON": RATE,
        "CHAIN_RPC_URL": chain.url,
        "DEPOSIT_CONFIRMATIONS": "1",
        "DEPOSIT_FINALITY_TAG": "",
        "DEPOSIT_START_BLOCK": str(chain.w3.eth.block_number + 1),
        "DEPOSIT_POLL_SECONDS": "1",
        "WEBHOOK_SWEEP_SECONDS": "1",
        "WEBHOOK_DELIVERY_QUEUE": queue,
        "WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true",
        "WEB_THREADS": "2",
    }
    port = free_port()
    # The load balancer's port and the nodes' are consecutive: take a free one whose next two are free.
    while not all(_free(port + i) for i in (1, 2)):
        port = free_port()
    cluster = twonodes.Cluster(
        env=env,
        port=port,
        run_dir=tmp_path,
        beats=2,
        embedded_beats=True,
        worker_pool="solo",
        worker_concurrency=1,
        check_seconds=2.0,
    )
    try:
        cluster.start()
        cluster.wait_ready(timeout=150)
        yield cluster
    finally:
        cluster.stop()
        chain.w3.provider.make_request("evm_revert", [snapshot])
        connections.close_all()


def _free(port: int) -> bool:
    import socket

    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _sent(cluster: twonodes.Cluster, beat: str, task: str) -> int:
    return cluster.log(beat).count(f"Sending due task {task}")


@pytest.mark.slow
@pytest.mark.postgres
def test_two_web_nodes_two_workers_and_two_beats_share_one_database_and_one_redis(
    two_nodes, chain, receiver, monkeypatch
):
    from billing.models import Account
    from catalog.models import Sku
    from webhooks import services as webhook_services
    from webhooks.models import DeliveryAttempt, PushEntitlement, WebhookDelivery

    cluster = two_nodes
    a, b = cluster.node_urls
    host = twonodes.public_host(cluster.lb_url)
    path = twonodes.CHALLENGE_PATH
    sku = Sku.objects.get(sku=twonodes.CHALLENGE_SKU)
    old_price = sku.price_atomic

    # Both nodes serve the challenge, the second time from their own copy.
    for url in (a, b, a, b):
        assert twonodes.challenge(url + path, host=host)[0] == old_price

    # The free-document cache is shared: B answers with what A stored, byte for byte, though the
    # data under it changed meanwhile (a queryset update tells no cache).
    shown = twonodes.free_document_shared(a, b, sku=sku.sku, host=host)
    assert shown.served_by_second == shown.stored_by_first
    assert twonodes.CHANGED.encode() not in shown.served_by_second

    # A staff member raises the price in the admin, through the load balancer (the login and the
    # save may each reach either node: the session is in the database).
    username, password = twonodes.staff_user()
    session = twonodes.admin_login(cluster.lb_url, username=username, password=password)
    new_price = old_price + 20_000
    saved_on = twonodes.admin_price_edit(session, cluster.lb_url, sku_id=sku.pk, price_usdc=f"{new_price / USDC:.6f}")
    assert saved_on in ("node1", "node2")
    assert Sku.objects.get(pk=sku.pk).price_atomic == new_price
    # The next challenge, on both nodes: round robin through the load balancer, and each asked directly.
    seen = [twonodes.challenge(cluster.lb_url + path, client=None) for _ in range(4)]
    assert {amount for amount, _ in seen} == {new_price} and {node for _, node in seen} == {"node1", "node2"}
    assert [twonodes.challenge(url + path, host=host)[0] for url in (a, b)] == [new_price, new_price]
    # The admin's write dropped the stored free documents on both nodes.
    for url in (a, b):
        amount, description = twonodes.free_document_price(url, sku=sku.sku, host=host)
        assert amount == new_price and description.endswith(twonodes.CHANGED)

    # Rate limits are shared: a client taken past its rate on A is refused by B at once, on the
    # free document served in front of Django and on a page Django renders.
    limit, duration = twonodes.rate_of(RATE)
    limited = twonodes.rate_limit_shared(a, b, limit=limit, duration=duration, client="198.51.100.24", host=host)
    assert limited.admitted_on_first == limit
    assert limited.refused_on_second == [429, 429] and 0 < int(limited.retry_after or 0) <= duration

    # Two beats: a deposit is credited once.
    beats = ("worker1", "worker2")  # each runs a beat (-B)
    before = {beat: _sent(cluster, beat, "scan-deposits") for beat in beats}
    account = register_wallet(dev_account(5)).account
    send(chain, 5, 4 * USDC)
    mine(chain, 2)
    wait_for(
        lambda: Deposit.objects.filter(state=Deposit.State.CREDITED).exists(), 30, "the deposit credited"
    )
    # ...and stays credited once while both beats go on sending scans (two more each).
    wait_for(
        lambda: all(_sent(cluster, beat, "scan-deposits") >= before[beat] + 3 for beat in before),
        30,
        "two beats scanning",
    )
    deposit = Deposit.objects.get()
    assert deposit.amount_atomic == 4 * USDC and deposit.account_id == account.id
    assert LedgerEntry.objects.filter(deposit=deposit, kind=LedgerEntry.Kind.DEPOSIT).count() == 1
    assert Account.objects.get(pk=account.pk).credit_balance_atomic == sum(
        LedgerEntry.objects.filter(account=account).values_list("amount_atomic", flat=True)
    )

    # Two beats: each webhook event is delivered once. The events' queue messages are lost (as
    # when the broker was down): only the two beats' sweepers queue them, each every second.
    monkeypatch.setattr(webhook_services, "_enqueue", lambda delivery_id, countdown=0: None)
    owner = register_wallet().account
    PushEntitlement.objects.create(account=owner, expires_at=timezone.now() + timedelta(days=1))
    receiver.secret = webhook_services.subscription_create(
        account=owner, url=receiver.url, events=["copy_signal"]
    ).secret
    sweeps = {beat: _sent(cluster, beat, "sweep-webhook-deliveries") for beat in beats}
    for n in range(3):
        webhook_services.event_publish(kind="copy_signal", payload={"n": n})
    wait_for(
        lambda: WebhookDelivery.objects.filter(state=WebhookDelivery.State.DELIVERED).count() == 3,
        30,
        "three deliveries",
    )
    wait_for(
        lambda: all(_sent(cluster, beat, "sweep-webhook-deliveries") >= sweeps[beat] + 3 for beat in sweeps),
        30,
        "two beats sweeping",
    )
    ids = [r["id"] for r in receiver.received]
    assert len(ids) == 3 and len(set(ids)) == 3 and all(r["verified"] for r in receiver.received)
    assert DeliveryAttempt.objects.count() == 3

    # Nothing crashed: both beats ran side by side the whole time.
    assert cluster.dead() == {}, {name: cluster.log(name)[-2000:] for name in cluster.dead()}

