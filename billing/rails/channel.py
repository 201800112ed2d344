"""The payment-channel rail (x402 `batch-settlement`): a call paid by a voucher on a channel
the payer deposited into. The sequence is billing/paid_call.py's; the channel logic is the
SDK's server scheme, run through the SDK's resource server (billing/x402/channels.py), which
keys its per-request context by the payload object: verify and settle get the same one.

1. admit: the payer is the channel's (its config); a refund request (payload `refund`) is
   verified and settled here (the facilitator claims what the vouchers paid and returns the
   rest to the payer) and answered without running the product: nothing is sold.
2. hold: the voucher is verified (locally against the stored channel when its on-chain state
   is fresh, else by the facilitator; a deposit always by the facilitator) and the channel is
   reserved for this request. A voucher that does not sign exactly what the channel has
   charged plus this call's price (a replay, a lowered voucher, a client out of sync) is
   refused with the corrective 402: the requirements carry the channel's state and the last
   voucher held, so the SDK client resyncs and pays again.
3. the product runs; if it fails, the reservation is released: nothing is charged.
4. commit: one transaction commits the voucher to the channel (its cumulative amount) and
   writes the sale (ChannelSale, counted with every other sale); a deposit goes on chain
   through the facilitator first. `PAYMENT-RESPONSE` is the scheme's: transaction "" for a
   voucher, `extra.chargedAmount` and `extra.channelState`."""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any, ClassVar

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from x402.mechanisms.evm.batch_settlement.errors import ERR_CUMULATIVE_AMOUNT_MISMATCH
from x402.mechanisms.evm.batch_settlement.server import Channel
from x402.mechanisms.evm.batch_settlement.types import (
    is_deposit_payload,
    is_refund_payload,
    is_voucher_payload,
)
from x402.mechanisms.evm.batch_settlement.utils import normalize_channel_id
from x402.mechanisms.evm.utils import get_evm_chain_id
from x402.schemas import PaymentPayload, PaymentRequirements, SettleResponse
from x402.schemas.errors import PaymentAbortedError
from x402.schemas.hooks import VerifiedPaymentCancelOptions

from a2a_service.core.errors import ProductUnavailable
from a2a_service.core.observe import paid_call_observe
from billing.facilitator.service import ChainUnreachable
from billing.models import ChannelSale, PaymentChannel
from billing.rails.base import Content, Offer, Paid, Receipt, X402Receipt
from billing.rails.x402 import PaymentUnreachable, x402_challenge
from billing.x402.challenge import Challenge
from billing.x402.channels import SCHEME, channel_scheme, channel_server, channel_storage, channels_on
from billing.x402.facilitator_client import FacilitatorUnavailable
from billing.x402.proof import PaymentRejected
from billing.x402.voucher_message import voucher_signer
from catalog.models import Sku
from catalog.products.registry import ProductFailed

logger = logging.getLogger(__name__)

NOT_OFFERED = "invalid_batch_settlement_not_offered"
MALFORMED = "invalid_batch_settlement_payload"
UNREACHABLE_RETRY_SECONDS = 5
_SIGNATURE = re.compile(r"^0x[0-9a-fA-F]{130}$")


def channel_payment(*, payload: PaymentPayload, offer: Offer, resource_url: str) -> ChannelRail:
    """The rail of a decoded version 2 proof whose accepted scheme is `batch-settlement`,
    matched against this offer's challenge (PaymentRejected with the challenge otherwise)."""
    challenge = x402_challenge(offer, resource_url=resource_url)
    offered = challenge.offered(SCHEME) if channels_on() else None
    requirements = None
    if offered is not None:
        try:
            server = channel_server()
        except Exception as exc:  # the facilitator's /supported could not be read
            raise _unreachable(f"the channel facilitator is not available: {exc}") from exc
        requirements = server.find_matching_requirements([offered], payload)
    if requirements is None:
        paid_call_observe(rail="x402", outcome="refused")
        raise PaymentRejected(
            NOT_OFFERED,
            "this payment does not answer the channel offer of this resource (scheme, network, asset, "
            "payTo, amount and extra must be those of the 402's batch-settlement requirements)",
            challenge=challenge,
        )
    return ChannelRail(payload=payload, requirements=requirements, challenge=challenge)


