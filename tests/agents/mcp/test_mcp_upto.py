"""A metered product bought over MCP with `upto`: the tool's 402 (its structured error) offers
upto next to exact, the SDK's upto client signs the maximum, `_meta["x402/payment"]` carries it,
and the receipt in `_meta["x402/payment-response"]` says what was settled, less than authorized."""

from __future__ import annotations

import math

import requests
from x402.mcp import MCP_PAYMENT_META_KEY, MCP_PAYMENT_RESPONSE_META_KEY
from x402.mcp.types import MCPToolResult
from x402.mcp.utils import extract_payment_required_from_result

from billing.credits import ledger_audit
from billing.models import Payment
from catalog.models import Sku
from tests.support.marketdata import digests_market_write
from tests.support.mcp_rpc import ACCEPT, call
from tests.support.upto import upto_payer

SKU, LIMIT = "tech_regulatory_digest", 10


def test_an_mcp_tool_call_pays_a_metered_product_with_upto(paid_stack):
    digests_market_write()
    payer = upto_payer(paid_stack.chain)
    session = requests.Session()
    session.headers.update({"Accept": ACCEPT, "MCP-Protocol-Version": "2025-11-25"})

    class Http:  # rpc()'s client interface over a real HTTP connection
        def post(self, path, data, content_type, **_):
            return session.post(paid_stack.url + path, data=data, headers={"Content-Type": content_type})

    http = Http()
    unpaid = call(http, SKU, {"limit": LIMIT})
    required = extract_payment_required_from_result(
        MCPToolResult(content=unpaid["content"], is_error=True, structured_content=unpaid["structuredContent"])
    )
    assert required is not None and [a.scheme for a in required.accepts] == ["exact", "upto"]
    payload = payer.authorize(required)
    before = payer.balance()
    paid = call(http, SKU, {"limit": LIMIT}, meta={MCP_PAYMENT_META_KEY: payload.model_dump(by_alias=True)})
    assert paid["isError"] is False, paid
    price = Sku.objects.get(sku=SKU).price_atomic
    used = math.ceil(price * len(paid["structuredContent"]["items"]) / LIMIT)
    receipt = paid["_meta"][MCP_PAYMENT_RESPONSE_META_KEY]
    assert receipt["success"] is True and receipt["amount"] == str(used) and used < price
    assert before - payer.balance() == used
    payment = Payment.objects.get()
    assert (payment.scheme, payment.amount_atomic, payment.tx_hash) == ("upto", used, receipt["transaction"])
    assert ledger_audit() == []
