"""A2A paid skills by the a2a-x402 extension against the live server (`paid_stack`): ask for a
skill, sign its requirements with the official x402 client, submit the payload on the task."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import requests
from x402 import x402ClientSync
from x402.mechanisms.evm.exact.register import register_exact_evm_client

from agents.a2a import extension as x
from billing.chain.localchain import DEMO_PAYER, dev_account

BRIEF_SKU = "morning_brief"


@pytest.fixture(autouse=True)
def _close_http():
    """Keep-alive connections left open would hold live-server threads at shutdown."""
    yield
    SESSION.close()


SESSION = requests.Session()


def signer() -> x402ClientSync:
    return register_exact_evm_client(x402ClientSync(), dev_account(DEMO_PAYER))


def rpc(stack: Any, message: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": "req-1", "method": "SendMessage", "params": {"message": message}}
    resp = SESSION.post(stack.url + "/api/a2a/agenthub", json=body, timeout=60)
    assert resp.status_code == 200, resp.text
    return resp.json()


def ask(stack: Any, skill: str) -> dict[str, Any]:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"data": {"skill": skill}}]}
    return rpc(stack, message)["result"]["task"]


def submit(stack: Any, task_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    return rpc(
        stack,
        {
            "messageId": uuid.uuid4().hex,
            "role": "ROLE_USER",
            "taskId": task_id,
            "parts": [{"text": "Here is the payment authorization."}],
            "metadata": {x.STATUS: x.PAYMENT_SUBMITTED, x.PAYLOAD: payload},
        },
    )
