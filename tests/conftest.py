from __future__ import annotations

import pytest
from django.db import connection
from django.db.backends.postgresql.operations import DatabaseOperations as PostgresOperations
from django.test import TransactionTestCase
from rest_framework.test import APIClient

# The shared fixtures (tests/support/): every test may take them by name.
pytest_plugins = [
    "tests.support.chain",
    "tests.support.payments",
    "tests.support.channels",
    "tests.support.a2a_x402",
    "tests.support.deposits",
    "tests.support.receivers",
]


def _flush_by_delete(self, style, tables, *, reset_sequences=False, allow_cascade=False):
    """PostgreSQL's flush for the tests: DELETE from each table instead of one TRUNCATE of all.
    A transactional test's teardown flushes every table (about 200); TRUNCATE gives each of them
    new files and took 1 to 3 s per test, DELETE on the few rows a test writes takes about 0.1 s.
    Django's foreign keys are DEFERRABLE INITIALLY DEFERRED and the flush runs in one
    transaction, so the order of the DELETEs does not matter."""
    if reset_sequences:
        return _TRUNCATE_FLUSH(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
    return [f"DELETE FROM {self.quote_name(table)};" for table in tables if table not in _KEPT_BY_FLUSH]


# Written only by migrate's post_migrate (every model's content type and permissions), which the
# flush emits again: kept, it finds them all and writes nothing; emptied, it wrote 600 rows again
# after every transactional test (0.5 s each, a tenth of the suite).
_KEPT_BY_FLUSH = frozenset({"django_content_type", "auth_permission"})


_TRUNCATE_FLUSH = PostgresOperations.sql_flush
PostgresOperations.sql_flush = _flush_by_delete


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """Empty and seed the catalog once per test database; tests roll back their own changes.
    The database is reused between runs (--reuse-db): a run killed in the middle of a
    transactional test leaves its committed rows, which must not reach the next run."""
    from django.core.management import call_command

    from catalog.services import catalog_seed

    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)
        catalog_seed()
        _snapshot_take()


# The database as the session left it (migrate's post_migrate rows, the seeded catalog), table by
# table in PostgreSQL's binary COPY format. A transactional test's teardown empties the tables and
# copies these rows back, instead of Django's flush re-running every post_migrate handler (the
# feed schedules, content types, permissions: about 0.4 s) and the next test seeding the catalog
# again (0.6 s): together about a fifth of the suite. Every transactional test starts from the
# same state as the first one on a worker: the seeded catalog.
_SNAPSHOT: list[tuple[str, bytes]] = []


def _snapshot_take() -> None:
    _SNAPSHOT.clear()
    if connection.vendor != "postgresql":
        return
    connection.ensure_connection()
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    with connection.connection.cursor() as cursor:
        for table in sorted(set(tables) - _KEPT_BY_FLUSH):
            name = connection.ops.quote_name(table)
            if not cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {name})").fetchone()[0]:
                continue
            with cursor.copy(f"COPY {name} TO STDOUT (FORMAT BINARY)") as copy:
                _SNAPSHOT.append((name, b"".join(bytes(chunk) for chunk in copy)))


def _snapshot_restore() -> None:
    """Copy the session's rows back into the emptied tables, in one transaction (Django's
    foreign keys are deferred to its commit, so the order does not matter)."""
    from django.db import transaction

    with transaction.atomic(), connection.connection.cursor() as cursor:
        for name, rows in _SNAPSHOT:
            with cursor.copy(f"COPY {name} FROM STDIN (FORMAT BINARY)") as copy:
                copy.write(rows)


def _fixture_teardown(self) -> None:
    """TransactionTestCase's teardown on PostgreSQL: flush without post_migrate, then the
    session's snapshot (above). The cases Django treats apart keep Django's own teardown."""
    if (
        not _SNAPSHOT
        or self.available_apps is not None
        or self.serialized_rollback
        or self.reset_sequences
        or set(self._databases_names(include_mirrors=False)) != {"default"}
    ):
        return _DJANGO_FIXTURE_TEARDOWN(self)
    from django.core.management import call_command

    call_command("flush", verbosity=0, interactive=False, reset_sequences=False, inhibit_post_migrate=True)
    _snapshot_restore()


_DJANGO_FIXTURE_TEARDOWN = TransactionTestCase._fixture_teardown
TransactionTestCase._fixture_teardown = _fixture_teardown


@pytest.fixture(autouse=True)
def _fresh_redis_keys(settings):
    """Redis is not rolled back with the test transaction: start each test without the
    service's counters and stored challenges."""
    from a2a_service.core.redisconn import redis_client

    client = redis_client()
    if client is not None:
        for pattern in ("a2a:ctr:*", "a2a:x402ch:*", "a2a:rl:*", "a2a:free:*", "a2a:lock:*"):
            keys = list(client.scan_iter(match=pattern))
            if keys:
                client.delete(*keys)
    from a2a_service.core.fastcache import FREE_LOCAL
    from billing.x402.fastpath import LOCAL

    for copy in (LOCAL, FREE_LOCAL):
        copy.clear()
        with copy._lock:
            copy._counts.clear()
    from a2a_service.core.throttling import BUFFERED_WINDOWS
    from billing.api.fastpath_keys import KEYS
    from billing.api.signin_fastpath import WALLETS

    KEYS.clear()
    WALLETS.clear()
    BUFFERED_WINDOWS.reset()
    yield


@pytest.fixture(autouse=True)
def _no_request_context():
    """Each test starts outside any request: a test-client request whose answer was never closed
    (the client re-raised the view's exception) leaves its request id in this thread's context."""
    from a2a_service.core import requestlog

    requestlog._request_finished()
    requestlog._context.set(None)
    yield


@pytest.fixture
def api() -> APIClient:
    return APIClient()


