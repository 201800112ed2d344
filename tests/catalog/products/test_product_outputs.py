"""Typed answers: every built product declares its output model, and its real answer, bought
with credits on its paid path, validates against that model (and against the schema the
OpenAPI document publishes for the path)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone
from eth_account import Account as EthAccount
from pydantic import BaseModel

from billing.bounties.models import Bounty
from billing.chain.localchain import DEMO_PAYER, dev_account
from billing.credits import credit_add
from billing.models import Account, LedgerEntry
from catalog.models import EditorialPiece, NewsItem, Sku, TelemetryNode
from catalog.products.registry import ProductSpec, product_get, products_built, specs_all
from catalog.services import catalog_seed
from tests.support.federation import federation_data
from tests.support.marketdata import (
    brief_market_write,
    desks_market_write,
    digests_market_write,
    execution_market_write,
    fee_history_write,
    mev_market_write,
    prediction_graph_write,
    prediction_shop_write,
    sentiment_market_write,
    signals_shop_write,
    tokenized_candles_write,
    tokenized_market_write,
)
from tests.support.wallets import register_over_http

pytestmark = pytest.mark.django_db


def test_every_built_product_declares_its_output_model():
    built = [s for s in specs_all() if s.built]
    assert len(built) >= 14
    missing = [s.sku for s in built if s.output is None]
    assert missing == []
    for spec in built:
        assert spec.output is not None and issubclass(spec.output, BaseModel)
        # The model publishes as a JSON schema (the MCP outputSchema, the OpenAPI 200 answer).
        assert spec.output.model_json_schema()["type"] == "object"


@pytest.fixture
def shop(api, chain, settings) -> tuple[str, Account, dict[str, Any]]:
    """A seeded shop with data for every built product, and a funded credit account."""
    catalog_seed()
    now = timezone.now()
    news = NewsItem.objects.create(
        title="Rates hold",
        teaser="The central bank held rates.",
        body="Full text of the decision and the market's reaction.",
        category="general",
        source="test-wire",
        url="https://example.com/rates",
        price_atomic=180_000,
    )
    NewsItem.objects.create(
        title="Earnings beat",
        teaser="A large index member beat estimates.",
        body="Full text.",
        category="equity",
        source="test-wire",
        url="https://example.com/earnings",
        price_atomic=180_000,
    )
    for kind in EditorialPiece.Kind.values:
        EditorialPiece.objects.create(
            kind=kind, title=f"{kind} title", summary="summary", body="the body in full", published_at=now
        )
    TelemetryNode.objects.create(node_id="n1", region="eu", country="DE", latency_ms=12.0, online=True)
    TelemetryNode.objects.create(node_id="n2", region="us", country="US", latency_ms=None, online=False)
    federation_data(prices=False)
    tokenized_market_write()  # tokenized_premium, tokenized_session_desk
    tokenized_candles_write()  # tokenized_signals, tokenized_scalp
    fee_history_write(), mev_market_write()  # mev_exec_hint_pack
    sentiment_market_write()
    desks_market_write()  # grid range desk, broker scalp desk, risk decision pack (BTC/USDT)
    execution_params = execution_market_write()
    prediction_shop_write()  # prediction divergence alerts, top 3 daily, resolution calendar
    signals_shop_write()  # candles, one analytics pass: signals, regime, desk signals, intel snapshots
    prediction_graph_write()  # prediction event graph, starter bundle, partner-feed teaser
    brief_market_write()  # calendar (macro gate, calendar risk), movers, news, a prediction move
    digests_market_write()  # market groups, regulatory, weekly and grant scout digests
    Bounty.objects.create(title="BTC spread", kind="spread_snapshot", reward_atomic=500_000)  # bounties
    settings.CHAIN_RPC_URL = chain.url  # txgen_transaction estimates its gas on the local chain
    txgen = {"prompt": "wrap 0.1 ETH", "address": dev_account(DEMO_PAYER).address}
    wallet = EthAccount.create()
    key = register_over_http(api, wallet).json()["api_key"]
    account = Account.objects.get(wallet_address=wallet.address.lower())
    credit_add(
        account_id=account.id, amount_atomic=50_000_000, kind=LedgerEntry.Kind.ADJUSTMENT, reason="test"
    )
    return key, account, {"news_unlock": {"news_id": news.id}, "txgen_transaction": txgen, **execution_params}


def test_every_built_product_answers_its_output_model(api, shop):
    key, account, params = shop
    schema = api.get("/api/a2a/openapi.json").json()
    checked = []
    for sku in sorted(products_built()):
        spec = product_get(sku)
        assert isinstance(spec, ProductSpec) and spec.output is not None
        row = Sku.objects.get(sku=sku)
        before = Account.objects.get(pk=account.pk).credit_balance_atomic
        resp = api.get(spec.full_path, params.get(sku, {}), HTTP_X_API_KEY=key)
        assert resp.status_code == 200, (sku, resp.content)
        answer = spec.output.model_validate(resp.json())
        # Nothing more, nothing less than the model says.
        assert answer.model_dump(mode="json") == resp.json(), sku
        after = Account.objects.get(pk=account.pk).credit_balance_atomic
        price = 180_000 if sku == "news_unlock" else row.price_atomic
        assert before - after == price, sku
        documented = schema["paths"][spec.full_path]["get"]["responses"]["200"]["content"]["application/json"]
        ref = documented["schema"]["$ref"].rsplit("/", 1)[-1]
        assert set(schema["components"]["schemas"][ref]["properties"]) == set(spec.output.model_fields), sku
        checked.append(sku)
    assert len(checked) == len(products_built())
