"""The contracts the x402 SDK (2.25) pays through, on anvil at their canonical addresses, driven
by the SDK's own client, resource-server and facilitator code, unmodified (issue 26, the
foundation): a `batch-settlement` channel opened by a deposit, calls paid by cumulative vouchers
checked without a transaction, one claim and one settle paying the receiver exactly their sum,
replayed or lowered vouchers refused by the scheme and the contract, the payer's timed
withdrawal raced by a claim; an `upto` Permit2 authorization settled for less than it allows.

Every key here is fresh (the facilitator's gas key, the receiver authorizer, the payers), so
the session chain's other users (the service's facilitator key #1, the demo payer #2) are not
disturbed; the withdrawal test moves time and so runs on a chain of its own."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.contract import Contract
from web3.contract.contract import ContractFunction
from web3.exceptions import ContractCustomError
from x402 import x402ClientSync, x402FacilitatorSync, x402ResourceServerSync
from x402.mechanisms.evm import FacilitatorWeb3Signer
from x402.mechanisms.evm.batch_settlement.authorizer_signer import LocalAuthorizerSigner
from x402.mechanisms.evm.batch_settlement.client import (
    BatchSettlementDepositPolicy,
    BatchSettlementEvmSchemeOptions,
    InMemoryClientChannelStorage,
    sign_voucher,
)
from x402.mechanisms.evm.batch_settlement.client import (
    BatchSettlementEvmScheme as ChannelClient,
)
from x402.mechanisms.evm.batch_settlement.errors import (
    ERR_CLAIM_SIMULATION_FAILED,
    ERR_CUMULATIVE_AMOUNT_MISMATCH,
)
from x402.mechanisms.evm.batch_settlement.facilitator import BatchSettlementEvmFacilitator
from x402.mechanisms.evm.batch_settlement.facilitator.claim import build_voucher_claim_args
from x402.mechanisms.evm.batch_settlement.facilitator.utils import to_contract_channel_config
from x402.mechanisms.evm.batch_settlement.server import (
    BatchSettlementChannelManagerSync,
    BatchSettlementEvmSchemeServerConfig,
)
from x402.mechanisms.evm.batch_settlement.server import (
    BatchSettlementEvmScheme as ChannelServer,
)
from x402.mechanisms.evm.batch_settlement.types import ChannelConfig, VoucherClaim
from x402.mechanisms.evm.signers import EthAccountSigner, EthAccountSignerWithRPC
from x402.mechanisms.evm.upto import UptoEvmClientScheme, UptoEvmFacilitatorScheme, UptoEvmServerScheme
from x402.schemas import (
    PaymentPayload,
    PaymentRequired,
    PaymentRequirements,
    PaymentResponseContext,
    ResourceConfig,
    ResourceInfo,
    SettleResponse,
)
from x402.schemas.errors import PaymentAbortedError

from billing.chain.localchain import (
    anvil_start,
    dev_account,
    free_port,
    rpc_wait,
    stack_install,
    usdc_contract,
    usdc_mint,
    x402_contract,
)

NETWORK = "eip155:8453"
PRICE = 10_000  # 0.01 USDC a call
WITHDRAW_DELAY = 900  # the contract's minimum (15 minutes)
RESOURCE = ResourceInfo(url="http://testserver/api/a2a/x402/brief", description="a paid call")


def rpc(w3: Web3, method: str, *params: Any) -> Any:
    return w3.provider.make_request(method, list(params))  # type: ignore[arg-type]


def send(w3: Web3, account: LocalAccount, call: ContractFunction) -> None:
    """A transaction of `account`'s own (gas estimated first: a revert raises here)."""
    tx = call.build_transaction(
        {"from": account.address, "nonce": w3.eth.get_transaction_count(account.address)}
    )
    tx_hash = w3.eth.send_raw_transaction(account.sign_transaction(tx).raw_transaction)
    assert w3.eth.wait_for_transaction_receipt(tx_hash)["status"] == 1


