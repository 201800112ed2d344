"""Deposits: USDC sent to the treasury on the local chain under the deposit watcher, and
deposits settled directly (as the watcher settles them) for the tiers they earn."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from billing.chain.localchain import dev_account, usdc_mint
from billing.credits import deposit_settle
from billing.models import Account, Deposit
from tests.support.wallets import register_wallet

USDC = 10**6


@pytest.fixture
def watcher(chain, settings):
    """A clean chain state per test, watched from its current block with 2 confirmations."""
    snapshot = chain.w3.provider.make_request("evm_snapshot", [])["result"]
    settings.CHAIN_RPC_URL = chain.url
    settings.DEPOSIT_CONFIRMATIONS = 2
    settings.DEPOSIT_FINALITY_TAG = ""  # anvil's "safe" is 32 blocks back; tested on its own below
    settings.DEPOSIT_START_BLOCK = chain.w3.eth.block_number + 1
    yield chain
    chain.w3.provider.make_request("evm_revert", [snapshot])


def send(chain, index: int, amount_atomic: int) -> None:
    wallet = dev_account(index).address
    usdc_mint(chain.w3, usdc_address=chain.token.address, to=wallet, amount_atomic=amount_atomic)
    from django.conf import settings

    tx = chain.token.functions.transfer(settings.TREASURY_ADDRESS, amount_atomic).transact({"from": wallet})
    chain.w3.eth.wait_for_transaction_receipt(tx)


def mine(chain, blocks: int) -> None:
    for _ in range(blocks):
        chain.w3.provider.make_request("evm_mine", [])


def balance(index: int) -> int:
    return Account.objects.get(wallet_address=dev_account(index).address.lower()).credit_balance_atomic


_n = iter(range(1, 10_000))


def deposit(account: Account, amount_atomic: int, *, days_ago: float = 0) -> Deposit:
    """A confirmed transfer from the account's wallet, settled as the watcher settles it, then
    dated `days_ago` (the window counts deposits by when they were credited)."""
    n = next(_n)
    row = Deposit.objects.create(
        tx_hash="0x" + f"{n:064x}",
        log_index=0,
        tx_log_index=0,
        block_number=1000 + n,
        block_hash="0x" + "bb" * 32,
        from_address=account.wallet_address,
        amount_atomic=amount_atomic,
        state=Deposit.State.PENDING,
    )
    settled = deposit_settle(deposit_id=row.id)
    assert settled.state == Deposit.State.CREDITED
    if days_ago:
        Deposit.objects.filter(pk=row.pk).update(credited_at=timezone.now() - timedelta(days=days_ago))
        settled.refresh_from_db()
    return settled


def tier_account() -> tuple[Account, str]:
    """A registered account that deposited 30 USDC: the dolphin tier (25 USDC, 2%)."""
    reg = register_wallet()
    deposit(reg.account, 30 * USDC)
    return reg.account, reg.api_key
