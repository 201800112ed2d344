"""What the harness asks of the service's database, run in a Django subprocess with the run's
settings (the harness process itself never configures Django):

    python -m a2a_service.scripts.chaos.db setup <news items>     # migrate, seed, the run's data
    python -m a2a_service.scripts.chaos.db dump <file.json>       # every money row, ledger_audit()
"""

from __future__ import annotations

import json
import sys
from typing import Any


def feeds_off() -> None:
    """The feed passes off: the run loads the payment routes, not the internet."""
    from django_celery_beat.models import PeriodicTask

    from catalog.feeds.schedule import feeds_schedule_sync

    feeds_schedule_sync()
    PeriodicTask.objects.filter(task="feeds.run_source").update(enabled=False)


def prepare(news_items: int) -> dict[str, Any]:
    """A published morning brief (the brief sells only while there is one) and news items to unlock."""
    from django.utils import timezone

    from catalog.models import EditorialPiece, NewsItem

    EditorialPiece.objects.create(
        kind="morning_brief",
        title="Chaos brief",
        summary="Rates, CPI and the dollar.",
        body="The chaos run's brief: rates, CPI, FX.\n\nThe rest of it.",
        published_at=timezone.now(),
    )
    ids = []
    for n in range(news_items):
        category = "crypto" if n % 2 else "equity"
        item = NewsItem.objects.create(
            title=f"Chaos headline {n}",
            teaser=f"Teaser {n}",
            body=f"The full text of chaos item {n}.",
            category=category,
            source="chaos",
            external_id=f"chaos-{n}",
        )
        ids.append(item.id)
    return {"news_ids": ids}


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def dump() -> dict[str, Any]:
    from billing.credits import ledger_audit
    from billing.models import Account, Deposit, IdempotentCall, LedgerEntry, NewsUnlock, Payment
    from sessions_app.models import PrepaidSession
    from webhooks.models import WebhookDelivery

    return {
        "ledger_audit": [list(row) for row in ledger_audit()],
        "accounts": [
            {"id": a.id, "wallet": a.wallet_address, "balance": a.credit_balance_atomic}
            for a in Account.objects.all()
        ],
        "ledger": [
            {
                "id": e.id,
                "account": e.account_id,
                "amount": e.amount_atomic,
                "kind": e.kind,
                "reference": e.reference,
                "sku": e.sku.sku if e.sku is not None else None,
                "deposit": e.deposit_id,
            }
            for e in LedgerEntry.objects.select_related("sku").order_by("id")
        ],
        "payments": [
            {
                "id": p.id,
                "sku": p.sku.sku,
                "payer": p.payer,
                "nonce": p.nonce,
                "amount": p.amount_atomic,
                "state": p.state,
                "tx": p.tx_hash,
                "error": p.error,
                "delivered": p.delivered_at is not None,
                "created_at": _iso(p.created_at),
            }
            for p in Payment.objects.select_related("sku")
        ],
        "deposits": [
            {
                "id": d.id,
                "tx": d.tx_hash,
                "tx_log_index": d.tx_log_index,
                "from": d.from_address,
                "amount": d.amount_atomic,
                "bonus": d.bonus_atomic,
                "whale_bonus": d.whale_bonus_atomic,
                "state": d.state,
                "account": d.account_id,
            }
            for d in Deposit.objects.all()
        ],
        "idempotent": [
            {"account": c.account_id, "key": c.key, "path": c.path, "status": c.status_code, "headers": c.headers}
            for c in IdempotentCall.objects.all()
        ],
        "news_unlocks": [{"account": u.account_id, "item": u.news_item_id} for u in NewsUnlock.objects.all()],
        "sessions": [
            {
                "token": s.token,
                "buyer": s.buyer,
                "pack": s.pack.sku.sku,
                "calls_total": s.calls_total,
                "calls_used": s.calls_used,
                "calls": s.calls.count(),
            }
            for s in PrepaidSession.objects.select_related("pack__sku")
        ],
        "deliveries": [
            {
                "id": d.id,
                "message_id": d.event.message_id,
                "kind": d.event.kind,
                "subscription": d.subscription_id,
                "url": d.subscription.url,
                "account": d.subscription.account_id,
                "state": d.state,
                "charged": d.charged_atomic,
                "attempts": d.attempts,
                "last_status": d.last_status,
                "last_error": d.last_error,
            }
            for d in WebhookDelivery.objects.select_related("event", "subscription")
        ],
    }


def main(argv: list[str]) -> int:
    import django

    django.setup()
    if argv[0] == "setup":
        from django.core.management import call_command

        # One process for all three: each Django start costs seconds on a busy machine.
        call_command("migrate", interactive=False, verbosity=0)
        feeds_off()
        print("migrated", flush=True)  # the harness starts beat now
        call_command("seed_catalog")
        print(json.dumps(prepare(int(argv[1]))))
    elif argv[0] == "dump":
        with open(argv[1], "w") as out:
            json.dump(dump(), out)
    else:
        raise SystemExit(f"unknown command {argv[0]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
