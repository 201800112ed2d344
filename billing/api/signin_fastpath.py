"""Sign-in credit calls served in front of Django, as the credit fast path serves X-API-Key ones
(billing/api/credit_fastpath.py, whose routes, base URLs, connection handling and 503 this
reuses). Issue 26 asks a sign-in credit call to cost at most 1.5x a keyed one; through Django it
cost 5x (the payment front's ORM queries: the nonce, the account, each ownership check).

1. Only a GET with SIGN-IN-WITH-X and no X-API-Key, no query string, no payment proof, no
   Idempotency-Key and no Origin, on a credit fast path's route, on PostgreSQL with Redis,
   while every ownership check (billing/front/signin.py) has its SQL form.
2. The signed message is checked as Django checks it (signin_verify: our origin, this
   resource, our chain, expiry, a nonce we issued); a refusal is Django's to answer.
3. The wallet's verified, active credit account is found in this process's map (filled from
   the database on a miss; a wallet without one is Django's: it may own something, or get the 402).
4. The rate limit, the product run first and rendered before any charge: as the keyed fast path.
5. One statement decides and writes everything: the debit (price, SKU, billing switch, the
   account's state and verification re-read), nothing owned that would make the call free
   (the ownership checks' SQL), the ledger row, and the nonce's unique row. If any condition
   says no, nothing is written and Django answers the call from the start (a free owned call,
   the 402, a refused nonce); a nonce already used fails the statement as a whole (unique
   violation: no debit, no row) and Django refuses it. So a signature is used once, by
   whichever path sees it first, and the nonce is spent only with the debit it paid for."""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any, ClassVar
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

import psycopg
from django.conf import settings
from django.db import connections

from a2a_service.core.observe import money_event
from a2a_service.core.redisconn import redis_client
from a2a_service.core.throttling import ClientRateThrottle
from billing.api import credit_fastpath as fast
from billing.front.signin import OWNED_SQL, OWNERSHIP, signin_verify
from billing.paid_call import Content, Offer, Paid
from billing.x402.proof import PaymentRejected
from catalog.products.registry import product_get

logger = logging.getLogger(__name__)

WALLET_CACHE_MAX = 20_000
HEADER_MAX_CHARS = 8_192  # a signed message of our challenge is about 1 KB of base64
ACCOUNT_SQL = """
SELECT id FROM billing_account
 WHERE wallet_address = %s AND is_active AND ownership_verified_at IS NOT NULL
"""
# The credit fast path's debit (DEBIT_SQL), by wallet instead of key, with nothing owned, and the
# nonce's row written only with the ledger row (a conflict fails the statement: nothing changes).
SIGNIN_DEBIT_SQL = """
WITH debit AS (
    UPDATE billing_account AS a
       SET credit_balance_atomic = a.credit_balance_atomic - s.price_atomic
      FROM catalog_sku AS s, billing_billingsettings AS b
     WHERE a.id = %(account)s
       AND a.wallet_address = %(wallet)s
       AND a.is_active
       AND a.ownership_verified_at IS NOT NULL
       AND s.sku = %(sku)s
       AND s.status = 'live_x402'
       AND s.price_atomic > 0
       AND b.id = 1
       AND b.credit_billing_enabled
       AND a.credit_balance_atomic >= s.price_atomic
       AND NOT ({owned})
    RETURNING a.credit_balance_atomic AS balance, s.price_atomic AS price, s.id AS sku_id
), nonce AS (
    INSERT INTO billing_signinnonce (wallet_address, nonce, created_at)
    SELECT %(wallet)s, %(nonce)s, now() FROM debit
    RETURNING id
), commit_mode AS (
    SELECT set_config(
        'synchronous_commit',
        CASE WHEN %(sync_commit)s THEN current_setting('synchronous_commit') ELSE 'off' END,
        true
    )
)
INSERT INTO billing_ledgerentry
    (account_id, amount_atomic, balance_after_atomic, kind, reference, sku_id, reason, created_at)
SELECT %(account)s, -debit.price, debit.balance, 'sku_call', %(reference)s, debit.sku_id, '', now()
  FROM debit, nonce, commit_mode
RETURNING -amount_atomic, balance_after_atomic, id
"""


