"""A2A: the agent cards (1.0 and 0.3, validated by a2a-sdk), the JSON-RPC endpoints of the hub
and the catalog agents, free skills, paid skills by credits (X-API-Key) or by the a2a-x402
extension v0.2 (input-required with the REST 402's requirements, then the signed payload on
the same task), stored tasks (GetTask), 0.3 method names and the JSON-RPC error codes."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.compat.v0_3 import types as types_v03
from a2a.types import AgentCard, Task
from a2a.utils.proto_utils import validate_proto_required_fields
from eth_account import Account as EthAccount
from google.protobuf.json_format import ParseDict
from x402 import x402ClientSync
from x402.http.utils import decode_payment_required_header
from x402.mechanisms.evm.exact.register import register_exact_evm_client
from x402.schemas import PaymentRequired

from agents.a2a import extension as x
from agents.discovery.views import FREE_CAPABILITIES
from agents.intent import understand
from agents.models import A2aTask, AgentInteraction
from billing.chain.localchain import DEMO_PAYER, dev_account
from billing.credits import credit_add
from billing.models import Account, LedgerEntry, Payment
from catalog.models import NewsItem, Sku
from catalog.selectors.skus import live_skus
from tests.support.a2a_rpc import BRIEF_SKU, HUB, data_message, rpc, send, status_meta
from tests.support.wallets import register_over_http

pytestmark = pytest.mark.django_db
BRIEF_REST = "/api/a2a/x402/morning-brief"


def signer() -> x402ClientSync:
    return register_exact_evm_client(x402ClientSync(), dev_account(DEMO_PAYER))


# --- cards -------------------------------------------------------------------------------------
def test_the_1_0_card_is_a_valid_a2a_card_with_jsonrpc_skills_api_key_and_the_x402_extension(api):
    body = api.get("/.well-known/agent-card.json").json()
    card = ParseDict(body, AgentCard())  # strict: an unknown field or a wrong type raises
    validate_proto_required_fields(card)
    first = card.supported_interfaces[0]
    assert (first.url, first.protocol_binding, first.protocol_version) == (
        "http://testserver/api/a2a/agenthub",
        "JSONRPC",
        "1.0",
    )
    assert [(i.protocol_binding, i.protocol_version) for i in card.supported_interfaces[1:]] == [
        ("JSONRPC", "0.3.0")
    ]
    ext = list(card.capabilities.extensions)
    assert [(e.uri, e.required) for e in ext] == [
        ("https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2", False)
    ]
    scheme = card.security_schemes["apiKey"].api_key_security_scheme
    assert (scheme.location, scheme.name) == ("header", "X-API-Key")
    ids = [s.id for s in card.skills]
    assert ids == [x.sku for x in live_skus()] + list(FREE_CAPABILITIES)
    brief = next(s for s in card.skills if s.id == BRIEF_SKU)
    price = Sku.objects.get(sku=BRIEF_SKU).price_usdc
    assert f"{price:g} USDC" in brief.description and {"paid", "x402"} <= set(brief.tags)
    assert brief.examples[1] == 'data part: {"skill":"morning_brief"}'
    news = next(s for s in card.skills if s.id == "news_catalog")
    assert "free" in news.tags and news.examples == ['data part: {"skill":"news_catalog"}']
    unlock = next(s for s in card.skills if s.id == "news_unlock")
    assert json.loads(unlock.examples[1].removeprefix("data part: "))["params"] == {"news_id": "<integer>"}
    assert parse_agent_card(body) == card  # what the a2a-sdk client reads


def test_the_0_3_card_is_a_valid_0_3_card_of_the_same_agent(api):
    v1 = api.get("/.well-known/agent-card.json").json()
    body = api.get("/.well-known/agent.json").json()
    card = types_v03.AgentCard.model_validate(body)
    assert card.url == "http://testserver/api/a2a/agenthub" and card.protocol_version == "0.3.0"
    assert card.preferred_transport == "JSONRPC" and card.capabilities.streaming is False
    assert [e.uri for e in card.capabilities.extensions or []] == [x.X402_EXTENSION_URI]
    key = card.security_schemes["apiKey"].root
    assert (key.type, key.in_.value, key.name) == ("apiKey", "header", "X-API-Key")
    assert [s.id for s in card.skills] == [s["id"] for s in v1["skills"]]
    assert "null" not in json.dumps(body)
    # The a2a-sdk client reads the 0.3 card too, and picks the 0.3 interface of the same URL.
    parsed = parse_agent_card(body)
    assert parsed.supported_interfaces[0].protocol_version == "0.3.0" and parsed.name == v1["name"]


# --- free skills ---------------------------------------------------------------------------------
def test_a_free_skill_completes_with_the_rest_routes_data(api):
    for n in range(3):
        NewsItem.objects.create(title=f"Item {n}", teaser=f"teaser {n}", body="b", category="crypto")
    task = send(api, "news_catalog")
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    [artifact] = task["artifacts"]
    content = artifact["parts"][0]["data"]
    assert content == api.get("/api/a2a/news/catalog").json()
    assert [i["title"] for i in content["items"]] == ["Item 2", "Item 1", "Item 0"]
    assert isinstance(content["items"][0]["id"], int)  # integers stay integers through the protobuf Struct
    stored = A2aTask.objects.get(pk=task["id"])
    assert (stored.agent, stored.skill, stored.state) == ("agenthub", "news_catalog", "completed")
    seen = AgentInteraction.objects.get()
    assert (seen.agent, seen.surface, seen.skill, seen.status_code) == (
        "agenthub",
        "jsonrpc",
        "news_catalog",
        200,
    )


def test_a_body_without_jsonrpc_is_still_chat(api):
    resp = api.post(HUB, {"message": "news digest please"}, format="json")
    assert resp.status_code == 200 and "reply" in resp.json() or "message" in resp.json(), resp.json()
    assert "jsonrpc" not in resp.json()


# --- paid skills ---------------------------------------------------------------------------------
def test_an_unpaid_paid_skill_is_input_required_with_the_rest_402s_requirements(api, brief):
    task = send(api, BRIEF_SKU)
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    meta = status_meta(task)
    assert meta[x.STATUS] == x.PAYMENT_REQUIRED
    required = PaymentRequired.model_validate(meta[x.REQUIRED])
    rest = api.get(BRIEF_REST)
    assert rest.status_code == 402
    rest_required = decode_payment_required_header(rest["PAYMENT-REQUIRED"])
    ours, theirs = required.accepts[0], rest_required.accepts[0]
    assert (ours.amount, ours.pay_to, ours.asset, ours.network, ours.scheme) == (
        theirs.amount,
        theirs.pay_to,
        theirs.asset,
        theirs.network,
        theirs.scheme,
    )
    assert ours.amount == str(Sku.objects.get(sku=BRIEF_SKU).price_atomic) == "80000"
    assert required.x402_version == 2 and required.resource.url == "http://testserver" + BRIEF_REST
    stored = A2aTask.objects.get(pk=task["id"])
    assert stored.state == "input-required" and stored.price_atomic == 80_000
    assert AgentInteraction.objects.get().status_code == 402
    assert Payment.objects.count() == 0


def test_text_is_understood_into_a_skill(api, brief):
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "the morning brief please"}]}
    task = rpc(api, "SendMessage", {"message": message}).json()["result"]["task"]
    # The one text-to-SKU function decides (agents/intent.py); this endpoint sells what it says.
    understood = understand("the morning brief please").sku
    assert understood and understood.startswith("morning_brief")
    assert task["metadata"]["skill"] == understood and task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    # Words that name nothing: a message listing the skills, no task.
    vague = {"messageId": "m2", "role": "ROLE_USER", "parts": [{"text": "zzqx"}]}
    reply = rpc(api, "SendMessage", {"message": vague}).json()["result"]["message"]
    assert BRIEF_SKU in reply["parts"][1]["data"]["skills"] and A2aTask.objects.count() == 1


def credit_account(api, atomic: int) -> tuple[str, Account]:
    wallet = EthAccount.create()
    key = register_over_http(api, wallet).json()["api_key"]
    account = Account.objects.get(wallet_address=wallet.address.lower())
    credit_add(account_id=account.id, amount_atomic=atomic, kind=LedgerEntry.Kind.ADJUSTMENT, reason="test")
    return key, account


def test_an_api_key_pays_from_credits_exactly_the_price_with_one_ledger_row(api, brief):
    key, account = credit_account(api, 1_000_000)
    task = send(api, BRIEF_SKU, HTTP_X_API_KEY=key)
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    content = task["artifacts"][0]["parts"][0]["data"]
    assert content["body"] == "The full brief: rates, CPI, FX."
    account.refresh_from_db()
    assert account.credit_balance_atomic == 1_000_000 - 80_000
    [row] = LedgerEntry.objects.filter(account=account, kind=LedgerEntry.Kind.SKU_CALL)
    assert row.amount_atomic == -80_000 and row.reference == f"a2a task {task['id']}"
    assert status_meta(task)["credits"] == {"rail": "credits", "charged_usdc": 0.08, "balance_usdc": 0.92}
    stored = A2aTask.objects.get(pk=task["id"])
    assert stored.account == account and stored.payer == account.wallet_address


def test_not_enough_credit_asks_for_x402_instead_and_charges_nothing(api, brief):
    key, account = credit_account(api, 10_000)
    task = send(api, BRIEF_SKU, HTTP_X_API_KEY=key)
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert status_meta(task)[x.STATUS] == x.PAYMENT_REQUIRED
    assert "not enough credit" in task["status"]["message"]["parts"][0]["text"]
    account.refresh_from_db()
    assert account.credit_balance_atomic == 10_000
    # Topped up, the same task is paid by a message with the key.
    credit_add(account_id=account.id, amount_atomic=100_000, kind=LedgerEntry.Kind.ADJUSTMENT, reason="test")
    message = {"messageId": "pay", "role": "ROLE_USER", "taskId": task["id"], "parts": [{"text": "pay"}]}
    done = rpc(api, "SendMessage", {"message": message}, HTTP_X_API_KEY=key).json()["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED" and done["id"] == task["id"]
    account.refresh_from_db()
    assert account.credit_balance_atomic == 110_000 - 80_000


def test_an_unknown_api_key_is_401_and_leaves_no_task(api, brief):
    resp = rpc(api, "SendMessage", {"message": data_message(BRIEF_SKU)}, HTTP_X_API_KEY="nope")
    assert resp.status_code == 401 and resp.json()["error"]["code"] == -32600
    assert A2aTask.objects.count() == 0 and AgentInteraction.objects.get().status_code == 401


def submit(api, task_id: str, payload: Any, **headers: str) -> dict[str, Any]:
    message = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "taskId": task_id,
        "parts": [{"text": "Here is the payment authorization."}],
        "metadata": {x.STATUS: x.PAYMENT_SUBMITTED, x.PAYLOAD: payload},
    }
    return rpc(api, "SendMessage", {"message": message}, **headers).json()


def test_a_refused_payment_fails_the_task_with_the_extensions_error_code_and_charges_nothing(api, brief):
    task = send(api, BRIEF_SKU)
    required = PaymentRequired.model_validate(status_meta(task)[x.REQUIRED])
    wrong = required.model_copy(update={"accepts": [required.accepts[0].model_copy(update={"amount": "1"})]})
    payload = signer().set_spend_controls(False).create_payment_payload(wrong)
    failed = submit(api, task["id"], payload.model_dump(mode="json", by_alias=True, exclude_none=True))[
        "result"
    ]
    meta = status_meta(failed["task"])
    assert failed["task"]["status"]["state"] == "TASK_STATE_FAILED"
    assert (meta[x.STATUS], meta[x.ERROR]) == (x.PAYMENT_FAILED, x.INVALID_AMOUNT)
    assert meta[x.RECEIPTS][0]["success"] is False and meta["charged"] is False
    assert Payment.objects.count() == 0
    # Garbage in the payload: refused as unverifiable, on a new task.
    other = send(api, BRIEF_SKU)
    bad = submit(api, other["id"], {"x402Version": 2, "payload": "nope"})["result"]["task"]
    assert status_meta(bad)[x.ERROR] == x.INVALID_SIGNATURE
    # A submission without the payload object is the caller's invalid params; the task still waits.
    third = send(api, BRIEF_SKU)
    missing = submit(api, third["id"], "not an object")
    assert missing["error"]["code"] == -32602
    assert A2aTask.objects.get(pk=third["id"]).state == "input-required"


def test_declining_or_canceling_a_payment_cancels_the_task(api, brief):
    task = send(api, BRIEF_SKU)
    message = {
        "messageId": "no",
        "role": "ROLE_USER",
        "taskId": task["id"],
        "parts": [{"text": "too expensive"}],
        "metadata": {x.STATUS: x.PAYMENT_REJECTED},
    }
    declined = rpc(api, "SendMessage", {"message": message}).json()["result"]["task"]
    assert declined["status"]["state"] == "TASK_STATE_CANCELED"
    other = send(api, BRIEF_SKU)
    canceled = rpc(api, "CancelTask", {"id": other["id"]}).json()["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    again = rpc(api, "CancelTask", {"id": other["id"]}).json()
    assert again["error"]["code"] == -32002


def test_get_task_returns_the_stored_task(api, brief):
    task = send(api, BRIEF_SKU)
    got = rpc(api, "GetTask", {"id": task["id"]}).json()["result"]
    ParseDict(got, Task())
    assert got["id"] == task["id"] and got["status"] == task["status"]
    assert [m["role"] for m in got["history"]] == ["ROLE_USER"]
    assert got["history"][0]["parts"] == [{"data": {"skill": BRIEF_SKU}}]
    assert rpc(api, "GetTask", {"id": task["id"], "historyLength": 0}).json()["result"].get("history") is None
    # Another endpoint's task is not this one's.
    other = rpc(api, "GetTask", {"id": task["id"]}, path="/api/a2a/agents/news").json()
    assert other["error"]["code"] == -32001


def test_a_catalog_agent_answers_json_rpc_and_understands_within_its_skus(api):
    NewsItem.objects.create(title="Item", teaser="t", body="b", category="crypto")
    task = send_path = rpc(
        api, "SendMessage", {"message": data_message("news_catalog")}, path="/api/a2a/agents/news"
    ).json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert A2aTask.objects.get(pk=send_path["id"]).agent == "news"
    assert AgentInteraction.objects.get().agent == "news"
    assert rpc(api, "GetTask", {"id": "x"}, path="/api/a2a/agents/unknown-agent").status_code == 404


# --- 0.3 ------------------------------------------------------------------------------------------
def test_0_3_method_names_and_shapes_work(api, brief):
    message = {
        "kind": "message",
        "messageId": "m-03",
        "role": "user",
        "parts": [{"kind": "data", "data": {"skill": BRIEF_SKU}}],
    }
    result = rpc(api, "message/send", {"message": message}).json()["result"]
    task = types_v03.Task.model_validate(result)
    assert task.kind == "task" and task.status.state.value == "input-required"
    assert task.status.message.metadata[x.STATUS] == x.PAYMENT_REQUIRED
    assert task.status.message.metadata[x.REQUIRED]["accepts"][0]["amount"] == "80000"
    got = types_v03.Task.model_validate(rpc(api, "tasks/get", {"id": task.id}).json()["result"])
    assert got.id == task.id and got.status.state.value == "input-required"
    free = dict(message, messageId="m-free", parts=[{"kind": "data", "data": {"skill": "telemetry_status"}}])
    done = types_v03.Task.model_validate(rpc(api, "message/send", {"message": free}).json()["result"])
    assert done.status.state.value == "completed" and done.artifacts[0].parts[0].root.kind == "data"
    missing = rpc(api, "tasks/get", {"id": str(uuid.uuid4())}).json()
    assert missing["error"]["code"] == -32001 and missing["id"] == 1


# --- errors ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "body,code",
    [
        (b'{"jsonrpc": "2.0", "method": "SendMessage", "params": {', -32700),
        (b'[{"jsonrpc": "2.0", "method": "GetTask", "id": 1}]', -32600),
        (b'{"jsonrpc": "1.0", "method": "GetTask", "id": 1}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1}', -32600),
        (b'{"jsonrpc": "2.0", "method": "GetTask", "id": {"x": 1}}', -32600),
        (b'{"jsonrpc": "2.0", "method": "tasks/teleport", "id": 1}', -32601),
        (b'{"jsonrpc": "2.0", "method": "SendStreamingMessage", "id": 1, "params": {}}', -32601),
        (b'{"jsonrpc": "2.0", "method": "SendMessage", "id": 1, "params": []}', -32602),
        (b'{"jsonrpc": "2.0", "method": "SendMessage", "id": 1, "params": {}}', -32602),
        (b'{"jsonrpc": "2.0", "method": "SendMessage", "id": 1, "params": {"message": {"role": 7}}}', -32602),
        (
            b'{"jsonrpc": "2.0", "method": "SendMessage", "id": 1, "params": {"message": {"parts": []}}}',
            -32602,
        ),
        (
            b'{"jsonrpc": "2.0", "method": "message/send", "id": 1, "params": {"message": {"role": "x"}}}',
            -32602,
        ),
        (b'{"jsonrpc": "2.0", "method": "GetTask", "id": 1, "params": {}}', -32602),
        (b'{"jsonrpc": "2.0", "method": "GetTask", "id": 1, "params": {"id": "not-a-task"}}', -32001),
        (b'{"jsonrpc": "2.0", "method": "GetTask", "id": 1, "params": {"id": "\\u0000"}}', -32602),
        (b'{"jsonrpc": "2.0", "method": "GetTask", "id": 1, "params": {"id": 5}}', -32602),
    ],
)
def test_bad_json_rpc_gets_the_right_error_code_never_a_500(api, body, code):
    resp = api.generic("POST", HUB, body, content_type="application/json")
    assert resp.status_code == 200, resp.content
    error = resp.json()["error"]
    assert error["code"] == code, error
    assert AgentInteraction.objects.get().status_code < 500


@pytest.mark.parametrize(
    "data,code",
    [
        ({"skill": "no_such_skill"}, -32602),
        ({"skill": "news_unlock", "params": {"news_id": "seven"}}, -32602),
        ({"skill": "news_unlock", "params": "seven"}, -32602),
        ({"skill": 7}, -32602),
    ],
)
def test_an_unknown_skill_or_bad_params_is_invalid_params(api, data, code):
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": data}]}
    error = rpc(api, "SendMessage", {"message": message}).json()["error"]
    assert error["code"] == code and A2aTask.objects.count() == 0


def test_a_task_of_another_id_is_not_found_and_a_completed_task_takes_no_more_messages(api):
    missing = send_msg = rpc(
        api, "SendMessage", {"message": data_message("news_catalog", taskId=str(uuid.uuid4()))}
    )
    assert missing.json()["error"]["code"] == -32001 and send_msg.status_code == 200
    task = send(api, "news_catalog")
    again = rpc(api, "SendMessage", {"message": data_message("news_catalog", taskId=task["id"])}).json()
    assert again["error"]["code"] == -32004


def test_a_product_with_nothing_to_sell_fails_the_task_uncharged(api):
    key, account = credit_account(api, 1_000_000)
    task = send(api, BRIEF_SKU, HTTP_X_API_KEY=key)  # no brief published: nothing to sell
    assert task["status"]["state"] == "TASK_STATE_FAILED", task
    assert status_meta(task)["charged"] is False
    account.refresh_from_db()
    assert account.credit_balance_atomic == 1_000_000
    assert not LedgerEntry.objects.filter(account=account, kind=LedgerEntry.Kind.SKU_CALL).exists()
    assert AgentInteraction.objects.filter(skill=BRIEF_SKU).get().status_code == 503


def test_the_activated_x402_extension_is_echoed(api):
    activated = rpc(api, "GetTask", {"id": "x"}, HTTP_X_A2A_EXTENSIONS=x.X402_EXTENSION_URI)
    assert activated["A2A-Extensions"] == x.X402_EXTENSION_URI
    assert "A2A-Extensions" not in rpc(api, "GetTask", {"id": "x"})


@pytest.mark.parametrize(
    "message",
    [
        {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": ["skill"]}]},
        {
            "messageId": "m",
            "role": "ROLE_USER",
            "parts": [{"data": {"skill": "news_catalog", "params": None}}],
        },
        {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": ""}]},
        {"messageId": "m", "role": "ROLE_USER", "parts": [{"url": "https://example.com/x"}]},
        {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}], "metadata": {x.STATUS: 7}},
    ],
)
def test_odd_messages_are_answered_never_a_500(api, message):
    resp = rpc(api, "SendMessage", {"message": message})
    assert resp.status_code == 200 and ("result" in resp.json() or "error" in resp.json())
    assert AgentInteraction.objects.get().status_code < 500


def test_a_body_too_large_is_refused_not_a_500(api, settings):
    settings.API_MAX_BODY_BYTES = 1000
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x" * 2000}})
    resp = api.generic("POST", HUB, body.encode(), content_type="application/json")
    assert resp.status_code == 413 and resp.json()["error"]["code"] == -32600
    # Django's own cap, if lower, is the limit.
    settings.API_MAX_BODY_BYTES, settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000, 1000
    resp = api.generic("POST", HUB, body.encode(), content_type="application/json")
    assert resp.status_code == 413 and resp.json()["error"]["code"] == -32600
    assert "larger than 1000 bytes" in resp.json()["error"]["message"]


def test_a_message_sent_again_is_answered_again_and_charged_once(api, brief):
    key, account = credit_account(api, 1_000_000)
    message = data_message(BRIEF_SKU)
    first = rpc(api, "SendMessage", {"message": message}, HTTP_X_API_KEY=key).json()["result"]["task"]
    again = rpc(api, "SendMessage", {"message": message}, HTTP_X_API_KEY=key).json()["result"]["task"]
    assert first["status"]["state"] == again["status"]["state"] == "TASK_STATE_COMPLETED"
    assert first["artifacts"][0]["parts"] == again["artifacts"][0]["parts"]
    assert status_meta(again)["credits"] == {
        "rail": "credits",
        "charged_usdc": 0,
        "balance_usdc": 0.92,
        "replay": True,
    }
    account.refresh_from_db()
    assert account.credit_balance_atomic == 1_000_000 - 80_000
    assert LedgerEntry.objects.filter(account=account, kind=LedgerEntry.Kind.SKU_CALL).count() == 1
    # The same messageId for another call is refused, uncharged.
    other = dict(data_message("news_unlock", {"news_id": 1}), messageId=message["messageId"])
    NewsItem.objects.create(id=1, title="t", teaser="t", body="b", category="crypto")
    reused = rpc(api, "SendMessage", {"message": other}, HTTP_X_API_KEY=key).json()["result"]["task"]
    assert (
        reused["status"]["state"] == "TASK_STATE_FAILED"
        and "messageId" in reused["status"]["message"]["parts"][0]["text"]
    )
    account.refresh_from_db()
    assert account.credit_balance_atomic == 1_000_000 - 80_000