def reverted_with(error: pytest.ExceptionInfo[ContractCustomError], name: str) -> bool:
    selector = Web3.keccak(text=f"{name}()")[:4].hex().removeprefix("0x")
    return str(error.value.data).removeprefix("0x").startswith(selector)


@dataclass
class Stack:
    """The SDK's three roles wired as our service will wire them: a facilitator (gas key and
    receiver authorizer), a resource server selling to `receiver`, and a chain to read."""

    w3: Web3
    url: str
    token: Contract
    receiver: str
    facilitator: x402FacilitatorSync
    server: x402ResourceServerSync
    channels: ChannelServer
    manager: BatchSettlementChannelManagerSync

    def payer(self, usdc_atomic: int) -> LocalAccount:
        account: LocalAccount = Account.create()
        usdc_mint(self.w3, usdc_address=self.token.address, to=account.address, amount_atomic=usdc_atomic)
        rpc(self.w3, "anvil_setBalance", account.address, hex(10**18))  # for its own transactions
        return account

    def offer(self, scheme: str, price: int, **extra: str) -> PaymentRequired:
        """The 402 the SDK's server builds for one call at `price` atomic USDC."""
        config = ResourceConfig(
            scheme=scheme,
            pay_to=self.receiver,
            price={
                "amount": str(price),
                "asset": self.token.address,
                "extra": {"name": "USD Coin", "version": "2"},
            },
            network=NETWORK,
            extra=extra or None,
        )
        return self.server.create_payment_required_response(
            self.server.build_payment_requirements(config), resource=RESOURCE
        )

    def pay(self, client: x402ClientSync, offer: PaymentRequired) -> tuple[PaymentPayload, SettleResponse]:
        """One paid call: the client pays the 402, the server verifies and settles, the client
        reads the answer's settlement (as the SDK's HTTP client does with PAYMENT-RESPONSE)."""
        payload = client.create_payment_payload(offer)
        assert isinstance(payload, PaymentPayload)
        settled = self.serve(payload, offer)
        client.handle_payment_response(
            PaymentResponseContext(
                payment_payload=payload, requirements=payload.accepted, settle_response=settled
            )
        )
        return payload, settled

    def serve(self, payload: PaymentPayload, offer: PaymentRequired) -> SettleResponse:
        requirements = self.server.find_matching_requirements(offer.accepts, payload)
        assert requirements is not None
        verified = self.server.verify_payment(payload, requirements)
        assert verified.is_valid, verified.verify
        settled = self.server.settle_payment(payload, requirements)
        assert settled.success, settled
        return settled

    def balance(self, address: str) -> int:
        value: int = self.token.functions.balanceOf(Web3.to_checksum_address(address)).call()
        return value


def stack_build(w3: Web3, url: str, *, receiver: str, usdc_address: str) -> Stack:
    gas, authorizer = Account.create(), Account.create()
    rpc(w3, "anvil_setBalance", gas.address, hex(10**19))
    signer = FacilitatorWeb3Signer(private_key=gas.key.hex(), rpc_url=url)
    facilitator = x402FacilitatorSync()
    facilitator.register([NETWORK], BatchSettlementEvmFacilitator(signer, LocalAuthorizerSigner(authorizer)))
    facilitator.register([NETWORK], UptoEvmFacilitatorScheme(signer))
    channels = ChannelServer(receiver, BatchSettlementEvmSchemeServerConfig(withdraw_delay=WITHDRAW_DELAY))
    server = x402ResourceServerSync(facilitator)
    server.register(NETWORK, channels)
    server.register(NETWORK, UptoEvmServerScheme())
    server.initialize()
    return Stack(
        w3=w3,
        url=url,
        token=usdc_contract(w3, usdc_address),
        receiver=receiver,
        facilitator=facilitator,
        server=server,
        channels=channels,
        manager=channels.create_channel_manager_sync(facilitator, NETWORK),
    )


