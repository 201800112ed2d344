"""The chaos harness (a2a_service/scripts/chaos, `make chaos`) in its smallest form: its own
PostgreSQL cluster, Redis, anvil and the service's processes; 7 agents paying by every route for
20 s while the default Celery worker is killed and restarted and Redis is restarted empty; then
every money rule checked from the database, the chain and the answers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from a2a_service.scripts.chaos.run import Options, run
from a2a_service.scripts.chaos.stack import pg_bin


def _missing() -> str:
    if shutil.which("redis-server") is None:
        return "redis-server is not installed"
    try:
        pg_bin()
    except RuntimeError as exc:
        return str(exc)
    return ""


@pytest.mark.slow
@pytest.mark.skipif(bool(_missing()), reason=_missing() or "ok")
def test_a_short_chaos_run_keeps_every_money_rule(tmp_path: Path) -> None:
    outcome = run(
        Options(
            agents=7,
            minutes=1 / 3,
            faults=["celery_kill", "redis_restart"],
            port_base=None,  # free ports: never another run's
            drain=90,
            webhook_retry_scale=0.0001,  # the failing receiver's dead letters within ~10 s
            news_items=10,
            out=tmp_path,
        )
    )
    broken = [rule.name for rule in outcome.rules if not rule.held]
    assert not broken, outcome.text
    n = outcome.numbers
    # Every route was exercised, and what the faults touched was decided: each deposit credited
    # once, the failing receiver's deliveries dead-lettered with their refunds.
    assert n["x402_settled"] == n["x402_answers"] > 0, n
    assert n["credit_debits"] > 0 and n["credit_answers"] >= n["credit_debits"], n
    assert n["sessions"] >= 1 and n["session_calls"] >= 1 and n["news_unlocks"] >= 1, n
    assert n["deposits_sent"] == n["deposits_credited"] >= 4, n  # one first deposit per credit account at least
    assert n["webhooks_dead"] == n["webhook_refunds"] > 0 and n["webhooks_delivered"] > 0, n
