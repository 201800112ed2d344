"""A2A paid skills by the a2a-x402 extension v0.2, end to end on the local chain: the official
x402 client signs the requirements of the input-required task, the service verifies, runs the
product, settles through its facilitator on anvil and completes the task with the receipts;
the same payload is never paid twice. The last test is an a2a-sdk client (its JSON-RPC
transport) doing the whole journey against the live server."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.client import ClientCallContext
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState
from django.utils import timezone
from google.protobuf.json_format import MessageToDict
from google.protobuf.struct_pb2 import Struct, Value
from x402.schemas import PaymentRequired

from a2a_service.scripts.demos import a2a as demo_a2a
from agents.a2a import extension as x
from agents.models import A2aTask
from billing.chain.localchain import DEMO_PAYER, dev_account
from billing.models import Payment
from catalog.models import EditorialPiece, NewsItem
from tests.support.a2a_x402 import BRIEF_SKU, SESSION, ask, signer, submit

PRICE = 80_000


@pytest.fixture
def brief(paid_stack):
    return EditorialPiece.objects.create(
        kind="morning_brief",
        title="Rates day",
        summary="CPI at 08:30",
        body="The full brief: rates, CPI, FX.",
        published_at=timezone.now(),
    )


def balances(stack: Any) -> tuple[int, int]:
    token = stack.chain.token
    return (
        token.functions.balanceOf(dev_account(DEMO_PAYER).address).call(),
        token.functions.balanceOf(stack.treasury).call(),
    )


def test_the_x402_extension_pays_on_chain_and_the_same_payload_never_pays_twice(paid_stack, brief):
    before_payer, before_treasury = balances(paid_stack)
    task = ask(paid_stack, BRIEF_SKU)
    meta = task["status"]["message"]["metadata"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED" and meta[x.STATUS] == x.PAYMENT_REQUIRED
    required = PaymentRequired.model_validate(meta[x.REQUIRED])
    payload = (
        signer().create_payment_payload(required).model_dump(mode="json", by_alias=True, exclude_none=True)
    )

    done = submit(paid_stack, task["id"], payload)["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    meta = done["status"]["message"]["metadata"]
    assert meta[x.STATUS] == x.PAYMENT_COMPLETED
    [receipt] = meta[x.RECEIPTS]
    assert receipt["success"] is True and receipt["network"] == "eip155:8453"
    assert receipt["payer"].lower() == dev_account(DEMO_PAYER).address.lower()
    assert paid_stack.chain.w3.eth.get_transaction_receipt(receipt["transaction"])["status"] == 1
    assert done["artifacts"][0]["parts"][0]["data"]["body"] == "The full brief: rates, CPI, FX."
    after_payer, after_treasury = balances(paid_stack)
    assert (before_payer - after_payer, after_treasury - before_treasury) == (PRICE, PRICE)
    payment = Payment.objects.get()
    assert payment.state == Payment.State.SETTLED and payment.tx_hash == receipt["transaction"]
    stored = A2aTask.objects.get(pk=done["id"])
    assert stored.state == "completed" and stored.payer == payment.payer

    # The same payload again, on the same task: the task is done, nothing more is charged.
    again = submit(paid_stack, task["id"], payload)
    assert again["error"]["code"] == -32004
    # ... and on a new task for the same skill: the x402 rail refuses a proof used before.
    other = ask(paid_stack, BRIEF_SKU)
    refused = submit(paid_stack, other["id"], payload)["result"]["task"]
    meta = refused["status"]["message"]["metadata"]
    assert refused["status"]["state"] == "TASK_STATE_FAILED"
    assert (meta[x.STATUS], meta[x.ERROR]) == (x.PAYMENT_FAILED, x.DUPLICATE_NONCE)
    assert balances(paid_stack) == (after_payer, after_treasury) and Payment.objects.count() == 1


def _data_message(skill: str, *, task_id: str = "", metadata: dict[str, Any] | None = None) -> Message:
    message = Message(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_USER,
        parts=[Part(data=Value(struct_value=_struct({"skill": skill})))],
    )
    if task_id:
        message.task_id = task_id
    if metadata:
        message.metadata.CopyFrom(_struct(metadata))
    return message


def _struct(data: dict[str, Any]) -> Struct:
    struct = Struct()
    struct.update(data)
    return struct


async def _a2a_journey(base: str) -> dict[str, Any]:
    """What an agent built on a2a-sdk does: resolve the card, call a free skill, buy a paid one
    through the a2a-x402 extension with the x402 client's signer."""
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
        activate = ClientCallContext(service_parameters={"A2A-Extensions": x.X402_EXTENSION_URI})

        async def send(message: Message) -> Any:
            events = [
                e async for e in client.send_message(SendMessageRequest(message=message), context=activate)
            ]
            assert len(events) == 1 and events[0].HasField("task")
            return events[0].task

        free = await send(_data_message("news_catalog"))
        unpaid = await send(_data_message(BRIEF_SKU))
        required = PaymentRequired.model_validate(MessageToDict(unpaid.status.message.metadata)[x.REQUIRED])
        payload = (
            signer()
            .create_payment_payload(required)
            .model_dump(mode="json", by_alias=True, exclude_none=True)
        )
        paid = await send(
            _data_message(
                BRIEF_SKU,
                task_id=unpaid.id,
                metadata={x.STATUS: x.PAYMENT_SUBMITTED, x.PAYLOAD: payload},
            )
        )
        got = await client.get_task(GetTaskRequest(id=paid.id))
        return {"card": card, "free": free, "unpaid": unpaid, "paid": paid, "got": got}


