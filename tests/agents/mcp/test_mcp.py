"""The MCP server at /mcp: tools/list names every product on sale (and the free catalogs) with
their schemas, the MCP catalog document is the same list, free tools answer what their REST
routes answer, and paid tools are paid like the SKU's routes: credits (one debit of exactly the
price), x402 in _meta (x402's MCP transport, settled on the local chain, replay refused), the
managed MCP pack's allowance, or an error carrying the REST 402's requirements."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import httpx2
import pytest
import requests
from django.db import connections
from django.utils import timezone
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from x402 import x402Client
from x402.http.utils import decode_payment_required_header, encode_payment_signature_header
from x402.mcp import MCP_PAYMENT_META_KEY, MCP_PAYMENT_RESPONSE_META_KEY, x402MCPSession
from x402.mcp.types import MCPToolResult
from x402.mcp.utils import extract_payment_required_from_result
from x402.mechanisms.evm.exact.register import register_exact_evm_client

from agents.mcp.managed import ManagedCallRail
from agents.mcp.services import mcp_allowance_grant
from agents.mcp.tools import EMPTY_OBJECT, FREE_TOOL_ROUTES
from agents.models import AgentInteraction, McpAllowance, McpAllowanceCall
from billing.chain.localchain import DEMO_PAYER, dev_account
from billing.credits import credit_add, ledger_audit
from billing.models import LedgerEntry, Payment
from billing.paid_call import paid_call
from catalog.models import EditorialPiece, NewsItem, Sku
from catalog.products.registry import product_get
from catalog.selectors.skus import live_skus
from tests.support.mcp_rpc import ACCEPT, STATUS_SKU, call, rpc
from tests.support.payments import balance, balances, funded, payer_client
from tests.support.wallets import register_wallet

STATUS_PRICE = 10_000
PACK_PRICE = 500_000


def sku_calls() -> list[LedgerEntry]:
    return list(LedgerEntry.objects.filter(kind=LedgerEntry.Kind.SKU_CALL))


def publish_brief() -> None:
    EditorialPiece.objects.create(
        kind="morning_brief", title="Brief", summary="s", body="full brief", published_at=timezone.now()
    )


# --- tools/list and the catalog ---------------------------------------------------------------
@pytest.mark.django_db
def test_tools_list_has_every_live_sku_with_its_schemas_and_the_free_tools(api):
    tools = {t["name"]: t for t in rpc(api, "tools/list")["tools"]}
    live = {x.sku: x for x in live_skus()}
    assert len(live) >= 40 and set(tools) == set(live) | set(FREE_TOOL_ROUTES)
    assert len(tools) == len(live) + 7
    for name, sku in live.items():
        product = product_get(name)
        assert product is not None and product.output is not None
        tool = tools[name]
        expected_input = product.params.model_json_schema() if product.params else EMPTY_OBJECT
        assert tool["inputSchema"] == expected_input, name
        assert tool["outputSchema"] == product.output.model_json_schema(), name
        assert f"{sku.price_usdc:g} USDC per call" in tool["description"]
        assert sku.headline in tool["description"] and "x402/payment" in tool["description"]
    assert tools["news_unlock"]["inputSchema"]["required"] == ["news_id"]
    assert tools["news_catalog"]["inputSchema"]["properties"]["limit"]["maximum"] >= 40
    assert tools["regime"]["description"] == "Current market regime (free)."


@pytest.mark.django_db
def test_the_mcp_catalog_is_the_tools_list(api):
    tools = rpc(api, "tools/list")["tools"]
    catalog = api.get("/api/a2a/mcp/catalog").json()
    assert catalog["endpoint"] == "http://testserver/mcp" and catalog["count"] == len(tools)
    assert [t["name"] for t in catalog["tools"]] == [t["name"] for t in tools]
    prices = {x.sku: x.price_usdc for x in live_skus()}
    for listed, tool in zip(catalog["tools"], tools, strict=True):
        assert listed["description"] == tool["description"]
        assert listed["inputSchema"] == tool["inputSchema"]
        assert listed["outputSchema"] == tool.get("outputSchema")
        assert listed["paid"] == (tool["name"] in prices)
        assert listed["price_usdc"] == prices.get(tool["name"])
    # A price staff change shows in both at once.
    Sku.objects.filter(sku="news_unlock").update(price_atomic=130_000)
    (tool,) = [t for t in rpc(api, "tools/list")["tools"] if t["name"] == "news_unlock"]
    (listed,) = [t for t in api.get("/api/a2a/mcp/catalog").json()["tools"] if t["name"] == "news_unlock"]
    assert "0.13 USDC per call" in tool["description"] and listed["price_usdc"] == 0.13
    assert listed["description"] == tool["description"]


# --- free tools -------------------------------------------------------------------------------
@pytest.mark.django_db
def test_free_tools_answer_what_their_rest_routes_answer(api):
    for i in range(3):
        NewsItem.objects.create(title=f"t{i}", teaser="teaser", body="body", category="crypto")
    for name, arguments, query in (
        ("regime", {}, {}),
        ("strategies", {}, {}),
        ("news_catalog", {"limit": 2, "category": "crypto"}, {"limit": 2, "category": "crypto"}),
        ("news_catalog", {}, {}),
        ("exchange_market_discovery", {}, {}),
        ("tokenized_watchlist", {}, {}),
        ("market_agent_news", {"limit": 5}, {"limit": 5}),
    ):
        result = call(api, name, arguments)
        rest = api.get("/" + FREE_TOOL_ROUTES[name], query)
        assert rest.status_code == 200
        assert result["isError"] is False and result["structuredContent"] == rest.json(), name
        assert json.loads(result["content"][0]["text"]) == rest.json()
    assert len(call(api, "news_catalog", {"limit": 2})["structuredContent"]["items"]) == 2
    broken = call(api, "news_catalog", {"limit": 0})
    assert broken["isError"] and broken["structuredContent"]["status"] == 422
    assert broken["structuredContent"]["detail"][0]["loc"] == ["arguments", "limit"]
    rows = AgentInteraction.objects.filter(surface="mcp", agent="agenthub")
    assert rows.count() == 9 and rows.filter(status_code=422, skill="news_catalog").count() == 1


# --- paid tools: credits, refusals ------------------------------------------------------------
@pytest.mark.django_db
def test_credits_debit_exactly_the_price_with_one_ledger_row(api):
    key, account = funded(1.0)
    result = call(api, STATUS_SKU, key=key)
    assert result["isError"] is False
    assert {r["name"] for r in result["structuredContent"]["routes"]} == {"x402", "credits", "sessions"}
    assert result["_meta"]["a2a/receipt"] == {"rail": "credits", "charged_usdc": 0.01, "balance_usdc": 0.99}
    assert balance(account) == 1_000_000 - STATUS_PRICE
    (row,) = sku_calls()
    assert (row.amount_atomic, row.sku.sku, row.reference) == (
        -STATUS_PRICE,
        STATUS_SKU,
        f"/mcp {STATUS_SKU}",
    )
    interaction = AgentInteraction.objects.get(surface="mcp")
    assert (interaction.agent, interaction.skill, interaction.status_code) == ("agenthub", STATUS_SKU, 200)
    # A product with parameters: news_unlock at the item's own price.
    item = NewsItem.objects.create(title="t", teaser="teaser", body="the body", category="crypto")
    assert item.price_atomic == 100_000
    result = call(api, "news_unlock", {"news_id": item.id}, key=key)
    assert result["structuredContent"]["body"] == "the body"
    assert balance(account) == 1_000_000 - STATUS_PRICE - 100_000 and len(sku_calls()) == 2
    assert ledger_audit() == []


@pytest.mark.django_db
def test_refusals_are_tool_errors_and_charge_nothing(api):
    key, account = funded(0.5)
    # Invalid arguments name the field.
    result = call(api, "news_unlock", {"news_id": "seven"}, key=key)
    assert result["isError"] and result["structuredContent"]["status"] == 422
    assert result["structuredContent"]["detail"][0]["loc"] == ["arguments", "news_id"]
    assert result["content"][0]["text"].startswith("invalid arguments: news_id:")
    assert call(api, "news_unlock", {}, key=key)["structuredContent"]["detail"][0]["type"] == "missing"
    nul = call(api, "news_catalog", {"category": "a\u0000b"})["structuredContent"]
    assert nul["status"] == 422 and nul["detail"][0]["loc"] == ["arguments", "category"]
    assert call(api, "no\u0000tool")["structuredContent"]["status"] == 404
    # Nothing fresh to sell: 503, uncharged.
    result = call(api, "morning_brief", key=key)
    assert result["isError"] and result["structuredContent"]["status"] == 503
    assert result["structuredContent"]["charged"] is False
    # Not enough credit: 402 with the balance and the price.
    item = NewsItem.objects.create(title="t", teaser="t", body="b", category="crypto", price_atomic=600_000)
    result = call(api, "news_unlock", {"news_id": item.id}, key=key)
    assert result["isError"] and result["structuredContent"]["status"] == 402
    assert result["structuredContent"]["code"] == "insufficient_credit"
    assert (result["structuredContent"]["balance_usdc"], result["structuredContent"]["price_usdc"]) == (
        0.5,
        0.6,
    )
    # An unknown key, an unknown tool.
    assert call(api, STATUS_SKU, key="a2a_" + "z" * 43)["structuredContent"]["status"] == 401
    unknown = call(api, "no_such_tool", key=key)
    assert unknown["isError"] and unknown["structuredContent"]["status"] == 404
    assert balance(account) == 500_000 and sku_calls() == []
    statuses = sorted(AgentInteraction.objects.filter(surface="mcp").values_list("status_code", flat=True))
    assert statuses == [401, 402, 404, 404, 422, 422, 422, 503]


@pytest.mark.django_db
def test_an_unpaid_paid_tool_answers_the_rest_402s_requirements(api):
    NewsItem.objects.create(title="t", teaser="t", body="b", category="crypto")  # news_digest has news
    for name in (STATUS_SKU, "news_digest", "m2m_session_desk"):
        sku = Sku.objects.get(sku=name)
        result = call(api, name)
        assert result["isError"] is True
        required = result["structuredContent"]
        assert required["status"] == 402 and required["x402Version"] == 2
        assert required["resource"]["url"] == f"mcp://tool/{name}"
        rest = decode_payment_required_header(api.get(sku.path)["PAYMENT-REQUIRED"])
        assert required["accepts"] == [a.model_dump(by_alias=True, exclude_none=True) for a in rest.accepts]
        assert required["accepts"][0]["amount"] == str(sku.price_atomic)
        assert required["price_usdc"] == sku.price_usdc
        assert required["alternatives"]["credits"]["header"] == "X-API-Key"
        # x402's own MCP client reads it as a PaymentRequired.
        parsed = extract_payment_required_from_result(
            MCPToolResult(content=result["content"], is_error=True, structured_content=required)
        )
        assert parsed is not None and parsed.accepts[0].amount == str(sku.price_atomic)
    assert AgentInteraction.objects.filter(surface="mcp", status_code=402).count() == 3
    assert Payment.objects.count() == 0
    # Each unpaid MCP call is a payment challenge in the conversion funnel, like the REST 402s.
    assert api.get("/api/a2a/monetization/conversion").json()["hits"]["challenge"] == 6


@pytest.mark.django_db
def test_a_malformed_x402_payment_is_refused_with_the_requirements(api):
    for bad in ({"x402Version": 2}, "not json", 7):
        result = call(api, STATUS_SKU, meta={MCP_PAYMENT_META_KEY: bad})
        assert result["isError"] and result["structuredContent"]["status"] == 402
        assert result["structuredContent"]["error"] == "invalid_payload"
        assert result["structuredContent"]["accepts"][0]["amount"] == str(STATUS_PRICE)
    assert Payment.objects.count() == 0


@pytest.mark.django_db
def test_deeply_nested_payment_metadata_is_invalid_payload_not_a_recursion_error(api, settings):
    """The review's attack: _meta["x402/payment"] as JSON text nested a few thousand levels deep
    answered the raw "maximum recursion depth exceeded" (code 0). Now it is the documented
    refusal: a 402 tool error, invalid_payload, with the tool's requirements."""
    limit = settings.API_JSON_MAX_DEPTH
    deep = {
        "arrays as text": "[" * 8_000 + "]" * 8_000,
        "objects as text": '{"a":' * 900 + "1" + "}" * 900,
        "an object": json.loads('{"x402Version":2,"payload":' + "[" * (limit + 10) + "]" * (limit + 10) + "}"),
    }
    for case, bad in deep.items():
        result = call(api, STATUS_SKU, meta={MCP_PAYMENT_META_KEY: bad})
        structured = result["structuredContent"]
        assert result["isError"] and structured["status"] == 402, case
        assert structured["error"] == "invalid_payload" and "levels deep" in structured["detail"], case
        assert structured["accepts"][0]["amount"] == str(STATUS_PRICE)
    long = call(api, STATUS_SKU, meta={MCP_PAYMENT_META_KEY: " " * (settings.PAYMENT_HEADER_MAX_BYTES + 1)})
    assert long["structuredContent"]["error"] == "invalid_payload"
    assert "longer than" in long["structuredContent"]["detail"]
    assert Payment.objects.count() == 0 and not sku_calls()
    statuses = list(AgentInteraction.objects.values_list("status_code", flat=True))
    assert statuses == [402] * 4


