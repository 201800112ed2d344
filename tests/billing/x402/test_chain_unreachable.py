"""The chain's RPC unreachable while a payment is checked: not the payer's fault. A valid proof
is answered 503 with Retry-After and nothing claimed (no payment row, nothing on chain), and the
same proof goes through once the RPC answers again; over HTTP, MCP `_meta` and the A2A x402
extension, each in its own form."""

from __future__ import annotations

import uuid

import pytest
import requests
from django.utils import timezone
from x402.mcp import MCP_PAYMENT_META_KEY
from x402.mcp.types import MCPToolResult
from x402.mcp.utils import extract_payment_required_from_result
from x402.schemas import PaymentRequired

from agents.a2a import extension as x
from billing.chain.localchain import free_port
from billing.models import Payment
from catalog.models import EditorialPiece
from tests.support import a2a_x402 as a2a
from tests.support.mcp_rpc import ACCEPT, STATUS_SKU, call
from tests.support.payments import BRIEF, balances, challenge, payer_client, signed_header


@pytest.fixture
def brief(paid_stack):
    return EditorialPiece.objects.create(
        kind="morning_brief", title="Rates day", summary="CPI", body="The full brief.", published_at=timezone.now()
    )


@pytest.fixture
def rpc_down(paid_stack, settings):
    """Switches CHAIN_RPC_URL to a closed port (the facilitator's signer follows it) and back."""

    class Switch:
        def down(self) -> None:
            settings.CHAIN_RPC_URL = f"http://127.0.0.1:{free_port()}"

        def up(self) -> None:
            settings.CHAIN_RPC_URL = paid_stack.chain.url

    return Switch()


def test_a_valid_proof_while_the_rpc_is_unreachable_is_503_then_the_same_proof_pays(paid_stack, brief, rpc_down):
    url = paid_stack.url + BRIEF
    header = signed_header(challenge(url))
    before = balances(paid_stack)

    rpc_down.down()
    refused = requests.get(url, headers={"PAYMENT-SIGNATURE": header}, timeout=60)
    assert refused.status_code == 503, refused.text
    assert refused.headers["Retry-After"] == "5"
    body = refused.json()
    assert body["code"] == "product_unavailable" and body["charged"] is False and body["retry_after"] == 5
    assert "could not be checked on chain" in body["detail"] and "same proof" in body["detail"]
    assert "failed_to_verify_signature" not in refused.text
    assert not Payment.objects.exists()
    assert balances(paid_stack) == before

    rpc_down.up()
    paid = requests.get(url, headers={"PAYMENT-SIGNATURE": header}, timeout=60)
    assert paid.status_code == 200 and paid.json()["body"] == "The full brief."
    assert Payment.objects.get().state == Payment.State.SETTLED
    assert (before[0] - balances(paid_stack)[0], balances(paid_stack)[1] - before[1]) == (80_000, 80_000)


def test_over_mcp_the_tool_answers_503_with_retry_after_then_the_same_meta_pays(paid_stack, rpc_down):
    session = requests.Session()
    session.headers.update({"Accept": ACCEPT, "MCP-Protocol-Version": "2025-11-25"})

    class Http:
        def post(self, path, data, content_type, **_):
            return session.post(paid_stack.url + path, data=data, headers={"Content-Type": content_type})

    unpaid = call(Http(), STATUS_SKU)
    required = extract_payment_required_from_result(
        MCPToolResult(content=unpaid["content"], is_error=True, structured_content=unpaid["structuredContent"])
    )
    meta = {MCP_PAYMENT_META_KEY: payer_client().create_payment_payload(required).model_dump(by_alias=True)}
    try:
        rpc_down.down()
        refused = call(Http(), STATUS_SKU, meta=meta)
        answer = refused["structuredContent"]
        assert refused["isError"] and answer["status"] == 503 and answer["retry_after"] == 5
        assert answer["charged"] is False and not Payment.objects.exists()
        rpc_down.up()
        paid = call(Http(), STATUS_SKU, meta=meta)
        assert paid["isError"] is False and Payment.objects.get().state == Payment.State.SETTLED
    finally:
        session.close()


def test_over_a2a_the_task_waits_for_the_same_payload_again(paid_stack, brief, rpc_down):
    task = a2a.ask(paid_stack, a2a.BRIEF_SKU)
    required = PaymentRequired.model_validate(task["status"]["message"]["metadata"][x.REQUIRED])
    payload = a2a.signer().create_payment_payload(required).model_dump(mode="json", by_alias=True, exclude_none=True)

    rpc_down.down()
    waiting = a2a.submit(paid_stack, task["id"], payload)["result"]["task"]
    meta = waiting["status"]["message"]["metadata"]
    assert waiting["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", waiting
    assert meta[x.STATUS] == x.PAYMENT_FAILED and meta["charged"] is False
    assert not Payment.objects.exists()

    rpc_down.up()
    done = a2a.submit(paid_stack, task["id"], payload)["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    assert Payment.objects.get().state == Payment.State.SETTLED
    assert uuid.UUID(done["id"])


def test_a_failure_while_waiting_for_a_transaction_is_never_taken_for_nothing_sent(tmp_path):
    """The signer tells "the chain did not answer and nothing was sent" (the claim may be released)
    from "a transaction exists" (a receipt was awaited, or a nonce reserved: never released)."""
    from billing.chain.localchain import FACILITATOR, dev_account
    from billing.facilitator.nonces import FileNonces
    from billing.facilitator.service import HealingWeb3Signer

    signer = HealingWeb3Signer(
        private_key="0x" + dev_account(FACILITATOR).key.hex().removeprefix("0x"),
        rpc_url=f"http://127.0.0.1:{free_port()}",
        confirmation_timeout_seconds=0.1,
        nonces=lambda key: FileNonces(tmp_path / key, wait_seconds=0.1),
    )
    began = signer.call_begin()
    assert signer.call_unreachable(began) is None  # nothing failed yet
    with pytest.raises(requests.ConnectionError):
        signer.get_chain_id()
    assert "did not answer" in (signer.call_unreachable(began) or "")

    began = signer.call_begin()
    with pytest.raises(requests.ConnectionError):
        signer.wait_for_transaction_receipt("0x" + "ab" * 32)
    assert signer.rpc.failures > began and signer.call_unreachable(began) is None

    began = signer.call_begin()
    with pytest.raises(requests.ConnectionError):
        signer.send_transaction("0x" + "00" * 20, b"")  # the nonce sequence needs the chain first
    assert "did not answer" in (signer.call_unreachable(began) or "")
