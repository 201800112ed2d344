"""The catalog agents understand questions (agents/intent.py: intent table + entities from the
ingested markets) and answer them from the product's own teaser cut with the exact next call;
a message that brings payment buys the product. Numbers are checked against the products'
own output: the excerpt equals product_excerpt with the same params, a credits-paid chat
debits exactly the price and returns the content the product's route returns."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from agents.intent import extract, understand
from agents.models import AgentInteraction
from billing.credits import credit_add
from billing.models import Account, LedgerEntry
from catalog.models import CatalogAgent, Sku
from catalog.products.registry import product_get
from catalog.selectors.teasers import product_excerpt
from tests.support.marketdata import (
    book_write,
    equity_quote_write,
    funding_reading_write,
    ladder,
    market_write,
    prediction_market_write,
    sentiment_market_write,
    signals_shop_write,
)
from tests.support.wallets import register_wallet

pytestmark = pytest.mark.django_db

HUB = "/api/a2a/agenthub/chat"


def chat(api, message: str, path: str = HUB, **headers: str):
    return api.post(path, {"message": message}, format="json", **headers)


def vocabulary_write() -> None:
    """What the extractors read: BTC, ETH, SOL markets on binance and okx, NVDA's quote, a
    Kalshi and a Polymarket market."""
    for exchange in ("binance", "okx"):
        for symbol, price in (("BTC/USDT", 97_000.0), ("ETH/USDT", 3_000.0), ("SOL/USDT", 200.0)):
            market_write(exchange=exchange, symbol=symbol, bid=price - 1, ask=price + 1)
    equity_quote_write(symbol="NVDA", price=100.0)
    prediction_market_write(venue="kalshi", external_id="K1", question="Fed cut in March?", yes_price=0.4)
    prediction_market_write(venue="polymarket", external_id="P1", question="BTC over 100k?", yes_price=0.3)


# question -> (agent or None for the hub, expected SKU, expected params)
QUESTIONS: list[tuple[str, str | None, str, dict[str, Any]]] = [
    ("BTC regime?", None, "regime_gate", {}),
    ("cheapest venue to DCA 500 USDC into ETH", None, "dca_routing_desk", {"symbol": "ETH/USDT", "notional_usdc": 500.0}),
    ("DCA $2k into bitcoin over the next 10 days", None, "dca_routing_desk",
     {"symbol": "BTC/USDT", "notional_usdc": 2000.0, "days": 10}),
    ("what closes on Kalshi this week", None, "prediction_resolution_calendar", {"days": 7, "venue": "kalshi"}),
    ("which polymarket markets resolve in the next 3 days?", "prediction", "prediction_resolution_calendar",
     {"days": 3, "venue": "polymarket"}),
    ("news on NVDA", None, "equity_intel", {"ticker": "NVDA"}),
    ("news on nvidia", "equity-news", "equity_news_digest", {}),
    ("funding hedge for SOL", None, "funding_hedge_desk", {}),
    ("arb between binance and okx", None, "pair_arb_desk", {}),
    ("arb between kalshi and polymarket", None, "prediction_divergence_alerts", {}),
    ("grants for AI agents", "grant-scout", "grant_scout_desk", {}),
    ("sentiment on solana", "news", "sentiment", {"asset": "SOL"}),
    ("should I go long ETH with 5000 USDC? pre-trade checklist", None, "risk_decision_pack",
     {"symbol": "ETH/USDT", "side": "long", "notional_usdc": 5000.0}),
    ("high impact US events next 2 days", None, "calendar_risk", {"days": 2, "min_impact": "high", "country": "US"}),
    ("twap 25k USDC of SOL", None, "twap_preview", {"symbol": "SOL/USDT", "notional_usdc": 25000.0}),
    ("unlock news 42 full text", "news", "news_unlock", {"news_id": 42}),
    ("morning brief", "m2m-desk", "morning_brief", {}),
    ("BTC regime?", "m2m-desk", "risk_decision_pack", {"symbol": "BTC/USDT"}),
    ("top prediction markets today", "prediction", "prediction_top3_daily", {}),
    ("sec enforcement and regulation this week", "grant-scout", "tech_regulatory_digest", {}),
]  # fmt: skip


@pytest.mark.parametrize(("question", "slug", "sku", "params"), QUESTIONS)
def test_questions_are_understood_as_the_sku_and_its_params(question, slug, sku, params):
    vocabulary_write()
    agent = CatalogAgent.objects.get(slug=slug) if slug else None
    intent = understand(question, agent=agent)
    assert (intent.sku, intent.params, intent.missing) == (sku, params, [])
    assert intent.confidence > 0


def test_entities_from_the_ingested_data_and_the_words():
    vocabulary_write()
    assert extract("BTC and ether on okx vs binance, next 36 hours, top 5") == {
        "asset": "BTC",
        "symbol": "BTC/USDT",
        "assets": ["BTC", "ETH"],
        "venues": ["okx", "binance"],
        "days": 2,
        "limit": 5,
    }
    assert extract("$1.5m into SOL tomorrow on kalshi or polymarket") == {
        "amount_usdc": 1_500_000,
        "asset": "SOL",
        "symbol": "SOL/USDT",
        "days": 2,
        "prediction_venue": "kalshi",
        "prediction_venues": ["kalshi", "polymarket"],
    }
    # A symbol no market lists is no entity (FOO), a quote currency is a unit, not the asset.
    assert extract("FOO for 300 usdt") == {"amount_usdc": 300}


def test_invalid_params_say_what_is_missing():
    vocabulary_write()
    intent = understand("unlock the full text of a news article")
    assert intent.sku == "news_unlock" and intent.missing == ["news_id: Field required"]
    intent = understand("DCA 5 USDC into ETH every hour for a year, dca")
    assert intent.sku == "dca_routing_desk" and intent.params == {"symbol": "ETH/USDT", "notional_usdc": 5.0}


# --- replies -------------------------------------------------------------------------------------
def dca_market() -> None:
    """ETH/USDT books on binance (ask 100.00, fee 10 bps) and okx (ask 100.05, fee 1 bps)."""
    book_write(
        exchange="binance",
        symbol="ETH/USDT",
        bids=ladder(99.98, side="bid"),
        asks=ladder(100.0, side="ask", size=100),
    )
    book_write(exchange="okx", symbol="ETH/USDT", bids=ladder(100.03, side="bid"), asks=ladder(100.05, side="ask", size=100))  # fmt: skip


@pytest.fixture
def fees(settings):
    settings.EXCHANGE_TAKER_FEES = {"binance": 0.001, "okx": 0.0001}


def test_the_reply_quotes_the_products_own_excerpt_and_gives_the_exact_next_call(api, fees):
    dca_market()
    resp = chat(api, "cheapest venue to DCA 500 USDC into ETH")
    assert resp.status_code == 200
    body = resp.json()
    assert body["intent"] == "dca_routing_desk" and body["agent"] == "agenthub"
    assert body["entities"] == {"amount_usdc": 500, "asset": "ETH", "symbol": "ETH/USDT"}
    call = body["next_call"]
    assert call["params"] == {"symbol": "ETH/USDT", "notional_usdc": 500.0}
    assert (call["price_atomic"], call["price_usdc"], call["available"]) == (120_000, 0.12, True)
    url = "http://testserver/api/a2a/x402/trading/dca-routing-desk?symbol=ETH%2FUSDT&notional_usdc=500.0"
    assert call["x402"]["url"] == url and call["credits"][0]["url"] == url
    assert call["session"]["url"].endswith(
        "/api/a2a/session/call/dca_routing_desk?symbol=ETH%2FUSDT&notional_usdc=500.0"
    )
    # The excerpt is the teaser selector's, run with the question's params (rolled back) ...
    sku = Sku.objects.get(sku="dca_routing_desk")
    params = product_get("dca_routing_desk").params.model_validate(call["params"])
    excerpt, _ = product_excerpt(sku, teaser_name="", base="http://testserver", params=params)
    # ... less the decision it sells: the venues ranked and the recommendation.
    assert "recommended_venue" not in body["teaser"] and body["teaser"]["venues_count"] == 2
    for key in ("symbol", "notional_usdc", "buys", "interval_hours", "consolidated_mid", "schedule"):
        assert body["teaser"][key] == excerpt[key]
    assert body["teaser"]["buys"] == 30 and body["teaser"]["consolidated_mid"] == pytest.approx(
        (100.03 + 100.0) / 2
    )
    # Every figure quoted is the excerpt's.
    assert f"consolidated_mid={excerpt['consolidated_mid']}" in body["reply"]
    assert f"schedule[0].amount_atomic={excerpt['schedule'][0]['amount_atomic']}" in body["reply"]
    assert "okx" not in body["reply"] and "0.12 USDC" in body["reply"] and url in body["reply"]


def test_a_prediction_question_is_answered_with_the_calendar_filtered_to_its_venue_and_window(api):
    prediction_market_write(
        venue="kalshi",
        external_id="K-SOON",
        question="Fed cut this week?",
        yes_price=0.41,
        closes_in_hours=30,
    )
    prediction_market_write(
        venue="kalshi",
        external_id="K-LATE",
        question="Fed cut next year?",
        yes_price=0.2,
        closes_in_hours=24 * 20,
    )
    prediction_market_write(venue="polymarket", external_id="P-SOON", question="BTC 100k Friday?", yes_price=0.3,
                            closes_in_hours=40)  # fmt: skip
    body = chat(api, "what closes on Kalshi this week", path="/api/a2a/agents/prediction/chat").json()
    assert body["agent"] == "prediction" and body["intent"] == "prediction_resolution_calendar"
    assert body["next_call"]["x402"]["url"].endswith("/prediction/resolution-calendar?days=7&venue=kalshi")
    assert body["teaser"]["count"] == 1 and body["teaser"]["days"] == 7
    (market,) = body["teaser"]["markets"]
    assert (market["market_id"], market["yes_price"], market["hours_to_close"]) == ("K-SOON", 0.41, 30.0)
    assert "markets[0].market_id=K-SOON" in body["reply"] and "markets[0].yes_price=0.41" in body["reply"]


def test_a_symbol_question_narrows_the_excerpt_to_that_symbol(api):
    signals_shop_write()  # BTC, ETH rising; SOL falling; XRP in a band
    body = chat(api, "BTC regime?").json()
    assert body["intent"] == "regime_gate" and body["entities"]["symbol"] == "BTC/USDT"
    assert [r["symbol"] for r in body["teaser"]["symbols"]] == ["BTC/USDT"]
    # The same row as the product's own answer, bought at its route.
    reg = funded()
    full = api.get("/api/a2a/x402/risk/regime-gate", HTTP_X_API_KEY=reg.api_key).json()
    btc = next(r for r in full["symbols"] if r["symbol"] == "BTC/USDT")
    assert body["teaser"]["symbols"][0]["label"] == btc["label"]
    assert f"symbols[0].label={btc['label']}" in body["reply"]


def test_the_hub_says_which_agent_sells_each_sku_and_an_agent_offers_only_its_own(api):
    vocabulary_write()
    body = chat(api, "grants for AI agents").json()
    assert body["suggestions"][0]["sku"] == "grant_scout_desk" and body["suggestions"][0]["agents"] == [
        "grant-scout"
    ]
    assert "sold by grant-scout" in body["reply"]
    # grant-scout does not sell the regime gate: it says so and refers to the hub.
    body = chat(api, "BTC regime?", path="/api/a2a/agents/grant-scout/chat").json()
    assert body["intent"] is None and body["next_call"] is None
    assert "found nothing in my catalog" in body["reply"] and "regime_gate" in body["reply"]
    assert "/api/a2a/agenthub/chat" in body["reply"]
    assert [x["sku"] for x in body["suggestions"]] == ["regime_gate"]
    own = set(CatalogAgent.objects.get(slug="m2m-desk").skus.values_list("sku", flat=True))
    body = chat(api, "BTC regime?", path="/api/a2a/agents/m2m-desk/chat").json()
    assert body["intent"] == "risk_decision_pack" and {x["sku"] for x in body["suggestions"]} <= own


def test_an_unmatched_question_is_an_honest_not_found_with_suggestions(api):
    body = chat(api, "what is the weather in Paris").json()
    assert body["intent"] is None and body["next_call"] is None and body["teaser"] is None
    assert body["reply"].startswith("Agent hub: I found nothing in my catalog that answers this.")
    assert body["suggestions"] and all(x["price_usdc"] > 0 for x in body["suggestions"])
    assert "BTC regime?" in body["reply"]


def test_missing_params_are_said_not_guessed(api):
    body = chat(api, "unlock the full text of news 987654", path="/api/a2a/agents/news/chat").json()
    assert body["intent"] == "news_unlock" and body["next_call"] is None
    assert body["missing"] == ["news item 987654 does not exist"]
    assert "To answer I need: news item 987654 does not exist." in body["reply"]


def test_bad_bodies_are_422_and_unknown_agents_404_each_recorded(api):
    assert api.post(HUB, {"message": ""}, format="json").status_code == 422
    assert api.post(HUB, {"text": "hi"}, format="json").status_code == 422
    assert chat(api, "hi", path="/api/a2a/agents/nobody/chat").status_code == 404
    assert chat(api, "hi", path="/api/a2a/agents/nobody").status_code == 404
    assert api.post(HUB, {"message": "hi", "agent": "nobody"}, format="json").status_code == 404
    chat(api, "grants for AI agents", path="/api/a2a/agents/grant-scout")
    rows = list(
        AgentInteraction.objects.filter(surface="chat")
        .order_by("id")
        .values_list("agent", "skill", "status_code")
    )
    assert rows == [
        ("agenthub", "", 422), ("agenthub", "", 422), ("nobody", "", 404), ("nobody", "", 404),
        ("agenthub", "", 404), ("grant-scout", "grant_scout_desk", 200),
    ]  # fmt: skip


# --- paid -------------------------------------------------------------------------------------------
def funded(amount: int = 5_000_000):
    reg = register_wallet()
    credit_add(
        account_id=reg.account.id, amount_atomic=amount, kind=LedgerEntry.Kind.ADJUSTMENT, reason="test"
    )
    return reg


def balance(reg) -> int:
    return Account.objects.get(pk=reg.account.pk).credit_balance_atomic


def test_a_credits_paid_chat_debits_exactly_the_price_and_returns_the_products_content(api, fees):
    dca_market()
    reg = funded()
    before, entries = balance(reg), LedgerEntry.objects.count()
    resp = chat(api, "cheapest venue to DCA 500 USDC into ETH", HTTP_X_API_KEY=reg.api_key)
    assert resp.status_code == 200, resp.json()
    body = resp.json()
    assert before - balance(reg) == 120_000 and LedgerEntry.objects.count() == entries + 1
    assert body["charged"] == {
        "rail": "credits",
        "amount_usdc": 0.12,
        "balance_usdc": 4.88,
        "calls_remaining": None,
    }
    assert resp["X-Credit-Charged"] == "0.12"
    result = body["result"]
    # The product's own answer: okx is cheaper after fees (100.05 x 1.0001 < 100.00 x 1.001).
    assert result["recommended_venue"] == "okx" and result["notional_usdc"] == 500.0 and result["buys"] == 30
    direct = api.get(body["next_call"]["x402"]["url"], HTTP_X_API_KEY=reg.api_key).json()
    assert [(v["venue"], v["all_in_cost_bps"]) for v in result["venues"]] == [
        (v["venue"], v["all_in_cost_bps"]) for v in direct["venues"]
    ]
    assert result["est_total_cost_usdc"] == direct["est_total_cost_usdc"]
    assert before - balance(reg) == 240_000  # the direct call paid once more, nothing else
    assert "Paid by credits (0.12 USDC)" in body["reply"] and "recommended_venue=okx" in body["reply"]
    row = AgentInteraction.objects.filter(surface="chat").latest("id")
    assert (row.agent, row.skill, row.status_code) == ("agenthub", "dca_routing_desk", 200)


def test_paying_for_nothing_charges_nothing(api):
    reg = funded()
    before = balance(reg)
    # Not understood, or a param refused: no product runs, nothing is charged.
    assert chat(api, "what is the weather", HTTP_X_API_KEY=reg.api_key).json()["charged"] is None
    assert chat(api, "unlock news 987654", HTTP_X_API_KEY=reg.api_key).json()["charged"] is None
    # The product has nothing fresh: 503 uncharged.
    resp = chat(api, "cheapest venue to DCA 500 USDC into ETH", HTTP_X_API_KEY=reg.api_key)
    assert resp.status_code == 503 and resp.json()["charged"] is False and balance(reg) == before
    # An unknown key is a 401, a poor account a 402 with how to top up.
    assert chat(api, "grants for AI agents", HTTP_X_API_KEY="nope").status_code == 401
    poor = funded(amount=10_000)
    sentiment_market_write()
    resp = chat(api, "sentiment on solana", HTTP_X_API_KEY=poor.api_key)
    assert resp.status_code == 402 and balance(poor) == 10_000


def test_a_session_paid_chat_uses_one_call(api, fees):
    from sessions_app.services import session_create

    dca_market()
    session = session_create(pack_sku=Sku.objects.get(sku="m2m_session_desk"), buyer="0x" + "5" * 40)
    resp = chat(api, "DCA 500 USDC into ETH", HTTP_X_SESSION_TOKEN=session.token)
    assert resp.status_code == 200, resp.json()
    body = resp.json()
    assert (
        body["charged"]["rail"] == "session" and body["charged"]["calls_remaining"] == session.calls_total - 1
    )
    assert body["result"]["recommended_venue"] == "okx" and resp["X-Session-Calls-Remaining"] == str(
        session.calls_total - 1
    )


# --- the optional model -------------------------------------------------------------------------------
class FakeModel:
    """An OpenAI-compatible /chat/completions on loopback answering `answer` (or failing)."""

    def __init__(self, answer: str | None, status: int = 200) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.requests.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"), "json": json.loads(body)}
                )
                data = json.dumps(
                    {"choices": [{"message": {"role": "assistant", "content": answer}}]}
                ).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def model(settings):
    made: list[FakeModel] = []

    def start(answer: str | None, status: int = 200) -> FakeModel:
        fake = FakeModel(answer, status)
        made.append(fake)
        settings.CHAT_LLM_URL, settings.CHAT_LLM_API_KEY, settings.CHAT_LLM_MODEL = (
            fake.url,
            "sk-test",
            "tiny",
        )
        return fake

    yield start
    for fake in made:
        fake.close()


def grants() -> None:
    from tests.support.marketdata import digests_market_write

    digests_market_write()


def test_the_model_may_reword_the_reply_but_never_add_a_number(api, model, settings):
    grants()
    plain = chat(api, "grants for AI agents").json()["reply"]  # no model configured yet
    fake = model("Two grant programs are open; the nearest deadline is in 3.0 days. Pay 0.06 USDC for all.")
    body = chat(api, "grants for AI agents").json()
    assert (
        body["reply"]
        == "Two grant programs are open; the nearest deadline is in 3.0 days. Pay 0.06 USDC for all."
    )
    (sent,) = fake.requests
    assert sent["path"] == "/v1/chat/completions" and sent["auth"] == "Bearer sk-test"
    assert sent["json"]["model"] == "tiny" and sent["json"]["temperature"] == 0
    facts = json.loads(sent["json"]["messages"][1]["content"])
    assert facts["question"] == "grants for AI agents" and facts["facts"] == body["teaser"]
    # A number the deterministic reply does not carry: the deterministic reply. (Not a number a
    # timestamp in the facts could hold, such as a minute: "42" was one at 03:42.)
    model("Five grant programs are open, 777.77 USDC for agents.")
    assert chat(api, "grants for AI agents").json()["reply"] == plain
    # An error status, or nobody listening: the deterministic reply.
    model("whatever", status=500)
    assert chat(api, "grants for AI agents").json()["reply"] == plain
    settings.CHAT_LLM_URL = "http://127.0.0.1:9/v1"
    assert chat(api, "grants for AI agents").json()["reply"] == plain


@pytest.mark.slow
def test_an_x402_proof_for_the_next_call_pays_in_chat(paid_stack):
    """The official x402 client signs the requirements of the next call's URL (its 402); the
    same proof sent with the chat message buys the answer once, settled on the local chain."""
    import requests
    from x402 import x402ClientSync
    from x402.http import x402HTTPClientSync
    from x402.http.utils import decode_payment_required_header, decode_payment_response_header
    from x402.mechanisms.evm.exact.register import register_exact_evm_client

    from billing.chain.localchain import DEMO_PAYER, dev_account
    from billing.models import Payment

    grants()
    url = paid_stack.url + HUB
    answer = requests.post(url, json={"message": "grants for AI agents"}, timeout=30).json()
    call = answer["next_call"]
    assert answer["charged"] is None and call["price_atomic"] == 60_000
    unpaid = requests.get(call["x402"]["url"], timeout=30)
    assert unpaid.status_code == 402
    required = decode_payment_required_header(unpaid.headers["PAYMENT-REQUIRED"])
    client = register_exact_evm_client(x402ClientSync(), dev_account(DEMO_PAYER))
    headers = x402HTTPClientSync(client).encode_payment_signature_header(
        client.create_payment_payload(required)
    )
    paid = requests.post(url, json={"message": "grants for AI agents"}, headers=headers, timeout=60)
    assert paid.status_code == 200, paid.text
    body = paid.json()
    assert body["charged"] == {
        "rail": "x402",
        "amount_usdc": 0.06,
        "balance_usdc": None,
        "calls_remaining": None,
    }
    assert decode_payment_response_header(paid.headers["PAYMENT-RESPONSE"]).success
    assert [p["title"] for p in body["result"]["programs"]] == [
        "Data availability research",
        "Agent tooling grants",
        "Rolling oracle fund",
    ]
    payment = Payment.objects.get()
    assert (payment.sku.sku, payment.amount_atomic, payment.state) == (
        "grant_scout_desk",
        60_000,
        Payment.State.SETTLED,
    )
    # The proof paid once: sent again, it collects nothing new and charges nothing more.
    again = requests.post(url, json={"message": "grants for AI agents"}, headers=headers, timeout=60)
    assert Payment.objects.count() == 1 and again.status_code in (200, 402)


def test_funding_and_arb_excerpts_keep_only_the_asked_asset_and_venues(api, settings):
    settings.EXCHANGE_TAKER_FEES = {"binance": 0.001, "okx": 0.001, "bybit": 0.001}
    funding_reading_write(exchange="binance", symbol="SOL/USDT:USDT", rate=0.0003, mark=200)
    funding_reading_write(exchange="binance", symbol="BTC/USDT:USDT", rate=0.0001, mark=97_000)
    body = chat(api, "funding hedge for SOL").json()
    assert body["intent"] == "funding_hedge_desk" and body["entities"]["asset"] == "SOL"
    (row,) = body["teaser"]["cash_and_carry"]
    reg = funded()
    full = api.get("/api/a2a/x402/trading/funding-hedge-desk", HTTP_X_API_KEY=reg.api_key).json()
    assert {r["perp"] for r in full["cash_and_carry"]} == {"SOL/USDT:USDT", "BTC/USDT:USDT"}
    sol = next(r for r in full["cash_and_carry"] if r["perp"] == "SOL/USDT:USDT")
    assert (row["perp"], row["rate"], row["annualized_pct"]) == (
        "SOL/USDT:USDT",
        0.0003,
        sol["annualized_pct"],
    )
    assert sol["annualized_pct"] == pytest.approx(0.0003 * 3 * 365 * 100, rel=1e-3)
    assert f"cash_and_carry[0].annualized_pct={sol['annualized_pct']}" in body["reply"]
    # ETH/USDT 60 bps apart on binance and okx, BTC/USDT 50 bps apart on binance and bybit.
    for exchange, shift in (("binance", 0.0), ("okx", 0.006), ("bybit", 0.005)):
        symbol = "BTC/USDT" if exchange == "bybit" else "ETH/USDT"
        book_write(exchange=exchange, symbol=symbol, bids=ladder(99.99 * (1 + shift), side="bid", levels=5, size=10),
                   asks=ladder(100.0 * (1 + shift), side="ask", levels=5, size=10))  # fmt: skip
    book_write(exchange="binance", symbol="BTC/USDT", bids=ladder(99.99, side="bid", levels=5, size=10),
               asks=ladder(100.0, side="ask", levels=5, size=10))  # fmt: skip
    body = chat(api, "arb between binance and okx").json()
    assert body["intent"] == "pair_arb_desk" and body["entities"]["venues"] == ["binance", "okx"]
    full = api.get("/api/a2a/x402/trading/pair-arb-desk", HTTP_X_API_KEY=reg.api_key).json()
    assert {(r["buy_venue"], r["sell_venue"]) for r in full["cross_venue"]} == {
        ("binance", "okx"),
        ("binance", "bybit"),
    }
    (row,) = body["teaser"]["cross_venue"]
    eth = next(r for r in full["cross_venue"] if r["sell_venue"] == "okx")
    assert (row["symbol"], row["net_bps"], row["gross_bps"]) == ("ETH/USDT", eth["net_bps"], eth["gross_bps"])


def test_the_intent_table_names_only_registered_products_with_valid_param_sources():
    from agents.intent import FIELD_SOURCES, INTENTS
    from catalog.products.registry import spec_get

    assert len({r.sku for r in INTENTS}) == len(INTENTS)
    for rule in INTENTS:
        spec = spec_get(rule.sku)
        assert spec is not None, rule.sku
        fields = set(spec.params.model_fields) if spec.params else set()
        assert set(rule.fields) <= fields, rule.sku
    assert set(FIELD_SOURCES.values()) <= {
        "symbol", "amount_usdc", "days", "prediction_venue", "side", "asset", "ticker", "limit", "news_id",
        "impact", "country", "chain", "stablecoin",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("words", "days"),
    [("today", 1), ("tomorrow", 2), ("this week", 7), ("next week", 14), ("in 48 hours", 2), ("over the next 2 weeks", 14),
     ("this month", 30), ("within 5 days", 5), ("in the next 12 hours", 1), ("over 30 hours", 2)],
)  # fmt: skip
def test_time_windows(words, days):
    assert extract(f"what resolves {words}")["days"] == days


def test_the_hub_scoped_to_an_agent_by_the_body(api):
    vocabulary_write()
    body = api.post(HUB, {"message": "BTC regime?", "agent": "m2m-desk"}, format="json").json()
    assert body["agent"] == "m2m-desk" and body["intent"] == "risk_decision_pack"
    assert body["next_call"]["params"] == {"symbol": "BTC/USDT"}
    assert AgentInteraction.objects.filter(surface="chat").latest("id").agent == "m2m-desk"


def test_every_number_in_a_reply_comes_from_the_excerpt_the_call_or_the_question(api, fees):
    import re

    signals_shop_write()
    dca_market()
    funding_reading_write(exchange="binance", symbol="SOL/USDT:USDT", rate=0.0003, mark=200)
    prediction_market_write(
        venue="kalshi", external_id="K-SOON", question="Fed cut?", yes_price=0.41, closes_in_hours=30
    )
    number = re.compile(r"\d+(?:\.\d+)?")
    for question in (
        "BTC regime?",
        "cheapest venue to DCA 500 USDC into ETH",
        "what closes on Kalshi this week",
        "funding hedge for SOL",
        "ETH signals",
    ):
        body = chat(api, question).json()
        assert body["teaser"], question
        sources = json.dumps([body["teaser"], body["next_call"], body["entities"], question])
        allowed = set(number.findall(sources))
        # List positions in the quoted paths (markets[0].yes_price) are not figures.
        quoted = set(number.findall(re.sub(r"\[\d+\]", "", body["reply"])))
        assert quoted <= allowed, (question, quoted - allowed)
