"""The self-hosted facilitator's Bazaar catalog: the resources whose `bazaar` declaration it
saw in a payment it settled (the SDK's facilitator helper extracts and validates the
declaration), and the discovery list facilitators serve from it
(GET <facilitator>/discovery/resources, which x402.extensions.bazaar's facilitator client
reads: type, payTo, scheme, network, extensions, limit, offset -> x402Version, items,
pagination).

Settled, not merely verified: /verify is public, and a stranger's verified (never settled)
authorization would otherwise list whatever resource and declaration it names. A settle is
this service's own claimed sale, and the resource must be this service's (PUBLIC_BASE_URL's
origin when set, or an MCP tool of ours).

Cataloguing never fails a payment: it runs after a successful settle, in its own
savepoint, and an error is logged and dropped. A resource is one row per URL and method (or
MCP tool), written by one INSERT … ON CONFLICT DO UPDATE, so concurrent settlements of the
same resource never race a read against a write; the payment kinds seen are merged into the
row's `accepts` by scheme and network. The same declaration and requirements seen again
within REFRESH_SECONDS are not written again (a settle is on the paid call's path)."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from x402 import x402FacilitatorSync
from x402.extensions.bazaar import BAZAAR, McpDiscoveryInfo, extract_discovery_info
from x402.schemas.hooks import SettleResultContext

from billing.models import DiscoveredResource

logger = logging.getLogger(__name__)

REFRESH_SECONDS = 60
SEEN_KEPT = 1024
LIST_LIMIT_MAX = 100
LIST_LIMIT_DEFAULT = 20


class _Seen:
    """Digests of what this process catalogued lately, with when."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._at: OrderedDict[str, float] = OrderedDict()

    def fresh(self, digest: str) -> bool:
        with self._lock:
            at = self._at.get(digest)
            return at is not None and time.monotonic() - at < REFRESH_SECONDS

    def mark(self, digest: str) -> None:
        with self._lock:
            self._at[digest] = time.monotonic()
            self._at.move_to_end(digest)
            while len(self._at) > SEEN_KEPT:
                self._at.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._at.clear()


SEEN = _Seen()


def discovery_hooks_register(facilitator: x402FacilitatorSync) -> None:
    """Declare the extension (listed by /supported) and catalogue after a settlement."""
    facilitator.register_extension(BAZAAR)
    facilitator.on_after_settle(_after_settle)


def _ours(url: str) -> bool:
    if url.startswith("mcp://tool/"):
        return True
    base = settings.PUBLIC_BASE_URL
    if not base:
        return True  # no public origin configured (development): the request's own host
    ours, theirs = urlsplit(base), urlsplit(url)
    return (theirs.scheme, theirs.netloc) == (ours.scheme, ours.netloc)


def _after_settle(context: SettleResultContext) -> None:
    if context.result.success:
        discovery_catalog(context.payment_payload, context.requirements)


def discovery_catalog(payload: Any, requirements: Any) -> DiscoveredResource | None:
    """Catalogue the resource a payment declares, if it declares one; never raises."""
    try:
        extensions = getattr(payload, "extensions", None) or {}
        declared = extensions.get(BAZAAR.key) if isinstance(extensions, dict) else None
        if not declared:
            return None
        accepted = requirements.model_dump(by_alias=True, exclude_none=True, mode="json")
        resource = getattr(payload, "resource", None)
        digest = hashlib.sha1(
            json.dumps(
                [declared, accepted, resource.model_dump(mode="json") if resource else None],
                sort_keys=True,
                default=str,
            ).encode()
        ).hexdigest()
        if SEEN.fresh(digest):
            return None
        found = extract_discovery_info(payload, requirements)
        if found is None or not _ours(found.resource_url):
            return None
        row = discovered_resource_upsert(
            resource=found.resource_url,
            kind="mcp" if isinstance(found.discovery_info, McpDiscoveryInfo) else "http",
            method=found.method,
            tool_name=found.tool_name or "",
            x402_version=found.x402_version,
            description=found.description or "",
            mime_type=found.mime_type or "",
            service_name=found.service_name or "",
            tags=found.tags or [],
            icon_url=found.icon_url or "",
            accepts={f"{accepted.get('scheme')}|{accepted.get('network')}": accepted},
            bazaar=declared,
        )
        SEEN.mark(digest)
        return row
    except Exception:
        logger.exception("bazaar: the resource of a payment could not be catalogued")
        return None


COLUMNS = (
    "resource",
    "method",
    "tool_name",
    "type",
    "x402_version",
    "description",
    "mime_type",
    "service_name",
    "tags",
    "icon_url",
    "accepts",
    "bazaar",
    "first_seen_at",
    "last_updated",
)


