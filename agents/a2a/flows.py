"""What a message does to a task: a free skill completes at once; a paid skill asks for payment
(input-required, a2a-x402 v0.2 standalone flow) unless the request carries an X-API-Key
(credits); a payment submitted on the task's id is verified, the product runs, the payment
settles and the task completes with the artifact and the receipts. Every payment goes through
the payment front (billing/front/, around the one paid call billing/paid_call.py): nothing
charged for a failed product, no proof used twice. This module only says where A2A carries
the payment and turns the front's result into the task's state.

Tasks and messages are kept in A2A 1.0 JSON (proto JSON names); agents/a2a/rpc.py turns them
into the protocol version the caller speaks."""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from a2a.types import Message
from a2a.utils.errors import InvalidParamsError, TaskNotCancelableError, UnsupportedOperationError
from django.conf import settings
from rest_framework.request import Request
from x402.extensions.sign_in_with_x import SIGN_IN_WITH_X
from x402.schemas import SettleResponse

from a2a_service.core.errors import ApiError, NotFound, ProductUnavailable, RequestValidationError
from a2a_service.core.money import usdc_from_atomic
from agents.a2a import extension as x
from agents.a2a.proto import plain_json, to_json
from agents.a2a.skills import Asked, agent_answers, agent_skills, asked_skill, is_free, skills_all
from agents.a2a.store import (
    a2a_task_claim,
    a2a_task_create,
    a2a_task_has_room,
    a2a_task_requirements_refresh,
    a2a_task_save,
    history_bytes,
    message_bytes,
)
from agents.discovery.views import FREE_CAPABILITIES
from agents.models import A2aTask
from billing.front import Brought, Charge, Refused, Sale, Sold, key_account, payment_choose, payment_sell
from billing.front.schemes import IDEMPOTENCY_KEY_MAX
from billing.models import Account
from billing.paid_call import Offer, paid_offer
from billing.x402.challenge import Challenge, challenge_required_json
from billing.x402.signin import HEADER as SIGN_IN_HEADER
from catalog.models import CatalogAgent
from catalog.selectors.payment import absolute

State = A2aTask.State
# Credit calls are made idempotent by the message's id (billing.models.IdempotentCall keys).
IDEMPOTENCY_PREFIX = "a2a-message:"
REUSED = "this messageId was first sent for another call; nothing was charged. Send a new messageId."


@dataclass
class Ctx:
    """One JSON-RPC request: who is asked, by whom, and what it came to (for AgentInteraction)."""

    request: Request
    agent: str  # a catalog agent's slug, or "agenthub"
    catalog_agent: CatalogAgent | None
    base: str
    # The HTTP-equivalent outcome: 200 answered, 402 payment asked or refused, 503 unavailable.
    status: int = 200
    skill: str = ""

    @property
    def api_key(self) -> str:
        return str(self.request.headers.get("X-API-Key", "")).strip()

    @property
    def sign_in(self) -> str:
        """A sign-in-with-x message signed for the task's 402 (billing/front/signin.py), as an
        HTTP header."""
        return str(self.request.headers.get(SIGN_IN_HEADER, "")).strip()


# --- A2A objects (1.0 JSON) ------------------------------------------------------------------
def _text_message(task: A2aTask, text: str, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_AGENT",
        "taskId": str(task.id),
        "contextId": task.context_id,
        "parts": [{"text": text}],
    }
    if metadata:
        message["metadata"] = metadata
    return message


def _user_message(message: Message, task: A2aTask) -> dict[str, Any]:
    stored = plain_json(to_json(message))
    stored.update({"taskId": str(task.id), "contextId": task.context_id})
    return stored


def _artifact(task: A2aTask, content: Any, description: str) -> dict[str, Any]:
    return {
        "artifactId": uuid.uuid4().hex,
        "name": task.skill,
        "description": description,
        "parts": [{"data": content, "mediaType": "application/json"}],
    }


