"""Voucher-paid calls (x402 `batch-settlement`) served in front of Django, as the credit and
sign-in fast paths serve credit calls (billing/api/credit_fastpath.py: its routes, base URLs,
rate limit, product run and answer). Issue 26 asks a voucher-paid call to cost at most twice a
keyed credit call; through Django and the SDK's resource server it cost seven times as much
(the payload parsed into the SDK's models three times, the EIP-712 hashing and recovery in
eth_account, the channel's row read, reserved and written in three statements).

Only the plain case is served here; anything else is Django's, which answers it as before:

1. A GET with PAYMENT-SIGNATURE and no other payment material (no X-API-Key, sign-in or
   X-PAYMENT), no query string, no Idempotency-Key, no Origin, on a credit fast path's route (a
   pure product), on PostgreSQL with Redis, channels on.
2. A version 2 payload whose accepted requirements match this route's channel offer as the SDK
   matches them (the offer as Django's 402 builds it, at the price the payload names: the
   statement then requires it to be the SKU's price), a voucher (not a deposit or a refund), no
   payment identifier, a payer authorizer that is a key (not the zero address: ERC-1271).
3. The voucher's EIP-712 signature recovered (coincurve, the domain hashed once per chain) to
   the channel's payer authorizer, as the SDK's local check does, low-s only.
4. One statement decides and writes: the channel's row (its configuration as the payload
   states it, the on-chain state fresh, no live reservation of another call, the voucher
   exactly what was charged plus this price, within the balance and above what was claimed)
   takes the voucher, and the sale's row is written with it (a voucher pays one call: the
   sale's unique (channel, cumulative) row). If any condition says no, nothing is written and
   Django answers: the corrective 402, a verification against the chain, a busy channel.
5. The product runs and renders before the statement; the answer carries the SDK scheme's
   settle response (transaction "", the channel's state after the call, the charged amount)."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable
from typing import Any, ClassVar
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

import psycopg
from django.conf import settings
from django.db import connections
from x402.extensions.payment_identifier import PAYMENT_IDENTIFIER
from x402.http.utils import encode_payment_response_header
from x402.mechanisms.evm.batch_settlement.types import is_voucher_payload
from x402.mechanisms.evm.utils import get_evm_chain_id
from x402.schemas import PaymentPayload, PaymentRequirements, SettleResponse

from a2a_service.core.errors import ApiError
from a2a_service.core.redisconn import redis_client
from a2a_service.core.throttling import base_throttle
from billing.api import credit_fastpath as fast
from billing.paid_call import Content, Offer, Paid, Receipt, X402Receipt
from billing.x402.challenge import ChallengeContext, exact_requirements
from billing.x402.channels import SCHEME, channel_requirements, channel_scheme, channel_server, channels_on
from billing.x402.proof import proof_peek
from billing.x402.voucher_message import voucher_signer
from catalog.products.registry import product_get

logger = logging.getLogger(__name__)

PAYMENT_RESPONSE_HEADER = "PAYMENT-RESPONSE"
_SIGNATURE = re.compile(r"^0x[0-9a-fA-F]{130}$")
_CHANNEL_ID = re.compile(r"^0x[0-9a-f]{64}$")
_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")
# Other payment material: Django chooses among the rails.
_OTHER_MATERIAL = ("HTTP_X_API_KEY", "HTTP_SIGN_IN_WITH_X", "HTTP_X_PAYMENT", "HTTP_X_WHALE_TOKEN")

# The voucher taken and the call's sale written in one statement (one transaction, committed
# durably as Django's path commits it). Every condition the SDK's server scheme checks of a
# voucher on a known channel (handle_before_verify, the local verification, handle_after_verify,
# handle_before_settle) is in its WHERE.
VOUCHER_SQL = """
WITH taken AS (
    UPDATE billing_paymentchannel AS c
       SET charged_cumulative_atomic = %(max)s,
           signed_max_claimable_atomic = %(max)s,
           signature = %(signature)s,
           last_request_timestamp = %(now_ms)s,
           pending_id = '',
           pending_signed_max_claimable_atomic = NULL,
           pending_expires_at = NULL
      FROM catalog_sku AS s
     WHERE c.channel_id = %(channel)s
       AND c.payer = %(payer)s
       AND c.payer_authorizer = %(payer_authorizer)s
       AND c.receiver = %(receiver)s
       AND c.receiver_authorizer = %(receiver_authorizer)s
       AND c.token = %(token)s
       AND c.withdraw_delay = %(withdraw_delay)s
       AND c.salt = %(salt)s
       AND c.charged_cumulative_atomic + %(amount)s = %(max)s
       AND %(max)s <= c.balance_atomic
       AND %(max)s > c.total_claimed_atomic
       AND c.onchain_synced_at >= %(synced_after)s
       AND (c.pending_id = '' OR c.pending_expires_at IS NULL OR c.pending_expires_at <= %(now_ms)s)
       AND s.sku = %(sku)s
       AND s.status = 'live_x402'
       AND s.price_atomic = %(amount)s
    RETURNING c.channel_id, c.balance_atomic, c.total_claimed_atomic, c.withdraw_requested_at,
              c.refund_nonce, s.id AS sku_id
), sale AS (
    INSERT INTO billing_channelsale
        (channel_id, sku_id, resource, payer, amount_atomic, cumulative_atomic, network, deposit_tx_hash,
         created_at, delivered_at)
    SELECT taken.channel_id, taken.sku_id, %(resource)s, %(payer)s, %(amount)s, %(max)s, %(network)s, '', now(),
           now()
      FROM taken
    RETURNING id
)
SELECT taken.channel_id, taken.balance_atomic, taken.total_claimed_atomic, taken.withdraw_requested_at,
       taken.refund_nonce
  FROM taken, sale
