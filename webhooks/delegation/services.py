"""Execution delegation, written: activate, revoke, the orders a desk signal becomes, fills.

An account delegates a desk's signals on some symbols to its webhook within notional limits
(`delegation_activate`). Each new desk signal on those symbols becomes a DelegatedOrder sized by
the signal's risk-based size fraction (the copy-signal sizing) times the per-signal maximum,
never over the delegation's remaining total, pushed as a signed `delegated_order` event through
the delegation's own webhook subscription (retries and dead letters as every webhook). The agent
executes it on its venue and reports each fill (`fill_report`); fills are checked against the
order's and the delegation's limits, with DELEGATION_FILL_TOLERANCE for price moves and fees.
When the desk closes the signal, an exit order closes what was reported filled on the entry, at
most the entry order's size (`order_exit_create`), bounded by its size rather than by the
notional limits. Fills are self-reported: each is recorded only when its price is within
DELEGATION_FILL_PRICE_TOLERANCE_PCT of the ingested market at its time (422 otherwise, and 422
when no ingested price covers that time)."""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta
from decimal import ROUND_DOWN, Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from a2a_service.core.errors import RequestValidationError
from a2a_service.core.formats import iso
from a2a_service.core.money import ATOMIC_PER_USDC, atomic_from_usdc, usdc_from_atomic
from billing.models import Account
from catalog.models import Candle, DeskSignal, DeskState
from catalog.products.copy_signals import size_fraction
from webhooks.delegation.selectors import MarketRange, market_range
from webhooks.models import (
    DelegatedFill,
    DelegatedOrder,
    Delegation,
    WebhookDelivery,
    WebhookSubscription,
)
from webhooks.services import TargetRefused, event_publish, subscription_create

logger = logging.getLogger(__name__)

REPORT_FILL_PATH = "/api/a2a/account/delegation/report-fill"
# A fill reported as done this far in the future is refused (clock skew is allowed for).
FILL_FUTURE_SKEW = timedelta(minutes=5)
# The largest notional a fill row holds (a signed 64-bit integer of atomic USDC).
LEDGER_MAX_ATOMIC = 2**63 - 1


def _invalid(field: str, msg: str, type_: str) -> RequestValidationError:
    return RequestValidationError.single(["body", field], msg, type_)


def desk_known(desk: str) -> bool:
    """A desk of the track record: registered with the analytics pass, or with rows in it."""
    from catalog.editorial.intel import DESKS

    return (
        desk in DESKS
        or DeskState.objects.filter(desk=desk).exists()
        or DeskSignal.objects.filter(desk=desk).exists()
    )


def desk_symbols_unknown(desk: str, symbols: list[str]) -> list[str]:
    """Those of `symbols` the desk cannot signal: neither signalled by it before nor with
    ingested candles (the desks' pass computes its signals over every symbol with candles).
    One indexed existence check per symbol, never a scan of the candles."""
    signalled = set(DeskSignal.objects.filter(desk=desk, symbol__in=symbols).values_list("symbol", flat=True))
    return sorted(s for s in set(symbols) - signalled if not Candle.objects.filter(symbol=s).exists())


def _gate_factor(signal: DeskSignal) -> float:
    basis = signal.basis if isinstance(signal.basis, dict) else {}
    try:
        return float(basis.get("size_factor", 1.0))
    except (TypeError, ValueError):
        return 1.0


def signal_size_fraction(signal: DeskSignal) -> float:
    """The desk's size for a signal: the copy-signal sizing (risk per trade over the stop
    distance, times the regime gate's factor, capped); 0 without a stop (no size published)."""
    fraction, _, _ = size_fraction(
        entry=float(signal.entry_price),
        stop=float(signal.stop_price) if signal.stop_price is not None else None,
        gate_factor=_gate_factor(signal),
    )
    return max(0.0, min(fraction, 1.0))


