"""Installing the npm tooling leaves the work tree clean (issue 23 item 12): `make run` and
`make test` install with `npm ci`, which never writes the tracked package-lock.json, and the
lock is complete for every platform (before, it held only linux-amd64's anvil binary: npm
install added the other platforms' entries, `npm ci` refused it)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from tests.support import ROOT


def test_the_lock_holds_every_package_any_platform_installs():
    lock = json.loads((ROOT / "package-lock.json").read_text())
    packages = lock["packages"]
    declared = json.loads((ROOT / "package.json").read_text())["devDependencies"]
    assert packages[""]["devDependencies"] == declared
    missing = [
        f"{path or 'package.json'} -> {name}"
        for path, entry in packages.items()
        for kind in ("dependencies", "optionalDependencies")
        for name in entry.get(kind, {})
        if f"node_modules/{name}" not in packages
    ]
    assert missing == []
    # anvil ships one binary package per platform; each is locked, at anvil's own version.
    anvil = packages["node_modules/@foundry-rs/anvil"]
    platforms = anvil["optionalDependencies"]
    assert len(platforms) >= 5
    for name, version in platforms.items():
        assert packages[f"node_modules/{name}"]["version"] == version == anvil["version"]
        assert packages[f"node_modules/{name}"]["integrity"].startswith("sha512-")


def test_the_makefile_installs_with_npm_ci_never_npm_install():
    makefile = (ROOT / "Makefile").read_text()
    recipes = [line.strip() for line in makefile.splitlines() if line.startswith("\t")]
    npm = [line for line in recipes if re.match(r"npm\s", line)]
    assert npm and all(line.startswith("npm ci ") for line in npm), npm


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_npm_ci_accepts_the_lock_offline_and_leaves_it_byte_for_byte(tmp_path):
    """What `make` runs, in a copy (dry run, offline, an empty cache: no download, no
    node_modules): npm finds the lock in sync with package.json, and does not rewrite it."""
    for name in ("package.json", "package-lock.json"):
        shutil.copy(ROOT / name, tmp_path / name)
    before = (tmp_path / "package-lock.json").read_bytes()
    done = subprocess.run(
        ["npm", "ci", "--dry-run", "--offline", "--no-audit", "--no-fund", "--cache", str(tmp_path / "cache")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "package-lock.json").read_bytes() == before
    assert not (tmp_path / "node_modules").exists()