@pytest.mark.slow
def test_an_a2a_sdk_client_reads_the_card_calls_a_free_skill_and_pays_for_a_paid_one(paid_stack, brief):
    NewsItem.objects.create(title="Item 1", teaser="t", body="b", category="crypto")
    before_payer, _ = balances(paid_stack)
    out = asyncio.run(_a2a_journey(paid_stack.url))
    card = out["card"]
    assert card.supported_interfaces[0].url == paid_stack.url + "/api/a2a/agenthub"
    assert x.X402_EXTENSION_URI in [e.uri for e in card.capabilities.extensions]

    free = out["free"]
    assert free.status.state == TaskState.TASK_STATE_COMPLETED
    news = MessageToDict(free.artifacts[0].parts[0].data)
    assert news == SESSION.get(paid_stack.url + "/api/a2a/news/catalog", timeout=10).json()
    assert [i["title"] for i in news["items"]] == ["Item 1"]

    unpaid = out["unpaid"]
    assert unpaid.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    paid = out["paid"]
    assert paid.id == unpaid.id and paid.status.state == TaskState.TASK_STATE_COMPLETED
    meta = MessageToDict(paid.status.message.metadata)
    assert meta[x.STATUS] == x.PAYMENT_COMPLETED and meta[x.RECEIPTS][0]["success"] is True
    assert MessageToDict(paid.artifacts[0].parts[0].data)["body"] == "The full brief: rates, CPI, FX."
    assert before_payer - balances(paid_stack)[0] == PRICE
    got = out["got"]
    assert got.id == paid.id and got.status.state == TaskState.TASK_STATE_COMPLETED

    # The demo (`python -m a2a_service.scripts.demos.a2a`, in `make demo`) makes the same journey.
    paid_before = balances(paid_stack)[0]
    assert asyncio.run(demo_a2a.journey(paid_stack.url, signer())) == 0
    assert paid_before - balances(paid_stack)[0] == PRICE


async def _legacy_journey(base: str) -> tuple[Any, Any, str]:
    """An a2a-sdk client reading the 0.3 card speaks 0.3 (message/send, tasks/get)."""
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, base, agent_card_path="/.well-known/agent.json").get_agent_card()
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
        events = [
            e async for e in client.send_message(SendMessageRequest(message=_data_message("news_catalog")))
        ]
        task = events[0].task
        transport = type(client._transport).__name__  # type: ignore[attr-defined]
        return task, await client.get_task(GetTaskRequest(id=task.id)), transport


@pytest.mark.slow
def test_an_a2a_sdk_client_of_the_0_3_card_speaks_0_3(live_server, transactional_db):
    from catalog.services import catalog_seed

    catalog_seed()
    NewsItem.objects.create(title="Item 1", teaser="t", body="b", category="crypto")
    task, got, transport = asyncio.run(_legacy_journey(live_server.url))
    assert transport == "CompatJsonRpcTransport"  # the SDK's 0.3 wire format
    assert task.status.state == TaskState.TASK_STATE_COMPLETED and got.id == task.id
    assert MessageToDict(task.artifacts[0].parts[0].data)["items"][0]["title"] == "Item 1"
    stored = A2aTask.objects.get(pk=task.id)
    assert [m.get("kind") for m in stored.history] == [None, None]  # stored in 1.0 form whatever was spoken
