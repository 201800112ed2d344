"""The Prometheus alert rules of docs/operations/alerts.yml are valid, and each alert's expression
is unit tested by promtool (docs/operations/alerts.test.yml): it fires on the series of its
failure and stays quiet on a healthy service's. promtool comes from the distribution's
`prometheus` package (`make install` installs it when missing)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import yaml

from tests.support import ROOT

OPERATIONS = ROOT / "docs" / "operations"
PROMTOOL = os.environ.get("PROMTOOL") if os.path.exists(os.environ.get("PROMTOOL", "")) else shutil.which("promtool")
pytestmark = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool is missing: `make install` installs Debian's prometheus package"
)


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None
    return subprocess.run([PROMTOOL, *args], cwd=OPERATIONS, capture_output=True, text=True, timeout=120)


def test_the_alert_rules_are_valid():
    done = promtool("check", "rules", "alerts.yml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_each_alert_fires_on_its_failure_and_stays_quiet_on_a_healthy_service():
    done = promtool("test", "rules", "alerts.test.yml")
    assert done.returncode == 0, done.stdout + done.stderr
    rules = yaml.safe_load((OPERATIONS / "alerts.yml").read_text())
    alerts = {rule["alert"] for group in rules["groups"] for rule in group["rules"] if "alert" in rule}
    tests = yaml.safe_load((OPERATIONS / "alerts.test.yml").read_text())["tests"]
    cases = [case for test in tests for case in test.get("alert_rule_test", [])]
    fired = {case["alertname"] for case in cases if case.get("exp_alerts")}
    quiet = {case["alertname"] for case in cases if not case.get("exp_alerts")}
    assert {"PaymentsFailing", "DepositsNotCredited", "FeedStale", "WebhookDeadLettersRising", "CeleryQueueBacklog"} <= alerts
    assert sorted(alerts - fired) == [], "an alert no test sees fire"
    assert sorted(alerts - quiet) == [], "an alert no test sees stay quiet"


def test_a_broken_expectation_fails(tmp_path):
    """The unit tests do test something: the same file expecting an alert that does not fire fails."""
    tests = yaml.safe_load((OPERATIONS / "alerts.test.yml").read_text())
    healthy = tests["tests"][0]
    healthy["alert_rule_test"][0]["exp_alerts"] = [{"exp_labels": {"severity": "page"}}]
    tests["rule_files"] = [str(OPERATIONS / "alerts.yml")]
    broken = tmp_path / "broken.test.yml"
    broken.write_text(yaml.safe_dump(tests))
    assert promtool("test", "rules", str(broken)).returncode != 0
