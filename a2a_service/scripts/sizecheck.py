"""`make test`'s size check: no Python module over LIMIT lines (`python -m a2a_service.scripts.sizecheck`).

A module that long holds more than one idea: split it by what its parts do. Not counted:
migrations (generated), the recorded samples (catalog/feeds/samples/), and what is not the
project's (.venv, node_modules, hidden and build folders). Exit status 1 lists every module over
the limit, longest first."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 600
# Folders never walked: generated code, recorded data, and what the project does not write.
SKIPPED_NAMES = frozenset({"migrations", "node_modules", "__pycache__", "build", "dist"})
SKIPPED_PATHS = frozenset({"catalog/feeds/samples"})
# Modules allowed over the limit while a branch splits them (empty: every module is within it).
# An entry within the limit is reported as stale.
PENDING: frozenset[str] = frozenset()


def modules(root: Path, folder: Path | None = None) -> Iterator[Path]:
    """Every .py file under root outside the skipped folders (symbolic links not followed)."""
    for entry in sorted((folder or root).iterdir()):
        if entry.is_symlink():
            continue
        if entry.is_dir():
            skipped = entry.name.startswith(".") or entry.name.endswith(".egg-info")
            if skipped or entry.name in SKIPPED_NAMES or entry.relative_to(root).as_posix() in SKIPPED_PATHS:
                continue
            yield from modules(root, entry)
        elif entry.suffix == ".py":
            yield entry


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def oversized(root: Path, *, limit: int = LIMIT, pending: frozenset[str] = PENDING) -> list[tuple[str, int]]:
    """(path relative to root, lines) of every module over the limit and not pending, longest first."""
    found = [(p.relative_to(root).as_posix(), line_count(p)) for p in modules(root)]
    return sorted(
        ((rel, n) for rel, n in found if n > limit and rel not in pending), key=lambda row: (-row[1], row[0])
    )


def stale_pending(root: Path, *, limit: int = LIMIT, pending: frozenset[str] = PENDING) -> list[str]:
    """Pending entries that are gone or within the limit now: the list should lose them."""
    return sorted(rel for rel in pending if not (root / rel).is_file() or line_count(root / rel) <= limit)


def main() -> int:
    for rel in stale_pending(ROOT):
        print(f"sizecheck: {rel} is within {LIMIT} lines now (or gone): remove it from PENDING")
    over = oversized(ROOT)
    if not over:
        return 0
    print(f"sizecheck: {len(over)} Python modules over {LIMIT} lines (split each by what its parts do):")
    for rel, n in over:
        print(f"  {rel}: {n} lines")
    return 1


if __name__ == "__main__":
    sys.exit(main())
