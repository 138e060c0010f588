"""Catalog search benchmark: load, index build (BM25 / dense), search latency and peak memory by catalog size.

    .venv/bin/python benchmarks/catalog_search.py                      # real (2,490), 16k and 200k APIs
    .venv/bin/python benchmarks/catalog_search.py --sizes real 16k    # pick sizes (real | 16k | 200k | <N>)
    .venv/bin/python benchmarks/catalog_search.py --embed-limit 0     # stand-in vectors everywhere (fast)

Larger catalogs are generated deterministically in memory from the real ToolBench catalog
(../shared/toolbench/tools): every tool is replicated into new tools whose names, descriptions and API texts
have a seeded share of their words replaced by other words of the catalog. Nothing is written into the repo; the
dense index goes to a temporary directory.

Dense vectors come from MiniLM up to `--embed-limit` APIs; above it from a stand-in (deterministic random unit
vectors of the same dimension, seeded by the text), which times faiss and persistence but not embedding, and the
output says so. Each size runs in its own process, so "peak RSS" (resource.getrusage ru_maxrss: the process's peak
resident set, including the interpreter, torch and the catalog) belongs to that size alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langgraph_anytool.catalog import Catalog, Category, Tool
from langgraph_anytool.catalog.embeddings import MiniLMEmbeddings, minilm_available
from langgraph_anytool.catalog.search import CatalogSearcher

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "toolbench"
REAL_SIZE = 2490
NAMED_SIZES = {"real": 0, "16k": 16_000, "200k": 200_000}
_WORD = re.compile(r"[A-Za-z]{3,}")


class StandInEmbeddings(Embeddings):
    """Deterministic random unit vectors seeded by the text (for index timing without a model)."""

    model_id = "stand-in-random"

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim

    def _vec(self, text: str) -> list[float]:
        seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
        v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return (v / np.linalg.norm(v)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


def _perturb(text: str, rng: random.Random, vocab: list[str], rate: float = 0.2) -> str:
    return _WORD.sub(lambda m: rng.choice(vocab) if rng.random() < rate else m.group(0), text)


def synthetic_catalog(base: Catalog, target: int, seed: int = 7) -> Catalog:
    """The base catalog plus replicas of all its tools (perturbed texts) until it has ≥ `target` APIs."""
    replicas = max(0, math.ceil(target / len(base)) - 1)
    vocab = sorted({w.lower() for a in base for w in _WORD.findall(f"{a.name} {a.description}")})
    cats: list[Category] = []
    for cname in base.categories:
        cat = base.category(cname)
        tools = list(cat.tools)
        for r in range(1, replicas + 1):
            for t in cat.tools:
                rng = random.Random(f"{seed}/{r}/{t.category}/{t.key}")
                key = f"{t.key}_r{r}"
                name = f"{_perturb(t.name, rng, vocab, 0.3)} {rng.choice(vocab).title()} {r}"
                apis = tuple(dataclasses.replace(
                    a, id=f"{t.category}/{key}/{a.id.rsplit('/', 1)[1]}", tool_key=key, tool_name=name,
                    name=_perturb(a.name, rng, vocab, 0.2), description=_perturb(a.description, rng, vocab))
                    for a in t.apis)
                tools.append(Tool(key=key, name=name, category=t.category,
                                  description=_perturb(t.description, rng, vocab), apis=apis))
        cats.append(Category(name=cat.name, description=cat.description, tools=tuple(tools)))
    return Catalog(cats, name=f"synthetic-{target}")


def _queries(limit: int) -> list[str]:
    out: list[str] = []
    for f in sorted((SHARED / "queries").glob("*.json")):
        out += [q["query"] for q in json.loads(f.read_text(encoding="utf-8"))]
    return out[:: max(1, len(out) // limit)][:limit]


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def measure(target: int, embed_limit: int, n_queries: int) -> dict[str, Any]:
    """One size, in this process."""
    t0 = time.perf_counter()
    base = Catalog.from_toolbench(SHARED / "tools")
    load_s = time.perf_counter() - t0
    cat, synth_s = base, 0.0
    if target > len(base):
        t0 = time.perf_counter()
        cat = synthetic_catalog(base, target)
        synth_s = time.perf_counter() - t0
    use_minilm = len(cat) <= embed_limit and minilm_available()
    emb: Embeddings = MiniLMEmbeddings() if use_minilm else StandInEmbeddings()
    res: dict[str, Any] = {"apis": len(cat), "tools": cat.num_tools, "load_s": load_s, "synth_s": synth_s,
                           "dense": "MiniLM" if use_minilm else "stand-in random vectors"}
    with tempfile.TemporaryDirectory(prefix="anytool-bench-") as tmp:
        s = CatalogSearcher(cat, embeddings=emb, index_dir=tmp, progress=True)
        t0 = time.perf_counter()
        stats = s.build()
        res.update(build_s=time.perf_counter() - t0, bm25_s=stats.bm25_seconds, dense_s=stats.dense_seconds,
                   embedded=stats.embedded_documents)
        t0 = time.perf_counter()
        warm = CatalogSearcher(cat, embeddings=emb, index_dir=tmp)
        warm_stats = warm.build()
        res.update(warm_build_s=time.perf_counter() - t0, warm_loaded=warm_stats.dense_loaded)
        queries = _queries(n_queries)
        s.search_apis(queries[0], 10)  # first call loads the query model when not yet loaded
        lat = []
        for q in queries:
            t0 = time.perf_counter()
            s.search_apis(q, 10)
            lat.append(1000 * (time.perf_counter() - t0))
        res.update(p50_ms=statistics.median(lat), p95_ms=float(np.percentile(lat, 95)), queries=len(lat))
    res["peak_rss_mb"] = _peak_rss_mb()
    return res


def _target(spec: str) -> int:
    if spec in NAMED_SIZES:
        return NAMED_SIZES[spec]
    return int(spec.replace("_", ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", default=["real", "16k", "200k"], help="real | 16k | 200k | <N APIs>")
    ap.add_argument("--embed-limit", type=int, default=20_000,
                    help="embed with MiniLM up to this many APIs, stand-in vectors above (default 20000)")
    ap.add_argument("--queries", type=int, default=100, help="queries timed per size (default 100)")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not (SHARED / "tools").is_dir():
        print(f"needs the ToolBench catalog at {SHARED / 'tools'}", file=sys.stderr)
        return 1
    if args.child is not None:
        print("RESULT " + json.dumps(measure(args.child, args.embed_limit, args.queries)))
        return 0
    rows = []
    for spec in args.sizes:
        target = _target(spec)
        print(f"== {spec}: running in a child process ...", file=sys.stderr, flush=True)
        proc = subprocess.run([sys.executable, __file__, "--child", str(target), "--embed-limit", str(args.embed_limit),
                               "--queries", str(args.queries)], stdout=subprocess.PIPE, text=True, check=False)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if proc.returncode or line is None:
            print(f"size {spec} failed (exit {proc.returncode})", file=sys.stderr)
            return 1
        rows.append(json.loads(line[len("RESULT "):]))
    print("\ncatalog search benchmark (build = cold start into an empty index dir; warm = a second start)")
    head = ["APIs", "tools", "load s", "synth s", "BM25 s", "dense s", "embedded", "warm s", "p50 ms", "p95 ms",
            "peak RSS MB", "dense vectors"]
    table = [[f"{r['apis']:,}", f"{r['tools']:,}", f"{r['load_s']:.2f}", f"{r['synth_s']:.2f}", f"{r['bm25_s']:.2f}",
              f"{r['dense_s']:.1f}", f"{r['embedded']:,}", f"{r['warm_build_s']:.2f}", f"{r['p50_ms']:.1f}",
              f"{r['p95_ms']:.1f}", f"{r['peak_rss_mb']:.0f}", r["dense"]] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *table, strict=True)]
    for cells in [head, ["-" * w for w in widths], *table]:
        print("  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)))
    print("\nload s: Catalog.from_toolbench of the real catalog; synth s: generating the larger catalog in memory;")
    print("BM25 s / dense s: index build (dense = embedding + faiss IndexFlatIP + atomic write);")
    print("warm s: a second searcher on the same catalog (BM25 rebuilt, dense index loaded from disk);")
    print(f"p50/p95: search_apis(query, 10) over {args.queries} dev queries, including query embedding;")
    print("peak RSS: resource.getrusage(RUSAGE_SELF).ru_maxrss of the child process running that size.")
    if any(r["dense"] != "MiniLM" for r in rows):
        print("NOTE: sizes marked 'stand-in random vectors' did not run MiniLM: their dense time covers faiss and")
        print("      persistence only, and their search latency excludes model inference.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
