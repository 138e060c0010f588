"""Timing helpers shared by the catalog search benchmarks: hybrid against BM25-only search in the same run, and the
query encoder's cost beside its floor.

A script in `benchmarks/` imports them as `from search_timing import search_latency, encoder_floor` (its own
folder is on `sys.path` when it runs). On a shared machine wall times grow with the load: compare searchers timed in
the same run (`search_latency` interleaves them query by query, so a load spike hits all of them alike) and quote
the ratio, with the load average it prints.

    .venv/bin/python benchmarks/search_timing.py            # 2,490 APIs: hybrid vs BM25-only, encoder floor
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from langgraph_anytool.catalog.search import CatalogSearcher

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "toolbench"


def _summary(wall: list[float], cpu: list[float]) -> dict[str, float]:
    return {"p50": statistics.median(wall), "p95": float(np.percentile(wall, 95)),
            "cpu_p50": statistics.median(cpu), "cpu_p95": float(np.percentile(cpu, 95))}


def search_latency(searchers: Mapping[str, CatalogSearcher], queries: Sequence[str], k: int = 10,
                   rounds: int = 1) -> dict[str, dict[str, float]]:
    """Per searcher: p50/p95 wall and process-CPU ms of `search_apis(q, k)`, the searchers taking turns on each query.

    Indexes are built (or loaded) and the encoder loaded first; the encoders' query caches are switched off, so
    every search encodes its query.
    """
    for s in searchers.values():
        s.build()
        s.search_apis("warm up the encoder", k)
        if hasattr(s.embeddings, "cache_size"):
            s.embeddings.cache_size = 0  # type: ignore[union-attr]
    wall: dict[str, list[float]] = {name: [] for name in searchers}
    cpu: dict[str, list[float]] = {name: [] for name in searchers}
    for _ in range(rounds):
        for q in queries:
            for name, s in searchers.items():
                w0, c0 = time.perf_counter(), time.process_time()
                s.search_apis(q, k)
                wall[name].append(1000 * (time.perf_counter() - w0))
                cpu[name].append(1000 * (time.process_time() - c0))
    return {name: _summary(wall[name], cpu[name]) for name in searchers}


def encoder_flops(tokens: int, hidden: int = 384, layers: int = 6, intermediate: int = 1536) -> float:
    """Floating-point operations (2 per multiply-add) of a BERT encoder on one text of `tokens` word pieces:
    the Q, K, V, output and two feed-forward projections per token, plus attention's two T × T products
    (all-MiniLM-L6-v2's sizes by default)."""
    per_token = 4 * hidden * hidden + 2 * hidden * intermediate
    attention = 2 * tokens * tokens * hidden
    return 2.0 * layers * (tokens * per_token + attention)


def int8_gemm_gops(m: int = 16, k: int = 384, n: int = 1536, seconds: float = 0.2, repeats: int = 7) -> float:
    """This machine's int8 matrix-product throughput in GOPS (2 per multiply-add): ONNX Runtime's `MatMulInteger`
    (uint8 × int8, the kernel the int8 encoder runs) on one thread, at a query-sized shape by default (m rows, the
    feed-forward's k × n weights); the best of `repeats` runs of `seconds` of process CPU time each."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = numpy_helper.from_array(rng.integers(-127, 128, (k, n)).astype(np.int8), "B")
    graph = helper.make_graph([helper.make_node("MatMulInteger", ["A", "B"], ["Y"])], "gemm",
                              [helper.make_tensor_value_info("A", TensorProto.UINT8, [m, k])],
                              [helper.make_tensor_value_info("Y", TensorProto.INT32, [m, n])], initializer=[weights])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    feed = {"A": rng.integers(0, 256, (m, k)).astype(np.uint8)}
    for _ in range(5):
        session.run(None, feed)
    best = float("inf")
    for _ in range(repeats):
        runs, c0 = 0, time.process_time()
        while time.process_time() - c0 < seconds:
            session.run(None, feed)
            runs += 1
        best = min(best, (time.process_time() - c0) / runs)
    return 2.0 * m * k * n / best / 1e9


def encoder_floor(encoder: Any, tokens: int = 16, samples: int = 40) -> dict[str, float]:
    """The query encoder's cost per `tokens`-word-piece text (`encode_alone`: one text, no padding) beside its
    floor: the model's FLOPs for such a text at this machine's int8 throughput (`int8_gemm_gops`)."""
    encoder.query_matrix(["load the encoder"])
    vocab = ["weather", "forecast", "city", "currency", "convert", "stock", "price", "football", "league", "movie", "song", "recipe", "translate", "word", "joke", "news", "email", "phone", "number", "address", "map", "route", "hotel", "flight"]
    rng = np.random.default_rng(1)
    texts: list[str] = []
    while len(texts) < samples:  # texts of exactly `tokens` word pieces with [CLS] and [SEP]
        words = [str(w) for w in rng.choice(vocab, tokens - 2)]
        texts.append(" ".join(words))
    lengths = {len(encoder._tokenizer.encode(t).ids) for t in texts}
    wall, cpu = [], []
    for t in texts:
        w0, c0 = time.perf_counter(), time.process_time()
        encoder.encode_alone([t])
        wall.append(1000 * (time.perf_counter() - w0))
        cpu.append(1000 * (time.process_time() - c0))
    gops = int8_gemm_gops()
    flops = encoder_flops(tokens)
    return {"tokens": float(tokens), "token_lengths": float(max(lengths)), "mflop": flops / 1e6, "int8_gops": gops,
            "floor_ms": flops / (gops * 1e9) * 1000, **_summary(wall, cpu)}


def _dev_queries(limit: int) -> list[str]:
    out: list[str] = []
    for f in sorted((SHARED / "queries").glob("*.json")):
        out += [q["query"] for q in json.loads(f.read_text(encoding="utf-8"))]
    return out[:: max(1, len(out) // limit)][:limit]


def main() -> int:
    from langgraph_anytool.catalog import Catalog
    from langgraph_anytool.catalog.documents import split_query
    from langgraph_anytool.catalog.search import FusionWeights

    catalog = Catalog.from_toolbench(SHARED / "tools")
    queries = _dev_queries(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
    sentences = [s for q in queries for s in split_query(q)][: len(queries)]
    searchers = {"hybrid": CatalogSearcher(catalog, embeddings="minilm", progress=False),
                 "hybrid, whole query encoded too": CatalogSearcher(catalog, embeddings="minilm", progress=False,
                                                                     weights=FusionWeights(encode_whole=True)),
                 "BM25 only": CatalogSearcher(catalog, embeddings="none", progress=False)}
    print(f"{len(catalog):,} APIs, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start")
    for label, qs in (("dev queries", queries), ("their sentences (agent-sized queries)", sentences)):
        lat = search_latency(searchers, qs)
        base = lat["BM25 only"]["p50"]
        print(f"\n{label} ({len(qs)}):")
        for name, r in lat.items():
            print(f"  {name:32s} p50 {r['p50']:7.2f} ms  p95 {r['p95']:7.2f}  CPU p50 {r['cpu_p50']:7.2f}  "
                  f"ratio to BM25 p50 {r['p50'] / base:5.2f}x")
    floor = encoder_floor(searchers["hybrid"].embeddings)
    print(f"\nquery encoder, one {floor['tokens']:.0f}-token text: p50 {floor['p50']:.2f} ms (CPU {floor['cpu_p50']:.2f}),"
          f" p95 {floor['p95']:.2f}; floor {floor['floor_ms']:.2f} ms = {floor['mflop']:.0f} MFLOP at "
          f"{floor['int8_gops']:.0f} GOPS (int8 GEMM, one thread, measured here)")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