def help_message(ctx: Ctx, message: Message) -> dict[str, Any]:
    """The answer to a message that names no skill: a message (no task) listing the skills
    this endpoint answers (a catalog agent's own)."""
    agent = ctx.catalog_agent
    skills = [s.id for s in (agent_skills(agent) if agent is not None else skills_all())]
    reply: dict[str, Any] = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_AGENT",
        "parts": [
            {
                "text": "I could not tell which skill you want. Name one in a data part "
                '{"skill": "<skill id>", "params": {...}} (the agent card lists them), or ask in other words.'
            },
            {"data": {"skills": skills}, "mediaType": "application/json"},
        ],
    }
    if message.context_id:
        reply["contextId"] = message.context_id
    return reply


# --- the message ------------------------------------------------------------------------------
def send_message(ctx: Ctx, message: Message, *, task: A2aTask | None) -> A2aTask | dict[str, Any]:
    """A message: on a task (task given: its payment, or a decline), or a new request."""
    _check_message_size(message)
    if task is not None:
        ctx.skill = task.skill
        return _continue(ctx, task, message)
    asked = asked_skill(message, agent=ctx.catalog_agent)
    if asked is None:
        ctx.status = 422
        return help_message(ctx, message)
    ctx.skill = asked.skill
    agent = ctx.catalog_agent
    if agent is not None and not agent_answers(agent, asked.skill):
        listed = ", ".join(s.id for s in agent_skills(agent))
        raise InvalidParamsError(
            f"agent {agent.slug} does not sell skill {asked.skill!r}; its skills: {listed}. "
            f"The hub (/api/a2a/agenthub) answers every skill of /.well-known/agent-card.json"
        )
    return _start(ctx, asked, message)


def _check_message_size(message: Message) -> None:
    """A message larger than A2A_MESSAGE_MAX_BYTES is refused before it reaches a task."""
    size, limit = message_bytes(plain_json(to_json(message))), settings.A2A_MESSAGE_MAX_BYTES
    if size > limit:
        raise InvalidParamsError(
            f"the message is {size} bytes of JSON; a message is at most {limit} bytes (A2A_MESSAGE_MAX_BYTES)",
            # Error details are a google.rpc.ErrorInfo: its metadata values are strings.
            data={"size": str(size), "limit": str(limit)},
        )


def _check_room(task: A2aTask, user: dict[str, Any]) -> None:
    """A task whose history has no room for the message and its answer takes no more messages
    (the protocol's error, nothing paid, nothing stored): it ends here instead of growing."""
    if a2a_task_has_room(task=task, message=user):
        return
    count, size = len(task.history), history_bytes(task.history)
    raise UnsupportedOperationError(
        f"task {task.id} has reached its bounds ({count} messages, {size} bytes of history; at most "
        f"{settings.A2A_TASK_MAX_MESSAGES} messages and {settings.A2A_TASK_MAX_BYTES} bytes): it takes no "
        "more messages; start a new task for a new call",
        data={
            "messages": str(count),
            "history_bytes": str(size),
            "max_messages": str(settings.A2A_TASK_MAX_MESSAGES),
            "max_bytes": str(settings.A2A_TASK_MAX_BYTES),
        },
    )


def _start(ctx: Ctx, asked: Asked, message: Message) -> A2aTask:
    context_id = message.context_id or uuid.uuid4().hex
    if is_free(asked.skill):
        content = FREE_CAPABILITIES[asked.skill](ctx.base).model_dump(mode="json", by_alias=True)
        task = a2a_task_create(
            agent=ctx.agent, skill=asked.skill, context_id=context_id, params={}, state=State.WORKING
        )
        return _complete(
            ctx,
            task,
            [_user_message(message, task)],
            content,
            text=f"{asked.skill}: free, here it is.",
            description=f"{asked.skill} (free)",
        )
    try:
        offer = _offer(asked.skill, asked.params, ctx.base)
    except ProductUnavailable as exc:
        task = a2a_task_create(
            agent=ctx.agent, skill=asked.skill, context_id=context_id, params=asked.params, state=State.WORKING
        )
        return _failed(ctx, task, [_user_message(message, task)], exc)
    if ctx.api_key:
        key_account(ctx.api_key)  # an unknown key is refused (401) without leaving a task behind
    params = offer.call.params.model_dump(mode="json") if offer.call.params is not None else {}
    task = a2a_task_create(
        agent=ctx.agent,
        skill=asked.skill,
        context_id=context_id,
        params=params,
        state=State.WORKING,
        price_atomic=offer.price,
        resource_url=_resource_url(ctx.base, offer),
    )
    user = [_user_message(message, task)]
    return _pay(ctx, task, offer, _brought(ctx, user), user)