def committed_atomic(delegation: Delegation) -> int:
    """The notional of the delegation's entry orders, except those never sent (skipped: no
    pack and not enough credit); what the next order's size is capped by. Exit orders reduce
    exposure and do not count."""
    entries = delegation.orders.filter(kind=DelegatedOrder.Kind.ENTRY)
    skipped = WebhookDelivery.objects.filter(
        event_id__in=entries.values("event_id"), state=WebhookDelivery.State.SKIPPED
    ).values("event_id")
    total = entries.exclude(event_id__in=skipped).aggregate(n=Sum("notional_atomic"))["n"]
    return int(total or 0)


def filled_atomic(*, delegation: Delegation | None = None, order: DelegatedOrder | None = None) -> int:
    """The filled notional of one order, or of a delegation's entry orders (its exposure)."""
    rows = DelegatedFill.objects.all()
    if delegation is not None:
        rows = rows.filter(delegation=delegation, order__kind=DelegatedOrder.Kind.ENTRY)
    if order is not None:
        rows = rows.filter(order=order)
    return int(rows.aggregate(n=Sum("notional_atomic"))["n"] or 0)


def filled_size(order: DelegatedOrder) -> Decimal:
    return Decimal(order.fills.aggregate(n=Sum("size"))["n"] or 0)


def _order_payload(order: DelegatedOrder, signal: DeskSignal, delegation: Delegation) -> dict[str, Any]:
    return {
        "order_id": str(order.id),
        "kind": order.kind,
        "closes_order_id": str(order.closes_id) if order.closes_id else None,
        "reason": (
            f"the desk closed the signal: {signal.get_exit_reason_display() or 'closed'}"
            if order.kind == DelegatedOrder.Kind.EXIT
            else "the desk opened the signal"
        ),
        "delegation_id": str(delegation.id),
        "desk": order.desk,
        "signal_id": signal.id,
        "symbol": order.symbol,
        "venue": order.venue,
        "side": order.side,
        "order_type": "market",
        "reference_price": float(order.reference_price),
        "stop": float(signal.stop_price) if signal.stop_price is not None else None,
        "target": float(signal.target_price) if signal.target_price is not None else None,
        "size": float(order.size),
        "notional_usdc": usdc_from_atomic(order.notional_atomic),
        "size_fraction": order.size_fraction,
        "signal_expires_at": iso(signal.expires_at),
        "delegation_expires_at": iso(delegation.expires_at) or "",
        "report_fill": (settings.PUBLIC_BASE_URL or "") + REPORT_FILL_PATH,
    }


def order_create(*, delegation: Delegation, signal: DeskSignal) -> DelegatedOrder | None:
    """The order `signal` becomes for `delegation`, pushed to its webhook; None when the
    delegation is not active, does not cover the symbol, already has it, has nowhere to push, or
    has no notional left (or the desk published no size). Takes the delegation's row lock, so
    concurrent dispatches (the publish hook, the sweep) never overshoot the total."""
    with transaction.atomic():
        d = Delegation.objects.select_for_update().get(pk=delegation.pk)
        if d.status != Delegation.Status.ACTIVE or signal.symbol not in (d.symbols or []):
            return None
        if signal.desk != d.desk or signal.closed_at is not None:
            return None
        if DelegatedOrder.objects.filter(
            delegation=d, signal=signal, kind=DelegatedOrder.Kind.ENTRY
        ).exists():
            return None
        sub = (
            WebhookSubscription.objects.filter(pk=d.subscription_id, is_active=True).first()
            if d.subscription_id is not None
            else None
        )
        if sub is None:
            return None  # its webhook was deleted or disabled (410): an order nobody receives is no order
        fraction = signal_size_fraction(signal)
        wanted = int(d.max_notional_per_signal_atomic * Decimal(str(fraction)))
        notional = min(wanted, d.max_notional_total_atomic - committed_atomic(d))
        entry = Decimal(signal.entry_price)
        if notional <= 0 or entry <= 0:
            return None
        size = (Decimal(notional) / ATOMIC_PER_USDC / entry).quantize(Decimal("1e-12"), rounding=ROUND_DOWN)
        order = DelegatedOrder.objects.create(
            delegation=d,
            signal=signal,
            desk=signal.desk,
            symbol=signal.symbol,
            venue=signal.venue,
            side=DelegatedOrder.Side.BUY if signal.side == DeskSignal.Side.LONG else DelegatedOrder.Side.SELL,
            reference_price=entry,
            size_fraction=round(fraction, 6),
            notional_atomic=notional,
            size=size,
        )
        _order_push(order, signal, d, sub)
    return order


