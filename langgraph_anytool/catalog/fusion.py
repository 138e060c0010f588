"""The fusion weights of catalog search (`search.py` explains the formula) and their bounds.

They come from code or from the `fusion.json` beside a trained encoder (`trained_model.read_trained` checks a file
against `FUSION_WEIGHT_FIELDS` and names it); either way a non-finite, negative or huge weight is refused, since it
would turn the scores into NaN (no results, or `null` scores) or flatten every rank.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..sanitize.files import Field, check_value

FUSION_WEIGHT_FIELDS: dict[str, Field] = {
    "bm25": Field("float", low=0.0, high=1000.0), "dense": Field("float", low=0.0, high=1000.0),
    "tool": Field("float", low=0.0, high=1000.0), "whole": Field("float", low=0.0, high=1000.0),
    "rrf_k": Field("int", low=0, high=100_000), "depth": Field("int", low=1, high=1_000_000),
}


@dataclass(frozen=True, slots=True)
class FusionWeights:
    """The few global knobs of the ranking (see `search`'s docstring); out-of-range values are a `ValueError`."""

    bm25: float = 1.5
    dense: float = 1.0
    tool: float = 0.5
    whole: float = 0.5
    rrf_k: int = 60
    depth: int = 200  # candidates taken from each retriever for each query part
    # encode the whole multi-sentence query too (else its vector is the mean of its sentence vectors: about half the
    # encoding cost, but dev Recall@10 83.5 → 83.2 with MiniLM, so the default keeps it)
    encode_whole: bool = True

    def __post_init__(self) -> None:
        for name, spec in FUSION_WEIGHT_FIELDS.items():
            check_value(getattr(self, name), spec, source="fusion weights", field=name)
        if not isinstance(self.encode_whole, bool):
            raise ValueError(f"fusion weights, field 'encode_whole': must be true or false, got {self.encode_whole!r}")
        if self.bm25 + self.dense <= 0:
            raise ValueError("fusion weights: bm25 and dense are both 0, so nothing would ever be found")
