"""Credit-paid calls to pure products, served in front of Django.

An agent on the credit route calls the same paid path many times with the same key. Through
Django each call spends milliseconds compiling ORM queries (the SKU, the key, the billing
switch) before one row changes. This WSGI layer serves the common case with one SQL
statement, and hands everything else to Django unchanged:

1. only a GET with `X-API-Key`, no query string, no payment proof, no `Idempotency-Key` and
   no `Origin`, on a path whose product is pure (registry: its content depends only on the
   shop's data and running it writes nothing), on PostgreSQL with Redis;
2. the key is found in this process's map of key hashes (filled from the database on a miss,
   compared with `hmac.compare_digest`), and the request is counted against the client's
   rate limit in the windows Django's throttle uses (buffered: see a2a_service/core/throttling.py);
3. the call goes through the one paid-call service (billing/paid_call.py) with this path's
   rail (FastCreditRail), which runs first: the product runs, and its content is rendered,
   before anything is charged; if either fails, Django answers (503, nothing charged);
4. the rail's hold is one statement that debits and writes the ledger row, reading the price, the SKU's status,
   the billing switch, the account's state and the key's revocation inside the same
   transaction. So nothing this process remembers can make it charge a wrong price, a
   disabled account or a revoked key: if any of them says no, nothing changes and Django
   answers the call (401, 402 with the top-up steps, a free call when billing is off).

A dropped database connection during the debit is resolved, not guessed: each debit carries
a request id in its ledger reference, and after reconnecting the ledger says whether it
committed (then the content is served) or not (then Django serves the call). If even the
ledger cannot be read, the answer is 503 with that reference, never a second attempt."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, cast
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

import psycopg
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.handlers.wsgi import WSGIRequest
from django.db import InterfaceError, OperationalError, connections
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request

from a2a_service.core.errors import ApiError, rate_limited_body
from a2a_service.core.hotsettings import settings_cached
from a2a_service.core.observe import money_event, paid_call_observe
from a2a_service.core.randpool import token_hex
from a2a_service.core.ratelog import log_throttled
from a2a_service.core.redisconn import redis_client
from a2a_service.core.requestlog import ENVIRON_LAYER
from a2a_service.core.throttling import BUFFERED_WINDOWS, ClientRateThrottle, ThrottleEnviron, base_throttle
from billing.api.fastpath_keys import KEYS, KeyHolder
from billing.paid_call import Content, CreditReceipt, Offer, Paid, Receipt, paid_call, paid_offer
from billing.rails.base import Rail
from billing.rails.credits import credit_headers
from catalog.products.registry import Product, product_get, specs_all

logger = logging.getLogger(__name__)

# Issued keys are "a2a_" + 43 characters of URL-safe base64; anything much longer is not one.
KEY_MAX_CHARS = 128
# Headers Django and DRF add to the same answer (tests compare the two).
STATIC_HEADERS = [
    ("Content-Type", "application/json"),
    ("Vary", "origin"),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "same-origin"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
]
# Everything Django reads to decide the request's host and scheme (see _base_url).
HOST_ENVIRON = (
    "HTTP_HOST",
    "SERVER_NAME",
    "SERVER_PORT",
    "wsgi.url_scheme",
    "HTTP_X_FORWARDED_HOST",
    "HTTP_X_FORWARDED_PORT",
    "HTTP_X_FORWARDED_PROTO",
    "HTTP_X_FORWARDED_SSL",
)
# What the fast path answers: status line, headers, body.
Answer = tuple[str, list[tuple[str, str]], bytes]
REFUSE_IF_PRESENT = ("HTTP_PAYMENT_SIGNATURE", "HTTP_X_PAYMENT", "HTTP_ORIGIN", "HTTP_IDEMPOTENCY_KEY")

# Debit and ledger row in one statement (one transaction). Every condition a Django call
# checks before charging is re-read here, so a stale copy in this process cannot be charged.
DEBIT_SQL = """
WITH debit AS (
    UPDATE billing_account AS a
       SET credit_balance_atomic = a.credit_balance_atomic - s.price_atomic
      FROM catalog_sku AS s, billing_billingsettings AS b
     WHERE a.id = %(account)s
       AND a.is_active
       AND s.sku = %(sku)s
       AND s.status = 'live_x402'
       AND s.price_atomic > 0
       AND b.id = 1
       AND b.credit_billing_enabled
       AND a.credit_balance_atomic >= s.price_atomic
       AND EXISTS (
           SELECT 1 FROM billing_apikey AS k
            WHERE k.id = %(key)s AND k.account_id = a.id AND k.revoked_at IS NULL
       )
    RETURNING a.credit_balance_atomic AS balance, s.price_atomic AS price, s.id AS sku_id
), commit_mode AS (
    -- For this statement's transaction only (see CREDIT_DEBIT_SYNC_COMMIT).
    SELECT set_config(
        'synchronous_commit',
        CASE WHEN %(sync_commit)s THEN current_setting('synchronous_commit') ELSE 'off' END,
        true
    )
)
INSERT INTO billing_ledgerentry
    (account_id, amount_atomic, balance_after_atomic, kind, reference, sku_id, reason, created_at)
