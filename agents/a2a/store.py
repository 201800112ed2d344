"""Writes and reads of stored A2A tasks (agents.models.A2aTask).

What one task stores is bounded (docs/security.md): a message's JSON is at most
A2A_MESSAGE_MAX_BYTES, and a task's history at most A2A_TASK_MAX_MESSAGES messages and
A2A_TASK_MAX_BYTES. agents/a2a/flows.py refuses a message that would not fit before anything is
paid or stored (a2a_task_has_room); a2a_task_save keeps the bounds whatever writes."""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agents.models import A2aTask
from billing.models import Account

logger = logging.getLogger(__name__)

# The room kept in a task's history for the answer to a message: our status messages are a
# sentence and their metadata (the x402 requirements, the receipts of the task's few payments),
# well under this.
REPLY_RESERVE_BYTES = 8_192


def message_bytes(message: Any) -> int:
    """The size of a message as stored: its compact JSON in UTF-8."""
    return len(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))


def history_bytes(history: list[Any]) -> int:
    return sum(message_bytes(m) for m in history)


def a2a_task_get(*, task_id: str, agent: str) -> A2aTask | None:
    """The task, if it exists and was created at this endpoint (a task id names one agent's task)."""
    try:
        key = uuid.UUID(task_id)
    except (ValueError, AttributeError, TypeError):
        return None
    return A2aTask.objects.filter(pk=key, agent=agent).first()


def a2a_task_has_room(*, task: A2aTask, message: dict[str, Any]) -> bool:
    """Whether the task's history can take this message and our answer to it within its bounds."""
    return (
        len(task.history) + 2 <= settings.A2A_TASK_MAX_MESSAGES
        and history_bytes(task.history) + message_bytes(message) + REPLY_RESERVE_BYTES
        <= settings.A2A_TASK_MAX_BYTES
    )


@transaction.atomic
def a2a_task_create(
    *,
    agent: str,
    skill: str,
    context_id: str,
    params: dict[str, Any],
    state: str,
    price_atomic: int | None = None,
    resource_url: str = "",
) -> A2aTask:
    return A2aTask.objects.create(
        id=uuid.uuid4(),
        agent=agent[:64],
        skill=skill[:64],
        context_id=context_id[:200] or str(uuid.uuid4()),
        params=params,
        state=state,
        price_atomic=price_atomic,
        resource_url=resource_url[:500],
        metadata={"skill": skill, "params": params},
    )


def a2a_task_claim(*, task: A2aTask) -> bool:
    """Take an input-required task to work on it (pay and run its skill): one conditional
    update, so two submissions for the same task never both proceed."""
    claimed = A2aTask.objects.filter(pk=task.pk, state=A2aTask.State.INPUT_REQUIRED).update(
        state=A2aTask.State.WORKING
    )
    if claimed:
        task.state = A2aTask.State.WORKING
    return bool(claimed)


def a2a_task_requirements_refresh(
    *, task: A2aTask, status_message: dict[str, Any], price_atomic: int
) -> A2aTask:
    """An unpaid message on a task waiting for payment: the task's requirements (status message,
    price) as of now, the message itself not stored (it asks the task's question again). One
    conditional update: a task another request is paying meanwhile is left as that request
    leaves it."""
    now = timezone.now()
    updated = A2aTask.objects.filter(pk=task.pk, state=A2aTask.State.INPUT_REQUIRED).update(
        status_message=status_message, price_atomic=price_atomic, updated_at=now
    )
    if not updated:
        task.refresh_from_db()
        return task
    task.status_message, task.price_atomic, task.updated_at = status_message, price_atomic, now
    return task


def _bounded(task: A2aTask, history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history within the task's bounds: the newest messages that fit. Flows check for room
    before a message is worked on, so this only trims if an answer outgrew its reserve."""
    kept = history[-settings.A2A_TASK_MAX_MESSAGES :] if settings.A2A_TASK_MAX_MESSAGES > 0 else []
    size = history_bytes(kept)
    while kept and size > settings.A2A_TASK_MAX_BYTES:
        size -= message_bytes(kept.pop(0))
    if len(kept) < len(history):
        logger.warning("A2A task %s: %d oldest messages dropped to keep its bounds", task.pk, len(history) - len(kept))
    return kept


@transaction.atomic
def a2a_task_save(
    *,
    task: A2aTask,
    state: str,
    messages: list[dict[str, Any]],
    status_message: dict[str, Any] | None,
    artifacts: list[dict[str, Any]] | None = None,
    metadata: dict[str, Any] | None = None,
    payer: str = "",
    account: Account | None = None,
) -> A2aTask:
    """The task's new state, with the messages exchanged appended to its history (within its
    bounds)."""
    task.state = state
    task.history = _bounded(task, [*task.history, *messages])
    task.status_message = status_message
    if artifacts is not None:
        task.artifacts = [*task.artifacts, *artifacts]
    if metadata:
        task.metadata = {**task.metadata, **metadata}
    if payer:
        task.payer = payer[:42]
    if account is not None:
        task.account = account
    task.save()
    return task
