"""payment-identifier: an x402 payment the client names is answered once. The same identifier
with the same payload answers the first result (same content, same receipt) with no second
settlement; another payload under the same identifier is 409 and charges nothing; a first call
that failed with nothing charged leaves the identifier free. Paid with the official client on
anvil, through REST and MCP `_meta`."""

from __future__ import annotations

import base64
import json
import threading

import pytest
import requests
from x402.extensions.payment_identifier import generate_payment_id
from x402.http.utils import decode_payment_response_header
from x402.mcp import MCP_PAYMENT_META_KEY, MCP_PAYMENT_RESPONSE_META_KEY
from x402.mcp.types import MCPToolResult
from x402.mcp.utils import extract_payment_required_from_result
from x402.schemas import PaymentRequired

from agents.a2a import extension as x
from billing.credits import ledger_audit
from billing.models import LedgerEntry, Payment, PaymentIdentifier
from catalog.products import registry
from tests.support.a2a_x402 import BRIEF_SKU, ask, submit
from tests.support.mcp_rpc import STATUS_SKU, call
from tests.support.payments import BRIEF, BRIEF_PRICE, balances, challenge
from tests.support.x402_extensions import named_payload, payment_header


def _runs(monkeypatch, sku: str) -> list[int]:
    spec = registry.spec_get(sku)
    assert spec is not None
    runs = [0]
    original = spec.run

    def counted(call):
        runs[0] += 1
        return original(call)

    monkeypatch.setitem(registry._SPECS, sku, registry.ProductSpec(**{**spec.__dict__, "run": counted}))
    return runs


def _get(url: str, header: str) -> requests.Response:
    return requests.get(url, headers={"PAYMENT-SIGNATURE": header}, timeout=30)


def test_a_retried_payment_identifier_is_answered_once(paid_stack, brief, monkeypatch):
    runs = _runs(monkeypatch, "morning_brief")
    url = paid_stack.url + BRIEF
    required = challenge(url)
    assert required.extensions["payment-identifier"]["info"] == {"required": False}
    payment_id = generate_payment_id()
    header = payment_header(named_payload(required, payment_id))
    before = balances(paid_stack)
    start = paid_stack.chain.w3.eth.block_number
    first = _get(url, header)
    assert first.status_code == 200, first.text
    # The same payment again: the first answer, nothing settled again.
    again = _get(url, header)
    assert again.status_code == 200, again.text
    assert again.json() == first.json() and "The full brief" in again.text
    assert again.headers["PAYMENT-RESPONSE"] == first.headers["PAYMENT-RESPONSE"]
    settled = decode_payment_response_header(first.headers["PAYMENT-RESPONSE"])
    after = balances(paid_stack)
    assert (before[0] - after[0], after[1] - before[1]) == (BRIEF_PRICE, BRIEF_PRICE)
    payment = Payment.objects.get()
    assert payment.state == Payment.State.SETTLED and payment.tx_hash == settled.transaction
    assert runs == [1]
    # One settlement transaction on chain: the only USDC transfer since, the first answer's.
    logs = paid_stack.chain.token.events.Transfer().get_logs(from_block=start + 1)
    assert ["0x" + log["transactionHash"].hex().removeprefix("0x") for log in logs] == [settled.transaction]
    row = PaymentIdentifier.objects.get()
    assert (row.key, row.state, row.scheme, row.sku) == (payment_id, "answered", "exact", "morning_brief")
    # Another payment (a new signature) under the same identifier: 409, nothing charged.
    other = _get(url, payment_header(named_payload(challenge(url), payment_id)))
    assert other.status_code == 409, other.text
    assert other.json()["code"] == "payment_identifier_conflict" and other.json()["charged"] is False
    assert "The full brief" not in other.text
    assert balances(paid_stack) == after and Payment.objects.count() == 1 and runs == [1]
    assert LedgerEntry.objects.count() == 0 and ledger_audit() == []


def test_an_identifier_whose_first_call_failed_uncharged_may_be_used_again(paid_stack, brief):
    url = paid_stack.url + BRIEF
    payment_id = generate_payment_id()
    refused = _get(url, payment_header(named_payload(challenge(url), payment_id, amount="1")))
    assert refused.status_code == 402
    assert not PaymentIdentifier.objects.exists()  # freed: nothing was charged
    before = balances(paid_stack)
    paid = _get(url, payment_header(named_payload(challenge(url), payment_id)))
    assert paid.status_code == 200, paid.text
    after = balances(paid_stack)
    assert before[0] - after[0] == BRIEF_PRICE and Payment.objects.count() == 1
    assert ledger_audit() == []


