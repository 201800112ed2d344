"""A metered product bought by the a2a-x402 extension with `upto`: the skill's payment
requirements offer upto next to exact, the SDK's upto client signs the maximum, the task's
metadata carries it, and the receipt says what was settled, less than authorized (as over REST,
tests/billing/x402/test_upto.py, and MCP, tests/agents/mcp/test_mcp_upto.py)."""

from __future__ import annotations

import math
import uuid

from x402.schemas import PaymentRequired

from agents.a2a import extension as x
from billing.credits import ledger_audit
from billing.models import Payment
from catalog.models import Sku
from tests.support.a2a_x402 import rpc, submit
from tests.support.marketdata import digests_market_write
from tests.support.upto import upto_payer

SKU, LIMIT = "tech_regulatory_digest", 10


def test_an_a2a_task_pays_a_metered_product_with_upto(paid_stack):
    digests_market_write()
    payer = upto_payer(paid_stack.chain)
    message = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"data": {"skill": SKU, "params": {"limit": LIMIT}}}],
    }
    task = rpc(paid_stack, message)["result"]["task"]
    meta = task["status"]["message"]["metadata"]
    assert meta[x.STATUS] == x.PAYMENT_REQUIRED, task
    required = PaymentRequired.model_validate(meta[x.REQUIRED])
    assert [a.scheme for a in required.accepts] == ["exact", "upto"]
    payload = payer.authorize(required).model_dump(mode="json", by_alias=True, exclude_none=True)
    before = payer.balance()

    done = submit(paid_stack, task["id"], payload)["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    meta = done["status"]["message"]["metadata"]
    [receipt] = meta[x.RECEIPTS]
    items = done["artifacts"][0]["parts"][0]["data"]["items"]
    price = Sku.objects.get(sku=SKU).price_atomic
    used = math.ceil(price * len(items) / LIMIT)
    assert receipt["success"] is True and receipt["amount"] == str(used) and 0 < used < price
    assert before - payer.balance() == used
    payment = Payment.objects.get()
    assert (payment.scheme, payment.amount_atomic, payment.tx_hash) == ("upto", used, receipt["transaction"])
    assert ledger_audit() == []
