"""Collecting what payment channels sold (x402 `batch-settlement`): a payer's timed withdrawal
raced by the withdrawal watcher (the payer may take back what is not claimed on chain
`withdrawDelay` after asking, and a voucher checked against the stored channel does not see
the request: the watcher claims such channels at once; on a chain of its own, the test moves
time); the channel demo; and the deposit, claim and sweep through a separately run
facilitator over HTTP."""

from __future__ import annotations

from typing import Any

from x402.mechanisms.evm.batch_settlement.facilitator.utils import to_contract_channel_config

from billing import tasks
from billing.chain.localchain import x402_contract
from billing.credits import ledger_audit
from billing.models import ChannelSale, PaymentChannel
from billing.x402.channel_claims import channels_claim
from billing.x402.channels import channel_from_row
from tests.support.channels import (
    STATUS_PATH,
    STATUS_PRICE,
    channel_client,
    channel_payer,
    channel_session,
    onchain_channel,
    usdc_balance,
)

CALLS = 5


def send(w3: Any, account: Any, call: Any) -> None:
    tx = call.build_transaction({"from": account.address, "nonce": w3.eth.get_transaction_count(account.address)})
    tx_hash = w3.eth.send_raw_transaction(account.sign_transaction(tx).raw_transaction)
    assert w3.eth.wait_for_transaction_receipt(tx_hash)["status"] == 1


def _contract_config(row: PaymentChannel) -> Any:
    return to_contract_channel_config(channel_from_row(row).channel_config)


def test_a_payers_withdrawal_is_raced_by_the_watchers_claim(channel_own_chain, settings):
    stack, w3 = channel_own_chain, channel_own_chain.chain.w3
    settlement = x402_contract(w3, "x402BatchSettlement")
    payer = channel_payer(w3, settings.USDC_ADDRESS, 10**6)
    client, _ = channel_client(stack.chain.url, payer)
    session = channel_session(client)
    for _ in range(CALLS):
        paid = session.get(stack.url + STATUS_PATH, timeout=30)
        assert paid.status_code == 200, paid.text
    row = PaymentChannel.objects.get()
    deposit = int(row.balance_atomic)
    assert onchain_channel(w3, row.channel_id) == (deposit, 0)  # paid by vouchers, none claimed
    treasury_before = usdc_balance(stack, stack.treasury)

    # The payer asks for everything back; a watcher pass with nothing pending claims nothing first.
    tasks.channels_watch_withdrawals()
    assert onchain_channel(w3, row.channel_id) == (deposit, 0)
    config = _contract_config(row)
    send(w3, payer, settlement.functions.initiateWithdraw(config, deposit))
    block = w3.eth.block_number
    tasks.channels_watch_withdrawals()  # sees it, and claims the channel at once
    assert w3.eth.block_number == block + 1
    assert onchain_channel(w3, row.channel_id) == (deposit, CALLS * STATUS_PRICE)
    row.refresh_from_db()
    assert row.withdraw_requested_at > 0 and row.total_claimed_atomic == CALLS * STATUS_PRICE
    assert row.onchain_synced_at is None  # its next voucher is checked against the chain
    tasks.channels_claim()  # nothing more to claim
    assert w3.eth.block_number == block + 1

    # The delay passes and the payer finalizes: only what no voucher paid comes back.
    w3.provider.make_request("evm_increaseTime", [row.withdraw_delay])
    w3.provider.make_request("evm_mine", [])
    payer_before = usdc_balance(stack, payer.address)
    send(w3, payer, settlement.functions.finalizeWithdraw(config))
    assert usdc_balance(stack, payer.address) - payer_before == deposit - CALLS * STATUS_PRICE
    # The escrow is gone: the next voucher is checked against the chain and refused
    # (cumulative_exceeds_balance), not served.
    after = session.get(stack.url + STATUS_PATH, timeout=30)
    assert after.status_code == 402 and ChannelSale.objects.count() == CALLS, after.text
    tasks.channels_settle()
    assert usdc_balance(stack, stack.treasury) - treasury_before == CALLS * STATUS_PRICE
    assert ChannelSale.objects.count() == CALLS
    assert ledger_audit() == []


