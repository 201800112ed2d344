"""The first minutes of a new user (issue 23 items 10 and 11): `make run` says "ready" only
when the first data is in, and `make demo` runs any number of times in a row."""

from __future__ import annotations

import json
import stat
from datetime import timedelta

import pytest
from django.utils import timezone
from eth_account import Account as EthAccount

from billing.models import Account, ApiKey, OwnershipChallenge
from catalog.models import WorkerHeartbeat
from catalog.tasks import worker_heartbeat
from tests.support.marketdata import first_data_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_demos_reuse_their_account_and_key_across_runs(live_server, settings, tmp_path, capsys):
    """A second `make demo` within ten minutes failed with 429: its four parts each registered
    the same wallet (a challenge each), and the limit is five per wallet and window. Now one
    registration per stack database, kept in .run/, reused by every part and every run."""
    from a2a_service.scripts.demos.credits import account_key

    settings.OWNERSHIP_CHALLENGES_PER_WALLET = 1  # tighter than the real 5: one challenge must do
    wallet = EthAccount.create()
    store = tmp_path / ".run" / "demo_accounts.json"
    keys = [account_key(live_server.url, wallet, store=store) for _ in range(4 * 3)]  # 4 parts, 3 runs
    assert len(set(keys)) == 1
    assert OwnershipChallenge.objects.filter(wallet_address=wallet.address.lower()).count() == 1
    account = Account.objects.get(wallet_address=wallet.address.lower())
    assert account.ownership_verified and account.api_keys.filter(revoked_at__isnull=True).count() == 1
    assert json.loads(store.read_text()) == {f"{live_server.url}|{wallet.address.lower()}": keys[0]}
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert "the demo account of" in capsys.readouterr().out
    # A key the stack no longer accepts (a new database, a rotation elsewhere): registered again, kept.
    ApiKey.objects.filter(account=account).delete()
    settings.OWNERSHIP_CHALLENGES_PER_WALLET = 2
    again = account_key(live_server.url, wallet, store=store)
    assert again != keys[0] and account_key(live_server.url, wallet, store=store) == again
    assert json.loads(store.read_text())[f"{live_server.url}|{wallet.address.lower()}"] == again
    assert OwnershipChallenge.objects.filter(wallet_address=wallet.address.lower()).count() == 2


def test_make_run_says_ready_only_when_the_first_data_is_in(live_server, capsys):
    """`make run` said "local stack up" a minute before the first passes were in. Its
    supervisor now asks program/health and says "ready" (with the seconds it took) once this
    start's passes ended, its worker beat and warming_up is empty, and only once."""
    from a2a_service.scripts.devstack import Readiness

    readiness = Readiness(live_server.url)

    def poll(passes_done: bool = True) -> str:
        readiness._next = 0.0  # no waiting between polls in the test
        readiness.poll(passes_done=passes_done)
        return capsys.readouterr().out

    assert poll() == "" and not readiness.done
    worker_heartbeat()
    assert poll() == "" and not readiness.done
    readiness.started -= 1000  # long after the start: it says what it still waits for, once
    hint = poll()
    assert "not ready after" in hint and "feed_pass, analytics_pass, morning_brief" in hint
    assert poll() == ""
    first_data_in()
    # A restart: the data is the last run's, and so is the (stale) heartbeat: not ready yet.
    WorkerHeartbeat.objects.update(beat_at=timezone.now() - timedelta(minutes=30))
    assert poll() == "" and not readiness.done
    worker_heartbeat()
    assert poll(passes_done=False) == "" and not readiness.done  # this start's passes still run
    out = poll()
    assert readiness.done and "ready in " in out and " s: " + live_server.url in out
    assert "health is" not in out  # health is ok: nothing to add
    assert poll() == ""


def test_the_ready_line_says_what_is_not_ok():
    from a2a_service.scripts.devstack import ready_line

    health = {
        "status": "degraded",
        "warming_up": [],
        "database": {"status": "ok"},
        "cache": {"status": "ok"},
        "broker": {"status": "ok"},
        "worker": {"status": "stale"},
        "venue_adapters": [{"name": "news", "status": "failing"}, {"name": "kalshi", "status": "ok"}],
    }
    line = ready_line(health, 61.4, "http://127.0.0.1:8000")
    assert "ready in 61 s" in line and "health is degraded: worker not ok, feed news failing" in line
