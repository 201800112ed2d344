"""Transactions from a prompt (POST /api/a2a/txgen/transaction): each prompt kind becomes exact
calldata, gas estimated by the local chain (anvil), 0.30 USDC charged once on success and
nothing on a 422; a built transfer, signed and sent, moves the tokens."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from eth_account import Account as EthAccount
from web3 import Web3
from web3.types import RPCEndpoint
from x402.http.utils import decode_payment_required_header

from billing.chain.localchain import DEMO_PAYER, artifact, dev_account, usdc_mint
from billing.credits import ledger_audit
from billing.models import BillingSettings, LedgerEntry
from billing.txgen.intent import TxgenRefused, intent_parse
from billing.txgen.models import AccountReferral, TxgenCall
from tests.support.payments import balance, funded

pytestmark = pytest.mark.django_db

URL = "/api/a2a/txgen/transaction"
PRICE = 300_000
RECIPIENT = "0x" + "ab" * 20
LLM_PORTS = range(8120, 8130)  # this worktree's ports, for the local model
TRANSFER, APPROVE, DEPOSIT, WITHDRAW = "0xa9059cbb", "0x095ea7b3", "0xd0e30db0", "0x2e1a7d4d"


def word(value: int | str) -> str:
    """One ABI word: an address or an integer left-padded to 32 bytes (hex, no 0x)."""
    if isinstance(value, str):
        return value.lower().removeprefix("0x").rjust(64, "0")
    return format(value, "064x")


@pytest.fixture
def rpc(chain, settings):
    settings.CHAIN_RPC_URL = chain.url
    return chain


def post(api, key: str, prompt: str, address: str, **extra):
    return api.post(URL, {"prompt": prompt, "address": address, **extra}, format="json", HTTP_X_API_KEY=key)


def txgen_rows() -> int:
    return LedgerEntry.objects.filter(kind=LedgerEntry.Kind.SKU_CALL, sku__sku="txgen_transaction").count()


# --- the parser, without a chain --------------------------------------------------------------
@pytest.mark.parametrize(
    ("prompt", "action", "token", "atomic", "counterparty"),
    [
        (f"send 5 USDC to {RECIPIENT}", "transfer", "USDC", 5 * 10**6, RECIPIENT),
        (f"Transfer 0.25 usdc to {RECIPIENT}.", "transfer", "USDC", 250_000, RECIPIENT),
        (f"approve 100 USDC for {RECIPIENT}", "approve", "USDC", 100 * 10**6, RECIPIENT),
        ("wrap 0.1 ETH", "wrap", "ETH", 10**17, None),
        ("unwrap 0.1 WETH", "unwrap", "WETH", 10**17, None),
        (f"send 0.01 ETH to {RECIPIENT}", "transfer", "ETH", 10**16, RECIPIENT),
    ],
)
def test_each_prompt_kind_is_understood(prompt, action, token, atomic, counterparty):
    intent = intent_parse(prompt)
    assert (intent.action, intent.token.symbol, intent.amount_atomic) == (action, token, atomic)
    assert (intent.counterparty or "").lower() == (counterparty or "")


@pytest.mark.parametrize(
    ("prompt", "type_", "says"),
    [
        (f"swap 5 USDC to {RECIPIENT}", "txgen_unknown_action", "'swap'"),
        (f"send 5 DOGE to {RECIPIENT}", "txgen_unknown_token", "'DOGE'"),
        ("send 5 USDC to 0x1234", "txgen_bad_address", "'0x1234'"),
        ("send 5 USDC to 0xAbCdEF0000000000000000000000000000000001", "txgen_bad_address", "checksum"),
        (f"send USDC to {RECIPIENT}", "txgen_missing_amount", "missing amount"),
        (f"send 1.0000001 USDC to {RECIPIENT}", "txgen_amount_precision", "7 decimals; USDC has 6"),
        (f"send 0 USDC to {RECIPIENT}", "txgen_amount_not_positive", "greater than 0"),
        ("wrap 1 USDC", "txgen_unknown_token", "wrap takes ETH"),
        (f"approve 1 ETH for {RECIPIENT}", "txgen_unknown_token", "approve takes USDC or WETH"),
        (f"send 5 USDC {RECIPIENT}", "txgen_not_understood", "'to'"),
        (f"send 5 USDC to {RECIPIENT} now please", "txgen_not_understood", "'now please'"),
    ],
)
def test_what_is_not_understood_is_named(prompt, type_, says):
    with pytest.raises(TxgenRefused) as exc:
        intent_parse(prompt)
    assert exc.value.type == type_ and says in exc.value.message, exc.value.message


# --- the paid route, on anvil -----------------------------------------------------------------
def test_usdc_transfer_exact_calldata_gas_and_one_charge_of_0_30(api, rpc, settings):
    key, account = funded(1)
    sender = dev_account(DEMO_PAYER).address  # holds USDC on the local chain
    resp = post(api, key, f"send 5 USDC to {RECIPIENT}", sender, referral="partner-1")
    assert resp.status_code == 200, resp.json()
    body = resp.json()
    tx = body["transaction"]
    assert tx["to"] == Web3.to_checksum_address(settings.USDC_ADDRESS)
    assert tx["data"] == TRANSFER + word(RECIPIENT) + word(5 * 10**6)
    assert word(5 * 10**6).endswith("4c4b40")
    assert (tx["value"], tx["chainId"], tx["from"]) == ("0", 8453, sender)
    assert tx["gas"] > 21_000 and tx["nonce"] == rpc.w3.eth.get_transaction_count(sender, "pending")
    assert body["summary"] == f"Send 5 USDC from {sender} to {Web3.to_checksum_address(RECIPIENT)}"
    assert body["intent"]["amount_atomic"] == "5000000" and body["affiliate_tag"] == "partner-1"
    # Charged exactly the price, once, with its ledger row; the call recorded with the tag.
    assert resp["X-Credit-Charged"] == "0.3" and balance(account) == 1_000_000 - PRICE
    row = LedgerEntry.objects.get(account=account, kind=LedgerEntry.Kind.SKU_CALL)
    assert (row.amount_atomic, row.sku.sku, row.reference) == (-PRICE, "txgen_transaction", URL)
    call = TxgenCall.objects.get(account=account)
    assert (call.charged_atomic, call.affiliate_tag, call.id) == (PRICE, "partner-1", body["call_id"])
    assert call.tx["data"] == tx["data"] and call.intent["action"] == "transfer"
    assert ledger_audit() == []


def test_approve_wrap_unwrap_and_ether_send_calldata(api, rpc, settings):
    key, account = funded(2)
    sender = dev_account(DEMO_PAYER).address
    weth = Web3.to_checksum_address(settings.WETH_ADDRESS)
    tenth = 10**17

    ok = post(api, key, f"approve 100 USDC for {RECIPIENT}", sender).json()["transaction"]
    assert ok["to"] == Web3.to_checksum_address(settings.USDC_ADDRESS)
    assert ok["data"] == APPROVE + word(RECIPIENT) + word(100 * 10**6) and ok["value"] == "0"

    wrap = post(api, key, "wrap 0.1 ETH", sender, chainId=8453).json()["transaction"]
    assert (wrap["to"], wrap["data"], wrap["value"]) == (weth, DEPOSIT, str(tenth))
    assert wrap["gas"] > 21_000  # WETH9 runs on the local chain at Base's address

    send = post(api, key, f"send 0.01 ETH to {RECIPIENT}", sender).json()["transaction"]
    assert (send["to"], send["data"], send["value"], send["gas"]) == (
        Web3.to_checksum_address(RECIPIENT),
        "0x",
        str(10**16),
        21_000,
    )
    # The payer holds no WETH: unwrapping would revert, and says why (uncharged).
    refused = post(api, key, "unwrap 0.1 WETH", sender)
    assert refused.status_code == 422
    err = refused.json()["detail"][0]
    assert err["type"] == "txgen_execution_reverted" and "WETH: insufficient balance" in err["msg"]
    assert balance(account) == 2_000_000 - 3 * PRICE and txgen_rows() == 3
    assert TxgenCall.objects.filter(account=account).count() == 3

    # Once it holds WETH (wrapped on chain), the unwrap is built: withdraw(amount).
    payer = dev_account(DEMO_PAYER)
    signed = payer.sign_transaction(
        {**_sendable(wrap), "nonce": rpc.w3.eth.get_transaction_count(payer.address, "pending")}
    )
    assert (
        rpc.w3.eth.wait_for_transaction_receipt(rpc.w3.eth.send_raw_transaction(signed.raw_transaction))[
            "status"
        ]
        == 1
    )
    unwrap = post(api, key, "unwrap 0.1 WETH", sender).json()["transaction"]
    assert (unwrap["to"], unwrap["data"], unwrap["value"]) == (weth, WITHDRAW + word(tenth), "0")
    assert balance(account) == 2_000_000 - 4 * PRICE and ledger_audit() == []


def _sendable(tx: dict) -> dict:
    return {
        "to": tx["to"],
        "data": tx["data"],
        "value": int(tx["value"]),
        "gas": tx["gas"],
        "chainId": tx["chainId"],
        "maxFeePerGas": 10**10,
        "maxPriorityFeePerGas": 10**9,
    }


@pytest.mark.parametrize(
    ("payload", "loc", "type_"),
    [
        ({"prompt": f"swap 5 USDC to {RECIPIENT}"}, ["body", "prompt"], "txgen_unknown_action"),
        ({"prompt": f"send 5 DOGE to {RECIPIENT}"}, ["body", "prompt"], "txgen_unknown_token"),
        ({"prompt": "send 5 USDC to 0xnothex"}, ["body", "prompt"], "txgen_bad_address"),
        ({"prompt": f"send USDC to {RECIPIENT}"}, ["body", "prompt"], "txgen_missing_amount"),
        ({"prompt": f"send 0.1234567 USDC to {RECIPIENT}"}, ["body", "prompt"], "txgen_amount_precision"),
        ({"prompt": f"send 5 USDC to {RECIPIENT}", "chainId": 1}, ["body", "chain_id"], "txgen_wrong_chain"),
        (
            {"prompt": f"send 5 USDC to {RECIPIENT}", "address": "0x12"},
            ["body", "address"],
            "string_pattern_mismatch",
        ),
        # The sender holds no USDC: the chain reverts the estimate, with its reason.
        (
            {"prompt": f"send 5 USDC to {RECIPIENT}", "address": "0x" + "7" * 40},
            ["body", "prompt"],
            "txgen_execution_reverted",
        ),
    ],
)
def test_refusals_are_422_and_charge_nothing(api, rpc, payload, loc, type_):
    key, account = funded(1)
    body = {"address": dev_account(DEMO_PAYER).address, **payload}
    resp = api.post(URL, body, format="json", HTTP_X_API_KEY=key)
    assert resp.status_code == 422, resp.json()
    err = resp.json()["detail"][0]
    assert (err["loc"], err["type"]) == (loc, type_), err
    if type_ == "txgen_execution_reverted":
        assert "ERC20: transfer amount exceeds balance" in err["msg"]
    assert balance(account) == 1_000_000 and txgen_rows() == 0 and not TxgenCall.objects.exists()


def test_unreachable_chain_is_503_uncharged(api, settings):
    settings.CHAIN_RPC_URL = "http://127.0.0.1:9"  # nothing listens: connection refused
    key, account = funded(1)
    resp = post(api, key, f"send 5 USDC to {RECIPIENT}", dev_account(DEMO_PAYER).address)
    assert resp.status_code == 503 and resp.json()["charged"] is False
    assert balance(account) == 1_000_000 and not TxgenCall.objects.exists()


def test_the_first_referral_of_an_account_stays_and_billing_off_charges_nothing(api, rpc):
    key, account = funded(1)
    sender = dev_account(DEMO_PAYER).address
    assert post(api, key, "wrap 0.1 ETH", sender, referral="alice").json()["affiliate_tag"] == "alice"
    assert post(api, key, "wrap 0.1 ETH", sender, referral="bob").json()["affiliate_tag"] == "alice"
    assert post(api, key, "wrap 0.1 ETH", sender).json()["affiliate_tag"] == "alice"
    assert AccountReferral.objects.get(account=account).tag == "alice"
    billing = BillingSettings.load()
    billing.credit_billing_enabled = False
    billing.save()
    free = post(api, key, "wrap 0.1 ETH", sender)
    assert free.status_code == 200 and free["X-Credit-Charged"] == "0"
    charged = list(
        TxgenCall.objects.filter(account=account).order_by("id").values_list("charged_atomic", flat=True)
    )
    assert charged == [PRICE, PRICE, PRICE, 0] and balance(account) == 1_000_000 - 3 * PRICE


def test_x402_path_asks_0_30_and_refuses_a_bad_prompt_before_payment(api):
    resp = api.get("/api/a2a/x402/txgen/transaction", {"prompt": "wrap 0.1 ETH", "address": RECIPIENT})
    assert resp.status_code == 402
    assert decode_payment_required_header(resp.headers["PAYMENT-REQUIRED"]).accepts[0].amount == str(PRICE)
    bad = api.get("/api/a2a/x402/txgen/transaction", {"prompt": "fly 1 ETH", "address": RECIPIENT})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["query", "prompt"]


def test_a_built_transfer_signed_and_sent_moves_5_usdc(api, rpc, settings):
    """The agent's whole path: build with the API, sign with its own key, send to the chain."""
    key, _ = funded(1)
    wallet = EthAccount.create()
    recipient = EthAccount.create().address
    rpc.w3.provider.make_request(RPCEndpoint("anvil_setBalance"), [wallet.address, hex(10**18)])
    usdc_mint(rpc.w3, usdc_address=settings.USDC_ADDRESS, to=wallet.address, amount_atomic=20 * 10**6)
    before = rpc.token.functions.balanceOf(recipient).call()

    resp = post(api, key, f"send 5 USDC to {recipient}", wallet.address)
    assert resp.status_code == 200, resp.json()
    tx = resp.json()["transaction"]
    signed = wallet.sign_transaction({**_sendable(tx), "nonce": tx["nonce"]})
    receipt = rpc.w3.eth.wait_for_transaction_receipt(rpc.w3.eth.send_raw_transaction(signed.raw_transaction))
    assert receipt["status"] == 1 and receipt["gasUsed"] <= tx["gas"]
    assert rpc.token.functions.balanceOf(recipient).call() - before == 5 * 10**6
    assert rpc.token.functions.balanceOf(wallet.address).call() == 15 * 10**6