SELECT %(account)s, -debit.price, debit.balance, 'sku_call', %(reference)s, debit.sku_id, '', now()
  FROM debit, commit_mode
RETURNING -amount_atomic, balance_after_atomic, id
"""
# The same statement for libpq's own prepared-statement call (debit_execute): $1 account,
# $2 sku, $3 key, $4 reference, $5 sync_commit; int8, text, int8, text, bool.
DEBIT_PARAMS = ("account", "sku", "key", "reference", "sync_commit")
DEBIT_PARAM_TYPES = [20, 25, 20, 25, 16]
DEBIT_STATEMENT = b"a2a_credit_debit"
LEDGER_ROW_SQL = """
SELECT -amount_atomic, balance_after_atomic, id FROM billing_ledgerentry
 WHERE account_id = %(account)s AND reference = %(reference)s
"""
KEY_SQL = """
SELECT k.id, k.key_hash, a.id, a.wallet_address
  FROM billing_apikey AS k JOIN billing_account AS a ON a.id = k.account_id
 WHERE k.prefix = %s AND k.revoked_at IS NULL AND a.is_active
"""




@dataclass(frozen=True)
class FastRoute:
    sku: str
    allow: str  # the Allow header Django sends on this path


def fast_routes() -> dict[str, FastRoute]:
    """Every GET credit path whose product may run before the charge."""
    from django.urls import resolve

    candidates: dict[str, str] = {}
    for spec in specs_all():
        candidates[spec.full_path] = spec.sku
        for route in spec.credit_routes:
            # A deprecated route answers with its Deprecation/Link headers, which Django adds.
            if route.method == "GET" and "<" not in route.route and not route.deprecated:
                candidates["/" + route.route] = spec.sku
    routes = {}
    for path, sku in candidates.items():
        if _may_run_first(product_get(sku)):
            # as_view() sets view_class on the function it returns; the stubs type it as a bare callable.
            view = resolve(path).func.view_class  # type: ignore[attr-defined]
            # As Django's View: HEAD is answered wherever GET is.
            allowed = [
                m
                for m in view.http_method_names
                if hasattr(view, m) or (m == "head" and hasattr(view, "get"))
            ]
            routes[path] = FastRoute(sku=sku, allow=", ".join(m.upper() for m in allowed))
    return routes


def _may_run_first(product: Product | None) -> bool:
    return product is not None and product.pure and product.params is None and product.price_for is None


@settings_cached
def _host_names() -> tuple[str, ...]:
    return HOST_ENVIRON + tuple(settings.SECURE_PROXY_SSL_HEADER or ())[:1]


@settings_cached
def _base_settings() -> int:
    """What else the base URL depends on (a settings change gives it new memo keys)."""
    return hash((settings.PUBLIC_BASE_URL, tuple(settings.ALLOWED_HOSTS), settings.USE_X_FORWARDED_HOST))


@settings_cached
def _sync_commit() -> bool:
    return bool(settings.CREDIT_DEBIT_SYNC_COMMIT)


class CreditFastPath:
    """WSGI middleware around Django's application."""

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app
        self._routes: dict[str, FastRoute] | None = None
        self._renderer = JSONRenderer()
        self._bases: dict[tuple[Any, ...], str] = {}

    def routes(self) -> dict[str, FastRoute]:
        if self._routes is None:
            self._routes = fast_routes()
        return self._routes

    def _base_url(self, environ: dict[str, Any]) -> str | None:
        """The base URL products link to; None if Django would refuse the Host (400). Hosts
        that passed are remembered, so the check runs once per host and not per call."""
        memo_key = (_base_settings(), *map(environ.get, _host_names()))
        base = self._bases.get(memo_key)
        if base is None:
            try:
                request = WSGIRequest(environ)
                request.get_host()  # ALLOWED_HOSTS, even when PUBLIC_BASE_URL is set
                base = settings.PUBLIC_BASE_URL or request.build_absolute_uri("/").rstrip("/")
            except DisallowedHost:
                return None
            if len(self._bases) >= 256:
                self._bases.clear()
            self._bases[memo_key] = base
        return base

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if (
            environ.get("REQUEST_METHOD") != "GET"
            or "HTTP_X_API_KEY" not in environ
            or environ.get("QUERY_STRING")
            or any(name in environ for name in REFUSE_IF_PRESENT)
            # A sign-in next to the key: the front tries sign-in first (what the wallet owns is
            # free), so Django decides.
            or "HTTP_SIGN_IN_WITH_X" in environ
        ):
            return self.app(environ, start_response)
        route = self.routes().get(environ.get("PATH_INFO", ""))
        if route is None:
            return self.app(environ, start_response)
        return answer_in_front(
            self.app, environ, start_response, route=route, serve=self._serve, layer="credit_fast", name="credit"
        )

    def _serve(self, environ: dict[str, Any], route: FastRoute) -> Answer | None:
        """The answer, or None for Django to answer. Raises ChargeUnconfirmed, or anything
        else only before anything is charged."""
        conn = connections["default"]
        if conn.vendor != "postgresql" or redis_client() is None:
            return None
        base = self._base_url(environ)
        if base is None:
            return None
        key = environ["HTTP_X_API_KEY"].strip()
        if len(key) > KEY_MAX_CHARS or not (key.isascii() and key.isprintable()):
            return None  # not a key this service issues (a NUL would fail in the driver): Django answers
        holder = KEYS.find(key, load=lambda prefix: _keys_load(conn, prefix))
        if holder is None:
            return None
        # budget() reads only META and headers, which ThrottleEnviron has (no DRF Request here):
        # the base rate, or a whale tier's (billing/whale.py) for a tier account's key.
        refused = over_budget(base_throttle(), environ, route)
        if refused is not None:
            return refused
        if product_get(route.sku) is None:  # withdrawn since the routes were built: Django answers (404/503)
            return None
        rail = FastCreditRail(
            conn=conn, holder=holder, path=environ["PATH_INFO"], render=self._renderer.render
        )
        return sell_in_front(route=route, base=base, rail=rail, forget=lambda: KEYS.drop(key))


