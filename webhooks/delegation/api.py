"""Execution delegation routes (X-API-Key): activate, report a fill, status, one delegation,
revoke. Free to call (an account feature, no SKU); each delegated_order pushed is priced as
a copy_signal push (covered by a signal desk pack, else debited per delivered event)."""

from __future__ import annotations

import uuid
from decimal import Decimal

from drf_spectacular.utils import extend_schema
from pydantic import BaseModel, Field
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core import schemas as s
from a2a_service.core.errors import NotFound
from a2a_service.core.formats import iso
from a2a_service.core.inputs import parse_body
from a2a_service.core.money import usdc_from_atomic
from a2a_service.core.views import ApiView, ok
from billing.api.auth import api_key_account
from billing.api.views import API_KEY_HEADER
from catalog.api.bodies import A2aDelegationActivateBody, A2aDelegationFillBody
from webhooks.delegation import services
from webhooks.delegation.selectors import books_of, mark_price
from webhooks.models import DelegatedFill, DelegatedOrder, Delegation, WebhookDelivery

PRICING = (
    "Free to call (an account feature on X-API-Key, no SKU). Each order pushed is a delegated_order webhook "
    "event, priced like a copy_signal push (see /api/a2a/webhooks/events): covered by a signal desk pack, "
    "else debited from your credits per delivered event; without either the order is recorded but not sent."
)


class MarkOut(BaseModel):
    price: float
    as_of: str
    source: str = Field(description="ticker:<feed> (an exchange ticker's last price) or candle <tf>:<feed>")
    venue: str
    replay: bool = Field(description="true: the price comes from the local replay's recorded data")


class PositionOut(BaseModel):
    symbol: str
    size: float = Field(description="open position in the base asset: positive long, negative short")
    avg_entry_price: float | None = Field(description="of the open lots (FIFO)")
    realized_pnl_usdc: float = Field(description="before fees")
    fees_usdc: float
    unrealized_pnl_usdc: float | None = Field(description="the open lots at the mark; null without a price")
    mark: MarkOut | None


class PnlOut(BaseModel):
    realized_pnl_usdc: float = Field(description="FIFO per symbol: sells against buys, before fees")
    fees_usdc: float
    realized_net_usdc: float = Field(description="realized minus every fee paid")
    unrealized_pnl_usdc: float = Field(description="open positions at their marks (those with a price)")
    total_pnl_usdc: float = Field(description="realized_net + unrealized")
    unmarked_symbols: list[str] = Field(description="open positions without any ingested price")
    replay: bool = Field(description="true when a mark comes from the local replay's recorded data")
    method: str


class OrderOut(BaseModel):
    id: str
    kind: str = Field(description="entry (the signal opened) or exit (the desk closed it)")
    closes_order_id: str | None
    signal_id: int | None
    symbol: str
    venue: str
    side: str
    reference_price: float
    size: float
    notional_usdc: float
    size_fraction: float
    filled_size: float
    filled_notional_usdc: float
    delivery: str = Field(description="the webhook delivery: pending, delivering, delivered, dead, skipped")
    created_at: str


class FillMarketOut(BaseModel):
    low: float
    high: float
    source: str = Field(description="the ingested bars (candle <tf>:<venue>/<feed>) and tickers it comes from")


class FillOut(BaseModel):
    id: int
    order_id: str
    symbol: str
    side: str
    venue: str
    fill_price: float
    size: float
    notional_usdc: float
    fee_usdc: float
    filled_at: str
    tx_hash: str | None
    client_fill_id: str | None
    market: FillMarketOut | None = Field(
        description="what the market traded at around filled_at, the fill was checked against; null: recorded "
        "before the check existed (not counted in the scorecard)"
    )


