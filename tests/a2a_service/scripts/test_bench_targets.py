"""The bench's regression guard: a ratio under 90% of its floor (or over its ceiling by more
than 1/0.9) fails `make bench`; within the margin it passes but is shown below target."""

from __future__ import annotations

import pytest

from a2a_service.scripts.bench import targets


@pytest.fixture(autouse=True)
def _empty():
    targets.RATIOS.clear()
    yield
    targets.RATIOS.clear()


def test_floors_and_ceilings_pass_within_ten_percent_and_fail_beyond(capsys):
    assert targets.ratio_record("floor met", 1.2, target=1.0).met
    near = targets.ratio_record("floor near", 0.91, target=1.0)
    assert not near.met and near.guarded
    assert targets.ratio_record("ceiling met", 0.7, target=0.8, better="lower").met
    near_ceiling = targets.ratio_record("ceiling near", 0.88, target=0.8, better="lower")
    assert not near_ceiling.met and near_ceiling.guarded  # 0.88 <= 0.8 / 0.9 = 0.889
    assert targets.ratios_report() == 0
    targets.ratio_record("ceiling missed", 0.9, target=0.8, better="lower")
    assert targets.ratios_report() == 1
    out = capsys.readouterr().out
    assert "floor near: 0.91x  (target >= 1x)  below target, within the guard" in out
    assert "ceiling missed: 0.90x  (target <= 0.8x)  FAILS the guard" in out
    assert "1 ratio(s) below 90% of their target: ceiling missed" in out


def test_a_floor_under_ninety_percent_fails():
    targets.ratio_record("free catalog", 0.89, target=1.0)
    assert targets.ratios_report() == 1
