"""The payment front: one place that reads what a call brought to pay with and says what the
payment came to, for every surface (REST, chat, marketplace, MCP, A2A).

    brought = Brought(headers=request.headers)                 # or x402_payload=..., proof_in="metadata"
    sale = Sale(offer=paid_offer(...), resource_url=..., reference=...)  # accepts=DEFAULT_ACCEPTS
    result = payment_sell(brought=brought, sale=sale)          # Sold(content, charge) | Refused(...)

- `payment_choose`: the material (an x402 proof in a header or in a protocol's metadata, an
  API key, a session token, schemes registered later) becomes a rail (`Chosen`), or a
  `Refused`: the x402 challenge for an unpaid call (the REST 402's requirements), a refused
  proof or key, 503 when the product has nothing to deliver.
- `payment_result`: a paid answer or its refusal becomes `Sold` (content and `Charge`: what
  was charged in atomic USDC, by which rail, the settlement transaction, the balance or calls
  left) or `Refused` (kind, status, code, message, challenge, charged, retry_after).
- `payment_sell`: both around billing.paid_call.

Surfaces translate `Sold`/`Refused` into their wire format only (billing/api/front_http.py for
HTTP). A scheme is a row of billing/front/schemes.py's table (`scheme_register`); a surface
takes DEFAULT_ACCEPTS unless it names its own (the chat adds the session token, MCP pays an
X-API-Key from the managed pack first)."""

from __future__ import annotations

from billing.front.schemes import SCHEMES, Scheme, key_account, key_brought, scheme_register
from billing.front.sell import payment_brought, payment_choose, payment_pay, payment_result, payment_sell
from billing.front.signin import ownership_register  # (registers the sign-in scheme)
from billing.front.types import DEFAULT_ACCEPTS, Brought, Charge, Chosen, PayResult, Refused, Sale, Sold

__all__ = [
    "DEFAULT_ACCEPTS",
    "SCHEMES",
    "Brought",
    "Charge",
    "Chosen",
    "PayResult",
    "Refused",
    "Sale",
    "Scheme",
    "Sold",
    "key_account",
    "key_brought",
    "ownership_register",
    "payment_brought",
    "payment_choose",
    "payment_pay",
    "payment_result",
    "payment_sell",
    "scheme_register",
]
