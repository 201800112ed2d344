"""Issue 26's rows (BENCH_ONLY=schemes): what one paid call costs by each way of paying, on the
local stack as `make run` starts it (anvil with the x402 contracts, the self-hosted facilitator
in process, granian with BENCH_WORKERS workers, PostgreSQL when there is one).

Timed: the request that carries the payment, sequentially, by one agent with the official x402
client code, each after the same pause (PAUSE_SECONDS): an `exact` EIP-3009 authorization
(settled on chain before the answer), the same payment to the reference stack (the SDK's
FastAPI middleware and the SDK's facilitator, its own process, on the same chain), a
`batch-settlement` voucher (checked against the channel's state, no transaction), a sign-in
(`sign-in-with-x`) spending prepaid credits, and the same credits by `X-API-Key`. The unpaid 402
before each x402 or sign-in call is not timed (it is the same for all). Rounds alternate; the
p50 of each is printed with its ratios.

Counted: gas per paid call (`exact`: its settlement; vouchers: the channel's deposit, claim and
settle shared by every voucher of the channel) and claim transactions for VOUCHER_CALLS voucher
calls (one claim run, as one beat of X402_CHANNEL_CLAIM_INTERVAL would send)."""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import subprocess
import time
from collections.abc import Callable
from typing import Any

import requests

from a2a_service.scripts.bench.servers import ROUNDS, free_port, manage_shell, start, stop, wait_ready
from a2a_service.scripts.bench.targets import ratio_record

PATH = "/api/a2a/x402/payments/dual-rail-status"  # 0.01 USDC, always something to deliver
CALLS_PER_ROUND = int(os.environ.get("BENCH_SCHEME_CALLS", "20"))
# Every timed request waits this long after the client's preparation (the unpaid 402, signing),
# so that each way of paying is timed from the same idle state. A request sent right after the
# previous answer is served faster than one sent after a pause (this machine, one key call:
# 1.75 ms back to back, 2.65 ms after the 402 and 3 ms of client work, 3.4 after 10 ms): timing
# the key call back to back and the others after their signing compared unlike things.
PAUSE_SECONDS = float(os.environ.get("BENCH_SCHEME_PAUSE_MS", "5")) / 1000
VOUCHER_CALLS = int(os.environ.get("BENCH_VOUCHER_CALLS", "1000"))


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


