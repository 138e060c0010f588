"""Catalog search benchmark: every figure of issue 12, before (its measurements) → after (this run), in one table.

    .venv/bin/python benchmarks/catalog_search.py                      # real (2,490), 16k and 200k APIs
    .venv/bin/python benchmarks/catalog_search.py --sizes real 16k    # pick sizes (real | 16k | 200k | <N>)
    .venv/bin/python benchmarks/catalog_search.py --embed-limit 0     # stand-in vectors everywhere (fast)
    .venv/bin/python benchmarks/catalog_search.py --embeddings minilm:fp32   # another encoder

Per size: cold build, warm start (indexes loaded from disk), search p50/p95 (wall and process CPU time: on a shared
machine CPU time is what the work costs), peak RSS, and above the ANN threshold the share of the exact top-200 the
IVF index keeps. At the real size also: quality on the 519 dev queries (Recall@10, NDCG@5) with the eval's time,
and the cost of a whole warm `anytool search` process. Then query encoding alone for the old path
(sentence-transformers, whole query + sentences) and the ONNX Runtime encoders (with and without the whole query).

Larger catalogs are generated deterministically in memory from the real ToolBench catalog
(../shared/toolbench/tools): every tool is replicated into new tools whose names, descriptions and API texts
have a seeded share of their words replaced by other words of the catalog. Nothing is written into the repo; the
dense index goes to a temporary directory.

Dense vectors come from the encoder up to `--embed-limit` APIs; above it from a stand-in (hashed bag-of-words
random projection, see `StandInEmbeddings`), which times faiss, IVF recall and persistence but not the model, and
the output says so. Each size runs in its own process, so "peak RSS" (resource.getrusage ru_maxrss: the process's peak
resident set, including the interpreter, torch and the catalog) belongs to that size alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import random
import re
import resource
import shutil
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
from langgraph_anytool.catalog.dense_index import describe
from langgraph_anytool.catalog.documents import api_dense_text, split_query, tokenize
from langgraph_anytool.catalog.embeddings import resolve_embeddings
from langgraph_anytool.catalog.encoders import embeddings_id, minilm_available
from langgraph_anytool.catalog.search import CatalogSearcher, FusionWeights
from langgraph_anytool.eval.retrieval import evaluate_retrieval

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "toolbench"
REAL_SIZE = 2490
NAMED_SIZES = {"real": 0, "16k": 16_000, "200k": 200_000}
_WORD = re.compile(r"[A-Za-z]{3,}")


class StandInEmbeddings(Embeddings):
    """Hashed bag-of-words random projection: each word gets a seeded random direction, a text the normalised sum.

    Texts sharing words get close vectors, so nearest neighbours have real structure (unlike independent random
    vectors, on which no ANN index can keep its recall): it times faiss, IVF recall and persistence, not a model.
    """

    model_id = "stand-in-hashed-bow"

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self._words: dict[str, np.ndarray] = {}

    def _word(self, word: str) -> np.ndarray:
        vec = self._words.get(word)
        if vec is None:
            seed = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")
            vec = self._words[word] = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return vec

    def _vec(self, text: str) -> np.ndarray:
        words = tokenize(text) or ["_"]
        v = np.sum([self._word(w) for w in words], axis=0)
        return np.asarray(v / max(float(np.linalg.norm(v)), 1e-12), dtype=np.float32)

    def query_matrix(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._vec(t) for t in texts])

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.query_matrix(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text).tolist()


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


def _query_files() -> list[Path]:
    return sorted((SHARED / "queries").glob("*.json"))


def _queries(limit: int) -> list[str]:
    out: list[str] = []
    for f in _query_files():
        out += [q["query"] for q in json.loads(f.read_text(encoding="utf-8"))]
    return out[:: max(1, len(out) // limit)][:limit]


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


class _Clock:
    """Wall and process-CPU seconds of a block (CPU time is what the work costs when the machine is not shared)."""

    def __enter__(self) -> _Clock:
        self.w0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self.w0, time.process_time() - self.c0


def _latency(fn: Any, items: list[str]) -> dict[str, float]:
    wall, cpu = [], []
    for it in items:
        with _Clock() as c:
            fn(it)
        wall.append(1000 * c.wall)
        cpu.append(1000 * c.cpu)
    return {"p50": statistics.median(wall), "p95": float(np.percentile(wall, 95)),
            "cpu_p50": statistics.median(cpu), "cpu_p95": float(np.percentile(cpu, 95))}


def _embeddings(spec: str, n_apis: int, embed_limit: int) -> tuple[Embeddings, str]:
    if n_apis <= embed_limit and minilm_available():
        emb = resolve_embeddings(spec)
        assert emb is not None
        return emb, embeddings_id(emb)
    return StandInEmbeddings(), "stand-in (hashed bag-of-words)"


def _ann_overlap(searcher: CatalogSearcher, emb: Embeddings, queries: list[str], depth: int) -> dict[str, Any]:
    """Share of the exact top-`depth` API neighbours the API-level index returns, and both indexes' latency."""
    import faiss

    index = searcher._levels["apis"].dense
    ivf = faiss.extract_index_ivf(index) if describe(index) != "flat" else None
    if ivf is None:
        return {}
    vecs = np.stack([searcher._query_vectors([q])[0] for q in queries])
    n = index.ntotal
    exact = faiss.IndexFlatIP(vecs.shape[1])
    docs = [api_dense_text(a) for a in searcher._apis]
    for start in range(0, n, 8192):
        exact.add(np.asarray(emb.embed_documents(docs[start:start + 8192]), dtype=np.float32))
    _, e_idx = exact.search(vecs, depth)
    _, a_idx = index.search(vecs, depth)
    overlap = float(np.mean([len(set(e) & set(a)) / depth for e, a in zip(e_idx, a_idx, strict=True)]))
    flat_lat = _latency(lambda i: exact.search(vecs[int(i): int(i) + 1], depth), [str(i) for i in range(len(vecs))])
    ann_lat = _latency(lambda i: index.search(vecs[int(i): int(i) + 1], depth), [str(i) for i in range(len(vecs))])
    return {"ann_overlap": overlap, "flat_ms": flat_lat["p50"], "ann_ms": ann_lat["p50"],
            "flat_cpu_ms": flat_lat["cpu_p50"], "ann_cpu_ms": ann_lat["cpu_p50"]}