class DebitRefused(Exception):  # noqa: N818 - an answer (Django's), not a fault
    """The debit statement changed nothing (price, SKU, switch, account or key said no), or
    it is certain that it did not commit: Django answers the call."""


class FastCreditRail:
    """The credit rail of this fast path: a pure product runs first, then its hold is the one
    debit statement (final on its own: there is nothing to commit or release after it)."""

    final_before_effects: ClassVar[bool] = False
    runs_first: ClassVar[bool] = True
    # Not counted by paid_call: a failure here is Django's to answer (and count); the fast path
    # counts what it answers itself.
    rail_name: ClassVar[str] = ""

    def __init__(
        self, *, conn: Any, holder: KeyHolder, path: str, render: Callable[[Content], bytes]
    ) -> None:
        self.conn = conn
        self.holder = holder
        self.path = path
        self.render = render
        self.body = b""

    def admit(self, offer: Offer) -> Paid | None:
        offer.call.payer = self.holder.wallet_address
        return None

    def scope(self, body: Callable[[], Paid]) -> Paid:
        return body()  # no transaction: the debit statement is its own

    def hold(self, offer: Offer, content: Content | None) -> _Debited:
        if content is None:
            raise RuntimeError("the credit fast path runs the product before it charges")
        self.body = self.render(content)  # before the charge: a content that cannot render is not charged
        debited = _debit(self.conn, holder=self.holder, sku=offer.name, path=self.path)
        if debited is None:
            raise DebitRefused(offer.name)
        return _Debited(*debited)


