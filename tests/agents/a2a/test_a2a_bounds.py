"""What one A2A task stores and answers is bounded (issue 22, item 1). The review's attack: the
same input-required task sent SendMessage again and again, unauthenticated, each message ~0.9 MB
appended to the stored task and the whole history answered (40 messages: a 37 MB row, 37 MB
answers). Now a message is at most A2A_MESSAGE_MAX_BYTES (-32602 beyond), an unpaid repeat of
the task's question is not stored, a task keeps at most A2A_TASK_MAX_MESSAGES messages and
A2A_TASK_MAX_BYTES of history and, at its bounds, answers -32004 without growing; historyLength
is honoured on SendMessage and GetTask."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

import pytest
from a2a.types import SendMessageResponse
from django.conf import settings
from eth_account import Account as EthAccount
from google.protobuf.json_format import ParseDict

from agents.a2a import extension as x
from agents.a2a.store import (
    a2a_task_claim,
    a2a_task_create,
    a2a_task_requirements_refresh,
    a2a_task_save,
    history_bytes,
    message_bytes,
)
from agents.models import A2aTask
from billing.front import schemes as front_schemes
from billing.front import sell as front_sell
from billing.models import Account, LedgerEntry, Payment
from billing.rails.x402 import SettlementPending
from tests.support.a2a_rpc import BRIEF_SKU, data_message, rpc, send, status_meta
from tests.support.wallets import register_over_http

# A published morning brief (the paid skill these tests ask for), from the JSON-RPC tests.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("brief")]


def on_task(task_id: str, text: str = "the brief, please", **extra: Any) -> dict[str, Any]:
    return {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "taskId": task_id,
        "parts": [{"text": text}],
        **extra,
    }


def row_bytes(task_id: str) -> int:
    """What the task's row holds in its JSON columns."""
    row = A2aTask.objects.get(pk=task_id)
    return sum(message_bytes(v) for v in (row.history, row.status_message, row.artifacts, row.metadata))


def error_info(error: dict[str, Any]) -> dict[str, str]:
    """The metadata of a JSON-RPC error's google.rpc.ErrorInfo detail (a2a-sdk's error data)."""
    (info,) = [d for d in error["data"] if d["@type"].endswith("google.rpc.ErrorInfo")]
    return dict(info["metadata"])


def keyed_account(api) -> tuple[str, Account]:
    """A registered account with no credit: each message it sends on a task is a payment attempt
    (refused for lack of credit: the requirements again), which the task does store."""
    wallet = EthAccount.create()
    key = register_over_http(api, wallet).json()["api_key"]
    return key, Account.objects.get(wallet_address=wallet.address.lower())