def _order_push(order: DelegatedOrder, signal: DeskSignal, d: Delegation, sub: WebhookSubscription) -> None:
    """Publish the order to the delegation's webhook (a signed `delegated_order` event)."""
    order.event = event_publish(
        kind="delegated_order",
        payload=_order_payload(order, signal, d),
        account_id=d.account_id,
        subscription_id=sub.id,
    )
    order.save(update_fields=["event"])


def order_exit_create(*, entry: DelegatedOrder, signal: DeskSignal) -> DelegatedOrder | None:
    """When the desk closed `signal`: the order that closes what was reported filled on its
    entry order (a sell for a bought entry, a buy for a short one), at the signal's exit price.
    None when the delegation is not active, nothing was filled, the exit exists already, or its
    webhook is gone."""
    with transaction.atomic():
        d = Delegation.objects.select_for_update().get(pk=entry.delegation_id)
        if d.status != Delegation.Status.ACTIVE or entry.kind != DelegatedOrder.Kind.ENTRY:
            return None
        if DelegatedOrder.objects.filter(delegation=d, signal=signal, kind=DelegatedOrder.Kind.EXIT).exists():
            return None
        # Sized from the order: what was reported filled on the entry, never more than the entry
        # order itself (a reported fill cannot make the exit, and its PnL, larger).
        size = min(filled_size(entry), entry.size)
        sub = (
            WebhookSubscription.objects.filter(pk=d.subscription_id, is_active=True).first()
            if d.subscription_id is not None
            else None
        )
        if size <= 0 or sub is None:
            return None
        price = Decimal(signal.exit_price if signal.exit_price is not None else signal.entry_price)
        order = DelegatedOrder.objects.create(
            delegation=d,
            signal=signal,
            desk=entry.desk,
            symbol=entry.symbol,
            venue=entry.venue,
            side=DelegatedOrder.Side.SELL
            if entry.side == DelegatedOrder.Side.BUY
            else DelegatedOrder.Side.BUY,
            kind=DelegatedOrder.Kind.EXIT,
            closes=entry,
            reference_price=price,
            size_fraction=entry.size_fraction,
            notional_atomic=atomic_from_usdc(size * price),
            size=size,
        )
        _order_push(order, signal, d, sub)
    return order


def exits_dispatch(*, signal_id: int) -> list[DelegatedOrder]:
    """The exit orders of a signal the desk closed, one per entry order of an active delegation."""
    signal = DeskSignal.objects.filter(pk=signal_id, closed_at__isnull=False).first()
    if signal is None:
        return []
    out = []
    for entry in DelegatedOrder.objects.filter(signal=signal, kind=DelegatedOrder.Kind.ENTRY):
        order = order_exit_create(entry=entry, signal=signal)
        if order is not None:
            out.append(order)
    return out


def delegation_activate(
    *,
    account: Account,
    desk: str,
    symbols: list[str],
    max_notional_per_signal_usdc: float,
    max_notional_total_usdc: float,
    expires_in_hours: int,
    webhook_url: str,
    include_open: bool = False,
) -> Delegation:
    """Start a delegation with its own webhook subscription (the signing secret is the
    subscription's, shown once by the caller). 422 for an unknown desk or symbol, limits that
    contradict each other, or a webhook target the webhook rules refuse."""
    if not desk_known(desk):
        raise _invalid("desk", f"unknown desk {desk!r}; see /api/a2a/program/scorecard-30d", "desk_unknown")
    wanted = list(dict.fromkeys(symbols))
    unknown = desk_symbols_unknown(desk, wanted)
    if unknown:
        raise _invalid("symbols", f"symbols the desk does not trade: {', '.join(unknown)}", "symbol_unknown")
    per_signal = atomic_from_usdc(max_notional_per_signal_usdc)
    total = atomic_from_usdc(max_notional_total_usdc)
    if per_signal > total:
        raise _invalid(
            "max_notional_per_signal_usdc",
            "max_notional_per_signal_usdc is more than max_notional_total_usdc",
            "limits_inconsistent",
        )
    with transaction.atomic():
        try:
            sub = subscription_create(
                account=account,
                url=webhook_url,
                events=["delegated_order"],
                description=f"execution delegation: {desk}",
            )
        except TargetRefused as exc:
            raise _invalid("webhook_url", str(exc), "webhook_target") from None
        delegation = Delegation.objects.create(
            account=account,
            desk=desk,
            symbols=wanted,
            max_notional_per_signal_atomic=per_signal,
            max_notional_total_atomic=total,
            subscription=sub,
            expires_at=timezone.now() + timedelta(hours=expires_in_hours),
        )
        if include_open:
            for signal in DeskSignal.objects.filter(
                desk=desk, symbol__in=wanted, closed_at__isnull=True
            ).order_by("opened_at", "id"):
                order_create(delegation=delegation, signal=signal)
    return delegation