# --- x402 over MCP, settled on the local chain --------------------------------------------------
def test_x402_mcp_transport_settles_returns_the_receipt_and_refuses_a_replay(paid_stack):
    session = requests.Session()
    session.headers.update({"Accept": ACCEPT, "MCP-Protocol-Version": "2025-11-25"})

    class Http:  # rpc()'s client interface over a real HTTP connection
        def post(self, path, data, content_type, **_):
            return session.post(paid_stack.url + path, data=data, headers={"Content-Type": content_type})

    http = Http()
    unpaid = call(http, STATUS_SKU)
    required = extract_payment_required_from_result(
        MCPToolResult(
            content=unpaid["content"], is_error=True, structured_content=unpaid["structuredContent"]
        )
    )
    assert required is not None
    payload = payer_client().create_payment_payload(required)
    meta = {MCP_PAYMENT_META_KEY: payload.model_dump(by_alias=True)}  # as x402's MCP client sends it
    before = balances(paid_stack)
    paid = call(http, STATUS_SKU, meta=meta)
    assert paid["isError"] is False and paid["structuredContent"]["routes"]
    receipt = paid["_meta"][MCP_PAYMENT_RESPONSE_META_KEY]
    assert receipt["success"] is True and receipt["transaction"].startswith("0x")
    assert receipt["payer"].lower() == dev_account(DEMO_PAYER).address.lower()
    after = balances(paid_stack)
    assert (before[0] - after[0], after[1] - before[1]) == (STATUS_PRICE, STATUS_PRICE)
    payment = Payment.objects.get()
    assert payment.state == Payment.State.SETTLED and payment.tx_hash == receipt["transaction"]
    assert payment.resource == f"mcp://tool/{STATUS_SKU}" and payment.delivered_at is not None
    # The same payload again: refused, nothing moves.
    replay = call(http, STATUS_SKU, meta=meta)
    assert replay["isError"] and replay["structuredContent"]["status"] == 402
    assert replay["structuredContent"]["error"] == "invalid_exact_evm_nonce_already_used"
    assert balances(paid_stack) == after and Payment.objects.count() == 1


