"""What an account pays for once and then has: today a news item's full text (NewsUnlock).

"Paid once" is a row with a unique (account, item) constraint, claimed by a conditional insert
(INSERT … ON CONFLICT DO NOTHING) inside the transaction that debits the price, before the
debit. Of two concurrent calls for the same item, the second insert waits on the first's
uncommitted row: if the first commits, the second finds the item owned and charges nothing; if
the first rolls back (its product failed, its credit ran short), the second claims the row and
pays. A read before the write (`exists()`, then debit) would let both pay.

Products an account pays for again each time (packs that extend a period, allowances, sessions)
are not here: each purchase is its own row, and the packs that extend one another serialise on
the account's row (webhooks/products.py)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection, models
from django.utils import timezone

from billing.models import NewsUnlock
from billing.rails.base import Offer


@dataclass(frozen=True)
class OncePerAccount:
    model: type[models.Model]  # its (account, <column>) pair is unique
    column: str  # the item's column in `model`
    param: str  # the product's parameter that names the item


# Product name -> what makes one of its items owned by an account.
ONCE_PER_ACCOUNT: dict[str, OncePerAccount] = {
    "news_unlock": OncePerAccount(model=NewsUnlock, column="news_item_id", param="news_id"),
}


@dataclass(frozen=True)
class OwnedItem:
    kind: OncePerAccount
    item_id: int


def owned_item_of(offer: Offer) -> OwnedItem | None:
    """The item this call buys once per account, if it is such a call."""
    kind = ONCE_PER_ACCOUNT.get(offer.name)
    if kind is None:
        return None
    item_id = getattr(offer.call.params, kind.param, None)
    return OwnedItem(kind, item_id) if isinstance(item_id, int) else None


def owned_item_claim(*, account_id: int, item: OwnedItem) -> bool:
    """Claim the item for the account in the caller's transaction: True when this call claimed
    it (it pays), False when the account owns it already (it is free again). Must run before
    the debit, in the same transaction, so a rolled-back call leaves no claim behind."""
    table = item.kind.model._meta.db_table
    qn = connection.ops.quote_name
    with connection.cursor() as cursor:
        # ON CONFLICT DO NOTHING RETURNING: PostgreSQL and SQLite (3.35+) alike.
        cursor.execute(
            f"INSERT INTO {qn(table)} ({qn('account_id')}, {qn(item.kind.column)}, {qn('created_at')}) "
            f"VALUES (%s, %s, %s) ON CONFLICT DO NOTHING RETURNING {qn('id')}",
            [account_id, item.item_id, connection.ops.adapt_datetimefield_value(timezone.now())],
        )
        return cursor.fetchone() is not None
