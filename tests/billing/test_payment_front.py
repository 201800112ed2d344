"""One product, every surface, every rail it takes: the payment front (billing/front/) sells
`sentiment` the same way through the REST x402 path, the chat, the marketplace's execute, the
MCP tool and the A2A skill. x402 `exact` is paid by the official x402 client on the local chain,
credits by X-API-Key, a session by its token (the chat). Each call charges once, the same
amount, by the rail the caller chose, and each surface's receipt says so: the x402 settlement
of the Payment row whose transfer moved the USDC, the ledger row's debit and the balance after
it, the session call used."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
import requests
from x402.http import x402HTTPClientSync
from x402.http.clients import wrapRequestsWithPayment
from x402.http.utils import decode_payment_required_header, decode_payment_response_header
from x402.mcp import MCP_PAYMENT_META_KEY, MCP_PAYMENT_RESPONSE_META_KEY
from x402.mcp.types import MCPToolResult
from x402.mcp.utils import extract_payment_required_from_result
from x402.schemas import PaymentRequired

from agents.a2a import extension as x
from billing.chain.localchain import DEMO_PAYER, dev_account
from billing.front import Brought, Refused, Sale, payment_brought, payment_choose
from billing.models import LedgerEntry, Payment
from billing.paid_call import paid_offer
from billing.x402.challenge import challenge_required
from catalog.models import Sku
from sessions_app.models import PrepaidSession
from sessions_app.services import session_create
from tests.support.marketdata import sentiment_market_write
from tests.support.payments import balance, balances, funded, payer_client
from tests.support.signin import required_static

SKU = "sentiment"
PRICE = 50_000  # 0.05 USDC
REST = "/api/a2a/x402/sentiment"
CHAT = "/api/a2a/agenthub/chat"
EXECUTE = "/api/a2a/marketplace/execute"
A2A = "/api/a2a/agenthub"
MCP_ACCEPT = "application/json, text/event-stream"
PAYER = dev_account(DEMO_PAYER).address.lower()


_OPEN: list[requests.Session] = []


@pytest.fixture
def http():
    session = requests.Session()
    _OPEN.append(session)
    yield session
    while _OPEN:  # keep-alive connections would hold live-server threads at shutdown
        _OPEN.pop().close()


def paying_session() -> requests.Session:
    """requests with the official x402 client: a 402 is paid and the request sent again."""
    session = wrapRequestsWithPayment(requests.Session(), payer_client())
    _OPEN.append(session)
    return session


def sign(required: PaymentRequired) -> dict[str, Any]:
    """The official client's PaymentPayload for these requirements, as JSON."""
    return (
        payer_client()
        .create_payment_payload(required)
        .model_dump(mode="json", by_alias=True, exclude_none=True)
    )


def signature_header(required: PaymentRequired) -> dict[str, str]:
    client = payer_client()
    return x402HTTPClientSync(client).encode_payment_signature_header(client.create_payment_payload(required))


def usdc_atomic(value: str | float) -> int:
    return round(float(value) * 1_000_000)


# --- each surface, paid by each rail it takes: (rail, atomic USDC charged, x402 transaction or
# credit balance after, as the surface's receipt tells it) -------------------------------------
def rest_x402(url: str, http: requests.Session) -> tuple[str, int, str]:
    resp = paying_session().get(url + REST, timeout=60)
    assert resp.status_code == 200 and resp.json()["assets"], resp.text
    settled = decode_payment_response_header(resp.headers["PAYMENT-RESPONSE"])
    return "x402", PRICE, settled.transaction


def rest_credits(url: str, http: requests.Session, key: str) -> tuple[str, int, int]:
    resp = http.get(url + REST, headers={"X-API-Key": key}, timeout=30)
    assert resp.status_code == 200 and resp.json()["assets"], resp.text
    return (
        "credits",
        usdc_atomic(resp.headers["X-Credit-Charged"]),
        usdc_atomic(resp.headers["X-Credit-Balance"]),
    )


def chat(url: str, http: requests.Session, headers: dict[str, str]) -> dict[str, Any]:
    resp = http.post(url + CHAT, json={"message": "market sentiment"}, headers=headers, timeout=60)
    assert resp.status_code == 200, resp.text
    body: dict[str, Any] = resp.json()
    assert body["intent"] == SKU and (body["result"] is not None) == bool(headers), body
    return body | {"_headers": dict(resp.headers)}


def chat_x402(url: str, http: requests.Session) -> tuple[str, int, str]:
    next_call = chat(url, http, {})["next_call"]  # unpaid: the exact call that buys it
    unpaid = http.get(next_call["x402"]["url"], timeout=30)
    assert unpaid.status_code == 402
    body = chat(
        url, http, signature_header(decode_payment_required_header(unpaid.headers["PAYMENT-REQUIRED"]))
    )
    charged = body["charged"]
    settled = decode_payment_response_header(body["_headers"]["PAYMENT-RESPONSE"])
    return charged["rail"], usdc_atomic(charged["amount_usdc"]), settled.transaction


