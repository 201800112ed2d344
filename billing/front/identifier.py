"""x402 payments the client names (the `payment-identifier` extension,
x402.extensions.payment_identifier): a payment is answered once, whatever its scheme and
surface, because the front (payment_sell) runs every x402 sale carrying one through here.

- Every 402 declares the extension (the SDK's server helper; optional for the client).
- The first call with an identifier claims it: an insert of a unique row (never a read
  first) with the fingerprint of the payload and of the call (the product, its parameters,
  the resource and the request).
- Sold: the content and the charge are stored on the row. The same identifier with the same
  payload is answered that content and that receipt again, with no second charge or
  settlement (the proof is not checked again: its window may have closed since).
- The same identifier with another payload or for another call: 409, nothing charged.
- A call that failed with nothing charged deletes its row: the identifier may be used again
  (with a new signature too). A pending settlement, a settled payment whose product failed,
  or a call that ended in an error keep the row (its payload alone may come back: the proof's
  own single use decides what it gets), and give up the claim so that it may.
- While the first call runs, the same identifier answers 409 with Retry-After; a claim held
  longer than CLAIM_STALE_SECONDS (its process died) is taken over by the same payload."""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import connection
from django.db.models import Q
from django.utils import timezone
from x402.extensions.payment_identifier import (
    PAYMENT_IDENTIFIER,
    declare_payment_identifier_extension,
    extract_and_validate_payment_identifier,
)
from x402.http.constants import PAYMENT_SIGNATURE_HEADER
from x402.schemas import PaymentPayload, SettleResponse

from a2a_service.core.errors import Conflict, RequestValidationError
from billing.front.types import Brought, Charge, Refused, Sale, Sold
from billing.models import PaymentIdentifier
from billing.rails.base import X402Receipt
from billing.x402.challenge import ChallengeContext, extension_register
from billing.x402.proof import proof_peek

logger = logging.getLogger(__name__)

# A claim older than this whose call never answered (its process died) is taken over.
CLAIM_STALE_SECONDS = 120
IN_PROGRESS_RETRY_SECONDS = 5
DECLARATION = declare_payment_identifier_extension(required=False)


class PaymentIdentifierConflict(Conflict):
    code = "payment_identifier_conflict"


@dataclass(frozen=True)
class Named:
    key: str
    fingerprint: str
    attempt: str
    scheme: str  # the x402 scheme the payload pays by (exact, batch-settlement, upto)


def payment_identifier_declaration(context: ChallengeContext) -> dict[str, Any]:
    return DECLARATION


def payment_named(brought: Brought, sale: Sale) -> Named | None:
    """The identifier an x402 v2 payment carries, or None (no x402 proof, version 1, none
    named, or a payload that does not decode: the rail refuses that one). A malformed
    identifier is 422 (RequestValidationError), before anything is held."""
    raw: object | None
    if brought.proof_in == "metadata":
        raw = brought.x402_payload
    else:
        raw = brought.header(PAYMENT_SIGNATURE_HEADER) or None  # v1 (X-PAYMENT) has no extensions
    if raw is None:
        return None
    payload = proof_peek(raw, in_metadata=brought.proof_in == "metadata")
    if not isinstance(payload, PaymentPayload) or not payload.extensions:
        return None
    if PAYMENT_IDENTIFIER not in payload.extensions:
        return None
    declared = payload.extensions[PAYMENT_IDENTIFIER]
    info = declared.get("info") if isinstance(declared, dict) else None
    if not isinstance(info, dict) or info.get("id") is None:
        return None  # the 402's declaration echoed back without a name: an unnamed payment
    key, validation = extract_and_validate_payment_identifier(payload)
    if not validation.valid or key is None:
        raise RequestValidationError.single(
            ["payment", "extensions", PAYMENT_IDENTIFIER],
            "; ".join(validation.errors) or "the payment identifier has no id",
            "payment_identifier_invalid",
        )
    return Named(
        key=key,
        fingerprint=_fingerprint(payload, sale),
        attempt=uuid.uuid4().hex,
        scheme=payload.accepted.scheme,
    )