@pytest.fixture
def stack(chain, settings) -> Stack:
    return stack_build(
        chain.w3, chain.url, receiver=settings.TREASURY_ADDRESS, usdc_address=settings.USDC_ADDRESS
    )


@pytest.fixture
def own_chain(settings) -> Iterator[SimpleNamespace]:
    """A chain of this test's own (0.1 s to start), for a test that moves time."""
    port = free_port()
    proc = anvil_start(port=port)
    url = f"http://127.0.0.1:{port}"
    try:
        w3 = rpc_wait(url)
        stack_install(w3, usdc_address=settings.USDC_ADDRESS)
        yield SimpleNamespace(url=url, w3=w3)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def channel_client(stack: Stack, payer: LocalAccount) -> tuple[x402ClientSync, ChannelClient]:
    scheme = ChannelClient(
        EthAccountSignerWithRPC(payer, stack.url),
        BatchSettlementEvmSchemeOptions(
            storage=InMemoryClientChannelStorage(),
            deposit_policy=BatchSettlementDepositPolicy(deposit_multiplier=5),
        ),
    )
    client = x402ClientSync()
    client.register(NETWORK, scheme)
    return client, scheme


def onchain_channel(stack: Stack, channel_id: str) -> tuple[int, int]:
    balance, total_claimed = (
        x402_contract(stack.w3, "x402BatchSettlement").functions.channels(channel_id).call()
    )
    return int(balance), int(total_claimed)


# --- what is on the chain -------------------------------------------------------------------
def test_the_sdk_contracts_sit_at_the_addresses_the_sdk_names(chain):
    """Channel ids, EIP-712 domains and the collectors' wiring are those the SDK computes."""
    from x402.mechanisms.evm.batch_settlement.constants import (
        BATCH_SETTLEMENT_ADDRESS,
        ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
        PERMIT2_DEPOSIT_COLLECTOR_ADDRESS,
    )
    from x402.mechanisms.evm.batch_settlement.utils import (
        compute_channel_id,
        get_batch_settlement_eip712_domain,
    )
    from x402.mechanisms.evm.constants import PERMIT2_ADDRESS, X402_UPTO_PERMIT2_PROXY_ADDRESS

    w3 = chain.w3
    settlement = x402_contract(w3, "x402BatchSettlement")
    _, name, version, chain_id, verifying, _, _ = settlement.functions.eip712Domain().call()
    domain = get_batch_settlement_eip712_domain(8453)
    assert (name, version, chain_id, verifying) == (
        domain["name"],
        domain["version"],
        domain["chainId"],
        BATCH_SETTLEMENT_ADDRESS,
    )
    config = ChannelConfig(
        payer=dev_account(3).address,
        payer_authorizer=dev_account(3).address,
        receiver=dev_account(9).address,
        receiver_authorizer=dev_account(4).address,
        token=chain.token.address,
        withdraw_delay=WITHDRAW_DELAY,
        salt="0x" + "00" * 32,
    )
    on_chain = settlement.functions.getChannelId(to_contract_channel_config(config)).call()
    assert "0x" + on_chain.hex() == compute_channel_id(config, NETWORK)
    assert x402_contract(w3, "ERC3009DepositCollector").functions.x402BatchSettlement().call() == (
        BATCH_SETTLEMENT_ADDRESS
    )
    collector = x402_contract(w3, "Permit2DepositCollector")
    assert collector.address == PERMIT2_DEPOSIT_COLLECTOR_ADDRESS != ERC3009_DEPOSIT_COLLECTOR_ADDRESS
    assert (collector.functions.x402BatchSettlement().call(), collector.functions.PERMIT2().call()) == (
        BATCH_SETTLEMENT_ADDRESS,
        PERMIT2_ADDRESS,
    )
    upto = x402_contract(w3, "x402UptoPermit2Proxy")
    assert (upto.address, upto.functions.PERMIT2().call()) == (
        X402_UPTO_PERMIT2_PROXY_ADDRESS,
        PERMIT2_ADDRESS,
    )
    permit2_domain = Web3.keccak(
        w3.codec.encode(
            ["bytes32", "bytes32", "uint256", "address"],
            [
                Web3.keccak(text="EIP712Domain(string name,uint256 chainId,address verifyingContract)"),
                Web3.keccak(text="Permit2"),
                8453,
                PERMIT2_ADDRESS,
            ],
        )
    )
    assert x402_contract(w3, "Permit2").functions.DOMAIN_SEPARATOR().call() == permit2_domain