# --- the managed MCP pack -----------------------------------------------------------------------
@pytest.mark.django_db
def test_managed_pack_calls_are_used_without_debits_then_credits_pay(api, settings):
    settings.MCP_MANAGED_CALLS, settings.MCP_MANAGED_DAYS = 3, 7
    key, account = funded(1.0)
    bought = api.get("/api/a2a/x402/mcp/managed-pack", HTTP_X_API_KEY=key)
    assert bought.status_code == 200, bought.content
    pack = bought.json()
    assert (pack["calls_total"], pack["days"], pack["calls_remaining"]) == (3, 7, 3)
    assert pack["account"] == account.wallet_address and pack["endpoint"] == "http://testserver/mcp"
    assert bought["X-Credit-Charged"] == "0.5" and balance(account) == 1_000_000 - PACK_PRICE
    allowance = McpAllowance.objects.get()
    assert allowance.account_id == account.id and allowance.calls_total == 3
    expires = timezone.now() + timedelta(days=7)
    assert abs((allowance.expires_at - expires).total_seconds()) < 60
    debits = len(sku_calls())  # the pack's own
    for left in (2, 1, 0):
        result = call(api, STATUS_SKU, key=key)
        assert result["isError"] is False
        assert result["_meta"]["a2a/receipt"] == {
            "rail": "mcp_managed_pack",
            "charged_usdc": 0.0,
            "calls_remaining": left,
        }
    assert balance(account) == 1_000_000 - PACK_PRICE and len(sku_calls()) == debits
    assert McpAllowanceCall.objects.filter(allowance=allowance, sku__sku=STATUS_SKU).count() == 3
    # The 4th call: credits again, exactly the price.
    result = call(api, STATUS_SKU, key=key)
    assert result["_meta"]["a2a/receipt"]["rail"] == "credits"
    assert balance(account) == 1_000_000 - PACK_PRICE - STATUS_PRICE and len(sku_calls()) == debits + 1
    assert McpAllowanceCall.objects.count() == 3
    assert ledger_audit() == []