def test_the_reviews_attack_grows_neither_the_row_nor_the_answers(api):
    task = send(api, BRIEF_SKU)
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    before = row_bytes(task["id"])
    assert before < 16_000
    # 40 messages of 0.9 MB (under the 1 MiB body cap): each refused as invalid params, unstored.
    for _ in range(40):
        resp = rpc(api, "SendMessage", {"message": on_task(task["id"], "x" * 900_000)})
        assert resp.status_code == 200 and len(resp.content) < 2_000
        error = resp.json()["error"]
        assert error["code"] == -32602 and "A2A_MESSAGE_MAX_BYTES" in error["message"]
        details = error_info(error)
        assert details["limit"] == str(settings.A2A_MESSAGE_MAX_BYTES) and int(details["size"]) > 900_000
    # 40 messages just under the message bound, unpaid: the requirements again, nothing stored.
    text = "y" * (settings.A2A_MESSAGE_MAX_BYTES - 500)
    for _ in range(40):
        resp = rpc(api, "SendMessage", {"message": on_task(task["id"], text)})
        again = resp.json()["result"]["task"]
        ParseDict(resp.json()["result"], SendMessageResponse())
        assert again["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert status_meta(again)[x.STATUS] == x.PAYMENT_REQUIRED
        assert len(again["history"]) == 1 and len(resp.content) < 16_000
    stored = A2aTask.objects.get(pk=task["id"])
    assert [m["parts"] for m in stored.history] == [[{"data": {"skill": BRIEF_SKU}}]]
    assert stored.state == "input-required" and stored.price_atomic == 80_000
    assert row_bytes(task["id"]) == before
    # A new task with an oversized first message is refused before any task exists.
    resp = rpc(api, "SendMessage", {"message": data_message(BRIEF_SKU, None, extensions=["z" * 40_000])})
    assert resp.json()["error"]["code"] == -32602 and A2aTask.objects.count() == 1
    assert Payment.objects.count() == 0 and LedgerEntry.objects.count() == 0


def test_a_task_at_its_bounds_answers_the_protocols_error_and_its_row_stays_bounded(api):
    key, account = keyed_account(api)
    limit_bytes, limit_messages = settings.A2A_TASK_MAX_BYTES, settings.A2A_TASK_MAX_MESSAGES
    # Messages near the message bound, each stored (a keyed payment attempt): the bytes bound ends it.
    task = send(api, BRIEF_SKU)
    text = "z" * (settings.A2A_MESSAGE_MAX_BYTES - 500)
    answers = []
    for _ in range(40):
        resp = rpc(api, "SendMessage", {"message": on_task(task["id"], text)}, HTTP_X_API_KEY=key)
        answers.append(resp)
        if "error" in resp.json():
            break
    refused = answers[-1].json()["error"]
    assert refused["code"] == -32004 and "has reached its bounds" in refused["message"]
    details = error_info(refused)
    assert (details["max_bytes"], details["max_messages"]) == (str(limit_bytes), str(limit_messages))
    stored = A2aTask.objects.get(pk=task["id"])
    assert 1 < len(stored.history) < limit_messages
    assert history_bytes(stored.history) <= limit_bytes
    assert max(len(r.content) for r in answers) < limit_bytes + 32_000
    # Refused again, as often as asked, without a write.
    updated = stored.updated_at
    for _ in range(5):
        again = rpc(api, "SendMessage", {"message": on_task(task["id"], text)}, HTTP_X_API_KEY=key)
        assert again.json()["error"]["code"] == -32004
        again = rpc(api, "SendMessage", {"message": on_task(task["id"], text)})  # unpaid, too
        assert again.json()["error"]["code"] == -32004
    assert A2aTask.objects.get(pk=task["id"]).updated_at == updated
    # Small messages: the count bound ends it.
    task = send(api, BRIEF_SKU)
    for n in range(40):
        resp = rpc(api, "SendMessage", {"message": on_task(task["id"])}, HTTP_X_API_KEY=key).json()
        if "error" in resp:
            break
        assert len(resp["result"]["task"]["history"]) == n + 2
    assert resp["error"]["code"] == -32004
    stored = A2aTask.objects.get(pk=task["id"])
    assert len(stored.history) == limit_messages - 1 and stored.state == "input-required"
    # Nothing was charged for any of it.
    account.refresh_from_db()
    assert account.credit_balance_atomic == 0
    assert not LedgerEntry.objects.filter(kind=LedgerEntry.Kind.SKU_CALL).exists()


def test_history_length_is_honoured_on_send_and_get(api):
    key, _ = keyed_account(api)
    task = send(api, BRIEF_SKU)
    for n in range(3):
        rpc(api, "SendMessage", {"message": on_task(task["id"], f"attempt {n}")}, HTTP_X_API_KEY=key)
    assert len(A2aTask.objects.get(pk=task["id"]).history) == 4

    def sent(config: dict[str, Any], method: str = "SendMessage") -> Any:
        params = {"message": on_task(task["id"], "last"), "configuration": config}
        return rpc(api, method, params, HTTP_X_API_KEY=key).json()

    history = sent({"historyLength": 2})["result"]["task"]["history"]
    assert [m["parts"][0]["text"] for m in history] == ["attempt 2", "last"]
    assert sent({"historyLength": 0})["result"]["task"].get("history") is None
    assert sent({"historyLength": -1})["error"]["code"] == -32602
    got = rpc(api, "GetTask", {"id": task["id"], "historyLength": 1}).json()["result"]
    assert [m["parts"][0]["text"] for m in got["history"]] == ["last"]
    assert rpc(api, "GetTask", {"id": task["id"], "historyLength": -3}).json()["error"]["code"] == -32602
    # The refused send (historyLength -1) was refused before it reached the task.
    assert len(rpc(api, "GetTask", {"id": task["id"]}).json()["result"]["history"]) == 6
    # 0.3: message/send's configuration.historyLength and tasks/get's historyLength.
    legacy = {
        "kind": "message",
        "messageId": uuid.uuid4().hex,
        "role": "user",
        "taskId": task["id"],
        "parts": [{"kind": "text", "text": "legacy"}],
    }
    result = rpc(
        api, "message/send", {"message": legacy, "configuration": {"historyLength": 1}}, HTTP_X_API_KEY=key
    ).json()["result"]
    assert [m["parts"][0]["text"] for m in result["history"]] == ["legacy"]
    assert rpc(api, "tasks/get", {"id": task["id"], "historyLength": -1}).json()["error"]["code"] == -32602


def test_a_pending_settlement_retried_is_stored_once(api, monkeypatch):
    """The payer retries a payment whose settlement is pending, as told to: the exchange is in
    the history once, however often it is retried."""
    pending = SettlementPending(
        "broadcast, not confirmed yet", extra={"transaction": "0x" + "ab" * 32, "retry_after": 5}
    )
    monkeypatch.setattr(front_schemes, "proof_decode_object", lambda raw: SimpleNamespace())
    monkeypatch.setattr(front_schemes, "x402_payment", lambda **kwargs: SimpleNamespace())

    def still_pending(**kwargs: Any) -> Any:
        raise pending

    monkeypatch.setattr(front_sell, "paid_call", still_pending)
    task = send(api, BRIEF_SKU)
    metadata = {x.STATUS: x.PAYMENT_SUBMITTED, x.PAYLOAD: {"x402Version": 2, "payload": {}}}
    for _ in range(10):
        answer = rpc(api, "SendMessage", {"message": on_task(task["id"], "paid", metadata=metadata)}).json()
        assert status_meta(answer["result"]["task"])[x.STATUS] == x.PAYMENT_VERIFIED
    stored = A2aTask.objects.get(pk=task["id"])
    assert stored.state == "input-required" and len(stored.history) == 3


def test_the_store_keeps_the_bounds_whatever_writes(settings):
    settings.A2A_TASK_MAX_MESSAGES, settings.A2A_TASK_MAX_BYTES = 5, 3_000
    task = a2a_task_create(agent="agenthub", skill=BRIEF_SKU, context_id="c", params={}, state="working")
    messages = [{"messageId": str(n), "parts": [{"text": "m" * 400}]} for n in range(12)]
    saved = a2a_task_save(task=task, state="input-required", messages=messages, status_message=None)
    assert [m["messageId"] for m in saved.history] == ["7", "8", "9", "10", "11"]
    big = [{"messageId": str(n), "parts": [{"text": "m" * 1_000}]} for n in range(4)]
    saved = a2a_task_save(task=task, state="input-required", messages=big, status_message=None)
    assert [m["messageId"] for m in saved.history] == ["2", "3"]
    assert history_bytes(A2aTask.objects.get(pk=task.pk).history) <= 3_000
    # An unpaid repeat refreshing the requirements of a task another request has meanwhile
    # claimed (to pay it) leaves the task as the payer leaves it.
    stale = A2aTask.objects.get(pk=task.pk)
    assert a2a_task_claim(task=A2aTask.objects.get(pk=task.pk))
    refreshed = a2a_task_requirements_refresh(task=stale, status_message={"x": 1}, price_atomic=1)
    assert refreshed.state == "working" and A2aTask.objects.get(pk=task.pk).state == "working"


def test_old_tasks_and_answer_records_are_pruned_and_recent_ones_kept(settings):
    """Anyone may open tasks: each is bounded above, and their number by the pruning pass."""
    from datetime import timedelta

    from django.utils import timezone

    from agents.models import AgentInteraction
    from agents.services import agent_interaction_record
    from catalog.feeds.retention import feeds_prune

    settings.A2A_TASK_RETENTION_DAYS = 7
    settings.AGENT_INTERACTION_RETENTION_DAYS = 7
    made = [
        a2a_task_create(agent="agenthub", skill=BRIEF_SKU, context_id="c", params={}, state="input-required")
        for _ in range(3)
    ]
    answers = [agent_interaction_record(agent="agenthub", surface="jsonrpc", status_code=200) for _ in range(3)]
    long_ago = timezone.now() - timedelta(days=8)
    A2aTask.objects.filter(pk__in=[t.pk for t in made[:2]]).update(created_at=long_ago)
    AgentInteraction.objects.filter(pk=answers[0].pk).update(at=long_ago)

    deleted = feeds_prune()

    assert deleted["agents.A2aTask"] == 2 and deleted["agents.AgentInteraction"] == 1
    assert list(A2aTask.objects.values_list("pk", flat=True)) == [made[2].pk]
    assert set(AgentInteraction.objects.values_list("pk", flat=True)) == {a.pk for a in answers[1:]}
