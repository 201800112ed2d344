"""What the run prints: throughput and latency per route, in calm and in each fault's window;
the money rules (held or broken, with their numbers); and what else went wrong (5xx answers,
processes that died, error lines in the service's logs)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from .faults import Window
from .verify import Rule

SKIPPED_ROUTES = {"register", "account", "webhook subscribe"}
CHALLENGE = " (402 challenge)"


def _route(name: str) -> str | None:
    if name in SKIPPED_ROUTES:
        return None
    return "x402 challenge (unpaid 402)" if name.endswith(CHALLENGE) else name


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q * len(ordered) + 0.5)) - 1))]


def phase_of(t: float, windows: list[Window], load_start: float, load_end: float, ms: float = 0.0) -> str | None:
    """The phase of a request that started at t and lasted ms: the fault window it overlaps
    (a request started just before a fault and caught by it is the fault's), else calm."""
    if not load_start <= t < load_end:
        return None
    end = t + ms / 1000
    for w in windows:
        if t < w.end and end >= w.start:
            return w.name
    return "calm"


def phase_seconds(windows: list[Window], load_start: float, load_end: float) -> dict[str, float]:
    seconds = {w.name: max(w.end - w.start, 0.001) for w in windows}
    seconds["calm"] = max(load_end - load_start - sum(seconds.values()), 0.001)
    return seconds


def table(
    requests: list[dict[str, Any]],
    arrivals: dict[str, list[dict[str, Any]]],
    t0: float,
    windows: list[Window],
    load_start: float,
    load_end: float,
) -> list[str]:
    """One row per route and phase: requests, answers as expected per second, p50/p99 of the
    answered requests, 4xx, 5xx and no answer (connection refused, reset or timed out)."""
    rows: dict[tuple[str, str], dict[str, Any]] = defaultdict(
        lambda: {"n": 0, "ok": 0, "ms": [], "4xx": 0, "5xx": 0, "none": 0}
    )
    for r in requests:
        route = _route(r["route"])
        phase = phase_of(r["t"], windows, load_start, load_end, r["ms"])
        if route is None or phase is None:
            continue
        row = rows[(route, phase)]
        row["n"] += 1
        status = r["status"]
        expected = status == 402 if route.startswith("x402 challenge") else 200 <= status < 300
        row["ok"] += expected
        if status:
            row["ms"].append(r["ms"])
        if status == 0:
            row["none"] += 1
        elif status >= 500:
            row["5xx"] += 1
        elif status >= 400 and not expected:
            row["4xx"] += 1
    for kind, got in arrivals.items():
        for a in got:
            phase = phase_of(a["t"] - t0, windows, load_start, load_end)
            if phase is None:
                continue
            row = rows[(f"webhook -> {kind} receiver", phase)]
            row["n"] += 1
            row["ok"] += kind != "fail"
            if a["lag_ms"] is not None:
                row["ms"].append(a["lag_ms"])
    seconds = phase_seconds(windows, load_start, load_end)
    order = ["calm", *(w.name for w in windows)]
    lines = [
        f"{'route':<30}{'phase':<15}{'req':>7}{'ok/s':>8}{'p50 ms':>9}{'p99 ms':>9}{'4xx':>6}{'5xx':>6}{'none':>6}"
    ]
    for route in sorted({k[0] for k in rows}):
        for phase in order:
            cell = rows.get((route, phase))
            if cell is None:
                continue
            lines.append(
                f"{route[:29]:<30}{phase:<15}{cell['n']:>7}{cell['ok'] / seconds[phase]:>8.2f}"
                f"{_pct(cell['ms'], 0.5):>9.0f}{_pct(cell['ms'], 0.99):>9.0f}{cell['4xx']:>6}{cell['5xx']:>6}{cell['none']:>6}"
            )
    lines.append(
        "phase seconds: " + ", ".join(f"{p} {seconds[p]:.0f}" for p in order)
        + ". ok: 2xx (402 for challenges); webhook rows: arrivals, latency = event written -> arrival"
    )
    return lines


def rules_text(rules: list[Rule]) -> list[str]:
    lines = []
    for rule in rules:
        lines.append(f"[{'HELD  ' if rule.held else 'BROKEN'}] {rule.name}")
        lines += [f"           {line}" for line in rule.lines[:25]]
        if len(rule.lines) > 25:
            lines.append(f"           ... {len(rule.lines) - 25} more")
    return lines


LOG_LEVEL = re.compile(r"\b(CRITICAL|ERROR)\b[^ ]*\]? ?(.*)")
_NOISE = re.compile(r"\[[0-9a-f-]{36}\]|0x[0-9a-fA-F]{6,}|\d+(\.\d+)?")


def log_findings(logs: Path) -> list[str]:
    """Per process log: its ERROR and CRITICAL lines by kind (numbers, ids and hashes folded so
    that repeats count as one kind), and how many tracebacks it printed."""
    lines = []
    for log in sorted(logs.glob("*.log")):
        kinds: Counter[str] = Counter()
        tracebacks, in_trace = 0, False
        for text in log.read_text(errors="replace").splitlines():
            if text.startswith("Traceback"):
                tracebacks, in_trace = tracebacks + 1, True
                continue
            if in_trace and text and not text.startswith((" ", "During handling", "The above exception")):
                # A traceback's last line: the exception that ended it.
                kinds["raised " + _NOISE.sub("#", text)[:150]] += 1
                in_trace = False
                continue
            found = LOG_LEVEL.search(text)
            if found:
                kinds[f"{found.group(1)} " + _NOISE.sub("#", found.group(2))[:150]] += 1
        if kinds:
            lines.append(f"  {log.name}: {sum(kinds.values())} error lines, {tracebacks} tracebacks")
            lines += [f"    {n:>5} x {kind}" for kind, n in kinds.most_common(8)]
    return lines


def refusals_by_phase(
    requests: list[dict[str, Any]], windows: list[Window], load_start: float, load_end: float
) -> list[str]:
    """Why requests were not answered as expected, per phase: (route, status, code) counts."""
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    for r in requests:
        route = _route(r["route"])
        phase = phase_of(r["t"], windows, load_start, load_end, r["ms"])
        if route is None or phase is None:
            continue
        status = r["status"]
        if (status == 402 and route.startswith("x402 challenge")) or 200 <= status < 300:
            continue
        kinds[phase][f"{route} {status or r.get('error', 'no answer')} {r.get('code', '')}".strip()] += 1
    lines = []
    for phase in ["calm", *(w.name for w in windows)]:
        if kinds.get(phase):
            top = ", ".join(f"{n} x {k}" for k, n in kinds[phase].most_common(6))
            lines.append(f"  {phase}: {top}")
    return lines


def server_errors(requests: list[dict[str, Any]]) -> list[str]:
    """The 5xx answers by route and the most frequent bodies."""
    kinds: Counter[str] = Counter()
    for r in requests:
        if r["status"] >= 500:
            kinds[f"{r['status']} {_route(r['route']) or r['route']}: {str(r.get('detail', ''))[:140]}"] += 1
    return [f"    {n:>5} x {kind}" for kind, n in kinds.most_common(12)]
