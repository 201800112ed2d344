"""The deterministic chat reply: what was understood, a free excerpt of the product's current
answer to it, and the exact call that buys the full answer. Every figure in `reply` is quoted
from the excerpt (or, paid, from the product's content); none is written here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from a2a_service.core.errors import ApiError, RequestValidationError
from a2a_service.core.money import usdc_from_atomic
from agents.chat.llm import rephrase
from agents.discovery import schemas as s
from agents.intent import Intent, understand
from billing.paid_call import paid_offer
from catalog.models import CatalogAgent, Sku
from catalog.products.registry import product_get
from catalog.selectors.teasers import product_excerpt, teaser_availability, teaser_excerpt

HUB = "agenthub"
# What the free excerpt of a product without a teaser of its own leaves out: the decision the
# product sells (the generic cut would hand it over whole).
# A withheld list is replaced by its length under "<key>_count".
WITHHOLD: dict[str, tuple[str, ...]] = {
    "dca_routing_desk": ("recommended_venue", "est_total_cost_usdc", "venues"),
    "tokenized_auto_route": ("routes",),
}
# The parts of a product's answer a reply quotes first (the rest follows, shallow first).
QUOTE_FIRST: dict[str, tuple[str, ...]] = {
    "regime_gate": ("symbols", "market"),
    "risk_decision_pack": ("symbol", "verdict", "regime", "checks"),
    "pair_arb_desk": ("opportunities", "cross_venue"),
    "funding_hedge_desk": ("cash_and_carry", "cross_venue"),
    "prediction_resolution_calendar": ("count", "markets"),
    "equity_intel": ("tickers",),
    "sentiment": ("assets",),
}
# Keys a reply does not quote: provenance (it is in the excerpt itself) and long texts.
NOISE = frozenset({"method", "sources", "replay", "stale", "as_of", "url", "rules", "note", "hint"})
FACTS_MAX = 10
# The fields naming what an item is about, and where it trades.
SYMBOL_KEYS = ("symbol", "perp", "spot", "base", "asset", "ticker", "underlying", "a", "b")
VENUE_KEYS = ("venue", "exchange", "buy_venue", "sell_venue", "short_venue", "long_venue")


def _links(base: str) -> dict[str, str]:
    return {
        "storefront": base + "/api/a2a/discovery/storefront",
        "topup_info": base + "/api/a2a/account/topup-info",
        "openapi": base + "/api/a2a/openapi.json",
        "agents": base + "/api/a2a/agents/catalog",
    }


def _owners(sku: Sku) -> list[str]:
    return [a.slug for a in sku.agents.filter(enabled=True).order_by("sort_order", "slug")]


def _suggestion(base: str, sku: Sku) -> s.ChatSuggestionOut:
    return s.ChatSuggestionOut(
        sku=sku.sku,
        path=base + sku.path,
        price_usdc=sku.price_usdc,
        headline=sku.headline,
        agents=_owners(sku),
    )


# --- the excerpt narrowed to the question ------------------------------------------------------------
def _matches_symbol(value: Any, entities: dict[str, Any]) -> bool:
    text = str(value or "").upper()
    wanted = {str(entities[k]).upper() for k in ("symbol", "asset", "ticker") if k in entities}
    return text in wanted or text.split("/")[0].split(":")[0] in wanted


def focus_for(entities: dict[str, Any]) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    """Keep, in each list of items that name a symbol or a venue, the items about the asked
    ones (an item across venues must name every venue asked). A list with none of them
    becomes empty: the product has nothing on it, and the excerpt says so."""
    venues = [str(v).lower() for v in entities.get("venues", [])]
    if entities.get("prediction_venue"):
        venues = venues or [str(entities["prediction_venue"]).lower()]
    has_symbol = any(k in entities for k in ("symbol", "asset", "ticker"))
    if not venues and not has_symbol:
        return None

    def keep(item: dict[str, Any]) -> bool:
        if has_symbol and any(k in item for k in SYMBOL_KEYS):
            if not any(_matches_symbol(item[k], entities) for k in SYMBOL_KEYS if k in item):
                return False
        named = {str(item[k]).lower() for k in VENUE_KEYS if k in item and item[k]}
        if venues and named:
            if len(named) > 1 and not set(venues) <= named and not named <= set(venues):
                return False
            if len(named) == 1 and not named & set(venues):
                return False
        return True

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            items = [walk(v) for v in value]
            if any(isinstance(v, dict) and any(k in v for k in SYMBOL_KEYS + VENUE_KEYS) for v in items):
                return [v for v in items if not isinstance(v, dict) or keep(v)]
            return items
        return value

    def focus(content: dict[str, Any]) -> dict[str, Any]:
        out = walk(content)
        return out if isinstance(out, dict) else content

    return focus


def facts(value: Any, prefix: str = "", first: tuple[str, ...] = ()) -> list[str]:
    """The excerpt's figures as "path=value" lines (what a reply quotes): those under the
    `first` top-level keys first, then shallow ones first."""
    if isinstance(value, dict) and first:
        head = [k for k in first if k in value]
        ordered = [f for k in head for f in facts({k: value[k]}, prefix)]
        rest = facts({k: v for k, v in value.items() if k not in head}, prefix)
        return (ordered + rest)[:FACTS_MAX]
    out: list[tuple[int, str]] = []

    def walk(v: Any, path: str, depth: int) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if k not in NOISE:
                    walk(x, f"{path}.{k}" if path else str(k), depth + 1)
        elif isinstance(v, list):
            if not v:
                out.append((depth, f"{path}=[] (none)"))
            for i, x in enumerate(v):
                walk(x, f"{path}[{i}]", depth + 1)
        elif isinstance(v, str | int | float | bool) and not (isinstance(v, str) and len(v) > 80):
            out.append((depth, f"{path}={v}"))

    walk(value, prefix, 0)
    out.sort(key=lambda t: t[0])  # stable: same depth keeps the content's order
    return [t[1] for t in out[:FACTS_MAX]]


def _withhold(sku: str, excerpt: dict[str, Any] | None) -> dict[str, Any] | None:
    hidden = WITHHOLD.get(sku, ())
    if excerpt is None or not hidden:
        return excerpt
    out: dict[str, Any] = {}
    for k, v in excerpt.items():
        if k not in hidden:
            out[k] = v
        elif isinstance(v, list):
            out[f"{k}_count"] = len(v)
    return out


# --- the next call ------------------------------------------------------------------------------------
def _fill_route(route: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """A Django route with its <conv:name> parts from params (those leave the query)."""
    query = dict(params)
    parts = []
    for part in route.split("/"):
        if part.startswith("<") and part.endswith(">"):
            name = part[1:-1].split(":")[-1]
            if name not in query:
                return None
            parts.append(str(query.pop(name)))
        else:
            parts.append(part)
    return "/" + "/".join(parts), query


def _url(base: str, path: str, query: dict[str, Any]) -> str:
    return base + path + ("?" + urlencode(query) if query else "")


@dataclass
class Offered:
    next_call: s.ChatNextCallOut
    teaser: dict[str, Any] | None


def next_call(*, base: str, sku: Sku, params: dict[str, Any], price_atomic: int) -> s.ChatNextCallOut:
    spec = product_get(sku.sku)
    credits = [s.ChatPayRouteOut(url=_url(base, sku.path, params), header="X-API-Key: <your key>")]
    for route in spec.credit_routes if spec is not None else ():
        filled = _fill_route(route.route, params) if route.method == "GET" and not route.deprecated else None
        if filled is not None:
            credits.append(s.ChatPayRouteOut(url=_url(base, *filled), header="X-API-Key: <your key>"))
    session = (
        s.ChatPayRouteOut(
            url=_url(base, f"/api/a2a/session/call/{sku.sku}", params), header="X-Session-Token: <your token>"
        )
        if sku.session_callable
        else None
    )
    available, reason = teaser_availability(sku)
    return s.ChatNextCallOut(
        sku=sku.sku,
        params=params,
        price_usdc=usdc_from_atomic(price_atomic),
        price_atomic=price_atomic,
        available=available,
        unavailable_reason=reason or None,
        x402=s.ChatPayRouteOut(
            url=_url(base, sku.path, params),
            header="PAYMENT-SIGNATURE (x402 v2) or X-PAYMENT (v1) after the 402 answer's requirements",
        ),
        credits=credits,
        session=session,
        in_chat="POST this same message again with X-API-Key, X-Session-Token or PAYMENT-SIGNATURE/X-PAYMENT: "
        "the reply then carries the product's content in `result`",
    )


def offered(*, base: str, sku: Sku, intent: Intent, excerpt: bool = True) -> Offered:
    """The call priced (raises the product's own NotFound / RequestValidationError) and its
    free excerpt: the product run with the question's params, rolled back, cut as its teaser."""
    offer = paid_offer(product=sku.sku, params=intent.params, base_url=base, sku=sku)
    price = offer.price_atomic if offer.price_atomic is not None else sku.price_atomic
    call = next_call(base=base, sku=sku, params=intent.params, price_atomic=price)
    cut: dict[str, Any] | None = None
    if call.available and excerpt:
        spec = offer.product
        own = spec.teasers[0].name if spec.teasers else ""
        cut, failed = product_excerpt(
            sku, teaser_name=own, base=base, params=offer.call.params, focus=focus_for(intent.entities)
        )
        if failed:
            call.available, call.unavailable_reason = False, failed
    return Offered(next_call=call, teaser=_withhold(sku.sku, cut))


# --- the reply ----------------------------------------------------------------------------------------
def _params_text(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "its defaults"


def _not_found(
    *, agent: CatalogAgent | None, base: str, intent: Intent, name: str, pool: list[Sku], message: str
) -> s.ChatOut:
    # An agent that does not sell it refers to the SKU the hub would answer with.
    other = understand(message) if agent is not None else None
    elsewhere = Sku.objects.live().filter(sku=other.sku).first() if other and other.sku else None
    suggestions = (
        [x for x in pool if x.sku in intent.alternatives] or [x for x in pool if x.hero][:3] or pool[:3]
    )
    listing = ", ".join(f"{m.sku} ({m.price_usdc:g} USDC)" for m in suggestions)
    reply = f"{name}: I found nothing in my catalog that answers this."
    if elsewhere is not None:
        owners = _owners(elsewhere) or [HUB]
        reply += (
            f" {elsewhere.sku} ({elsewhere.headline}) does; it is sold by {', '.join(owners)}: "
            f"ask {base}/api/a2a/agenthub/chat."
        )
        suggestions = [elsewhere]
    else:
        reply += f" What I sell: {listing}."
    reply += " Ask e.g. 'BTC regime?', 'news on NVDA', 'what closes on Kalshi this week'."
    return s.ChatOut(
        agent=agent.slug if agent else HUB,
        reply=reply,
        suggestions=[_suggestion(base, m) for m in suggestions],
        links=_links(base),
        entities=intent.entities,
    )


def chat_answer(
    *,
    agent: CatalogAgent | None,
    message: str,
    base: str,
    intent: Intent | None = None,
    free: bool = True,
) -> tuple[s.ChatOut, Intent]:
    """The free answer, and the intent it answered (the paid path reuses both). free=False
    (the message pays): no excerpt run and no rewording, the paid answer replaces them."""
    intent = intent or understand(message, agent=agent)
    name = agent.name if agent else "Agent hub"
    pool = list(agent.skus.filter(status=Sku.Status.LIVE)) if agent else list(Sku.objects.live())
    if intent.sku is None:
        return _not_found(
            agent=agent, base=base, intent=intent, name=name, pool=pool, message=message
        ), intent
    sku = Sku.objects.get(sku=intent.sku)
    alternatives = [x for x in pool if x.sku in intent.alternatives]
    suggestions = [_suggestion(base, m) for m in [sku, *alternatives]]
    owners = _owners(sku)
    seller = "" if agent is not None else f" (sold by {', '.join(owners) or 'the hub'})"
    common: dict[str, Any] = {
        "agent": agent.slug if agent else HUB,
        "suggestions": suggestions,
        "links": _links(base),
        "intent": sku.sku,
        "confidence": intent.confidence,
        "entities": intent.entities,
    }
    if not intent.missing:
        try:
            got: Offered | None = offered(base=base, sku=sku, intent=intent, excerpt=free)
        except ApiError as exc:
            intent.missing = [_error_text(exc)]
            got = None
    if intent.missing:
        reply = f"{name}: that is {sku.sku}{seller}: {sku.headline}. To answer I need: {'; '.join(intent.missing)}."
        return s.ChatOut(reply=reply, missing=intent.missing, **common), intent
    assert got is not None
    call = got.next_call
    lines = [f"{name}: {sku.sku}{seller}: {sku.headline}, for {_params_text(intent.params)}."]
    if not call.available:
        lines.append(
            f"It has nothing to sell right now ({call.unavailable_reason}); nothing would be charged."
        )
    elif got.teaser is not None:
        quoted = facts(got.teaser, first=QUOTE_FIRST.get(sku.sku, ()))
        lines.append(
            "Free excerpt of its current answer: " + ("; ".join(quoted) if quoted else "(empty)") + "."
        )
    lines.append(
        f"Full answer: {call.price_usdc:g} USDC: GET {call.x402.url} (x402, or X-API-Key credits)"
        + (f", or X-Session-Token at {call.session.url}" if call.session else "")
        + "; or send this message again with payment."
    )
    reply = " ".join(lines)
    if free:
        reply = rephrase(reply, facts=got.teaser or {}, question=message)
    return s.ChatOut(reply=reply, next_call=call, teaser=got.teaser, **common), intent


def _error_text(exc: ApiError) -> str:
    if isinstance(exc, RequestValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc'][1:])}: {e['msg']}" for e in exc.errors)
    return exc.detail


def chat_reply(*, agent: CatalogAgent | None, message: str, base: str) -> s.ChatOut:
    return chat_answer(agent=agent, message=message, base=base)[0]


def paid_answer(
    out: s.ChatOut, *, agent: CatalogAgent | None, content: dict[str, Any], charge: s.ChatChargeOut | None
) -> None:
    """The answer of a message that paid: the product's content in `result`, the reply quoting
    its first figures (the teaser cut of the content, so the quote stays short)."""
    name = agent.name if agent else "Agent hub"
    out.result, out.charged = content, charge
    paid_by = ""
    if charge is not None:
        paid_by = (
            f" Paid by {charge.rail}"
            + (f" ({charge.amount_usdc:g} USDC)" if charge.amount_usdc else "")
            + "."
        )
    quoted = facts(teaser_excerpt(content), first=QUOTE_FIRST.get(out.intent or "", ()))
    out.reply = (
        f"{name}: {out.intent}, for {_params_text(out.next_call.params if out.next_call else {})}.{paid_by} "
        + ("Its answer: " + "; ".join(quoted) + ". " if quoted else "")
        + "The full content is in `result`."
    )