class DelegationOut(BaseModel):
    id: str
    desk: str
    symbols: list[str]
    status: str = Field(description="active, expired or revoked")
    max_notional_per_signal_usdc: float
    max_notional_total_usdc: float
    ordered_notional_usdc: float = Field(
        description="the entry orders' notional (orders never sent excluded; exits reduce exposure and do not count)"
    )
    remaining_notional_usdc: float = Field(description="what further orders may still add up to")
    filled_notional_usdc: float = Field(
        description="of the entry orders (what max_notional_total_usdc bounds)"
    )
    fill_tolerance: float = Field(description="a fill may exceed a limit by this fraction of it")
    webhook_url: str | None
    webhook_active: bool
    expires_at: str
    revoked_at: str | None
    created_at: str
    orders: list[OrderOut]
    fills: list[FillOut]
    positions: list[PositionOut]
    pnl: PnlOut


class DelegationActivatedOut(DelegationOut):
    secret: str = Field(
        description="whsec_… signing secret of the order pushes, shown once: verify them with Standard Webhooks"
    )


class DelegationsOut(BaseModel):
    delegations: list[DelegationOut]


class FillReportedOut(BaseModel):
    fill: FillOut
    duplicate: bool = Field(
        description="true: this fill was already recorded (same tx_hash or client_fill_id)"
    )
    order: OrderOut
    delegation_remaining_notional_usdc: float
    pnl: PnlOut


def _f(x: Decimal | float) -> float:
    return round(float(x), 12)


def _fill_out(f: DelegatedFill) -> FillOut:
    return FillOut(
        id=f.id,
        order_id=str(f.order_id),
        symbol=f.symbol,
        side=f.side,
        venue=f.venue,
        fill_price=_f(f.price),
        size=_f(f.size),
        notional_usdc=usdc_from_atomic(f.notional_atomic),
        fee_usdc=usdc_from_atomic(f.fee_atomic),
        filled_at=iso(f.filled_at) or "",
        tx_hash=f.tx_hash or None,
        client_fill_id=f.client_fill_id or None,
        market=FillMarketOut(low=_f(f.market_low), high=_f(f.market_high), source=f.market_source)
        if f.market_source and f.market_low is not None and f.market_high is not None
        else None,
    )


def _order_out(o: DelegatedOrder, fills: list[DelegatedFill], states: dict[uuid.UUID, str]) -> OrderOut:
    mine = [f for f in fills if f.order_id == o.id]
    return OrderOut(
        id=str(o.id),
        kind=o.kind,
        closes_order_id=str(o.closes_id) if o.closes_id else None,
        signal_id=o.signal_id,
        symbol=o.symbol,
        venue=o.venue,
        side=o.side,
        reference_price=_f(o.reference_price),
        size=_f(o.size),
        notional_usdc=usdc_from_atomic(o.notional_atomic),
        size_fraction=o.size_fraction,
        filled_size=_f(sum((f.size for f in mine), Decimal(0))),
        filled_notional_usdc=usdc_from_atomic(sum(f.notional_atomic for f in mine)),
        delivery=states.get(o.event_id, "none") if o.event_id is not None else "none",
        created_at=iso(o.created_at) or "",
    )


def _positions(d: Delegation, fills: list[DelegatedFill]) -> tuple[list[PositionOut], PnlOut]:
    venues = {o.symbol: o.venue for o in d.orders.all()}
    positions = []
    realized = fees = unrealized = Decimal(0)
    unmarked: list[str] = []
    replay = False
    for symbol, book in sorted(books_of(fills).items()):
        realized += book.realized
        fees += book.fees
        mark = mark_price(symbol, venues.get(symbol, "")) if book.position else None
        gain = book.unrealized(mark.price) if mark is not None else None
        if book.position and mark is None:
            unmarked.append(symbol)
        if gain is not None:
            unrealized += gain
            replay = replay or (mark is not None and mark.replay)
        avg = book.avg_entry
        positions.append(
            PositionOut(
                symbol=symbol,
                size=_f(book.position),
                avg_entry_price=_f(avg) if avg is not None else None,
                realized_pnl_usdc=round(float(book.realized), 6),
                fees_usdc=round(float(book.fees), 6),
                unrealized_pnl_usdc=round(float(gain), 6) if gain is not None else None,
                mark=MarkOut(
                    price=_f(mark.price),
                    as_of=iso(mark.as_of) or "",
                    source=mark.source,
                    venue=mark.venue,
                    replay=mark.replay,
                )
                if mark is not None
                else None,
            )
        )
    pnl = PnlOut(
        realized_pnl_usdc=round(float(realized), 6),
        fees_usdc=round(float(fees), 6),
        realized_net_usdc=round(float(realized - fees), 6),
        unrealized_pnl_usdc=round(float(unrealized), 6),
        total_pnl_usdc=round(float(realized - fees + unrealized), 6),
        unmarked_symbols=unmarked,
        replay=replay,
        method="FIFO per symbol on the reported fills; open lots marked at the newest ingested price "
        "(the order venue's ticker or candle close first)",
    )
    return positions, pnl


