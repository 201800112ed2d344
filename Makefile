# The two commands: `make run` (the whole local stack) and `make test` (the whole suite).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
export PORT
# Python keeps the bytecode of what it compiles (the project's own modules; the installed ones are
# compiled at install): every test server, worker and manage.py start would otherwise compile the
# project's 450 modules again, half a second of CPU each.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test install migrate seed lint sizecheck lint-imports check-migrations typecheck bench chaos demo contracts clean help

help:
	@echo "make run    - install, migrate, seed, start web + Celery worker + beat on http://127.0.0.1:$(PORT)"
	@echo "make test   - install, lint, check module sizes and import layers, check migrations, type-check, run the whole test suite"
	@echo "make demo   - (with make run up) an agent pays for a SKU with the official x402 client"
	@echo "make bench  - benchmark side by side with a reference and print ratios"
	@echo "make chaos  - 50 agents for 5 minutes through faults; prints the table, exits 1 if a money rule broke"

# Install the pinned dependency tree into .venv; redone when the pins change. uv (pinned, from
# PyPI like every other package) installs the same pins as pip in seconds instead of about 70
# (measured in a clean clone here). --compile-bytecode: pip compiles every module at install and
# uv does not by default; without it each process compiles what it imports, every time, where
# PYTHONDONTWRITEBYTECODE is set (it is on this machine): a clean `make test` took 200 s longer.
UV_VERSION := 0.13.9
UV := $(VENV)/bin/uv
$(VENV)/.installed: requirements.lock requirements-nodeps.lock pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	$(UV) pip install --python $(PY) --quiet --compile-bytecode -r requirements.lock
	$(UV) pip install --python $(PY) --quiet --compile-bytecode --no-deps -r requirements-nodeps.lock
	$(UV) pip install --python $(PY) --quiet --no-deps -e .
	@touch $@

# anvil (the local chain) and solc come from the npm registry, pinned in package.json and
# package-lock.json. `npm ci` installs exactly the lock and never writes it (`npm install` would
# rewrite the tracked lock); the lock holds anvil's binaries for every platform (optional
# packages, one installed), so it is complete on any machine (tests/a2a_service/test_package_lock.py).
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# Chromium for the admin's browser tests (tests/e2e/test_admin_browser.py), from the distribution's
# packages (Playwright drives it; it never downloads a browser). Installed only when missing.
CHROMIUM_PATH ?= /usr/bin/chromium
export CHROMIUM_PATH
$(CHROMIUM_PATH):
	apt-get update -qq && apt-get install -y -qq chromium || (sudo apt-get update -qq && sudo apt-get install -y -qq chromium)

# haproxy for the two-node test (tests/e2e/test_two_nodes.py: two web nodes behind a load balancer,
# a2a_service/scripts/twonodes.py), from the distribution's packages. Installed only when missing.
HAPROXY_PATH ?= /usr/sbin/haproxy
export HAPROXY_PATH
$(HAPROXY_PATH):
	apt-get update -qq && apt-get install -y -qq haproxy || (sudo apt-get update -qq && sudo apt-get install -y -qq haproxy)

# promtool, from the distribution's `prometheus` package: the tests check the alert rules in
# docs/operations/ and run their unit tests with it (tests/a2a_service/core/test_alert_rules.py). Installed only when missing.
PROMTOOL ?= /usr/bin/promtool
export PROMTOOL
$(PROMTOOL):
	apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus || (sudo apt-get update -qq && sudo apt-get install -y -qq --no-install-recommends prometheus)

install: $(VENV)/.installed node_modules/.installed $(CHROMIUM_PATH) $(HAPROXY_PATH) $(PROMTOOL)

migrate: install
	@mkdir -p .run
	$(PY) manage.py migrate --noinput -v 1

seed: migrate
	$(PY) manage.py seed_catalog

