"""The tech regulatory digest: the regulators' and central banks' news of the week, ranked by
impact (the weight of the actions it names, decayed by age)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any, cast

from django.db.models import Q
from django.utils import timezone
from pydantic import Field

from a2a_service.core.inputs import Limit, QueryModel
from catalog.analytics.provenance import Provenance, Provenanced
from catalog.analytics.sentiment import news_in_window, scored_news
from catalog.models import EditorialPiece, NewsItem
from catalog.products.digests.common import (
    NewsLineOut,
    StaffNoteOut,
    _has_news_since,
    _news_prov,
    news_line,
    staff_note,
)
from catalog.products.registry import (
    ProductCall,
    ProductFailed,
    TeaserSpec,
    fresh_required,
    metered_by_items,
    product,
)

# Regulators publish on working days: a week holds several releases, and four days cover a
# long weekend without calling the digest stale.
REGULATORY_WINDOW = timedelta(days=7)
REGULATORY_MAX_AGE = timedelta(hours=96)
# An action loses half its weight in two days: this week's rule outranks last week's.
REGULATORY_HALF_LIFE = timedelta(hours=48)
# What moves markets most: enforcement and rate decisions, then rules, guidance, approvals,
# statistical releases. An item scores each kind it matches once.
IMPACT_KEYWORDS: tuple[tuple[str, float, re.Pattern[str]], ...] = (
    (
        "enforcement",
        3.0,
        re.compile(
            r"\b(enforcement|charges?|charged|fraud|penalt(?:y|ies)|sanctions?|lawsuit|settles?|"
            r"settlement|cease[- ]and[- ]desist|judgment|indict\w*)\b",
            re.I,
        ),
    ),
    (
        "rate decision",
        3.0,
        re.compile(
            r"\b(rate decision|FOMC|federal funds rate|rate (?:cut|hike|increase|decrease)s?|"
            r"monetary policy|policy rate|discount rate|Open Market Committee)\b",
            re.I,
        ),
    ),
    (
        "rule",
        2.0,
        re.compile(r"\b(rules?|rulemaking|adopts?|amendments?|regulation|proposal|proposes)\b", re.I),
    ),
    (
        "guidance",
        1.5,
        re.compile(r"\b(guidance|statement|framework|bulletin|FAQs?|interpretive|testimony)\b", re.I),
    ),
    ("approval", 1.0, re.compile(r"\b(approv\w*|licen[cs]e\w*|registration|application)\b", re.I)),
    ("data release", 0.5, re.compile(r"\b(statistical release|minutes|report|survey|data)\b", re.I)),
)
REGULATORY_Q = Q(category=NewsItem.Category.GENERAL) | Q(market_group="regulation")


class RegulatoryParams(QueryModel):
    limit: int = Limit(10)


class RegulatoryItemOut(NewsLineOut):
    impact: float = Field(description="(1 + the matched kinds' weights) x 0.5^(age / 48 h)")
    kinds: list[str] = Field(description="what the item is: enforcement, rate decision, rule, guidance, ...")


class RegulatoryDigestOut(Provenanced):
    window_days: int
    count: int
    weights: dict[str, float] = Field(description="the impact weight of each kind")
    items: list[RegulatoryItemOut] = Field(description="highest impact first")
    staff_note: StaffNoteOut | None = Field(
        description="the newest published regulatory note, if staff wrote one"
    )


def impact_of(text: str, *, age: timedelta) -> tuple[float, list[str]]:
    kinds = [name for name, _, rx in IMPACT_KEYWORDS if rx.search(text)]
    weight = 1.0 + sum(w for name, w, _ in IMPACT_KEYWORDS if name in kinds)
    decay = 0.5 ** (max(age.total_seconds(), 0.0) / REGULATORY_HALF_LIFE.total_seconds())
    return round(weight * decay, 4), kinds


def regulatory_payload(*, limit: int = 10, now: datetime | None = None) -> dict[str, Any]:
    now = now or timezone.now()
    since = now - REGULATORY_WINDOW
    ids = set(news_in_window(since).filter(REGULATORY_Q).values_list("id", flat=True))
    items = [i for i in scored_news(since=since, now=now) if i.id in ids]
    if not items:
        raise ProductFailed("no regulator or central-bank news in the last 7 days; nothing was charged")
    ranked = []
    for item in items:
        impact, kinds = impact_of(f"{item.title}. {item.teaser}", age=now - item.at)
        ranked.append((impact, item, kinds))
    ranked.sort(key=lambda r: (-r[0], -r[1].at.timestamp(), -r[1].id))
    ranked = ranked[:limit]
    prov = Provenance(
        method="regulator and central-bank news of 7 days (the feeds' general category and the items the feed "
        "tags regulation), ranked by (1 + keyword weights: enforcement 3, rate decision 3, rule 2, guidance "
        "1.5, approval 1, data release 0.5) x 0.5^(age/48 h)",
        max_age=REGULATORY_MAX_AGE,
        now=now,
    )
    _news_prov(prov, (item for _, item, _ in ranked))
    fresh_required(prov, "regulator or central-bank news")
    return {
        "window_days": REGULATORY_WINDOW.days,
        "count": len(ranked),
        "weights": {name: w for name, w, _ in IMPACT_KEYWORDS},
        "items": [{**news_line(item), "impact": impact, "kinds": kinds} for impact, item, kinds in ranked],
        "staff_note": staff_note(EditorialPiece.Kind.REGULATORY),
        **prov.out(),
    }


def _regulatory_available() -> tuple[bool, str]:
    return _has_news_since(REGULATORY_MAX_AGE, what="regulator or central-bank news", q=REGULATORY_Q)


@product(
    sku="tech_regulatory_digest",
    path="/intel/tech-regulatory-digest",
    headline="Tech regulatory digest: rules and enforcement that move markets",
    price="0.08",
    family="intel",
    rank=21,
    teaser="tech-regulatory-digest",
    teasers=(
        TeaserSpec(
            name="tech-regulatory-digest",
            title="Tech regulatory digest",
            summary="Technology regulation and enforcement that moves markets.",
            highlights=("rules", "enforcement"),
        ),
    ),
    params=RegulatoryParams,
    output=RegulatoryDigestOut,
    available=_regulatory_available,
    metered=metered_by_items("items"),
)
def tech_regulatory_digest(call: ProductCall) -> dict[str, Any]:
    return regulatory_payload(limit=cast(RegulatoryParams, call.params).limit)