class _Debited:
    def __init__(self, charged: int, balance: int) -> None:
        self.charged = charged
        self.balance = balance

    def commit(self, content: Content | None) -> Receipt:
        return CreditReceipt(charged_atomic=self.charged, balance_atomic=self.balance)

    def release(self) -> None:
        raise RuntimeError("a committed debit cannot be released")

    def deliver(self, run: Callable[[], Content]) -> Content:
        return run()


def _json_answer(status: str, content: dict[str, Any], extra: list[tuple[str, str]]) -> Answer:
    body = json.dumps(content, separators=(",", ":")).encode()
    return status, [*STATIC_HEADERS, *extra, ("Content-Length", str(len(body)))], body


def _raw(conn: Any) -> psycopg.Connection[tuple[Any, ...]] | None:
    """Django's connection of this thread, if it is in autocommit (no transaction open)."""
    conn.ensure_connection()
    if conn.in_atomic_block or not conn.get_autocommit():
        return None
    raw: psycopg.Connection[tuple[Any, ...]] = conn.connection
    if raw.prepare_threshold is None:
        # Django turns psycopg's prepared statements off; its own cursors bind client-side
        # and never prepare, so this only lets the fast path's server-side cursors prepare
        # their statements, which halves the debit's cost on the server (no parse and plan).
        raw.prepare_threshold = 5
    return raw


def _keys_load(conn: Any, prefix: str) -> list[KeyHolder]:
    raw = _raw(conn)
    if raw is None:
        return []
    try:
        with psycopg.Cursor(raw) as cur:
            rows = cur.execute(KEY_SQL, (prefix,), prepare=True).fetchall()
    except psycopg.Error:
        _close(conn)
        raise
    return [KeyHolder(*row) for row in rows]


class ChargeUnconfirmed(ApiError):
    """The connection failed during a debit and the ledger could not be read afterwards."""

    status_code = 503
    code = "charge_unconfirmed"
    rail = "credits"  # the paid-call counter's rail

    def __init__(self, reference: str) -> None:
        super().__init__(
            "the database connection failed while this call was charged and the charge could not be "
            "confirmed; nothing was served. GET /api/a2a/account shows whether it was charged (ledger "
            "reference below) before you retry.",
            extra={"reference": reference},
            headers={"Retry-After": "1"},
        )
        self.reference = reference


def _debit(conn: Any, *, holder: KeyHolder, sku: str, path: str) -> tuple[int, int] | None:
    """(charged, balance after) if the debit committed (told as a money event); None if it was
    refused or it is certain that it did not commit."""
    raw = _raw(conn)
    if raw is None:
        return None
    reference = f"{path} req:{token_hex(16)}"
    params: dict[str, Any] = {
        "account": holder.account_id,
        "key": holder.key_id,
        "sku": sku,
        "reference": reference,
        "sync_commit": _sync_commit(),
    }
    try:
        row = debit_execute(raw, params)
    except psycopg.OperationalError:
        # The connection failed while the statement ran: it may or may not have committed.
        # A new connection reads the ledger, which holds the row if and only if it did.
        logger.warning("connection lost during a credit debit; reading the ledger", exc_info=True)
        _close(conn)
        try:
            raw = _raw(conn)
            if raw is None:  # inside a transaction now: the ledger cannot be read here
                raise ChargeUnconfirmed(reference)
            with psycopg.Cursor(raw) as cur:
                row = cur.execute(LEDGER_ROW_SQL, params).fetchone()
        except Exception as exc:
            # Falling back to Django could charge the call a second time: answer 503.
            raise ChargeUnconfirmed(reference) from exc
    if row is None:
        return None
    charged, balance, entry = int(row[0]), int(row[1]), int(row[2])
    money_event(
        "debit",
        amount_atomic=charged,
        after_commit=False,  # the statement committed on its own
        account_id=holder.account_id,
        ledger_entry_id=entry,
        sku=sku,
        reference=reference,
    )
    return charged, balance


