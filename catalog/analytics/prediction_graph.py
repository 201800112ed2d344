"""Prediction-market maths for the event graph and the starter bundle.

Entities are extracted from a market's question by simple, documented rules (no model):
- tickers: `$BTC`-style cashtags and all-capital tokens of 2-6 letters (BTC, CPI, GDP);
- numbers with a unit: `$100k`, `$100,000`, `3.5%`, `25 bps`, `2 million`, normalized to one
  spelling (`$100000`, `3.5%`, `25bps`, `2000000`) so the same threshold written two ways matches;
- capitalized names: runs of capitalized words that are not question words, months or
  weekdays ("Bitcoin", "Federal Reserve", "Donald Trump"); a run of
  several words counts as the phrase and as each of its words, so "Trump" meets "Donald Trump".

Two markets are linked when they share an entity, or share a category and their yes prices
moved together. The link's weight is the Jaccard overlap of their entity sets, averaged with
|correlation| of their hourly yes-price changes (numpy.corrcoef) when both have enough price
history in common."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

# The feeds pass every 5 minutes; two hours tolerates missed passes (a venue down, backoff)
# without selling a graph of prices nobody has confirmed for longer.
PREDICTION_MAX_AGE = timedelta(hours=2)
# Price history is compared on hourly buckets (the last reading of each hour) over this window.
CORRELATION_WINDOW = timedelta(days=7)
CORRELATION_BUCKET_SECONDS = 3600
# Fewer aligned moves than this say nothing about co-movement: no correlation is reported.
CORRELATION_MIN_POINTS = 3

_STOP = {
    # question words and fillers that start or pad questions
    "will", "who", "what", "which", "when", "where", "how", "is", "are", "does", "do", "did", "can",
    "the", "a", "an", "in", "on", "by", "of", "for", "to", "at", "before", "after", "and", "or", "if",
    "yes", "no", "be", "than", "above", "below", "between", "more", "less", "end", "price", "market",
    # calendar words: many unrelated markets close in the same month
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday", "q1", "q2", "q3", "q4",
}  # fmt: skip
_MULTIPLIERS = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "t": 1e12,
    "tn": 1e12,
    "trillion": 1e12,
}
_NUMBER = re.compile(
    r"(?P<cur>\$)?(?P<num>\d[\d,]*(?:\.\d+)?)\s?"
    r"(?P<unit>%|bps|k|thousand|mn|million|m|bn|billion|b|tn|trillion|t)?(?![A-Za-z])",
    re.IGNORECASE,
)
_CASHTAG = re.compile(r"\$([A-Za-z]{2,6})\b")
_CAPS = re.compile(r"\b[A-Z]{2,6}\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z'\.-]*[A-Za-z]|[A-Za-z]")


def _number(cur: str | None, num: str, unit: str | None) -> str | None:
    value = float(num.replace(",", ""))
    unit = (unit or "").lower()
    if unit in ("%", "bps"):
        return f"{value:g}{unit}"
    value *= _MULTIPLIERS.get(unit, 1.0)
    if not cur and not unit:
        # A bare number (a year, a count) is too common to link markets.
        return None
    return f"{'$' if cur else ''}{value:.0f}" if value == int(value) else f"{'$' if cur else ''}{value:g}"


def entities(question: str) -> set[str]:
    """The named entities of a question (lowercased), by the rules in this module's docstring."""
    found: set[str] = set()
    for m in _NUMBER.finditer(question):
        norm = _number(m.group("cur"), m.group("num"), m.group("unit"))
        if norm:
            found.add(norm)
    for tag in _CASHTAG.findall(question):
        found.add(tag.lower())
    for tok in _CAPS.findall(question):
        if tok.lower() not in _STOP:
            found.add(tok.lower())
    # Capitalized runs; a question's first word is capitalized by grammar, and the stop words
    # (Will, Who, What...) drop it when it is not a name.
    words = [m.group(0) for m in _WORD.finditer(question)]
    run: list[str] = []

    def close() -> None:
        if run:
            found.update(w.lower() for w in run)
            if len(run) > 1:
                found.add(" ".join(run).lower())
            run.clear()

    for word in words:
        clean = word.strip(".'")
        if clean[:1].isupper() and clean.lower() not in _STOP:
            run.append(clean)
        else:
            close()
    close()
    return found


def jaccard(a: set[str], b: set[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def hourly_moves(readings: Iterable[tuple[datetime, float]]) -> dict[int, float]:
    """Yes-price change per hour bucket: the last reading of each hour minus the previous
    bucket's last reading (keyed by the later bucket)."""
    last: dict[int, float] = {}
    for at, price in sorted(readings):
        last[int(at.timestamp()) // CORRELATION_BUCKET_SECONDS] = price
    keys = sorted(last)
    return {b: last[b] - last[a] for a, b in zip(keys, keys[1:], strict=False)}


def move_correlation(a: dict[int, float], b: dict[int, float]) -> tuple[float | None, int]:
    """Pearson correlation of two markets' moves on their common hours, and how many there were.
    None when too few, or when either did not move at all (no variance, no correlation)."""
    common = sorted(set(a) & set(b))
    if len(common) < CORRELATION_MIN_POINTS:
        return None, len(common)
    x = np.array([a[k] for k in common])
    y = np.array([b[k] for k in common])
    if float(np.std(x)) == 0.0 or float(np.std(y)) == 0.0:
        return None, len(common)
    return float(np.corrcoef(x, y)[0, 1]), len(common)


@dataclass
class Edge:
    a: int
    b: int
    weight: float
    jaccard: float
    shared: list[str]
    same_category: bool
    correlation: float | None
    points: int


@dataclass
class GraphNode:
    key: int
    entities: set[str]
    category: str
    moves: dict[int, float] = field(default_factory=dict)


def edges(nodes: list[GraphNode], *, min_weight: float) -> list[Edge]:
    """Every linked pair at or above `min_weight`, heaviest first (pairs are few: nodes are capped)."""
    out: list[Edge] = []
    for i, a in enumerate(nodes):
        for b in nodes[i + 1 :]:
            shared = a.entities & b.entities
            same = bool(a.category) and a.category.lower() == b.category.lower()
            corr, points = move_correlation(a.moves, b.moves)
            if not shared and not (same and corr is not None):
                continue
            j = jaccard(a.entities, b.entities)
            weight = j if corr is None else (j + abs(corr)) / 2
            if weight < min_weight:
                continue
            out.append(
                Edge(
                    a=a.key,
                    b=b.key,
                    weight=round(weight, 6),
                    jaccard=round(j, 6),
                    shared=sorted(shared),
                    same_category=same,
                    correlation=None if corr is None else round(corr, 6),
                    points=points,
                )
            )
    out.sort(key=lambda e: (-e.weight, e.a, e.b))
    return out


def move_24h(
    now_price: float | None, history: list[tuple[datetime, float]], *, now: datetime
) -> float | None:
    """Yes-price change over the last 24 h: now minus the last reading at or before 24 h ago
    (else the oldest reading in the window). None without a price or history."""
    if now_price is None or not history:
        return None
    cutoff = now - timedelta(hours=24)
    ordered = sorted(history)
    before = [p for at, p in ordered if at <= cutoff]
    inside = [p for at, p in ordered if at > cutoff]
    base = before[-1] if before else (inside[0] if inside else None)
    return None if base is None else now_price - base
