"""Bounties: the paid listing, claim and submit (free), and an accepted submission paid once as
a ledger row, by staff or by the automatic check, never more than max_awards times."""

from __future__ import annotations

import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.db import connections
from django.utils import timezone

from billing.bounties.models import Bounty, BountyClaim
from billing.bounties.products import BountiesOut
from billing.bounties.services import (
    BountyFull,
    ClaimNotPending,
    ItemAlreadyRewarded,
    claim_accept,
    claim_reject,
)
from billing.credits import ledger_audit
from billing.models import LedgerEntry
from catalog.models import PredictionMarket, PredictionMatch, SpreadSnapshot
from tests.support.payments import balance, funded

pytestmark = pytest.mark.django_db

LIST_PRICE = 50_000
FILL = {
    "order_id": "o-1",
    "venue": "binance",
    "symbol": "BTC/USDT",
    "side": "buy",
    "quantity": 0.5,
    "price": 60000,
}


def bounty(**kw) -> Bounty:
    values = {
        "title": "Fill report",
        "kind": Bounty.Kind.FILL_REPORT,
        "reward_atomic": 2_000_000,
        "max_awards": 1,
    }
    return Bounty.objects.create(**{**values, **kw})


def rewards(account=None) -> list[int]:
    rows = LedgerEntry.objects.filter(kind=LedgerEntry.Kind.BOUNTY_REWARD)
    if account is not None:
        rows = rows.filter(account=account)
    return list(rows.values_list("amount_atomic", flat=True))


