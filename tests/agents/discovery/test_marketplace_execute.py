"""POST /api/a2a/marketplace/execute runs all nine capabilities: the five free ones give the
same document as their own free route; the four paid ones are paid like their SKU's routes —
with credits (one exact debit, one ledger row) or with x402 on the local chain through the
official client (402 with requirements unpaid; paid: 200 with the product, the payer's USDC
down by the price; the same proof again refused)."""

from __future__ import annotations

import pytest
import requests
from eth_account import Account as EthAccount

from agents.discovery.marketplace import MARKETPLACE_CAPABILITIES
from billing.credits import credit_add
from billing.models import Account, LedgerEntry, Payment
from catalog.models import NewsItem, Sku, TelemetryNode
from tests.support.marketdata import market_write, news_write, sentiment_market_write, tokenized_market_write
from tests.support.wallets import register_over_http

EXECUTE = "/api/a2a/marketplace/execute"

FREE_ROUTES = {
    "telemetry_status": "/api/a2a/telemetry/status",
    "news_catalog": "/api/a2a/news/catalog",
    "exchange_market_discovery": "/api/a2a/exchange/markets",
    "tokenized_watchlist": "/api/a2a/tokenized/watchlist",
    "market_agent_news": "/api/a2a/market-agents/news",
}


def test_the_nine_capabilities_are_the_documented_ones():
    assert set(MARKETPLACE_CAPABILITIES) == {
        "telemetry_status",
        "sentiment",
        "signals",
        "news_catalog",
        "intel_latest",
        "exchange_market_discovery",
        "tokenized_watchlist",
        "tokenized_premium_digest",
        "market_agent_news",
    }
    assert {k for k, v in MARKETPLACE_CAPABILITIES.items() if v is None} == set(FREE_ROUTES)


@pytest.mark.django_db
def test_free_capabilities_answer_their_free_routes_documents(api):
    TelemetryNode.objects.create(node_id="n1", region="eu", country="DE", latency_ms=12.0, online=True)
    TelemetryNode.objects.create(node_id="n2", region="us", country="US", latency_ms=30.0, online=True)
    news_write(title="Bitcoin ETF inflows hit a record", tickers=["BTC"])
    item = news_write(title="Fed holds rates", category="macro", hours_ago=2)
    NewsItem.objects.filter(pk=item.pk).update(market_group="macro-rates")
    market_write(exchange="binance", symbol="BTC/USDT", bid=99_990.0, ask=100_010.0)
    tokenized_market_write()
    results = {}
    for capability, route in FREE_ROUTES.items():
        resp = api.post(EXECUTE, {"capability": capability}, format="json")
        assert resp.status_code == 200, (capability, resp.content)
        body = resp.json()
        assert body["capability"] == capability
        assert body["result"] == api.get(route).json(), capability
        results[capability] = body["result"]
    telemetry = results["telemetry_status"]
    assert (telemetry["nodes_total"], telemetry["nodes_online"], telemetry["median_latency_ms"]) == (
        2,
        2,
        21.0,
    )
    assert [n["title"] for n in results["news_catalog"]["items"]] == [
        "Fed holds rates",
        "Bitcoin ETF inflows hit a record",
    ]
    markets = {(m["exchange"], m["symbol"]): m for m in results["exchange_market_discovery"]["markets"]}
    assert markets[("binance", "BTC/USDT")]["last_price"] == 100_000.0 and len(markets) == 4
    assert {a["symbol"] for a in results["tokenized_watchlist"]["watchlist"]} == {"AAPLX", "TSLAX", "PAXG"}
    assert results["market_agent_news"]["groups"] == {"macro-rates": 1}