@pytest.mark.django_db
def test_managed_pack_over_mcp_expiry_failures_and_packs_paid_by_credits(api, settings):
    settings.MCP_MANAGED_CALLS, settings.MCP_MANAGED_DAYS = 5, 1
    key, account = funded(2.0)
    # Bought as the MCP tool of the same name, with the key: paid from credits.
    result = call(api, "mcp_managed_pack", key=key)
    assert result["isError"] is False and result["structuredContent"]["calls_total"] == 5
    assert result["_meta"]["a2a/receipt"]["charged_usdc"] == 0.5
    assert balance(account) == 1_500_000
    # A failed product uses no call.
    assert call(api, "morning_brief", key=key)["structuredContent"]["status"] == 503
    assert McpAllowance.objects.get().calls_used == 0
    # A pack is never paid by the allowance: the second one is debited too, and adds its calls.
    second = call(api, "mcp_managed_pack", key=key)
    assert second["structuredContent"]["calls_remaining"] == 10 and balance(account) == 1_000_000
    assert McpAllowance.objects.filter(calls_used=0).count() == 2
    # Expired: credits pay again.
    McpAllowance.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    result = call(api, STATUS_SKU, key=key)
    assert (
        result["_meta"]["a2a/receipt"]["rail"] == "credits" and balance(account) == 1_000_000 - STATUS_PRICE
    )
    assert McpAllowanceCall.objects.count() == 0
    admin_view = McpAllowance.objects.first()
    assert admin_view is not None and str(admin_view).startswith(f"{account.id}: 0/5")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_parallel_calls_use_a_5_call_allowance_exactly_5_times_and_credits_pay_the_rest():
    from catalog.services import catalog_seed

    catalog_seed()
    _, account = funded(1.0)
    allowance = mcp_allowance_grant(account=account, calls=5, days=1)

    def one(_: int) -> str:
        try:
            rail = ManagedCallRail(account=account, reference="/mcp test")
            paid = paid_call(product=STATUS_SKU, params=None, base_url="http://testserver", payment=rail)
            return paid.receipt.rail
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=10) as pool:
        rails = list(pool.map(one, range(20)))
    assert rails.count("mcp_managed_pack") == 5 and rails.count("credits") == 15
    allowance.refresh_from_db()
    assert allowance.calls_used == 5 and McpAllowanceCall.objects.count() == 5
    assert len(sku_calls()) == 15 and balance(account) == 1_000_000 - 15 * STATUS_PRICE
    assert ledger_audit() == []


