"""The catalog's views besides its free GETs (which catalog/api/urls.py generates from its route
table with a2a_service/core/freeviews.py): the internal spread-snapshot ingest."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core.errors import Unauthorized
from a2a_service.core.inputs import parse_body
from a2a_service.core.views import ApiView, ok
from catalog.api.bodies import SpreadSnapshotIngest
from catalog.models import SpreadSnapshot
from catalog.selectors import schemas as s
from catalog.signals import spreads_ingested


class SpreadSnapshotIngestView(ApiView):
    """Internal: a spread radar pushes readings here with X-Ingest-Token."""

    @extend_schema(
        tags=["market-data"],
        summary="Ingest a spread snapshot (internal, X-Ingest-Token)",
        operation_id="internal_spread_snapshot_ingest",
        request=SpreadSnapshotIngest,
        parameters=[OpenApiParameter("X-Ingest-Token", str, OpenApiParameter.HEADER, required=True)],
        responses={201: s.SpreadSnapshotAcceptedOut, 401: s.ErrorOut, 422: s.HTTPValidationError},
    )
    def post(self, request: Request) -> Response:
        import secrets

        from django.utils import timezone

        token = request.headers.get("X-Ingest-Token", "")
        if not settings.INGEST_TOKEN or not secrets.compare_digest(
            token.encode(), settings.INGEST_TOKEN.encode()
        ):
            raise Unauthorized("missing or wrong X-Ingest-Token")
        body = parse_body(request, SpreadSnapshotIngest)
        with transaction.atomic():
            rows = SpreadSnapshot.objects.bulk_create(
                SpreadSnapshot(
                    symbol=r.symbol,
                    venue_a=r.venue_a,
                    venue_b=r.venue_b,
                    spread_bps=round(r.spread_bps, 3),
                    captured_at=r.captured_at or timezone.now(),
                    source="ingest",
                )
                for r in body.readings
            )
            # bulk_create sends no post_save: listeners hear of the rows here, in the same
            # transaction (an alert is never raised for readings that rolled back).
            spreads_ingested.send(sender=SpreadSnapshot, rows=rows)
        ids = [r.pk for r in rows if r.pk is not None]
        return ok(s.SpreadSnapshotAcceptedOut(accepted=len(rows), ids=ids), status=201)
