"""Editorial products: the latest published piece of a kind (morning brief, research,
regulatory digest, grant scout), written by staff in the admin."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from catalog.models import EditorialPiece
from catalog.products.registry import ProductCall, ProductFailed, ProductSpec, TeaserSpec, product, register


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
    output=PromoPieceOut,
    pure=True,
    available=_has_piece(BRIEF),
)
def morning_brief_promo(call: ProductCall) -> dict[str, Any]:
    return {**piece_payload(_latest(BRIEF)), "promo": True}


@product(
    sku="morning_brief",
    path="/morning-brief",
    headline="Today's morning brief: the staff-written market brief in full",
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
            summary="The staff-written market brief, published every morning.",
            highlights=("headline and summary free", "full brief paid", "session-callable"),
        ),
    ),
    output=EditorialPieceOut,
    pure=True,
    available=_has_piece(BRIEF),
)
def morning_brief(call: ProductCall) -> dict[str, Any]:
    return piece_payload(_latest(BRIEF))


# Not built yet: the pro brief adds webhook routing of the brief (the editorial issue).
register(
    ProductSpec(
        sku="morning_brief_pro",
        path="/morning-brief/pro",
        headline="Morning brief pro, with webhook routing",
        price="0.15",
        family="brief",
        rank=41,
        teaser="morning-brief",
    )
)
