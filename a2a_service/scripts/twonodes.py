"""Two web nodes behind a load balancer: the service scaled out on its own engines.

`DJANGO_SETTINGS_MODULE=a2a_service.settings.local python -m a2a_service.scripts.twonodes`
starts on this machine, all on one PostgreSQL (DATABASE_URL) and one Redis (REDIS_URL), which
it requires since they are what the nodes share:

- haproxy (the distribution's package, HAPROXY_PATH) on PORT (default 8240), round robin over
- two web nodes, each the `make run` web command (granian) on PORT+1 and PORT+2, NUM_PROXIES=1;
- two Celery worker nodes, each consuming the default queue and the webhooks queue;
- one beat (`--beats 2`: a second one, as if started by mistake on the second node).

Logs go to .run/twonodes/<process>.log. It migrates and seeds first (`--no-prepare` skips that),
prints the addresses and runs until Ctrl-C or until a process dies. With `--check` it shows
instead, and exits 1 if any check fails:

- a SKU's price edited in the admin (through the load balancer) is in the next 402 challenge
  of both nodes, through the load balancer and asked directly;
- a free document one node stored is served by the other (byte for byte, even after the data
  under it changed without a write the cache is told of), and both show the next write;
- a client taken past its rate limit on one node is refused by the other from its first request.

A deposit credited once and a webhook delivered once under two beats need a chain: they are
shown by tests/e2e/test_two_nodes.py on a local chain. docs/deployment/topology.md describes the
production topology this imitates."""

from __future__ import annotations

import argparse
import base64
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import TextIO

import requests

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
HEALTH_PATH = "/api/a2a/program/health"
# The nodes trust one proxy (haproxy) for the client's address: requests sent to a node
# directly name their client in X-Forwarded-For. Setup probes and the checks use their own
# addresses (documentation ranges), so they never spend the budget of each other's client.
SETUP_CLIENT = "198.18.0.1"
CHALLENGE_SKU = "payments_dual_rail_status"  # no availability check: always sold
CHALLENGE_PATH = "/api/a2a/x402/payments/dual-rail-status"
FREE_DOCUMENT = "/.well-known/x402"  # stored by the free-document layer; shows each SKU's price
RATE_PROBE = "/api/a2a/account/whale/catalog"  # a small stored free document, asked many times


def haproxy_binary() -> str:
    return os.environ.get("HAPROXY_PATH", "/usr/sbin/haproxy")


def haproxy_config(*, port: int, nodes: Sequence[tuple[str, int]], check_seconds: float = 2.0) -> str:
    """The load balancer: round robin over the web nodes, each checked on program/health. The
    production version (TLS, X-Forwarded-Proto) is in docs/deployment/topology.md."""
    servers = "\n".join(
        # Checked every check_seconds while up, every 500 ms while down: a node that starts (or
        # comes back) takes traffic within half a second.
        f"    server {name} 127.0.0.1:{node_port} check inter {int(check_seconds * 1000)}ms downinter 500ms"
        " fall 3 rise 1"
        for name, node_port in nodes
    )
    return f"""global
    maxconn 4096
    # Servers going down and up (to haproxy's standard error: the process's log).
    log stderr format short local0 notice

defaults
    mode http
    log global
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-request 10s
    # A busy node answers its health check late rather than never: not a reason to take it out.
    timeout check 10s

frontend api
    bind 127.0.0.1:{port}
    # The client's address, overwritten (a client's own X-Forwarded-For is never believed): the
    # nodes' rate limit and admin login throttle read it (NUM_PROXIES=1).
    http-request set-header X-Forwarded-For %[src]
    http-request del-header X-Forwarded-Host
    default_backend web

backend web
    balance roundrobin
    option httpchk
    http-check send meth GET uri {HEALTH_PATH} ver HTTP/1.1 hdr Host localhost
    http-check expect status 200
    # Which node answered (the two-node checks read it).
    http-response set-header X-Served-By %[srv_name]
{servers}
"""


