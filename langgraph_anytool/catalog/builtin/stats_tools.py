"""Statistics: descriptive summaries, correlation and regression, probability distributions."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from typing import Any

from ._common import as_float, as_floats, clean_number, require_range
from ._registry import ARRAY, ENUM, INTEGER, NUMBER, ApiSpec, CategorySpec, P, ToolSpec


def _r(x: float) -> float | int:
    return clean_number(x, 10)


# ------------------------------------------------------------------------------ descriptive
def summary_statistics(data: list[Any], sample: bool = True) -> dict[str, Any]:
    """Count, mean, median, mode(s), spread and quartiles of a data set."""
    xs = as_floats(data, "data", min_len=1)
    n = len(xs)
    if n >= 2:
        var = statistics.variance(xs) if sample else statistics.pvariance(xs)
        q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    else:
        var, q1, q3 = 0.0, xs[0], xs[0]
    return {"count": n, "sum": _r(math.fsum(xs)), "mean": _r(statistics.fmean(xs)), "median": _r(statistics.median(xs)),
            "modes": [_r(m) for m in statistics.multimode(xs)], "min": _r(min(xs)), "max": _r(max(xs)),
            "range": _r(max(xs) - min(xs)), "variance": _r(var), "std_dev": _r(math.sqrt(var)),
            "q1": _r(q1), "q3": _r(q3), "iqr": _r(q3 - q1), "sample": sample}


def mean_kinds(data: list[Any], kind: str = "arithmetic", weights: list[Any] | None = None) -> dict[str, Any]:
    """Arithmetic, weighted, geometric, harmonic, quadratic (RMS) or trimmed mean."""
    xs = as_floats(data, "data")
    if kind == "weighted":
        ws = as_floats(weights or [], "weights")
        if len(ws) != len(xs) or sum(ws) == 0:
            raise ValueError("weights must have one non-negative number per data value and a non-zero sum")
        value = math.fsum(x * w for x, w in zip(xs, ws, strict=True)) / math.fsum(ws)
    elif kind == "geometric":
        if any(x <= 0 for x in xs):
            raise ValueError("the geometric mean needs positive values")
        value = statistics.geometric_mean(xs)
    elif kind == "harmonic":
        if any(x < 0 for x in xs):
            raise ValueError("the harmonic mean needs non-negative values")
        value = statistics.harmonic_mean(xs)
    elif kind == "quadratic":
        value = math.sqrt(math.fsum(x * x for x in xs) / len(xs))
    elif kind == "trimmed":
        cut = int(len(xs) * 0.1)
        kept = sorted(xs)[cut: len(xs) - cut] if cut else sorted(xs)
        value = statistics.fmean(kept)
    else:
        value = statistics.fmean(xs)
    return {"kind": kind, "count": len(xs), "mean": _r(value)}


def percentile(data: list[Any], p: float) -> dict[str, Any]:
    """The p-th percentile (linear interpolation between closest ranks) and a value's percentile rank."""
    xs = sorted(as_floats(data, "data"))
    q = as_float(p, "p")
    require_range(q, "p", 0, 100)
    pos = (len(xs) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    value = xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
    return {"p": clean_number(q), "value": _r(value), "count": len(xs)}


def z_scores(data: list[Any]) -> dict[str, Any]:
    """Standard scores of each value (sample standard deviation), flagging |z| > 3 as outliers."""
    xs = as_floats(data, "data", min_len=2)
    mu, sd = statistics.fmean(xs), statistics.stdev(xs)
    if sd == 0:
        raise ValueError("all values are equal: z-scores are undefined")
    zs = [(x - mu) / sd for x in xs]
    return {"mean": _r(mu), "std_dev": _r(sd), "z_scores": [round(z, 6) for z in zs],
            "outliers": [clean_number(x) for x, z in zip(xs, zs, strict=True) if abs(z) > 3]}


def frequency_table(data: list[Any], bins: int = 5) -> dict[str, Any]:
    """Histogram of numeric data in equal-width bins (or counts of distinct values for text)."""
    require_range(bins, "bins", 1, 100)
    if not isinstance(data, list) or not data:
        raise ValueError("data must be a non-empty list")
    try:
        xs = as_floats(data, "data")
    except ValueError:
        counts = Counter(str(v) for v in data)
        return {"kind": "categorical", "bins": [{"label": k, "count": c, "share": round(c / len(data), 6)}
                                                for k, c in counts.most_common()]}
    lo, hi = min(xs), max(xs)
    width = (hi - lo) / bins or 1.0
    counts_list = [0] * bins
    for x in xs:
        counts_list[min(bins - 1, int((x - lo) / width))] += 1
    out = [{"label": f"[{_r(lo + i * width)}, {_r(lo + (i + 1) * width)}{']' if i == bins - 1 else ')'}",
            "count": c, "share": round(c / len(xs), 6)} for i, c in enumerate(counts_list)]
    return {"kind": "numeric", "bins": out}


# ------------------------------------------------------------------------------ correlation / regression
def _pair(x: list[Any], y: list[Any]) -> tuple[list[float], list[float]]:
    xs, ys = as_floats(x, "x", min_len=2), as_floats(y, "y", min_len=2)
    if len(xs) != len(ys):
        raise ValueError(f"x and y must have the same length ({len(xs)} != {len(ys)})")
    return xs, ys


def _strength(r: float) -> str:
    a = abs(r)
    return "very strong" if a >= 0.8 else "strong" if a >= 0.6 else "moderate" if a >= 0.4 else (
        "weak" if a >= 0.2 else "very weak or none")


def pearson_correlation(x: list[Any], y: list[Any]) -> dict[str, Any]:
    """Pearson's r, r² and a verbal strength."""
    xs, ys = _pair(x, y)
    try:
        r = statistics.correlation(xs, ys)
    except statistics.StatisticsError as exc:
        raise ValueError(str(exc)) from None
    return {"n": len(xs), "r": round(r, 10), "r_squared": round(r * r, 10), "strength": _strength(r),
            "direction": "positive" if r > 0 else "negative" if r < 0 else "none"}


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman_correlation(x: list[Any], y: list[Any]) -> dict[str, Any]:
    """Spearman's rank correlation (ties get average ranks)."""
    xs, ys = _pair(x, y)
    try:
        rho = statistics.correlation(_ranks(xs), _ranks(ys))
    except statistics.StatisticsError as exc:
        raise ValueError(str(exc)) from None
    return {"n": len(xs), "rho": round(rho, 10), "strength": _strength(rho)}


def linear_regression(x: list[Any], y: list[Any], predict_at: float | None = None) -> dict[str, Any]:
    """Least-squares line y = slope·x + intercept, r², and an optional prediction."""
    xs, ys = _pair(x, y)
    try:
        slope, intercept = statistics.linear_regression(xs, ys)
        r = statistics.correlation(xs, ys)
    except statistics.StatisticsError as exc:
        raise ValueError(str(exc)) from None
    pred = None if predict_at is None else _r(slope * as_float(predict_at, "predict_at") + intercept)
    return {"n": len(xs), "slope": _r(slope), "intercept": _r(intercept), "r_squared": round(r * r, 10),
            "equation": f"y = {_r(slope)}x + {_r(intercept)}", "prediction": pred}


def covariance(x: list[Any], y: list[Any]) -> dict[str, Any]:
    """Sample and population covariance of two variables."""
    xs, ys = _pair(x, y)
    sample = statistics.covariance(xs, ys)
    population = sample * (len(xs) - 1) / len(xs)
    return {"n": len(xs), "sample_covariance": _r(sample), "population_covariance": _r(population)}


# ------------------------------------------------------------------------------ probability
def normal_distribution(x: float, mean: float = 0, std_dev: float = 1) -> dict[str, Any]:
    """Density, cumulative probability and z-score of x under a normal distribution."""
    sd = as_float(std_dev, "std_dev")
    if sd <= 0:
        raise ValueError("std_dev must be positive")
    nd = statistics.NormalDist(as_float(mean, "mean"), sd)
    xv = as_float(x, "x")
    cdf = nd.cdf(xv)
    return {"x": clean_number(xv), "z_score": _r((xv - nd.mean) / sd), "pdf": _r(nd.pdf(xv)), "cdf": _r(cdf),
            "probability_above": _r(1 - cdf)}


def normal_quantile(probability: float, mean: float = 0, std_dev: float = 1) -> dict[str, Any]:
    """The value below which a given share of a normal distribution lies (inverse CDF)."""
    p = as_float(probability, "probability")
    if not 0 < p < 1:
        raise ValueError("probability must be strictly between 0 and 1")
    sd = as_float(std_dev, "std_dev")
    if sd <= 0:
        raise ValueError("std_dev must be positive")
    nd = statistics.NormalDist(as_float(mean, "mean"), sd)
    return {"probability": p, "value": _r(nd.inv_cdf(p)), "z_score": _r(statistics.NormalDist().inv_cdf(p))}


def binomial_probability(n: int, k: int, p: float) -> dict[str, Any]:
    """P(X = k), P(X ≤ k) and P(X ≥ k) for X ~ Binomial(n, p)."""
    require_range(n, "n", 0, 100000)
    require_range(k, "k", 0, n)
    pv = as_float(p, "p")
    require_range(pv, "p", 0, 1)

    def pmf(i: int) -> float:
        if pv in (0.0, 1.0):
            return float(i == (n if pv == 1.0 else 0))
        return math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                        + i * math.log(pv) + (n - i) * math.log1p(-pv))

    probs = [pmf(i) for i in range(n + 1)]
    return {"n": n, "k": k, "p": pv, "p_exactly": _r(probs[k]), "p_at_most": _r(min(1.0, math.fsum(probs[: k + 1]))),
            "p_at_least": _r(min(1.0, math.fsum(probs[k:]))), "mean": _r(n * pv), "variance": _r(n * pv * (1 - pv))}