"""
# By libpq's prepared-statement call (credit_fastpath.prepared_row), as the credit debit runs.
_VOUCHER = fast.PreparedStatement(
    b"a2a_voucher_take",
    VOUCHER_SQL,
    (
        ("max", 1700),
        ("signature", 25),
        ("now_ms", 20),
        ("channel", 25),
        ("payer", 25),
        ("payer_authorizer", 25),
        ("receiver", 25),
        ("receiver_authorizer", 25),
        ("token", 25),
        ("withdraw_delay", 20),
        ("salt", 25),
        ("amount", 20),
        ("synced_after", 20),
        ("sku", 25),
        ("resource", 25),
        ("network", 25),
    ),
)
# Whether a voucher's statement committed (after a connection lost during it).
TAKEN_SQL = """
SELECT channel_id, balance_atomic, total_claimed_atomic, withdraw_requested_at, refund_nonce
  FROM billing_paymentchannel WHERE channel_id = %(channel)s AND signed_max_claimable_atomic = %(max)s
   AND signature = %(signature)s
"""


class Voucher:
    """A voucher payload of the plain shape, its fields as the statement compares them."""

    __slots__ = ("payload", "requirements", "channel", "max", "signature", "config")

    def __init__(self, *, payload: PaymentPayload, requirements: PaymentRequirements) -> None:
        raw = payload.payload
        self.payload = payload
        self.requirements = requirements
        self.channel = str(raw["voucher"]["channelId"])
        self.max = int(str(raw["voucher"]["maxClaimableAmount"]))
        self.signature = str(raw["voucher"]["signature"])
        config = raw["channelConfig"]
        self.config: dict[str, Any] = {
            "payer": str(config["payer"]).lower(),
            "payer_authorizer": str(config["payerAuthorizer"]).lower(),
            "receiver": str(config["receiver"]).lower(),
            "receiver_authorizer": str(config["receiverAuthorizer"]).lower(),
            "token": str(config["token"]).lower(),
            "withdraw_delay": int(config["withdrawDelay"]),
            "salt": str(config["salt"]),
        }


def voucher_read(header: str, *, offered: Callable[[int], PaymentRequirements | None]) -> Voucher | None:
    """The voucher of a payment header, or None for Django to judge it. `offered(amount)` is
    the route's channel offer at that price."""
    payload = proof_peek(header, in_metadata=False)
    if not isinstance(payload, PaymentPayload) or payload.accepted.scheme != SCHEME:
        return None
    if _named(payload):
        return None  # the front answers a named payment once: Django
    raw = payload.payload
    if not is_voucher_payload(raw):
        return None  # a deposit (a transaction) or a refund: the scheme's own sequence
    try:
        amount = int(payload.accepted.amount)
        if not 0 < amount < 2**63:  # a price is a bigint: anything else is Django's to refuse
            return None
        requirements = offered(amount)
        if requirements is None or channel_server().find_matching_requirements([requirements], payload) is None:
            return None
        voucher = Voucher(payload=payload, requirements=requirements)
    except (KeyError, TypeError, ValueError):
        return None
    config = voucher.config
    if not (
        _CHANNEL_ID.match(voucher.channel)
        and _SIGNATURE.match(voucher.signature)
        and 0 < voucher.max < 2**128
        and all(_ADDRESS.match(config[k]) for k in ("payer", "payer_authorizer", "receiver", "receiver_authorizer", "token"))
        and int(config["payer_authorizer"], 16) != 0  # ERC-1271: the scheme asks the chain
        and _config_offered(voucher)
    ):
        return None
    signed_by = voucher_signer(
        channel_id=voucher.channel,
        max_claimable=voucher.max,
        signature=voucher.signature,
        chain_id=get_evm_chain_id(settings.X402_NETWORK),
    )
    return voucher if signed_by == config["payer_authorizer"] else None


