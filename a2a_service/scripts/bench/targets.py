"""The bench's ratios and their targets: each scenario records its ratios here as it prints
them, and `make bench` ends with the table and exits non-zero when a ratio misses its target
by more than the margin (for people and for the performance issues' demonstrations; not in CI:
no test depends on timing).

A "higher" target is a floor (ours / reference at least this); a "lower" one a ceiling (ours
/ reference at most this). A ratio within 10% of its target passes the guard; the table still
shows it as below target."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MARGIN = 0.9  # a ratio under 90% of its target (or over target / 0.9 for a ceiling) fails the run


@dataclass(frozen=True)
class Ratio:
    label: str
    value: float
    target: float
    better: Literal["higher", "lower"]

    @property
    def met(self) -> bool:
        return self.value >= self.target if self.better == "higher" else self.value <= self.target

    @property
    def guarded(self) -> bool:
        """Within the regression guard's margin of the target."""
        if self.better == "higher":
            return self.value >= self.target * MARGIN
        return self.value <= self.target / MARGIN

    def line(self) -> str:
        sign = ">=" if self.better == "higher" else "<="
        state = (
            "ok" if self.met else ("below target, within the guard" if self.guarded else "FAILS the guard")
        )
        return f"{self.label}: {self.value:.2f}x  (target {sign} {self.target:g}x)  {state}"


RATIOS: list[Ratio] = []


def ratio_record(
    label: str, value: float, *, target: float, better: Literal["higher", "lower"] = "higher"
) -> Ratio:
    """Record a ratio against its target and print its line."""
    ratio = Ratio(label=label, value=value, target=target, better=better)
    RATIOS.append(ratio)
    print(ratio.line())
    return ratio


def ratios_report() -> int:
    """The table of every ratio of this run; 1 if one fails the guard, else 0."""
    if not RATIOS:
        return 0
    print("\n== ratios against their targets (this run)")
    for ratio in RATIOS:
        print("  " + ratio.line())
    failed = [r for r in RATIOS if not r.guarded]
    if failed:
        print(f"{len(failed)} ratio(s) below 90% of their target: " + ", ".join(r.label for r in failed))
        return 1
    return 0
