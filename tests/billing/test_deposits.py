"""The deposit watcher on a real chain (anvil): confirmations, bonus, minimum, deposits
before registration, repeated and overlapping scans, RPC failure mid-scan, reorg detection."""

from __future__ import annotations

import logging
import threading

import pytest
from django.db import connections

from billing.chain.localchain import dev_account, usdc_mint
from billing.credits import ledger_audit
from billing.deposits import CURSOR_NAME, _scan, chain, deposits_scan
from billing.models import ChainCursor, Deposit, LedgerEntry
from tests.support.deposits import USDC, balance, mine, send
from tests.support.wallets import register_wallet


@pytest.mark.django_db
def test_a_deposit_is_pending_until_confirmed_then_credited_with_the_bonus(watcher, api):
    key = register_wallet(dev_account(3)).api_key
    send(watcher, 3, 5 * USDC)
    deposits_scan()
    assert Deposit.objects.get().state == Deposit.State.PENDING and balance(3) == 0
    shown = api.get("/api/a2a/account", HTTP_X_API_KEY=key).json()["deposits"]
    assert shown[0]["state"] == "pending_confirmations" and shown[0]["amount_usdc"] == 5.0
    mine(watcher, 2)
    result = deposits_scan()
    assert result.credited == 1 and balance(3) == 5_500_000  # 5.0 + 10% bundle bonus
    kinds = sorted(LedgerEntry.objects.values_list("kind", "amount_atomic"))
    assert kinds == [("bonus", 500_000), ("deposit", 5_000_000)]
    account = api.get("/api/a2a/account", HTTP_X_API_KEY=key).json()
    assert account["credit_balance_usdc"] == 5.5 and account["deposits"][0]["state"] == "credited"
    assert ledger_audit() == []


@pytest.mark.django_db
def test_below_the_minimum_is_recorded_and_not_credited(watcher):
    register_wallet(dev_account(3))
    send(watcher, 3, 5_000)  # 0.005 USDC
    send(watcher, 3, 10_000)  # exactly the minimum
    mine(watcher, 2)
    deposits_scan()
    states = dict(Deposit.objects.values_list("amount_atomic", "state"))
    assert states == {5_000: "below_minimum", 10_000: "credited"} and balance(3) == 10_000


@pytest.mark.django_db
def test_a_deposit_before_registration_is_credited_on_registration(watcher):
    send(watcher, 4, 1 * USDC)
    mine(watcher, 2)
    deposits_scan()
    assert Deposit.objects.get().state == Deposit.State.UNMATCHED
    reg = register_wallet(dev_account(4))
    assert reg.account.credit_balance_atomic == 1 * USDC and Deposit.objects.get().state == "credited"


@pytest.mark.django_db
def test_scanning_again_from_an_old_cursor_credits_nothing_twice(watcher, settings):
    register_wallet(dev_account(3))
    send(watcher, 3, 2 * USDC)
    mine(watcher, 2)
    deposits_scan()
    # Back to before this test's first block (not to block 0: the worker's chain holds other
    # tests' transfers from this wallet to the treasury, x402 payments among them).
    ChainCursor.objects.filter(name=CURSOR_NAME).update(block_number=settings.DEPOSIT_START_BLOCK - 1, block_hash="")
    deposits_scan()
    deposits_scan()
    assert Deposit.objects.count() == 1 and LedgerEntry.objects.count() == 1 and balance(3) == 2 * USDC


@pytest.mark.django_db
def test_an_rpc_failure_mid_scan_keeps_the_cursor_on_the_last_block_read(watcher, settings, monkeypatch):
    import billing.deposits as deposits

    settings.DEPOSIT_BLOCK_RANGE = 1
    register_wallet(dev_account(3))
    send(watcher, 3, 1 * USDC)
    send(watcher, 3, 2 * USDC)
    mine(watcher, 2)
    real_logs, calls = deposits._logs, []

    def flaky(w3, frm, to):
        calls.append(frm)
        if len(calls) == 3:
            raise ConnectionError("RPC went away")
        return real_logs(w3, frm, to)

    monkeypatch.setattr(deposits, "_logs", flaky)
    with pytest.raises(ConnectionError):
        deposits_scan()
    cursor = ChainCursor.objects.get(name=CURSOR_NAME)
    assert cursor.block_number == calls[1]  # the two ranges read are committed, the third is not
    credited_before = balance(3)
    monkeypatch.setattr(deposits, "_logs", real_logs)
    deposits_scan()
    assert balance(3) == 3 * USDC and credited_before < 3 * USDC
    assert Deposit.objects.filter(state="credited").count() == 2 and ledger_audit() == []


@pytest.mark.django_db
def test_a_changed_block_hash_below_the_confirmations_is_detected_and_logged(watcher, caplog):
    mine(watcher, 3)
    deposits_scan()
    ChainCursor.objects.filter(name=CURSOR_NAME).update(block_hash="0x" + "ab" * 32)
    with caplog.at_level(logging.ERROR, logger="billing.deposits"):
        result = deposits_scan()
    # Now it also rewinds (to the highest remembered block still on the chain: here the
    # cursor's own block, whose real hash the checkpoints kept) instead of only logging.
    assert result.reorg_detected is True and "reorganised" in caplog.text
    cursor = ChainCursor.objects.get(name=CURSOR_NAME)
    assert cursor.block_hash == "0x" + bytes(watcher.w3.eth.get_block(cursor.block_number)["hash"]).hex()


