"""One nonce sequence per gas key across processes (billing/facilitator/nonces.py): concurrent
paid calls on a real granian server with two workers, each settling in process with the same
key, all settle once with distinct nonces; a busy or unreachable lock answers 503, claims
nothing, and the same proof goes through afterwards."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
import requests
from django.utils import timezone
from x402.http.utils import decode_payment_response_header

from billing.chain.localchain import DEMO_PAYER, FACILITATOR, dev_account
from billing.models import Payment
from catalog.models import EditorialPiece
from tests.support.granian_server import children, granian
from tests.support.payments import BRIEF, challenge, paying_session, signed_header

CALLS = 10


def _connected_to(pid: int, port: int) -> bool:
    """Whether process `pid` holds an established TCP connection to 127.0.0.1:`port` (its RPC
    session to anvil, kept alive after a verify or a settlement)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            cols = line.split()
            remote_port, state, inode = int(cols[2].split(":")[1], 16), cols[3], cols[9]
            if remote_port == port and state == "01" and inode in inodes:
                return True
    return False


class SlowSendRpc:
    """A proxy in front of anvil that takes SEND_SECONDS to pass on a transaction, as a remote
    RPC node does (anvil on loopback answers in a millisecond, and mines at once): the time in
    which another process, reading the pending count, would take the same nonce."""

    SEND_SECONDS = 0.2

    def __init__(self, upstream: str) -> None:
        import json
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if b"eth_sendRawTransaction" in body:
                    time.sleep(SlowSendRpc.SEND_SECONDS)
                answer = requests.post(
                    upstream, data=body, headers={"Content-Type": "application/json"}, timeout=30
                ).content
                json.loads(answer)  # a whole JSON answer, or the proxy fails loudly
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def slow_rpc(chain):
    proxy = SlowSendRpc(chain.url)
    yield proxy
    proxy.close()


@pytest.fixture
def two_workers(chain, slow_rpc, transactional_db, tmp_path):
    """A granian server with two worker processes, both settling in process with the one gas
    key, on the test database and the test chain (behind the slow proxy)."""
    from catalog.services import catalog_seed

    catalog_seed()  # committed: the server is another process
    EditorialPiece.objects.create(
        kind="morning_brief",
        title="Rates day",
        summary="CPI at 08:30",
        body="The full brief: rates, CPI, FX.",
        published_at=timezone.now(),
    )
    # The lock file lives in run_dir where there is no Redis.
    with granian(rpc_url=slow_rpc.url, run_dir=tmp_path, workers=2, threads=4, ready=BRIEF) as server:
        yield server


def gas_nonce(chain) -> int:
    return chain.w3.eth.get_transaction_count(dev_account(FACILITATOR).address)


def payer_balance(chain) -> int:
    return chain.token.functions.balanceOf(dev_account(DEMO_PAYER).address).call()


@pytest.mark.slow
@pytest.mark.postgres
def test_concurrent_paid_calls_on_two_workers_settle_once_each_with_distinct_nonces(two_workers, chain, slow_rpc):
    proc, base, log = two_workers
    nonce_before, balance_before = gas_nonce(chain), payer_balance(chain)
    workers = children(proc.pid)

    def paid_round() -> list[requests.Response]:
        answers: list[requests.Response] = []
        start = threading.Barrier(CALLS)

        def call() -> None:
            session = paying_session()  # the official x402 client, a connection of its own
            start.wait()
            answers.append(session.get(base + BRIEF, timeout=90))

        threads = [threading.Thread(target=call) for _ in range(CALLS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        return answers

    # A worker's first paid call is slow (imports, first connections), so the first round
    # mostly runs on one worker at a time; the next, with both warm, settles on both at once.
    answers = paid_round()
    assert all(_connected_to(w, slow_rpc.port) for w in workers)  # both settled or verified
    answers += paid_round()

    total = 2 * CALLS
    assert [a.status_code for a in answers] == [200] * total, [a.text[:300] for a in answers if a.status_code != 200]
    assert all(a.json()["body"] == "The full brief: rates, CPI, FX." for a in answers)
    hashes = [decode_payment_response_header(a.headers["PAYMENT-RESPONSE"]).transaction for a in answers]
    txs = [chain.w3.eth.get_transaction(h) for h in hashes]
    receipts = [chain.w3.eth.get_transaction_receipt(h) for h in hashes]
    assert len(set(hashes)) == total and all(r["status"] == 1 for r in receipts)
    assert sorted(tx["nonce"] for tx in txs) == list(range(nonce_before, nonce_before + total))
    assert gas_nonce(chain) == nonce_before + total  # nothing else was sent, nothing failed
    assert balance_before - payer_balance(chain) == total * 80_000  # each call paid once
    payments = Payment.objects.all()
    assert payments.count() == total and {p.state for p in payments} == {Payment.State.SETTLED}
    assert sorted(p.tx_hash for p in payments) == sorted(hashes)
    assert children(proc.pid) == workers  # no worker died on the way
    assert "underpriced" not in log.read_text() and "nonce too low" not in log.read_text()


def test_a_busy_nonce_lock_answers_503_claims_nothing_and_the_proof_goes_through_later(paid_stack, settings):
    from billing.facilitator.service import facilitator_signer

    EditorialPiece.objects.create(
        kind="morning_brief", title="Rates day", summary="CPI", body="The full brief.", published_at=timezone.now()
    )
    settings.FACILITATOR_NONCE_LOCK_WAIT_SECONDS = 0.3
    url = paid_stack.url + BRIEF
    header = signed_header(challenge(url))
    signer = facilitator_signer()
    nonce_before, balance_before = gas_nonce(paid_stack.chain), payer_balance(paid_stack.chain)
    held, done = threading.Event(), threading.Event()

    def hold_the_lock() -> None:  # another process settling right now, for longer than the wait
        with signer._sequence().hold():
            held.set()
            done.wait(30)

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    try:
        assert held.wait(10)
        busy = requests.get(url, headers={"PAYMENT-SIGNATURE": header}, timeout=30)
    finally:
        done.set()
        holder.join(10)
    assert busy.status_code == 503 and busy.headers["Retry-After"] == "5", busy.text
    assert busy.json()["charged"] is False and "nonce lock" in busy.json()["detail"]
    assert not Payment.objects.exists()
    assert (gas_nonce(paid_stack.chain), payer_balance(paid_stack.chain)) == (nonce_before, balance_before)

    again = requests.get(url, headers={"PAYMENT-SIGNATURE": header}, timeout=30)  # the same proof
    assert again.status_code == 200 and again.json()["body"] == "The full brief."
    assert Payment.objects.get().state == Payment.State.SETTLED
    assert balance_before - payer_balance(paid_stack.chain) == 80_000