class WalletCache:
    """This process's map from a wallet (lower case) to its verified, active credit account.
    The debit re-checks both, and a refused debit drops the entry; wallets without such an
    account are not remembered (Django answers them)."""

    def __init__(self) -> None:
        self._accounts: dict[str, int] = {}
        self._lock = threading.Lock()

    def find(self, wallet: str, *, load: Callable[[str], int | None]) -> int | None:
        account = self._accounts.get(wallet)
        if account is None:
            account = load(wallet)
            if account is None:
                return None
            with self._lock:
                if len(self._accounts) >= WALLET_CACHE_MAX:
                    self._accounts.clear()
                self._accounts[wallet] = account
        return account

    def drop(self, wallet: str) -> None:
        with self._lock:
            self._accounts.pop(wallet, None)

    def clear(self) -> None:
        with self._lock:
            self._accounts.clear()


WALLETS = WalletCache()


def signin_debit_sql() -> str | None:
    """The statement with every ownership check in it, or None while one has no SQL form."""
    if set(OWNERSHIP) - set(OWNED_SQL):
        return None
    owned = " OR ".join(f"({sql})" for sql in OWNED_SQL.values()) or "FALSE"
    return SIGNIN_DEBIT_SQL.format(owned=owned)


class SignInFastPath:
    """WSGI middleware between the credit fast path and Django."""

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app
        self.credit = fast.CreditFastPath(app)  # for its routes and its base URLs

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if (
            environ.get("REQUEST_METHOD") != "GET"
            or "HTTP_SIGN_IN_WITH_X" not in environ
            or "HTTP_X_API_KEY" in environ  # both: Django chooses
            or environ.get("QUERY_STRING")
            or any(name in environ for name in fast.REFUSE_IF_PRESENT)
        ):
            return self.app(environ, start_response)
        route = self.credit.routes().get(environ.get("PATH_INFO", ""))
        if route is None:
            return self.app(environ, start_response)
        return fast.answer_in_front(
            self.app, environ, start_response, route=route, serve=self._serve, layer="signin_fast", name="sign-in"
        )

    def _serve(self, environ: dict[str, Any], route: fast.FastRoute) -> fast.Answer | None:
        """The answer, or None for Django to answer. Raises ChargeUnconfirmed, or anything
        else only before anything is charged."""
        conn = connections["default"]
        if conn.vendor != "postgresql" or redis_client() is None:
            return None
        statement = signin_debit_sql()
        if statement is None:
            return None
        base = self.credit._base_url(environ)
        if base is None:
            return None
        header = environ["HTTP_SIGN_IN_WITH_X"]
        if len(header) > HEADER_MAX_CHARS:
            return None
        path = environ["PATH_INFO"]
        try:
            wallet, nonce = signin_verify(header=header, resource_url=base + path)
        except PaymentRejected:
            return None  # Django refuses it, with the 402 to pay instead
        account = WALLETS.find(wallet, load=lambda w: _account_load(conn, w))
        if account is None:
            return None
        refused = fast.over_budget(ClientRateThrottle(), environ, route)
        if refused is not None:
            return refused
        if product_get(route.sku) is None:
            return None
        rail = FastSignInRail(
            conn=conn,
            signed=Signed(wallet=wallet, nonce=nonce, account_id=account),
            statement=statement,
            path=path,
            render=self.credit._renderer.render,
        )
        return fast.sell_in_front(route=route, base=base, rail=rail, forget=lambda: WALLETS.drop(wallet))


class Signed:
    def __init__(self, *, wallet: str, nonce: str, account_id: int) -> None:
        self.wallet = wallet
        self.nonce = nonce
        self.account_id = account_id