# --- batch-settlement ------------------------------------------------------------------------
CALLS = 100


def test_a_channel_pays_many_calls_by_voucher_and_one_claim_settles_exactly_their_sum(stack):
    """The first call deposits into the channel (one transaction, through the ERC-3009
    collector); every later call is a voucher the server checks without a transaction; then
    one claim and one settle pay the receiver exactly what the calls cost."""
    payer = stack.payer(10 * 10**6)
    client, scheme = channel_client(stack, payer)
    # The route asks a first deposit that covers all the calls (by default: 10 calls' worth,
    # and the client tops up with another deposit transaction when a voucher would exceed it).
    offer = stack.offer("batch-settlement", PRICE, minDeposit=str(CALLS * PRICE))
    [accepts] = offer.accepts
    assert accepts.extra["receiverAuthorizer"] and accepts.extra["withdrawDelay"] == WITHDRAW_DELAY
    assert accepts.extra["minDeposit"] == str(CALLS * PRICE)
    settlement = x402_contract(stack.w3, "x402BatchSettlement")
    claimed, swept = settlement.functions.receivers(stack.receiver, stack.token.address).call()
    assert claimed == swept  # nothing of another test's left to sweep
    receiver_before, block_before = stack.balance(stack.receiver), stack.w3.eth.block_number

    first, settled = stack.pay(client, offer)
    assert first.payload["type"] == "deposit" and settled.transaction  # the deposit is on chain
    deposit = int(first.payload["deposit"]["amount"])
    channel_id = first.payload["voucher"]["channelId"]
    assert onchain_channel(stack, channel_id) == (deposit, 0)
    assert stack.w3.eth.block_number == block_before + 1
    for n in range(2, CALLS + 1):
        payload, settled = stack.pay(client, offer)
        assert payload.payload["type"] == "voucher"
        assert payload.payload["voucher"]["maxClaimableAmount"] == str(n * PRICE)  # cumulative
        assert settled.transaction == "" and settled.extra["chargedAmount"] == str(PRICE)
    assert stack.w3.eth.block_number == block_before + 1  # no transaction per voucher
    assert stack.channels.get_storage().get(channel_id).charged_cumulative_amount == str(CALLS * PRICE)

    [claim] = stack.manager.claim()
    assert claim.vouchers == 1  # one channel: its latest voucher carries every call
    assert onchain_channel(stack, channel_id) == (deposit, CALLS * PRICE)
    assert stack.balance(stack.receiver) == receiver_before  # claimed, not yet swept
    settle = stack.manager.settle()
    assert stack.balance(stack.receiver) - receiver_before == CALLS * PRICE
    assert stack.balance(settlement.address) >= deposit - CALLS * PRICE
    gas = [
        stack.w3.eth.get_transaction_receipt(tx)["gasUsed"] for tx in (claim.transaction, settle.transaction)
    ]
    assert sum(gas) < 250_000  # for all the calls together

    # Nothing left to claim: a second round sends no transaction.
    assert stack.manager.claim() == []