class ChannelRail:
    rail_name: ClassVar[str] = "x402"
    final_before_effects: ClassVar[bool] = True
    runs_first: ClassVar[bool] = False

    def __init__(
        self, *, payload: PaymentPayload, requirements: PaymentRequirements, challenge: Challenge
    ) -> None:
        self.payload = payload
        self.requirements = requirements
        self.challenge = challenge
        self.server = channel_server()
        self.offer: Offer | None = None
        self.held = False  # the call runs in one transaction holding its channel's row (scope)

    @property
    def payer(self) -> str:
        config = self.payload.payload.get("channelConfig")
        return str(config.get("payer") or "").lower() if isinstance(config, dict) else ""

    def admit(self, offer: Offer) -> Paid | None:
        offer.call.payer = self.payer
        if is_refund_payload(self.payload.payload):
            return self._refund()
        self.offer = offer
        if offer.product.effects:
            return self._collect(offer)
        return None

    def _collect(self, offer: Offer) -> Paid | None:
        """The voucher of a committed, undelivered call of this product (its product failed after
        the commit): deliver it now, charging nothing more. Its signature is checked against the
        channel's payer authorizer, since the channel has moved on since. None otherwise."""
        raw = self.payload.payload
        if not is_voucher_payload(raw) or is_deposit_payload(raw) or offer.sku is None:
            return None
        try:
            channel_id = normalize_channel_id(str(raw["voucher"]["channelId"]))
            cumulative = int(str(raw["voucher"]["maxClaimableAmount"]))
            signature = str(raw["voucher"]["signature"])
        except (KeyError, TypeError, ValueError):
            return None
        sale = ChannelSale.objects.filter(
            channel_id=channel_id, cumulative_atomic=cumulative, sku=offer.sku, delivered_at__isnull=True
        ).first()
        channel = PaymentChannel.objects.filter(pk=channel_id).first()
        if sale is None or channel is None or not _SIGNATURE.match(signature):
            return None
        signer = voucher_signer(
            channel_id=channel_id,
            max_claimable=cumulative,
            signature=signature,
            chain_id=get_evm_chain_id(settings.X402_NETWORK),
        )
        if signer != channel.payer_authorizer.lower():
            return None
        offer.call.payer = sale.payer
        content = channel_deliver(sale, lambda: offer.product.run(offer.call))
        settlement = SettleResponse(
            success=True, transaction="", network=settings.X402_NETWORK, payer=sale.payer, amount="0"
        )
        return Paid(content, X402Receipt(settlement=settlement, version=2, amount_atomic=0))

    def scope(self, body: Callable[[], Paid]) -> Paid:
        """A voucher on a known channel, for a product without effects: verify, the product
        and commit in one transaction that holds the channel's row from the first read to the
        commit (billing/x402/channels.py DatabaseChannelStorage.held). The scheme's checks are
        the same; a concurrent call of the same channel waits for the row, then finds the
        cumulative amount moved (the corrective 402). A failed product or commit rolls the
        whole call back: nothing is charged and no reservation is left. A deposit (a
        transaction on chain) and a product with effects (it runs once the voucher is committed)
        keep the scheme's own sequence of short transactions."""
        raw, offer = self.payload.payload, self.offer
        if offer is None or offer.product.effects or not is_voucher_payload(raw) or is_deposit_payload(raw):
            return body()
        try:
            channel_id = normalize_channel_id(str(raw["voucher"]["channelId"]))
        except (TypeError, ValueError, KeyError):
            return body()  # the scheme refuses it
        with transaction.atomic(), channel_storage().held(channel_id) as held:
            if held:
                self.held = True
                try:
                    return body()
                finally:
                    self.held = False
        return body()  # a channel this server has not seen: the scheme verifies it remotely

    def hold(self, offer: Offer, content: Content | None) -> ChannelHold:
        verified = self._verify()
        offer.call.payer = (verified.payer or self.payer).lower()
        return ChannelHold(self, offer)

    # --- the SDK's resource server ---------------------------------------------------------
    def _verify(self) -> Any:
        try:
            verified = self.server.verify_payment(self.payload, self.requirements)
        except PaymentAbortedError as exc:
            raise self._refused(exc.reason, "") from None
        except (ChainUnreachable, FacilitatorUnavailable) as exc:
            raise _unreachable(f"the channel could not be checked: {exc}") from exc
        except Exception as exc:  # a malformed payload the scheme or the facilitator could not read
            logger.info("channel: verify refused: %s", exc)
            channel_scheme().take_request_context(self.payload)
            raise PaymentRejected(MALFORMED, f"the channel payment could not be read: {exc}"[:300]) from exc
        if not verified.is_valid:
            raise self._refused(verified.invalid_reason or "invalid_payment", verified.invalid_message or "")
        return verified

    def _refused(self, reason: str, message: str) -> PaymentRejected:
        """A refusal answered with the 402 to pay by: for a cumulative mismatch, the corrective
        one (the channel's state and last voucher in the channel requirements' extra)."""
        challenge = self.challenge
        if reason == ERR_CUMULATIVE_AMOUNT_MISMATCH:
            # Copies: the scheme writes the channel's state into the requirements it is given.
            accepts = [requirements.model_copy(deep=True) for requirements in challenge.accepts]
            corrective = self.server.create_payment_required_response(
                accepts, resource=challenge.resource, error=reason, payment_payload=self.payload
            )
            challenge = dataclasses.replace(challenge, accepts=tuple(corrective.accepts))
            message = message or "the voucher does not sign what the channel has charged plus this call"
        else:
            channel_scheme().take_request_context(self.payload)  # nothing of this request is kept
        return PaymentRejected(
            reason, message or f"the channel payment was refused: {reason}", challenge=challenge
        )

    def _refund(self) -> Paid:
        """A cooperative refund: claim what the vouchers paid, return the rest; no product."""
        verified = self._verify()
        if verified.skip_handler is None:
            raise PaymentRejected(
                "invalid_batch_settlement_refund", "the refund request was not acknowledged"
            )
        try:
            settled = self.server.settle_payment(self.payload, self.requirements)
        except PaymentAbortedError as exc:
            raise self._refused(exc.reason, "") from None
        except (ChainUnreachable, FacilitatorUnavailable) as exc:
            self._cancel("handler_failed")
            raise _unreachable(f"the refund could not be sent: {exc}") from exc
        if not settled.success:
            raise PaymentRejected(
                settled.error_reason or "refund_failed", settled.error_message or "the refund failed"
            )
        body = verified.skip_handler.body
        content = dict(body) if isinstance(body, dict) else {"message": "Refund acknowledged"}
        return Paid(content, X402Receipt(settlement=settled, version=2, amount_atomic=0))

    def _cancel(self, reason: str) -> None:
        """Give the channel's reservation back (the product failed, or the commit did)."""
        try:
            self.server.create_payment_cancellation_dispatcher(self.payload, self.requirements).cancel_sync(
                VerifiedPaymentCancelOptions(reason=reason)  # type: ignore[arg-type]
            )
        except Exception:  # the reservation expires by itself (the SDK's pending TTL)
            logger.warning("channel: releasing the reservation failed", exc_info=True)

    def _release_reservation(self, pending_id: str | None) -> None:
        """After a commit rolled back: the scheme's own cleanup was rolled back with it."""
        if not pending_id:
            return
        channel_id = str(self.payload.payload["voucher"]["channelId"])

        def clear(current: Channel | None) -> Channel | None:
            if current is None or current.pending_request is None:
                return current
            if current.pending_request.pending_id != pending_id:
                return current
            following = current.copy()
            following.pending_request = None
            return following

        try:
            channel_scheme().get_storage().update_channel(channel_id, clear)
        except Exception:
            logger.warning("channel: clearing the reservation failed", exc_info=True)