class Agent:
    """One agent's clients: the SDK's exact and batch-settlement schemes on its wallet, the
    sign-in hook, its API key; each `call_*` returns the timed request's milliseconds."""

    def __init__(self, *, url: str, rpc: str, wallet_key: str, api_key: str) -> None:
        from eth_account import Account
        from x402 import x402ClientSync
        from x402.extensions.sign_in_with_x import create_siwx_client_hook
        from x402.http import x402HTTPClientSync
        from x402.mechanisms.evm.batch_settlement.client import (
            BatchSettlementEvmScheme,
            BatchSettlementEvmSchemeOptions,
        )
        from x402.mechanisms.evm.exact.register import register_exact_evm_client
        from x402.mechanisms.evm.signers import EthAccountSigner, EthAccountSignerWithRPC

        from billing.chain.localchain import DEMO_PAYER, dev_account

        self.url, self.api_key = url, api_key
        self.session = requests.Session()
        payer = dev_account(DEMO_PAYER)
        self.exact = register_exact_evm_client(x402ClientSync(), EthAccountSigner(payer))
        self.exact_http = x402HTTPClientSync(self.exact)
        calls = VOUCHER_CALLS + ROUNDS * CALLS_PER_ROUND + 10
        channel = BatchSettlementEvmScheme(
            EthAccountSignerWithRPC(payer, rpc),
            BatchSettlementEvmSchemeOptions(
                # one deposit for every voucher call of the run
                deposit_strategy=lambda c: str(max(calls * int(c.request_amount), int(c.deposit_amount))),
                salt="0x" + secrets.token_hex(32),
            ),
        )
        self.channel = x402ClientSync()
        self.channel.register("eip155:8453", channel)
        self.channel_http = x402HTTPClientSync(self.channel)
        self.signin_hook = create_siwx_client_hook(Account.from_key(wallet_key))
        self.exact_transactions: list[str] = []
        self.deposit_transactions: list[str] = []
        self.voucher_calls = 0

    def _required(self, http: Any, url: str = "") -> Any:
        first = self.session.get(url or self.url, timeout=30)
        if first.status_code != 402:
            raise RuntimeError(f"expected the 402, got {first.status_code} {first.text[:200]}")
        return http.get_payment_required_response(first.headers.get, first.content)

    def _paid(self, http: Any, client: Any, url: str = "") -> tuple[float, requests.Response, Any]:
        from x402.http.utils import decode_payment_response_header

        required = self._required(http, url)
        payload = client.create_payment_payload(required)
        headers = http.encode_payment_signature_header(payload)
        time.sleep(PAUSE_SECONDS)
        t0 = time.perf_counter()
        answer = self.session.get(url or self.url, headers=headers, timeout=60)
        took = _ms(t0)
        if answer.status_code != 200:
            raise RuntimeError(f"paid call failed: {answer.status_code} {answer.text[:300]}")
        http.process_payment_result(payload, answer.headers.get, answer.status_code)
        return took, answer, decode_payment_response_header(answer.headers["PAYMENT-RESPONSE"])

    def call_exact(self) -> float:
        took, _answer, receipt = self._paid(self.exact_http, self.exact)
        self.exact_transactions.append(receipt.transaction)
        return took

    def call_exact_reference(self, url: str) -> float:
        """The same `exact` payment to the reference stack: the SDK's FastAPI middleware and the
        SDK's facilitator in a process of its own, settling on the same chain."""
        took, _answer, receipt = self._paid(self.exact_http, self.exact, url)
        if not receipt.transaction:
            raise RuntimeError("the reference stack answered without a settlement transaction")
        return took

    def call_voucher(self) -> float:
        took, _answer, receipt = self._paid(self.channel_http, self.channel)
        if receipt.transaction:  # the deposit (first call, or a top-up)
            self.deposit_transactions.append(receipt.transaction)
        self.voucher_calls += 1
        return took

    def call_signin(self) -> float:
        from x402.schemas.hooks import PaymentRequiredContext

        required = self._required(self.exact_http)
        signed = asyncio.run(
            self.signin_hook(PaymentRequiredContext(payment_required=required, request_url=self.url))
        )
        if signed is None:
            raise RuntimeError("the SDK's sign-in hook declined the 402's sign-in-with-x declaration")
        time.sleep(PAUSE_SECONDS)
        t0 = time.perf_counter()
        answer = self.session.get(self.url, headers=dict(signed.headers), timeout=30)
        took = _ms(t0)
        if answer.status_code != 200 or "X-Credit-Charged" not in answer.headers:
            raise RuntimeError(f"sign-in call failed: {answer.status_code} {answer.text[:300]}")
        return took

    def call_credit(self) -> float:
        time.sleep(PAUSE_SECONDS)
        t0 = time.perf_counter()
        answer = self.session.get(self.url, headers={"X-API-Key": self.api_key}, timeout=30)
        took = _ms(t0)
        if answer.status_code != 200:
            raise RuntimeError(f"credit call failed: {answer.status_code} {answer.text[:300]}")
        return took


def reference_stack(env: dict[str, str], rpc: str, procs: list[subprocess.Popen]) -> str:
    """The SDK's facilitator (reference_facilitator.py, its own gas key) and the SDK's FastAPI
    middleware pointed at it (reference.py), each under uvicorn with the bench's workers; returns
    the reference's paid URL."""
    from billing.chain.localchain import dev_account

    fac_port, ref_port = free_port(), free_port()
    fac_env = {
        **env,
        "REFERENCE_FACILITATOR_KEY": "0x" + dev_account(REFERENCE_FACILITATOR).key.hex().removeprefix("0x"),
        "CHAIN_RPC_URL": rpc,
    }
    procs.append(start("x402-facilitator", fac_port, fac_env))
    wait_ready(f"http://127.0.0.1:{fac_port}/supported")
    procs.append(start("x402-fastapi", ref_port, {**env, "FACILITATOR_URL": f"http://127.0.0.1:{fac_port}"}))
    url = f"http://127.0.0.1:{ref_port}/paid"
    wait_ready(url, status=402)
    return url


# A dev account of anvil's mnemonic that nothing else sends from (localchain uses 0-2 and 9).
REFERENCE_FACILITATOR = 3


def _gas(w3: Any, transaction: str) -> int:
    return int(w3.eth.get_transaction_receipt(transaction)["gasUsed"])