def _named(payload: PaymentPayload) -> bool:
    """The payment carries a payment identifier with an id (billing/front/identifier.py; the
    402's declaration echoed back without one names nothing)."""
    declared = (payload.extensions or {}).get(PAYMENT_IDENTIFIER)
    info = declared.get("info") if isinstance(declared, dict) else None
    return declared is not None and (not isinstance(info, dict) or info.get("id") is not None)


def _config_offered(voucher: Voucher) -> bool:
    """The channel's configuration is the one the offer names (the SDK's validate_channel_config;
    its channel id binding holds for the row the statement finds: the row's id was bound to the
    same configuration when the channel was opened)."""
    config, requirements = voucher.config, voucher.requirements
    extra = requirements.extra or {}
    authorizer = str(extra.get("receiverAuthorizer") or "").lower()
    return (
        config["receiver"] == requirements.pay_to.lower()
        and bool(authorizer)
        and int(authorizer, 16) != 0
        and config["receiver_authorizer"] == authorizer
        and config["token"] == requirements.asset.lower()
        and ("withdrawDelay" not in extra or config["withdraw_delay"] == int(extra["withdrawDelay"]))
    )


class VoucherFastPath:
    """WSGI middleware in front of Django, behind the sign-in fast path."""

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app
        self.credit = fast.CreditFastPath(app)  # for its routes, base URLs and renderer
        self._offers: dict[tuple[Any, ...], PaymentRequirements | None] = {}

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if (
            environ.get("REQUEST_METHOD") != "GET"
            or "HTTP_PAYMENT_SIGNATURE" not in environ
            or environ.get("QUERY_STRING")
            or any(name in environ for name in _OTHER_MATERIAL)
            or "HTTP_ORIGIN" in environ
            or "HTTP_IDEMPOTENCY_KEY" in environ
        ):
            return self.app(environ, start_response)
        route = self.credit.routes().get(environ.get("PATH_INFO", ""))
        if route is None:
            return self.app(environ, start_response)
        return fast.answer_in_front(
            self.app, environ, start_response, route=route, serve=self._serve, layer="voucher_fast", name="voucher"
        )

    def _offered(self, amount: int, resource_url: str) -> PaymentRequirements | None:
        """The channel offer of a 402 at this price (channel_requirements, as Django's challenge
        builds it), kept per price and payment settings."""
        key = (
            amount,
            settings.X402_NETWORK,
            settings.USDC_ADDRESS,
            settings.TREASURY_ADDRESS,
            settings.X402_MAX_TIMEOUT_SECONDS,
            settings.USDC_EIP712_NAME,
            settings.USDC_EIP712_VERSION,
            settings.X402_CHANNEL_WITHDRAW_DELAY,
            settings.X402_CHANNEL_MIN_DEPOSIT,
            settings.RECEIVER_AUTHORIZER_PRIVATE_KEY,
        )
        if key not in self._offers:
            context = ChallengeContext(
                sku="", description="", price_atomic=amount, resource_url=resource_url, exact=exact_requirements(amount)
            )
            if len(self._offers) >= 256:
                self._offers.clear()
            self._offers[key] = channel_requirements(context)
        return self._offers[key]

    def _serve(self, environ: dict[str, Any], route: fast.FastRoute) -> fast.Answer | None:
        conn = connections["default"]
        if conn.vendor != "postgresql" or redis_client() is None or not channels_on():
            return None
        base = self.credit._base_url(environ)
        if base is None:
            return None
        resource = base + environ["PATH_INFO"]
        voucher = voucher_read(
            environ["HTTP_PAYMENT_SIGNATURE"], offered=lambda amount: self._offered(amount, resource)
        )
        if voucher is None:
            return None
        refused = fast.over_budget(base_throttle(), environ, route)
        if refused is not None:
            return refused
        if product_get(route.sku) is None:
            return None
        rail = FastVoucherRail(conn=conn, voucher=voucher, resource=resource, render=self.credit._renderer.render)
        return fast.sell_in_front(
            route=route, base=base, rail=rail, forget=lambda: None, label="x402", headers_of=_headers
        )


def _headers(receipt: Receipt) -> dict[str, str]:
    assert isinstance(receipt, X402Receipt)
    return {PAYMENT_RESPONSE_HEADER: encode_payment_response_header(receipt.settlement)}