def delegation_revoke(*, account: Account, delegation_id: str) -> Delegation | None:
    """Stop a delegation: no new orders, and its webhook is disabled (pending orders are not
    delivered; what they were charged is refunded by the delivery). None when not the caller's."""
    key = _uuid(delegation_id)
    if key is None:
        return None
    with transaction.atomic():
        d = Delegation.objects.select_for_update().filter(pk=key, account=account).first()
        if d is None:
            return None
        if d.revoked_at is None:
            d.revoked_at = timezone.now()
            d.save(update_fields=["revoked_at"])
            if d.subscription_id is not None:
                WebhookSubscription.objects.filter(pk=d.subscription_id).update(
                    is_active=False, disabled_reason="delegation revoked"
                )
    return d


def _uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except (ValueError, AttributeError, TypeError):
        return None


def delegation_of(*, account: Account, delegation_id: str) -> Delegation | None:
    key = _uuid(delegation_id)
    return Delegation.objects.filter(pk=key, account=account).first() if key is not None else None


def _dec(value: float) -> Decimal:
    return Decimal(str(value))


def fill_report(
    *,
    account: Account,
    order_id: str,
    venue: str,
    fill_price: float,
    size: float,
    fee_usdc: float,
    filled_at: datetime,
    tx_hash: str | None = None,
    client_fill_id: str | None = None,
) -> tuple[DelegatedFill, bool]:
    """Record a fill of one of the caller's orders; (fill, created). A repeat of a fill already
    recorded (same order and tx_hash, or same order and client_fill_id) returns that fill.
    Refused with 422, nothing recorded: an order not in the caller's delegations, a delegation
    no longer active, or a fill that takes the order's or the delegation's filled notional
    (size x price) beyond its limit by more than DELEGATION_FILL_TOLERANCE."""
    key = _uuid(order_id)
    found = (
        DelegatedOrder.objects.filter(pk=key, delegation__account=account)
        .values_list("pk", "delegation_id")
        .first()
        if key is not None
        else None
    )
    if found is None:
        raise _invalid("order_id", "no such order in your delegations", "order_unknown")
    if filled_at > timezone.now() + FILL_FUTURE_SKEW:
        raise _invalid("filled_at", "filled_at is in the future", "filled_at_future")
    with transaction.atomic():
        # The delegation's row lock serializes its fills: the limit checks read committed sums.
        d = Delegation.objects.select_for_update().get(pk=found[1])
        order = DelegatedOrder.objects.get(pk=found[0])
        repeat = DelegatedFill.objects.none()
        if tx_hash:
            repeat = repeat | DelegatedFill.objects.filter(order=order, tx_hash=tx_hash)
        if client_fill_id:
            repeat = repeat | DelegatedFill.objects.filter(order=order, client_fill_id=client_fill_id)
        earlier = repeat.first()
        if earlier is not None:
            return earlier, False
        if d.status != Delegation.Status.ACTIVE:
            raise _invalid("order_id", f"the delegation is {d.status}", f"delegation_{d.status}")
        price, qty = _dec(fill_price), _dec(size)
        notional = atomic_from_usdc(price * qty)
        if notional > LEDGER_MAX_ATOMIC:
            raise _invalid(
                "fill_price",
                f"size x fill_price is {price * qty} USDC, more than the ledger holds "
                f"({usdc_from_atomic(LEDGER_MAX_ATOMIC)} USDC)",
                "notional_too_large",
            )
        market = _market_check(order, price, filled_at)
        tolerance = Decimal(str(settings.DELEGATION_FILL_TOLERANCE))
        # Every order (entry or exit) bounds the size filled on it: the size is the order's, never
        # whatever a reported price makes of the notional.
        done = filled_size(order)
        if done + qty > order.size * (1 + tolerance):
            raise _invalid(
                "size",
                f"size {qty} takes the order over its size: {done} of {order.size} filled "
                f"(tolerance {float(tolerance) * 100:g}%)",
                "order_limit",
            )
        if order.kind == DelegatedOrder.Kind.ENTRY:
            order_filled = filled_atomic(order=order)
            order_cap = int(order.notional_atomic * (1 + tolerance))
            if order_filled + notional > order_cap:
                raise _invalid(
                    "size",
                    f"size x fill_price {usdc_from_atomic(notional)} USDC takes the order over its notional: "
                    f"{usdc_from_atomic(order_filled)} of {usdc_from_atomic(order.notional_atomic)} USDC filled "
                    f"(tolerance {float(tolerance) * 100:g}%)",
                    "order_limit",
                )
            total_filled = filled_atomic(delegation=d)
            total_cap = int(d.max_notional_total_atomic * (1 + tolerance))
            if total_filled + notional > total_cap:
                raise _invalid(
                    "size",
                    f"size x fill_price {usdc_from_atomic(notional)} USDC takes the delegation over its total: "
                    f"{usdc_from_atomic(total_filled)} of {usdc_from_atomic(d.max_notional_total_atomic)} USDC "
                    f"filled (tolerance {float(tolerance) * 100:g}%)",
                    "delegation_limit",
                )
        fill = DelegatedFill.objects.create(
            order=order,
            delegation=d,
            desk=order.desk,
            symbol=order.symbol,
            side=order.side,
            venue=venue,
            price=price,
            size=qty,
            notional_atomic=notional,
            fee_atomic=atomic_from_usdc(fee_usdc),
            filled_at=filled_at,
            tx_hash=tx_hash or "",
            client_fill_id=client_fill_id or "",
            market_low=market.low,
            market_high=market.high,
            market_source=market.source,
        )
    return fill, True


