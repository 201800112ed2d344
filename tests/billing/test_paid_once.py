"""What an account pays for once is paid once, whatever runs at the same moment (issue 22,
finding 2): concurrent first unlocks of one news item with one key debit its price once and
record one unlock, on the HTTP route and over MCP with a managed allowance; push packs bought
at the same moment each add their own period. On PostgreSQL, with threads on their own
connections released together."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connections
from rest_framework.test import APIClient

from billing.credits import ledger_audit
from billing.models import LedgerEntry, NewsUnlock
from billing.once import ONCE_PER_ACCOUNT
from catalog.models import NewsItem
from tests.support.payments import balance, funded

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
N = 8


def at_once(n: int, work: Callable[[int], Any]) -> list[Any]:
    """work(0..n-1) in n threads released together; each thread closes its own connection."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(i)
        except Exception as exc:  # the assertion below names it
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def debits(account) -> list[int]:
    return list(
        LedgerEntry.objects.filter(account=account, kind=LedgerEntry.Kind.SKU_CALL).values_list(
            "amount_atomic", flat=True
        )
    )


@pytest.fixture
def seeded():
    from catalog.services import catalog_seed

    catalog_seed()  # on SQLite, a transactional test after another starts from empty tables


def test_eight_concurrent_first_unlocks_with_one_key_debit_once(seeded):
    key, account = funded(1.0)
    item = NewsItem.objects.create(title="t", teaser="t", body="the full story", category="crypto")
    price = item.price_atomic
    assert price > 0

    def unlock(_: int) -> tuple[int, str, str]:
        resp = APIClient().post(f"/api/a2a/news/{item.id}/unlock", HTTP_X_API_KEY=key)
        return resp.status_code, resp.json().get("body", resp.json()), resp.get("X-Credit-Charged", "")

    results = at_once(N, unlock)
    assert all(r[:2] == (200, "the full story") for r in results), results
    # One caller paid the price; the others found the item owned (free again).
    charged = sorted(r[2] for r in results)
    assert charged == ["0"] * (N - 1) + [f"{price / 10**6:g}"]
    assert debits(account) == [-price]
    assert NewsUnlock.objects.filter(account=account, news_item=item).count() == 1
    assert balance(account) == 1_000_000 - price
    # Later: still free.
    again = APIClient().post(f"/api/a2a/news/{item.id}/unlock", HTTP_X_API_KEY=key)
    assert again.status_code == 200 and again["X-Credit-Charged"] == "0"
    assert debits(account) == [-price] and ledger_audit() == []


def test_an_unlock_that_is_refused_leaves_no_claim_and_the_next_one_pays(seeded):
    """The claim commits with the debit or not at all: a call refused for want of credit does
    not leave the item owned (free) behind it."""
    key, account = funded(0.01)
    item = NewsItem.objects.create(title="t", teaser="t", body="b", category="crypto")
    resp = APIClient().post(f"/api/a2a/news/{item.id}/unlock", HTTP_X_API_KEY=key)
    assert resp.status_code == 402 and resp.json()["code"] == "insufficient_credit"
    assert not NewsUnlock.objects.exists() and debits(account) == []
    from billing.credits import credit_add

    credit_add(account_id=account.id, amount_atomic=990_000, kind="adjustment", reason="test")
    paid = APIClient().post(f"/api/a2a/news/{item.id}/unlock", HTTP_X_API_KEY=key)
    assert paid.status_code == 200 and debits(account) == [-item.price_atomic]
    assert NewsUnlock.objects.count() == 1 and ledger_audit() == []


def test_concurrent_unlocks_over_mcp_use_one_call_of_a_managed_allowance(seeded):
    """The managed MCP rail claims the item before it uses an allowance call: read again, the
    item uses nothing; eight at once use one call."""
    from agents.mcp.managed import ManagedCallRail
    from agents.mcp.services import mcp_allowance_grant
    from agents.models import McpAllowance, McpAllowanceCall
    from billing.paid_call import paid_call

    _, account = funded(1.0)
    mcp_allowance_grant(account=account, calls=5, days=1)
    item = NewsItem.objects.create(title="t", teaser="t", body="b", category="crypto")

    def unlock(_: int) -> str:
        rail = ManagedCallRail(account=account, reference="/mcp news_unlock")
        paid = paid_call(
            product="news_unlock", params={"news_id": item.id}, base_url="http://testserver", payment=rail
        )
        assert paid.content["body"] == "b"
        return paid.receipt.rail

    rails = at_once(N, unlock)
    assert sorted(rails) == ["credits"] * (N - 1) + ["mcp_managed_pack"], rails  # one allowance call
    assert McpAllowance.objects.get().calls_used == 1 and McpAllowanceCall.objects.count() == 1
    assert debits(account) == [] and balance(account) == 1_000_000
    assert NewsUnlock.objects.count() == 1 and ledger_audit() == []


def test_push_packs_bought_at_the_same_moment_each_add_their_period(seeded, settings):
    """Two packs that read the same current end would both extend from it: the buyer would pay
    twice for one period. The account's row serialises them."""
    from webhooks.models import PushEntitlement
    from webhooks.products import _entitlement_extend

    _, account = funded(0.01)
    days = settings.SIGNAL_DESK_PACK_DAYS
    at_once(N, lambda _: _entitlement_extend(account=account, kinds=[], days=days))
    ends = sorted(PushEntitlement.objects.filter(account=account).values_list("expires_at", flat=True))
    assert len(ends) == N
    assert all(b - a == timedelta(days=days) for a, b in zip(ends, ends[1:], strict=False))


def test_every_once_per_account_table_is_unique_per_account_and_item():
    """The table of products paid once names only tables whose (account, item) is a database
    constraint: the claim relies on it."""
    for kind in ONCE_PER_ACCOUNT.values():
        unique = {
            tuple(c.fields)
            for c in kind.model._meta.constraints
            if getattr(c, "fields", None) and getattr(c, "condition", None) is None
        }
        item_field = kind.column.removesuffix("_id")
        assert ("account", item_field) in unique, kind
