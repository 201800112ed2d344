"""The pro morning brief (webhooks/products.py): the full brief plus a morning_brief push
entitlement for MORNING_BRIEF_PRO_DAYS; each brief published in the period is pushed once
(webhooks/signals.py), only to entitled accounts, free of per-event charge."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.admin.sites import site
from django.contrib.auth.models import User
from django.test import RequestFactory
from django.utils import timezone

from billing.credits import credit_add
from billing.models import Account
from catalog.editorial.briefs import brief_compose
from catalog.editorial.intel import intel_compute
from catalog.models import EditorialPiece
from catalog.products.registry import ProductCall, ProductFailed, product_get
from catalog.services import catalog_seed
from tests.support.marketdata import brief_market_write, signals_market_write
from tests.support.receivers import run_until_settled, subscribe
from tests.support.wallets import register_wallet
from webhooks.models import MorningBriefPush, PushEntitlement, WebhookDelivery, WebhookEvent
from webhooks.services import subscription_create
from webhooks.signals import morning_brief_push_due

pytestmark = pytest.mark.django_db

PRO = "/api/a2a/x402/morning-brief/pro"
BRIEF = EditorialPiece.Kind.MORNING_BRIEF


def balance(account_id: int) -> int:
    return Account.objects.get(pk=account_id).credit_balance_atomic


def brief_deliveries(sub_id: int) -> list[WebhookDelivery]:
    return list(WebhookDelivery.objects.filter(subscription_id=sub_id, event__kind="morning_brief"))


@pytest.fixture
def market() -> None:
    catalog_seed()
    signals_market_write()
    intel_compute()
    brief_market_write()


def test_the_pro_brief_sells_the_brief_and_pushes_each_new_one_once_to_its_buyer(
    api,
    receiver,
    queued,
    market,
):
    first = brief_compose().piece  # published before anyone bought: pushed to nobody
    assert first is not None and MorningBriefPush.objects.get().piece_id == first.id
    assert not WebhookDelivery.objects.exists()

    key, sub = subscribe(api, receiver, events=("morning_brief",), pack=False)
    buyer = Account.objects.get(webhooks__id=sub["id"])
    credit_add(account_id=buyer.id, amount_atomic=1_000_000, kind="adjustment", reason="test")
    # Another account: a signal desk pack (every per-event kind), a morning_brief subscription
    # and credit, but no pro brief: it never receives the brief.
    other = register_wallet().account
    PushEntitlement.objects.create(account=other, expires_at=timezone.now() + timedelta(days=30))
    credit_add(account_id=other.id, amount_atomic=1_000_000, kind="adjustment", reason="test")
    other_sub = subscription_create(
        account=other, url="http://127.0.0.1:9/hook", events=["morning_brief", "copy_signal"]
    )

    resp = api.get(PRO, HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.content
    assert resp["X-Credit-Charged"] == "0.15" and balance(buyer.id) == 1_000_000 - 150_000
    body = resp.json()
    full = api.get("/api/a2a/x402/morning-brief", HTTP_X_API_KEY=key).json()
    push = body.pop("push")
    assert body == full and body["id"] == first.id and body["sections"]  # the full brief
    assert push["events"] == ["morning_brief"] and push["subscribed"] is True
    assert push["days"] == settings.MORNING_BRIEF_PRO_DAYS == 30
    assert push["account"] == buyer.wallet_address
    (ent,) = PushEntitlement.objects.filter(account=buyer)
    assert ent.kinds == ["morning_brief"] and push["expires_at"] == ent.expires_at.isoformat()
    assert ent.expires_at == pytest.approx(timezone.now() + timedelta(days=30), abs=timedelta(seconds=30))

    # The next morning's brief, composed from the data: one event to the buyer, uncharged.
    EditorialPiece.objects.filter(pk=first.pk).update(brief_date=timezone.now().date() - timedelta(days=1))
    run = brief_compose()
    assert run.action == "created" and run.piece is not None and run.piece.id != first.id
    (delivery,) = brief_deliveries(sub["id"])
    assert delivery.charged_atomic == 0 and delivery.state == "pending"
    assert brief_deliveries(other_sub.id) == [] and balance(other.id) == 1_000_000
    assert balance(buyer.id) == 1_000_000 - 150_000 - 80_000  # the pro brief, the full one to compare
    assert run_until_settled(delivery).state == "delivered"
    got = receiver.received[0]
    assert got["verified"] and got["payload"]["type"] == "morning_brief"
    data = got["payload"]["data"]
    assert data["brief_id"] == run.piece.id and data["title"] == run.piece.title
    assert data["brief_date"] == timezone.now().date().isoformat() and data["replay"] is False
    assert data["sections"] and all(line["source"] for s in data["sections"] for line in s["lines"])

    # Re-saves of the same brief (a recomposition, a staff edit in the admin) push nothing more.
    assert brief_compose().action == "updated"
    piece = EditorialPiece.objects.get(pk=run.piece.id)
    piece.body = "Edited by the desk."
    request = RequestFactory().post("/admin/")
    request.user = User.objects.create_superuser("editor", "e@example.com", "pw")
    site._registry[EditorialPiece].save_model(request, piece, form=None, change=True)
    assert len(brief_deliveries(sub["id"])) == 1 and brief_deliveries(other_sub.id) == []
    assert WebhookEvent.objects.filter(kind="morning_brief").count() == 2  # one per brief

    # A brief published later than it was saved (bulk "Publish now"): the beat sweep pushes it.
    later = EditorialPiece.objects.create(
        kind=BRIEF, title="Desk note", summary="s", body="b", published_at=timezone.now() + timedelta(hours=1)
    )
    assert len(brief_deliveries(sub["id"])) == 1  # not published yet
    EditorialPiece.objects.filter(pk=later.pk).update(published_at=timezone.now())
    assert morning_brief_push_due() == 1 and morning_brief_push_due() == 0
    assert len(brief_deliveries(sub["id"])) == 2 and brief_deliveries(other_sub.id) == []

    # A second purchase extends the first; once the period is over nothing is pushed.
    assert api.get(PRO, HTTP_X_API_KEY=key).status_code == 200
    ends = sorted(PushEntitlement.objects.filter(account=buyer).values_list("expires_at", flat=True))
    assert ends[1] - ends[0] == timedelta(days=30)
    PushEntitlement.objects.filter(account=buyer).update(expires_at=timezone.now() - timedelta(seconds=1))
    EditorialPiece.objects.create(
        kind=BRIEF, title="Late", summary="s", body="b", published_at=timezone.now()
    )
    assert len(brief_deliveries(sub["id"])) == 2


def call(payer: str) -> ProductCall:
    return ProductCall(sku=None, params=None, base_url="", payer=payer)


def test_an_x402_payer_without_an_account_or_without_a_brief_is_refused_before_paying(api, market):
    spec = product_get("morning_brief_pro")
    assert spec is not None and spec.effects and spec.ready is not None
    brief_compose()
    with pytest.raises(ProductFailed, match="register this wallet"):
        spec.ready(call("0x" + "ab" * 20))
    reg = register_wallet()
    spec.ready(call(reg.account.wallet_address))  # an account: ready
    EditorialPiece.objects.all().delete()
    with pytest.raises(ProductFailed, match="no morning brief"):
        spec.ready(call(reg.account.wallet_address))
    credit_add(account_id=reg.account.id, amount_atomic=1_000_000, kind="adjustment", reason="test")
    resp = api.get(PRO, HTTP_X_API_KEY=reg.api_key)
    assert resp.status_code == 503 and balance(reg.account.id) == 1_000_000
    assert not PushEntitlement.objects.exists()


def test_the_events_catalog_documents_morning_brief(api):
    catalog_seed()
    kinds = {k["kind"]: k for k in api.get("/api/a2a/webhooks/events").json()["kinds"]}
    schema = kinds["morning_brief"]["payload_schema"]
    assert {"brief_date", "title", "summary", "sections", "as_of", "replay"} <= set(schema["properties"])
    assert kinds["morning_brief"]["price_usdc"] == 0.0