class FastVoucherRail:
    """The channel rail of this fast path: the product runs first, then the one statement."""

    final_before_effects: ClassVar[bool] = False
    runs_first: ClassVar[bool] = True
    rail_name: ClassVar[str] = ""  # counted by the fast path itself (sell_in_front)

    def __init__(self, *, conn: Any, voucher: Voucher, resource: str, render: Callable[[Content], bytes]) -> None:
        self.conn = conn
        self.voucher = voucher
        self.resource = resource
        self.render = render
        self.body = b""

    def admit(self, offer: Offer) -> Paid | None:
        offer.call.payer = self.voucher.config["payer"]
        return None

    def scope(self, body: Callable[[], Paid]) -> Paid:
        return body()

    def hold(self, offer: Offer, content: Content | None) -> VoucherTaken:
        if content is None:
            raise RuntimeError("the voucher fast path runs the product before it charges")
        self.body = self.render(content)
        state = _voucher_take(self.conn, self.voucher, sku=offer.name, resource=self.resource[:500])
        if state is None:
            raise fast.DebitRefused(offer.name)
        return VoucherTaken(self.voucher, state)


class VoucherTaken:
    def __init__(self, voucher: Voucher, state: tuple[Any, ...]) -> None:
        self.voucher = voucher
        self.state = state

    def commit(self, content: Content | None) -> Receipt:
        """The SDK scheme's settle response for a voucher (server/settle.py handle_before_settle):
        the channel's state before the call with the new charged total, and the charged amount."""
        voucher, (channel_id, balance, claimed, withdraw_at, refund_nonce) = self.voucher, self.state
        requirements = voucher.requirements
        settlement = SettleResponse(
            success=True,
            payer=voucher.config["payer"],
            transaction="",
            network=requirements.network,
            amount="",
            extra={
                "channelState": {
                    "channelId": channel_id,
                    "balance": str(int(balance)),
                    "totalClaimed": str(int(claimed)),
                    "withdrawRequestedAt": int(withdraw_at),
                    "refundNonce": str(int(refund_nonce)),
                    "chargedCumulativeAmount": str(voucher.max),
                },
                "chargedAmount": requirements.amount,
            },
        )
        return X402Receipt(settlement=settlement, version=2, amount_atomic=int(requirements.amount))

    def release(self) -> None:
        raise RuntimeError("a voucher taken cannot be given back")

    def deliver(self, run: Callable[[], Content]) -> Content:
        return run()


class VoucherUnconfirmed(fast.ChargeUnconfirmed):
    """The connection failed while a voucher was taken and the channel could not be read after."""

    rail = "x402"

    def __init__(self, channel: str) -> None:
        ApiError.__init__(
            self,
            "the database connection failed while this voucher was taken and it could not be confirmed; "
            "nothing was served. Send the same voucher again: if it was taken, the answer is a 402 with "
            "the channel's state (the corrective 402 your client resyncs from).",
            extra={"channel": channel},
            headers={"Retry-After": "1"},
        )
        self.reference = channel


def _voucher_take(conn: Any, voucher: Voucher, *, sku: str, resource: str) -> tuple[Any, ...] | None:
    """The channel's state as the statement left it, if it took the voucher; None if it was
    refused (Django answers the call), or certain not to have committed."""
    raw = fast._raw(conn)
    if raw is None:
        return None
    now_ms = int(time.time() * 1000)
    params: dict[str, Any] = {
        **voucher.config,
        "channel": voucher.channel,
        "max": voucher.max,
        "signature": voucher.signature,
        "amount": int(voucher.requirements.amount),
        "now_ms": now_ms,
        "synced_after": now_ms - channel_scheme().get_onchain_state_ttl_ms(),
        "sku": sku,
        "resource": resource,
        "network": settings.X402_NETWORK,
    }
    try:
        return fast.prepared_row(raw, _VOUCHER, params)
    except psycopg.errors.UniqueViolation:
        return None  # its sale exists: the voucher was used (Django refuses it)
    except psycopg.OperationalError as exc:
        logger.warning("connection lost while taking a voucher; reading the channel", exc_info=True)
        fast._close(conn)
        try:
            raw = fast._raw(conn)
            if raw is None:
                raise VoucherUnconfirmed(voucher.channel) from exc
            with psycopg.Cursor(raw) as cur:
                taken = cur.execute(TAKEN_SQL, params).fetchone()
        except Exception as inner:
            raise VoucherUnconfirmed(voucher.channel) from inner
        if taken is None:
            return None
        return tuple(taken)
