"""The fusion weights of catalog search (`search.py` explains the formula) and their bounds.

They come from code or from the `fusion.json` beside a trained encoder (`trained_model.read_trained` checks a file
against the same fields, `sanitize.schema.fields_model(FusionWeights)`, and names it); either way a non-finite,
negative or huge weight is refused, since it would turn the scores into NaN (no results, or `null` scores) or
flatten every rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from pydantic import Field

from ..sanitize.schema import check_fields

Weight = Annotated[float, Field(ge=0, le=1000)]
Method = Literal["rrf", "zscore"]
METHODS: tuple[str, ...] = ("rrf", "zscore")


@dataclass(frozen=True, slots=True)
class FusionWeights:
    """The few global knobs of the ranking (see `search`'s docstring); out-of-range values are a `ValueError`."""

    # dense 1 → 1.5 with z-score fusion (issue 37, round 4): the z-scores of both retrievers are on one scale, so
    # they weigh alike (bm25 1.5, dense 1.5 rank as 1 and 1 do); bm25 stays 1.5 so that BM25-only search (RRF) gives
    # the very same float32 scores as before (a bm25 weight of 1 reordered near-ties in 13 of the 519 dev queries'
    # top 64). The previous hybrid default is FusionWeights(method="rrf", dense=1.0).
    bm25: Weight = 1.5
    dense: Weight = 1.5
    tool: Weight = 0.5
    # whole 0.5 → 1 and rrf_k 60 → 2 (issue 37): on the tuning part of the developers' split (untrained MiniLM,
    # 346 queries) Recall@10 / NDCG@5 81.9 / 69.1 → 84.7 / 73.8; rrf_k 60's terms 1 / (61 + rank) hardly separate
    # rank 1 from rank 10 (docs/benchmarks.md, "Retrieval quality")
    whole: Weight = 1.0
    rrf_k: Annotated[int, Field(ge=0, le=100_000)] = 2
    depth: Annotated[int, Field(ge=1, le=1_000_000)] = 200  # candidates taken from each retriever per query part
    # A multi-sentence query's own vector. None (default): the mean over all its sentences' tokens when the encoder
    # gives them (`token_means`: MiniLM on ONNX Runtime), else the whole query encoded as one more text. True: always
    # encoded as one more text (the default until 2026-11-29: about twice the tokens to encode; dev Recall@10 83.4,
    # NDCG@5 69.4 against 83.7 / 69.6 for the token mean). False: never (the token mean, else the normalised mean
    # of the sentence vectors: Recall@10 83.2).
    encode_whole: bool | None = None
    # How each retriever's ranking of a query part becomes a term (`search`'s docstring): "rrf", 1 / (rrf_k + rank);
    # "zscore", its raw score standardised over its own candidates (BM25 scores, cosines), + `offset`, clipped at 0.
    # None (default): "zscore" when the searcher has a dense retriever, "rrf" for BM25-only search. Untrained MiniLM,
    # recipe 6-lean, tuning part: RRF 85.6 / 73.5, z-score 86.2 / 74.3 (fold 2 88.1 / 74.4 → 88.2 / 75.1); BM25
    # only: 83.0 / 69.1 → 83.2 / 71.1, a gain in NDCG@5 alone, so BM25-only ranking stays RRF's (docs/benchmarks.md,
    # "Score fusion (issue 37, round 4)"). `CatalogSearcher.weights` always holds the method it uses.
    method: Method | None = None
    offset: Annotated[float, Field(ge=0, le=100)] = 0.0  # z-score only: how far below the mean a candidate counts

    def __post_init__(self) -> None:
        check_fields(self, source="fusion weights")
        if self.bm25 + self.dense <= 0:
            raise ValueError("fusion weights: bm25 and dense are both 0, so nothing would ever be found")


def weights_from_file(fields: Mapping[str, Any]) -> FusionWeights:
    """`FusionWeights` from a ``fusion.json``'s ``weights`` (unknown keys ignored, as older code wrote none). A file
    without ``method`` was written before z-score fusion existed: its weights are RRF's and stay so, whatever the
    default becomes."""
    known = set(FusionWeights.__dataclass_fields__)
    given: dict[str, Any] = {"method": "rrf", "dense": 1.0} | {k: v for k, v in fields.items() if k in known}
    return FusionWeights(**given)


def resolved(weights: FusionWeights, *, dense: bool) -> FusionWeights:
    """`weights` with `method` None made concrete: "zscore" for hybrid search, "rrf" for BM25-only search."""
    if weights.method is not None:
        return weights
    return replace(weights, method="zscore" if dense else "rrf")