def test_a_channel_the_contract_refuses_to_claim_does_not_hold_back_the_others(channel_own_chain, settings, caplog):
    """A payer whose timed withdrawal finalized before any claim (the watcher was down) took the
    escrow back: the contract refuses the claim of its vouchers (ClaimExceedsBalance), and that
    simulation fails the whole batch. The claim run splits the batch until the refused channel
    stands alone: it is logged and left unclaimed, the other payers' calls are claimed."""
    stack, w3 = channel_own_chain, channel_own_chain.chain.w3
    settlement = x402_contract(w3, "x402BatchSettlement")
    payers = [channel_payer(w3, settings.USDC_ADDRESS, 10**6) for _ in range(3)]
    for payer in payers:
        session = channel_session(channel_client(stack.chain.url, payer)[0])
        for _ in range(2):
            paid = session.get(stack.url + STATUS_PATH, timeout=30)
            assert paid.status_code == 200, paid.text
    rows = {row.payer: row for row in PaymentChannel.objects.all()}
    gone = rows[payers[1].address.lower()]
    deposit = int(gone.balance_atomic)
    send(w3, payers[1], settlement.functions.initiateWithdraw(_contract_config(gone), deposit))
    w3.provider.make_request("evm_increaseTime", [gone.withdraw_delay])
    w3.provider.make_request("evm_mine", [])
    send(w3, payers[1], settlement.functions.finalizeWithdraw(_contract_config(gone)))
    assert onchain_channel(w3, gone.channel_id) == (0, 0)

    block = w3.eth.block_number
    tasks.channels_claim()  # no exception: the task does not fail (and retry) forever
    assert w3.eth.block_number - block in (1, 2)  # the refused one alone: no transaction
    for payer in (payers[0], payers[2]):
        row = rows[payer.address.lower()]
        assert onchain_channel(w3, row.channel_id) == (int(row.balance_atomic), 2 * STATUS_PRICE)
        row.refresh_from_db()
        assert row.total_claimed_atomic == 2 * STATUS_PRICE
    gone.refresh_from_db()
    assert gone.total_claimed_atomic == 0 and gone.charged_cumulative_atomic == 2 * STATUS_PRICE
    assert f"the claim of channel {gone.channel_id.lower()} is refused" in caplog.text
    block = w3.eth.block_number
    assert channels_claim() == []  # the next run: only the refused one is left, no transaction
    assert w3.eth.block_number == block
    assert ledger_audit() == []


def test_the_watcher_reads_every_exposed_channels_withdrawal_in_one_request(
    channel_own_chain, settings, monkeypatch
):
    """Three channels holding unclaimed calls, one of whose payers asked for a withdrawal: their
    pending withdrawals are read in one JSON-RPC batch (not a request a channel), the same as
    asked one by one; a node that refuses batches is asked one by one."""
    from web3 import HTTPProvider, Web3

    from billing.x402 import channel_claims

    stack, w3 = channel_own_chain, channel_own_chain.chain.w3
    settlement = x402_contract(w3, "x402BatchSettlement")
    payers = [channel_payer(w3, settings.USDC_ADDRESS, 10**6) for _ in range(3)]
    for payer in payers:
        paid = channel_session(channel_client(stack.chain.url, payer)[0]).get(stack.url + STATUS_PATH, timeout=30)
        assert paid.status_code == 200, paid.text
    rows = {row.payer: row for row in PaymentChannel.objects.all()}
    asking = rows[payers[2].address.lower()]
    send(w3, payers[2], settlement.functions.initiateWithdraw(_contract_config(asking), 1))
    asked_at = w3.eth.get_block("latest")["timestamp"]
    ids = [rows[p.address.lower()].channel_id for p in payers]
    expected = {ids[0]: 0, ids[1]: 0, ids[2]: asked_at}

    sent: list[str] = []
    single, batched = HTTPProvider.make_request, HTTPProvider.make_batch_request

    def one(self: Any, method: Any, params: Any) -> Any:
        sent.append(method)
        return single(self, method, params)

    def many(self: Any, requests: Any) -> Any:
        sent.append("batch of " + ",".join(sorted({method for method, _ in requests})) + f" x{len(requests)}")
        return batched(self, requests)

    def refused(self: Any, requests: Any) -> Any:
        raise ValueError("batch requests are not supported")

    def contract() -> Any:  # a client of its own: web3 keeps a provider's wrapped batch call
        return channel_claims.settlement_contract(Web3(HTTPProvider(stack.chain.url)))

    monkeypatch.setattr(HTTPProvider, "make_request", one)
    monkeypatch.setattr(HTTPProvider, "make_batch_request", many)
    assert channel_claims._withdrawals_initiated(contract(), ids) == expected
    assert sent == ["batch of eth_call x3"]
    sent.clear()
    monkeypatch.setattr(HTTPProvider, "make_batch_request", refused)
    assert channel_claims._withdrawals_initiated(contract(), ids) == expected
    assert sent.count("eth_call") == 3


