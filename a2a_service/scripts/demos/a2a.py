"""`make demo` (A2A part): an agent built on a2a-sdk buys from the running local stack.

It reads .run/stack.json (written by `make run`; A2A_BASE_URL overrides the address), resolves
the agent card at /.well-known/agent-card.json, calls a free skill over JSON-RPC, then buys a
paid skill through the a2a-x402 extension: the task comes back input-required with the x402
requirements, the official x402 client signs them with the demo wallet (funded on the local
chain by `make run`), the signed payload goes back on the same task, and the task completes
with the artifact and the settlement receipt. Each step is printed."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.client import Client, ClientCallContext
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, Task, TaskState
from eth_account import Account
from google.protobuf.struct_pb2 import Struct, Value  # type: ignore[import-untyped]
from x402 import x402ClientSync
from x402.mechanisms.evm.exact.register import register_exact_evm_client
from x402.schemas import PaymentRequired

from a2a_service.scripts.demos.agent import local_stack, usdc_balance
from agents.a2a import spec as x
from agents.a2a.proto import plain_json, to_json

ROOT = Path(__file__).resolve().parents[3]
FREE_SKILL = "news_catalog"
# Tried in order: the first whose product can serve now is bought (a product with nothing to
# sell fails its task before any payment, so trying it costs nothing).
DEFAULT_SKUS = ["morning_brief", "news_digest", "payments_dual_rail_status"]


def say(step: str, text: str) -> None:
    print(f"\n[{step}] {text}", flush=True)


def skill_message(skill: str, *, task_id: str = "", metadata: dict[str, Any] | None = None) -> Message:
    data = Struct()
    data.update({"skill": skill})
    message = Message(
        message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(data=Value(struct_value=data))]
    )
    if task_id:
        message.task_id = task_id
    if metadata:
        message.metadata.update(metadata)
    return message


async def send(client: Client, message: Message) -> Task:
    # The x402 extension is activated by its header (it is optional on this agent).
    context = ClientCallContext(service_parameters={"A2A-Extensions": x.X402_EXTENSION_URI})
    async for event in client.send_message(SendMessageRequest(message=message), context=context):
        if event.HasField("task"):
            return event.task
        raise RuntimeError(f"the agent answered a message, not a task: {to_json(event.message)}")
    raise RuntimeError("no answer")


def text_of(task: Task) -> str:
    return " ".join(p.text for p in task.status.message.parts if p.text)


async def buy(client: Client, skill: str, signer: x402ClientSync) -> Task | None:
    say("ask", f"SendMessage {{skill: {skill}}}")
    unpaid = await send(client, skill_message(skill))
    if unpaid.status.state != TaskState.TASK_STATE_INPUT_REQUIRED:
        say("skip", f"{skill}: {TaskState.Name(unpaid.status.state)}: {text_of(unpaid)}")
        return None
    meta = to_json(unpaid.status.message.metadata)
    required = PaymentRequired.model_validate(meta[x.REQUIRED])
    req = required.accepts[0]
    say(
        "input-required",
        f"task {unpaid.id}: {x.STATUS}={meta[x.STATUS]}; pay {int(req.amount) / 10**6} USDC "
        f"({req.amount} atomic) on {req.network} to {req.pay_to}, asset {req.asset}",
    )
    payload = signer.create_payment_payload(required)
    auth = payload.payload["authorization"]
    say(
        "signature",
        f"EIP-3009 transferWithAuthorization signed by {auth['from']}, nonce {auth['nonce'][:18]}...",
    )
    paid = await send(
        client,
        skill_message(
            skill,
            task_id=unpaid.id,
            metadata={
                x.STATUS: x.PAYMENT_SUBMITTED,
                x.PAYLOAD: payload.model_dump(mode="json", by_alias=True, exclude_none=True),
            },
        ),
    )
    meta = to_json(paid.status.message.metadata)
    if paid.status.state != TaskState.TASK_STATE_COMPLETED:
        say("refused", f"{TaskState.Name(paid.status.state)} {meta.get(x.ERROR, '')}: {text_of(paid)}")
        return None
    receipt = meta[x.RECEIPTS][-1]
    say("settlement", f"{x.STATUS}={meta[x.STATUS]}; tx {receipt['transaction']} on {receipt['network']}")
    say("artifact", json.dumps(plain_json(to_json(paid.artifacts[0].parts[0].data)), indent=2)[:1200])
    return paid


async def journey(base: str, signer: x402ClientSync) -> int:
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
        interface = card.supported_interfaces[0]
        say(
            "card",
            f"{card.name} {card.version}: {interface.protocol_binding} {interface.protocol_version} at "
            f"{interface.url}; {len(card.skills)} skills; extensions "
            f"{[e.uri for e in card.capabilities.extensions]}",
        )
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
        free = await send(client, skill_message(FREE_SKILL))
        content = to_json(free.artifacts[0].parts[0].data) if free.artifacts else {}
        say(
            "free skill",
            f"{FREE_SKILL}: {TaskState.Name(free.status.state)}, {len(content.get('items', []))} items",
        )
        wanted = [os.environ["DEMO_SKU"]] if os.environ.get("DEMO_SKU") else DEFAULT_SKUS
        for skill in wanted:
            paid = await buy(client, skill, signer)
            if paid is None:
                continue
            got = await client.get_task(GetTaskRequest(id=paid.id))
            say(
                "GetTask",
                f"task {got.id} is {TaskState.Name(got.status.state)} with {len(got.history)} messages",
            )
            return 0
    print("nothing could be bought", file=sys.stderr)
    return 1


def main() -> int:
    stack = local_stack(ROOT)
    if stack is None:
        return 2
    base = os.environ.get("A2A_BASE_URL") or stack["base_url"]
    account = Account.from_key(stack["demo_payer_private_key"])
    signer = register_exact_evm_client(x402ClientSync(), account)
    before = usdc_balance(stack, account.address)
    say("agent", f"wallet {account.address} holds {before} USDC on chain {stack['chain_id']}")
    code = asyncio.run(journey(base, signer))
    if code == 0:
        say(
            "done",
            f"wallet now holds {usdc_balance(stack, account.address)} USDC (was {before}); "
            f"treasury {usdc_balance(stack, stack['treasury_address'])} USDC",
        )
    return code


if __name__ == "__main__":
    sys.exit(main())