def _continue(ctx: Ctx, task: A2aTask, message: Message) -> A2aTask:
    if task.state != State.INPUT_REQUIRED:
        # A completed task is never paid again: a payload sent twice is refused here, charged once.
        raise UnsupportedOperationError(
            f"task {task.id} is {task.state}: it takes no more messages; start a new task for a new call"
        )
    metadata = plain_json(to_json(message.metadata)) if message.HasField("metadata") else {}
    status = metadata.get(x.STATUS)
    user = [_user_message(message, task)]
    _check_room(task, user[0])
    if status == x.PAYMENT_REJECTED:
        if not a2a_task_claim(task=task):
            raise UnsupportedOperationError(f"task {task.id} is being paid by another request")
        return a2a_task_save(
            task=task,
            state=State.CANCELED,
            messages=user,
            status_message=_text_message(
                task,
                "Payment declined: the task is canceled, nothing was charged.",
                {x.STATUS: x.PAYMENT_REJECTED},
            ),
        )
    if status == x.PAYMENT_SUBMITTED:
        payload = metadata.get(x.PAYLOAD)
        if not isinstance(payload, dict):
            raise InvalidParamsError(
                f"{x.STATUS} is {x.PAYMENT_SUBMITTED} but {x.PAYLOAD} does not hold the signed x402 PaymentPayload"
            )
        return _claimed(ctx, task, user, _brought(ctx, user, payload))
    # A sign-in: the HTTP header, or the message's metadata (for clients without headers).
    in_metadata = metadata.get(SIGN_IN_WITH_X)
    sign_in = in_metadata if isinstance(in_metadata, str) else ctx.sign_in
    if ctx.api_key or sign_in:
        return _claimed(ctx, task, user, _brought(ctx, user, sign_in=sign_in))
    # Neither paid nor declined: the requirements again (at today's price), if there is
    # something to deliver. The message asks the task's question again, unpaid: it is not
    # stored, so repeating it grows nothing.
    try:
        offer = _offer(task.skill, task.params, ctx.base)
    except ApiError as exc:
        return _claimed_failed(ctx, task, exc)
    unpaid = payment_choose(brought=Brought(), sale=_sale(ctx, task, offer))
    assert isinstance(unpaid, Refused)
    if unpaid.kind != "unpaid" or unpaid.challenge is None:
        return _claimed_failed(ctx, task, unpaid)
    ctx.status = 402
    task.price_atomic = unpaid.challenge.price_atomic
    return a2a_task_requirements_refresh(
        task=task,
        status_message=_requirements_message(task, unpaid.challenge),
        price_atomic=unpaid.challenge.price_atomic,
    )


def _claimed_failed(ctx: Ctx, task: A2aTask, why: ApiError | Refused) -> A2aTask:
    if not a2a_task_claim(task=task):
        raise UnsupportedOperationError(f"task {task.id} is being paid by another request") from None
    return _failed(ctx, task, [], why)


def _claimed(ctx: Ctx, task: A2aTask, user: list[dict[str, Any]], brought: Brought) -> A2aTask:
    """Pay for an input-required task once: claim it (a second request for it is refused),
    prepare the call, pay; a crash in between puts the task back to input-required."""
    if not a2a_task_claim(task=task):
        raise UnsupportedOperationError(f"task {task.id} is being paid by another request")
    try:
        try:
            offer = _offer(task.skill, task.params, ctx.base)
        except ApiError as exc:
            return _failed(ctx, task, user, exc)
        return _pay(ctx, task, offer, brought, user)
    except BaseException:
        A2aTask.objects.filter(pk=task.pk, state=State.WORKING).update(state=State.INPUT_REQUIRED)
        raise


