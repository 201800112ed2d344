"""Writes and reads of stored A2A tasks (agents.models.A2aTask)."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import transaction

from agents.models import A2aTask
from billing.models import Account


def a2a_task_get(*, task_id: str, agent: str) -> A2aTask | None:
    """The task, if it exists and was created at this endpoint (a task id names one agent's task)."""
    try:
        key = uuid.UUID(task_id)
    except (ValueError, AttributeError, TypeError):
        return None
    return A2aTask.objects.filter(pk=key, agent=agent).first()


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
    """The task's new state, with the messages exchanged appended to its history."""
    task.state = state
    task.history = [*task.history, *messages]
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
