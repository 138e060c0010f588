"""The statistics behind `eval compare`, `eval passrate`'s interval and the report's index: exact McNemar p-values
computed by hand, bootstrap intervals known exactly (identical pairs, tiny cases enumerated over every resample),
and a seeded interval checked against a straightforward numpy implementation written here."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from langgraph_anytool.eval.intervals import (
    Interval,
    bootstrap_distribution,
    bootstrap_mean,
    mcnemar_exact,
    median_diff,
    paired_bootstrap_mean_diff,
    paired_bootstrap_median_diff,
)


# ------------------------------------------------------------------------------------------------ McNemar
def test_mcnemar_exact_by_hand() -> None:
    # b = 1 (passed in A only), c = 5 (in B only): n = 6 discordant pairs, X ~ Binomial(6, 1/2)
    # P(X <= 1) = (C(6,0) + C(6,1)) / 2^6 = (1 + 6) / 64 = 7/64; two-sided p = 2 * 7/64 = 14/64 = 0.21875
    assert mcnemar_exact(1, 5) == 0.21875
    assert mcnemar_exact(5, 1) == 0.21875  # symmetric
    # b = 0, c = 6: P(X <= 0) = 1/64 → p = 2/64 = 0.03125
    assert mcnemar_exact(0, 6) == 0.03125
    # b = 0, c = 10: 2 / 1024 = 0.001953125
    assert mcnemar_exact(0, 10) == 0.001953125
    # b = 2, c = 7: n = 9, P(X <= 2) = (1 + 9 + 36) / 512 = 46/512 → p = 92/512 = 0.1796875
    assert mcnemar_exact(2, 7) == 0.1796875
    # b = c = 2: 2 * (1 + 4 + 6) / 16 = 22/16 > 1 → capped at 1
    assert mcnemar_exact(2, 2) == 1.0
    # no discordant pair: nothing to test
    assert mcnemar_exact(0, 0) == 1.0
    with pytest.raises(ValueError, match=">= 0"):
        mcnemar_exact(-1, 2)


def test_mcnemar_exact_is_exact_for_large_counts() -> None:
    # 2 * P(X <= 40), X ~ Bin(200, 1/2), summed in exact rationals here: no floating-point loss in the tail
    expected = Fraction(2 * sum(__import__("math").comb(200, k) for k in range(41)), 2 ** 200)
    assert mcnemar_exact(40, 160) == float(expected)
    assert 0 < mcnemar_exact(40, 160) < 1e-17


# ------------------------------------------------------------------------------------------------ bootstrap
def test_identical_pairs_give_a_zero_width_interval_at_zero() -> None:
    a = [1, 0, 1, 1, 0, 0, 1]
    ci = paired_bootstrap_mean_diff(a, a)
    assert (ci.low, ci.high) == (0.0, 0.0)
    assert (ci.level, ci.resamples, ci.seed, ci.method) == (0.95, 10_000, 0, "percentile bootstrap")
    assert paired_bootstrap_median_diff([3, 5, 8], [3, 5, 8]) == Interval(0.0, 0.0)
    assert bootstrap_mean([1, 1, 1]) == Interval(1.0, 1.0)  # every query passed: [100 %, 100 %]
    assert bootstrap_mean([0.5]) == Interval(0.5, 0.5)  # one query: every resample is that query


def exact_percentile_interval(values: list[float], statistic: object, level: float = 0.95) -> tuple[float, float]:
    """Every one of the n^n equally likely resamples, enumerated: the exact bootstrap distribution and its
    quantiles. Asserts that no atom boundary sits within 0.005 of a tail probability, so that 10,000 seeded
    resamples land on the same atoms (the Monte Carlo error of a 2.5 % quantile's rank is about 0.0016)."""
    n = len(values)
    stats = sorted(float(statistic(list(s))) for s in itertools.product(values, repeat=n))  # type: ignore[operator]
    total = len(stats)
    atoms = sorted(set(stats))
    cdf = {x: sum(1 for s in stats if s <= x) / total for x in atoms}
    alpha = (1 - level) / 2
    for q in (alpha, 1 - alpha):
        assert all(abs(c - q) > 0.005 for c in cdf.values()), "too close to an atom boundary for this check"
    low = next(x for x in atoms if cdf[x] >= alpha)
    high = next(x for x in atoms if cdf[x] >= 1 - alpha)
    return low, high


def test_single_run_interval_of_a_tiny_case_enumerated_exactly() -> None:
    # [1, 0, 0, 0]: the resampled mean is K/4, K ~ Binomial(4, 1/4). P(K = 0) = 81/256 = 0.316 > 0.025 → low 0;
    # P(K >= 3) = (12 + 1)/256 = 0.051 > 0.025 but P(K = 4) = 1/256 = 0.004 < 0.025 → high 3/4
    assert exact_percentile_interval([1, 0, 0, 0], np.mean) == (0.0, 0.75)
    assert bootstrap_mean([1, 0, 0, 0]) == Interval(0.0, 0.75)
    assert bootstrap_mean([1, 0]) == Interval(0.0, 1.0)  # {0, 1/2, 1} with 1/4, 1/2, 1/4


def test_paired_intervals_of_tiny_cases_enumerated_exactly() -> None:
    a = [1, 1, 0, 0, 0]
    b = [1, 0, 1, 1, 0]  # differences b - a = [0, -1, 1, 1, 0]
    d = [y - x for x, y in zip(a, b, strict=True)]
    low, high = exact_percentile_interval(d, np.mean)  # over all 5^5 = 3125 resamples
    ci = paired_bootstrap_mean_diff(a, b)
    assert (ci.low, ci.high) == (low, high) == (-0.4, 0.8)
    # medians of paired differences [-2, 0, 4]: of the 27 resamples, 7 have median -2 (two or three -2s:
    # 3 * 2 + 1), 7 have median 4, 13 have median 0 → tails 7/27 = 0.26 each → interval [-2, 4]
    assert exact_percentile_interval([-2, 0, 4], np.median) == (-2.0, 4.0)
    ci = paired_bootstrap_median_diff([10, 10, 10], [8, 10, 14])
    assert (ci.low, ci.high) == (-2.0, 4.0)
    assert median_diff([10, 10, 10], [8, 10, 14]) == 0.0


def test_bootstrap_distribution_follows_the_enumerated_law() -> None:
    dist = bootstrap_distribution([-2, 0, 4], lambda x: np.median(x, axis=1))
    freq = {v: float(np.mean(dist == v)) for v in (-2.0, 0.0, 4.0)}
    assert freq == pytest.approx({-2.0: 7 / 27, 0.0: 13 / 27, 4.0: 7 / 27}, abs=0.02)  # ~4.5 standard errors


def test_seeded_interval_equals_a_straightforward_numpy_bootstrap() -> None:
    rng = np.random.default_rng(123)
    a = rng.integers(0, 2, size=300).astype(float)
    b = np.where(rng.random(300) < 0.2, 1 - a, a)  # B flips a fifth of A's outcomes
    # the straightforward percentile bootstrap, all 10,000 × 300 indices at once (the module draws them in chunks)
    idx = np.random.default_rng(7).integers(0, 300, size=(10_000, 300))
    diffs = b[idx].mean(axis=1) - a[idx].mean(axis=1)
    low, high = np.percentile(diffs, [2.5, 97.5])
    ci = paired_bootstrap_mean_diff(a, b, seed=7)
    assert (ci.low, ci.high) == pytest.approx((low, high), abs=1e-12)
    assert ci.low < float(b.mean() - a.mean()) < ci.high
    # another seed gives another (close) interval; the same seed the same one
    assert paired_bootstrap_mean_diff(a, b, seed=7) == ci != paired_bootstrap_mean_diff(a, b, seed=8)
    # a 90 % interval sits inside the 95 % one
    narrow = paired_bootstrap_mean_diff(a, b, seed=7, level=0.9)
    assert ci.low <= narrow.low <= narrow.high <= ci.high


def test_bad_inputs_are_one_clear_error() -> None:
    with pytest.raises(ValueError, match="no values"):
        bootstrap_mean([])
    with pytest.raises(ValueError, match="run A has 2, run B has 3"):
        paired_bootstrap_mean_diff([1, 0], [1, 0, 1])
    with pytest.raises(ValueError, match="finite"):
        bootstrap_mean([1.0, float("nan")])
    with pytest.raises(ValueError, match="level"):
        bootstrap_mean([1, 0], level=95)


def test_interval_units_and_text() -> None:
    ci = Interval(-0.035, 0.12)
    assert ci.scaled(100).text() == "[-3.5, 12.0]"
    assert ci.scaled(100).text(signed=True) == "[-3.5, +12.0]"
    assert ci.to_dict() == {"low": -0.035, "high": 0.12, "level": 0.95, "resamples": 10_000, "seed": 0,
                            "method": "percentile bootstrap"}