def _big(value: int) -> str:
    """Exact digits up to 4000 of them, else scientific notation from the logarithm."""
    if value.bit_length() <= 13000:
        return str(value)
    log = math.log10(value)
    exp = math.floor(log)
    return f"{10 ** (log - exp):.6f}e+{exp}"


def combinations(n: int, k: int) -> dict[str, Any]:
    """Number of combinations C(n, k), permutations P(n, k) and with-repetition counts."""
    require_range(n, "n", 0, 10000)
    require_range(k, "k", 0, 10000)
    multiset = math.comb(n + k - 1, k) if n else int(k == 0)
    with_rep = f"{10 ** (k * math.log10(n) % 1):.6f}e+{math.floor(k * math.log10(n))}" if n > 1 and k * math.log10(
        n) > 4000 else str(n**k)
    return {"n": n, "k": k, "combinations": _big(math.comb(n, k)), "permutations": _big(math.perm(n, k)),
            "combinations_with_repetition": _big(multiset), "permutations_with_repetition": with_rep}


def expected_value(values: list[Any], probabilities: list[Any]) -> dict[str, Any]:
    """Expected value, variance and standard deviation of a discrete random variable."""
    xs, ps = as_floats(values, "values"), as_floats(probabilities, "probabilities")
    if len(xs) != len(ps):
        raise ValueError("values and probabilities must have the same length")
    if any(p < 0 for p in ps) or abs(math.fsum(ps) - 1) > 1e-6:
        raise ValueError(f"probabilities must be non-negative and sum to 1 (sum is {math.fsum(ps)})")
    mu = math.fsum(x * p for x, p in zip(xs, ps, strict=True))
    var = math.fsum(p * (x - mu) ** 2 for x, p in zip(xs, ps, strict=True))
    return {"expected_value": _r(mu), "variance": _r(var), "std_dev": _r(math.sqrt(var))}


