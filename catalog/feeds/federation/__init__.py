"""Federation: the signals each enabled partner agent publishes at its `signals_url` (staff set
partners in the admin), upserted on (partner, the partner's signal id). One partner failing is
a warning on the pass; all of them failing fails it. In replay mode a partner's document is the
recorded sample `samples/federation_partners/<partner slug>.json`."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from catalog.feeds.federation.parse import PartnerSignalRow, document_parse
from catalog.feeds.jsonbody import json_body
from catalog.feeds.registry import FeedError, FeedPass, FeedSource, feed_register
from catalog.feeds.runner import NETWORK_ERRORS
from catalog.feeds.unique import unique_on
from catalog.models import PartnerAgent, PartnerSignal

SOURCE = "federation"
REPLAY_KEY = "federation_partners"


def partner_fetch(feed_pass: FeedPass, partner: PartnerAgent) -> list[PartnerSignalRow]:
    url = f"{feed_pass.replay_base(REPLAY_KEY)}/{partner.slug}" if feed_pass.replay else partner.signals_url
    rows, skipped = document_parse(json_body(feed_pass.fetch(url)))
    if skipped:
        feed_pass.warn(
            f"{partner.slug}: {skipped} signal(s) without a usable id, symbol, side, entry or time"
        )
    if rows and feed_pass.replay:
        shift = feed_pass.replay_shift(max(r.published_at for r in rows), step=timedelta(minutes=1))
        rows = [replace(r, published_at=r.published_at + shift) for r in rows]
    return rows


def signals_upsert(feed_pass: FeedPass, partner: PartnerAgent, rows: list[PartnerSignalRow]) -> int:
    rows = unique_on(
        rows, key=lambda r: r.external_id, what=f"federation {partner.slug} signals", feed_pass=feed_pass
    )
    for row in rows:
        PartnerSignal.objects.update_or_create(
            partner=partner,
            external_id=row.external_id,
            defaults={
                "symbol": row.symbol,
                "side": row.side,
                "entry_price": row.entry_price,
                "stop_price": row.stop_price,
                "target_price": row.target_price,
                "confidence": row.confidence,
                "timeframe": row.timeframe,
                "published_at": row.published_at,
                "source": SOURCE,
                "replay": feed_pass.replay,
                "observed_at": feed_pass.started_at,
            },
        )
    return len(rows)


def run(feed_pass: FeedPass) -> int:
    partners = list(PartnerAgent.objects.filter(enabled=True).exclude(signals_url="").order_by("slug"))
    fetched: list[tuple[PartnerAgent, list[PartnerSignalRow]]] = []
    errors = []
    failed: list[tuple[PartnerAgent, BaseException]] = []
    unreachable: BaseException | None = None
    for partner in partners:  # every document is read before anything is written
        try:
            fetched.append((partner, partner_fetch(feed_pass, partner)))
        except NETWORK_ERRORS as exc:
            unreachable = exc
            errors.append(f"{partner.slug}: unreachable: {exc}"[:300])
            failed.append((partner, exc))
        except FeedError as exc:
            errors.append(f"{partner.slug}: {exc}"[:300])
            failed.append((partner, exc))
    for (partner, failure), error in zip(failed, errors, strict=True):
        # Its warning keeps the "<slug>: " form the federation status reads back.
        feed_pass.feed_failed(feed=partner.signals_url, error=failure, detail=error)
    if partners and not fetched:
        if unreachable is not None and all(": unreachable: " in e for e in errors):
            # No partner could be reached at all: the runner's auto mode replays on this.
            raise unreachable
        raise FeedError("every partner failed: " + "; ".join(errors))
    return sum(signals_upsert(feed_pass, partner, rows) for partner, rows in fetched)


feed_register(
    FeedSource(
        name=SOURCE,
        run=run,
        interval_seconds=300,
        description="signals of the federated partner agents (PartnerAgent.signals_url)",
    )
)
