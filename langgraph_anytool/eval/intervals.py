"""Confidence intervals and exact tests for pass rates and per-query costs (`eval passrate`, `eval compare`, the
run report's index).

Every interval here is a **percentile bootstrap** over queries (Efron & Tibshirani, *An Introduction to the
Bootstrap*, ch. 13): draw `resamples` samples of n queries with replacement, compute the statistic on each, and
take the empirical `(1 - level) / 2` and `(1 + level) / 2` quantiles (numpy's default, linear interpolation).
Defaults: 10,000 resamples, 95 %, seed 0 (`numpy.random.default_rng(seed)`), so a re-run prints the same figures.

Why the percentile interval and not BCa: the statistics are means of 0/1 (or 0–1) outcomes, their differences, and
medians of paired differences. For a mean the bootstrap distribution is nearly symmetric, so BCa's bias and
acceleration corrections are small; its jackknife acceleration is undefined when all values are equal (a common
case in a small group: every query passed), and for the median (a non-smooth statistic) the jackknife is known to be
inconsistent. The percentile interval is range-preserving (a pass rate stays in [0, 1], a difference in [-1, 1]),
transformation-respecting, and anyone can reproduce it in four lines of numpy. Its known weakness: with few
queries (say under 20) it is too narrow; read it as a sketch there.

Pairing: `paired_bootstrap_mean_diff(a, b)` resamples *queries* (pairs), never the two runs independently, so the
interval reflects that both runs answered the same queries. It resamples the differences `b - a`, which gives
exactly the same figures as resampling pairs and taking `mean(b*) - mean(a*)`.

`mcnemar_exact(b, c)`: the exact McNemar test, i.e. the two-sided exact binomial (sign) test on the discordant pairs:
under the null each of the `b + c` discordant queries goes either way with probability 1/2, and
`p = min(1, 2 * P(X <= min(b, c)))`, `X ~ Binomial(b + c, 1/2)`; `p = 1` when there is no discordant pair. It is
computed with integers (no floating-point sums). For graded scores (SoPR's 0 / 0.5 / 1) the same function is the
sign test on the queries whose score rose (`c`) or fell (`b`).

This module is the one place these are computed: keep its functions' names and signatures stable.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

import numpy as np

RESAMPLES = 10_000
LEVEL = 0.95
SEED = 0
METHOD = "percentile bootstrap"
_CHUNK_CELLS = 2_000_000  # resample indices drawn per chunk (16 MB of int64): memory stays flat for any n


@dataclass(frozen=True)
class Interval:
    """A confidence interval `[low, high]` of some statistic, with how it was computed."""

    low: float
    high: float
    level: float = LEVEL
    resamples: int = RESAMPLES
    seed: int = SEED
    method: str = METHOD

    def scaled(self, factor: float) -> Interval:
        """The same interval in other units (e.g. `scaled(100)`: a fraction → percent)."""
        return Interval(self.low * factor, self.high * factor, self.level, self.resamples, self.seed, self.method)

    def text(self, digits: int = 1, *, signed: bool = False) -> str:
        """e.g. `[-3.5, 12.0]` (`signed`: `[-3.5, +12.0]`)."""
        fmt = f"{{:+.{digits}f}}" if signed else f"{{:.{digits}f}}"
        return f"[{fmt.format(self.low)}, {fmt.format(self.high)}]"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _values(values: Sequence[float] | np.ndarray, what: str = "values") -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{what}: expected a flat sequence of numbers, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{what}: no values to compute an interval from")
    if not np.isfinite(arr).all():
        raise ValueError(f"{what}: every value must be a finite number")
    return arr


def bootstrap_distribution(values: Sequence[float] | np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], *,
                           resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """`statistic` on `resamples` resamples of `values` (n draws with replacement each).

    The draws are `numpy.random.default_rng(seed).integers(0, n, size=(resamples, n))`, taken in chunks of rows
    (the same numbers as one call: the generator's stream is consumed in order). `statistic` maps a
    `(rows, n)` array to `rows` values (e.g. `lambda x: x.mean(axis=1)`)."""
    arr = _values(values)
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    n = arr.size
    rng = np.random.default_rng(seed)
    rows = max(1, _CHUNK_CELLS // n)
    out = np.empty(resamples, dtype=float)
    for start in range(0, resamples, rows):
        k = min(rows, resamples - start)
        out[start:start + k] = statistic(arr[rng.integers(0, n, size=(k, n))])
    return out


def percentile_interval(distribution: np.ndarray, *, level: float = LEVEL, resamples: int = RESAMPLES,
                        seed: int = SEED) -> Interval:
    """The `level` percentile interval of a bootstrap distribution (numpy's linear-interpolation quantiles)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    alpha = (1 - level) / 2
    low, high = np.quantile(distribution, [alpha, 1 - alpha])
    return Interval(float(low), float(high), level, resamples, seed)


def _mean(x: np.ndarray) -> np.ndarray:
    return np.asarray(x.mean(axis=1))


def _median(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.median(x, axis=1))


def bootstrap_mean(values: Sequence[float] | np.ndarray, *, level: float = LEVEL, resamples: int = RESAMPLES,
                   seed: int = SEED) -> Interval:
    """Interval of the mean of `values` over queries (one run: a pass rate from 0/1 outcomes, SoPR from per-query
    mean scores). In the values' units: multiply by 100 for percent (`Interval.scaled`)."""
    dist = bootstrap_distribution(values, _mean, resamples=resamples, seed=seed)
    return percentile_interval(dist, level=level, resamples=resamples, seed=seed)


def _paired(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> np.ndarray:
    x, y = _values(a, "run A"), _values(b, "run B")
    if x.size != y.size:
        raise ValueError(f"paired values: run A has {x.size}, run B has {y.size}; pair them by query first")
    return np.asarray(y - x)


def paired_bootstrap_mean_diff(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *,
                               level: float = LEVEL, resamples: int = RESAMPLES, seed: int = SEED) -> Interval:
    """Interval of `mean(b) - mean(a)`, `a[i]` and `b[i]` being the same query in runs A and B (queries resampled as
    pairs)."""
    dist = bootstrap_distribution(_paired(a, b), _mean, resamples=resamples, seed=seed)
    return percentile_interval(dist, level=level, resamples=resamples, seed=seed)


def median_diff(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """The median of the paired differences `b[i] - a[i]` (not the difference of the medians)."""
    return float(np.median(_paired(a, b)))


def paired_bootstrap_median_diff(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *,
                                 level: float = LEVEL, resamples: int = RESAMPLES, seed: int = SEED) -> Interval:
    """Interval of `median_diff(a, b)` (tokens, model calls or cost per query), queries resampled as pairs."""
    dist = bootstrap_distribution(_paired(a, b), _median, resamples=resamples, seed=seed)
    return percentile_interval(dist, level=level, resamples=resamples, seed=seed)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: `b` queries passed in A only, `c` in B only (the discordant pairs).

    `p = min(1, 2 * sum_{k <= min(b, c)} C(b + c, k) / 2^(b + c))`; 1.0 when `b + c == 0`. Also the exact sign test
    on graded scores (`b` fell, `c` rose)."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2 ** n)))


__all__ = [
    "LEVEL",
    "METHOD",
    "RESAMPLES",
    "SEED",
    "Interval",
    "bootstrap_distribution",
    "bootstrap_mean",
    "mcnemar_exact",
    "median_diff",
    "paired_bootstrap_mean_diff",
    "paired_bootstrap_median_diff",
    "percentile_interval",
]