def test_a_replayed_or_lowered_voucher_is_refused_by_the_scheme_and_the_contract(stack):
    payer = stack.payer(10 * 10**6)
    client, _ = channel_client(stack, payer)
    offer = stack.offer("batch-settlement", PRICE)
    stack.pay(client, offer)
    second, _ = stack.pay(client, offer)
    third, _ = stack.pay(client, offer)
    channel_id = second.payload["voucher"]["channelId"]
    requirements = stack.server.find_matching_requirements(offer.accepts, second)

    # The server's scheme: a voucher whose cumulative amount is not charged-so-far + price.
    with pytest.raises(PaymentAbortedError) as replayed:
        stack.server.verify_payment(second, requirements)
    assert replayed.value.reason == ERR_CUMULATIVE_AMOUNT_MISMATCH
    lowered = second.model_copy(deep=True)
    lowered.payload["voucher"] = sign_voucher(
        EthAccountSigner(payer), channel_id, 3 * PRICE - 1, NETWORK
    ).to_dict()
    with pytest.raises(PaymentAbortedError) as low:
        stack.server.verify_payment(lowered, requirements)
    assert low.value.reason == ERR_CUMULATIVE_AMOUNT_MISMATCH
    assert stack.channels.get_storage().get(channel_id).charged_cumulative_amount == str(3 * PRICE)

    # The contract: the receiver side claims the latest voucher, then an older one changes
    # nothing; claiming past a voucher's ceiling or with a forged signature reverts.
    [claim] = stack.manager.claim()
    settlement = x402_contract(stack.w3, "x402BatchSettlement")
    config = ChannelConfig.from_dict(third.payload["channelConfig"])
    receiver = stack.receiver  # the receiver may claim directly (it is a dev account, unlocked)

    def claim_directly(voucher: dict[str, str], total: int) -> None:
        args = build_voucher_claim_args(
            [
                VoucherClaim(
                    channel=config,
                    max_claimable_amount=voucher["maxClaimableAmount"],
                    signature=voucher["signature"],
                    total_claimed=str(total),
                )
            ]
        )
        tx = settlement.functions.claim(args).transact({"from": receiver})
        assert stack.w3.eth.wait_for_transaction_receipt(tx)["status"] == 1

    claim_directly(second.payload["voucher"], 2 * PRICE)  # an older voucher: a no-op
    assert onchain_channel(stack, channel_id)[1] == 3 * PRICE
    with pytest.raises(ContractCustomError) as beyond:
        claim_directly(third.payload["voucher"], 3 * PRICE + 1)
    assert reverted_with(beyond, "ClaimExceedsCeiling")
    forged = sign_voucher(EthAccountSigner(Account.create()), channel_id, 5 * PRICE, NETWORK).to_dict()
    with pytest.raises(ContractCustomError) as forgery:
        claim_directly(forged, 5 * PRICE)
    assert reverted_with(forgery, "InvalidSignature")
    assert onchain_channel(stack, channel_id)[1] == 3 * PRICE
    stack.manager.settle()  # leave nothing claimed and unswept for the receiver


def test_a_client_that_lost_its_channel_state_is_resynced_by_a_corrective_402(stack):
    """An agent restarted without its channel state rebuilds it from the chain (nothing
    claimed yet: cumulative 0), so its next voucher is too low; the server's refusal answers a
    402 carrying the channel's state and the last voucher it holds, and the SDK client resyncs
    from it and pays on. (The service's payment front must build that 402 the same way.)"""
    payer = stack.payer(10**6)
    client, _ = channel_client(stack, payer)
    offer = stack.offer("batch-settlement", PRICE)
    for _ in range(3):
        stack.pay(client, offer)
    restarted, _ = channel_client(stack, payer)
    stale = restarted.create_payment_payload(offer)
    assert isinstance(stale, PaymentPayload) and stale.payload["voucher"]["maxClaimableAmount"] == str(PRICE)
    requirements = stack.server.find_matching_requirements(offer.accepts, stale)
    with pytest.raises(PaymentAbortedError) as refused:
        stack.server.verify_payment(stale, requirements)
    corrective = stack.server.create_payment_required_response(
        offer.accepts, resource=RESOURCE, error=refused.value.reason, payment_payload=stale
    )
    [accepts] = corrective.accepts
    assert accepts.extra["channelState"]["chargedCumulativeAmount"] == str(3 * PRICE)
    recovered = restarted.handle_payment_response(
        PaymentResponseContext(
            payment_payload=stale, requirements=stale.accepted, payment_required=corrective
        )
    )
    assert recovered is not None
    fourth, _ = stack.pay(restarted, offer)
    assert fourth.payload["voucher"]["maxClaimableAmount"] == str(4 * PRICE)