class ChannelHold:
    def __init__(self, rail: ChannelRail, offer: Offer) -> None:
        self.rail = rail
        self.offer = offer
        self.sale: ChannelSale | None = None  # written with the voucher's commit

    def commit(self, content: Content | None) -> Receipt:
        rail = self.rail
        context = channel_scheme().read_request_context(rail.payload)
        pending_id = context.pending_id if context is not None else None
        try:
            # Held: the call's own transaction (ChannelRail.scope) already covers both.
            with nullcontext() if rail.held else transaction.atomic():
                settled = rail.server.settle_payment(rail.payload, rail.requirements)
                if not settled.success:
                    raise PaymentRejected(
                        settled.error_reason or "settlement_failed",
                        settled.error_message or "the channel payment could not be settled",
                    )
                self._record(settled)
        except PaymentAbortedError as exc:
            rail._release_reservation(pending_id)
            raise rail._refused(exc.reason, "") from None
        except (ChainUnreachable, FacilitatorUnavailable) as exc:
            rail._release_reservation(pending_id)
            raise _unreachable(f"the deposit could not be sent: {exc}") from exc
        except BaseException:
            rail._release_reservation(pending_id)
            raise
        return X402Receipt(settlement=settled, version=2, amount_atomic=int(rail.requirements.amount))

    def _record(self, settled: SettleResponse) -> None:
        rail = self.rail
        state = (settled.extra or {}).get("channelState") or {}
        voucher = rail.payload.payload["voucher"]
        cumulative = int(state.get("chargedCumulativeAmount") or voucher["maxClaimableAmount"])
        # A product with effects runs after this commit and marks its delivery when it does.
        self.sale = ChannelSale.objects.create(
            delivered_at=None if self.offer.product.effects else timezone.now(),
            channel_id=str(voucher["channelId"]).lower(),
            sku=_sku(self.offer),
            resource=rail.challenge.resource.url[:500],
            payer=(settled.payer or rail.payer).lower(),
            amount_atomic=int(rail.requirements.amount),
            cumulative_atomic=cumulative,
            network=settings.X402_NETWORK,
            deposit_tx_hash=settled.transaction if is_deposit_payload(rail.payload.payload) else "",
        )

    def release(self) -> None:
        self.rail._cancel("handler_failed")

    def deliver(self, run: Callable[[], Content]) -> Content:
        if self.sale is None:
            raise RuntimeError("a channel call's product with effects runs after its voucher's commit")
        return channel_deliver(self.sale, run)