def test_weth9_artifact_is_installed_with_the_stack(rpc, settings):
    code = rpc.w3.eth.get_code(Web3.to_checksum_address(settings.WETH_ADDRESS))
    assert code.hex().removeprefix("0x") == artifact("Weth9")["deployedBytecode"].removeprefix("0x")


# --- the optional language-model fallback -----------------------------------------------------
class _LlmHandler(BaseHTTPRequestHandler):
    server: LocalLlm

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        server = self.server
        server.calls.append(self.path)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            if self.path.startswith("/redirect"):
                # To a private address (this same loopback server): must never be followed.
                self.send_response(307)
                self.send_header("Location", f"{server.url}/leak")
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif self.path.startswith("/huge"):
                self._stream(b'{"choices": [{"message": {"content": "', b"a" * 65_536, pause=0)
            elif self.path.startswith("/stall"):
                self._stream(b"{", b" ", pause=0.1)  # a byte now and then, never the end
            else:
                body = json.dumps({"choices": [{"message": {"content": server.line}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
        except OSError:  # the client hung up (its deadline or its size cap): expected
            pass

    def _stream(self, head: bytes, chunk: bytes, *, pause: float) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(head)
        for _ in range(2_000):  # at most ~130 MB or ~200 s, unless the client hangs up first
            if self.server.stopping.wait(pause):
                return
            self.wfile.write(chunk)
            self.wfile.flush()

    def do_GET(self) -> None:  # noqa: N802
        self.server.calls.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return None


class LocalLlm(ThreadingHTTPServer):
    """An OpenAI-compatible chat endpoint on loopback (a port of this worktree's range):
    answers `line` on any path, misbehaves on /redirect, /huge and /stall."""

    daemon_threads = True

    def __init__(self, port: int) -> None:
        super().__init__(("127.0.0.1", port), _LlmHandler)
        self.line = ""
        self.calls: list[str] = []
        self.stopping = threading.Event()
        self.url = f"http://127.0.0.1:{port}"


@pytest.fixture
def llm(settings):
    server = None
    for port in LLM_PORTS:
        try:
            server = LocalLlm(port)
            break
        except OSError:
            continue
    assert server is not None, "no free port for the local model"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    settings.TXGEN_LLM_URL = server.url + "/v1/chat/completions"
    yield server
    server.stopping.set()
    server.shutdown()
    server.server_close()


def test_llm_fallback_is_checked_by_the_patterns_and_the_prompt(api, rpc, llm):
    key, account = funded(1)
    sender = dev_account(DEMO_PAYER).address
    prompt = f"please move five point five... no, 5.5 USDC over to {RECIPIENT}"
    llm.line = f"send 5.5 USDC to {RECIPIENT}"

    # Unpaid: the x402 challenge does not ask the model.
    assert (
        api.get("/api/a2a/x402/txgen/transaction", {"prompt": prompt, "address": sender}).status_code == 402
    )
    assert llm.calls == []

    resp = post(api, key, prompt, sender)
    assert resp.status_code == 200, resp.json()
    body = resp.json()
    assert body["intent"]["understood_by"] == "llm" and llm.calls == ["/v1/chat/completions"]
    assert body["transaction"]["data"] == TRANSFER + word(RECIPIENT) + word(5_500_000)
    assert balance(account) == 1_000_000 - PRICE

    # A reading that invents the recipient, or changes the amount, is refused (uncharged).
    for line, type_ in [
        ("send 5.5 USDC to 0x" + "cd" * 20, "txgen_bad_address"),
        (f"send 55 USDC to {RECIPIENT}", "txgen_missing_amount"),
        ("UNKNOWN", "txgen_unknown_action"),
    ]:
        llm.line = line
        refused = post(api, key, prompt, sender)
        assert refused.status_code == 422 and refused.json()["detail"][0]["type"] == type_, refused.json()
    assert balance(account) == 1_000_000 - PRICE and TxgenCall.objects.count() == 1

    # A precise refusal (too many decimals) is not handed to the model.
    llm.line, asked = f"send 1 USDC to {RECIPIENT}", len(llm.calls)
    assert post(api, key, f"send 1.0000001 USDC to {RECIPIENT}", sender).status_code == 422
    assert len(llm.calls) == asked


def test_a_model_that_redirects_floods_or_stalls_is_a_refusal_never_a_500(api, llm, settings):
    """Issue 22, finding 10: the model's call goes through the one outbound function. A redirect
    (to a private address) is not followed, a huge answer is cut at TXGEN_LLM_MAX_BODY_BYTES, an
    answer that trickles forever ends at the deadline: each is the patterns' own 422, uncharged."""
    settings.TXGEN_LLM_TIMEOUT_SECONDS = 1.0
    key, account = funded(1)
    sender = dev_account(DEMO_PAYER).address
    prompt = f"please move 5.5 USDC over to {RECIPIENT}"
    for path in ("/redirect", "/huge", "/stall"):
        settings.TXGEN_LLM_URL = llm.url + path
        resp = post(api, key, prompt, sender)
        assert resp.status_code == 422, (path, resp.status_code, resp.content[:300])
        detail = resp.json()["detail"][0]
        assert detail["type"] == "txgen_unknown_action" and "could not be asked" in detail["msg"], detail
    assert llm.calls == ["/redirect", "/huge", "/stall"]  # never /leak: the redirect was not followed
    assert balance(account) == 1_000_000 and txgen_rows() == 0 and TxgenCall.objects.count() == 0
