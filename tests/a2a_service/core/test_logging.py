"""Each log record is printed once (also under granian with DEBUG on), and the 4xx answers the
API gives by design are logged at INFO, not as warnings; 5xx stay errors."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.http import HttpResponse
from django.test import RequestFactory
from django.utils.log import log_response

from tests.support import ROOT

pytestmark = pytest.mark.django_db


def _request_records(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "django.request"]


def test_expected_client_errors_are_info(api, caplog):
    caplog.set_level(logging.INFO)
    answers = {
        "/api/a2a/no-such-operation": 404,
        "/api/a2a/x402/payments/dual-rail-status": 402,  # unpaid: the payment challenge
        "/api/a2a/account": 401,  # no key
        "/api/a2a/session/status?token=short": 422,
    }
    for path, status in answers.items():
        caplog.clear()
        assert api.get(path).status_code == status, path
        records = _request_records(caplog)
        assert [(r.levelname, r.status_code) for r in records] == [("INFO", status)], path
    caplog.clear()
    assert api.delete("/api/a2a/discovery/storefront").status_code == 405
    assert [r.levelname for r in _request_records(caplog)] == ["INFO"]


def test_other_4xx_stay_warnings_and_5xx_errors(caplog):
    caplog.set_level(logging.INFO)
    request = RequestFactory().get("/api/a2a/anything")
    for status, level in [(400, "WARNING"), (403, "WARNING"), (500, "ERROR"), (502, "ERROR"), (429, "INFO")]:
        caplog.clear()
        log_response("answered %s", status, response=HttpResponse(status=status), request=request)
        assert [r.levelname for r in _request_records(caplog)] == [level], status
    # The product that is not available (503) is an answer we chose: not logged at all.
    caplog.clear()
    log_response("unavailable", response=HttpResponse(status=503), request=request)
    assert _request_records(caplog) == []


def test_expected_client_errors_are_not_logged_when_info_is_off(api, caplog):
    caplog.set_level(logging.WARNING)
    logging.getLogger("django.request").setLevel(logging.WARNING)
    try:
        assert api.get("/api/a2a/no-such-operation").status_code == 404
    finally:
        logging.getLogger("django.request").setLevel(logging.NOTSET)
    assert _request_records(caplog) == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_granian_prints_each_record_once(tmp_path):
    """A real granian process with the local settings and DEBUG on (the case that printed
    every django.request line twice: Django's own DEBUG console handler and the root's)."""
    port = _free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "a2a_service.settings.local",
        "DJANGO_DEBUG": "true",
        "A2A_RUN_DIR": str(tmp_path),
        "PYTHONUNBUFFERED": "1",
    }
    out = tmp_path / "granian.log"
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "granian"),
                "--interface",
                "wsgi",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                "1",
                "a2a_service.wsgi:application",
            ],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/api/a2a/no-such-operation-1", timeout=2)
                except urllib.error.HTTPError as exc:
                    assert exc.code == 404
                    break
                except OSError:
                    assert proc.poll() is None, out.read_text()
                    assert time.monotonic() < deadline, out.read_text()
                    time.sleep(0.3)
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/a2a/no-such-operation-2", timeout=5)
            assert err.value.code == 404
            time.sleep(0.5)
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    text = out.read_text()
    lines = [line for line in text.splitlines() if "no-such-operation-2" in line]
    assert len(lines) == 1, text
    assert " INFO django.request Not Found: /api/a2a/no-such-operation-2" in lines[0], text
