"""`anytool index build`: build (or refresh) every search index of a catalog ahead of time, with progress.

A server or notebook started afterwards on the same catalog, embedding model and index directory loads the
indexes from disk instead of building them (see `search.CatalogSearcher`).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from .catalog import Catalog


def configure(p: argparse.ArgumentParser) -> None:
    """Arguments of `anytool index build` (the catalog and search options are added by the caller)."""
    p.add_argument("--json", action="store_true", help="print the build statistics as JSON")


def run_build(catalog: Catalog, *, embeddings: str | None, index_dir: str | None, as_json: bool, out: TextIO) -> int:
    """Build the BM25 and dense indexes of `catalog` and print what was built or loaded, and where."""
    from .embeddings import embeddings_id
    from .search import CatalogSearcher

    searcher = CatalogSearcher(catalog, embeddings=embeddings, index_dir=index_dir, progress=True)
    t0 = time.perf_counter()
    stats = searcher.build()
    seconds = time.perf_counter() - t0
    model = embeddings_id(searcher.embeddings) if searcher.embeddings is not None else None
    info = {"catalog": catalog.name, "apis": len(catalog), "tools": catalog.num_tools, "embeddings": model,
            "seconds": round(seconds, 3), "bm25_path": stats.bm25_path, "bm25_loaded": stats.bm25_loaded,
            "bm25_seconds": round(stats.bm25_seconds, 3), "dense_path": stats.index_path,
            "dense_loaded": stats.dense_loaded, "dense_seconds": round(stats.dense_seconds, 3),
            "embedded_documents": stats.embedded_documents, "dense_index": stats.dense_kind or None}
    if as_json:
        out.write(json.dumps(info, indent=1) + "\n")
        return 0
    out.write(f"catalog {catalog.name}: {len(catalog):,} APIs, {catalog.num_tools:,} tools\n")
    bm25 = "loaded" if stats.bm25_loaded else "built"
    out.write(f"BM25   {bm25} in {stats.bm25_seconds:.2f} s  → {stats.bm25_path}\n")
    if model is None:
        out.write("dense  none (BM25 only)\n")
    else:
        dense = "loaded" if stats.dense_loaded else f"built ({stats.embedded_documents:,} documents embedded)"
        out.write(f"dense  {dense} in {stats.dense_seconds:.2f} s, {model}, {stats.dense_kind}  → {stats.index_path}\n")
    out.write(f"total  {seconds:.2f} s\n")
    return 0
