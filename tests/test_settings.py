"""Production refuses to start without its secrets."""

from __future__ import annotations

import os
import subprocess
import sys


def _import_production(env: dict[str, str]) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "TREASURY_ADDRESS", "REDIS_URL")}
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={**clean, "DJANGO_SETTINGS_MODULE": "a2a_service.settings.production", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_production_refuses_to_start_without_secret_key():
    result = _import_production({})
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_production_starts_with_its_secrets():
    result = _import_production(
        {
            "SECRET_KEY": "x" * 50,
            "TREASURY_ADDRESS": "0x" + "1" * 40,
            "REDIS_URL": "redis://127.0.0.1:6379/0",
            "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/a2a_service",
        }
    )
    assert result.returncode == 0, result.stderr
