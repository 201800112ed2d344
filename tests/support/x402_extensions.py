"""x402 extensions in tests: payments named by the client (payment-identifier), signed by the
official client for a challenge, and the facilitator's Bazaar discovery list read with the
SDK's bazaar facilitator client."""

from __future__ import annotations

from typing import Any

from x402.extensions.bazaar import DiscoveryResourcesResponse, ListDiscoveryResourcesParams, with_bazaar
from x402.extensions.payment_identifier import append_payment_identifier_to_extensions
from x402.http import FacilitatorConfig, HTTPFacilitatorClientSync, x402HTTPClientSync
from x402.schemas import PaymentPayload, PaymentRequired

from tests.support.payments import payer_client

FACILITATOR_PATH = "/api/a2a/facilitator"


def named_payload(required: PaymentRequired, payment_id: str, **changes: Any) -> PaymentPayload:
    """A v2 payload signed by the official client, named with payment_id the way its helper
    does it (only if the 402 declared payment-identifier); `changes` alter the requirements
    signed (e.g. amount="1" for a proof that is refused)."""
    extensions = append_payment_identifier_to_extensions(dict(required.extensions or {}), payment_id)
    accepts = [required.accepts[0].model_copy(update=changes)]
    client = payer_client().set_spend_controls(False)
    payload = client.create_payment_payload(
        required.model_copy(update={"accepts": accepts}), extensions=extensions
    )
    assert isinstance(payload, PaymentPayload)
    return payload


def payment_header(payload: PaymentPayload) -> str:
    return x402HTTPClientSync(payer_client()).encode_payment_signature_header(payload)["PAYMENT-SIGNATURE"]


def discovery_resources(base_url: str, **params: Any) -> DiscoveryResourcesResponse:
    """The facilitator's discovery list, as the SDK's bazaar client asks for it."""
    client = with_bazaar(HTTPFacilitatorClientSync(FacilitatorConfig(url=base_url + FACILITATOR_PATH)))
    try:
        return client.extensions.bazaar.list_resources(ListDiscoveryResourcesParams(**params))
    finally:
        client.close()