@pytest.mark.django_db
def test_credits_path_is_one_exact_debit_and_one_ledger_row(api):
    sentiment_market_write()
    wallet = EthAccount.create()
    key = register_over_http(api, wallet).json()["api_key"]
    account = Account.objects.get(wallet_address=wallet.address.lower())
    credit_add(
        account_id=account.id, amount_atomic=5_000_000, kind=LedgerEntry.Kind.ADJUSTMENT, reason="test"
    )
    price = Sku.objects.get(sku="sentiment").price_atomic
    rows_before = LedgerEntry.objects.filter(account=account).count()
    resp = api.post(EXECUTE, {"capability": "sentiment"}, format="json", HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    assert resp.json()["result"]["assets"]
    account.refresh_from_db()
    assert account.credit_balance_atomic == 5_000_000 - price
    row = LedgerEntry.objects.filter(account=account).order_by("-id").first()
    assert LedgerEntry.objects.filter(account=account).count() == rows_before + 1
    assert (row.kind, row.amount_atomic, row.sku.sku, row.balance_after_atomic) == (
        LedgerEntry.Kind.SKU_CALL,
        -price,
        "sentiment",
        5_000_000 - price,
    )
    # A call that cannot deliver (bad params) charges nothing and writes no row.
    resp = api.post(
        EXECUTE, {"capability": "sentiment", "params": {"limit": 0}}, format="json", HTTP_X_API_KEY=key
    )
    assert resp.status_code == 422
    assert LedgerEntry.objects.filter(account=account).count() == rows_before + 1


# --- x402 on the local chain ---------------------------------------------------------------
@pytest.mark.slow
def test_x402_path_pays_on_chain_and_refuses_a_replayed_proof(paid_stack):
    from x402 import x402ClientSync
    from x402.http.clients import wrapRequestsWithPayment
    from x402.http.utils import decode_payment_required_header, decode_payment_response_header
    from x402.mechanisms.evm.exact.register import register_exact_evm_client

    from billing.chain.localchain import DEMO_PAYER, dev_account

    sentiment_market_write()
    url = paid_stack.url + EXECUTE
    price = Sku.objects.get(sku="sentiment").price_atomic
    token = paid_stack.chain.token
    payer = dev_account(DEMO_PAYER).address

    unpaid = requests.post(url, json={"capability": "sentiment"}, timeout=10)
    assert unpaid.status_code == 402
    required = decode_payment_required_header(unpaid.headers["PAYMENT-REQUIRED"])
    req = required.accepts[0]
    assert (req.scheme, req.network, req.amount, req.pay_to) == (
        "exact",
        "eip155:8453",
        str(price),
        paid_stack.treasury,
    )
    assert unpaid.json()["accepts"][0]["maxAmountRequired"] == str(price)

    before_payer = token.functions.balanceOf(payer).call()
    before_treasury = token.functions.balanceOf(paid_stack.treasury).call()
    sent: list[dict[str, str]] = []
    session = wrapRequestsWithPayment(
        requests.Session(), register_exact_evm_client(x402ClientSync(), dev_account(DEMO_PAYER))
    )
    session.hooks["response"].append(lambda r, *a, **k: sent.append(dict(r.request.headers)))
    try:
        paid = session.post(url, json={"capability": "sentiment"}, timeout=30)
    finally:
        session.close()
    assert paid.status_code == 200, paid.text
    body = paid.json()
    assert body["capability"] == "sentiment"
    assert body["result"]["assets"] and all(isinstance(a["score"], float) for a in body["result"]["assets"])
    settled = decode_payment_response_header(paid.headers["PAYMENT-RESPONSE"])
    assert (
        settled.success
        and paid_stack.chain.w3.eth.get_transaction_receipt(settled.transaction)["status"] == 1
    )
    assert before_payer - token.functions.balanceOf(payer).call() == price
    assert token.functions.balanceOf(paid_stack.treasury).call() - before_treasury == price
    payment = Payment.objects.get()
    assert payment.amount_atomic == price and payment.tx_hash == settled.transaction

    proof = next(h["PAYMENT-SIGNATURE"] for h in sent if "PAYMENT-SIGNATURE" in h)
    replay = requests.post(
        url, json={"capability": "sentiment"}, headers={"PAYMENT-SIGNATURE": proof}, timeout=30
    )
    assert replay.status_code == 402, replay.text
    assert replay.json()["error"] == "invalid_exact_evm_nonce_already_used"
    assert before_payer - token.functions.balanceOf(payer).call() == price  # charged once
    assert Payment.objects.filter(state=Payment.State.SETTLED).count() == 1