def chat_credits(url: str, http: requests.Session, key: str) -> tuple[str, int, int]:
    charged = chat(url, http, {"X-API-Key": key})["charged"]
    return charged["rail"], usdc_atomic(charged["amount_usdc"]), usdc_atomic(charged["balance_usdc"])


def market_x402(url: str, http: requests.Session) -> tuple[str, int, str]:
    resp = paying_session().post(url + EXECUTE, json={"capability": SKU}, timeout=60)
    assert resp.status_code == 200 and resp.json()["result"]["assets"], resp.text
    return "x402", PRICE, decode_payment_response_header(resp.headers["PAYMENT-RESPONSE"]).transaction


def market_credits(url: str, http: requests.Session, key: str) -> tuple[str, int, int]:
    resp = http.post(url + EXECUTE, json={"capability": SKU}, headers={"X-API-Key": key}, timeout=30)
    assert resp.status_code == 200 and resp.json()["result"]["assets"], resp.text
    return (
        "credits",
        usdc_atomic(resp.headers["X-Credit-Charged"]),
        usdc_atomic(resp.headers["X-Credit-Balance"]),
    )


def mcp_call(
    url: str, http: requests.Session, *, key: str = "", meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": SKU, "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    headers = {"Accept": MCP_ACCEPT, "MCP-Protocol-Version": "2025-11-25", "Content-Type": "application/json"}
    if key:
        headers["X-API-Key"] = key
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    resp = http.post(url + "/mcp", data=json.dumps(body), headers=headers, timeout=60)
    assert resp.status_code == 200, resp.text
    result: dict[str, Any] = resp.json()["result"]
    return result


def mcp_x402(url: str, http: requests.Session) -> tuple[str, int, str]:
    unpaid = mcp_call(url, http)
    required = extract_payment_required_from_result(
        MCPToolResult(
            content=unpaid["content"], is_error=True, structured_content=unpaid["structuredContent"]
        )
    )
    assert required is not None and required.accepts[0].amount == str(PRICE)
    paid = mcp_call(url, http, meta={MCP_PAYMENT_META_KEY: sign(required)})
    assert paid["isError"] is False and paid["structuredContent"]["assets"], paid
    settlement, ours = paid["_meta"][MCP_PAYMENT_RESPONSE_META_KEY], paid["_meta"]["a2a/receipt"]
    assert ours["transaction"] == settlement["transaction"]
    return ours["rail"], PRICE, settlement["transaction"]


def mcp_credits(url: str, http: requests.Session, key: str) -> tuple[str, int, int]:
    paid = mcp_call(url, http, key=key)
    assert paid["isError"] is False and paid["structuredContent"]["assets"], paid
    receipt = paid["_meta"]["a2a/receipt"]
    return receipt["rail"], usdc_atomic(receipt["charged_usdc"]), usdc_atomic(receipt["balance_usdc"])


def a2a_send(url: str, http: requests.Session, message: dict[str, Any], key: str = "") -> dict[str, Any]:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", **message}
    body = {"jsonrpc": "2.0", "id": "1", "method": "SendMessage", "params": {"message": message}}
    resp = http.post(url + A2A, json=body, headers={"X-API-Key": key} if key else {}, timeout=60)
    assert resp.status_code == 200, resp.text
    task: dict[str, Any] = resp.json()["result"]["task"]
    return task


def a2a_x402(url: str, http: requests.Session) -> tuple[str, int, str]:
    asked = a2a_send(url, http, {"parts": [{"data": {"skill": SKU}}]})
    required = PaymentRequired.model_validate(asked["status"]["message"]["metadata"][x.REQUIRED])
    metadata = {x.STATUS: x.PAYMENT_SUBMITTED, x.PAYLOAD: sign(required)}
    done = a2a_send(url, http, {"taskId": asked["id"], "parts": [{"text": "paid"}], "metadata": metadata})
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    [receipt] = done["status"]["message"]["metadata"][x.RECEIPTS]
    return "x402", int(required.accepts[0].amount), receipt["transaction"]


def a2a_credits(url: str, http: requests.Session, key: str) -> tuple[str, int, int]:
    done = a2a_send(url, http, {"parts": [{"data": {"skill": SKU}}]}, key=key)
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    credits = done["status"]["message"]["metadata"]["credits"]
    return credits["rail"], usdc_atomic(credits["charged_usdc"]), usdc_atomic(credits["balance_usdc"])


X402_SURFACES = {
    "rest": rest_x402,
    "chat": chat_x402,
    "marketplace": market_x402,
    "mcp": mcp_x402,
    "a2a": a2a_x402,
}
CREDIT_SURFACES = {
    "rest": rest_credits,
    "chat": chat_credits,
    "marketplace": market_credits,
    "mcp": mcp_credits,
    "a2a": a2a_credits,
}


@pytest.mark.slow
def test_one_product_sold_through_every_surface_charges_the_same_by_each_rail(paid_stack, http):
    sentiment_market_write()
    url = paid_stack.url
    assert Sku.objects.get(sku=SKU).price_atomic == PRICE

    # x402 exact, the official client on the local chain: one settled Payment per call, its
    # transfer the price, and the surface's receipt names that transaction.
    chain_before = balances(paid_stack)
    x402 = {surface: pay(url, http) for surface, pay in X402_SURFACES.items()}
    assert {s: (rail, amount) for s, (rail, amount, _) in x402.items()} == dict.fromkeys(
        X402_SURFACES, ("x402", PRICE)
    )
    payments = {p.tx_hash: p for p in Payment.objects.all()}
    assert sorted(payments) == sorted(tx for _, _, tx in x402.values())  # one payment per call
    for tx, payment in payments.items():
        assert (payment.sku.sku, payment.amount_atomic, payment.payer) == (SKU, PRICE, PAYER)
        assert payment.state == Payment.State.SETTLED and payment.delivered_at is not None
        assert paid_stack.chain.w3.eth.get_transaction_receipt(tx)["status"] == 1
    payer_after, treasury_after = balances(paid_stack)
    n = len(X402_SURFACES)
    assert (chain_before[0] - payer_after, treasury_after - chain_before[1]) == (n * PRICE, n * PRICE)

    # Credits by X-API-Key: one ledger debit of the price per call; each receipt shows the
    # balance that debit left.
    key, account = funded(1.0)
    start = balance(account)
    credits = {surface: pay(url, http, key) for surface, pay in CREDIT_SURFACES.items()}
    assert {s: (rail, amount) for s, (rail, amount, _) in credits.items()} == dict.fromkeys(
        CREDIT_SURFACES, ("credits", PRICE)
    )
    assert [after for _, _, after in credits.values()] == [
        start - PRICE * (i + 1) for i in range(len(credits))
    ]
    debits = LedgerEntry.objects.filter(account=account, kind=LedgerEntry.Kind.SKU_CALL).order_by("id")
    assert [(d.sku.sku, d.amount_atomic) for d in debits] == [(SKU, -PRICE)] * len(credits)
    assert balance(account) == start - len(credits) * PRICE
    assert Payment.objects.count() == n and balances(paid_stack) == (payer_after, treasury_after)

    # A session token (the chat): one call of the pack used, nothing else charged.
    session = session_create(pack_sku=Sku.objects.get(sku="m2m_session_desk"), buyer="0x" + "5" * 40)
    body = chat(url, http, {"X-Session-Token": session.token})
    assert body["charged"] == {
        "rail": "session",
        "amount_usdc": None,
        "balance_usdc": None,
        "calls_remaining": session.calls_total - 1,
    }
    assert body["_headers"]["X-Session-Calls-Remaining"] == str(session.calls_total - 1)
    assert PrepaidSession.objects.get(pk=session.pk).calls_used == 1
    assert balance(account) == start - len(credits) * PRICE and Payment.objects.count() == n


def test_the_material_picks_the_rail_in_one_order_wherever_it_rides():
    everything = Brought(headers={"x-api-key": "k", "X-Session-Token": "t", "PAYMENT-SIGNATURE": "p"})
    assert payment_brought(everything, ("x402", "credits", "session")) == "x402"
    assert payment_brought(everything, ("credits", "session")) == "credits"
    assert payment_brought(Brought(headers={"X-Session-Token": "t"}), ("x402", "credits")) is None
    assert payment_brought(Brought(headers={"X-API-Key": "  "}), ("x402", "credits")) is None
    # A protocol that carries the proof in its metadata: a payment header there is not a proof.
    assert payment_brought(Brought(headers={"X-PAYMENT": "p"}, proof_in="metadata"), ("x402",)) is None
    assert payment_brought(Brought(x402_payload={}, proof_in="metadata"), ("x402", "credits")) == "x402"


@pytest.mark.django_db
def test_an_unpaid_call_gets_the_challenge_the_rest_402_shows(api):
    sentiment_market_write()
    rest = api.get(REST)
    assert rest.status_code == 402
    offer = paid_offer(product=SKU, params={}, base_url="http://testserver")
    sale = Sale(offer=offer, resource_url="http://testserver" + REST, accepts=("x402", "credits"))
    asked = payment_choose(brought=Brought(), sale=sale)
    assert isinstance(asked, Refused) and (asked.kind, asked.status, asked.code) == (
        "unpaid",
        402,
        "payment_required",
    )
    assert asked.challenge is not None and asked.challenge.price_atomic == PRICE
    shown = decode_payment_required_header(rest.headers["PAYMENT-REQUIRED"])
    # The same challenge, but for the sign-in fields drawn per 402 (nonce, issuedAt, expirationTime).
    assert required_static(challenge_required(asked.challenge, "payment_required")) == required_static(shown)
    # A refused key is a refusal with its status, not a rail; nothing was charged.
    refused = payment_choose(brought=Brought(headers={"X-API-Key": "a2a_nope"}), sale=sale)
    assert isinstance(refused, Refused) and (refused.kind, refused.status, refused.scheme) == (
        "refused",
        401,
        "credits",
    )
    assert refused.charged is False and refused.challenge is None
