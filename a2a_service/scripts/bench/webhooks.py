"""Webhook deliveries by one Celery worker to a loopback receiver."""

from __future__ import annotations

import json
import statistics
import subprocess
import time

from a2a_service.scripts.bench.servers import (
    BIN,
    ROOT,
    manage_shell,
    stop,
)


def webhook_scenario(env: dict[str, str], events: int = 300, paced: int = 30) -> None:
    """One Celery worker (one process) delivering signed webhooks to a loopback receiver:
    deliveries/s, and the time from an event's commit to its arrival."""
    import threading
    from datetime import datetime
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    arrived: dict[str, float] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            arrived.setdefault(self.headers["webhook-id"], time.time())
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    wenv = {**env, "WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true", "WEBHOOK_DELIVERY_QUEUE": "bench-webhooks"}
    worker = subprocess.Popen(
        [
            str(BIN / "celery"),
            "-A",
            "a2a_service",
            "worker",
            "--pool",
            "solo",
            "--loglevel",
            "WARNING",
            "--without-gossip",
            "--without-mingle",
            "--queues",
            "bench-webhooks",
        ],
        cwd=ROOT,
        env=wenv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    script = (
        "import json, secrets\n"
        "from datetime import timedelta\n"
        "from django.utils import timezone\n"
        "from tests.support.wallets import register_wallet  # signs the ownership challenge\n"
        "from webhooks.models import PushEntitlement\n"
        "from webhooks.services import event_publish, subscription_create\n"
        "reg = register_wallet()\n"
        "PushEntitlement.objects.create(account=reg.account, expires_at=timezone.now() + timedelta(days=1))\n"
        f"subscription_create(account=reg.account, url={url!r}, events=['copy_signal'])\n"
        "out = {}\n"
        f"for i in range({events}):\n"
        "    e = event_publish(kind='copy_signal', payload={'n': i}, account_id=reg.account.id)\n"
        "    out[e.message_id] = e.created_at.timestamp()\n"
        "import time\n"
        f"time.sleep({events} / 30 + 3)  # let the worker drain the burst: the paced events must not queue\n"
        "paced = {}\n"
        f"for i in range({paced}):\n"
        "    time.sleep(0.25)\n"
        "    e = event_publish(kind='copy_signal', payload={'paced': i}, account_id=reg.account.id)\n"
        "    paced[e.message_id] = e.created_at.timestamp()\n"
        "print(json.dumps({'burst': out, 'paced': paced}))\n"
    )
    try:
        time.sleep(3)  # the worker connects to the broker
        both = json.loads(manage_shell(script, wenv))
        created, paced_created = both["burst"], both["paced"]
        deadline = time.monotonic() + 120
        while len(arrived) < len(created) + len(paced_created) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stop(worker)
        server.shutdown()
    got = [arrived[k] for k in created if k in arrived]
    latencies = sorted((arrived[k] - created[k]) * 1000 for k in created if k in arrived)
    span = max(got) - min(got) if len(got) > 1 else float("nan")
    print(
        f"\n== webhook delivery: one Celery worker (solo pool), {events} signed events to a loopback receiver"
    )
    print(
        f"burst: delivered {len(got)}/{len(created)}; {len(got) / span:.0f} deliveries/s; event -> delivery "
        f"p50 {statistics.median(latencies):.0f} ms (all written at once, so later ones wait in the queue)"
    )
    idle = sorted((arrived[k] - paced_created[k]) * 1000 for k in paced_created if k in arrived)
    if idle:
        print(
            f"paced (one event every 250 ms): event -> delivery p50 {statistics.median(idle):.1f} ms, "
            f"max {idle[-1]:.1f} ms  [{datetime.now():%H:%M}]"
        )