def delegation_out(d: Delegation) -> DelegationOut:
    from django.conf import settings

    orders = list(d.orders.order_by("created_at"))
    fills = list(d.fills.order_by("filled_at", "id"))
    states = dict(
        WebhookDelivery.objects.filter(event_id__in=[o.event_id for o in orders if o.event_id]).values_list(
            "event_id", "state"
        )
    )
    positions, pnl = _positions(d, fills)
    committed = services.committed_atomic(d)
    sub = d.subscription
    return DelegationOut(
        id=str(d.id),
        desk=d.desk,
        symbols=list(d.symbols or []),
        status=d.status,
        max_notional_per_signal_usdc=usdc_from_atomic(d.max_notional_per_signal_atomic),
        max_notional_total_usdc=usdc_from_atomic(d.max_notional_total_atomic),
        ordered_notional_usdc=usdc_from_atomic(committed),
        remaining_notional_usdc=usdc_from_atomic(max(d.max_notional_total_atomic - committed, 0)),
        filled_notional_usdc=usdc_from_atomic(services.filled_atomic(delegation=d)),
        fill_tolerance=settings.DELEGATION_FILL_TOLERANCE,
        webhook_url=sub.url if sub is not None else None,
        webhook_active=bool(sub is not None and sub.is_active),
        expires_at=iso(d.expires_at) or "",
        revoked_at=iso(d.revoked_at),
        created_at=iso(d.created_at) or "",
        orders=[_order_out(o, fills, states) for o in orders],
        fills=[_fill_out(f) for f in fills],
        positions=positions,
        pnl=pnl,
    )


AUTH = {401: s.UnauthorizedOut}


class DelegationActivateView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Activate execution delegation",
        description="From now until expires_in_hours, each new signal the desk publishes on one of `symbols` "
        "is pushed to webhook_url as a delegated_order (kind entry): side from the signal (long: buy, short: sell), notional "
        "= max_notional_per_signal_usdc x the signal's size fraction (risk per trade over the stop distance, "
        "times the regime gate, capped at 1), never more than what max_notional_total_usdc leaves. When the desk "
        "closes the signal, an exit order (kind exit) closes the size you reported filled on the entry. Pushes are "
        "signed with Standard Webhooks headers using the returned secret (shown once) and retried. "
        "webhook_url follows the webhook rules (https, public address); its subscription counts against "
        "WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT (409 subscription_limit). " + PRICING,
        operation_id="delegation_activate",
        request=A2aDelegationActivateBody,
        parameters=[API_KEY_HEADER],
        responses={201: DelegationActivatedOut, **AUTH, 409: s.ErrorOut, 422: s.HTTPValidationError},
    )
    def post(self, request: Request) -> Response:
        account = api_key_account(request)
        body = parse_body(request, A2aDelegationActivateBody)
        d = services.delegation_activate(
            account=account,
            desk=body.desk,
            symbols=list(body.symbols),
            max_notional_per_signal_usdc=body.max_notional_per_signal_usdc,
            max_notional_total_usdc=body.max_notional_total_usdc,
            expires_in_hours=body.expires_in_hours,
            webhook_url=body.webhook_url,
            include_open=body.include_open,
        )
        out = delegation_out(d)
        secret = d.subscription.secret if d.subscription is not None else ""
        return ok(DelegationActivatedOut(**out.model_dump(), secret=secret), status=201)