# ------------------------------------------------------------------------------ declarations
_DATA = (2, 4, 4, 4, 5, 5, 7, 9)


def category() -> CategorySpec:
    """The Statistics category."""
    descriptive = ToolSpec(
        name="Descriptive Statistics",
        key="descriptive_statistics",
        description="Summaries of a list of numbers: mean/median/mode, variance and standard deviation, "
                    "quartiles, percentiles, special means (geometric, harmonic, weighted...), z-scores, histograms.",
        apis=(
            ApiSpec(summary_statistics, "Summary Statistics",
                    "Count, sum, mean, median, modes, min, max, range, variance, standard deviation and quartiles.",
                    (P("data", ARRAY, "Numbers.", _DATA),
                     P("sample", "BOOLEAN", "Use the sample (n-1) formulas; false for population.")),
                    {"count": "int", "sum": "float", "mean": "float", "median": "float",
                     "modes": ["list of float with length 1"], "min": "float", "max": "float", "range": "float",
                     "variance": "float", "std_dev": "float", "q1": "float", "q3": "float", "iqr": "float",
                     "sample": "bool"}),
            ApiSpec(mean_kinds, "Mean Calculator",
                    "One kind of mean: arithmetic, weighted (needs weights), geometric, harmonic, quadratic "
                    "(root mean square) or 10% trimmed.",
                    (P("data", ARRAY, "Numbers.", [1.05, 1.10, 0.97, 1.20]),
                     P("kind", ENUM, "Kind of mean.", None,
                       ("arithmetic", "weighted", "geometric", "harmonic", "quadratic", "trimmed")),
                     P("weights", ARRAY, "Weights for the weighted mean.")),
                    {"kind": "str", "count": "int", "mean": "float"}),
            ApiSpec(percentile, "Percentile", "The p-th percentile of a data set (linear interpolation).",
                    (P("data", ARRAY, "Numbers.", [15, 20, 35, 40, 50]), P("p", NUMBER, "Percentile 0-100.", 40)),
                    {"p": "float", "value": "float", "count": "int"}),
            ApiSpec(z_scores, "Z-Scores", "Standard score of every value and the outliers with |z| > 3.",
                    (P("data", ARRAY, "Numbers.", _DATA),),
                    {"mean": "float", "std_dev": "float", "z_scores": ["list of float with length 8"],
                     "outliers": ["list of float with length 0"]}),
            ApiSpec(frequency_table, "Frequency Table",
                    "Histogram counts of numbers in equal-width bins, or counts of distinct text values.",
                    (P("data", ARRAY, "Numbers or labels.", [1, 2, 2, 3, 3, 3, 4, 4, 5, 9]),
                     P("bins", INTEGER, "Number of bins for numeric data.")),
                    {"kind": "str", "bins": [{"label": "str", "count": "int", "share": "float", "_list_length": 5}]}),
        ),
    )
    correlation = ToolSpec(
        name="Correlation and Regression",
        key="correlation_and_regression",
        description="Relationships between two numeric variables: Pearson and Spearman correlation, covariance, "
                    "simple linear regression with predictions.",
        apis=(
            ApiSpec(pearson_correlation, "Pearson Correlation", "Pearson's correlation coefficient r and r².",
                    (P("x", ARRAY, "First variable.", [1, 2, 3, 4, 5]), P("y", ARRAY, "Second variable.",
                                                                          [2, 4, 5, 4, 5])),
                    {"n": "int", "r": "float", "r_squared": "float", "strength": "str", "direction": "str"}),
            ApiSpec(spearman_correlation, "Spearman Rank Correlation", "Spearman's rho from the ranks of x and y.",
                    (P("x", ARRAY, "First variable.", [10, 20, 30, 40, 50]),
                     P("y", ARRAY, "Second variable.", [1, 3, 2, 5, 4])),
                    {"n": "int", "rho": "float", "strength": "str"}),
            ApiSpec(linear_regression, "Linear Regression",
                    "Least-squares line through (x, y) points, its r², and the predicted y at a given x.",
                    (P("x", ARRAY, "Predictor values.", [1, 2, 3, 4]), P("y", ARRAY, "Response values.", [3, 5, 7, 9]),
                     P("predict_at", NUMBER, "Optional x at which to predict y.")),
                    {"n": "int", "slope": "float", "intercept": "float", "r_squared": "float", "equation": "str",
                     "prediction": "float"}),
            ApiSpec(covariance, "Covariance", "Sample and population covariance of two variables.",
                    (P("x", ARRAY, "First variable.", [1, 2, 3, 4]), P("y", ARRAY, "Second variable.", [2, 4, 6, 9])),
                    {"n": "int", "sample_covariance": "float", "population_covariance": "float"}),
        ),
    )
    probability = ToolSpec(
        name="Probability Calculator",
        key="probability_calculator",
        description="Probability distributions and counting: normal CDF/PDF and quantiles, binomial "
                    "probabilities, combinations and permutations, expected value of a discrete variable.",
        apis=(
            ApiSpec(normal_distribution, "Normal Distribution",
                    "Density, P(X ≤ x) and P(X > x) for a normal distribution with given mean and standard "
                    "deviation.",
                    (P("x", NUMBER, "Value.", 1.5), P("mean", NUMBER, "Mean."),
                     P("std_dev", NUMBER, "Std. deviation.")),
                    {"x": "float", "z_score": "float", "pdf": "float", "cdf": "float", "probability_above": "float"}),
            ApiSpec(normal_quantile, "Normal Quantile",
                    "Inverse normal CDF: the value with the given probability below it (e.g. 0.975 → 1.96).",
                    (P("probability", NUMBER, "Probability in (0, 1).", 0.975), P("mean", NUMBER, "Mean."),
                     P("std_dev", NUMBER, "Std. deviation.")),
                    {"probability": "float", "value": "float", "z_score": "float"}),
            ApiSpec(binomial_probability, "Binomial Probability",
                    "P(exactly k), P(at most k), P(at least k) successes in n independent trials.",
                    (P("n", INTEGER, "Trials.", 10), P("k", INTEGER, "Successes.", 3),
                     P("p", NUMBER, "Success probability per trial.", 0.5)),
                    {"n": "int", "k": "int", "p": "float", "p_exactly": "float", "p_at_most": "float",
                     "p_at_least": "float", "mean": "float", "variance": "float"}),
            ApiSpec(combinations, "Combinations and Permutations",
                    "C(n, k), P(n, k) and the with-repetition counts (as exact decimal strings).",
                    (P("n", INTEGER, "Set size.", 52), P("k", INTEGER, "Chosen items.", 5)),
                    {"n": "int", "k": "int", "combinations": "str", "permutations": "str",
                     "combinations_with_repetition": "str", "permutations_with_repetition": "str"}),
            ApiSpec(expected_value, "Expected Value",
                    "Mean, variance and standard deviation of a discrete random variable.",
                    (P("values", ARRAY, "Outcomes.", [0, 10, 100]),
                     P("probabilities", ARRAY, "Their probabilities (sum 1).", [0.89, 0.1, 0.01])),
                    {"expected_value": "float", "variance": "float", "std_dev": "float"}),
        ),
    )
    return CategorySpec(name="Statistics", description="Descriptive statistics, correlation, regression, probability.",
                        tools=(descriptive, correlation, probability))