_DB_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback"}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """After every test that touched the database, and before its data is rolled back: no
    credit balance may differ from its ledger sum (the money rule every test keeps). A test
    that builds a mismatch on purpose says so with @pytest.mark.ledger_unbalanced."""
    outcome = yield
    if outcome.excinfo is not None or item.get_closest_marker("ledger_unbalanced"):
        return
    if not (_DB_FIXTURES & set(item.fixturenames) or item.get_closest_marker("django_db")):
        return
    from billing.credits import ledger_audit

    mismatches = ledger_audit()
    if mismatches:
        outcome.force_exception(
            AssertionError(f"balances differ from their ledger sums (account, balance, sum): {mismatches}")
        )


_LEAK_PROBE: list = []


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """After every test, on PostgreSQL: no account is left committed in the test database (a
    thread or process that outlived its test, or a write outside the test's transaction, leaks
    rows into the tests that run after it on the same worker, far from the cause). Runs after
    the test's own teardown (trylast), so a transactional test has been flushed already."""
    if connection.vendor != "postgresql" or not (
        _DB_FIXTURES & set(item.fixturenames) or item.get_closest_marker("django_db")
    ):
        return
    import psycopg

    from tests.support import LEAK_PROBE_NAME

    db = connection.settings_dict

    def count() -> int:
        if not _LEAK_PROBE or _LEAK_PROBE[0][0] != db["NAME"] or _LEAK_PROBE[0][1].closed:
            raw = psycopg.connect(
                host=db["HOST"], port=db["PORT"] or 5432, user=db["USER"], dbname=db["NAME"], autocommit=True,
                application_name=LEAK_PROBE_NAME,
            )
            _LEAK_PROBE[:] = [(db["NAME"], raw)]
        return int(_LEAK_PROBE[0][1].execute("SELECT count(*) FROM billing_account").fetchone()[0])

    try:
        left = count()
    except psycopg.OperationalError:  # a test that cuts the database's connections cut this one
        _LEAK_PROBE.clear()
        left = count()
    raw = _LEAK_PROBE[0][1]
    if left:
        raw.execute("TRUNCATE billing_account CASCADE")  # one report, not every later test
        pytest.fail(f"{item.nodeid} left {left} account(s) committed in the test database", pytrace=False)


# Whether a transactional test ran on this worker since the catalog was last seeded.
_FLUSHED = [False]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """A transactional test's flush empties the catalog the session seeded, which a test in a
    rolled-back transaction reads as it stands: seed it again before such a test that follows
    one. (pytest-django runs those tests first; the slow tests moved to each worker's start and
    xdist's stealing mix the order.) Before the test's fixtures: committed, as the session's seed."""
    use = _db_use(item)
    if use == "transactional" and not _SNAPSHOT:  # with the snapshot, its teardown restores the seed
        _FLUSHED[0] = True
    elif use == "rollback" and _FLUSHED[0]:
        from pytest_django.plugin import blocking_manager_key

        from catalog.services import catalog_seed

        with item.config.stash[blocking_manager_key].unblock():
            catalog_seed()
        _FLUSHED[0] = False


def _db_use(item: pytest.Item) -> str | None:
    """How a test uses the database, as pytest-django tells: "transactional" (committed, then
    flushed), "rollback" (inside a transaction rolled back after it) or None."""
    marker = item.get_closest_marker("django_db")
    fixtures = set(getattr(item, "fixturenames", ()))
    if fixtures & {"transactional_db", "live_server", "django_db_reset_sequences"} or (
        marker is not None and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences"))
    ):
        return "transactional"
    if marker is not None or fixtures & _DB_FIXTURES:
        return "rollback"
    return None


def pytest_sessionfinish(session, exitstatus):
    for _name, raw in _LEAK_PROBE:
        raw.close()  # a connection left open would keep the test database from being dropped
    _LEAK_PROBE.clear()


def is_postgres() -> bool:
    return connection.vendor == "postgresql"


def pytest_collection_modifyitems(config, items):
    from django.conf import settings

    engine = settings.DATABASES["default"]["ENGINE"]
    skip = pytest.mark.skip(
        reason="needs PostgreSQL (row locks, concurrent transactions, a database shared with other processes); "
        "SQLite runs them in one in-memory connection. CI sets DATABASE_URL to PostgreSQL."
    )
    for item in items:
        if "postgres" in item.keywords and engine != "django.db.backends.postgresql":
            item.add_marker(skip)
    items[:] = _slow_at_each_workers_start(items)


def _slow_at_each_workers_start(items: list[pytest.Item]) -> list[pytest.Item]:
    """Under xdist's worksteal each worker starts on its own contiguous share of the list, and
    idle workers steal from the end of the others'. The slow tests (real servers and workers,
    seconds to a minute and a half each) go to the front of each share, in turn, so that none is
    left to start in the last minute and hold the whole run while the other workers wait. Every
    worker computes the same order, as xdist requires."""
    import os

    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 0)
    # The end-to-end runs first among them: the longest (chaos, two nodes, broker restart).
    slow = sorted(
        (item for item in items if item.get_closest_marker("slow")),
        key=lambda item: not item.nodeid.startswith("tests/e2e/"),
    )
    if workers < 2 or not slow:
        return items
    rest = [item for item in items if not item.get_closest_marker("slow")]
    # The shares as worksteal cuts them: each next worker takes what is left // workers left.
    sizes, left = [], len(items)
    for remaining in range(workers, 0, -1):
        sizes.append(left // remaining)
        left -= sizes[-1]
    ordered: list[pytest.Item] = []
    for index, size in enumerate(sizes):
        mine = slow[index::workers]
        ordered += mine + rest[: size - len(mine)]
        del rest[: size - len(mine)]
    return ordered + rest
