"""What every computed payload says about its data: `as_of` (the newest input row), `sources`
(which feeds, venues, and whether from the local replay), `replay` (any input replayed),
a one-line `method`, and `stale` (the newest input is older than the product's freshness
limit). Analytics only says whether the inputs are fresh; a product with nothing fresh enough
refuses to sell (catalog/products/registry.py fresh_required: ProductFailed, 503, uncharged)
instead of selling stale content, unless its spec says stale content is still worth selling, flagged.

Usage in a product:

    prov = Provenance(method="RSI/MACD/EMA/BB/ADX votes on 1h and 1m candles", max_age=timedelta(hours=2))
    prov.add(source="exchanges", venue="binance", replay=series.replay, as_of=series.last_at, items=len(series))
    ...
    fresh_required(prov)          # ProductFailed when nothing is fresh (nothing charged)
    return {**payload, **prov.out()}

and the product's output model subclasses `Provenanced`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso


class SourceOut(BaseModel):
    name: str = Field(description="the feed (catalog/feeds/<name>) or 'manual' for rows staff typed in")
    venue: str | None = Field(default=None, description="the venue within the feed, when it has several")
    replay: bool = Field(description="true: recorded samples from the local replay, not the live source")
    items: int = Field(description="input rows from this source")
    as_of: str | None = Field(default=None, description="ISO 8601 UTC: the newest of these rows")


class Provenanced(BaseModel):
    """The provenance fields of a computed payload (output models subclass it)."""

    as_of: str | None = Field(description="ISO 8601 UTC: when the newest input was observed")
    sources: list[SourceOut]
    replay: bool = Field(description="true when any input came from the local replay")
    method: str = Field(description="how the figures were computed, in one line")
    stale: bool = Field(description="true when the newest input is older than the freshness limit")


@dataclass
class Provenance:
    method: str
    max_age: timedelta
    now: datetime = field(default_factory=timezone.now)
    _sources: dict[tuple[str, str | None, bool], SourceOut] = field(default_factory=dict)
    _latest: datetime | None = None

    def add(
        self, *, source: str, replay: bool, as_of: datetime | None, items: int = 1, venue: str | None = None
    ) -> None:
        """Count `items` input rows of one source (and venue) seen at `as_of`."""
        key = (source or "manual", venue, bool(replay))
        row = self._sources.get(key)
        if row is None:
            row = self._sources[key] = SourceOut(name=key[0], venue=venue, replay=key[2], items=0)
        row.items += items
        if as_of is not None:
            # Never after the answer: a source whose clock runs ahead is as of now at the latest.
            as_of = min(as_of, self.now)
            stamp = iso(as_of)
            if row.as_of is None or (stamp is not None and stamp > row.as_of):
                row.as_of = stamp
            if self._latest is None or as_of > self._latest:
                self._latest = as_of

    @property
    def latest(self) -> datetime | None:
        return self._latest

    @property
    def stale(self) -> bool:
        return self._latest is None or self.now - self._latest > self.max_age

    def out(self) -> dict[str, object]:
        sources = sorted(self._sources.values(), key=lambda x: (x.name, x.venue or "", x.replay))
        return {
            "as_of": iso(self._latest),
            "sources": [x.model_dump() for x in sources],
            "replay": any(x.replay for x in sources),
            "method": self.method,
            "stale": self.stale,
        }