class DelegationFillView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Report a fill of a delegated order",
        description="Records a fill of one of your delegated orders (its side is the order's). Refused with 422, "
        "nothing recorded: an order not in your delegations (order_unknown), a delegation expired or revoked "
        "(delegation_expired, delegation_revoked), a fill whose size x fill_price takes the order's filled "
        "notional over its notional (order_limit) or the delegation's over max_notional_total_usdc "
        "(delegation_limit), beyond DELEGATION_FILL_TOLERANCE (default 1%: price moves and fee rounding); a fill "
        "taking an order over its size (order_limit); a fill_price more than DELEGATION_FILL_PRICE_TOLERANCE_PCT "
        "(default 3%) outside what the market traded within DELEGATION_FILL_PRICE_WINDOW_SECONDS (300 s) of "
        "filled_at (fill_price_off_market), or no ingested price for that time (market_price_unknown); size x "
        "fill_price more than the ledger holds (notional_too_large). "
        "Idempotent: the same order with the same tx_hash or client_fill_id returns the recorded fill "
        "(duplicate: true). Fills are shown in the desk's scorecard as live_fills, self-reported and apart from "
        "its win rate and PnL. Free.",
        operation_id="delegation_report_fill",
        request=A2aDelegationFillBody,
        parameters=[API_KEY_HEADER],
        responses={201: FillReportedOut, 200: FillReportedOut, **AUTH, 422: s.HTTPValidationError},
    )
    def post(self, request: Request) -> Response:
        account = api_key_account(request)
        body = parse_body(request, A2aDelegationFillBody)
        fill, created = services.fill_report(
            account=account,
            order_id=body.order_id,
            venue=body.venue,
            fill_price=body.fill_price,
            size=body.size,
            fee_usdc=body.fee_usdc,
            filled_at=body.filled_at,
            tx_hash=body.tx_hash,
            client_fill_id=body.client_fill_id,
        )
        d = fill.delegation
        out = delegation_out(d)
        order = next(o for o in out.orders if o.id == str(fill.order_id))
        return ok(
            FillReportedOut(
                fill=_fill_out(fill),
                duplicate=not created,
                order=order,
                delegation_remaining_notional_usdc=usdc_from_atomic(
                    max(d.max_notional_total_atomic - services.filled_atomic(delegation=d), 0)
                ),
                pnl=out.pnl,
            ),
            status=201 if created else 200,
        )


class DelegationStatusView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Your execution delegations: orders, fills, positions, PnL",
        description="Every delegation of the caller, newest first, with its orders, fills, open positions "
        "marked at the newest ingested price (as_of, source, replay) and realized/unrealized PnL. Free.",
        operation_id="delegation_status",
        parameters=[API_KEY_HEADER],
        responses={200: DelegationsOut, **AUTH},
    )
    def get(self, request: Request) -> Response:
        account = api_key_account(request)
        rows = (
            Delegation.objects.filter(account=account).select_related("subscription").order_by("-created_at")
        )
        return ok(DelegationsOut(delegations=[delegation_out(d) for d in rows[:50]]))


class DelegationDetailView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="One of your execution delegations",
        operation_id="delegation_get",
        parameters=[API_KEY_HEADER],
        responses={200: DelegationOut, **AUTH, 404: s.ErrorOut},
    )
    def get(self, request: Request, delegation_id: str) -> Response:
        d = services.delegation_of(account=api_key_account(request), delegation_id=delegation_id)
        if d is None:
            raise NotFound("no such delegation of yours")
        return ok(delegation_out(d))


class DelegationRevokeView(ApiView):
    @extend_schema(
        tags=["accounts"],
        summary="Revoke one of your execution delegations",
        description="No new orders; its webhook is disabled, so pending pushes are not delivered (and what they "
        "were charged is refunded). Fills can no longer be reported on it. Free.",
        operation_id="delegation_revoke",
        parameters=[API_KEY_HEADER],
        request=None,
        responses={200: DelegationOut, **AUTH, 404: s.ErrorOut},
    )
    def post(self, request: Request, delegation_id: str) -> Response:
        d = services.delegation_revoke(account=api_key_account(request), delegation_id=delegation_id)
        if d is None:
            raise NotFound("no such delegation of yours")
        return ok(delegation_out(d))