def _offer(skill: str, params: dict[str, Any], base: str) -> Offer:
    """The paid call prepared (billing/paid_call.py): an unknown skill or bad parameters are
    the caller's invalid params; a product with nothing to sell is ProductUnavailable."""
    try:
        return paid_offer(product=skill, params=params, base_url=base, params_in="params")
    except NotFound as exc:
        raise InvalidParamsError(
            f"unknown skill {skill!r} ({exc.detail}); the agent card at /.well-known/agent-card.json lists them"
        ) from None
    except RequestValidationError as exc:
        errors = [{"field": ".".join(str(p) for p in e["loc"]), "message": e["msg"]} for e in exc.errors]
        raise InvalidParamsError(f"invalid params for skill {skill}", data={"errors": errors}) from None


def _resource_url(base: str, offer: Offer) -> str:
    """The x402 resource a task's payment names: the SKU's own paid URL with the same
    parameters, so the REST route collects a payment whose settlement was still pending."""
    assert offer.sku is not None
    url = absolute(base, offer.sku.path)
    params = offer.call.params.model_dump(mode="json", exclude_none=True) if offer.call.params else {}
    return f"{url}?{urlencode(params, doseq=True)}" if params else url


# --- outcomes -------------------------------------------------------------------------------
def _ask_payment(
    ctx: Ctx,
    task: A2aTask,
    challenge: Challenge,
    user: list[dict[str, Any]],
    note: str = "",
    error: str = "payment_required",
) -> A2aTask:
    ctx.status = 402
    task.price_atomic = challenge.price_atomic
    return a2a_task_save(
        task=task,
        state=State.INPUT_REQUIRED,
        messages=user,
        status_message=_requirements_message(task, challenge, note, error),
    )


def _requirements_message(
    task: A2aTask, challenge: Challenge, note: str = "", error: str = "payment_required"
) -> dict[str, Any]:
    """The status message of a task waiting for payment: the price and the x402 requirements
    (the PaymentRequired of the SKU's REST 402, its PAYMENT-REQUIRED header, with its error:
    why a sign-in was refused, as the REST 402 says it)."""
    price = usdc_from_atomic(challenge.price_atomic)
    text = (
        f"{note}{task.skill} costs {price:g} USDC. Pay with the a2a-x402 extension: sign the requirements in "
        f"{x.REQUIRED} and send the PaymentPayload in {x.PAYLOAD} with {x.STATUS} {x.PAYMENT_SUBMITTED} "
        f"on task {task.id}; or send a message on this task with an X-API-Key header to pay from prepaid credits."
    )
    metadata = {x.STATUS: x.PAYMENT_REQUIRED, x.REQUIRED: challenge_required_json(challenge, error)}
    return _text_message(task, text, metadata)


def _complete(
    ctx: Ctx,
    task: A2aTask,
    user: list[dict[str, Any]],
    content: Any,
    *,
    text: str,
    description: str,
    metadata: dict[str, Any] | None = None,
    task_metadata: dict[str, Any] | None = None,
    payer: str = "",
    account: Account | None = None,
) -> A2aTask:
    ctx.status = 200
    status_message = _text_message(task, text, metadata)
    return a2a_task_save(
        task=task,
        state=State.COMPLETED,
        messages=[*user, status_message],
        status_message=status_message,
        artifacts=[_artifact(task, content, description)],
        metadata=task_metadata,
        payer=payer,
        account=account,
    )


def _failed(
    ctx: Ctx, task: A2aTask, user: list[dict[str, Any]], why: ApiError | Refused, *, detail: str = ""
) -> A2aTask:
    """A call that could not be sold (the product has nothing to sell, the SKU left the shop):
    the task fails, nothing was charged."""
    if isinstance(why, Refused):
        ctx.status, text, charged, retry = why.status, why.message, why.charged, why.retry_after
    else:
        ctx.status, text, charged = why.status_code, why.detail, bool(why.extra.get("charged", False))
        retry = why.extra.get("retry_after")
    metadata: dict[str, Any] = {"charged": charged}
    if retry is not None:  # nothing to deliver now: when to ask again
        metadata["retry_after"] = retry
    status_message = _text_message(task, detail or text, metadata)
    return a2a_task_save(
        task=task, state=State.FAILED, messages=[*user, status_message], status_message=status_message
    )


