"""Services for agents. The subcontract desk is built: one call composes the signals, the
decision pack, the sentiment and the news of a symbol by running those products (through the
registry, with their own params); the other specs are built with the account features and
protocols (issues 14 and 15) and answer 503 uncharged until then."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

from django.utils import timezone
from pydantic import BaseModel, Field, field_validator

from a2a_service.core.errors import NotFound
from a2a_service.core.formats import iso
from a2a_service.core.inputs import QueryModel
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.editorial.intel import signals_max_age
from catalog.models import NewsItem
from catalog.products.intel import SentimentParams
from catalog.products.registry import (
    ProductCall,
    ProductFailed,
    ProductSpec,
    TeaserSpec,
    fresh_required,
    product_get,
    register,
)
from catalog.products.risk.decision import DecisionCheckOut, DecisionPackParams, _symbol_known
from catalog.products.signals import SignalsParams

Horizon = Literal["scalp", "intraday", "swing"]
# Which of the signal's timeframes a horizon reads: a scalp the 1m votes, a swing the 1h ones,
# intraday the two combined (the signal's own label). Only 1m and 1h candles are ingested.
HORIZON_TIMEFRAMES: dict[str, tuple[str, ...]] = {
    "scalp": ("1m",),
    "intraday": ("1h", "1m"),
    "swing": ("1h",),
}
# News about the asset this recent is worth reading next to a signal of these horizons.
SUBCONTRACT_NEWS_WINDOW = timedelta(hours=48)
SUBCONTRACT_NEWS_ITEMS = 5
# The rows scanned for tickers (JSON lists, filtered here: SQLite has no JSON containment).
NEWS_SCAN = 500


class SubcontractParams(QueryModel):
    symbol: Annotated[
        str,
        Field(
            max_length=40,
            pattern=r"^[A-Za-z0-9]{1,20}/[A-Za-z0-9]{1,12}$",
            description="the spot symbol (BTC/USDT)",
        ),
    ] = "BTC/USDT"
    horizon: Horizon = Field(
        "intraday", description="scalp (1m votes), intraday (1h and 1m), swing (1h votes)"
    )
    side: Literal["long", "short"] | None = Field(
        None, description="the side to check; default the signal's (long when it is neutral)"
    )
    notional_usdc: float = Field(10000.0, gt=0, le=1e10, description="the order's size in USDC")

    @field_validator("symbol")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()


SignalLabel = Literal["STRONG_SELL", "SELL", "NEUTRAL", "BUY", "STRONG_BUY"]


class SubcontractSignalOut(BaseModel):
    label: SignalLabel = Field(
        description="the horizon's label: its timeframe's, or the combined one (intraday)"
    )
    score: float = Field(description="the horizon's score in [-1, 1]")
    side: Literal["long", "short"] | None
    combined_label: SignalLabel
    confidence: float
    venue: str
    entry: float
    stop: float | None
    target: float | None
    horizon_hours: float
    regime: str = Field(description="the 1h regime")


class SubcontractRiskOut(BaseModel):
    available: bool
    reason: str | None = Field(description="why the section is unavailable")
    verdict: Literal["go", "caution", "no_go"] | None
    summary: str | None
    checks: list[DecisionCheckOut]


class SubcontractSentimentOut(BaseModel):
    available: bool
    reason: str | None = Field(description="why the section is unavailable (e.g. no recent news)")
    asset: str
    score: float | None
    label: Literal["positive", "negative", "neutral"] | None
    items: int
    momentum: float | None


class SubcontractNewsOut(BaseModel):
    id: int
    title: str
    tickers: list[str]
    category: str
    source: str
    url: str
    published_at: str | None


class AgentSubcontractDeskOut(Provenanced):
    symbol: str
    horizon: Horizon
    timeframes: list[str]
    side: Literal["long", "short"]
    side_from: Literal["params", "signal", "default"]
    notional_usdc: float
    verdict: Literal["go", "caution", "stand_aside"]
    verdict_line: str = Field(description="one line: why")
    signal: SubcontractSignalOut
    risk: SubcontractRiskOut
    sentiment: SubcontractSentimentOut
    news: list[SubcontractNewsOut] = Field(description="the newest items naming the asset in the window")


def _part(sku: str, params: BaseModel, call: ProductCall) -> dict[str, Any]:
    """Run another product (its own run, its own params): the parts are not re-implemented."""
    spec = product_get(sku)
    if spec is None:
        raise ProductFailed(f"{sku} is not available; nothing was charged")
    return spec.run(
        ProductCall(sku=None, params=params, base_url=call.base_url, payer=call.payer, account=call.account)
    )


def _merge(prov: Provenance, part: dict[str, Any]) -> None:
    for src in part.get("sources", []):
        at = datetime.fromisoformat(src["as_of"]) if src.get("as_of") else None
        prov.add(
            source=src["name"], venue=src.get("venue"), replay=src["replay"], as_of=at, items=src["items"]
        )


def _signal_section(sig: dict[str, Any], horizon: str) -> dict[str, Any]:
    frames = {f["timeframe"]: f for f in sig["timeframes"]}
    wanted = HORIZON_TIMEFRAMES[horizon]
    if len(wanted) == 1 and wanted[0] in frames:
        label, score = frames[wanted[0]]["label"], frames[wanted[0]]["score"]
    else:
        label, score = sig["label"], sig["score"]
    side = "long" if "BUY" in label else "short" if "SELL" in label else None
    return {
        "label": label,
        "score": score,
        "side": side,
        "combined_label": sig["label"],
        "confidence": sig["confidence"],
        "venue": sig["venue"],
        "entry": sig["entry"],
        "stop": sig["stop"],
        "target": sig["target"],
        "horizon_hours": sig["horizon_hours"],
        "regime": sig["regime"]["label"],
    }


def _news(base: str, *, now: datetime, prov: Provenance) -> list[dict[str, Any]]:
    rows = NewsItem.objects.filter(published_at__gte=now - SUBCONTRACT_NEWS_WINDOW).order_by(
        "-published_at", "-id"
    )
    out: list[dict[str, Any]] = []
    for item in rows[:NEWS_SCAN]:
        tickers = [str(t).upper() for t in (item.tickers or [])]
        if base not in tickers:
            continue
        out.append(
            {
                "id": item.id,
                "title": item.title,
                "tickers": tickers,
                "category": item.category,
                "source": item.source,
                "url": item.url,
                "published_at": iso(item.published_at),
            }
        )
        prov.add(source="news", replay=item.replay, as_of=item.published_at)
        if len(out) >= SUBCONTRACT_NEWS_ITEMS:
            break
    return out


def _verdict(
    *, side: str, signal: dict[str, Any], risk: dict[str, Any], sentiment: dict[str, Any], horizon: str
) -> tuple[Literal["go", "caution", "stand_aside"], str]:
    """stand_aside: the horizon's signal is neutral or against the side, or the pack says no_go;
    caution: the pack says caution (or is unavailable) or the news sentiment is against the side;
    go otherwise."""
    if signal["side"] is None:
        return "stand_aside", f"Stand aside: the {horizon} signal is NEUTRAL (score {signal['score']:+.2f})."
    if signal["side"] != side:
        return "stand_aside", f"Stand aside: the {horizon} signal is {signal['label']}, against a {side}."
    if risk["verdict"] == "no_go":
        return "stand_aside", f"Stand aside: {risk['summary']}"
    against = "negative" if side == "long" else "positive"
    worries = []
    if not risk["available"]:
        worries.append("the risk checks are unavailable")
    elif risk["verdict"] == "caution":
        worries.append(
            "the decision pack warns ("
            + ", ".join(c["name"] for c in risk["checks"] if c["status"] == "warn")
            + ")"
        )
    if sentiment["label"] == against:
        worries.append(f"news sentiment is {against} ({sentiment['score']:+.2f})")
    head = f"the {horizon} signal is {signal['label']} ({signal['score']:+.2f})"
    if worries:
        return "caution", f"Caution: {head}, but " + " and ".join(worries) + "."
    return "go", f"Go {side}: {head} and every risk check passed."


def agent_subcontract_desk(call: ProductCall) -> dict[str, Any]:
    params = call.params if isinstance(call.params, SubcontractParams) else SubcontractParams()
    now = timezone.now()
    symbol, horizon = params.symbol, params.horizon
    base = symbol.split("/")[0]
    prov = Provenance(
        method=(
            f"composed: the signals product ({horizon}: {'+'.join(HORIZON_TIMEFRAMES[horizon])} votes), the risk "
            "decision pack, news sentiment of the base asset and the news naming it; stand_aside when the "
            "signal is neutral or against the side or the pack says no_go, caution on a warning or adverse sentiment"
        ),
        max_age=signals_max_age(),
        now=now,
    )
    # The core: without a signal there is nothing to compose (503, uncharged).
    try:
        signals = _part("signals", SignalsParams(symbol=symbol, limit=1), call)
    except NotFound as exc:
        raise ProductFailed(f"no signal for {symbol}: {exc}; nothing was charged") from exc
    if not signals["signals"]:
        raise ProductFailed(f"no signal for {symbol}; nothing was charged")
    _merge(prov, signals)
    signal = _signal_section(signals["signals"][0], horizon)
    side: Literal["long", "short"]
    if params.side is not None:
        side, side_from = params.side, "params"
    elif signal["side"] is not None:
        side, side_from = signal["side"], "signal"
    else:
        side, side_from = "long", "default"
    try:
        pack = _part(
            "risk_decision_pack",
            DecisionPackParams(symbol=symbol, side=side, notional_usdc=params.notional_usdc),
            call,
        )
        _merge(prov, pack)
        risk = {
            "available": True,
            "reason": None,
            "verdict": pack["verdict"],
            "summary": pack["summary"],
            "checks": pack["checks"],
        }
    except ProductFailed as exc:
        risk = {"available": False, "reason": str(exc), "verdict": None, "summary": None, "checks": []}
    try:
        feeling = _part("sentiment", SentimentParams(asset=base, limit=1), call)
        _merge(prov, feeling)
        mine = feeling["assets"][0]
        sentiment = {
            "available": True,
            "reason": None,
            "asset": base,
            "score": mine["score"],
            "label": mine["label"],
            "items": mine["items"],
            "momentum": mine["momentum"],
        }
    except ProductFailed as exc:
        sentiment = {
            "available": False,
            "reason": str(exc),
            "asset": base,
            "score": None,
            "label": None,
            "items": 0,
            "momentum": None,
        }
    news = _news(base, now=now, prov=prov)
    fresh_required(prov, "fresh candles")
    verdict, line = _verdict(side=side, signal=signal, risk=risk, sentiment=sentiment, horizon=horizon)
    return {
        "symbol": symbol,
        "horizon": horizon,
        "timeframes": list(HORIZON_TIMEFRAMES[horizon]),
        "side": side,
        "side_from": side_from,
        "notional_usdc": params.notional_usdc,
        "verdict": verdict,
        "verdict_line": line,
        "signal": signal,
        "risk": risk,
        "sentiment": sentiment,
        "news": news,
        **prov.out(),
    }


def _has_signal_data() -> tuple[bool, str]:
    spec = product_get("signals")
    if spec is None or spec.available is None:
        return False, "the signals product is not available"
    return spec.available()


register(
    ProductSpec(
        sku="agent_subcontract_desk",
        path="/agent/subcontract-desk",
        headline="Agent subcontract desk: delegate a research or execution task to the desk",
        price="0.22",
        family="agent",
        tier="A",
        hero=True,
        rank=10,
        teaser="execution-delegation",
        teasers=(
            TeaserSpec(
                name="execution-delegation",
                title="Execution delegation",
                summary="Delegate execution to the desk and report fills back.",
                highlights=("activate", "report fill"),
            ),
        ),
        run=agent_subcontract_desk,
        params=SubcontractParams,
        output=AgentSubcontractDeskOut,
        price_for=_symbol_known,
        available=_has_signal_data,
    )
)

# The `bounties` product (GET /api/a2a/bounties, /api/a2a/x402/bounties) is registered by billing
# (billing/bounties/products.py): the bounties and their rewards are billing's rows.

# mcp_managed_pack is registered by agents/mcp/managed.py: what it sells (an allowance of MCP tool
# calls on the buyer's API key) is the MCP server's, one layer up.
