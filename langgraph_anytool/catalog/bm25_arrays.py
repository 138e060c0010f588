"""A persisted BM25 index scored with numpy alone: the arrays bm25s saved, read without importing bm25s.

When bm25s indexes, it computes every (token, document) BM25 weight and saves them as a compressed sparse column
matrix (`data`, `indices`, `indptr`: one column per token) beside its vocabulary (token → column) and parameters.
For the "lucene" method (the one search indexes with: no non-occurrence term), a query's score for a document is the
sum of its tokens' weights, repeats counted and unknown tokens ignored: `Bm25Arrays.get_scores` adds them token by
token as `bm25s.BM25.get_scores` does, so the scores are the same floats. Loading this way spares a search the import
of bm25s and SciPy (about 0.3 s of CPU, a third of a warm `anytool search`); building an index still uses bm25s.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

# file names of `bm25s.BM25.save`
_DATA, _INDICES, _INDPTR = "data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy"
_VOCAB, _PARAMS = "vocab.index.json", "params.index.json"
_METHODS = ("lucene", "robertson", "atire")  # the methods without a non-occurrence term (bm25l and bm25+ have one)


class Bm25Arrays:
    """The saved BM25 weights of one index, memory-mapped, with `get_scores(tokens)` as bm25s computes it."""

    def __init__(self, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, vocab: dict[str, int],
                 num_docs: int, dtype: str = "float32") -> None:
        self.data, self.indices, self.indptr = data, indices, indptr
        self.dtype = np.dtype(dtype)
        self.vocab = vocab
        self.num_docs = num_docs
        self.scores = {"num_docs": num_docs}  # as bm25s.BM25.scores reports it

    @classmethod
    def load(cls, folder: Path) -> Bm25Arrays | None:
        """The index bm25s saved in `folder`; None when its method needs more than the weights (the caller then
        loads it with bm25s). `OSError` / `ValueError` / `KeyError` when a file is missing or damaged."""
        params = json.loads((folder / _PARAMS).read_text(encoding="utf-8"))
        if params.get("method") not in _METHODS or params.get("idf_method", params.get("method")) not in _METHODS:
            return None
        vocab = json.loads((folder / _VOCAB).read_text(encoding="utf-8"))
        arrays = [np.load(folder / name, mmap_mode="r", allow_pickle=False) for name in (_DATA, _INDICES, _INDPTR)]
        data, indices, indptr = arrays
        if not isinstance(vocab, dict) or not 0 < len(indptr) <= len(vocab) + 1 or len(data) != len(indices):
            raise ValueError(f"{folder}: BM25 arrays do not match their vocabulary")
        return cls(data, indices, indptr, vocab, int(params["num_docs"]), str(params.get("dtype", "float32")))

    def get_scores(self, tokens: list[str]) -> np.ndarray:
        """The BM25 score of every document for the query `tokens` (shape (num_docs,))."""
        scores = np.zeros(self.num_docs, dtype=self.dtype)
        for token in tokens:
            column = self.vocab.get(token)
            if column is None or column + 1 >= len(self.indptr):  # unknown, or bm25s's "" entry (no column)
                continue
            start, end = int(self.indptr[column]), int(self.indptr[column + 1])
            np.add.at(scores, self.indices[start:end], self.data[start:end])
        return scores