def test_a_malformed_identifier_is_422_and_charges_nothing(paid_stack, brief):
    url = paid_stack.url + BRIEF
    payload = named_payload(challenge(url), generate_payment_id())
    data = payload.model_dump(by_alias=True, mode="json")
    data["extensions"]["payment-identifier"]["info"]["id"] = "short!"
    header = base64.b64encode(json.dumps(data).encode()).decode()
    before = balances(paid_stack)
    resp = _get(url, header)
    assert resp.status_code == 422, resp.text
    assert resp.json()["detail"][0]["type"] == "payment_identifier_invalid"
    assert balances(paid_stack) == before and not Payment.objects.exists()


@pytest.mark.postgres
def test_concurrent_retries_settle_once(paid_stack, brief, monkeypatch):
    runs = _runs(monkeypatch, "morning_brief")
    url = paid_stack.url + BRIEF
    header = payment_header(named_payload(challenge(url), generate_payment_id()))
    before = balances(paid_stack)
    barrier = threading.Barrier(4)
    results: list[requests.Response] = []

    def go() -> None:
        barrier.wait()
        results.append(_get(url, header))

    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(r.status_code for r in results)
    assert 200 in statuses and set(statuses) <= {200, 202, 409}, [r.text for r in results]
    # Each in-progress answer says to come back; coming back gets the first answer.
    assert all(r.headers.get("Retry-After") for r in results if r.status_code in (202, 409))
    served = [r.json() for r in results if r.status_code == 200]
    again = _get(url, header)
    assert again.status_code == 200 and all(body == again.json() for body in served)
    after = balances(paid_stack)
    assert before[0] - after[0] == BRIEF_PRICE and Payment.objects.count() == 1 and runs == [1]
    assert ledger_audit() == []


def test_mcp_meta_payment_identifier_is_answered_once(paid_stack):
    session = requests.Session()
    session.headers.update(
        {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    )

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
    assert required is not None and "payment-identifier" in (required.extensions or {})
    payment_id = generate_payment_id()
    meta = {MCP_PAYMENT_META_KEY: named_payload(required, payment_id).model_dump(by_alias=True)}
    before = balances(paid_stack)
    first = call(http, STATUS_SKU, meta=meta)
    assert first["isError"] is False, first
    again = call(http, STATUS_SKU, meta=meta)
    assert again["isError"] is False, again
    assert again["structuredContent"] == first["structuredContent"]
    assert again["_meta"][MCP_PAYMENT_RESPONSE_META_KEY] == first["_meta"][MCP_PAYMENT_RESPONSE_META_KEY]
    after = balances(paid_stack)
    price = before[0] - after[0]
    assert price > 0 and after[1] - before[1] == price and Payment.objects.count() == 1
    other = call(
        http,
        STATUS_SKU,
        meta={MCP_PAYMENT_META_KEY: named_payload(required, payment_id).model_dump(by_alias=True)},
    )
    assert other["isError"] and other["structuredContent"]["code"] == "payment_identifier_conflict", other
    assert balances(paid_stack) == after and Payment.objects.count() == 1
    assert ledger_audit() == []
    session.close()


def test_a2a_payment_identifier_answers_a_new_task_with_the_first_result(paid_stack, brief):
    """The a2a-x402 extension: the same named payload submitted on a second task for the same
    skill completes it with the first answer and its receipt, nothing settled again."""
    first_task = ask(paid_stack, BRIEF_SKU)
    required = PaymentRequired.model_validate(first_task["status"]["message"]["metadata"][x.REQUIRED])
    payment_id = generate_payment_id()
    payload = named_payload(required, payment_id).model_dump(mode="json", by_alias=True, exclude_none=True)
    before = balances(paid_stack)
    done = submit(paid_stack, first_task["id"], payload)["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    second = submit(paid_stack, ask(paid_stack, BRIEF_SKU)["id"], payload)["result"]["task"]
    assert second["status"]["state"] == "TASK_STATE_COMPLETED", second
    assert second["artifacts"][0]["parts"] == done["artifacts"][0]["parts"]
    receipts = [t["status"]["message"]["metadata"][x.RECEIPTS] for t in (done, second)]
    assert receipts[0] == receipts[1]
    after = balances(paid_stack)
    assert before[0] - after[0] == BRIEF_PRICE and Payment.objects.count() == 1
    other = named_payload(required, payment_id).model_dump(mode="json", by_alias=True, exclude_none=True)
    refused = submit(paid_stack, ask(paid_stack, BRIEF_SKU)["id"], other)["result"]["task"]
    assert refused["status"]["state"] != "TASK_STATE_COMPLETED", refused
    assert "payment_identifier_conflict" in json.dumps(refused["status"])
    assert balances(paid_stack) == after and Payment.objects.count() == 1
    assert ledger_audit() == []