def _market_check(order: DelegatedOrder, price: Decimal, filled_at: datetime) -> MarketRange:
    """The market at the fill's time, and the fill's price within DELEGATION_FILL_PRICE_TOLERANCE_PCT
    of it; 422 otherwise, and 422 when no ingested price covers that time (a self-reported fill
    is recorded only against a known market, so it cannot move the public record by itself)."""
    window = timedelta(seconds=settings.DELEGATION_FILL_PRICE_WINDOW_SECONDS)
    market = market_range(order.symbol, filled_at, window)
    if market is None:
        raise _invalid(
            "filled_at",
            f"no ingested price of {order.symbol} within {window.total_seconds():g} s of filled_at "
            f"{iso(filled_at)}: a fill is recorded only against a known market price",
            "market_price_unknown",
        )
    pct = Decimal(str(settings.DELEGATION_FILL_PRICE_TOLERANCE_PCT)) / 100
    low, high = market.low * (1 - pct), market.high * (1 + pct)
    if not low <= price <= high:
        raise _invalid(
            "fill_price",
            f"fill_price {price} is more than {float(pct) * 100:g}% away from the market at filled_at: "
            f"{order.symbol} traded {market.low.normalize()} to {market.high.normalize()} ({market.source})",
            "fill_price_off_market",
        )
    return market


def delegations_dispatch(*, signal: DeskSignal) -> list[DelegatedOrder]:
    """Every active delegation of the signal's desk covering its symbol gets its order."""
    orders = []
    now = timezone.now()
    for d in Delegation.objects.filter(desk=signal.desk, revoked_at__isnull=True, expires_at__gt=now):
        if signal.symbol in (d.symbols or []):
            order = order_create(delegation=d, signal=signal)
            if order is not None:
                orders.append(order)
    return orders