@pytest.mark.django_db
def test_a_scan_already_running_makes_the_next_one_skip(watcher):
    from django.core.cache import cache

    from billing.deposits import LOCK_KEY

    cache.add(LOCK_KEY, "other-worker", 30)
    try:
        assert deposits_scan().skipped is True
    finally:
        cache.delete(LOCK_KEY)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_overlapping_scans_credit_each_deposit_once(watcher):
    from catalog.services import catalog_seed

    catalog_seed()
    register_wallet(dev_account(3))
    for amount in (1, 2, 3):
        send(watcher, 3, amount * USDC)
    mine(watcher, 2)
    barrier = threading.Barrier(4)
    errors: list[Exception] = []

    def scan() -> None:
        try:
            barrier.wait()
            _scan(chain(), 20)  # bypassing the lock on purpose: the constraints must hold alone
        except Exception as exc:  # a loser may hit the unique constraint; that is the point
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=scan) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    deposits_scan()  # whatever a loser left undone
    assert balance(3) == 6 * USDC
    assert LedgerEntry.objects.filter(kind="deposit").count() == 3 and ledger_audit() == []


@pytest.mark.django_db
def test_an_x402_settlement_to_the_treasury_is_a_sale_not_a_deposit(watcher, settings):
    """The payer's x402 payment moves USDC to the treasury too; it must not become credit."""
    import secrets
    import time

    from x402.mechanisms.evm.eip712 import hash_eip3009_authorization
    from x402.mechanisms.evm.types import ExactEIP3009Authorization

    from billing.models import Payment
    from catalog.models import Sku
    from catalog.services import catalog_seed

    catalog_seed()
    payer = dev_account(3)
    register_wallet(payer)
    usdc_mint(watcher.w3, usdc_address=watcher.token.address, to=payer.address, amount_atomic=USDC)
    nonce = "0x" + secrets.token_hex(32)
    auth = ExactEIP3009Authorization(
        from_address=payer.address,
        to=settings.TREASURY_ADDRESS,
        value="80000",
        valid_after="0",
        valid_before=str(int(time.time()) + 600),
        nonce=nonce,
    )
    digest = hash_eip3009_authorization(auth, 8453, watcher.token.address, "USD Coin", "2")
    signature = payer.unsafe_sign_hash(digest).signature
    sku = Sku.objects.get(sku="morning_brief")
    Payment.objects.create(
        sku=sku,
        resource="r",
        payer=payer.address.lower(),
        nonce=nonce,
        amount_atomic=80_000,
        network="eip155:8453",
        asset=watcher.token.address,
        pay_to=settings.TREASURY_ADDRESS,
        state=Payment.State.SETTLED,
    )
    tx = watcher.token.functions.transferWithAuthorization(
        payer.address,
        settings.TREASURY_ADDRESS,
        80_000,
        0,
        int(auth.valid_before),
        bytes.fromhex(nonce[2:]),
        signature,
    ).transact({"from": dev_account(1).address})
    watcher.w3.eth.wait_for_transaction_receipt(tx)
    send(watcher, 3, 20_000)  # and a real deposit of 0.02
    mine(watcher, 2)
    deposits_scan()
    assert list(Deposit.objects.values_list("amount_atomic", flat=True)) == [20_000]
    assert balance(3) == 20_000


@pytest.mark.django_db
def test_the_scan_task_does_not_retry_on_its_own_and_logs_a_failure_once(monkeypatch, caplog):
    """Changed with finding 10: the task used to retry itself with backoff, on top of beat's
    next run, so retries piled up while the RPC was down. Beat's schedule is the retry now."""
    import billing.tasks as tasks

    calls: list[int] = []

    def down():
        calls.append(1)
        raise ConnectionError("RPC unreachable")

    monkeypatch.setattr(tasks, "deposits_scan", down)
    monkeypatch.setattr(tasks.scan_deposits, "retry", lambda **kw: pytest.fail("the task retried itself"))
    tasks._last_failure.clear()
    with caplog.at_level(logging.WARNING, logger="billing.tasks"):
        for _ in range(5):  # five beats while the RPC is down
            tasks.scan_deposits.run()
    assert len(calls) == 5
    assert caplog.text.count("deposit scan failed") == 1 and "RPC unreachable" in caplog.text
    assert not ChainCursor.objects.exists()  # nothing was read, nothing moved


@pytest.mark.django_db
def test_a_deposit_recorded_before_positions_were_kept_is_not_credited_again(watcher, settings):
    """Rows from before migration 0004 have no position in their transaction: reading their
    blocks again adopts them instead of recording (and crediting) the transfer a second time."""
    register_wallet(dev_account(3))
    send(watcher, 3, 2 * USDC)
    mine(watcher, 2)
    deposits_scan()
    Deposit.objects.update(tx_log_index=None)  # as the migration leaves old rows
    ChainCursor.objects.filter(name=CURSOR_NAME).update(
        block_number=settings.DEPOSIT_START_BLOCK - 1, block_hash="", checkpoints=[]
    )
    deposits_scan()
    deposit = Deposit.objects.get()
    assert deposit.tx_log_index == 0 and deposit.state == "credited"
    assert LedgerEntry.objects.count() == 1 and balance(3) == 2 * USDC and ledger_audit() == []
