"""What an agent asks for, understood from its words: the one function every agent surface
(chat, A2A text messages, the hub) uses to go from a sentence to a SKU and its parameters.

    intent = understand("BTC regime?", agent=None)
    intent.sku       -> "regime_gate" (or None when nothing matched)
    intent.entities  -> {"symbol": "BTC/USDT", "asset": "BTC"}
    intent.params    -> the product's params, validated by its own params model ({} for none)
    intent.missing   -> what the params model refused ("news_id: Field required"), else []

Two steps, both data-driven:
1. Entities: assets and market symbols (from the ingested exchange markets, candles, funding,
   equities and tokenized assets, plus ALIASES such as bitcoin -> BTC), amounts with units,
   exchange venues (ingested) and prediction venues, time windows (today, this week, next 3
   days), side, top-N, news ids, calendar impact and country, yield chains.
2. The SKU: INTENTS, a table of phrases -> SKU with weights (and entity boosts); the SKUs no
   row names fall back to their headline's words. The pool is the agent's live SKUs (all
   live SKUs for the hub). Params come from the entities through FIELD_SOURCES, by the names
   of the product's own params model fields, and are validated by that model."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from catalog.models import (
    Candle,
    CatalogAgent,
    EquityQuote,
    ExchangeMarket,
    FundingRate,
    PredictionMarket,
    Sku,
    TokenizedAsset,
    YieldPool,
)
from catalog.products.registry import product_get


@dataclass
class Intent:
    sku: str | None
    params: dict[str, Any] = field(default_factory=dict)
    # Other SKUs that fit, best first (for "see also" suggestions).
    alternatives: list[str] = field(default_factory=list)
    # What was recognised in the text, e.g. {"symbol": "BTC/USDT", "amount_usdc": 500}.
    entities: dict[str, Any] = field(default_factory=dict)
    confidence: float = 0.0
    # What the product's params model refused, as "field: message" (empty when params are valid).
    missing: list[str] = field(default_factory=list)


# --- the intent table ----------------------------------------------------------------------------
@dataclass(frozen=True)
class IntentRule:
    sku: str
    # Phrases (lower case, matched on word boundaries; a trailing "*" matches a word prefix) and
    # their weights.
    phrases: dict[str, float]
    # Entity kinds whose presence makes this SKU likelier (kind -> extra weight).
    boosts: dict[str, float] = field(default_factory=dict)
    # Param field -> entity kind, where FIELD_SOURCES' default does not fit this product.
    fields: dict[str, str] = field(default_factory=dict)


def _r(sku: str, phrases: str, boosts: dict[str, float] | None = None, **fields: str) -> IntentRule:
    """A row: phrases as "a, b:2, c*" (weight 1 unless given)."""
    table: dict[str, float] = {}
    for part in phrases.split(","):
        text, _, weight = part.strip().partition(":")
        table[text.strip()] = float(weight) if weight else 1.0
    return IntentRule(sku=sku, phrases=table, boosts=boosts or {}, fields=fields)


INTENTS: tuple[IntentRule, ...] = (
    _r("regime_gate", "regime:3, regimes:3, risk on:2, risk-on:2, risk off:2, risk-off:2, trending or ranging:2"),
    _r("macro_gate", "macro:2, macro gate:3, add risk:1.5, fomc:1, cpi:1"),
    _r("calendar_risk", "calendar:1.5, economic calendar:3, scheduled events:2, events:1, event risk:2"),
    _r("dca_routing_desk", "dca:3, dollar cost:3, accumulate:2, accumulation:2, cheapest venue:2, into:0.5"),
    _r("pair_arb_desk", "arb:2.5, arbitrage:2.5, cross venue:2, cross-venue:2, pair trade:2", {"venues": 1.0}),
    _r("exchange_spreads", "spread radar:3, spreads:2, book gap*:2"),
    _r("funding_hedge_desk", "funding:2.5, funding rate*:1, carry:2, basis:1.5, hedge:1.5"),
    _r("prediction_resolution_calendar",
       "closes:2, closing:2, close:1, resolve*:2, resolution:2, expir*:1.5, settle*:1.5",
       {"prediction_venue": 1.5, "days": 0.5}),
    _r("prediction_top3_daily", "top prediction:3, top 3:2, hottest:2, trending:1.5, prediction markets:1",
       {"prediction_venue": 0.5}),
    _r("prediction_event_graph", "event graph:3, linked markets:3, implied probabilit*:2, related markets:2"),
    _r("prediction_divergence_alerts", "divergen*:3, priced apart:3, mispric*:2, arb:0.5, arbitrage:0.5",
       {"prediction_venues": 3.0}),
    _r("prediction_starter_bundle", "starter:3, bundle:2, prediction:0.5"),
    _r("news_digest", "news:1.5, headlines:2, digest:1, what happened:1.5, latest news:2"),
    _r("news_unlock", "full text:3, unlock:2, article:1.5, read:0.5", {"news_id": 3.0}),
    _r("sentiment", "sentiment:3, mood:2, bullish:1, bearish:1, feel*:1"),
    _r("equity_intel", "stock:1.5, stocks:1, equity:1.5, catalyst*:2, earnings:1.5, news on:1", {"ticker": 2.5}),
    _r("equity_news_digest", "equity news:3, stock news:3, equities:1.5, news:1", {"ticker": 1.0}),
    _r("equity_scalp", "equity scalp:3, stock scalp:3, scalp:0.5", {"ticker": 0.5}),
    _r("grant_scout_desk", "grant:3, grants:3, funding program*:2, ai agents:0.5, builders:1"),
    _r("tech_regulatory_digest", "regulat*:3, sec:1.5, enforcement:2, compliance:2, law:1, rules:1"),
    _r("market_groups_digest", "market groups:3, groups:1.5, each group:2"),
    _r("research_weekly_digest", "weekly:2, research:2, week in review:3"),
    _r("morning_brief", "morning brief:3, brief:2, briefing:2, morning:1"),
    _r("grid_range_desk", "grid:3, range trading:2, ranges:1.5"),
    _r("risk_exit_alerts", "exit:2, exits:2, stop loss:2, exit alerts:3"),
    _r("risk_decision_pack",
       "pre-trade:3, pretrade:3, checklist:3, should i go:2, should i buy:2, decision:1.5, regime:1, gate:1",
       {"symbol": 0.5}),
    _r("signals", "signal:2, signals:2, trade idea*:2, setup*:1, long or short:2", {"symbol": 0.5}),
    _r("copy_signals", "copy:2.5, copy trad*:3"),
    _r("mev_exec_hint_pack", "mev:3, sandwich:2, private routing:2, slippage:1"),
    _r("intent_solver_desk", "solver:3, solver quote*:3"),
    _r("twap_preview", "twap:3, time weighted:3, slices:1.5", {"amount_usdc": 0.5}),
    _r("mm_hint", "market making:3, market-making:3, market maker:3, quote spread:2"),
    _r("defi_yield_scout", "yield:3, yields:3, apy:2.5, farm*:1.5, lending:1, earn:1", {"chain": 1.0}),
    _r("tokenized_premium", "tokenized premium:3, premium:1.5, discount:1"),
    _r("tokenized_signals", "tokenized signal*:3"),
    _r("tokenized_scalp", "tokenized scalp:3"),
    _r("tokenized_session_desk", "market hours:2, tokenized session:3"),
    _r("tokenized_auto_route", "tokenized route:3, auto-route:3, auto route:3", symbol="asset"),
    _r("intel_latest", "intel:2, overview:1.5, market update:2, what's going on:1.5"),
    _r("m2m_session_desk", "session:2, desk pack:3, session pack:3, prepaid calls:2"),
    _r("m2m_session_enterprise", "enterprise:3"),
    _r("agent_subcontract_desk", "subcontract:3, delegate:2"),
    _r("broker_scalp_desk", "broker:2.5, scalp:1.5"),
    _r("federation_signal_resale", "partner signal*:3, federat*:2, resale:2"),
    _r("telemetry_detail", "telemetry:3, nodes:1.5, rpc:1.5"),
    _r("payments_dual_rail_status", "dual rail:3, payment rail*:2"),
    _r("webhook_outcome_pricing", "webhook pric*:3, outcome pric*:3"),
)  # fmt: skip
RULES = {r.sku: r for r in INTENTS}
# Below this score a match is a guess, not an answer (a headline word alone scores 0.5).
MIN_SCORE = 1.0

# Param field -> the entity that fills it (the product's params model decides what is valid).
FIELD_SOURCES: dict[str, str] = {
    "symbol": "symbol",
    "notional_usdc": "amount_usdc",
    "days": "days",
    "venue": "prediction_venue",
    "side": "side",
    "asset": "asset",
    "ticker": "ticker",
    "limit": "limit",
    "max_symbols": "limit",
    "news_id": "news_id",
    "min_impact": "impact",
    "country": "country",
    "chain": "chain",
    "stablecoin": "stablecoin",
}

# --- entity vocabulary -------------------------------------------------------------------------------
ALIASES = {
    "bitcoin": "BTC",
    "xbt": "BTC",
    "ether": "ETH",
    "ethereum": "ETH",
    "solana": "SOL",
    "ripple": "XRP",
    "dogecoin": "DOGE",
    "cardano": "ADA",
    "avalanche": "AVAX",
    "chainlink": "LINK",
    "litecoin": "LTC",
}
EQUITY_ALIASES = {"nvidia": "NVDA", "tesla": "TSLA", "apple": "AAPL", "microsoft": "MSFT", "amazon": "AMZN"}
# The alias targets are known assets even before a feed lists them (the product then says 404).
KNOWN_ASSETS = frozenset(ALIASES.values()) | {"BTC", "ETH", "SOL", "XRP", "BNB"}
# Quote currencies are units, never the asset asked about.
QUOTES = ("USDT", "USDC", "USD", "DAI", "FDUSD", "EUR")
# Words a lower-case token must not be taken for a ticker even when a market lists it.
NOT_TICKERS = frozenset(
    "a an the and or of to for me i is it on in at by with my what how who which when why are can get "
    "go all any one new now top best news arb dca into between this next week day days today price "
    "venue venues cheap cheapest fund funding hedge ai agent agents grant grants buy sell long short "
    "market markets close closes data rate rates risk time earn yield gas trade alert alerts pay key "
    "sec us eu uk".split()
)
EXCHANGE_NAMES = ("binance", "okx", "bybit", "coinbase", "kraken", "bitget", "kucoin", "gate", "mexc", "htx")
PREDICTION_VENUES = {"kalshi": "kalshi", "polymarket": "polymarket", "poly": "polymarket"}
COUNTRIES = ("US", "EU", "UK", "GB", "JP", "CN", "DE", "CA", "AU", "CH")
UNIT_WORDS = {"k": 1_000, "thousand": 1_000, "m": 1_000_000, "mm": 1_000_000, "million": 1_000_000}
TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.]*[A-Za-z0-9]|[A-Za-z0-9]")
AMOUNT = re.compile(
    r"(?P<dollar>\$)?\s?(?P<num>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(?P<mult>k|m|mm|thousand|million)?\b\s*"
    r"(?P<unit>usdc|usdt|usd|dollars|bucks)?\b",
    re.IGNORECASE,
)
WINDOW = re.compile(
    r"\b(?:next|within|in|over|for|coming|past|last)\s+(?P<n>\d+)\s*(?P<unit>hours?|hrs?|h|days?|d|weeks?|w|months?)\b",
    re.IGNORECASE,
)
# The first that matches wins ("next week" before "week").
WINDOW_WORDS: tuple[tuple[str, int], ...] = (
    (r"\bnext week\b", 14),
    (r"\bmonth\b", 30),
    (r"\bweek\b|\b7\s?d\b", 7),
    (r"\btomorrow\b", 2),
    (r"\btoday\b|\btonight\b|\b24\s?h\b", 1),
)
DAYS_PER_UNIT = {"h": 1 / 24, "d": 1.0, "w": 7.0, "m": 30.0}
TOP_N = re.compile(r"\btop\s+(\d{1,3})\b", re.IGNORECASE)
NEWS_ID = re.compile(r"\b(?:news|item|article|story)\s*(?:#|id\s*|number\s*)?(\d{1,12})\b", re.IGNORECASE)


@dataclass
class Vocabulary:
    """What the ingested data knows: asset -> its market symbols, equities, venues."""

    pairs: dict[str, list[str]]
    equities: set[str]
    tokenized: set[str]
    venues: set[str]
    prediction_venues: set[str]
    chains: dict[str, str]


def vocabulary() -> Vocabulary:
    symbols = set(ExchangeMarket.objects.order_by().values_list("symbol", flat=True).distinct())
    symbols |= set(Candle.objects.order_by().values_list("symbol", flat=True).distinct())
    pairs: dict[str, list[str]] = {}
    for symbol in sorted(symbols):
        base, _, quote = symbol.partition("/")
        if quote and base.upper() not in QUOTES:
            pairs.setdefault(base.upper(), []).append(symbol)
    for perp in FundingRate.objects.order_by().values_list("symbol", flat=True).distinct():
        base = perp.partition("/")[0].upper()
        pairs.setdefault(base, [])
    venues = set(ExchangeMarket.objects.order_by().values_list("exchange", flat=True).distinct())
    venues |= set(Candle.objects.order_by().values_list("exchange", flat=True).distinct())
    venues |= set(FundingRate.objects.order_by().values_list("exchange", flat=True).distinct())
    chains = {
        c.lower(): c for c in YieldPool.objects.order_by().values_list("chain", flat=True).distinct() if c
    }
    return Vocabulary(
        pairs=pairs,
        equities={
            s.upper() for s in EquityQuote.objects.order_by().values_list("symbol", flat=True).distinct()
        },
        tokenized={s.upper() for s in TokenizedAsset.objects.order_by().values_list("symbol", flat=True)},
        venues={v.lower() for v in venues},
        prediction_venues={
            v.lower() for v in PredictionMarket.objects.order_by().values_list("venue", flat=True).distinct()
        },
        chains=chains,
    )


def _pair_for(base: str, vocab: Vocabulary) -> str:
    """The market symbol of an asset: its USDT market first (the feeds' main quote), else the
    first listed; an asset no market lists is asked about as BASE/USDT (the product says 404)."""
    listed = vocab.pairs.get(base, [])
    for quote in ("USDT", "USDC", "USD"):
        if f"{base}/{quote}" in listed:
            return f"{base}/{quote}"
    return listed[0] if listed else f"{base}/USDT"


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def extract(text: str, vocab: Vocabulary | None = None) -> dict[str, Any]:
    """The entities of a sentence (only those found)."""
    vocab = vocab or vocabulary()
    found: dict[str, Any] = {}
    rest = text
    low = text.lower()
    # Time windows first: their numbers are not amounts.
    window = WINDOW.search(rest)
    if window:
        n, unit = int(window["n"]), window["unit"].lower()[0]
        # Whole days, at least one: the products' windows count days.
        found["days"] = max(1, math.ceil(n * DAYS_PER_UNIT.get(unit, 1.0)))
        rest = rest[: window.start()] + " " + rest[window.end() :]
    else:
        for pattern, days in WINDOW_WORDS:
            if re.search(pattern, low):
                found["days"] = int(days)
                break
    top = TOP_N.search(rest)
    if top:
        found["limit"] = int(top.group(1))
        rest = rest[: top.start()] + " " + rest[top.end() :]
    news = NEWS_ID.search(rest)
    if news:
        found["news_id"] = int(news.group(1))
        rest = rest[: news.start()] + " " + rest[news.end() :]
    for m in AMOUNT.finditer(rest):
        if not (m["dollar"] or m["unit"] or m["mult"]):
            continue
        amount = _number(m["num"]) * UNIT_WORDS.get((m["mult"] or "").lower(), 1)
        found["amount_usdc"] = int(amount) if amount == int(amount) else amount
        rest = rest[: m.start()] + " " + rest[m.end() :]
        break
    # Words: venues, assets, tickers, side, chain, country.
    words = TOKEN.findall(rest)
    venues: list[str] = []
    predictions: list[str] = []
    assets: list[str] = []
    tickers: list[str] = []
    for word in words:
        lw = word.lower()
        if lw in PREDICTION_VENUES or lw in vocab.prediction_venues:
            name = PREDICTION_VENUES.get(lw, lw)
            if name not in predictions:
                predictions.append(name)
            continue
        if lw in vocab.venues or lw in EXCHANGE_NAMES:
            if lw not in venues:
                venues.append(lw)
            continue
        if lw in EQUITY_ALIASES:
            if EQUITY_ALIASES[lw] not in tickers:
                tickers.append(EQUITY_ALIASES[lw])
            continue
        if lw in ALIASES:
            upper = ALIASES[lw]
        elif word.isupper() or (len(word) >= 3 and lw not in NOT_TICKERS):
            upper = word.upper()
        else:
            continue
        if upper in QUOTES or lw in NOT_TICKERS and not word.isupper():
            continue
        if upper in vocab.equities:
            if upper not in tickers:
                tickers.append(upper)
            if upper not in vocab.pairs and upper not in vocab.tokenized:
                continue
        known = upper in vocab.pairs or upper in vocab.tokenized or upper in KNOWN_ASSETS
        if known and upper not in assets:
            assets.append(upper)
    if assets:
        found["asset"] = assets[0]
        found["symbol"] = _pair_for(assets[0], vocab)
        if len(assets) > 1:
            found["assets"] = assets
    if tickers:
        found["ticker"] = tickers[0]
    if venues:
        found["venues"] = venues
    if predictions:
        found["prediction_venue"] = predictions[0]
        if len(predictions) > 1:
            found["prediction_venues"] = predictions
    side = re.search(r"\b(buy|sell|long|short)\b", low)
    if side:
        found["side"] = side.group(1)
    impact = re.search(r"\b(high|medium|low)[- ]impact\b", low)
    if impact:
        found["impact"] = impact.group(1)
    for code in COUNTRIES:
        if re.search(rf"\b{code}\b", text):
            found["country"] = code
            break
    for lw in (w.lower() for w in words):
        if lw in vocab.chains:
            found["chain"] = vocab.chains[lw]
            break
    if re.search(r"\bstable(coin)?s?\b", low):
        found["stablecoin"] = True
    return found


# --- scoring -----------------------------------------------------------------------------------------
WORD = re.compile(r"[a-z0-9]+")
STOP = frozenset("the a an and or of to for me i is what how my on in with".split())


def _phrase_hit(phrase: str, low: str) -> bool:
    if phrase.endswith("*"):
        return re.search(rf"\b{re.escape(phrase[:-1])}", low) is not None
    return re.search(rf"\b{re.escape(phrase)}\b", low) is not None


def _score(sku: Sku, low: str, entities: dict[str, Any]) -> float:
    rule = RULES.get(sku.sku)
    score = 0.0
    if rule is not None:
        score = sum(w for p, w in rule.phrases.items() if _phrase_hit(p, low))
        if score:
            score += sum(w for kind, w in rule.boosts.items() if kind in entities)
    # The headline's words: a weak signal, enough to find a SKU no row names.
    asked = {w for w in WORD.findall(low) if w not in STOP and len(w) > 2}
    vocab = {w for w in WORD.findall(f"{sku.sku.replace('_', ' ')} {sku.headline}".lower()) if w not in STOP}
    return score + 0.5 * len(asked & vocab)


def params_for(sku: str, entities: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The SKU's params filled from the entities by its params model's field names, validated
    by that model: (the params as the model dumps them, what it refused)."""
    spec = product_get(sku)
    if spec is None or spec.params is None:
        return {}, []
    rule = RULES.get(sku)
    raw: dict[str, Any] = {}
    for name, info in spec.params.model_fields.items():
        kind = (rule.fields.get(name) if rule else None) or FIELD_SOURCES.get(name)
        if kind is None or kind not in entities:
            continue
        value = entities[kind]
        if name == "side":
            value = _side_for(str(value), info.annotation)
        if value is not None:
            raw[name] = value
    try:
        model: BaseModel = spec.params.model_validate(raw)
    except ValidationError as exc:
        missing = [f"{'.'.join(str(p) for p in e['loc']) or 'params'}: {e['msg']}" for e in exc.errors()]
        return raw, missing
    # Only what the asker gave (validated and normalised by the model): the defaults are the
    # product's and appear in its own documentation.
    dumped = model.model_dump(mode="json")
    return {k: dumped[k] for k in raw if k in dumped}, []


def _side_for(side: str, annotation: Any) -> str | None:
    text = str(annotation)
    if "'buy'" in text:
        return {"long": "buy", "short": "sell"}.get(side, side)
    if "'long'" in text:
        return {"buy": "long", "sell": "short"}.get(side, side)
    return None


def understand(text: str, *, agent: CatalogAgent | None = None) -> Intent:
    pool = list(agent.skus.filter(status=Sku.Status.LIVE)) if agent else list(Sku.objects.live())
    pool = [s for s in pool if product_get(s.sku) is not None]
    entities = extract(text)
    low = text.lower()
    scored = sorted(
        ((_score(s, low, entities), s.sort_order, s.sku) for s in pool), key=lambda t: (-t[0], t[1])
    )
    names = [t[2] for t in scored if t[0] >= MIN_SCORE]
    if not names:
        return Intent(sku=None, entities=entities, alternatives=[t[2] for t in scored if t[0] > 0][:3])
    best = names[0]
    params, missing = params_for(best, entities)
    top = scored[0][0]
    runner_up = scored[1][0] if len(scored) > 1 else 0.0
    confidence = round(min(1.0, top / 4) * (1.0 if top > runner_up else 0.6), 2)
    return Intent(
        sku=best,
        params=params,
        alternatives=names[1:3],
        entities=entities,
        confidence=confidence,
        missing=missing,
    )