@pytest.mark.django_db
def test_an_x402_payer_without_an_account_is_refused_before_paying(api):
    sku = Sku.objects.get(sku="mcp_managed_pack")
    required = decode_payment_required_header(api.get(sku.path)["PAYMENT-REQUIRED"])
    assert required.accepts[0].amount == str(PACK_PRICE)
    payload = payer_client().create_payment_payload(required)
    resp = api.get(sku.path, HTTP_PAYMENT_SIGNATURE=encode_payment_signature_header(payload))
    assert resp.status_code == 503 and resp.json()["charged"] is False
    assert "register this wallet first" in resp.json()["detail"]
    # The same refusal over MCP.
    unpaid = call(api, "mcp_managed_pack")
    required = extract_payment_required_from_result(
        MCPToolResult(
            content=unpaid["content"], is_error=True, structured_content=unpaid["structuredContent"]
        )
    )
    payload = payer_client().create_payment_payload(required)
    result = call(api, "mcp_managed_pack", meta={MCP_PAYMENT_META_KEY: payload.model_dump(by_alias=True)})
    assert result["isError"] and result["structuredContent"]["status"] == 503
    assert "register this wallet first" in result["structuredContent"]["detail"]
    assert Payment.objects.count() == 0 and McpAllowance.objects.count() == 0


