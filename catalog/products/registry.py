"""Product specs: the single source of what the service sells.

One frozen, keyword-only `ProductSpec` per SKU says everything about a product: its SKU name
and paid path, its presentation and default price (seeded into the Sku row staff then edit),
its free teasers, the X-API-Key routes that also sell it, its parameters, its output model and
the function that runs it. The URL tables, the paid-call fast paths, the OpenAPI document,
`/.well-known/x402`, the storefront, the MCP catalog and the agent cards all read the specs.
Every payment route (x402, credits, sessions, and the protocol surfaces) runs the same `run`,
so a product is written once: adding one is one module that registers its spec, and its test.

A spec without a `run` is listed by its SKU row as `coming_soon` (never advertised as live) and
its paid routes answer 503 uncharged until a later change builds it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from a2a_service.core.inputs import QueryModel
from catalog.analytics.provenance import Provenance

X402_PREFIX = "/api/a2a/x402"
LIVE_INTEL = "live_intel"
EXECUTION_INTELLIGENCE = "execution_intelligence"


class ProductFailed(Exception):
    """The product could not produce its content (e.g. no data yet). The caller is not
    charged; the route answers 503 with this message."""


@dataclass
class ProductCall:
    """What a product needs to run: validated parameters and who is calling."""

    sku: Any  # catalog.models.Sku (None on the WSGI fast path, which reads no row)
    params: BaseModel | None
    base_url: str
    payer: str | None = None
    account: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


RunFn = Callable[[ProductCall], dict[str, Any]]
# A metered product's use of one call: (the call, its content, the authorized maximum in atomic
# USDC) -> the atomic USDC the call actually used, 0 <= used <= maximum.
MeterFn = Callable[[ProductCall, dict[str, Any], int], int]


def fresh_required(prov: Provenance, what: str = "fresh market data") -> None:
    """Refuse to sell (503, nothing charged) when none of a payload's inputs is within its
    freshness limit (the analytics say whether they are, Provenance.stale; selling is ours)."""
    if prov.stale:
        raise ProductFailed(
            f"no {what} newer than {int(prov.max_age.total_seconds())} s; nothing was charged"
        )


def not_built(call: ProductCall) -> dict[str, Any]:
    """The `run` of a spec that is not built yet: nothing to sell, nothing charged."""
    raise ProductFailed(
        f"{call.sku.sku if call.sku else 'this product'} is not available yet; nothing was charged"
    )


@dataclass(frozen=True, kw_only=True)
class TeaserSpec:
    """A free teaser (/api/a2a/teaser/<name>) that sells this product."""

    name: str
    title: str
    summary: str
    highlights: tuple[str, ...] = ()
    # Where the X-API-Key route of the same content is, when it has one.
    credit_path: str = ""
    # What of the product's content the teaser shows free (catalog/selectors/teasers.py runs
    # the product with its default parameters): content -> excerpt. None: the generic cut
    # (the first items of each list, text shortened; teaser_excerpt).
    excerpt: Callable[[dict[str, Any]], dict[str, Any]] | None = None


@dataclass(frozen=True, kw_only=True)
class CreditRoute:
    """An X-API-Key route that also sells the product (besides the x402 path, which takes the
    key too). Path parameters (`<str:news_id>`) and the query are validated with the
    product's `params` model."""

    route: str  # a Django route, without the leading slash
    operation_id: str
    summary: str
    tag: str = "market-data"
    method: Literal["GET", "POST"] = "GET"
    deprecated: bool = False
    # A deprecated route's replacement (a path, e.g. "/api/a2a/exchange-spreads"): its answers
    # carry `Deprecation: true` and `Link: <successor>; rel="successor-version"`.
    successor: str = ""
    # The route's free tier: the content served, uncharged, to a caller who does not pay here
    # (no X-API-Key, or an account whose credit does not cover the price), e.g. delayed and
    # masked. It validates against the product's output model. None: such a caller is refused.
    free: RunFn | None = None


