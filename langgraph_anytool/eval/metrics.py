"""Ranking metrics with binary relevance.

For a ranked list r_1, r_2, ... and a non-empty relevant set R (an item repeated in the list gains only at its
first position; repeats still take up their rank):

- Recall@k = |{r_1..r_k} ∩ R| / |R|
- NDCG@k  = DCG@k / IDCG@k, with DCG@k = Σ_{i ≤ k, r_i ∈ R} 1 / log2(i + 1) and IDCG@k the DCG of an ideal
  ranking, Σ_{i ≤ min(k, |R|)} 1 / log2(i + 1).

Both lie in [0, 1]; an empty relevant set is an error (the metric is undefined), not a zero.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence


def _first_hits(ranked: Iterable[str], relevant: set[str]) -> list[int]:
    """0-based ranks at which a relevant item appears for the first time."""
    seen: set[str] = set()
    out = []
    for i, item in enumerate(ranked):
        if item in relevant and item not in seen:
            seen.add(item)
            out.append(i)
    return out


def _check(relevant: Collection[str], k: int) -> None:
    if not relevant:
        raise ValueError("relevance set is empty: the metric is undefined")
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")


def recall_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Share of the relevant items found in the top k."""
    _check(relevant, k)
    rel = set(relevant)
    return len(_first_hits(ranked[:k], rel)) / len(rel)


def ndcg_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Normalised discounted cumulative gain at k, binary gains."""
    _check(relevant, k)
    rel = set(relevant)
    dcg = sum(1.0 / math.log2(i + 2) for i in _first_hits(ranked[:k], rel))
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(rel))))
    return dcg / idcg