def discovered_resource_upsert(
    *,
    resource: str,
    kind: str,
    method: str,
    tool_name: str,
    x402_version: int,
    description: str,
    mime_type: str,
    service_name: str,
    tags: list[str],
    icon_url: str,
    accepts: dict[str, Any],
    bazaar: dict[str, Any],
) -> DiscoveredResource:
    """Insert the resource or update it in one statement (the unique resource, method and
    tool), merging `accepts` by its keys; in a savepoint, so a failure leaves the caller's
    transaction usable."""
    qn = connection.ops.quote_name
    table = DiscoveredResource._meta.db_table
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    names = COLUMNS
    json_param = "%s::jsonb" if connection.vendor == "postgresql" else "%s"
    placeholders = [json_param if n in ("tags", "accepts", "bazaar") else "%s" for n in names]
    if connection.vendor == "postgresql":
        merged = f"{qn(table)}.{qn('accepts')} || EXCLUDED.{qn('accepts')}"
    else:
        merged = f"json_patch({qn(table)}.{qn('accepts')}, EXCLUDED.{qn('accepts')})"
    updated = [n for n in names if n not in ("resource", "method", "tool_name", "first_seen_at", "accepts")]
    sets = ", ".join(f"{qn(n)} = EXCLUDED.{qn(n)}" for n in updated)
    sql = (
        f"INSERT INTO {qn(table)} ({', '.join(qn(n) for n in names)}) VALUES ({', '.join(placeholders)}) "
        f"ON CONFLICT ({qn('resource')}, {qn('method')}, {qn('tool_name')}) DO UPDATE SET {sets}, "
        f"{qn('accepts')} = {merged} RETURNING {qn('id')}"
    )
    values: list[Any] = [
        resource[:500],
        method[:8],
        tool_name[:128],
        kind,
        x402_version,
        description[:500],
        mime_type[:100],
        service_name[:32],
        json.dumps(tags),
        icon_url[:2048],
        json.dumps(accepts),
        json.dumps(bazaar),
        now,
        now,
    ]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, values)
        row = cursor.fetchone()
    assert row is not None
    return DiscoveredResource.objects.get(pk=row[0])


# --- the discovery list ----------------------------------------------------------------------
@dataclass(frozen=True)
class DiscoveryFilter:
    type: str | None = None
    pay_to: str | None = None
    scheme: str | None = None
    network: str | None = None
    extensions: str | None = None
    limit: int = LIST_LIMIT_DEFAULT
    offset: int = 0


def discovery_item(row: DiscoveredResource) -> dict[str, Any]:
    """A row as the discovery list's item (x402.extensions.bazaar DiscoveryResource.to_dict)."""
    item: dict[str, Any] = {
        "resource": row.resource,
        "type": row.type,
        "x402Version": row.x402_version,
        "accepts": [row.accepts[key] for key in sorted(row.accepts)],
        "lastUpdated": row.last_updated.isoformat().replace("+00:00", "Z"),
        "extensions": {BAZAAR.key: row.bazaar},
    }
    if row.description:
        item["description"] = row.description
    if row.mime_type:
        item["mimeType"] = row.mime_type
    if row.service_name:
        item["serviceName"] = row.service_name
    if row.tags:
        item["tags"] = row.tags
    if row.icon_url:
        item["iconUrl"] = row.icon_url
    return item


def _matches(row: DiscoveredResource, wanted: DiscoveryFilter) -> bool:
    if wanted.type and row.type != wanted.type:
        return False
    if wanted.extensions and wanted.extensions != BAZAAR.key:
        return False  # only the bazaar declaration is kept with a resource
    kinds = list(row.accepts.values())
    if wanted.scheme:
        kinds = [k for k in kinds if k.get("scheme") == wanted.scheme]
    if wanted.network:
        kinds = [k for k in kinds if k.get("network") == wanted.network]
    if wanted.pay_to:
        kinds = [k for k in kinds if str(k.get("payTo", "")).lower() == wanted.pay_to.lower()]
    return bool(kinds) or not (wanted.scheme or wanted.network or wanted.pay_to)


def discovery_list(wanted: DiscoveryFilter) -> dict[str, Any]:
    """One page of the catalogue, newest first. Filtered in Python: this facilitator serves
    only this service's payments, so its catalogue is this service's paid resources (tens)."""
    rows = [r for r in DiscoveredResource.objects.order_by("-last_updated", "id") if _matches(r, wanted)]
    page = rows[wanted.offset : wanted.offset + wanted.limit]
    return {
        "x402Version": 2,
        "items": [discovery_item(r) for r in page],
        "pagination": {"limit": wanted.limit, "offset": wanted.offset, "total": len(rows)},
    }
