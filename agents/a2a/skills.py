"""The skills the A2A endpoints sell: one per product on sale (its SKU name; paid) and the free
catalogs (agents/discovery/views.py FREE_CAPABILITIES). The hub's cards list exactly these; a
catalog agent lists its own share of them (agent_skills: the SKUs it sells while on sale and
its free_skills), each callable at its JSON-RPC endpoint. A message names one by a data part
{"skill": ..., "params": {...}} or in words (agents/intent.py understand)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from a2a.types import Message
from a2a.utils.errors import InvalidParamsError

from agents.a2a.proto import plain_json, to_json
from agents.discovery.views import FREE_CAPABILITIES
from agents.intent import understand
from catalog.models import CatalogAgent, Sku
from catalog.products.registry import spec_get
from catalog.selectors.skus import live_skus

# What each free catalog is, for the cards (a capability added without a row here is still
# listed, described by its name).
FREE_SKILL_TEXT: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "telemetry_status": (
        "Telemetry status",
        "Free public snapshot of the network telemetry (same data as GET /api/a2a/telemetry/status).",
        ("telemetry", "network"),
    ),
    "news_catalog": (
        "News catalog",
        "The latest news teasers with their unlock prices (same data as GET /api/a2a/news/catalog).",
        ("news",),
    ),
    "exchange_market_discovery": (
        "Exchange markets",
        "Spot market discovery across exchanges (same data as GET /api/a2a/exchange/markets).",
        ("exchange", "markets"),
    ),
    "tokenized_watchlist": (
        "Tokenized watchlist",
        "Tokenized-asset watchlist and trading-API state (same data as GET /api/a2a/tokenized/watchlist).",
        ("tokenized", "watchlist"),
    ),
    "market_agent_news": (
        "Market agent news",
        "News from market agent groups (same data as GET /api/a2a/market-agents/news).",
        ("news", "agents"),
    ),
}


@dataclass(frozen=True)
class SkillOut:
    """A skill as both cards show it."""

    id: str
    name: str
    description: str
    tags: list[str]
    examples: list[str] = field(default_factory=list)
    # The price per call in USDC (the SKU's list price; an item may carry its own); None: free.
    price_usdc: float | None = None


@dataclass(frozen=True)
class Asked:
    """The skill a message asks for and its parameters."""

    skill: str
    params: dict[str, Any]
    by: str  # "data" (a data part named it) or "text" (understood from words)


def is_free(skill: str) -> bool:
    return skill in FREE_CAPABILITIES


def data_example(skill: str, params: dict[str, Any]) -> str:
    body: dict[str, Any] = {"skill": skill}
    if params:
        body["params"] = params
    return "data part: " + json.dumps(body, separators=(",", ":"))


def params_example(sku: str) -> dict[str, Any]:
    """Parameters to show in a skill's example, from the product's params model: each
    field's example or default; a placeholder for a required field without either."""
    spec = spec_get(sku)
    if spec is None or spec.params is None:
        return {}
    schema = spec.params.model_json_schema()
    out: dict[str, Any] = {}
    required = set(schema.get("required", []))
    for name, prop in schema.get("properties", {}).items():
        if prop.get("examples"):
            out[name] = prop["examples"][0]
        elif "default" in prop and prop["default"] is not None:
            out[name] = prop["default"]
        elif name in required:
            out[name] = f"<{prop.get('type', 'value')}>"
    return out


def paid_skill(x: Sku) -> SkillOut:
    return SkillOut(
        id=x.sku,
        name=x.headline.split(":")[0],
        description=f"{x.headline}. {x.price_usdc:g} USDC per call: pay with the a2a-x402 extension "
        "(x402.payment.payload on the input-required task) or send an X-API-Key header (prepaid credits).",
        tags=[t for t in (x.family, "paid", "x402", x.tier and f"tier-{x.tier}") if t],
        examples=[x.headline, data_example(x.sku, params_example(x.sku))],
        price_usdc=x.price_usdc,
    )


def free_skill(name: str) -> SkillOut:
    title, text, tags = FREE_SKILL_TEXT.get(name, (name.replace("_", " ").capitalize(), name, ()))
    return SkillOut(
        id=name,
        name=title,
        description=f"{text} Free.",
        tags=[*tags, "free"],
        examples=[data_example(name, {})],
    )


def skills_all() -> list[SkillOut]:
    """Every skill the endpoints answer now: the products on sale, then the free catalogs."""
    return [paid_skill(x) for x in live_skus()] + [free_skill(name) for name in FREE_CAPABILITIES]


def agent_free_skills(agent: CatalogAgent) -> list[str]:
    """The agent's free catalogs that exist (a name staff typed that names none is not listed)."""
    names = agent.free_skills if isinstance(agent.free_skills, list) else []
    return [n for n in dict.fromkeys(names) if isinstance(n, str) and n in FREE_CAPABILITIES]


def agent_skills(agent: CatalogAgent, *, on_sale: list[Sku] | None = None) -> list[SkillOut]:
    """What a catalog agent lists and its JSON-RPC endpoint answers: each SKU it sells that is
    on sale now (paid, with its price), then its free catalogs. `on_sale`: live_skus(), when
    the caller lists several agents."""
    sold = {x.pk for x in agent.skus.all()}
    paid = [paid_skill(x) for x in (live_skus() if on_sale is None else on_sale) if x.pk in sold]
    return paid + [free_skill(name) for name in agent_free_skills(agent)]


def agent_answers(agent: CatalogAgent, skill: str) -> bool:
    """Whether `skill` is the agent's to answer: one of its SKUs (on sale or not: one that is
    not answers why, as the hub would) or one of its free catalogs."""
    return skill in agent_free_skills(agent) or any(x.sku == skill for x in agent.skus.all())


def asked_skill(message: Message, *, agent: CatalogAgent | None) -> Asked | None:
    """The skill a message asks for: the first data part naming one, else its text
    understood (agents/intent.py); None when neither names a skill."""
    for part in message.parts:
        if not part.HasField("data"):
            continue
        data = plain_json(to_json(part.data))
        if not isinstance(data, dict) or "skill" not in data:
            continue
        skill, params = data.get("skill"), data.get("params", {})
        if not isinstance(skill, str) or not skill:
            raise InvalidParamsError("the data part's skill must be a non-empty string")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise InvalidParamsError("the data part's params must be an object")
        return Asked(skill=skill, params=params, by="data")
    text = " ".join(part.text for part in message.parts if part.HasField("text")).strip()
    if not text:
        return None
    intent = understand(text, agent=agent)
    if intent.sku is None:
        return None
    return Asked(skill=intent.sku, params=dict(intent.params), by="text")