# Settings named for the stack: a process importing a2a_service without DJANGO_SETTINGS_MODULE
# runs production settings (manage.py alone defaults to local).
run: seed
	$(PY) manage.py seed_local_sample
	$(PY) manage.py collectstatic --noinput -v 0
	DJANGO_SETTINGS_MODULE=$${DJANGO_SETTINGS_MODULE:-a2a_service.settings.local} $(PY) -m a2a_service.scripts.devstack

lint: install
	$(PY) -m ruff check .

# No Python module over 600 lines (migrations and recorded samples aside; a2a_service/scripts/sizecheck.py).
sizecheck: install
	$(PY) -m a2a_service.scripts.sizecheck

# Layer contracts (import-linter, configured in pyproject.toml [tool.importlinter]): apps import only
# downward (agents > sessions_app | webhooks > billing > catalog > a2a_service.core), no cycles;
# the scripts (a2a_service.scripts) are the top: nothing the service runs imports them.
lint-imports: install
	$(VENV)/bin/lint-imports

# On an in-memory database: the check compares the models with the migration files, and the
# suite's database (DATABASE_URL) need not exist yet (Django warned that it could not read it).
check-migrations: install
	DATABASE_URL=sqlite://:memory: $(PY) manage.py makemigrations --check --dry-run --settings=a2a_service.settings.test

# mypy with the django-stubs and drf-stubs plugins, configured in pyproject.toml ([tool.mypy]).
typecheck: install
	$(PY) -m mypy

# The suite runs in TEST_WORKERS pytest-xdist processes (each its own test database and Redis
# database); one more worker than this machine's two cores keeps them busy while tests wait on
# the servers and workers they start. TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 3
# mypy (a minute of one core on a clean checkout) and the migrations check run beside the suite,
# whose workers leave cores idle while they wait on the servers they start; their reports are
# printed after the suite's, and any of the three failing fails the target.
test: lint sizecheck lint-imports install
	@mkdir -p .run
	@echo "mypy and makemigrations --check run beside the suite; their reports follow the suite's"
	@( $(PY) -m mypy > .run/mypy.log 2>&1; echo $$? > .run/mypy.rc; \
	   $(MAKE) --no-print-directory check-migrations > .run/migrations.log 2>&1; echo $$? > .run/migrations.rc ) & beside=$$!; \
	$(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal; suite=$$?; \
	wait $$beside; cat .run/mypy.log .run/migrations.log; \
	test $$suite -eq 0 && test "$$(cat .run/mypy.rc)" -eq 0 && test "$$(cat .run/migrations.rc)" -eq 0

demo: install
	$(PY) -m a2a_service.scripts.demos.agent
	$(PY) -m a2a_service.scripts.demos.credits
	$(PY) -m a2a_service.scripts.demos.sessions
	$(PY) -m a2a_service.scripts.demos.signals
	$(PY) -m a2a_service.scripts.demos.delegation
	$(PY) -m a2a_service.scripts.demos.a2a
	$(PY) -m a2a_service.scripts.demos.mcp
	$(PY) -m a2a_service.scripts.demos.channels

contracts: install
	node billing/chain/compile.js

bench: install
	@command -v wrk >/dev/null && command -v redis-server >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk redis-server) || (sudo apt-get update -qq && sudo apt-get install -y -qq wrk redis-server)
	$(PY) -m a2a_service.scripts.bench

# Load and faults on a stack of its own (PostgreSQL cluster, Redis, anvil, granian, workers, beat),
# loopback only; CHAOS_ARGS="--quick" (8 agents, 1 minute) while developing. Not part of `make test`.
CHAOS_ARGS ?=
chaos: install
	@command -v redis-server >/dev/null || (apt-get update -qq && apt-get install -y -qq redis-server) || (sudo apt-get update -qq && sudo apt-get install -y -qq redis-server)
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq postgresql) || (sudo apt-get update -qq && sudo apt-get install -y -qq postgresql)
	$(PY) -m a2a_service.scripts.chaos $(CHAOS_ARGS)

clean:
	rm -rf .run
