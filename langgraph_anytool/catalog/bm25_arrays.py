"""A persisted BM25 index scored with numpy alone: the arrays bm25s saved, read without importing bm25s.

When bm25s indexes, it computes every (token, document) BM25 weight and saves them as a compressed sparse column
matrix (`data`, `indices`, `indptr`: one column per token) beside its vocabulary (token → column) and parameters.
For the "lucene" method (the one search indexes with: no non-occurrence term), a query's score for a document is the
sum of its tokens' weights, repeats counted and unknown tokens ignored: `Bm25Arrays.get_scores` adds them token by
token as `bm25s.BM25.get_scores` does, so the scores are the same floats (a term lists each document once, so a
plain indexed add does what `np.add.at` would, without its per-element cost). Loading this way (`index_store.load_bm25`,
after its checks) spares a search the import of bm25s and SciPy (about 0.3 s of CPU, a third of a warm
`anytool search`); building an index still uses bm25s, with `BUILD_PARAMS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

# The parameters search builds every index with (`bm25s.BM25(**BUILD_PARAMS)`), as `params.index.json` records
# them; a saved index with any other value is not one of ours (and might need more than the saved weights).
BUILD_PARAMS: Mapping[str, object] = MappingProxyType({
    "k1": 1.5, "b": 0.75, "delta": 0.5, "method": "lucene", "idf_method": "lucene", "dtype": "float32",
    "int_dtype": "int32", "backend": "numpy",
})


class Bm25Arrays:
    """The saved BM25 weights of one index, memory-mapped, with `get_scores(tokens)` as bm25s computes it."""

    def __init__(self, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, vocab: dict[str, int],
                 num_docs: int, dtype: str = "float32") -> None:
        # plain views of the memory maps: slicing an `np.memmap` builds a memmap object per slice (a sixth of a
        # search's time at 2,490 APIs went there)
        self.data, self.indices, self.indptr = np.asarray(data), np.asarray(indices), np.asarray(indptr)
        self.dtype = np.dtype(dtype)
        self.vocab = vocab
        self.num_docs = num_docs
        self.scores = {"num_docs": num_docs}  # as bm25s.BM25.scores reports it

    def get_scores(self, tokens: list[str]) -> np.ndarray:
        """The BM25 score of every document for the query `tokens` (shape (num_docs,))."""
        scores = np.zeros(self.num_docs, dtype=self.dtype)
        for token in tokens:
            column = self.vocab.get(token)
            if column is None or column + 1 >= len(self.indptr):  # unknown, or bm25s's "" entry (no column)
                continue
            start, end = int(self.indptr[column]), int(self.indptr[column + 1])
            scores[self.indices[start:end]] += self.data[start:end]  # a term's document ids ascend (index_store checks)
        return scores
