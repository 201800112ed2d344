"""Prepaid sessions: a pack bought once (x402 or credits), then calls debit the session."""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from catalog.models import Sku
from sessions_app.models import PrepaidSession, SessionCall, SessionPack

# Seed: pack SKU -> (calls, hours). The desk pack covers at least the brief and the desks.
PACKS = {"m2m_session_desk": (40, 24), "m2m_session_enterprise": (200, 24 * 7)}


class SessionUnavailable(Exception):
    """Used up or expired."""


def session_packs_seed() -> None:
    covered = list(Sku.objects.filter(session_callable=True))
    for sku_name, (calls, hours) in PACKS.items():
        sku = Sku.objects.filter(sku=sku_name).first()
        if sku is None:
            continue
        pack, created = SessionPack.objects.get_or_create(
            sku=sku, defaults={"calls_total": calls, "window_hours": hours}
        )
        if created:
            pack.covered_skus.set(covered)


def session_create(*, pack_sku: Sku, buyer: str) -> PrepaidSession:
    pack = SessionPack.objects.select_related("sku").get(sku=pack_sku)
    return PrepaidSession.objects.create(
        token=secrets.token_urlsafe(32),
        pack=pack,
        buyer=buyer or "",
        calls_total=pack.calls_total,
        expires_at=timezone.now() + timedelta(hours=pack.window_hours),
    )


def session_call_debit(*, session_id: int, sku_id: int) -> int:
    """One call, in one conditional UPDATE: never past the quota or the expiry. Runs inside
    the caller's transaction, so a failed product rolls the call back. Returns calls used."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE sessions_app_prepaidsession SET calls_used = calls_used + 1 "
            "WHERE id = %s AND calls_used < calls_total AND expires_at > %s RETURNING calls_used",
            [session_id, timezone.now()],
        )
        row = cursor.fetchone()
    if row is None:
        raise SessionUnavailable(session_id)
    SessionCall.objects.create(session_id=session_id, sku_id=sku_id)
    return int(row[0])


def session_run(*, session: PrepaidSession, sku: Sku, run) -> tuple[dict, int]:
    with transaction.atomic():
        used = session_call_debit(session_id=session.id, sku_id=sku.id)
        return run(), used
