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
from a2a_service.scripts.chaos.verify import Evidence, verify


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


def _evidence(**dump: object) -> Evidence:
    base: dict[str, object] = {
        "ledger_audit": [],
        "accounts": [{"id": 1, "wallet": "0xa", "balance": 0}],
        "ledger": [],
        "payments": [],
        "deposits": [],
        "idempotent": [],
        "news_unlocks": [],
        "sessions": [],
        "deliveries": [],
    }
    return Evidence(
        dump={**base, **dump},
        transfers=[],
        authorizations={},
        ops=[],
        requests=[],
        arrivals={"ok": set(), "slow": set(), "fail": set()},
        hook_urls={"ok": "http://h/ok", "slow": "http://h/slow", "fail": "http://h/fail"},
        kills=[],
    )


def _broken(ev: Evidence) -> set[str]:
    return {rule.name.split(":")[0] for rule in verify(ev) if not rule.held}


def test_the_verification_finds_each_kind_of_money_harm() -> None:
    """The rules are not stubs: each harm the run looks for, written into otherwise clean
    records, breaks its rule and only its rule."""
    assert _broken(_evidence()) == set()
    # An authorization spent on chain whose payment the service recorded as failed: money taken.
    ev = _evidence(payments=[{"id": 1, "sku": "s", "payer": "0xp", "nonce": "0x1", "amount": 10, "state": "failed",
                              "tx": "", "error": "", "delivered": False}])
    ev.authorizations = {("0xp", "0x1"): "0xt"}
    assert _broken(ev) == {"x402"}
    # A credit call debited twice for one stored answer (one Idempotency-Key).
    debit = {"account": 1, "amount": -10, "kind": "sku_call", "reference": "/api/a2a/x402/p", "sku": "s", "deposit": None}
    ev = _evidence(
        ledger=[{**debit, "id": 1}, {**debit, "id": 2}],
        idempotent=[{"account": 1, "key": "k", "path": "/p", "status": 200, "headers": {"X-Credit-Charged": "0.00001"}}],
    )
    ev.ops = [{"op": "credit", "mode": "idempotent", "wallet": "0xa", "key": "k", "outcome": "served", "charged": 10,
               "agent": "a", "t0": 0, "t": 1}]
    assert _broken(ev) == {"credits"}
    # A deposit on chain credited twice.
    ev = _evidence(
        deposits=[{"id": 1, "tx": "0xd", "tx_log_index": 0, "from": "0xa", "amount": 5, "state": "credited", "account": 1}],
        ledger=[{"id": n, "account": 1, "amount": 5, "kind": "deposit", "reference": "", "sku": None, "deposit": 1}
                for n in (1, 2)],
    )
    ev.transfers = [{"from": "0xa", "amount": 5, "tx": "0xd", "block": 1, "log_index": 0}]
    assert _broken(ev) == {"deposits"}
    # A dead-lettered webhook delivery whose charge was never refunded.
    ev = _evidence(
        deliveries=[{"id": 1, "message_id": "msg_1", "kind": "pair_arb_alert", "subscription": 1, "url": "http://h/fail",
                     "account": 1, "state": "dead", "charged": 0, "attempts": 8, "last_status": 500, "last_error": ""}],
        ledger=[{"id": 1, "account": 1, "amount": -10, "kind": "sku_call", "reference": "webhook pair_arb_alert msg_1",
                 "sku": None, "deposit": None}],
    )
    assert _broken(ev) == {"webhooks"}
    # A balance that is not its ledger sum.
    assert _broken(_evidence(ledger_audit=[[1, 10, 0]])) == {"ledger_audit()"}