# The statements this process prepared, per connection (libpq's): (id, statement name) -> the
# connection itself (kept so that a new connection at the same address is not taken for it).
_prepared_on: dict[tuple[int, bytes], Any] = {}


def debit_execute(raw: psycopg.Connection, params: dict[str, Any]) -> tuple[int, int, int] | None:
    """Run the debit statement (a seam for tests that break the connection mid-debit)."""
    return int_row(prepared_row(raw, _DEBIT, params))


def int_row(row: tuple[str, ...] | None) -> tuple[int, int, int] | None:
    """(charged, balance after, ledger entry id) of a debit statement's row."""
    return None if row is None else (int(row[0] or 0), int(row[1] or 0), int(row[2] or 0))


class PreparedStatement:
    """A statement with %(name)s parameters, prepared under `name` with libpq's own call, its
    parameters typed (int8 20, text 25, bool 16, numeric 1700) and numbered in the order given."""

    def __init__(self, name: bytes, sql: str, params: tuple[tuple[str, int], ...]) -> None:
        self.name = name
        self.params = params
        positional = sql
        for n, (param, _type) in enumerate(params, start=1):
            positional = positional.replace(f"%({param})s", f"${n}")
        self.sql = positional.encode()
        self.types = [type_oid for _param, type_oid in params]


def prepared_row(
    raw: psycopg.Connection, statement: PreparedStatement, params: dict[str, Any]
) -> tuple[str, ...] | None:
    """The first row (as text) of the statement run by libpq's prepared-statement call on Django's
    connection, in autocommit: a psycopg cursor cost more CPU than the statement's round trip
    (about 180 against 70 us a debit; bench/cpu.py). Errors are psycopg's, as a cursor raises them."""
    pgconn = raw.pgconn
    values = [_text(params[name]) for name, _type in statement.params]
    if _prepared_on.get((id(pgconn), statement.name)) is not pgconn:
        _prepare(pgconn, statement)
    result = pgconn.exec_prepared(statement.name, values)
    if result.status == psycopg.pq.ExecStatus.FATAL_ERROR and (
        result.error_field(psycopg.pq.DiagnosticField.SQLSTATE) == b"26000"
    ):
        # The server forgot the statement (DISCARD ALL behind a pooler): it did not run.
        _prepare(pgconn, statement)
        result = pgconn.exec_prepared(statement.name, values)
    if result.status != psycopg.pq.ExecStatus.TUPLES_OK:
        if pgconn.status == psycopg.pq.ConnStatus.BAD:  # as psycopg's cursor says it
            raise psycopg.OperationalError(f"the connection failed during the statement: {result.error_message!r}")
        raise psycopg.errors.error_from_result(result, encoding=raw.info.encoding)
    if result.ntuples == 0:
        return None
    return tuple((result.get_value(0, i) or b"").decode() for i in range(result.nfields))


_DEBIT = PreparedStatement(DEBIT_STATEMENT, DEBIT_SQL, tuple(zip(DEBIT_PARAMS, DEBIT_PARAM_TYPES, strict=True)))


def _text(value: Any) -> bytes:
    if isinstance(value, bool):
        return b"t" if value else b"f"
    return str(value).encode()


def _prepare(pgconn: Any, statement: PreparedStatement) -> None:
    result = pgconn.prepare(statement.name, statement.sql, statement.types)
    if result.status != psycopg.pq.ExecStatus.COMMAND_OK:
        if result.error_field(psycopg.pq.DiagnosticField.SQLSTATE) != b"42P05":  # already there
            raise psycopg.errors.error_from_result(result, encoding="utf-8")
    if len(_prepared_on) >= 64:
        _prepared_on.clear()
    _prepared_on[(id(pgconn), statement.name)] = pgconn


