"""`make test`'s size check (a2a_service/scripts/sizecheck.py): every module over the limit is
listed, except migrations, recorded samples, what is not the project's and the pending ones."""

from __future__ import annotations

from pathlib import Path

from a2a_service.scripts.sizecheck import LIMIT, oversized, stale_pending


def _module(root: Path, rel: str, lines: int) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"x{n} = {n}\n" for n in range(lines)))


def test_modules_over_the_limit_are_listed_longest_first_and_the_rest_are_not(tmp_path):
    _module(tmp_path, "app/big.py", LIMIT + 1)
    _module(tmp_path, "app/bigger.py", LIMIT + 50)
    _module(tmp_path, "app/at_the_limit.py", LIMIT)
    _module(tmp_path, "top.py", LIMIT + 2)
    (tmp_path / "app" / "notes.txt").write_text("x\n" * (LIMIT + 1))
    assert oversized(tmp_path, pending=frozenset()) == [
        ("app/bigger.py", LIMIT + 50),
        ("top.py", LIMIT + 2),
        ("app/big.py", LIMIT + 1),
    ]


def test_migrations_samples_and_what_is_not_the_projects_are_not_counted(tmp_path):
    for rel in (
        "app/migrations/0001_initial.py",
        "catalog/feeds/samples/venue/answer.py",
        ".venv/lib/site.py",
        "node_modules/pkg/build.py",
        ".run/generated.py",
        "app/__pycache__/cached.py",
    ):
        _module(tmp_path, rel, LIMIT + 1)
    _module(tmp_path, "elsewhere/real.py", LIMIT + 1)
    (tmp_path / "linked").symlink_to(tmp_path / "elsewhere")
    assert oversized(tmp_path, pending=frozenset()) == [("elsewhere/real.py", LIMIT + 1)]


def test_pending_modules_are_allowed_and_a_pending_entry_within_the_limit_is_stale(tmp_path):
    _module(tmp_path, "app/splitting.py", LIMIT + 1)
    _module(tmp_path, "app/split.py", LIMIT - 1)
    pending = frozenset({"app/splitting.py", "app/split.py", "app/gone.py"})
    assert oversized(tmp_path, pending=pending) == []
    assert stale_pending(tmp_path, pending=pending) == ["app/gone.py", "app/split.py"]

