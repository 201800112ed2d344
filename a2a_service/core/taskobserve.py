"""Celery tasks that can be followed: the request id of whatever queued a task travels in the
message's headers and is the task's context while it runs (its log records carry it, and so do
the tasks it queues and its outbound calls' logs); a task that raises is counted; the worker's
and beat's logging is the service's own (settings LOGGING: LOG_FORMAT, the request id filter),
not Celery's.

Connected by a2a_service/celery.py, which every process imports with the package."""

from __future__ import annotations

import logging
from contextvars import Token
from typing import Any

from celery.signals import before_task_publish, setup_logging, task_failure, task_postrun, task_prerun

from a2a_service.core.observe import task_failure_observe
from a2a_service.core.requestlog import (
    Context,
    context_enter,
    context_exit,
    current,
    request_id_accept,
    request_id_new,
)

logger = logging.getLogger(__name__)

HEADER = "a2a_request_id"
# The context each running task entered, to leave it when the task ends (task id -> token).
_entered: dict[str, Token[Context | None]] = {}


@before_task_publish.connect
def _carry_request_id(sender: str | None = None, headers: dict[str, Any] | None = None, **_: Any) -> None:
    """The message carries the current request id; a message beat (or a shell) sends starts a
    chain of its own."""
    if headers is None:
        return
    context = current()
    headers[HEADER] = context.request_id if context is not None else request_id_new()
    if context is not None:
        # A request says which tasks it queued; a task queuing more says so at DEBUG only (a sweep
        # can queue hundreds).
        level = logging.DEBUG if context.task else logging.INFO
        logger.log(level, "queued task %s %s", sender, headers.get("id"), extra={"queued_task_id": headers.get("id")})


@task_prerun.connect
def _enter_task(task_id: str | None = None, task: Any = None, **_: Any) -> None:
    if task is None or task_id is None:
        return
    carried = task.request.get(HEADER)
    context = current()
    if carried:
        rid = request_id_accept(str(carried))
    elif context is not None:  # run in process (apply, eager): the caller's request goes on
        rid = context.request_id
    else:
        rid = request_id_new()
    _entered[task_id] = context_enter(Context(request_id=rid, task=task.name, task_id=task_id))


@task_postrun.connect
def _leave_task(task_id: str | None = None, **_: Any) -> None:
    token = _entered.pop(task_id or "", None)
    if token is not None:
        context_exit(token)


@task_failure.connect
def _count_failure(sender: Any = None, **_: Any) -> None:
    task_failure_observe(task=getattr(sender, "name", None) or "unknown")


@setup_logging.connect
def _service_logging(loglevel: int | str | None = None, **_: Any) -> None:
    """Workers and beat log as the web processes do (Django's LOGGING), at the --loglevel asked."""
    from logging.config import dictConfig

    from django.conf import settings

    dictConfig(settings.LOGGING)
    if loglevel:
        logging.getLogger().setLevel(loglevel)
