"""Production refuses to start without its secrets, or with any development value of them;
a server, worker or beat started without DJANGO_SETTINGS_MODULE runs production settings;
`manage.py check --deploy` is clean with a valid production environment."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys

import pytest

from tests.support import ROOT

# Everything production reads that a developer's shell (or CI) might have set.
PRODUCTION_VARS = (
    "DJANGO_SETTINGS_MODULE",
    "SECRET_KEY",
    "TREASURY_ADDRESS",
    "REDIS_URL",
    "DATABASE_URL",
    "ALLOWED_HOSTS",
    "FACILITATOR_PRIVATE_KEY",
    "ATTESTATION_PRIVATE_KEY",
    "INGEST_TOKEN",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_PRELOAD",
    "USE_X_FORWARDED_HOST",
    "FACILITATOR_URL",
    "PUBLIC_BASE_URL",
)


def production_env() -> dict[str, str]:
    """A valid production environment: a random key, a real-looking treasury, PostgreSQL, Redis."""
    database_url = os.environ.get("DATABASE_URL", "")
    if not database_url.startswith("postgres"):
        database_url = "postgres://postgres@127.0.0.1:5432/a2a_service"  # not connected to
    return {
        "DJANGO_SETTINGS_MODULE": "a2a_service.settings.production",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "TREASURY_ADDRESS": "0x" + secrets.token_hex(20),
        "REDIS_URL": os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0",
        "DATABASE_URL": database_url,
        "ALLOWED_HOSTS": "api.example.com",
        # A facilitator run as its own process on an internal address.
        "FACILITATOR_URL": "http://facilitator.internal:8000/api/a2a/facilitator",
    }


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in PRODUCTION_VARS}
    return subprocess.run(
        [sys.executable, *args],
        env={**clean, **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _import_production(env: dict[str, str]) -> subprocess.CompletedProcess:
    return _run(["-c", "import django; django.setup()"], env)


def test_production_refuses_to_start_without_secret_key():
    env = production_env()
    del env["SECRET_KEY"]
    result = _import_production(env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and "SECRET_KEY" in result.stderr


def test_production_refuses_to_start_without_allowed_hosts():
    env = production_env()
    del env["ALLOWED_HOSTS"]
    result = _import_production(env)
    assert result.returncode != 0
    assert "ALLOWED_HOSTS" in result.stderr


def test_production_starts_with_its_secrets():
    result = _run(
        [
            "-c",
            "import django; django.setup(); from django.conf import settings as s; "
            "print(s.DEBUG, s.ALLOWED_HOSTS, s.USE_X_FORWARDED_HOST, s.SECURE_SSL_REDIRECT, "
            "s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS)",
        ],
        production_env(),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[0] == "False ['api.example.com'] False True 31536000 True"


def test_production_transport_settings_follow_the_environment():
    env = {
        **production_env(),
        "SECURE_SSL_REDIRECT": "false",
        "SECURE_HSTS_SECONDS": "600",
        "USE_X_FORWARDED_HOST": "true",
    }
    result = _run(
        [
            "-c",
            "import django; django.setup(); from django.conf import settings as s; "
            "print(s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS, s.USE_X_FORWARDED_HOST)",
        ],
        env,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False 600 True"


def _dev_values() -> list[tuple[str, str, str]]:
    """(variable, development value, what the refusal names) for every public development
    value in the repository: local.py, test.py and the ten anvil accounts."""
    from a2a_service.settings import local, test
    from billing.chain.localchain import dev_account

    values = [
        ("SECRET_KEY", local.SECRET_KEY, "SECRET_KEY"),
        ("SECRET_KEY", test.SECRET_KEY, "SECRET_KEY"),
        ("SECRET_KEY", "django-insecure-" + "k" * 50, "SECRET_KEY"),
        ("SECRET_KEY", "x" * 60, "SECRET_KEY"),  # long but not varied (Django's W009)
        ("SECRET_KEY", secrets.token_urlsafe(20), "SECRET_KEY"),  # too short
        ("INGEST_TOKEN", local.INGEST_TOKEN, "INGEST_TOKEN"),
        ("INGEST_TOKEN", test.INGEST_TOKEN, "INGEST_TOKEN"),
        ("TREASURY_ADDRESS", local.TREASURY_ADDRESS, "TREASURY_ADDRESS"),
        ("TREASURY_ADDRESS", "0x" + "0" * 40, "TREASURY_ADDRESS"),
        ("TREASURY_ADDRESS", "not-an-address", "TREASURY_ADDRESS"),
        ("FACILITATOR_PRIVATE_KEY", local.FACILITATOR_PRIVATE_KEY, "FACILITATOR_PRIVATE_KEY"),
        ("ATTESTATION_PRIVATE_KEY", local.ATTESTATION_PRIVATE_KEY, "ATTESTATION_PRIVATE_KEY"),
        ("ATTESTATION_PRIVATE_KEY", test.ATTESTATION_PRIVATE_KEY, "ATTESTATION_PRIVATE_KEY"),
        ("ALLOWED_HOSTS", "api.example.com,testserver", "testserver"),
        ("DATABASE_URL", "sqlite:////tmp/a2a.sqlite3", "PostgreSQL"),
    ]
    for index in range(10):
        account = dev_account(index)
        key = account.key.hex()
        values.append(("TREASURY_ADDRESS", account.address, "TREASURY_ADDRESS"))
        values.append(("TREASURY_ADDRESS", account.address.lower(), "TREASURY_ADDRESS"))
        values.append(("FACILITATOR_PRIVATE_KEY", "0x" + key.removeprefix("0x"), "FACILITATOR_PRIVATE_KEY"))
        values.append(("ATTESTATION_PRIVATE_KEY", key.removeprefix("0x").upper(), "ATTESTATION_PRIVATE_KEY"))
    return values


def test_production_refuses_every_development_value():
    """Checked in-process against the function production runs at import (one subprocess per
    value would take minutes); the next test shows the import refusing in a real process."""
    from a2a_service.settings.refusals import ANVIL_DEV_ACCOUNTS, production_refusals
    from billing.chain.localchain import dev_account

    # The table production checks is the anvil derivation, all ten accounts.
    for index in range(10):
        address, key = ANVIL_DEV_ACCOUNTS[index]
        assert address == dev_account(index).address
        assert key.removeprefix("0x") == dev_account(index).key.hex().removeprefix("0x")

    def refusals(env: dict[str, str]) -> list[str]:
        import environ

        database = environ.Env.db_url_config(env["DATABASE_URL"])
        return production_refusals(
            secret_key=env["SECRET_KEY"],
            treasury_address=env["TREASURY_ADDRESS"],
            redis_url=env["REDIS_URL"],
            database_engine=database["ENGINE"],
            allowed_hosts=env["ALLOWED_HOSTS"].split(","),
            facilitator_private_key=env.get("FACILITATOR_PRIVATE_KEY", ""),
            attestation_private_key=env.get("ATTESTATION_PRIVATE_KEY", ""),
            ingest_token=env.get("INGEST_TOKEN", ""),
            facilitator_url=env.get("FACILITATOR_URL", ""),
            public_base_url=env.get("PUBLIC_BASE_URL", ""),
        )

    assert refusals(production_env()) == []
    fresh_key = "0x" + secrets.token_hex(32)
    assert refusals({**production_env(), "FACILITATOR_PRIVATE_KEY": fresh_key}) == []
    values = _dev_values()
    assert len(values) == 55
    for name, value, named in values:
        problems = refusals({**production_env(), name: value})
        assert len(problems) == 1 and named in problems[0], (name, value, problems)


@pytest.mark.parametrize(
    "name, value",
    [
        ("SECRET_KEY", "local-development-only-not-a-secret"),
        ("TREASURY_ADDRESS", "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720"),  # anvil #9
        ("FACILITATOR_PRIVATE_KEY", "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"),
        ("ATTESTATION_PRIVATE_KEY", "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97"),
        ("INGEST_TOKEN", "local-ingest-token"),
    ],
)
def test_production_process_refuses_development_values(name, value):
    result = _import_production({**production_env(), name: value})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and name in result.stderr.splitlines()[-1]


@pytest.mark.parametrize(
    "code",
    [
        "import a2a_service.wsgi",
        # The worker and beat load settings when the app reads its configuration.
        "from a2a_service.celery import app; app.conf.broker_url",
    ],
)
def test_server_and_worker_without_settings_module_run_production(code):
    """No DJANGO_SETTINGS_MODULE and no secrets: production is chosen, and it refuses."""
    env = production_env()
    for name in ("DJANGO_SETTINGS_MODULE", "SECRET_KEY", "TREASURY_ADDRESS"):
        del env[name]
    result = _run(["-c", f"import os\n{code}"], env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert (
        "production settings need these environment variables: SECRET_KEY, TREASURY_ADDRESS" in result.stderr
    )
    # With its secrets the same process starts, and it is production (DEBUG off).
    result = _run(
        [
            "-c",
            f"import os\n{code}\nfrom django.conf import settings\n"
            "print(os.environ['DJANGO_SETTINGS_MODULE'], settings.DEBUG)",
        ],
        {k: v for k, v in production_env().items() if k != "DJANGO_SETTINGS_MODULE"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "a2a_service.settings.production False"


def test_manage_py_check_deploy_is_clean_in_production():
    result = _run(["manage.py", "check", "--deploy", "--fail-level", "DEBUG"], production_env())
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "WARNING" not in output.upper() and "ERROR" not in output.upper(), output
    assert "System check identified no issues" in output, output


def test_production_refuses_a_facilitator_that_points_back_at_the_service():
    """A paid call holds a worker while it asks the facilitator: through the service's own
    public address that waits for a worker of the same pool (one worker: a deadlock)."""
    from a2a_service.settings.refusals import production_refusals

    def refusals(**changes: str) -> list[str]:
        env = {**production_env(), **changes}
        return production_refusals(
            secret_key=env["SECRET_KEY"],
            treasury_address=env["TREASURY_ADDRESS"],
            redis_url=env["REDIS_URL"],
            database_engine="django.db.backends.postgresql",
            allowed_hosts=env["ALLOWED_HOSTS"].split(","),
            facilitator_private_key=env.get("FACILITATOR_PRIVATE_KEY", ""),
            attestation_private_key="",
            ingest_token="",
            facilitator_url=env.get("FACILITATOR_URL", ""),
            public_base_url=env.get("PUBLIC_BASE_URL", ""),
        )

    own = "https://api.example.com/api/a2a/facilitator"
    assert "points back" in refusals(FACILITATOR_URL=own)[0]
    assert (
        "points back"
        in refusals(
            FACILITATOR_URL="https://shop.example.org/api/a2a/facilitator",
            PUBLIC_BASE_URL="https://shop.example.org",
        )[0]
    )
    assert "needs a facilitator" in refusals(FACILITATOR_URL="")[0]
    # In process (no URL, a key of its own) or a separate process: both fine.
    assert refusals(FACILITATOR_URL="", FACILITATOR_PRIVATE_KEY="0x" + secrets.token_hex(32)) == []
    assert refusals() == []


def test_production_refuses_channels_without_their_authorizer_key_or_with_a_dev_key():
    """Payment channels sold without the receiver authorizer could never be claimed."""
    from a2a_service.settings.refusals import ANVIL_DEV_ACCOUNTS, production_refusals

    def refusals(*, enabled: bool, key: str) -> list[str]:
        env = production_env()
        return production_refusals(
            secret_key=env["SECRET_KEY"],
            treasury_address=env["TREASURY_ADDRESS"],
            redis_url=env["REDIS_URL"],
            database_engine="django.db.backends.postgresql",
            allowed_hosts=env["ALLOWED_HOSTS"].split(","),
            facilitator_private_key=env.get("FACILITATOR_PRIVATE_KEY", ""),
            attestation_private_key="",
            ingest_token="",
            facilitator_url=env.get("FACILITATOR_URL", ""),
            channels_enabled=enabled,
            receiver_authorizer_private_key=key,
        )

    assert refusals(enabled=False, key="") == []
    assert any("RECEIVER_AUTHORIZER_PRIVATE_KEY" in p for p in refusals(enabled=True, key=""))
    assert refusals(enabled=True, key="0x" + secrets.token_hex(32)) == []
    dev_key = ANVIL_DEV_ACCOUNTS[7][1]
    assert any("anvil development key" in p for p in refusals(enabled=True, key=dev_key))