def _receipts(task: A2aTask, receipt: dict[str, Any]) -> list[dict[str, Any]]:
    """The task's settle responses so far, and this one (the extension's persistent history)."""
    earlier = task.metadata.get(x.RECEIPTS, [])
    return [*(earlier if isinstance(earlier, list) else []), receipt]


def _payment_failed(
    ctx: Ctx,
    task: A2aTask,
    user: list[dict[str, Any]],
    *,
    reason: str,
    text: str,
    state: str = State.FAILED,
    charged: bool = False,
) -> A2aTask:
    failure = SettleResponse(
        success=False, error_reason=reason, error_message=text, transaction="", network=settings.X402_NETWORK
    ).model_dump(mode="json", by_alias=True, exclude_none=True)
    receipts = _receipts(task, failure)
    metadata = {
        x.STATUS: x.PAYMENT_FAILED,
        x.ERROR: x.error_code(reason),
        x.RECEIPTS: receipts,
        "charged": charged,
    }
    status_message = _text_message(task, text, metadata)
    return a2a_task_save(
        task=task,
        state=state,
        messages=[*user, status_message],
        status_message=status_message,
        metadata={x.RECEIPTS: receipts},
    )


def _brought(
    ctx: Ctx, user: list[dict[str, Any]], payload: dict[str, Any] | None = None, *, sign_in: str = ""
) -> Brought:
    """What the message pays with: the a2a-x402 payload of its metadata, the request's X-API-Key.
    A message sent again (same messageId, as a client retrying after a lost answer does) is the
    same credit call: its Idempotency-Key answers it with the first call's content, charged once."""
    headers = {"X-API-Key": ctx.api_key, SIGN_IN_HEADER: sign_in or ctx.sign_in}
    message_id = str(user[-1].get("messageId", "")) if user else ""
    key = f"{IDEMPOTENCY_PREFIX}{message_id}"
    if message_id and len(key) <= IDEMPOTENCY_KEY_MAX:
        headers["Idempotency-Key"] = key
    return Brought(headers=headers, x402_payload=payload, proof_in="metadata")


def _sale(ctx: Ctx, task: A2aTask, offer: Offer) -> Sale:
    call = json.dumps([ctx.agent, task.skill, task.params], sort_keys=True, separators=(",", ":"))
    return Sale(
        offer=offer,
        resource_url=task.resource_url,
        reference=f"a2a task {task.id}",
        fingerprint=hashlib.sha256(call.encode()).hexdigest(),
        idempotency_path=ctx.request.path,
    )


def _pay(ctx: Ctx, task: A2aTask, offer: Offer, brought: Brought, user: list[dict[str, Any]]) -> A2aTask:
    """Sell the task's call through the payment front; its result becomes the task's state."""
    result = payment_sell(brought=brought, sale=_sale(ctx, task, offer))
    if isinstance(result, Sold):
        return _paid(ctx, task, offer, result, user)
    if result.kind == "unpaid" and result.challenge is not None:
        return _ask_payment(ctx, task, result.challenge, user)
    if result.scheme == "x402":
        return _x402_refused(ctx, task, result, user)
    if result.status == 401 and result.error is not None:
        raise result.error  # an unknown key: HTTP 401, the task untouched
    if result.status == 402 and result.challenge is not None:
        # Not enough credit, or a refused sign-in (its reason in the requirements' error, as the
        # REST 402 gives it): an x402 payment instead.
        error = result.code if result.asks_x402 else "payment_required"
        return _ask_payment(ctx, task, result.challenge, user, note=f"{result.message}. ", error=error)
    if result.status == 422:
        return _failed(
            ctx,
            task,
            user,
            RequestValidationError.single(["params", "message", "messageId"], REUSED, "message_id_reused"),
            detail=REUSED,
        )
    return _failed(ctx, task, user, result)


