"""The suite's own layout: test modules share code only through tests/support/ (a test module
imported by another runs its tests' module-level setup there and ties two unrelated files
together), every directory of tests is a package (pytest then names each module by its dotted
path, so two test files of one name in two directories never clash), and no module is over
600 lines."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# Stand-ins for agent frameworks, put on a subprocess's path by their name: not packages of the suite.
NOT_PACKAGES = {TESTS / "support" / "pack_stubs"}
MAX_LINES = 600


def modules() -> list[Path]:
    return sorted(
        p
        for p in TESTS.rglob("*.py")
        if not any(d in p.parents for d in NOT_PACKAGES) and "__pycache__" not in p.parts
    )


def imported(path: Path) -> set[str]:
    """Every module `path` imports, by its absolute dotted name (relative imports resolved)."""
    package = ".".join(path.relative_to(TESTS.parent).with_suffix("").parts[:-1])
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)  # `from tests.x import test_y`
    return names


def enclosing_test_module(name: str) -> str | None:
    """The test module a dotted name is in or under (`tests.billing.test_credits.funded`), if any."""
    parts = name.split(".")
    if parts[0] != "tests":
        return None
    at = next((i for i, part in enumerate(parts) if part.startswith("test_")), None)
    return None if at is None else ".".join(parts[: at + 1])


def test_no_module_of_the_suite_imports_a_test_module():
    offenders = {
        f"{path.relative_to(TESTS.parent)} imports {found}"
        for path in modules()
        for name in imported(path)
        if (found := enclosing_test_module(name))
    }
    assert not offenders, "share it through tests/support/ instead:\n" + "\n".join(sorted(offenders))


def test_every_directory_of_the_suite_is_a_package():
    directories = {path.parent for path in modules()}
    assert (
        sorted(str(d.relative_to(TESTS.parent)) for d in directories if not (d / "__init__.py").is_file())
        == []
    )


def test_no_module_of_the_suite_is_over_600_lines():
    long = {
        str(p.relative_to(TESTS.parent)): n
        for p in modules()
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}
