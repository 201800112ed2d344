"""The session rail: a prepaid session pays one call of its pack (billing/paid_call.py runs
the sequence). The call is used with one conditional UPDATE (never past the quota or the
expiry) inside the transaction that runs the product, so a failed product uses no call."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from a2a_service.core.errors import Forbidden, NotFound, PaymentRequired, Unauthorized
from billing.front import Brought, Sale
from billing.models import Account
from billing.rails.base import Content, Offer, Paid, Rail, Receipt, SessionReceipt
from catalog.models import Sku
from sessions_app.models import PrepaidSession, SessionPack
from sessions_app.services import SessionUnavailable, session_call_debit

TOKEN_HEADER = "X-Session-Token"
BUY_HINT = {"buy": "/api/a2a/x402/session/desk-pack", "enterprise": "/api/a2a/x402/session/enterprise-pack"}


def session_by_token(token: str) -> PrepaidSession:
    session = PrepaidSession.objects.select_related("pack__sku").filter(token=token).first()
    if session is None:
        raise NotFound("unknown session token", extra=BUY_HINT)
    return session


def session_payment(*, token: str, sku: str) -> SessionRail:
    """The rail of a session token for one SKU, checked before anything about the product:
    the SKU is live (404), a token was sent (401), it is known (404), its pack covers the
    SKU (403). Nothing is used yet."""
    target = Sku.objects.live().filter(sku=sku).first()
    if target is None:
        raise NotFound(f"unknown SKU {sku!r}")
    token = token.strip()
    if not token:
        raise Unauthorized("a session token is required in the X-Session-Token header", extra=BUY_HINT)
    session = session_by_token(token)
    if not session.pack.covered_skus.filter(pk=target.pk).exists():
        raise Forbidden(f"this session does not cover {sku}", extra={"covered": "/api/a2a/session/status"})
    return SessionRail(session=session, sku=target)


class SessionRail:
    rail_name: ClassVar[str] = "session"
    final_before_effects: ClassVar[bool] = False  # the call and the effect commit together
    runs_first: ClassVar[bool] = False

    def __init__(self, *, session: PrepaidSession, sku: Sku) -> None:
        self.session = session
        self.sku = sku  # the row session_payment checked (the offer reads the same SKU)

    def admit(self, offer: Offer) -> Paid | None:
        offer.call.payer = self.session.buyer
        return None

    def scope(self, body: Callable[[], Paid]) -> Paid:
        with transaction.atomic():
            return body()

    def hold(self, offer: Offer, content: Content | None) -> SessionHold:
        session = self.session
        try:
            used = session_call_debit(session_id=session.id, sku_id=self.sku.id)
        except SessionUnavailable:
            session.refresh_from_db()
            why = "expired" if session.expired else "used up"
            raise PaymentRequired(
                f"this session is {why}; buy another pack",
                extra={**BUY_HINT, "code": "session_" + why.replace(" ", "_")},
            ) from None
        return SessionHold(session.calls_total - used)


class SessionHold:
    def __init__(self, calls_remaining: int) -> None:
        self.calls_remaining = calls_remaining

    def commit(self, content: Content | None) -> Receipt:
        return SessionReceipt(calls_remaining=self.calls_remaining)

    def release(self) -> None:
        return None  # the rail's transaction rolls the call back

    def deliver(self, run: Callable[[], Content]) -> Content:
        return run()


class SessionScheme:
    """The payment front's session scheme (billing/front/schemes.py): X-Session-Token pays one
    call of the session's pack."""

    name = "session"

    def brought(self, brought: Brought) -> bool:
        return bool(brought.header(TOKEN_HEADER))

    def rail(self, brought: Brought, sale: Sale) -> Rail:
        return session_payment(token=brought.header(TOKEN_HEADER), sku=sale.offer.name)


def session_owned(address: str, account: Account | None, sale: Sale) -> Rail | None:
    """Sign-in (billing/front/signin.py): the signed-in wallet bought a session pack that covers
    this SKU and has calls left: one of its calls pays, as its token would (no USDC charged)."""
    target = Sku.objects.live().filter(sku=sale.offer.name).first()
    if target is None:
        return None
    session = (
        PrepaidSession.objects.select_related("pack__sku")
        .filter(
            buyer__iexact=address,
            expires_at__gt=timezone.now(),
            calls_used__lt=F("calls_total"),
            pack__covered_skus=target,
        )
        .order_by("expires_at", "id")
        .first()
    )
    return SessionRail(session=session, sku=target) if session is not None else None


def session_owned_sql() -> str:
    """session_owned as SQL, for the sign-in fast path (billing.front.signin.OWNED_SQL)."""
    through = SessionPack.covered_skus.through._meta.db_table
    return (
        f"EXISTS (SELECT 1 FROM {PrepaidSession._meta.db_table} AS ps"
        f" JOIN {through} AS cov ON cov.sessionpack_id = ps.pack_id"
        f" JOIN {Sku._meta.db_table} AS cs ON cs.id = cov.sku_id"
        " WHERE UPPER(ps.buyer) = UPPER(%(wallet)s) AND ps.expires_at > now()"
        " AND ps.calls_used < ps.calls_total AND cs.sku = %(sku)s)"
    )