def _x402_refused(ctx: Ctx, task: A2aTask, refused: Refused, user: list[dict[str, Any]]) -> A2aTask:
    """An x402 payment that did not complete the task (billing/rails/x402.py says why it may not)."""
    ctx.status = refused.status
    if refused.kind == "rejected":
        return _payment_failed(ctx, task, user, reason=refused.code, text=f"Payment refused: {refused.message}")
    if refused.kind == "pending" and refused.error is not None:
        # Paid, not confirmed yet: the same payload on this task collects it once it confirms.
        extra = refused.error.extra
        status_message = _text_message(
            task,
            f"{refused.message}. Send the same {x.PAYLOAD} on task {task.id} again in "
            f"{extra.get('retry_after', 5)} seconds.",
            {
                x.STATUS: x.PAYMENT_VERIFIED,
                "transaction": extra.get("transaction", ""),
                # The payment by its authorization, and where its current transaction is shown.
                "nonce": extra.get("nonce", ""),
                "status": extra.get("status", {}).get("url", ""),
            },
        )
        # Retrying a pending payment (as told) is the same exchange again: stored once.
        retry = (task.status_message or {}).get("metadata", {}).get(x.STATUS) == x.PAYMENT_VERIFIED
        return a2a_task_save(
            task=task,
            state=State.INPUT_REQUIRED,
            messages=[] if retry else [*user, status_message],
            status_message=status_message,
        )
    if refused.kind in ("unavailable", "unreachable"):
        # Settled but the product failed: the payment is kept; the same payload on this task
        # collects it, so the task waits for it again instead of failing. Likewise when the
        # facilitator or the chain did not answer: nothing was claimed, and the same payload on
        # this task goes through once they do.
        again = refused.charged or refused.kind == "unreachable"
        return _payment_failed(
            ctx,
            task,
            user,
            reason="product_unavailable",
            text=refused.message,
            state=State.INPUT_REQUIRED if again else State.FAILED,
            charged=refused.charged,
        )
    return _payment_failed(ctx, task, user, reason=refused.code, text=refused.message)


def _paid(ctx: Ctx, task: A2aTask, offer: Offer, sold: Sold, user: list[dict[str, Any]]) -> A2aTask:
    """The task completes with the artifact and the charge: the x402 settle responses so far
    (the extension's receipts), or what the credits paid."""
    charge = sold.charge
    description = offer.sku.headline if offer.sku else task.skill
    if charge.settlement is not None:
        settlement = charge.settlement.model_dump(mode="json", by_alias=True, exclude_none=True)
        receipts = _receipts(task, settlement)
        return _complete(
            ctx,
            task,
            user,
            sold.content,
            text=f"Payment settled ({charge.transaction}): here is {task.skill}.",
            description=description,
            metadata={x.STATUS: x.PAYMENT_COMPLETED, x.RECEIPTS: receipts},
            task_metadata={x.RECEIPTS: receipts},
            payer=charge.payer,
        )
    credits = _credits(charge)
    return _complete(
        ctx,
        task,
        user,
        sold.content,
        text=f"Paid from credits ({credits['charged_usdc']:g} USDC): here is {task.skill}.",
        description=description,
        metadata={"credits": credits},
        task_metadata={"credits": credits},
        payer=charge.payer,
        account=offer.call.account,
    )


def _credits(charge: Charge) -> dict[str, Any]:
    credits: dict[str, Any] = {
        "rail": "credits",
        "charged_usdc": usdc_from_atomic(charge.charged_atomic or 0),
        "balance_usdc": usdc_from_atomic(charge.balance_atomic or 0),
    }
    if charge.replay:  # the same message again: its first answer, nothing charged
        credits["replay"] = True
    return credits


def cancel(ctx: Ctx, task: A2aTask) -> A2aTask:
    """CancelTask: only a task waiting for its payment can be canceled (nothing was charged)."""
    ctx.skill = task.skill
    if task.state != State.INPUT_REQUIRED or not a2a_task_claim(task=task):
        raise TaskNotCancelableError(
            f"task {task.id} is {task.state}: only a task waiting for payment cancels"
        )
    status_message = _text_message(task, "Canceled by the client; nothing was charged.")
    return a2a_task_save(
        task=task, state=State.CANCELED, messages=[status_message], status_message=status_message
    )
