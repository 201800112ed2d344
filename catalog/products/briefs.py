"""Editorial products: the latest published piece of a kind (morning brief, research,
regulatory digest, grant scout). The morning brief is composed from the data each morning
(catalog/editorial/briefs.py) and staff may edit or replace it in the admin; the others are written by
staff."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, Literal

from django.utils import timezone
from pydantic import BaseModel, Field

from a2a_service.core.formats import iso
from catalog.analytics.provenance import Provenanced
from catalog.editorial.briefs import render
from catalog.models import EditorialPiece
from catalog.products.registry import ProductCall, ProductFailed, TeaserSpec, product


class EditorialPieceOut(BaseModel):
    id: int
    kind: str
    title: str
    summary: str
    body: str = Field(description="the piece in full")
    published_at: str | None = Field(description="ISO 8601 with offset")


class PromoPieceOut(EditorialPieceOut):
    promo: bool = Field(description="true: sold at the promotional price")


def _latest(kind: str) -> EditorialPiece:
    piece = EditorialPiece.objects.published().filter(kind=kind).first()
    if piece is None:
        raise ProductFailed(f"no {kind.replace('_', ' ')} has been published yet; nothing is charged")
    return piece


def _has_piece(kind: str) -> Callable[[], tuple[bool, str]]:
    """The cheap availability check of a brief: one EXISTS query, the same filter _latest uses."""

    def check() -> tuple[bool, str]:
        if EditorialPiece.objects.published().filter(kind=kind).exists():
            return True, ""
        return False, f"no {kind.replace('_', ' ')} has been published yet"

    return check


def piece_payload(piece: EditorialPiece) -> dict[str, Any]:
    return {
        "id": piece.id,
        "kind": piece.kind,
        "title": piece.title,
        "summary": piece.summary,
        "body": piece.body,
        "published_at": piece.published_at.isoformat() if piece.published_at else None,
    }


BRIEF = EditorialPiece.Kind.MORNING_BRIEF

# --- the morning brief (composed from the data by catalog/editorial/briefs.py, or written by staff) -------

# A morning brief older than a day and a half is yesterday's: not sold as this morning's.
BRIEF_MAX_AGE = timedelta(hours=36)
# The promo cut: the summary and the first lines of each section.
PROMO_LINES = 1


class BriefLineOut(BaseModel):
    text: str
    source: str = Field(
        description="the line's source: the item's URL, else the API path that sells or lists it"
    )


class BriefSectionOut(BaseModel):
    name: Literal["regime", "movers", "news", "calendar", "predictions"]
    title: str
    lines: list[BriefLineOut]


class MorningBriefFullOut(Provenanced):
    id: int
    kind: str
    title: str
    summary: str
    body: str = Field(description="the brief in full (markdown), each line with its source")
    published_at: str | None = Field(description="ISO 8601 with offset")
    composed: bool = Field(description="true: composed from the data; false: written by staff")
    edited_by_staff: bool = Field(description="staff edited the composed text in the admin")
    brief_date: str | None = Field(description="the UTC day a composed brief is for")
    sections: list[BriefSectionOut] = Field(
        description="the composed lines (empty for a staff-written brief)"
    )


class MorningBriefPromoOut(MorningBriefFullOut):
    promo: bool = Field(description="true: the shorter cut sold at the promotional price")


def brief_latest() -> EditorialPiece:
    """The newest published brief young enough to sell as this morning's; else ProductFailed."""
    piece = _latest(BRIEF)
    stamp = piece.composed_at or piece.published_at or piece.updated_at
    if timezone.now() - stamp > BRIEF_MAX_AGE:
        raise ProductFailed(
            f"the newest morning brief is older than {BRIEF_MAX_AGE.total_seconds() / 3600:g} h; nothing is charged"
        )
    return piece


def brief_available() -> tuple[bool, str]:
    ok, reason = _has_piece(BRIEF)()
    if not ok:
        return ok, reason
    try:
        brief_latest()
    except ProductFailed as exc:
        return False, str(exc)
    return True, ""


def brief_payload(piece: EditorialPiece, *, lines: int | None = None) -> dict[str, Any]:
    """The piece with its provenance: a composed brief's as_of is its composition time and its
    sources its inputs'; a staff-written one is a single manual source."""
    stored = piece.sections if isinstance(piece.sections, dict) else {}
    sections: list[dict[str, Any]] = list(stored.get("sections") or [])
    prov = stored.get("provenance") or {}
    composed = piece.composed_at is not None
    edited = composed and piece.author_id is not None
    if composed:
        provenance = {
            "as_of": iso(piece.composed_at),
            "sources": prov.get("sources") or [],
            "replay": bool(prov.get("replay")),
            "method": str(prov.get("method") or "composed from the feeds"),
            "stale": False,
        }
    else:
        provenance = {
            "as_of": iso(piece.updated_at),
            "sources": [
                {"name": "manual", "venue": None, "replay": False, "items": 1, "as_of": iso(piece.updated_at)}
            ],
            "replay": False,
            "method": "written by staff",
            "stale": False,
        }
    body = piece.body
    if lines is not None:
        sections = [{**sec, "lines": sec["lines"][:lines]} for sec in sections]
        # Staff-edited or written text is cut at its first paragraph; composed text re-rendered.
        body = render(sections) if composed and not edited else piece.body.split("\n\n")[0]
    return {
        **piece_payload(piece),
        "body": body,
        "composed": composed,
        "edited_by_staff": edited,
        "brief_date": piece.brief_date.isoformat() if piece.brief_date else None,
        "sections": sections,
        **provenance,
    }


@product(
    sku="morning_brief_promo",
    path="/morning-brief/promo",
    headline="Today's morning brief at the promotional price",
    price="0.06",
    family="brief",
    tier="A",
    hero=True,
    rank=2,
    teaser="morning-brief",
    output=MorningBriefPromoOut,
    pure=True,
    available=brief_available,
)
def morning_brief_promo(call: ProductCall) -> dict[str, Any]:
    return {**brief_payload(brief_latest(), lines=PROMO_LINES), "promo": True}


@product(
    sku="morning_brief",
    path="/morning-brief",
    headline="Today's morning brief: the market brief composed from the data, in full",
    price="0.08",
    family="brief",
    tier="A",
    hero=True,
    rank=3,
    client_bundle=True,
    session_callable=True,
    teaser="morning-brief",
    teasers=(
        TeaserSpec(
            name="morning-brief",
            title="Morning brief",
            summary="The market brief composed every morning from the data, reviewed by staff.",
            highlights=("headline and summary free", "full brief paid", "session-callable"),
        ),
    ),
    output=MorningBriefFullOut,
    pure=True,
    available=brief_available,
)
def morning_brief(call: ProductCall) -> dict[str, Any]:
    return brief_payload(brief_latest())


# The pro brief (morning_brief_pro, /morning-brief/pro): the full brief and, for the buyer's
# webhooks, the morning_brief push for a period. The push entitlement is an effect, so its spec
# lives with the effect in webhooks/products.py (catalog never imports webhooks).