def test_a_channel_opened_through_permit2_pays_by_voucher_too(stack):
    """The other deposit collector: a route that asks `assetTransferMethod: permit2` is paid
    into the channel by a Permit2 witness transfer (the payer approved Permit2 once)."""
    from x402.mechanisms.evm.constants import PERMIT2_ADDRESS

    payer = stack.payer(10**6)
    send(stack.w3, payer, stack.token.functions.approve(PERMIT2_ADDRESS, 2**256 - 1))
    client, _ = channel_client(stack, payer)
    offer = stack.offer("batch-settlement", PRICE, assetTransferMethod="permit2")
    first, settled = stack.pay(client, offer)
    assert first.payload["deposit"]["authorization"]["permit2Authorization"] and settled.transaction
    second, _ = stack.pay(client, offer)
    assert second.payload["voucher"]["maxClaimableAmount"] == str(2 * PRICE)
    channel_id, deposit = first.payload["voucher"]["channelId"], int(first.payload["deposit"]["amount"])
    assert onchain_channel(stack, channel_id) == (deposit, 0)
    assert stack.balance(payer.address) == 10**6 - deposit
    receiver_before = stack.balance(stack.receiver)
    stack.manager.claim_and_settle()
    assert onchain_channel(stack, channel_id) == (deposit, 2 * PRICE)
    assert stack.balance(stack.receiver) - receiver_before == 2 * PRICE


def test_a_payers_timed_withdrawal_is_raced_by_a_claim(own_chain, settings):
    """The payer may take back what is not claimed on chain, but only `withdrawDelay` after
    asking: the receiver's claim made in that window keeps what the vouchers paid for. A claim
    that comes after the withdrawal finalized finds the escrow gone."""
    stack = stack_build(
        own_chain.w3, own_chain.url, receiver=settings.TREASURY_ADDRESS, usdc_address=settings.USDC_ADDRESS
    )
    w3, settlement = stack.w3, x402_contract(own_chain.w3, "x402BatchSettlement")
    payer = stack.payer(10**6)
    client, _ = channel_client(stack, payer)
    offer = stack.offer("batch-settlement", PRICE)
    first, _ = stack.pay(client, offer)
    for _ in range(4):
        stack.pay(client, offer)
    channel_id, deposit = first.payload["voucher"]["channelId"], int(first.payload["deposit"]["amount"])
    config = to_contract_channel_config(ChannelConfig.from_dict(first.payload["channelConfig"]))
    assert onchain_channel(stack, channel_id) == (deposit, 0)  # 5 calls paid, none claimed yet

    # Nothing is claimed on chain yet, so the payer may ask the whole deposit back.
    send(w3, payer, settlement.functions.initiateWithdraw(config, deposit))
    amount, initiated_at = settlement.functions.pendingWithdrawals(channel_id).call()
    assert amount == deposit and initiated_at > 0
    with pytest.raises(ContractCustomError) as early:
        send(w3, payer, settlement.functions.finalizeWithdraw(config))
    assert reverted_with(early, "WithdrawDelayNotElapsed")

    # Lost race (undone after): the delay passes and the payer finalizes before any claim.
    snapshot = rpc(w3, "evm_snapshot")["result"]
    rpc(w3, "evm_increaseTime", WITHDRAW_DELAY)
    rpc(w3, "evm_mine")
    send(w3, payer, settlement.functions.finalizeWithdraw(config))
    with pytest.raises(RuntimeError, match=ERR_CLAIM_SIMULATION_FAILED):  # ClaimExceedsBalance
        stack.manager.claim()
    assert rpc(w3, "evm_revert", snapshot)["result"] is True

    # Won race: the claim lands inside the window; finalizing then returns only the rest.
    [claim] = stack.manager.claim()
    assert onchain_channel(stack, channel_id) == (deposit, 5 * PRICE)
    rpc(w3, "evm_increaseTime", WITHDRAW_DELAY)
    rpc(w3, "evm_mine")
    payer_before, receiver_before = stack.balance(payer.address), stack.balance(stack.receiver)
    send(w3, payer, settlement.functions.finalizeWithdraw(config))
    assert stack.balance(payer.address) - payer_before == deposit - 5 * PRICE
    assert onchain_channel(stack, channel_id) == (5 * PRICE, 5 * PRICE)
    stack.manager.settle()
    assert stack.balance(stack.receiver) - receiver_before == 5 * PRICE