def claim_and_submit(api, key: str, b: Bounty, submission: dict) -> dict:
    assert api.post(f"/api/a2a/bounties/{b.pk}/claim", HTTP_X_API_KEY=key).status_code == 201
    resp = api.post(f"/api/a2a/bounties/{b.pk}/submit", submission, format="json", HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.json()
    return resp.json()


# --- the listing (paid) -----------------------------------------------------------------------
def test_listing_is_sold_for_0_05_and_shows_open_bounties_only(api):
    now = timezone.now()
    snap = bounty(
        title="BTC spread",
        kind=Bounty.Kind.SPREAD_SNAPSHOT,
        reward_atomic=1_500_000,
        max_awards=3,
        auto_check=True,
        criteria={"symbol": "BTC/USDT", "venue": "binance"},
        expires_at=now + timedelta(days=1),
    )
    fill = bounty(reward_atomic=250_000)
    bounty(title="closed", status=Bounty.Status.CLOSED)
    bounty(title="expired", expires_at=now - timedelta(seconds=1))
    bounty(title="later", opens_at=now + timedelta(hours=1))
    bounty(title="all awarded", max_awards=1).__class__.objects.filter(title="all awarded").update(
        awarded_count=1
    )
    key, account = funded(1)

    resp = api.get("/api/a2a/bounties", HTTP_X_API_KEY=key)
    assert resp.status_code == 200, resp.json()
    body = BountiesOut.model_validate(resp.json())
    assert [b.id for b in body.bounties] == [snap.pk, fill.pk] and body.count == 2
    first = body.bounties[0]
    assert (first.reward_atomic, first.reward_usdc, first.slots_left, first.max_awards) == (
        1_500_000,
        1.5,
        3,
        3,
    )
    assert first.kind == "spread_snapshot" and first.auto_check and first.criteria["venue"] == "binance"
    assert first.claim.endswith(f"/api/a2a/bounties/{snap.pk}/claim")
    assert first.submission_shape.startswith("SpreadSnapshotIngest")
    assert balance(account) == 1_000_000 - LIST_PRICE
    assert LedgerEntry.objects.get(account=account, kind="sku_call").amount_atomic == -LIST_PRICE

    only = api.get("/api/a2a/bounties", {"kind": "fill_report"}, HTTP_X_API_KEY=key).json()
    assert [b["id"] for b in only["bounties"]] == [fill.pk]
    assert balance(account) == 1_000_000 - 2 * LIST_PRICE
    x402 = api.get("/api/a2a/x402/bounties")
    assert x402.status_code == 402


def test_no_open_bounty_is_503_uncharged(api):
    key, account = funded(1)
    bounty(status=Bounty.Status.CLOSED)
    resp = api.get("/api/a2a/bounties", HTTP_X_API_KEY=key)
    assert resp.status_code == 503 and resp.json()["charged"] is False
    assert balance(account) == 1_000_000
    bounty()
    assert api.get("/api/a2a/bounties", {"kind": "other"}, HTTP_X_API_KEY=key).status_code == 503
    assert balance(account) == 1_000_000


# --- claim, submit, accept by staff -----------------------------------------------------------
def test_accepted_submission_pays_the_reward_once(api, client):
    b = bounty()
    key, account = funded(0.1)
    first = api.post(f"/api/a2a/bounties/{b.pk}/claim", HTTP_X_API_KEY=key)
    again = api.post(f"/api/a2a/bounties/{b.pk}/claim", HTTP_X_API_KEY=key)
    assert (first.status_code, again.status_code) == (201, 200) and first.json()["id"] == again.json()["id"]
    assert first.json()["status"] == "claimed" and first.json()["reward_usdc"] == 2.0

    sub = api.post(f"/api/a2a/bounties/{b.pk}/submit", FILL, format="json", HTTP_X_API_KEY=key).json()
    assert sub["status"] == "submitted" and sub["submission"]["order_id"] == "o-1" and not sub["reward_paid"]
    twice = api.post(f"/api/a2a/bounties/{b.pk}/submit", FILL, format="json", HTTP_X_API_KEY=key)
    assert twice.status_code == 409 and twice.json()["code"] == "claim_state"
    assert balance(account) == 100_000 and rewards() == []

    # Staff accept it in the admin: the reward is one ledger row.
    staff = get_user_model().objects.create_superuser("staff", "s@example.com", "pw-not-used")
    client.force_login(staff)
    claim_id = sub["id"]
    resp = client.post("/admin/billing/bountyclaim/", {"action": "accept", "_selected_action": [claim_id]})
    assert resp.status_code == 302
    assert balance(account) == 100_000 + 2_000_000 and rewards(account) == [2_000_000]
    claim = BountyClaim.objects.get(pk=claim_id)
    assert claim.status == "accepted" and claim.decided_by == staff and claim.reward_entry is not None
    assert claim.reward_entry.reference == f"bounty {b.pk} claim {claim_id}"
    b.refresh_from_db()
    assert (b.awarded_count, b.status) == (1, "closed")  # its only reward awarded

    # A second accept (admin again, or the service) pays nothing.
    client.post("/admin/billing/bountyclaim/", {"action": "accept", "_selected_action": [claim_id]})
    with pytest.raises(ClaimNotPending):
        claim_accept(claim_id=claim_id)
    assert rewards() == [2_000_000] and balance(account) == 2_100_000 and ledger_audit() == []

    mine = api.get("/api/a2a/bounties/mine", HTTP_X_API_KEY=key).json()
    assert mine["count"] == 1 and mine["claims"][0]["status"] == "accepted"
    assert mine["claims"][0]["ledger_entry_id"] == claim.reward_entry_id
    for page in ("bounty", "bountyclaim", "txgencall", "accountreferral"):
        assert client.get(f"/admin/billing/{page}/").status_code == 200


def test_rejected_claims_are_never_paid_and_errors_are_named(api):
    b = bounty(max_awards=2)
    key, account = funded(0.1)
    assert api.post("/api/a2a/bounties/99999/claim", HTTP_X_API_KEY=key).status_code == 404
    assert api.post(f"/api/a2a/bounties/{b.pk}/claim").status_code == 401
    not_claimed = api.post(f"/api/a2a/bounties/{b.pk}/submit", FILL, format="json", HTTP_X_API_KEY=key)
    assert not_claimed.status_code == 409 and "claim" in not_claimed.json()["detail"]
    api.post(f"/api/a2a/bounties/{b.pk}/claim", HTTP_X_API_KEY=key)
    bad = api.post(f"/api/a2a/bounties/{b.pk}/submit", {"order_id": "x"}, format="json", HTTP_X_API_KEY=key)
    assert bad.status_code == 422 and {tuple(e["loc"]) for e in bad.json()["detail"]} >= {("body", "venue")}
    sub = api.post(f"/api/a2a/bounties/{b.pk}/submit", FILL, format="json", HTTP_X_API_KEY=key).json()
    claim = claim_reject(claim_id=sub["id"], reason="not our order")
    assert claim.status == "rejected"
    with pytest.raises(ClaimNotPending):
        claim_accept(claim_id=sub["id"])
    assert rewards() == [] and balance(account) == 100_000
    closed = bounty(status=Bounty.Status.CLOSED)
    assert (
        api.post(f"/api/a2a/bounties/{closed.pk}/claim", HTTP_X_API_KEY=key).json()["code"] == "bounty_closed"
    )


# --- the automatic checks ---------------------------------------------------------------------
def spread_bounty(**kw) -> Bounty:
    return bounty(
        title="BTC binance/okx spread",
        kind=Bounty.Kind.SPREAD_SNAPSHOT,
        reward_atomic=700_000,
        max_awards=5,
        auto_check=True,
        criteria={"symbol": "BTC/USDT", "venue": "binance", "max_age_seconds": 300, "tolerance_bps": 5},
        **kw,
    )


def reading(spread_bps: float, age_s: int = 10, symbol: str = "BTC/USDT") -> dict:
    at = (timezone.now() - timedelta(seconds=age_s)).isoformat()
    return {
        "readings": [
            {
                "symbol": symbol,
                "venue_a": "binance",
                "venue_b": "okx",
                "spread_bps": spread_bps,
                "captured_at": at,
            }
        ]
    }


def test_spread_snapshot_auto_check_accepts_pays_and_rejects_with_reasons(api):
    SpreadSnapshot.objects.create(
        symbol="BTC/USDT",
        venue_a="binance",
        venue_b="okx",
        spread_bps=Decimal("12.000"),
        source="exchanges",
        captured_at=timezone.now() - timedelta(seconds=30),
    )
    b = spread_bounty()
    good_key, good = funded(0.1)
    out = claim_and_submit(api, good_key, b, reading(14.5))
    assert out["status"] == "accepted" and out["reward_paid"], out
    assert "within 5 bps" in out["decision"] and rewards(good) == [700_000]
    assert balance(good) == 100_000 + 700_000 and out["decided_at"] is not None

    cases = [
        (reading(40.0), "28 bps apart (tolerance 5)"),
        (reading(12.0, age_s=900), "older than 300 s"),
        (reading(12.0, symbol="ETH/USDT"), "the bounty asks for BTC/USDT"),
        (
            {"readings": [{"symbol": "BTC/USDT", "venue_a": "binance", "venue_b": "okx", "spread_bps": 12}]},
            "captured_at is missing",
        ),
    ]
    for submission, reason in cases:
        key, account = funded(0.1)
        out = claim_and_submit(api, key, b, submission)
        assert out["status"] == "rejected" and reason in out["decision"], out
        assert rewards(account) == [] and balance(account) == 100_000

    # No reading of ours for that pair: the check cannot decide, staff will.
    key, account = funded(0.1)
    other = {"readings": [{**reading(3.0)["readings"][0], "venue_b": "kraken"}]}
    out = claim_and_submit(api, key, b, other)
    assert out["status"] == "submitted" and "staff decide" in out["decision"] and rewards(account) == []
    b.refresh_from_db()
    assert b.awarded_count == 1 and ledger_audit() == []


def test_resolution_mismatch_auto_check(api):
    def market(venue: str, yes: str, status: str = PredictionMarket.Status.RESOLVED) -> PredictionMarket:
        return PredictionMarket.objects.create(
            venue=venue,
            external_id=f"{venue}-{PredictionMarket.objects.count()}",
            question="Fed cut in March?",
            yes_price=Decimal(yes),
            status=status,
        )

    split = PredictionMatch.objects.create(market_a=market("kalshi", "1"), market_b=market("polymarket", "0"))
    same = PredictionMatch.objects.create(
        market_a=market("kalshi", "1"), market_b=market("polymarket", "0.999")
    )
    open_ = PredictionMatch.objects.create(
        market_a=market("kalshi", "1"), market_b=market("polymarket", "0.4", PredictionMarket.Status.OPEN)
    )
    b = bounty(
        title="mismatches",
        kind=Bounty.Kind.RESOLUTION_MISMATCH,
        reward_atomic=3_000_000,
        max_awards=3,
        auto_check=True,
    )

    key, account = funded(0.1)
    out = claim_and_submit(api, key, b, {"match_id": split.pk, "evidence": "kalshi yes, polymarket no"})
    assert out["status"] == "accepted" and "kalshi resolved yes, polymarket resolved no" in out["decision"]
    assert rewards(account) == [3_000_000]
    for match_id, reason in [
        (split.pk, "already rewarded"),
        (same.pk, "both venues resolved yes"),
        (open_.pk, "not resolved yet"),
        (999_999, "no cross-venue match"),
    ]:
        key, account = funded(0.1)
        out = claim_and_submit(api, key, b, {"match_id": match_id, "evidence": "see venues"})
        assert out["status"] == "rejected" and reason in out["decision"], out
        assert rewards(account) == []
    assert rewards() == [3_000_000] and ledger_audit() == []


# --- concurrency (PostgreSQL) -----------------------------------------------------------------
def _race(n: int, work) -> list[str]:
    results: list[str] = []
    barrier = threading.Barrier(n)

    def run(i: int) -> None:
        barrier.wait()
        try:
            work(i)
            results.append("paid")
        except (BountyFull, ClaimNotPending) as exc:
            results.append(type(exc).__name__)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_max_awards_and_double_accepts_hold_under_concurrency():
    from billing.bounties.services import bounty_claim, bounty_submit
    from catalog.services import catalog_seed

    catalog_seed()
    b = bounty(max_awards=3, reward_atomic=1_000_000)
    accounts = [funded(0)[1] for _ in range(8)]
    claims = []
    for account in accounts:
        bounty_claim(bounty_id=b.pk, account=account)
        claims.append(bounty_submit(bounty_id=b.pk, account=account, data=FILL).pk)

    # Eight staff accept eight submissions at once: three rewards exist, three are paid.
    results = _race(8, lambda i: claim_accept(claim_id=claims[i]))
    assert sorted(results) == ["BountyFull"] * 5 + ["paid"] * 3
    b.refresh_from_db()
    assert (b.awarded_count, b.status) == (3, "closed")
    assert rewards() == [1_000_000] * 3 and BountyClaim.objects.filter(status="accepted").count() == 3
    assert sum(balance(a) for a in accounts) == 3_000_000

    # Six accepts of one claim at once: paid once.
    b2 = bounty(max_awards=5, reward_atomic=400_000)
    bounty_claim(bounty_id=b2.pk, account=accounts[0])
    one = bounty_submit(bounty_id=b2.pk, account=accounts[0], data=FILL).pk
    results = _race(6, lambda i: claim_accept(claim_id=one))
    assert sorted(results) == ["ClaimNotPending"] * 5 + ["paid"]
    assert (
        LedgerEntry.objects.filter(kind="bounty_reward", reference=f"bounty {b2.pk} claim {one}").count() == 1
    )
    assert ledger_audit() == []


def _resolution_split() -> PredictionMatch:
    def market(venue: str, yes: str) -> PredictionMarket:
        return PredictionMarket.objects.create(
            venue=venue,
            external_id=f"{venue}-{PredictionMarket.objects.count()}",
            question="Fed cut in March?",
            yes_price=Decimal(yes),
            status=PredictionMarket.Status.RESOLVED,
        )

    return PredictionMatch.objects.create(market_a=market("kalshi", "1"), market_b=market("polymarket", "0"))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_one_mismatch_submitted_by_eight_accounts_at_once_is_rewarded_once():
    """Issue 22, finding 3: the 'already rewarded' check read before the accept, so claimants
    of the same match submitting together were each paid. Eight accounts submit the same match
    to an auto-checked bounty with eight rewards, at the same moment: one is paid."""
    from billing.bounties.services import bounty_claim, bounty_submit
    from catalog.services import catalog_seed

    catalog_seed()
    split = _resolution_split()
    b = bounty(
        title="mismatches",
        kind=Bounty.Kind.RESOLUTION_MISMATCH,
        reward_atomic=3_000_000,
        max_awards=8,
        auto_check=True,
    )
    accounts = [funded(0)[1] for _ in range(8)]
    for account in accounts:
        bounty_claim(bounty_id=b.pk, account=account)
    statuses: list[str] = []

    def submit(i: int) -> None:
        claim = bounty_submit(
            bounty_id=b.pk, account=accounts[i], data={"match_id": split.pk, "evidence": "kalshi yes, poly no"}
        )
        statuses.append(claim.status)

    assert _race(8, submit) == ["paid"] * 8  # every submission answered, none failed
    assert sorted(statuses) == ["accepted"] + ["rejected"] * 7
    assert rewards() == [3_000_000] and sum(balance(a) for a in accounts) == 3_000_000
    rejected = BountyClaim.objects.filter(bounty=b, status="rejected")
    assert all(f"match {split.pk} was already rewarded" in c.decision for c in rejected)
    b.refresh_from_db()
    assert (b.awarded_count, b.status) == (1, "open")
    # Staff accepting one of the rejected claims' items again is refused too, whatever they see.
    BountyClaim.objects.filter(pk=rejected[0].pk).update(status="submitted")
    with pytest.raises(ItemAlreadyRewarded):
        claim_accept(claim_id=rejected[0].pk)
    assert rewards() == [3_000_000] and ledger_audit() == []


def test_staff_post_a_bounty_in_the_admin_and_bad_criteria_are_refused(client):
    staff = get_user_model().objects.create_superuser("poster", "p@example.com", "pw-not-used")
    client.force_login(staff)
    now = timezone.now()
    form = {
        "title": "ETH spread on okx",
        "description": "a fresh reading",
        "kind": "spread_snapshot",
        "reward_atomic": "1250000",
        "auto_check": "on",
        "max_awards": "2",
        "opens_at_0": now.strftime("%Y-%m-%d"),
        "opens_at_1": now.strftime("%H:%M:%S"),
        "expires_at_0": (now + timedelta(days=2)).strftime("%Y-%m-%d"),
        "expires_at_1": "12:00:00",
        "status": "open",
        "criteria": '{"symbol": "ETH/USDT", "venue": "okx", "tolerance_bps": 8}',
    }
    resp = client.post("/admin/billing/bounty/add/", form)
    assert resp.status_code == 302, resp.content[:2000]
    b = Bounty.objects.get(title="ETH spread on okx")
    assert (b.reward_atomic, b.max_awards, b.auto_check, b.created_by) == (1_250_000, 2, True, staff)
    assert b.criteria == {"symbol": "ETH/USDT", "venue": "okx", "tolerance_bps": 8}

    bad = client.post(
        "/admin/billing/bounty/add/", {**form, "title": "bad", "criteria": '{"tolerance_bps": "ten"}'}
    )
    assert bad.status_code == 200 and "tolerance_bps is a positive number" in bad.content.decode()
    assert not Bounty.objects.filter(title="bad").exists()