class FastSignInRail:
    """As the credit fast path's rail: the product runs first, then the one statement."""

    final_before_effects: ClassVar[bool] = False
    runs_first: ClassVar[bool] = True
    rail_name: ClassVar[str] = ""  # counted by the fast path itself (see FastCreditRail)

    def __init__(
        self, *, conn: Any, signed: Signed, statement: str, path: str, render: Callable[[Content], bytes]
    ) -> None:
        self.conn = conn
        self.signed = signed
        self.statement = statement
        self.path = path
        self.render = render
        self.body = b""

    def admit(self, offer: Offer) -> Paid | None:
        offer.call.payer = self.signed.wallet
        return None

    def scope(self, body: Callable[[], Paid]) -> Paid:
        return body()

    def hold(self, offer: Offer, content: Content | None) -> fast._Debited:
        if content is None:
            raise RuntimeError("the sign-in fast path runs the product before it charges")
        self.body = self.render(content)
        debited = _signin_debit(self.conn, self.statement, signed=self.signed, sku=offer.name, path=self.path)
        if debited is None:
            raise fast.DebitRefused(offer.name)
        return fast._Debited(*debited)


def _account_load(conn: Any, wallet: str) -> int | None:
    raw = fast._raw(conn)
    if raw is None:
        return None
    try:
        with psycopg.Cursor(raw) as cur:
            row = cur.execute(ACCOUNT_SQL, (wallet,), prepare=True).fetchone()
    except psycopg.Error:
        fast._close(conn)
        raise
    return None if row is None else int(row[0])


def _signin_debit(
    conn: Any, statement: str, *, signed: Signed, sku: str, path: str
) -> tuple[int, int] | None:
    """(charged, balance after) if the debit committed (told as a money event); None if it was
    refused, the nonce was used already, or it is certain that it did not commit."""
    raw = fast._raw(conn)
    if raw is None:
        return None
    params = {
        "account": signed.account_id,
        "wallet": signed.wallet,
        "nonce": signed.nonce,
        "sku": sku,
        "reference": f"{path} req:{os.urandom(16).hex()}",
        "sync_commit": settings.CREDIT_DEBIT_SYNC_COMMIT,
    }
    try:
        row = signin_debit_execute(raw, statement, params)
    except psycopg.errors.UniqueViolation:
        return None  # the nonce was used: the statement changed nothing, and Django refuses it
    except psycopg.OperationalError:
        # As the credit fast path: the ledger says whether the statement committed.
        logger.warning("connection lost during a sign-in debit; reading the ledger", exc_info=True)
        fast._close(conn)
        try:
            raw = fast._raw(conn)
            if raw is None:
                raise fast.ChargeUnconfirmed(params["reference"])
            with psycopg.Cursor(raw) as cur:
                row = cur.execute(fast.LEDGER_ROW_SQL, params).fetchone()
        except Exception as exc:
            raise fast.ChargeUnconfirmed(params["reference"]) from exc
    if row is None:
        return None
    charged, balance, entry = int(row[0]), int(row[1]), int(row[2])
    money_event(
        "debit",
        amount_atomic=charged,
        after_commit=False,
        account_id=signed.account_id,
        ledger_entry_id=entry,
        sku=sku,
        reference=params["reference"],
    )
    return charged, balance


def signin_debit_execute(
    raw: psycopg.Connection, statement: str, params: dict[str, Any]
) -> tuple[int, int, int] | None:
    """Run the statement (a seam for tests that break the connection mid-debit), with libpq's
    prepared-statement call as the keyed debit runs (credit_fastpath.prepared_row): through a
    psycopg cursor, its parameters' parsing cost more CPU than the statement's round trip."""
    return fast.int_row(fast.prepared_row(raw, _prepared(statement), params))


# $1 account, $2 wallet, $3 nonce, $4 sku, $5 reference, $6 sync_commit.
_SIGNIN_PARAMS = (("account", 20), ("wallet", 25), ("nonce", 25), ("sku", 25), ("reference", 25), ("sync_commit", 16))


@lru_cache(maxsize=4)
def _prepared(statement: str) -> fast.PreparedStatement:
    """One prepared statement per text (the ownership checks' SQL is part of it), named by it."""
    name = b"a2a_signin_debit_" + hashlib.sha1(statement.encode()).hexdigest()[:12].encode()
    return fast.PreparedStatement(name, statement, _SIGNIN_PARAMS)