def measure(target: int, spec: str, embed_limit: int, n_queries: int, index_dir: str, quality: bool) -> dict[str, Any]:
    """One size, in this process: cold build, warm start, search latency, peak RSS (then ANN overlap, quality)."""
    with _Clock() as c:
        base = Catalog.from_toolbench(SHARED / "tools")
    res: dict[str, Any] = {"load_s": c.wall}
    cat = base
    if target > len(base):
        with _Clock() as c:
            cat = synthetic_catalog(base, target)
        res["synth_s"] = c.wall
    with _Clock() as c:
        cat.fingerprint()
    emb, label = _embeddings(spec, len(cat), embed_limit)
    res.update(apis=len(cat), tools=cat.num_tools, fingerprint_s=c.wall, dense=label)
    tmp = Path(index_dir) / f"size-{len(cat)}"
    shutil.rmtree(tmp, ignore_errors=True)
    with _Clock() as c:
        stats = CatalogSearcher(cat, embeddings=emb, index_dir=tmp, progress=True).build()
    res.update(build_s=c.wall, build_cpu_s=c.cpu, bm25_s=stats.bm25_seconds, dense_s=stats.dense_seconds,
               embedded=stats.embedded_documents, dense_kind=stats.dense_kind)
    # warm start: a fresh searcher (and a fresh encoder) on the same catalog, every index loaded from disk
    emb, _ = _embeddings(spec, len(cat), embed_limit)
    with _Clock() as c:
        warm = CatalogSearcher(cat, embeddings=emb, index_dir=tmp)
        wstats = warm.build()
    res.update(warm_s=c.wall, warm_cpu_s=c.cpu, warm_loaded=wstats.bm25_loaded and wstats.dense_loaded)
    queries = _queries(n_queries)
    warm.search_apis("warm up the encoder", 10)
    lat = _latency(lambda q: warm.search_apis(q, 10), queries)
    res.update({f"search_{k}": v for k, v in lat.items()}, queries=len(queries))
    res["peak_rss_mb"] = _peak_rss_mb()
    res.update(_ann_overlap(warm, emb, queries, warm.weights.depth))
    if quality:
        with _Clock() as c:
            rep = evaluate_retrieval(cat, _query_files(), recall_ks=(10,), ndcg_ks=(5,),
                                     search=lambda q, k: [h.api_id for h in warm.search_apis(q, k)])
        res.update(eval_s=c.wall, eval_cpu_s=c.cpu, eval_queries=rep.overall.queries,
                   r10=100 * rep.overall.metrics["Recall@10"], ndcg5=100 * rep.overall.metrics["NDCG@5"])
    return res


