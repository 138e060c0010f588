"""The dense (faiss) index of one search level: exact inner product below a size threshold, IVF + 8-bit SQ above.

Vectors are L2-normalised, so inner product is cosine similarity. Up to `ANN_THRESHOLD` vectors the index is an
exact `IndexFlatIP`; above it an `IndexIVFScalarQuantizer` (8-bit per dimension, 4× smaller than float32) with
`nlist` ≈ 2·√n inverted lists (a power of two, 64…4096) and `nprobe` = nlist / 8 lists visited per query. At 200k
stand-in vectors those settings keep ≥ 98 % of the exact top-200 (measured by `benchmarks/catalog_search.py`, which
prints the overlap next to the latency).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

ANN_THRESHOLD = 50_000  # documents of a level (APIs, tools); below it exact search costs < 7 ms for a 4-part query on 2 cores (see the benchmark)


def import_faiss() -> Any:
    """The faiss module, imported without its loader's probe lines.

    faiss's loader first tries the AVX512 / AVX2 builds of its library and logs each one the wheel lacks at INFO,
    as `ModuleNotFoundError("No module named 'faiss.swigfaiss_avx2'")`, before it loads the generic build. The
    miss is harmless, but a server that shows INFO lines (`langgraph dev`) prints it as if something were broken:
    the `faiss.loader` logger is held at WARNING while the module loads (a real failure still raises)."""
    loader = logging.getLogger("faiss.loader")
    level = loader.level
    loader.setLevel(logging.WARNING)
    try:
        import faiss
    finally:
        loader.setLevel(level)
    return faiss


@dataclass(frozen=True, slots=True)
class AnnParams:
    """IVF parameters for `n` vectors."""

    nlist: int
    nprobe: int

    @classmethod
    def for_size(cls, n: int) -> AnnParams:
        nlist = 2 ** round(math.log2(max(2.0 * math.sqrt(max(n, 1)), 1.0)))
        nlist = max(64, min(4096, nlist))
        return cls(nlist=nlist, nprobe=max(8, nlist // 8))


def build_dense_index(vectors: np.ndarray, *, ann_threshold: int = ANN_THRESHOLD, seed: int = 1234) -> Any:
    """An exact or IVF-SQ8 faiss index holding `vectors` (float32, rows L2-normalised)."""
    faiss = import_faiss()

    n, dim = (vectors.shape[0], vectors.shape[1]) if vectors.ndim == 2 and len(vectors) else (0, 1)
    if n <= ann_threshold:
        flat = faiss.IndexFlatIP(dim)
        if n:
            flat.add(vectors)
        return flat
    params = AnnParams.for_size(n)
    quantizer = faiss.IndexFlatIP(dim)
    index: Any = faiss.IndexIVFScalarQuantizer(quantizer, dim, params.nlist, faiss.ScalarQuantizer.QT_8bit,
                                          faiss.METRIC_INNER_PRODUCT)
    index.cp.seed = seed
    train = vectors
    limit = 64 * params.nlist
    if n > limit:
        train = vectors[np.random.default_rng(seed).choice(n, limit, replace=False)]
    index.train(train)
    index.add(vectors)
    index.nprobe = params.nprobe
    return index


def top_indices(scores: np.ndarray, depth: int, rows: np.ndarray | None = None) -> np.ndarray:
    """The (at most) `depth` best of `rows` (default: every position) by `scores`, best first; equal scores in
    position order, so a ranking never depends on how a partial sort broke a tie."""
    rows = np.arange(len(scores)) if rows is None else np.asarray(rows, dtype=np.int64)
    values = scores[rows]
    if depth <= 0:
        return rows[:0]
    if len(rows) > depth:
        cut = np.partition(values, len(values) - depth)[len(values) - depth]  # the depth-th largest score
        keep = values >= cut
        rows, values = rows[keep], values[keep]
    return rows[np.lexsort((rows, -values))[:depth]]


def nearest(index: Any, vectors: np.ndarray, depth: int) -> list[np.ndarray]:
    """`nearest_scored`'s positions alone."""
    return [ids for ids, _ in nearest_scored(index, vectors, depth)]


def nearest_scored(index: Any, vectors: np.ndarray, depth: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per query vector, the positions of the `depth` vectors of `index` with the largest inner product and those
    inner products (float32), best first (equal scores in position order), searched by faiss on one OpenMP thread.

    faiss spreads a handful of query vectors over every core otherwise, and on a busy machine its threads wait for
    one another: at 2,490 APIs on the 2 shared cores (load 12), a search whose query vectors were cached took a
    median 80 ms that way against 15 ms on one thread. A numpy product over the flat vectors was slower still
    there (46 ms against faiss's 1.1 ms for the API level)."""
    faiss = import_faiss()

    depth = min(depth, int(index.ntotal))
    if depth <= 0:
        return [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)) for _ in range(len(vectors))]
    threads = faiss.omp_get_max_threads()  # a per-thread setting in OpenMP: restored for this thread's later work
    faiss.omp_set_num_threads(1)
    try:
        sims, idx = index.search(np.ascontiguousarray(vectors, dtype=np.float32), depth)
    finally:
        faiss.omp_set_num_threads(threads)
    out = []
    for row_sims, row in zip(sims, idx, strict=True):
        found = row >= 0
        row, row_sims = row[found].astype(np.int64), row_sims[found]
        order = np.lexsort((row, -row_sims))
        out.append((row[order], np.asarray(row_sims[order], dtype=np.float32)))
    return out


def describe(index: Any) -> str:
    """"flat" or "ivf<nlist>,sq8,nprobe=<p>" for reports."""
    faiss = import_faiss()

    ivf = faiss.try_extract_index_ivf(index) if not isinstance(index, faiss.IndexFlat) else None
    if ivf is None:
        return "flat"
    return f"ivf{ivf.nlist},sq8,nprobe={ivf.nprobe}"
