"""The morning brief composed from the data (catalog/editorial/briefs.py) and sold by the brief products
(catalog/products/briefs.py): it names the day's largest mover and the nearest high-impact
event, every line carries its source, staff edits survive recomposition, the promo is a
shorter cut, and no brief is a 503 with nothing charged."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.contrib.admin.sites import site
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import RequestFactory
from django.utils import timezone

from billing.models import Account
from catalog.editorial.briefs import brief_compose
from catalog.editorial.intel import intel_compute
from catalog.models import EditorialPiece, Sku
from tests.support.marketdata import brief_market_write, signals_market_write
from tests.support.wallets import funded_buyer

pytestmark = pytest.mark.django_db

FULL = "/api/a2a/x402/morning-brief"
PROMO = "/api/a2a/x402/morning-brief/promo"
PRO = "/api/a2a/x402/morning-brief/pro"
SKUS = {FULL: "morning_brief", PROMO: "morning_brief_promo", PRO: "morning_brief_pro"}
BRIEF = EditorialPiece.Kind.MORNING_BRIEF


@pytest.fixture
def buyer(api) -> tuple[str, Account]:
    return funded_buyer(api, 5_000_000)


def buy(api, buyer, path: str, status: int = 200) -> dict[str, Any]:
    key, account = buyer
    before = Account.objects.get(pk=account.pk).credit_balance_atomic
    resp = api.get(path, HTTP_X_API_KEY=key)
    assert resp.status_code == status, resp.content
    after = Account.objects.get(pk=account.pk).credit_balance_atomic
    assert before - after == (Sku.objects.get(sku=SKUS[path]).price_atomic if status == 200 else 0)
    return resp.json()


@pytest.fixture
def market() -> dict:
    signals_market_write()
    intel_compute()  # the regime section reads the intel snapshot
    return brief_market_write()


def lines(body: dict[str, Any], name: str) -> list[dict[str, str]]:
    return next(s["lines"] for s in body["sections"] if s["name"] == name)


def test_the_brief_names_the_largest_mover_and_the_nearest_high_impact_event(api, buyer, market):
    run = brief_compose()
    assert run.action == "created" and run.piece is not None
    piece = run.piece
    assert piece.composed_at is not None and piece.brief_date == timezone.now().date()
    assert "PUMP/USDT" in piece.title and "PUMP/USDT" in piece.summary
    assert "FOMC rate decision in 3.0 h" in piece.summary and "macro gate is closed" in piece.summary

    body = buy(api, buyer, FULL)
    assert body["composed"] is True and body["edited_by_staff"] is False and body["id"] == piece.id
    # Movers: PUMP first, about +61 % (1.02^24), from the 1h closes.
    top = lines(body, "movers")[0]
    assert top["text"].startswith("PUMP/USDT +60.8") and top["source"] == "/api/a2a/signals?symbol=PUMP/USDT"
    # The calendar: the nearest high-impact event first, then the gate, then today's events.
    cal = lines(body, "calendar")
    assert cal[0]["text"].startswith("Nearest high-impact event: FOMC rate decision")
    assert (
        cal[1]["text"].startswith("Macro gate closed") and cal[1]["source"] == "/api/a2a/x402/risk/macro-gate"
    )
    assert [x for x in cal if "Retail sales" in x["text"]]
    assert not [x for x in cal if "ECB" in x["text"]]  # 30 h ahead: not today's
    # News: the strongest sentiment first, linked to the article.
    news = lines(body, "news")
    assert news[0]["text"].startswith("Exchange hack") and news[0]["source"] == market["news"].url
    # The prediction move: 30 -> 45 %, linked to the market.
    pred = lines(body, "predictions")
    assert len(pred) == 1 and "30% to 45% (+15.0 pts)" in pred[0]["text"]
    assert pred[0]["source"] == "https://polymarket.com/event/fed-cut"
    assert lines(body, "regime")[0]["text"].startswith("Market regime: ")
    # Every line has a source; the body shows each.
    every = [x for s in body["sections"] for x in s["lines"]]
    assert every and all(x["source"] for x in every)
    assert body["body"].count("[source](") == len(every)
    # Provenance: as_of is the composition time; the inputs' sources.
    assert body["as_of"] == piece.composed_at.isoformat().replace("+00:00", "Z") or body["as_of"].startswith(
        piece.composed_at.strftime("%Y-%m-%dT%H:%M")
    )
    names = {s["name"] for s in body["sources"]}
    assert {"intel", "news", "manual", "polymarket"} <= names and body["stale"] is False

    promo = buy(api, buyer, PROMO)
    assert promo["promo"] is True and promo["id"] == piece.id and promo["title"] == body["title"]
    assert len(promo["body"]) < len(body["body"])
    assert all(len(s["lines"]) <= 1 for s in promo["sections"])
    assert sum(len(s["lines"]) for s in promo["sections"]) < len(every)
    assert lines(promo, "movers")[0] == top

    pro = buy(api, buyer, PRO)
    assert pro["sections"] == body["sections"] and pro["body"] == body["body"]

    free = api.get("/api/a2a/morning-brief").json()
    assert free["available"] is True and free["title"] == piece.title and free["summary"] == piece.summary


def test_recomposing_updates_the_days_brief_but_never_a_staff_edit(market):
    first = brief_compose().piece
    again = brief_compose()
    assert again.action == "updated" and again.piece is not None and again.piece.id == first.id
    assert EditorialPiece.objects.filter(kind=BRIEF).count() == 1
    # Staff edit it in the admin (save_model sets the author).
    staff = User.objects.create_superuser("editor", "e@example.com", "pw")
    request = RequestFactory().post("/admin/")
    request.user = staff
    piece = EditorialPiece.objects.get(pk=first.id)
    piece.body = "Edited by the desk: watch the FOMC."
    site._registry[EditorialPiece].save_model(request, piece, form=None, change=True)
    kept = brief_compose()
    assert kept.action == "kept"
    piece.refresh_from_db()
    assert piece.body == "Edited by the desk: watch the FOMC." and piece.author == staff
    # A brief staff wrote themselves today replaces the composition too.
    EditorialPiece.objects.all().delete()
    EditorialPiece.objects.create(
        kind=BRIEF, title="Desk brief", summary="s", body="b", published_at=timezone.now()
    )
    assert brief_compose().action == "kept"
    assert EditorialPiece.objects.filter(kind=BRIEF).count() == 1


def test_a_staff_edit_is_sold_as_edited_and_its_promo_is_the_first_paragraph(api, buyer, market):
    piece = brief_compose().piece
    piece.author = User.objects.create_user("desk")
    piece.body = "First paragraph.\n\nSecond paragraph."
    piece.save()
    body = buy(api, buyer, FULL)
    assert body["edited_by_staff"] is True and body["body"] == "First paragraph.\n\nSecond paragraph."
    assert buy(api, buyer, PROMO)["body"] == "First paragraph."


def test_no_brief_or_an_old_one_is_503_uncharged(api, buyer):
    buy(api, buyer, FULL, status=503)
    buy(api, buyer, PROMO, status=503)
    buy(api, buyer, PRO, status=503)
    assert brief_compose().action == "empty"
    assert not EditorialPiece.objects.exists()
    old = timezone.now() - timedelta(days=3)
    piece = EditorialPiece.objects.create(kind=BRIEF, title="Old", summary="s", body="b", published_at=old)
    EditorialPiece.objects.filter(pk=piece.pk).update(updated_at=old)
    buy(api, buyer, FULL, status=503)
    assert api.get("/api/a2a/morning-brief").json()["available"] is False


def test_beat_composes_every_morning_and_the_command_composes_now(market, capsys):
    entry = settings.CELERY_BEAT_SCHEDULE["compose-morning-brief"]
    assert entry["task"] == "briefs.compose"
    assert entry["schedule"].hour == {settings.MORNING_BRIEF_HOUR_UTC} and entry["schedule"].minute == {0}
    call_command("compose_brief")
    assert "compose_brief: created: Morning brief" in capsys.readouterr().out
    assert EditorialPiece.objects.published().filter(kind=BRIEF, composed_at__isnull=False).count() == 1
