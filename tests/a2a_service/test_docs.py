"""The documentation stays true of the code: the README stays short; docs/configuration.md's one
table names every setting the settings modules read, and nothing that is not read anywhere;
every repository path, module and link the README and docs/ name exists (the failure lists each
missing one with its doc and line, so moving a module shows every page to fix); and the shell
blocks marked `sh runnable` run as written, as tests/test_framework_packs.py runs the SKILL.md
packs: curl calls against a live server (its URL in place of http://127.0.0.1:8000) and
`manage.py` commands against the test database. Every other shell block is listed in SKIPPED
with the reason it is not run here. Python blocks are not run (the README's x402 client example
is the SKILL.md packs' payment, which test_framework_packs.py runs on the local chain)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").rglob("*.md"))]
CONFIGURATION = ROOT / "docs" / "configuration.md"
SETTINGS = ROOT / "a2a_service" / "settings"
APPS = ("a2a_service", "catalog", "billing", "sessions_app", "webhooks", "agents")
# Where a variable may be read outside the settings modules: the project's code, its tests, the
# Makefile and CI script (never the docs themselves, nor this test).
CODE_FILES = [
    *(p for app in (*APPS, "tests") for p in (ROOT / app).rglob("*.py") if p.name != "test_docs.py"),
    ROOT / "Makefile",
    ROOT / ".ci" / "run",
]
LIVE_BASE = "http://127.0.0.1:8000"

# Shell blocks not run by this test, by (doc, text of their first line), with the reason.
SKIPPED = {
    ("README.md", "make run    # install"): "the two commands themselves: they install and start everything",
    ("README.md", "DATABASE_URL=postgres://postgres@127.0.0.1:5432/a2a REDIS_URL"): "runs make test itself",
    ("docs/deployment/README.md", "export DJANGO_SETTINGS_MODULE=a2a_service.settings.production"): (
        "production processes with production secrets, long-running"
    ),
    ("docs/deployment/topology.md", "DJANGO_SETTINGS_MODULE=a2a_service.settings.local \\"): (
        "starts haproxy and four nodes; tests/test_two_nodes.py runs the same topology"
    ),
    ("docs/operations/README.md", "journalctl -u 'a2a-*' -o cat"): "reads a systemd journal",
    ("docs/protocols.md", "python manage.py erc8004_register"): (
        "sends transactions to a chain; tests/test_erc8004.py registers on anvil"
    ),
    ("docs/protocols.md", "curl -s localhost:8000/api/a2a/agenthub/chat"): (
        "needs ingested order books and a funded $KEY; tests/test_chat_intents.py asks the same questions"
    ),
}


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# --- (a) the README is the short entry point ---------------------------------------------------
def test_readme_is_at_most_250_lines():
    lines = README.read_text().splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; move detail into docs/ (at most 250)"


# --- (b) docs/configuration.md: one table, every setting ---------------------------------------
# env("NAME", ...), env.int("NAME", ...), env.db("NAME"), os.environ["NAME"], os.environ.get("NAME"),
# os.getenv("NAME"), os.environ.setdefault("NAME", ...): the reads of the environment.
ENV_READ = re.compile(
    r"""(?:\benv(?:\.\w+)?\(|os\.environ(?:\.get|\.setdefault)?[\[(]|os\.getenv\()\s*f?["']([A-Z][A-Z0-9_]*)["']"""
)
TABLE_NAME = re.compile(r"^`([A-Z][A-Z0-9_]*(?:<[A-Z]+>)?)`$")


def settings_read() -> dict[str, list[str]]:
    """Every environment variable a settings module reads, with the modules that read it."""
    names: dict[str, list[str]] = {}
    for module in sorted(SETTINGS.rglob("*.py")):
        for name in ENV_READ.findall(module.read_text()):
            names.setdefault(name, []).append(rel(module))
    return names


def configuration_table() -> dict[str, list[str]]:
    """The rows of docs/configuration.md's table: variable -> its cells."""
    rows: dict[str, list[str]] = {}
    lines = CONFIGURATION.read_text().splitlines()
    header = [i for i, line in enumerate(lines) if line.startswith("| variable |")]
    assert len(header) == 1, "docs/configuration.md holds exactly one table of variables"
    for number, line in enumerate(lines[header[0] + 2 :], start=header[0] + 3):
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        assert len(cells) == 4, (
            f"docs/configuration.md:{number}: four cells (variable, default, meaning, read by)"
        )
        match = TABLE_NAME.match(cells[0])
        assert match, f"docs/configuration.md:{number}: one variable per row, in backticks: {cells[0]!r}"
        assert match.group(1) not in rows, f"docs/configuration.md:{number}: {match.group(1)} twice"
        assert all(cells[1:]), f"docs/configuration.md:{number}: {match.group(1)} has an empty cell"
        rows[match.group(1)] = cells
    return rows


def test_settings_modules_read_the_environment_the_way_this_test_finds():
    names = settings_read()
    # A few reads of each kind, so a change of style does not make the check below vacuous.
    for expected in ("SECRET_KEY", "DATABASE_URL", "ALLOWED_HOSTS", "NEWS_FEEDS", "PYTEST_XDIST_WORKER"):
        assert expected in names, expected
    assert len(names) > 150


def test_configuration_table_names_every_setting():
    table = configuration_table()
    missing = {name: where for name, where in settings_read().items() if name not in table}
    assert not missing, "settings read but not in docs/configuration.md's table:\n" + "\n".join(
        f"  {name} (read in {', '.join(sorted(set(where)))})" for name, where in sorted(missing.items())
    )


def test_configuration_table_names_nothing_that_is_not_read():
    read = set(settings_read())
    code = "\n".join(path.read_text() for path in CODE_FILES if path.exists())
    unknown = []
    for name in configuration_table():
        word = name.split("<", 1)[0]  # X402_PRICE_<SKU>: the prefix the seed builds names from
        pattern = re.escape(word) + (r"" if word != name else r"\b")
        if name not in read and not re.search(r"\b" + pattern, code):
            unknown.append(name)
    assert not unknown, "docs/configuration.md names variables nothing reads: " + ", ".join(unknown)


# --- (c) every path, module and link the docs name exists -------------------------------------
PATH = re.compile(r"(?<![\w./@-])((?:" + "|".join(APPS) + r"|tests|docs|\.ci)/[\w./<>{}*,-]*)")
MODULE = re.compile(r"(?<![\w./-])((?:" + "|".join(APPS) + r")(?:\.\w+)+)(?::\w+)?")
LINK = re.compile(r"\]\(([^)\s]+)\)")
FILE_SUFFIXES = {"md", "py", "json", "yml", "yaml", "toml", "lock", "sol", "csv", "ics", "xml", "html", "txt"}


def path_exists(text: str) -> bool:
    text = text.rstrip(".,:;")
    cut = re.search(r"[<{]", text)
    if cut:  # catalog/feeds/<source>/, agents/{a2a,mcp}/: the folder before the placeholder
        text = text[: cut.start()].rsplit("/", 1)[0]
    if "*" in text:
        return any(ROOT.glob(text))
    return (ROOT / text).exists()


def module_exists(dotted: str) -> bool:
    """A module or package, or an attribute of one (billing.x402.proof.PaymentRejected)."""
    parts = dotted.split(".")
    for end in (len(parts), len(parts) - 1):
        base = ROOT.joinpath(*parts[:end])
        if end > 1 and (base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()):
            return True
    return False


def slugs(doc: Path) -> set[str]:
    """GitHub's anchors of a document's headings."""
    found = set()
    for line in doc.read_text().splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def missing_references() -> list[str]:
    missing = []
    for doc in DOCS:
        for number, line in enumerate(doc.read_text().splitlines(), start=1):
            where = f"{rel(doc)}:{number}"
            scan = re.sub(r"https?://\S+", "", line)  # a URL's path is not the repository's
            for found in PATH.findall(scan):
                if not path_exists(found):
                    missing.append(f"{where}: path {found.rstrip('.,:;')}")
            for found in MODULE.findall(scan):
                if found.rsplit(".", 1)[-1] not in FILE_SUFFIXES and not module_exists(found):
                    missing.append(f"{where}: module {found}")
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue
                file_part, _, anchor = target.partition("#")
                linked = (doc.parent / file_part).resolve() if file_part else doc
                if not linked.exists():
                    missing.append(f"{where}: link {target}")
                elif anchor and linked.suffix == ".md" and anchor not in slugs(linked):
                    missing.append(f"{where}: link {target} (no heading #{anchor} in {rel(linked)})")
    return missing


def test_every_path_module_and_link_the_docs_name_exists():
    missing = missing_references()
    assert not missing, (
        "the docs name what does not exist (fix the doc, or the path it names):\n"
        + "\n".join(f"  {m}" for m in missing)
    )


def test_the_reference_check_finds_what_is_missing(tmp_path):
    """The check above is not vacuous: it sees paths, modules and links, and misses."""
    assert path_exists("billing/paid_call.py") and path_exists("catalog/feeds/<source>/")
    assert path_exists("billing/chain/contracts/*.sol") and not path_exists("billing/no_such_module.py")
    assert module_exists("a2a_service.wsgi") and module_exists("billing.x402.proof.PaymentRejected")
    assert not module_exists("agents.no_such_demo")
    assert PATH.findall("see `catalog/products/` and GET /api/a2a/agents/{slug}") == ["catalog/products/"]
    assert MODULE.findall("python -m a2a_service.scripts.twonodes --check") == [
        "a2a_service.scripts.twonodes"
    ]
    doc = tmp_path / "page.md"
    doc.write_text("## The `x402` route (v2)\n")
    assert slugs(doc) == {"the-x402-route-v2"}


# --- (d) the docs' shell commands run ----------------------------------------------------------
FENCE = re.compile(r"^```([\w-]*)([^\n]*)\n(.*?)^```$", re.S | re.M)


def shell_blocks() -> list[tuple[str, str, bool]]:
    """(doc, code, runnable) of every sh/bash block of the README and docs/."""
    blocks = []
    for doc in DOCS:
        for lang, info, code in FENCE.findall(doc.read_text()):
            if lang in ("sh", "bash", "shell", "console"):
                blocks.append((rel(doc), code, "runnable" in info.split()))
    return blocks


def skip_reason(doc: str, code: str) -> str | None:
    first = code.splitlines()[0] if code.strip() else ""
    for (skipped_doc, start), reason in SKIPPED.items():
        if skipped_doc == doc and first.startswith(start):
            return reason
    return None


def test_every_shell_block_is_run_or_skipped_for_a_reason():
    blocks = shell_blocks()
    unclassified = [
        f"{doc}: {code.splitlines()[0]}"
        for doc, code, runnable in blocks
        if not runnable and not skip_reason(doc, code)
    ]
    assert not unclassified, (
        "mark these ```sh runnable (run by this test) or add them to SKIPPED with a reason:\n  "
        + "\n  ".join(unclassified)
    )
    stale = [
        key
        for key in SKIPPED
        if not any(doc == key[0] and code.startswith(key[1]) and not run for doc, code, run in blocks)
    ]
    assert not stale, f"SKIPPED names blocks that no longer exist: {stale}"
    runnable = [code for _, code, run in blocks if run]
    assert any("curl" in code for code in runnable) and any("manage.py" in code for code in runnable)


def database_url() -> str:
    from django.db import connection

    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def served(live_server, transactional_db):
    from catalog.services import catalog_seed

    catalog_seed()  # on SQLite, a transactional test after another starts from empty tables
    yield live_server.url
    import a2a_service.core.http

    a2a_service.core.http._session.close()


def run_block(code: str, *, base: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # curl fails on an HTTP error (a 404 or 500 would otherwise print its body and exit 0).
    script = 'curl() { command curl --fail-with-body --max-time 60 "$@"; }\n' + code.replace(LIVE_BASE, base)
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_runnable_shell_blocks_run_against_a_live_server_and_the_test_database(served):
    from django.db import connection

    env = {
        **os.environ,
        # `python` is this virtualenv's, as after `make run`'s install.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "DJANGO_SETTINGS_MODULE": "a2a_service.settings.test",
    }
    ran = 0
    for doc, code, runnable in shell_blocks():
        if not runnable:
            continue
        if "manage.py" in code:
            if connection.vendor != "postgresql":
                continue  # another process cannot reach SQLite's in-memory test database
            env["DATABASE_URL"] = database_url()
        done = run_block(code, base=served, env=env)
        assert done.returncode == 0, (
            f"{doc}:\n{code}\n--- stdout:\n{done.stdout[-2000:]}\n--- stderr:\n{done.stderr[-3000:]}"
        )
        assert done.stdout.strip(), f"{doc}: prints nothing:\n{code}"
        ran += 1
    assert ran >= 1