def _close(conn: Any) -> None:
    try:
        conn.close()
    except Exception:  # a broken connection may fail to close; it is dropped either way
        conn.connection = None


def answer_in_front(
    app: WSGIApplication,
    environ: WSGIEnvironment,
    start_response: StartResponse,
    *,
    route: FastRoute,
    serve: Callable[[dict[str, Any], FastRoute], Answer | None],
    layer: str,
    name: str,
) -> Iterable[bytes]:
    """A fast path's answer (`serve`), or Django's. What `serve` raises before charging hands
    the call to Django (a lost persistent connection, found before the debit: Django reconnects
    first, CONN_HEALTH_CHECKS, or says 503); ChargeUnconfirmed, raised after a debit whose
    commit could not be confirmed, is a 503 that is never retried. The credit and sign-in fast
    paths share it."""
    try:
        answer = serve(environ, route)
    except ChargeUnconfirmed as exc:
        paid_call_observe(rail=exc.rail, outcome="error")
        answer = _json_answer("503 Service Unavailable", exc.body(), [("Allow", route.allow), *exc.headers.items()])
    except (OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError) as exc:
        log_throttled(
            logger,
            f"{name}-fastpath-connection",
            f"{name} fast path: database connection lost before charging (%s); Django answers",
            str(exc).strip()[:200],
            level=logging.WARNING,
            exc_info=False,
        )
        answer = None
    except Exception:  # anything else is raised before charging: Django answers
        log_throttled(
            logger,
            f"{name}-fastpath-before-charge",
            f"{name} fast path failed before charging; Django answers",
            level=logging.ERROR,
        )
        answer = None
    if answer is None:
        return app(environ, start_response)
    status, headers, body = answer
    environ[ENVIRON_LAYER] = layer
    start_response(status, headers)
    return [body]


class RenderedRail(Rail, Protocol):
    """A fast path's rail: it keeps the rendered answer it charged for."""

    body: bytes


def over_budget(throttle: ClientRateThrottle, environ: WSGIEnvironment, route: FastRoute) -> Answer | None:
    """The 429 when the caller's rate budget is spent (one budget with Django's), else None.
    budget() reads only META and headers, which ThrottleEnviron has (no DRF Request here)."""
    budget = throttle.budget(cast(Request, ThrottleEnviron(environ)))
    wait = budget and BUFFERED_WINDOWS.take(
        ident=budget.ident, num_requests=budget.num_requests, duration=budget.duration
    )
    if not wait:
        return None
    body = rate_limited_body(wait)
    return _json_answer(
        "429 Too Many Requests", body, [("Allow", route.allow), ("Retry-After", str(body["retry_after"]))]
    )


def sell_in_front(
    *,
    route: FastRoute,
    base: str,
    rail: RenderedRail,
    forget: Callable[[], None],
    label: str = "credits",
    headers_of: Callable[[Receipt], dict[str, str]] | None = None,
) -> Answer | None:
    """The paid call on a fast path's rail and its 200, or None for Django to answer: a debit the
    rail refused (not enough credit, a key or wallet that changed: `forget` drops what the path
    remembered of it). The product raises ProductUnavailable (or a bug) before charging, which
    answer_in_front hands to Django uncharged. `label` counts the call under its rail,
    `headers_of` renders its receipt (the credit headers by default)."""
    offer = paid_offer(product=route.sku, params=None, base_url=base, sku_row=False)
    try:
        paid = paid_call(product=offer, payment=rail)
    except DebitRefused:
        forget()
        return None
    receipt = paid.receipt
    if headers_of is None:
        assert isinstance(receipt, CreditReceipt)
        receipt_headers = credit_headers(receipt.charged_atomic, receipt.balance_atomic)
    else:
        receipt_headers = headers_of(receipt)
    paid_call_observe(rail=label, outcome="served")
    headers = [
        *STATIC_HEADERS,
        ("Allow", route.allow),
        *receipt_headers.items(),
        ("Content-Length", str(len(rail.body))),
    ]
    return "200 OK", headers, rail.body
