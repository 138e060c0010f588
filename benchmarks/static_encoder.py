"""Static encoders (`catalog/static_encoder.py`) on issue 37's protocol: which variant, chosen on the tuning part.

Queries: the 519 shared development queries of ../shared/toolbench, split by `eval.training.query_folds` (3 folds,
seed 0): variants are compared on the tuning part (folds 0 and 1, 346 queries) and reported on fold 2 (173) and
all 519. Each row builds the default document recipe's index from nothing with the variant as the dense encoder
(BM25 + static, default fusion), and ``static only`` rows rank by the dense half alone (BM25 weight 0), to show
what the table itself knows. The distillation's one-time cost is printed when it runs here (first use).

    python benchmarks/static_encoder.py [--dims 64 128 256 384] [--weightings zipf none] [--wordllama] \\
        [--idf] [--work DIR]

`--idf` adds, for each static variant, the table reweighted by BM25-style idf of the catalog's own API documents
(log((N + 1) / (df + 0.5)) per word piece, over the texts the index embeds): a catalog-specific table, measured
here only.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from retrieval_table import scores  # the benchmarks beside this one
from retriever_training import default_toolbench, load_average
from search_timing import search_latency

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.fusion import FusionWeights
from langgraph_anytool.catalog.search import CatalogSearcher
from langgraph_anytool.catalog.static_encoder import (
    DEFAULT_DIMS,
    DEFAULT_WEIGHTING,
    StaticEncoder,
    distil_table,
    distilled_table_path,
    finish_table,
)
from langgraph_anytool.eval.retrieval import EvalQuery, load_queries
from langgraph_anytool.eval.training import EVAL_FOLD, SPLIT_FOLDS, SPLIT_SEED, query_folds


class _Recorder(StaticEncoder):
    """Keeps the texts the index embeds (for `--idf`)."""

    texts: list[str]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts = getattr(self, "texts", []) + list(texts)
        return super().embed_documents(texts)


def idf_encoder(base: StaticEncoder, texts: list[str]) -> StaticEncoder:
    """`base`'s table with each word piece's row scaled by its idf over `texts` (pieces unseen: the largest idf)."""
    table, tok = base._load()
    df = np.zeros(table.shape[0], dtype=np.float64)
    for enc in tok.encode_batch(texts, add_special_tokens=False):
        ids = np.unique(np.asarray(enc.ids, dtype=np.int64))
        df[ids[ids < table.shape[0]]] += 1
    idf = np.log((len(texts) + 1) / (df + 0.5))
    weighted = np.ascontiguousarray(table * idf[:, None].astype(np.float32))
    return StaticEncoder(lambda: (weighted, tok), base.model_id + f":idf{len(texts)}")


class _Asymmetric:
    """Documents by MiniLM int8 (contextual vectors, once per index), queries by the distilled table in MiniLM's
    own space (no centring or PCA, `weighting` as the static encoder's): only the query side is static."""

    def __init__(self, weighting: str) -> None:
        from langgraph_anytool.catalog.encoders import resolve_encoder
        from langgraph_anytool.catalog.minilm_package import packaged_minilm_dir
        from langgraph_anytool.catalog.model_folder import load_tokenizer

        self.documents = resolve_encoder("minilm:int8")
        raw = distil_table()
        table = raw * (np.log1p(np.arange(raw.shape[0]))[:, None] if weighting == "zipf" else 1.0)
        table = np.ascontiguousarray(table, dtype=np.float32)
        self.queries = StaticEncoder(lambda: (table, load_tokenizer(packaged_minilm_dir(), raw.shape[0])), "q")
        self.model_id = f"experiment:minilm-documents+static-queries:{weighting}"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return list(self.documents.embed_documents(texts))

    def embed_query(self, text: str) -> list[float]:
        return self.queries.embed_query(text)

    def token_means(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        return self.queries.token_means(texts)

    def query_matrix(self, texts: list[str]) -> np.ndarray:
        return self.queries.query_matrix(texts)


def folder_mb(*folders: Path | None) -> float:
    return sum(p.stat().st_size for f in folders if f for p in f.rglob("*") if p.is_file()) / 1e6


def rows_for(name: str, encoder: Any, catalog: Catalog, parts: dict[str, list[EvalQuery]], work: Path,
             dense_weights: list[float], searchers: dict[str, CatalogSearcher]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    folder = work / name.replace(" ", "_").replace("/", "_")
    t0, c0 = time.perf_counter(), time.process_time()
    searcher = CatalogSearcher(catalog, embeddings=encoder, index_dir=folder, progress=False)
    stats = searcher.build()
    build = (time.perf_counter() - t0, time.process_time() - c0)
    searchers[name] = searcher
    size = folder_mb(Path(stats.bm25_path) if stats.bm25_path else None,
                     Path(stats.index_path) if stats.index_path else None)
    rankings: list[tuple[str, FusionWeights | None]] = [("hybrid", None)]
    if encoder != "none":
        rankings += [(f"hybrid, dense weight {d}", FusionWeights(dense=d)) for d in dense_weights if d != FusionWeights().dense]
        rankings.append(("static only", FusionWeights(bm25=0.0)))
    for label, weights in rankings:
        if weights is not None:
            searcher.weights = weights
        out[f"{name} | {label}"] = {f"{part} {k}": v for part, qs in parts.items()
                                    for k, v in scores(searcher, qs).items()} | {"build s": build[0],
                                                                                  "build CPU s": build[1],
                                                                                  "index MB": size}
    searcher.weights = FusionWeights()
    return out


def query_cost(encoder: StaticEncoder, tokens: int = 16, runs: int = 20000) -> dict[str, float]:
    """A static encoder's cost for one `tokens`-word-piece query (`query_matrix`, process CPU, mean of `runs`) beside
    its tokenizer's share and its arithmetic (one add per word piece and dimension, plus the normalisation): the
    line `search_timing.encoder_floor` gives MiniLM."""
    table, tok = encoder._load()
    words = ["weather", "forecast", "city", "currency", "convert", "stock", "price", "football", "league", "movie",
             "song", "recipe", "translate", "word", "joke", "news", "email", "phone", "number", "address"]
    while len(tok.encode(" ".join(words), add_special_tokens=False).ids) > tokens:
        words.pop()
    text = " ".join(words)
    pieces = len(tok.encode(text, add_special_tokens=False).ids)
    for _ in range(200):
        encoder.query_matrix([text])
    c0 = time.process_time()
    for _ in range(runs):
        encoder.query_matrix([text])
    total = (time.process_time() - c0) / runs
    c0 = time.process_time()
    for _ in range(runs):
        tok.encode(text, add_special_tokens=False)
    tokenizer = (time.process_time() - c0) / runs
    return {"pieces": pieces, "cpu_us": total * 1e6, "tokenizer_us": tokenizer * 1e6,
            "flop": float(pieces * table.shape[1] + 3 * table.shape[1])}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--toolbench", type=Path, default=default_toolbench())
    ap.add_argument("--dims", type=int, nargs="*", default=[DEFAULT_DIMS])
    ap.add_argument("--weightings", nargs="*", default=[DEFAULT_WEIGHTING])
    ap.add_argument("--wordllama", action="store_true", help="also the packaged WordLlama table")
    ap.add_argument("--idf", action="store_true", help="also the default variant reweighted by the catalog's idf")
    ap.add_argument("--asymmetric", action="store_true",
                    help="also MiniLM document vectors with static query vectors (MiniLM's space, zipf)")
    ap.add_argument("--dense-weights", type=float, nargs="*", default=[1.0],
                    help="fusion dense weights tried for each variant (default: the default 1.0 only)")
    ap.add_argument("--skip-default", action="store_true", help="skip the static variants of --dims/--weightings")
    ap.add_argument("--timing", action="store_true",
                    help="time search_apis over the fold-2 queries: each variant, BM25 only and the default MiniLM "
                         "(its index from the usual index folder), interleaved (search_timing.search_latency)")
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="static-encoder-"))
    catalog = Catalog.from_toolbench(args.toolbench / "tools")
    queries = [q for q in load_queries(sorted((args.toolbench / "queries").glob("*.json")), catalog) if q.relevant]
    fold = query_folds([q.query for q in queries], SPLIT_FOLDS, SPLIT_SEED)
    parts = {"tuning": [q for q in queries if fold[q.query] != EVAL_FOLD],
             "fold 2": [q for q in queries if fold[q.query] == EVAL_FOLD], "all": queries}
    print(f"{len(catalog)} APIs; tuning {len(parts['tuning'])}, fold 2 {len(parts['fold 2'])}, all {len(queries)} "
          f"queries; load average {load_average()}", flush=True)
    if not distilled_table_path().is_file():
        t0, c0 = time.perf_counter(), time.process_time()
        distil_table()
        print(f"distilled the packaged MiniLM: {time.perf_counter() - t0:.1f} s wall, "
              f"{time.process_time() - c0:.1f} s CPU (once; cached at {distilled_table_path()})", flush=True)
    raw = distil_table()
    t0 = time.perf_counter()
    finish_table(raw, DEFAULT_DIMS, DEFAULT_WEIGHTING)
    print(f"PCA + weights at load: {1000 * (time.perf_counter() - t0):.0f} ms", flush=True)
    rows: dict[str, dict[str, float]] = {}
    searchers: dict[str, CatalogSearcher] = {}
    variants: list[tuple[str, Any]] = [("BM25 only", "none")]
    if not args.skip_default:
        variants += [(f"minilm:static pca{d} {w}", StaticEncoder.distilled(dims=d, weighting=w))
                     for d in args.dims for w in args.weightings]
    if args.asymmetric:
        variants.append(("MiniLM documents, static queries (zipf)", _Asymmetric("zipf")))
    if args.wordllama:
        variants.append(("wordllama", StaticEncoder.wordllama()))
    if args.idf:  # each static variant again, its rows scaled by the catalog's idf
        recorder = _Recorder.distilled()
        CatalogSearcher(catalog, embeddings=recorder, index_dir=work / "recorder", progress=False).build()
        variants += [(f"{name} × catalog idf", idf_encoder(enc, recorder.texts)) for name, enc in list(variants)
                     if isinstance(enc, StaticEncoder)]
    for name, encoder in variants:
        found = rows_for(name, encoder, catalog, parts, work, args.dense_weights, searchers)
        if name == "BM25 only":
            found = {"BM25 only | -": next(iter(found.values()))}
        for key, row in found.items():
            rows[key] = row
            print(f"[{time.strftime('%H:%M:%S')}] {key}: " + ", ".join(f"{k} {v:.1f}" for k, v in row.items()),
                  file=sys.stderr, flush=True)
    if args.timing:
        searchers["minilm (default)"] = CatalogSearcher(catalog, embeddings="minilm", progress=False)
        print(f"\ntiming over {len(parts['fold 2'])} fold-2 queries, load average {load_average()}", flush=True)
        lat = search_latency(searchers, [q.query for q in parts["fold 2"]])
        base = lat["BM25 only"]
        for name, r in lat.items():
            print(f"  {name:48s} p50 {r['p50']:7.2f} ms  p95 {r['p95']:7.2f}  CPU p50 {r['cpu_p50']:6.2f}  "
                  f"CPU p95 {r['cpu_p95']:6.2f}  p50 / BM25 {r['p50'] / base['p50']:5.2f}x  "
                  f"CPU p50 / BM25 {r['cpu_p50'] / base['cpu_p50']:5.2f}x")
        for name, s in searchers.items():
            if name in ("BM25 only", "minilm (default)") or not hasattr(s.embeddings, "token_means"):
                continue
            texts = [q.query for q in parts["fold 2"]]
            c0 = time.process_time()
            for _ in range(5):
                s.embeddings.token_means(texts)  # type: ignore[union-attr]
            per = (time.process_time() - c0) / (5 * len(texts)) * 1e6
            print(f"  {name}: query encoding {per:.0f} µs CPU per whole dev query (tokenizer + lookup)")
            if isinstance(s.embeddings, StaticEncoder):
                cost = query_cost(s.embeddings)
                print(f"  {name}: one {cost['pieces']:.0f}-piece query {cost['cpu_us']:.1f} µs CPU (tokenizer "
                      f"{cost['tokenizer_us']:.1f} µs); arithmetic {cost['flop']:.0f} FLOP, under 0.1 µs")
        print(f"load average after timing {load_average()}")
    head = ["variant | ranking", *(f"{p} {m}" for p in parts for m in ("Recall@10", "NDCG@5")), "build s", "index MB"]
    print(f"\nload average at the end {load_average()}")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key, row in rows.items():
        cells = [f"{row[f'{p} {m}']:.1f}" for p in parts for m in ("Recall@10", "NDCG@5")]
        print(f"| {key} | " + " | ".join(cells) + f" | {row['build s']:.1f} | {row['index MB']:.1f} |")
    return 0 if all(math.isfinite(v) for r in rows.values() for v in r.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