# --- the official clients end to end ----------------------------------------------------------
class Mcp1Session:
    """x402 2.25's MCP client (x402.mcp.x402MCPSession) is written against mcp 1.x: it passes
    read_timeout_seconds as a timedelta and reads results' camelCase attributes (isError,
    structuredContent). mcp 2.3's ClientSession takes float seconds and answers snake_case
    models. This shim between the two official clients changes nothing else: payment detection,
    signing and the _meta keys are x402's own."""

    def __init__(self, session: Any) -> None:
        self.session = session

    async def initialize(self) -> Any:
        return await self.session.initialize()

    async def list_tools(self) -> Any:
        return await self.session.list_tools()

    async def call_tool(self, name: str, arguments: Any = None, read_timeout_seconds: Any = None, **kw: Any):
        if isinstance(read_timeout_seconds, timedelta):
            read_timeout_seconds = read_timeout_seconds.total_seconds()
        result = await self.session.call_tool(name, arguments, read_timeout_seconds, **kw)
        return SimpleNamespace(
            isError=result.is_error,
            structuredContent=result.structured_content,
            content=result.content,
            meta=result.meta,
        )


@pytest.mark.slow
def test_official_mcp_client_end_to_end(paid_stack):
    reg = register_wallet()
    credit_add(account_id=reg.account.id, amount_atomic=1_000_000, kind="adjustment", reason="test")
    url = paid_stack.url + "/mcp"
    live = {x.sku for x in live_skus()}

    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        headers = {"X-API-Key": reg.api_key}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    init = await session.initialize()
                    out["server"] = init.server_info.name
                    tools = await session.list_tools()
                    out["tools"] = {t.name for t in tools.tools}
                    regime = await session.call_tool("regime", {})
                    out["regime"] = regime.structured_content
                    paid = await session.call_tool(STATUS_SKU, {})
                    out["credits"] = (paid.is_error, paid.meta)
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as session:
                client = register_exact_evm_client(x402Client(), dev_account(DEMO_PAYER))
                x402_session = x402MCPSession(Mcp1Session(session), client)
                await x402_session.initialize()
                result = await x402_session.call_tool(STATUS_SKU, {})
                out["x402"] = result
        return out

    before = balances(paid_stack)
    out = asyncio.run(run())
    assert out["tools"] == live | set(FREE_TOOL_ROUTES)
    assert out["regime"] == requests.get(paid_stack.url + "/api/mcp/regime", timeout=10).json()
    is_error, meta = out["credits"]
    assert is_error is False and meta["a2a/receipt"]["charged_usdc"] == 0.01
    assert balance(reg.account) == 1_000_000 - STATUS_PRICE
    result = out["x402"]
    assert result.payment_made and not result.is_error and result.payment_response.success
    after = balances(paid_stack)
    assert before[0] - after[0] == STATUS_PRICE