def _fingerprint(payload: PaymentPayload, sale: Sale) -> str:
    """What makes a retry the same call: the whole payload (its signature included), the
    product and its parameters, the resource and the request's own fingerprint."""
    params = sale.offer.call.params
    canonical = json.dumps(
        [
            payload.model_dump(by_alias=True, mode="json"),
            sale.offer.name,
            params.model_dump(mode="json") if params is not None else None,
            sale.resource_url,
            sale.fingerprint,
        ],
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def payment_named_sell(named: Named, sale: Sale, sell: Callable[[], Sold | Refused]) -> Sold | Refused:
    """Sell once under the identifier: claim it, or answer what its first call came to."""
    refused = _claim(named, sale)
    if isinstance(refused, Refused | Sold):
        return refused
    try:
        result = sell()
    except BaseException:
        try:
            _give_up(named)
        except Exception:  # the database lost too: the claim goes stale and is taken over
            logger.warning("payment identifier %s: the claim could not be given up", named.key)
        raise
    if isinstance(result, Sold) and not result.charge.replay:
        _answer(named, sale, result)
    elif isinstance(result, Refused) and not result.charged and result.kind != "pending":
        # Nothing charged: the identifier is free again.
        PaymentIdentifier.objects.filter(key=named.key, attempt=named.attempt).delete()
    else:
        _give_up(named)
    return result


def _claim(named: Named, sale: Sale) -> Refused | Sold | None:
    """None when this call holds the identifier; else the first answer, or the refusal."""
    for _ in range(3):  # a row deleted between the insert and the read: claim again
        if _insert(named):
            return None
        row = PaymentIdentifier.objects.filter(key=named.key).first()
        if row is None:
            continue
        if row.fingerprint != named.fingerprint:
            return _conflict(
                "this payment identifier was first used with another payment or for another call; nothing "
                "was charged. Name a new payment with a new identifier.",
                retry=None,
            )
        if row.state == PaymentIdentifier.State.ANSWERED:
            return _replay(row)
        stale = timezone.now() - timedelta(seconds=CLAIM_STALE_SECONDS)
        taken = (
            PaymentIdentifier.objects.filter(
                key=named.key, state=PaymentIdentifier.State.CLAIMED, fingerprint=named.fingerprint
            )
            .filter(Q(attempt="") | Q(claimed_at__lt=stale))
            .update(attempt=named.attempt, claimed_at=timezone.now())
        )
        if taken:
            return None
        return _conflict(
            "a call with this payment identifier is still running; nothing more was charged. Send the same "
            "request again after Retry-After to get its answer.",
            retry=IN_PROGRESS_RETRY_SECONDS,
        )
    return _conflict("this payment identifier is being claimed and released; try again", retry=1)


def _insert(named: Named) -> bool:
    table = PaymentIdentifier._meta.db_table
    qn = connection.ops.quote_name
    columns = ("key", "fingerprint", "state", "attempt", "claimed_at", "scheme", "sku")
    with connection.cursor() as cursor:
        # ON CONFLICT DO NOTHING RETURNING: PostgreSQL and SQLite (3.35+) alike.
        cursor.execute(
            f"INSERT INTO {qn(table)} ({', '.join(qn(c) for c in columns)}) VALUES (%s, %s, %s, %s, %s, '', '') "
            f"ON CONFLICT DO NOTHING RETURNING {qn('id')}",
            [
                named.key,
                named.fingerprint,
                PaymentIdentifier.State.CLAIMED,
                named.attempt,
                connection.ops.adapt_datetimefield_value(timezone.now()),
            ],
        )
        return cursor.fetchone() is not None


def _give_up(named: Named) -> None:
    PaymentIdentifier.objects.filter(key=named.key, attempt=named.attempt).update(attempt="")


def _answer(named: Named, sale: Sale, sold: Sold) -> None:
    charge = sold.charge
    receipt = charge.receipt
    stored: dict[str, Any] = {
        "rail": charge.rail,
        "charged_atomic": charge.charged_atomic,
        "transaction": charge.transaction,
        "payer": charge.payer,
        "settlement": (
            charge.settlement.model_dump(by_alias=True, exclude_none=True, mode="json")
            if charge.settlement is not None
            else None
        ),
        "version": getattr(receipt, "version", 2),
        "amount_atomic": getattr(receipt, "amount_atomic", charge.charged_atomic or 0),
    }
    PaymentIdentifier.objects.filter(key=named.key, attempt=named.attempt).update(
        state=PaymentIdentifier.State.ANSWERED,
        attempt="",
        scheme=named.scheme[:32],
        sku=sale.offer.name,
        content=sold.content,
        receipt=stored,
        answered_at=timezone.now(),
    )


def _replay(row: PaymentIdentifier) -> Sold:
    stored = row.receipt or {}
    raw = stored.get("settlement")
    settlement = SettleResponse.model_validate(raw) if raw else None
    receipt = X402Receipt(
        settlement=settlement
        or SettleResponse(success=True, transaction=stored.get("transaction", ""), network=""),
        version=int(stored.get("version", 2)),
        amount_atomic=int(stored.get("amount_atomic") or 0),
    )
    charge = Charge(
        rail=str(stored.get("rail", "x402")),
        charged_atomic=stored.get("charged_atomic"),
        receipt=receipt,
        transaction=str(stored.get("transaction", "")),
        payer=str(stored.get("payer", "")),
        settlement=settlement,
        replay=True,
    )
    content = row.content if isinstance(row.content, dict) else {}
    return Sold(content=content, charge=charge)


def _conflict(message: str, *, retry: int | None) -> Refused:
    headers = {"Retry-After": str(retry)} if retry is not None else None
    extra: dict[str, Any] = {"charged": False}
    if retry is not None:
        extra["retry_after"] = retry
    error = PaymentIdentifierConflict(message, extra=extra, headers=headers)
    return Refused(
        kind="refused",
        status=409,
        code=error.code,
        message=message,
        scheme="x402",
        retry_after=retry,
        error=error,
    )


extension_register(PAYMENT_IDENTIFIER, payment_identifier_declaration)