def channel_deliver(sale: ChannelSale, run: Callable[[], Content]) -> Content:
    """Run a product with effects for a committed voucher's sale, once: its delivery is marked in
    the transaction that creates the effect. A product that fails leaves the sale undelivered, and
    the same voucher collects it (ChannelRail.admit), as a settled `exact` payment is collected
    with its proof: nothing is kept for a call that did not deliver."""
    try:
        with transaction.atomic():
            if not ChannelSale.objects.filter(pk=sale.pk, delivered_at__isnull=True).update(
                delivered_at=timezone.now()
            ):
                raise PaymentRejected(ERR_CUMULATIVE_AMOUNT_MISMATCH, "this voucher's call was already delivered")
            return run()
    except ProductFailed as exc:
        raise ProductUnavailable(
            f"{exc}. Your voucher was committed for this call and is kept for you: send the same payment "
            "again to collect it",
            extra={"sku": sale.sku.sku, "charged": True},
        ) from exc


def _sku(offer: Offer) -> Sku:
    if offer.sku is None:
        raise RuntimeError(f"{offer.name}: a channel payment needs the SKU row")
    return offer.sku


def _unreachable(detail: str) -> PaymentUnreachable:
    return PaymentUnreachable(
        f"{detail}; nothing was charged, the same request may be sent again"[:500],
        extra={"charged": False, "retry_after": UNREACHABLE_RETRY_SECONDS},
        headers={"Retry-After": str(UNREACHABLE_RETRY_SECONDS)},
    )
