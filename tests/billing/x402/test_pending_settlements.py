"""Settlements whose receipt did not come in time, remembered in Redis for every process
(billing/facilitator/pending.py): the retry of the same payment in another process reconciles
against the transaction that can still be mined (the stuck one's replacement), instead of
broadcasting a second transfer that the spent authorization would revert."""

from __future__ import annotations

import pytest
from x402.pending_settlement_store import InMemoryPendingSettlementStore

from billing.chain.localchain import FACILITATOR, dev_account
from billing.facilitator import pending as pending_module
from billing.facilitator.pending import KEY_PREFIX, RedisPendingSettlements, pending_settlements
from billing.facilitator.service import _build
from tests.support.payments import BRIEF, balances, challenge, payer_client

PRICE = 80_000  # the morning brief's seeded price


def rpc(chain, method: str, *params):
    return chain.w3.provider.make_request(method, list(params))


def web_process(chain, settings):
    """One web worker's own facilitator and signer, as a separate process builds them (the
    process-wide cache would hand both calls the same one)."""
    key = "0x" + dev_account(FACILITATOR).key.hex().removeprefix("0x")
    build = _build.__wrapped__  # type: ignore[attr-defined]
    return build(chain.url, key, settings.X402_NETWORK, 1.0, settings.REDIS_URL, str(settings.RUN_DIR), 10.0, "", 0.0)


def test_a_settlement_left_pending_in_one_process_is_completed_by_the_retry_in_another(
    paid_stack, brief, settings
):
    chain = paid_stack.chain
    (first, first_signer), (second, _second) = web_process(chain, settings), web_process(chain, settings)
    payload = payer_client().create_payment_payload(challenge(paid_stack.url + BRIEF))
    requirements = payload.accepted
    before_payer, before_treasury = balances(paid_stack)
    rpc(chain, "evm_setAutomine", False)
    try:
        pending = first.settle(payload, requirements)
        assert (pending.success, pending.error_reason) == (False, "settlement_pending")
        # Unmined past the wait, the first process replaced it with more gas: the replacement
        # is the one that can still be mined, and the one remembered for every process.
        mineable = first_signer.current_hash(pending.transaction)
        assert mineable != pending.transaction
        stored = paid_stack_redis_get(settings, payload)
        assert stored == mineable
        rpc(chain, "evm_mine")
    finally:
        rpc(chain, "evm_setAutomine", True)
    # The retry reaches the other process, which never saw the payment: it reconciles against
    # the mined replacement, broadcasting nothing.
    nonce_before = chain.w3.eth.get_transaction_count(dev_account(FACILITATOR).address)
    settled = second.settle(payload, requirements)
    assert settled.success, settled
    assert settled.transaction == mineable
    assert chain.w3.eth.get_transaction_receipt(mineable)["status"] == 1
    assert chain.w3.eth.get_transaction_count(dev_account(FACILITATOR).address) == nonce_before
    after_payer, after_treasury = balances(paid_stack)
    assert (before_payer - after_payer, after_treasury - before_treasury) == (PRICE, PRICE)
    # Reconciled: forgotten, so a third attempt is the spent authorization's refusal.
    assert paid_stack_redis_get(settings, payload) is None
    again = second.settle(payload, requirements)
    assert not again.success
    assert balances(paid_stack) == (after_payer, after_treasury)


def paid_stack_redis_get(settings, payload) -> str | None:
    from a2a_service.core.redisconn import redis_client

    client = redis_client()
    assert client is not None, "these tests run with Redis (REDIS_URL)"
    value = client.get(KEY_PREFIX + payload.payload["signature"])
    return None if value is None else value.decode() if isinstance(value, bytes) else value


class BrokenRedis:
    def get(self, *args, **kwargs):
        import redis

        raise redis.ConnectionError("down")

    set = get
    delete = get


def test_an_unreachable_redis_finds_nothing_and_a_failed_write_is_raised():
    store = RedisPendingSettlements(BrokenRedis())  # type: ignore[arg-type]
    # Found nothing: the retry verifies again, and the spent authorization refuses a second transfer.
    assert store.get("0xsig") is None
    store.delete("0xsig")  # it expires anyway
    # The SDK turns a failed write into a failed settlement naming the transaction.
    with pytest.raises(Exception, match="down"):
        store.set("0xsig", "0xtx")


def test_without_redis_the_store_is_the_process_own(monkeypatch):
    monkeypatch.setattr(pending_module, "redis_client", lambda: None)
    assert isinstance(pending_settlements("redis://gone"), InMemoryPendingSettlementStore)
    assert isinstance(pending_settlements(""), InMemoryPendingSettlementStore)