@dataclass(frozen=True, kw_only=True)
class ProductSpec:
    # --- what is sold, where, at what list price -------------------------------------------
    sku: str
    path: str  # below /api/a2a/x402, e.g. "/news/digest"
    headline: str
    price: str  # default price in USDC, e.g. "0.1"; seeded once, then the staff's (admin)
    family: str  # news, brief, prediction, trading, ...
    tier: Literal["", "L", "A", "B", "C", "D"] = ""
    hero: bool = False
    intel_only: bool = False
    product_type: str = LIVE_INTEL
    # Display order in listings (the interface's SKU table first); ties keep registration order.
    rank: int = 1000
    marketplace_paid: bool = False
    client_bundle: bool = False
    # Covered by the prepaid session packs (callable at /api/a2a/session/call/<sku>).
    session_callable: bool = False
    # The free teaser linked from the SKU (a name in some spec's `teasers`, or this one's).
    teaser: str = ""
    teasers: tuple[TeaserSpec, ...] = ()
    credit_routes: tuple[CreditRoute, ...] = ()
    # --- how it runs -------------------------------------------------------------------------
    run: RunFn = not_built  # not_built: coming soon (its routes answer 503 uncharged)
    params: type[QueryModel] | None = None
    # The model of the content `run` returns: the documented 200 answer of every route that
    # sells it (REST, and the MCP tool's outputSchema / the A2A artifact). Tests validate
    # real answers against it.
    output: type[BaseModel] | None = None
    # Called before any payment: raises NotFound/RequestValidationError for bad input and
    # may return an item-specific price in atomic USDC (news items carry their own price).
    price_for: Callable[[ProductCall], int | None] | None = None
    # A pure product's content depends only on the shop's data (not on the caller, the SKU
    # row or any parameter) and running it writes nothing. Such a product may be run before
    # the caller is charged and its content thrown away if the charge is refused, which is
    # what the credit fast path does (billing/api/credit_fastpath.py).
    pure: bool = False
    # A product with effects (a pack, a pass, an entitlement) changes state when it runs.
    # Paid by x402 it runs only after the payment settled: an effect created first would be
    # kept by a payer who empties the wallet between verify and settle.
    effects: bool = False
    # Called once the payer is known and before any payment is held (e.g. "this wallet needs
    # a credit account"): raises ProductFailed so nothing is claimed, settled or charged.
    ready: Callable[[ProductCall], None] | None = None
    # A cheap check, without running the product, of whether it has content to deliver now:
    # returns (True, "") or (False, reason). Free teasers use it so they do not advertise a
    # product that would answer 503 (e.g. a brief before any piece is published).
    available: Callable[[], tuple[bool, str]] | None = None
    # A metered product's price depends on what the call delivers (a digest sized by what it
    # contains): its price is the maximum a payer authorizes, and `metered` says how much of it
    # one call used, from the content. Paid by x402 it is offered as `upto` next to `exact`
    # (billing/rails/upto.py settles the amount used); every other rail charges the price.
    metered: MeterFn | None = None

    def __post_init__(self) -> None:
        if not self.path.startswith("/") or self.path.startswith(X402_PREFIX):
            raise ValueError(f"{self.sku}: path is below {X402_PREFIX} and starts with '/': {self.path!r}")
        if self.effects and self.pure:
            raise ValueError(f"{self.sku}: a product with effects is not pure")
        if self.metered is not None and self.effects:
            # What it used is known only after it ran: an effect would run before any payment.
            raise ValueError(f"{self.sku}: a product with effects cannot be metered")

    @property
    def full_path(self) -> str:
        return X402_PREFIX + self.path

    @property
    def env_price(self) -> str:
        """The environment setting that may seed the price (USDC), e.g. X402_PRICE_NEWS_DIGEST."""
        return "X402_PRICE_" + self.sku.upper()

    @property
    def built(self) -> bool:
        return self.run is not not_built


def metered_by_items(key: str) -> MeterFn:
    """A digest's meter: the price (the authorized maximum) buys a full digest of `limit`
    items under `key`; a call that delivers fewer pays its share, rounded up (none: nothing)."""

    def meter(call: ProductCall, content: dict[str, Any], authorized: int) -> int:
        limit = int(getattr(call.params, "limit", 0) or 0)
        items = content.get(key)
        delivered = len(items) if isinstance(items, list) else 0
        if limit <= 0 or delivered >= limit:
            return authorized
        return -(-authorized * delivered // limit)

    return meter


# Kept for the code that names a runnable product a Product.
Product = ProductSpec

_SPECS: dict[str, ProductSpec] = {}


def register(spec: ProductSpec) -> ProductSpec:
    """Add a spec. Each module of catalog/products (and each app's products module) registers
    its specs when it is imported, which its AppConfig.ready does."""
    if spec.sku in _SPECS:
        raise ValueError(f"product {spec.sku} registered twice")
    taken = {s.path: s.sku for s in _SPECS.values()}
    if spec.path in taken:
        raise ValueError(f"product {spec.sku}: path {spec.path} is already {taken[spec.path]}'s")
    _SPECS[spec.sku] = spec
    return spec


def product(**fields: Any) -> Callable[[RunFn], RunFn]:
    """Decorator form: `@product(sku=..., path=..., ...)` over the run function."""

    def decorator(func: RunFn) -> RunFn:
        register(ProductSpec(run=func, **fields))
        return func

    return decorator


@contextmanager
def registered(spec: ProductSpec) -> Iterator[ProductSpec]:
    """A spec registered for the duration of a block (tests add throwaway products)."""
    register(spec)
    try:
        yield spec
    finally:
        _SPECS.pop(spec.sku, None)


def specs_all() -> list[ProductSpec]:
    """Every spec, built or not, in display order."""
    order = {sku: i for i, sku in enumerate(_SPECS)}
    return sorted(_SPECS.values(), key=lambda s: (s.rank, order[s.sku]))


def spec_get(sku: str) -> ProductSpec | None:
    return _SPECS.get(sku)


def product_get(sku: str) -> ProductSpec | None:
    """The spec of a product that can run now (built), else None."""
    spec = _SPECS.get(sku)
    return spec if spec is not None and spec.built else None


def products_built() -> set[str]:
    return {sku for sku, spec in _SPECS.items() if spec.built}


def product_has_content(sku: str) -> tuple[bool, str]:
    """Whether a built product has content to deliver now, by its cheap check (no check: yes)."""
    spec = product_get(sku)
    if spec is None:
        return False, "the product is not built yet"
    if spec.available is None:
        return True, ""
    return spec.available()