def encoder_latency(n_queries: int) -> list[dict[str, Any]]:
    """Query encoding alone, old path (sentence-transformers, whole query + sentences) vs the ONNX runtimes."""
    queries = _queries(n_queries)
    rows = []
    for spec, whole in (("minilm:torch", True), ("minilm:fp32", True), ("minilm:int8", True), ("minilm:fp32", False),
                        ("minilm:int8", False)):
        emb = resolve_embeddings(spec)
        assert emb is not None
        probe = CatalogSearcher(Catalog([], name="empty"), embeddings=emb, weights=FusionWeights(encode_whole=whole))

        def encode(q: str, probe: CatalogSearcher = probe) -> None:
            parts = [q.strip()]
            sentences = split_query(q)
            if len(sentences) > 1:
                parts += sentences
            probe._query_vectors(parts)

        with _Clock() as c:
            encode("load the model")
        if hasattr(emb, "cache_size"):
            emb.cache_size = 0  # measure encoding, not the cache
        rows.append({"encoder": spec, "parts": "whole + sentences" if whole else "sentences",
                     "load_s": c.wall, **_latency(encode, queries)})
    return rows


def process_cost(index_dir: str, embed_limit: int) -> dict[str, Any]:
    """A whole `anytool search` process on the real catalog with warm indexes: wall seconds and peak RSS."""
    cmd = [str(Path(sys.executable).with_name("anytool")), "search", "weather forecast for Paris", "--catalog",
           str(SHARED / "tools"), "--index-dir", str(Path(index_dir) / "size-2490"), "--embeddings", "minilm"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage (RUSAGE_CHILDREN would mix in the sizes')
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    probe = ("import sys, io, contextlib; from langgraph_anytool.cli import main; "
             "f = io.StringIO(); r = contextlib.redirect_stdout(f); r.__enter__(); main(sys.argv[1:]); r.__exit__(None, None, None); "
             "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers', 'sklearn') if m in sys.modules))")
    mods = subprocess.run([sys.executable, "-c", probe, *cmd[1:]], capture_output=True, text=True, check=False)
    return {"ok": proc.returncode == 0, "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024,
            "heavy_modules": mods.stdout.strip().splitlines()[-1:] or [mods.stderr[-200:]]}


def _target(spec: str) -> int:
    if spec in NAMED_SIZES:
        return NAMED_SIZES[spec]
    return int(spec.replace("_", ""))


# figures before this change (issue 12's measurements on the same machine, sentence-transformers fp32 path)
BEFORE = {
    "real": {"p95": "100", "build": "45", "warm": "0.3 (BM25 rebuilt)", "rss": "-", "r10": "83.5", "ndcg5": "69.4"},
    "16k": {"p95": "~100", "build": "255", "warm": "2.3 (BM25 rebuilt)", "rss": "-"},
    "200k": {"p95": "84 (p50 52)", "build": "-", "warm": "27-31 (BM25 rebuilt)", "rss": "2300"},
}


def _print_table(head: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
    for cells in [head, ["-" * w for w in widths], *rows]:
        print("  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", default=["real", "16k", "200k"], help="real | 16k | 200k | <N APIs>")
    ap.add_argument("--embeddings", default="minilm", help="encoder spec for sizes up to --embed-limit (minilm)")
    ap.add_argument("--embed-limit", type=int, default=20_000,
                    help="embed with the model up to this many APIs, stand-in vectors above (default 20000)")
    ap.add_argument("--queries", type=int, default=100, help="queries timed per size (default 100)")
    ap.add_argument("--no-encoders", action="store_true", help="skip the encoder comparison (loads torch)")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--index-dir", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not (SHARED / "tools").is_dir():
        print(f"needs the ToolBench catalog at {SHARED / 'tools'}", file=sys.stderr)
        return 1
    if args.child is not None:
        if args.child < 0:
            print("RESULT " + json.dumps(encoder_latency(args.queries)))
        else:
            print("RESULT " + json.dumps(measure(args.child, args.embeddings, args.embed_limit, args.queries,
                                                 args.index_dir, quality=args.child == 0)))
        return 0
    rows, named = [], []
    with tempfile.TemporaryDirectory(prefix="anytool-bench-") as tmp:
        for spec in args.sizes:
            print(f"== {spec}: running in a child process ...", file=sys.stderr, flush=True)
            row = _child(_target(spec), args, tmp)
            if row is None:
                print(f"size {spec} failed", file=sys.stderr)
                return 1
            rows.append(row)
            named.append(spec)
        proc_cost = process_cost(tmp, args.embed_limit) if "real" in args.sizes else None
    encoders = None if args.no_encoders else _child(-1, args, "")
    print("\ncatalog search benchmark: before (issue 12, sentence-transformers) → after (this run)")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall times grow with it;"
          " CPU = this process's CPU time)")
    head = ["APIs", "dense vectors", "dense index", "search p95 ms before→after", "(p50)", "CPU p95",
            "cold build s before→after", "(CPU)", "warm start s before→after", "peak RSS MB before→after"]
    table = []
    for spec, r in zip(named, rows, strict=True):
        b = BEFORE.get(spec, {})
        table.append([f"{r['apis']:,}", r["dense"], r["dense_kind"], f"{b.get('p95', '-')} → {r['search_p95']:.1f}",
                      f"{r['search_p50']:.1f}", f"{r['search_cpu_p95']:.1f}",
                      f"{b.get('build', '-')} → {r['build_s']:.1f}", f"{r['build_cpu_s']:.1f}",
                      f"{b.get('warm', '-')} → {r['warm_s']:.2f}", f"{b.get('rss', '-')} → {r['peak_rss_mb']:.0f}"])
    _print_table(head, table)
    for r in rows:
        if "ann_overlap" in r:
            print(f"ANN at {r['apis']:,} APIs ({r['dense_kind']}): keeps {100 * r['ann_overlap']:.1f}% of the exact "
                  f"top-200; vector search p50 {r['ann_ms']:.2f} ms vs exact {r['flat_ms']:.2f} ms "
                  f"(CPU {r['ann_cpu_ms']:.2f} vs {r['flat_cpu_ms']:.2f} ms)")
    for r in rows:
        if "r10" in r:
            print(f"quality on {r['eval_queries']} dev queries ({r['dense']}): Recall@10 83.5 → {r['r10']:.1f}, "
                  f"NDCG@5 69.4 → {r['ndcg5']:.1f}; eval time (warm) 487 s → {r['eval_s']:.1f} s "
                  f"(CPU {r['eval_cpu_s']:.1f} s)")
    if proc_cost:
        print(f"warm `anytool search` process (2,490 APIs, default embeddings): 9 s / 566 MB → "
              f"{proc_cost['wall_s']:.2f} s (CPU {proc_cost['cpu_s']:.2f} s) / {proc_cost['rss_mb']:.0f} MB"
              f"{'' if proc_cost['ok'] else '  (FAILED)'}; heavy modules imported: {proc_cost['heavy_modules'][0]}")
    if encoders:
        print("\nquery encoding alone (per query, all its parts in one batch):")
        _print_table(["encoder", "parts", "load s", "p50 ms", "p95 ms", "CPU p50", "CPU p95"],
                     [[e["encoder"], e["parts"], f"{e['load_s']:.2f}", f"{e['p50']:.1f}", f"{e['p95']:.1f}",
                       f"{e['cpu_p50']:.1f}", f"{e['cpu_p95']:.1f}"] for e in encoders])
    print("\ncold build: every index from an empty index dir (BM25 tokenising + embedding + faiss + writes);")
    print("warm start: a new searcher on the same in-memory catalog loading BM25 and faiss from disk (mmap);")
    print(f"search: search_apis(query, 10) over {args.queries} dev queries, encoder cache cleared by distinct texts;")
    print("peak RSS: ru_maxrss of the child process for that size (before the ANN overlap check builds an exact index).")
    if any(not r["dense"].startswith("sentence") for r in rows if r["dense"].startswith("stand-in")):
        print("NOTE: 'stand-in' sizes use hashed bag-of-words vectors instead of the model: their build and search")
        print("      times exclude model inference (query encoding cost is in the encoder table above).")
    return 0


def _child(target: int, args: argparse.Namespace, index_dir: str) -> Any:
    cmd = [sys.executable, __file__, "--child", str(target), "--embed-limit", str(args.embed_limit), "--queries",
           str(args.queries), "--embeddings", args.embeddings, "--index-dir", index_dir or "."]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=False)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if proc.returncode or line is None:
        return None
    return json.loads(line[len("RESULT "):])


if __name__ == "__main__":
    sys.exit(main())
