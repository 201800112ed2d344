from __future__ import annotations

from collections.abc import Callable
from typing import Any

from catalog.models import EditorialPiece
from catalog.products.registry import ProductCall, ProductFailed, register


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


@register("morning_brief", pure=True, available=_has_piece(EditorialPiece.Kind.MORNING_BRIEF))
def morning_brief(call: ProductCall) -> dict[str, Any]:
    return piece_payload(_latest(EditorialPiece.Kind.MORNING_BRIEF))


@register("morning_brief_promo", pure=True, available=_has_piece(EditorialPiece.Kind.MORNING_BRIEF))
def morning_brief_promo(call: ProductCall) -> dict[str, Any]:
    return {**piece_payload(_latest(EditorialPiece.Kind.MORNING_BRIEF)), "promo": True}


@register("research_weekly_digest", pure=True, available=_has_piece(EditorialPiece.Kind.RESEARCH))
def research_weekly_digest(call: ProductCall) -> dict[str, Any]:
    return piece_payload(_latest(EditorialPiece.Kind.RESEARCH))


@register("tech_regulatory_digest", pure=True, available=_has_piece(EditorialPiece.Kind.REGULATORY))
def tech_regulatory_digest(call: ProductCall) -> dict[str, Any]:
    return piece_payload(_latest(EditorialPiece.Kind.REGULATORY))


@register("grant_scout_desk", pure=True, available=_has_piece(EditorialPiece.Kind.GRANTS))
def grant_scout_desk(call: ProductCall) -> dict[str, Any]:
    return piece_payload(_latest(EditorialPiece.Kind.GRANTS))