def test_the_channel_demo_pays_its_calls_and_prints_the_one_claim(channel_stack, settings, capsys, monkeypatch):
    """`python -m a2a_service.scripts.demos.channels` (in `make demo`), against the live stack,
    with the claim task run as beat would while the demo waits for it."""
    from a2a_service.scripts.demos import channels as demo

    stack, w3 = channel_stack, channel_stack.chain.w3
    payer = channel_payer(w3, settings.USDC_ADDRESS, 10**6)
    info = {"base_url": stack.url, "chain_rpc_url": stack.chain.url, "usdc_address": settings.USDC_ADDRESS}
    calls, waited = 12, demo.claim_of

    def beat_then_wait(*args: Any, **kwargs: Any) -> str | None:
        tasks.channels_claim()
        return waited(*args, **kwargs)

    monkeypatch.setattr(demo, "CALLS", calls)
    monkeypatch.setattr(demo, "claim_of", beat_then_wait)
    assert demo.journey(info, key="0x" + payer.key.hex().removeprefix("0x"), wait=10) == 0
    out = capsys.readouterr().out
    assert f"{calls} calls in" in out and "1 transaction(s) on chain (the deposit)" in out
    assert f"claimed {calls * STATUS_PRICE / 10**6} USDC for all {calls} calls" in out
    assert ChannelSale.objects.count() == calls
    assert usdc_balance(stack, payer.address) == 10**6 - calls * STATUS_PRICE  # deposited: the calls' worth
    tasks.channels_settle()


def test_a_channel_pays_through_a_separately_run_facilitator_over_http(channel_stack, settings):
    """FACILITATOR_URL set (this service's facilitator as a separate process, here the live
    server itself): the deposit, the claim and the sweep go through its /settle with the
    shared secret; the vouchers need no facilitator at all."""
    settings.FACILITATOR_SHARED_SECRET = "s3cret-for-the-service-only"
    settings.FACILITATOR_URL = channel_stack.url + "/api/a2a/facilitator"
    settings.FACILITATOR_TIMEOUT_SECONDS = 30
    stack, w3 = channel_stack, channel_stack.chain.w3
    payer = channel_payer(w3, settings.USDC_ADDRESS, 10**6)
    client, _ = channel_client(stack.chain.url, payer)
    session = channel_session(client)
    for _ in range(3):
        paid = session.get(stack.url + STATUS_PATH, timeout=30)
        assert paid.status_code == 200, paid.text
    row = PaymentChannel.objects.get()
    treasury_before = usdc_balance(stack, stack.treasury)
    tasks.channels_claim()
    tasks.channels_settle()
    assert onchain_channel(w3, row.channel_id)[1] == 3 * STATUS_PRICE
    assert usdc_balance(stack, stack.treasury) - treasury_before == 3 * STATUS_PRICE
    assert ChannelSale.objects.count() == 3 and ledger_audit() == []