def schemes_scenario(env: dict[str, str]) -> None:
    from billing.chain.localchain import FACILITATOR, anvil_start, dev_account, rpc_wait, stack_install

    chain_port, ours_port = free_port(), free_port()
    procs: list[subprocess.Popen] = [anvil_start(port=chain_port)]
    try:
        rpc = f"http://127.0.0.1:{chain_port}"
        w3 = rpc_wait(rpc)
        stack_install(w3, usdc_address="0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")
        env = {
            **env,
            "CHAIN_RPC_URL": rpc,
            "FACILITATOR_URL": "",  # in process, as `make run` settles
            "FACILITATOR_PRIVATE_KEY": "0x" + dev_account(FACILITATOR).key.hex().removeprefix("0x"),
            "TREASURY_ADDRESS": "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720",
        }
        # The channels an earlier run left in the bench's database are on a chain that is gone
        # (each run starts its own anvil): the claim run would try them too.
        manage_shell("from billing.models import PaymentChannel\nprint(PaymentChannel.objects.all().delete())", env)
        wallet_key, api_key = manage_shell(
            "from eth_account import Account\n"
            "from billing.credits import credit_add\n"
            "from tests.support.wallets import register_wallet  # signs the ownership challenge\n"
            "wallet = Account.create()\n"
            "reg = register_wallet(wallet)\n"
            "credit_add(account_id=reg.account.id, amount_atomic=10**12, kind='adjustment', reason='bench')\n"
            "print(wallet.key.hex() + ',' + reg.api_key)\n",
            env,
        ).split(",")
        procs.append(start("granian", ours_port, env))
        url = f"http://127.0.0.1:{ours_port}{PATH}"
        wait_ready(url, status=402)
        reference = reference_stack(env, rpc, procs)
        agent = Agent(url=url, rpc=rpc, wallet_key=wallet_key, api_key=api_key)
        ways: dict[str, Callable[[], float]] = {
            "exact": agent.call_exact,
            "exact, reference stack": lambda: agent.call_exact_reference(reference),
            "voucher": agent.call_voucher,
            "sign-in (credits)": agent.call_signin,
            "X-API-Key (credits)": agent.call_credit,
        }
        for way in ways.values():
            way()  # warm-up (and the channel's deposit)
        rounds: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(ROUNDS):
            for name, way in ways.items():
                rounds[name].append(statistics.median(way() for _ in range(CALLS_PER_ROUND)))
        p50 = {name: statistics.median(values) for name, values in rounds.items()}
        print(
            f"\n== one paid call by each way of paying (sequential, p50 of {ROUNDS} alternating rounds "
            f"of {CALLS_PER_ROUND} calls; the request carrying the payment)"
        )
        for name, value in p50.items():
            print(f"  {name:22} {value:7.2f} ms")
        # Issue 27 item 2: the whole paid request (verify, product, settlement confirmed on chain)
        # against the same request to the reference stack.
        ratio_record(
            "exact paid call p50, ours / reference stack",
            p50["exact"] / p50["exact, reference stack"],
            target=0.8,
            better="lower",
        )
        ratio_record(
            "voucher call / exact call p50", p50["voucher"] / p50["exact"], target=0.2, better="lower"
        )
        ratio_record(
            "voucher call / X-API-Key credit call p50",
            p50["voucher"] / p50["X-API-Key (credits)"],
            target=2.0,
            better="lower",
        )
        ratio_record(
            "sign-in credit call / X-API-Key credit call p50",
            p50["sign-in (credits)"] / p50["X-API-Key (credits)"],
            target=1.5,
            better="lower",
        )
        channel_gas(w3, agent, env)
    finally:
        for proc in reversed(procs):
            stop(proc)


def channel_gas(w3: Any, agent: Agent, env: dict[str, str]) -> None:
    """Voucher calls up to VOUCHER_CALLS, one claim run and one settle (as beat sends them);
    gas per paid call against exact's."""
    t0 = time.perf_counter()
    while agent.voucher_calls < VOUCHER_CALLS:
        agent.call_voucher()
    took = time.perf_counter() - t0
    claimed = manage_shell(
        "from billing.x402.channel_claims import channels_claim, channels_settle\n"
        "claims = channels_claim()\n"
        "settled = channels_settle()\n"
        "print(';'.join(c.transaction for c in claims) + '|' + (settled.transaction if settled else ''))\n",
        env,
    )
    claims_part, settle_tx = claimed.split("|")
    claims = [c for c in claims_part.split(";") if c]
    channel_total = sum(
        _gas(w3, tx) for tx in [*agent.deposit_transactions, *claims, *([settle_tx] if settle_tx else [])]
    )
    per_voucher = channel_total / agent.voucher_calls
    exact_gas = statistics.median(_gas(w3, tx) for tx in agent.exact_transactions if tx)
    print(
        f"\n== gas: {agent.voucher_calls} voucher-paid calls (the last {VOUCHER_CALLS} in {took:.1f} s) claimed by "
        f"{len(claims)} claim transaction(s) in one claim run, {len(agent.deposit_transactions)} deposit(s), "
        f"{'one settle' if settle_tx else 'no settle'}: {channel_total} gas in all, {per_voucher:.0f} a call; "
        f"exact: {exact_gas:.0f} gas a call (its settlement)"
    )
    ratio_record("exact gas / voucher gas per paid call", exact_gas / per_voucher, target=50)
    ratio_record("claim transactions per claim run", float(len(claims)), target=1, better="lower")