# --- upto ------------------------------------------------------------------------------------
def test_an_upto_authorization_settles_what_was_used_never_more(stack):
    """The payer signs a Permit2 authorization for a maximum (through x402UptoPermit2Proxy,
    bound to our facilitator); the server settles what the call used. Zero settles nothing on
    chain; more than authorized is refused by the facilitator and by the proxy."""
    from x402.mechanisms.evm.constants import ERR_UPTO_SETTLEMENT_EXCEEDS_AMOUNT, PERMIT2_ADDRESS
    from x402.mechanisms.evm.types import UptoPermit2Payload
    from x402.mechanisms.evm.upto.permit2_utils import _build_upto_permit2_settle_args

    authorized, used = 500_000, 123_456
    payer = stack.payer(10**6)
    send(stack.w3, payer, stack.token.functions.approve(PERMIT2_ADDRESS, 2**256 - 1))  # once per token
    client = x402ClientSync()
    client.register(NETWORK, UptoEvmClientScheme(EthAccountSignerWithRPC(payer, stack.url)))
    offer = stack.offer("upto", authorized)
    [accepts] = offer.accepts
    assert accepts.extra["assetTransferMethod"] == "permit2" and accepts.extra["facilitatorAddress"]

    def authorize() -> tuple[PaymentPayload, PaymentRequirements]:
        payload = client.create_payment_payload(offer)
        assert isinstance(payload, PaymentPayload)
        requirements = stack.server.find_matching_requirements(offer.accepts, payload)
        assert requirements is not None and stack.server.verify_payment(payload, requirements).is_valid
        return payload, requirements

    payload, requirements = authorize()
    payer_before, receiver_before = stack.balance(payer.address), stack.balance(stack.receiver)
    settled = stack.server.settle_payment(payload, requirements.model_copy(update={"amount": str(used)}))
    assert settled.success and settled.transaction and settled.amount == str(used)
    assert stack.balance(payer.address) - payer_before == -used
    assert stack.balance(stack.receiver) - receiver_before == used

    payload, requirements = authorize()
    block = stack.w3.eth.block_number
    nothing = stack.server.settle_payment(payload, requirements.model_copy(update={"amount": "0"}))
    assert nothing.success and nothing.transaction == "" and stack.w3.eth.block_number == block

    too_much = stack.server.settle_payment(
        payload, requirements.model_copy(update={"amount": str(authorized + 1)})
    )
    assert not too_much.success and too_much.error_reason == ERR_UPTO_SETTLEMENT_EXCEEDS_AMOUNT
    proxy = x402_contract(stack.w3, "x402UptoPermit2Proxy")
    args = _build_upto_permit2_settle_args(UptoPermit2Payload.from_dict(payload.payload), authorized + 1)
    with pytest.raises(ContractCustomError) as refused:
        proxy.functions.settle(*args).call({"from": accepts.extra["facilitatorAddress"]})
    assert reverted_with(refused, "AmountExceedsPermitted")
    assert stack.balance(payer.address) - payer_before == -used
