"""Correlated pairs: the z-score of the newest residual of one log price regressed on another's."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from catalog.analytics.series import Series


@dataclass(frozen=True)
class PairZ:
    a: str
    b: str
    correlation: float  # of the 1h log returns
    beta: float  # log(a) = alpha + beta x log(b)
    zscore: float  # of the newest residual against the window's residuals
    bars: int
    half_life_bars: float | None  # mean reversion speed of the residual (AR(1)), None if not reverting


def pair_zscores(series: Sequence[Series], *, min_corr: float, min_bars: int) -> list[PairZ]:
    """Pairs of series whose log returns correlate at `min_corr` or more over their common
    bars, with the z-score of the newest residual of log(a) regressed on log(b) (numpy:
    corrcoef, polyfit), strongest dislocation first."""
    if len(series) < 2:
        return []
    common = set(series[0].times)
    for s in series[1:]:
        common &= set(s.times)
    times = sorted(common)
    if len(times) < min_bars:
        return []
    cols = []
    for s in series:
        index = {t: i for i, t in enumerate(s.times)}
        cols.append(np.log(np.array([s.close[index[t]] for t in times], dtype=np.float64)))
    logs = np.vstack(cols)
    returns = np.diff(logs, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.corrcoef(returns)
    out = []
    for i in range(len(series)):
        for j in range(i + 1, len(series)):
            c = float(corr[i, j])
            if not math.isfinite(c) or c < min_corr:
                continue
            beta, alpha = np.polyfit(logs[j], logs[i], 1)
            resid = logs[i] - (alpha + beta * logs[j])
            sd = float(np.std(resid, ddof=1))
            if sd <= 0 or not math.isfinite(sd):
                continue
            z = float((resid[-1] - np.mean(resid)) / sd)
            phi = float(np.polyfit(resid[:-1], resid[1:], 1)[0]) if len(resid) > 2 else 1.0
            half_life = math.log(0.5) / math.log(phi) if 0 < phi < 1 else None
            out.append(
                PairZ(
                    a=series[i].symbol,
                    b=series[j].symbol,
                    correlation=c,
                    beta=float(beta),
                    zscore=z,
                    bars=len(times),
                    half_life_bars=half_life,
                )
            )
    out.sort(key=lambda p: abs(p.zscore), reverse=True)
    return out