# --- the processes ---------------------------------------------------------------------------
@dataclass
class Cluster:
    """haproxy, the web nodes, the worker nodes and the beats of one two-node setup."""

    env: dict[str, str]
    port: int
    run_dir: Path
    web_nodes: int = 2
    workers: int = 2
    beats: int = 1
    # Each beat inside a worker node (`celery worker -B`, the usual way a second beat starts by
    # mistake: -B on every worker) instead of a process of its own: forked from the worker after
    # it has loaded the project, so it costs no start of its own (the test's time budget).
    embedded_beats: bool = False
    web_workers: int = 1
    worker_pool: str = "prefork"
    worker_concurrency: int = 2
    check_seconds: float = 2.0
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    _logs: list[TextIO] = field(default_factory=list)
    _balanced_to: set[str] = field(default_factory=set)  # nodes seen answering through haproxy

    @property
    def lb_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def node_urls(self) -> list[str]:
        return [f"http://127.0.0.1:{self.port + i}" for i in range(1, self.web_nodes + 1)]

    def commands(self) -> dict[str, list[str]]:
        from a2a_service.scripts.devstack import _commands

        queue = self.env.get("WEBHOOK_DELIVERY_QUEUE", "webhooks")
        celery = [str(BIN / "celery"), "-A", "a2a_service"]
        cmds: dict[str, list[str]] = {}
        for i in range(1, self.web_nodes + 1):
            cmds[f"web{i}"] = _commands(str(self.port + i))["web"]
        scheduler = ["--scheduler", "django_celery_beat.schedulers:DatabaseScheduler"]
        for i in range(1, self.workers + 1):
            beat = ["--beat", *scheduler] if self.embedded_beats and i <= self.beats else []
            cmds[f"worker{i}"] = [
                *celery,
                "worker",
                "--loglevel",
                "INFO",
                "--hostname",
                f"node{i}@%h",
                "--queues",
                f"celery,{queue}",
                "--pool",
                self.worker_pool,
                "--concurrency",
                str(self.worker_concurrency),
                "--without-mingle",
                "--without-gossip",
                *beat,
            ]
        for i in range(1, 0 if self.embedded_beats else self.beats + 1):
            cmds[f"beat{i}"] = [
                *celery,
                "beat",
                "--loglevel",
                "INFO",
                *scheduler,
                # Each beat its own pidfile: the default one in the working directory would make
                # the second refuse to start on this machine (on two machines nothing stops it).
                "--pidfile",
                str(self.run_dir / f"beat{i}.pid"),
            ]
        cmds["haproxy"] = [haproxy_binary(), "-db", "-f", str(self.run_dir / "haproxy.cfg")]
        return cmds

    def start(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        nodes = [(f"node{i}", self.port + i) for i in range(1, self.web_nodes + 1)]
        (self.run_dir / "haproxy.cfg").write_text(
            haproxy_config(port=self.port, nodes=nodes, check_seconds=self.check_seconds)
        )
        env = {
            **self.env,
            "PYTHONUNBUFFERED": "1",
            "NUM_PROXIES": "1",
            "WEB_WORKERS": str(self.web_workers),
        }
        for name, cmd in self.commands().items():
            log = (self.run_dir / f"{name}.log").open("w")
            self._logs.append(log)
            self.procs[name] = subprocess.Popen(
                cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    def dead(self) -> dict[str, int]:
        return {name: code for name, proc in self.procs.items() if (code := proc.poll()) is not None}

    def log(self, name: str) -> str:
        path = self.run_dir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def wait_ready(self, timeout: float = 120.0) -> float:
        """Until every web node and the load balancer answer, every worker says it is ready and
        every beat has started. Returns the seconds it took; raises if a process died."""
        started = time.monotonic()
        pending = {*self.procs}
        while pending:
            if dead := self.dead():
                raise RuntimeError(f"exited: {dead}; logs in {self.run_dir}")
            for name in sorted(pending):
                if self._ready(name):
                    pending.discard(name)
            if time.monotonic() - started > timeout:
                raise TimeoutError(f"not ready after {timeout:.0f} s: {sorted(pending)}; logs in {self.run_dir}")
            time.sleep(0.3)
        return time.monotonic() - started

    def _ready(self, name: str) -> bool:
        if name.startswith("web"):
            return _answers(f"http://127.0.0.1:{self.port + int(name[3:])}{HEALTH_PATH}")
        if name == "haproxy":
            # Ready once every node has answered through it (each is up in its checks).
            try:
                resp = requests.get(self.lb_url + HEALTH_PATH, timeout=5)
            except requests.RequestException:
                return False
            self._balanced_to.add(resp.headers.get("X-Served-By", ""))
            return self._balanced_to >= {f"node{i}" for i in range(1, self.web_nodes + 1)}
        if name.startswith("worker"):
            text = self.log(name)
            beat = self.embedded_beats and int(name[6:]) <= self.beats
            return " ready." in text and (not beat or "beat: Starting" in text)
        return "beat: Starting" in self.log(name)

    def stop(self) -> None:
        """SIGTERM to each (warm shutdown), SIGKILL to the process group of any that lingers."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 20
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        for log in self._logs:
            log.close()


def _answers(url: str) -> bool:
    """Whether an HTTP server answers at `url` (any status: a node up but warming answers too)."""
    try:
        requests.get(url, headers=_client(SETUP_CLIENT), timeout=5)
        return True
    except requests.RequestException:
        return False


def _client(address: str, host: str | None = None) -> dict[str, str]:
    """Headers of a request sent to a node directly, as the load balancer would send it: the
    client's address, and the public host (the answers name it: resource URLs, the stored
    documents' keys), so that every node is asked the same request."""
    return {"X-Forwarded-For": address} | ({"Host": host} if host else {})


def public_host(url: str) -> str:
    return url.split("://", 1)[1].split("/", 1)[0]


# --- what a client sees ----------------------------------------------------------------------
def challenge(url: str, *, client: str | None = SETUP_CLIENT, host: str | None = None) -> tuple[int, str]:
    """The 402 challenge at `url`: (its amount in atomic USDC from the PAYMENT-REQUIRED header,
    the node that answered: X-Served-By through the load balancer, else the URL's port).
    client None: through the load balancer (it names the client)."""
    resp = requests.get(url, headers=_client(client, host) if client else {}, timeout=30)
    if resp.status_code != 402:
        raise AssertionError(f"{url}: {resp.status_code} {resp.text[:300]}")
    required = json.loads(base64.b64decode(resp.headers["PAYMENT-REQUIRED"]))
    served_by = resp.headers.get("X-Served-By") or url.split(":")[2].split("/")[0]
    return int(required["accepts"][0]["amount"]), served_by


class _FormFields(HTMLParser):
    """The fields a browser would submit with the form whose id is `form_id`."""

    def __init__(self, form_id: str) -> None:
        super().__init__()
        self.form_id = form_id
        self.inside = False
        self.fields: list[tuple[str, str]] = []
        self._select: str | None = None
        self._multiple = False
        self._options: list[tuple[str, bool]] = []
        self._textarea: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.inside = a.get("id") == self.form_id
        if not self.inside or "disabled" in a:
            return
        if tag == "input" and a.get("name") and a.get("type") not in ("submit", "button", "file", "image"):
            if a.get("type") not in ("checkbox", "radio") or "checked" in a:
                self.fields.append((a["name"], a.get("value", "on" if a.get("type") == "checkbox" else "")))
        elif tag == "select" and a.get("name"):
            self._select, self._options = a["name"], []
            self._multiple = "multiple" in a
        elif tag == "option" and self._select is not None:
            self._options.append((a.get("value", ""), "selected" in a))
        elif tag == "textarea" and a.get("name"):
            self._textarea, self._text = a["name"], []

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False
        elif tag == "select" and self._select is not None:
            chosen = [v for v, selected in self._options if selected]
            if not chosen and not self._multiple and self._options:
                chosen = [self._options[0][0]]
            self.fields.extend((self._select, v) for v in chosen)
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            self.fields.append((self._textarea, "".join(self._text).removeprefix("\n")))
            self._textarea = None


def admin_login(base: str, *, username: str, password: str) -> requests.Session:
    """A staff session on the admin at `base`, logged in through its login form."""
    session = requests.Session()
    page = session.get(f"{base}/admin/login/", timeout=30)
    form = _FormFields("login-form")
    form.feed(page.text)
    data = dict(form.fields) | {"username": username, "password": password, "next": "/admin/"}
    resp = session.post(f"{base}/admin/login/", data=data, allow_redirects=False, timeout=30)
    if resp.status_code != 302:
        raise AssertionError(f"admin login at {base}: {resp.status_code} {resp.text[:300]}")
    return session


def admin_price_edit(session: requests.Session, base: str, *, sku_id: int, price_usdc: str) -> str:
    """Change a SKU's price in its admin change form, as staff do: every other field as the
    form shows it. Returns the node that saved it (X-Served-By)."""
    url = f"{base}/admin/catalog/sku/{sku_id}/change/"
    page = session.get(url, timeout=30)
    form = _FormFields("sku_form")
    form.feed(page.text)
    data = [(k, v) for k, v in form.fields if k != "price_usdc"] + [("price_usdc", price_usdc), ("_save", "Save")]
    resp = session.post(url, data=data, headers={"Referer": url}, allow_redirects=False, timeout=30)
    if resp.status_code != 302:
        raise AssertionError(f"the admin did not save the SKU: {resp.status_code} {resp.text[-2000:]}")
    return resp.headers.get("X-Served-By", "")


@dataclass
class RateLimitShown:
    admitted_on_first: int  # requests node A served before its first refusal
    refused_on_second: list[int]  # node B's answers to the same client, the free document first
    retry_after: str | None


def rate_limit_shared(
    first: str, second: str, *, limit: int, duration: int, client: str, host: str
) -> RateLimitShown:
    """Take `client` past its rate limit on node `first` (a free document, served in front of
    Django), then ask node `second` for the same document and for a Django-rendered one. Done
    again with another client if a rate window ended in between (then nothing is shown)."""
    for attempt in range(3):
        who = _client(f"{client}{attempt}" if attempt else client, host)
        window = int(time.time() // duration)
        admitted = 0
        with requests.Session() as s:
            while (resp := s.get(first + RATE_PROBE, headers=who, timeout=30)).status_code == 200:
                admitted += 1
                if admitted > 2 * limit + 10:
                    raise AssertionError(f"{first} never refused {who}")
            if resp.status_code != 429:
                raise AssertionError(f"{first}: {resp.status_code} {resp.text[:300]}")
            answers = [s.get(second + path, headers=who, timeout=30) for path in (RATE_PROBE, HEALTH_PATH)]
        if int(time.time() // duration) == window:
            return RateLimitShown(admitted, [r.status_code for r in answers], answers[0].headers.get("Retry-After"))
    raise AssertionError("a rate window ended during each of three attempts")


def rate_of(text: str) -> tuple[int, int]:
    """'600/min' -> (600, 60), as DRF reads a rate."""
    num, period = text.split("/")
    return int(num), {"s": 1, "m": 60, "h": 3600, "d": 86400}[period[0]]


# --- the checks (this process uses the nodes' database and Redis through Django) ---------------
@dataclass
class FreeCacheShown:
    stored_by_first: bytes  # node A's answer, rendered by Django and stored
    served_by_second: bytes  # node B's answer after the data changed without telling the cache


CHANGED = " (changed under the cache)"


def free_document_shared(first: str, second: str, *, sku: str, host: str) -> FreeCacheShown:
    """Node `first` renders and stores the free document; the SKU's headline then changes in the
    database with no signal (a queryset update, which tells no cache); node `second`, which never
    rendered it, answers: byte for byte what `first` stored, so from the shared store. The caller
    makes a real write afterwards (it drops the document on both nodes). Done again (up to 5
    times) if some other write (a feed pass) dropped the stored documents in between."""
    from a2a_service.core.fastcache import FREE_VERSION_KEY, free_documents_forget
    from a2a_service.core.redisconn import redis_client
    from catalog.models import Sku

    client = redis_client()
    assert client is not None
    row = Sku.objects.get(sku=sku)
    headline = row.headline.removesuffix(CHANGED)
    for _ in range(5):
        Sku.objects.filter(pk=row.pk).update(headline=headline)
        free_documents_forget()  # nothing stored: `first` renders it
        version = client.get(FREE_VERSION_KEY)
        stored = requests.get(first + FREE_DOCUMENT, headers=_client(SETUP_CLIENT, host), timeout=30)
        if stored.status_code != 200:
            raise AssertionError(f"{first}{FREE_DOCUMENT}: {stored.status_code}")
        Sku.objects.filter(pk=row.pk).update(headline=headline + CHANGED)
        served = requests.get(second + FREE_DOCUMENT, headers=_client(SETUP_CLIENT, host), timeout=30)
        if client.get(FREE_VERSION_KEY) == version:
            break
    return FreeCacheShown(stored.content, served.content)


def free_document_price(url: str, *, sku: str, host: str | None = None) -> tuple[int, str]:
    """The SKU's amount and description in the free document at `url`."""
    doc = requests.get(url + FREE_DOCUMENT, headers=_client(SETUP_CLIENT, host), timeout=30).json()
    row = next(r for r in doc["resources"] if r["sku"] == sku)
    return int(row["amount"]), str(row["description"])


STAFF_USERNAME = "twonodes-check"


def staff_user() -> tuple[str, str]:
    """A superuser for the checks, with a fresh password (deactivated again after a --check)."""
    from django.contrib.auth.models import User

    username, password = STAFF_USERNAME, secrets.token_urlsafe(16)
    user, _ = User.objects.get_or_create(username=username, defaults={"is_staff": True, "is_superuser": True})
    user.is_staff = user.is_superuser = user.is_active = True
    user.set_password(password)
    user.save()
    return username, password


def run_checks(cluster: Cluster, *, rate: tuple[int, int]) -> list[tuple[str, bool, str]]:
    """The --check run: (what, passed, what was seen) per check. Puts the SKU back as it was."""
    from catalog.models import Sku

    a, b = cluster.node_urls[:2]
    host = public_host(cluster.lb_url)
    sku = Sku.objects.get(sku=CHALLENGE_SKU)
    original = (sku.price_atomic, sku.headline)
    results: list[tuple[str, bool, str]] = []
    try:
        for url in (a, b, a, b):  # twice each: the second is served from each node's own copy
            challenge(url + CHALLENGE_PATH, host=host)
        shown = free_document_shared(a, b, sku=CHALLENGE_SKU, host=host)
        results.append(
            (
                "a free document node 1 stored is served by node 2",
                shown.stored_by_first == shown.served_by_second,
                f"{len(shown.served_by_second)} bytes, identical: {shown.stored_by_first == shown.served_by_second}",
            )
        )
        new_price = original[0] + 10_000  # 0.01 USDC more
        username, password = staff_user()
        session = admin_login(cluster.lb_url, username=username, password=password)
        saved_on = admin_price_edit(
            session, cluster.lb_url, sku_id=sku.pk, price_usdc=f"{new_price / 1_000_000:.6f}"
        )
        seen = [challenge(cluster.lb_url + CHALLENGE_PATH, client=None) for _ in range(4)]
        seen += [challenge(url + CHALLENGE_PATH, host=host) for url in (a, b)]
        results.append(
            (
                f"a price saved in the admin (on {saved_on}) is in the next challenge of both nodes",
                {amount for amount, _ in seen} == {new_price} and {"node1", "node2"} <= {n for _, n in seen},
                ", ".join(f"{n}: {amount}" for amount, n in seen),
            )
        )
        docs = [free_document_price(url, sku=CHALLENGE_SKU, host=host) for url in (a, b)]
        results.append(
            (
                "the admin's write drops the stored free document on both nodes",
                all(amount == new_price and text.endswith(CHANGED) for amount, text in docs),
                "; ".join(f"{amount} {text!r}" for amount, text in docs),
            )
        )
        limit, duration = rate
        client = f"198.51.100.{secrets.randbelow(200) + 1}"
        limited = rate_limit_shared(a, b, limit=limit, duration=duration, client=client, host=host)
        results.append(
            (
                f"a client past its rate limit ({limit} per {duration} s) on node 1 is refused by node 2",
                limited.admitted_on_first == limit and limited.refused_on_second == [429, 429],
                f"node 1 served {limited.admitted_on_first}, node 2 answered {limited.refused_on_second} "
                f"(Retry-After {limited.retry_after})",
            )
        )
    finally:
        row = Sku.objects.get(pk=sku.pk)
        row.price_atomic, row.headline = original[0], original[1].removesuffix(CHANGED)
        row.save()
        from django.contrib.auth.models import User

        User.objects.filter(username=STAFF_USERNAME).update(is_active=False)
    return results


# --- by hand -----------------------------------------------------------------------------------
def _prepare(env: dict[str, str]) -> None:
    for cmd in (["migrate", "--noinput", "-v", "0"], ["seed_catalog"]):
        subprocess.run([sys.executable, "manage.py", *cmd], cwd=ROOT, env=env, check=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m a2a_service.scripts.twonodes", description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8240, help="the load balancer's; the nodes take the next two")
    parser.add_argument("--beats", type=int, default=1, help="2: a second beat, as if started by mistake")
    parser.add_argument("--web-workers", type=int, default=1, help="granian workers per web node")
    parser.add_argument("--check", action="store_true", help="show the shared state across nodes, then stop")
    parser.add_argument("--no-prepare", action="store_true", help="skip migrate and seed_catalog")
    args = parser.parse_args(argv)
    # DJANGO_SETTINGS_MODULE: importing a2a_service made it production's unless it was set
    # (production settings refuse to start without real secrets); by hand, name the local ones.
    env = {**os.environ}
    env.setdefault("THROTTLE_ANON", "600/min")
    if not env.get("REDIS_URL") or not env.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        print("set DATABASE_URL (PostgreSQL) and REDIS_URL: they are what the nodes share", file=sys.stderr)
        return 2
    if not args.no_prepare:
        _prepare(env)
    os.environ.update(env)
    import django

    django.setup()
    run_dir = ROOT / ".run" / "twonodes"
    cluster = Cluster(env=env, port=args.port, run_dir=run_dir, beats=args.beats, web_workers=args.web_workers)
    stopping = False

    def stop(*_args: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        cluster.start()
        seconds = cluster.wait_ready()
        print(f"ready in {seconds:.0f} s: load balancer {cluster.lb_url}, nodes {', '.join(cluster.node_urls)}")
        print(f"logs: {run_dir}/*.log; haproxy config: {run_dir}/haproxy.cfg", flush=True)
        if args.check:
            results = run_checks(cluster, rate=rate_of(env["THROTTLE_ANON"]))
            for what, passed, seen in results:
                print(f"{'ok  ' if passed else 'FAIL'} {what}\n     {seen}")
            return 0 if all(passed for _, passed, _ in results) else 1
        print("Ctrl-C stops every process.", flush=True)
        while not stopping:
            if dead := cluster.dead():
                print(f"exited: {dead}; stopping", flush=True)
                return 1
            time.sleep(0.5)
        return 0
    finally:
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
