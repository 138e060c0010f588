"""What `anytool index train` is worth on ../shared/toolbench, measured without touching any other query.

The shared development queries (519, six groups) are the only ones used. Two figures, labelled apart:

- **held-out (k-fold CV)**: the queries are split by query into k folds (seeded shuffle); for each fold an encoder
  is trained on the other k-1 folds (written as query files in the original format, one per group) and scored on
  the held-out fold only; the per-query scores of all folds are averaged (each query is held out exactly once);
- **train overlap**: an encoder trained on all queries, scored on those same queries (what `anytool eval
  retrieval --allow-train-overlap` prints): an upper bound, not a generalisation figure.

Each trained encoder is scored with the default fusion weights and with its own `fusion.json` (the fixed
trained-encoder weights, or with `--fit-fusion` the weights fitted on its own training queries). The untrained rows
are the default encoder (packaged all-MiniLM-L6-v2, ONNX int8) on all queries, with the default weights and with
the fixed trained-encoder weights (so the table separates what training brings from what the weights bring). Search latency: every query searched once by the untrained and once by the
full-set encoder (order alternating, query-vector caches off), both ONNX int8, in this process; p50 per query.
The load average is printed at the start and the end: the machine's 2 cores may be shared.

    python benchmarks/retriever_training.py [--toolbench DIR] [--folds 3] [--epochs 3] [--seed 0] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.embeddings import minilm
from langgraph_anytool.catalog.fusion import weights_from_file
from langgraph_anytool.catalog.search import CatalogSearcher, FusionWeights
from langgraph_anytool.eval.metrics import ndcg_at_k, recall_at_k
from langgraph_anytool.eval.retrieval import EvalQuery, check_train_overlap, load_queries
from langgraph_anytool.eval.training import TrainSettings, query_folds, train_encoder, trained_fusion_weights

RECALL_KS = (5, 10, 64)
NDCG_KS = (5, 10)
METRICS = [f"Recall@{k}" for k in RECALL_KS] + [f"NDCG@{k}" for k in NDCG_KS]


def default_toolbench() -> Path:
    here = Path(__file__).resolve().parents[1]
    for cand in (here.parent / "shared" / "toolbench", Path("/work/shared/toolbench")):
        if (cand / "tools").is_dir():
            return cand
    return here.parent / "shared" / "toolbench"


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def per_query_scores(searcher: CatalogSearcher, queries: Sequence[EvalQuery],
                     weights: dict[str, FusionWeights]) -> dict[str, list[dict[str, float]]]:
    """Each query searched once per reciprocal-rank constant (`rrf_k`) among `weights`; its API ranking re-fused
    under every named weight set of that constant; metrics per query."""
    from dataclasses import replace

    depth = max(*RECALL_KS, *NDCG_KS)
    out: dict[str, list[dict[str, float]]] = {name: [] for name in weights}
    base = searcher.weights
    for rrf_k in sorted({w.rrf_k for w in weights.values()}):
        searcher.weights = replace(base, rrf_k=rrf_k)
        named = {name: w for name, w in weights.items() if w.rrf_k == rrf_k}
        for q in queries:
            comps = searcher.api_components(q.query)
            for name, w in named.items():
                ranked = searcher.ranked_api_ids(searcher.api_scores_from(comps, w), depth)
                row = {f"Recall@{k}": recall_at_k(ranked, q.relevant, k) for k in RECALL_KS}
                row |= {f"NDCG@{k}": ndcg_at_k(ranked, q.relevant, k) for k in NDCG_KS}
                out[name].append(row)
    searcher.weights = base
    return out


def mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {m: 100 * sum(r[m] for r in rows) / max(1, len(rows)) for m in METRICS}


def parse_settings(items: Sequence[str]) -> dict[str, Any]:
    """`FIELD=JSON` pairs as TrainSettings keyword arguments (JSON lists become tuples)."""
    from dataclasses import fields

    known = {f.name for f in fields(TrainSettings)}
    out: dict[str, Any] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        if not sep or name not in known:
            raise SystemExit(f"--set {item!r}: expected FIELD=JSON with FIELD among {sorted(known)}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        out[name] = tuple(value) if isinstance(value, list) else value
    return out


def write_fold_files(raw: dict[str, list[Any]], keep: set[tuple[str, int]], folder: Path) -> list[Path]:
    """One query file per group holding the kept entries, unchanged (the released format)."""
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for group, items in raw.items():
        chosen = [it for n, it in enumerate(items) if (group, n) in keep]
        if chosen:
            path = folder / f"{group}.json"
            path.write_text(json.dumps(chosen), encoding="utf-8")
            files.append(path)
    return files


def fusion_of(result_dir: Path) -> FusionWeights | None:
    path = result_dir / "fusion.json"
    if not path.is_file():
        return None
    w = json.loads(path.read_text(encoding="utf-8"))["weights"]
    return weights_from_file(w)  # a file without `method` holds RRF weights


def p50_latency(catalog: Catalog, queries: Sequence[EvalQuery], model_dir: Path, index_dir: Path) -> dict[str, float]:
    """p50 / mean ms per `search_apis(q, 10)` of the untrained and the trained encoder, interleaved."""
    from langgraph_anytool.catalog.embeddings import OnnxMiniLMEmbeddings

    searchers = {
        "untrained": CatalogSearcher(catalog, embeddings=OnnxMiniLMEmbeddings(cache_size=0), index_dir=index_dir,
                                     weights=FusionWeights(), progress=False),
        "trained": CatalogSearcher(catalog, embeddings=OnnxMiniLMEmbeddings(cache_size=0, model_path=model_dir),
                                   index_dir=index_dir, weights=FusionWeights(), progress=False),
    }
    for s in searchers.values():
        s.build()
        s.search_apis("warm up the encoder", 10)
    times: dict[str, list[float]] = {name: [] for name in searchers}
    for n, q in enumerate(queries):
        order = list(searchers) if n % 2 == 0 else list(reversed(searchers))
        for name in order:
            t0 = time.perf_counter()
            searchers[name].search_apis(q.query, 10)
            times[name].append(1000 * (time.perf_counter() - t0))
    return {f"{name} p50 ms": statistics.median(v) for name, v in times.items()} | {
        f"{name} mean ms": statistics.fmean(v) for name, v in times.items()}


def print_table(figures: dict[str, Any]) -> None:
    """The before/after table, fitted weights, timings, latency and load."""
    width = max(len(name) for name in figures["rows"])
    print(f"\n{'setting'.ljust(width)}  queries  " + "  ".join(f"{m:>9}" for m in METRICS))
    for name, (n, row) in figures["rows"].items():
        print(f"{name.ljust(width)}  {n:>7}  " + "  ".join(f"{row[m]:>9.1f}" for m in METRICS))
    if "own_weights_all" in figures:
        print("\nthe full-set model's fusion.json: " + ", ".join(f"{k} {v}" for k, v in figures["own_weights_all"].items()))
    for name, sec in figures["seconds"].items():
        print(f"{name}: {sec:.0f} s")
    lat = figures.get("latency")
    if lat:
        print(f"search_apis(q, 10) p50: untrained {lat['untrained p50 ms']:.1f} ms, trained {lat['trained p50 ms']:.1f} ms "
              f"({100 * (lat['trained p50 ms'] / lat['untrained p50 ms'] - 1):+.1f} %)")
    print(f"load average: start {figures['load_average_start']}, end {figures['load_average_end']} "
          f"({os.cpu_count()} CPUs)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--toolbench", type=Path, default=default_toolbench())
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=TrainSettings().epochs)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", type=Path, default=None, help="keep models and indexes here (default: a temp dir)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    ap.add_argument("--lr", type=float, default=TrainSettings().learning_rate, help="peak learning rate")
    ap.add_argument("--cv-only", action="store_true", help="cross-validation only (no full-set model, no latency)")
    ap.add_argument("--no-fit-fusion", action="store_true", help="do not fit fusion weights (saves a search pass)")
    ap.add_argument("--threads", type=int, default=TrainSettings().threads, help="torch threads for training")
    ap.add_argument("--near-duplicate", type=float, default=None,
                    help="drop BM25 negatives of a relevant API's tool whose name is this similar (difflib ratio)")
    ap.add_argument("--extra-weights", default="",
                    help="also score the held-out folds under these fusion weights: 'bm25:dense:tool:whole[:rrf_k],...'")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=JSON",
                    help="any other TrainSettings field, e.g. --set sentence_pairs=0.5 "
                         "--set 'directions=[\"query_to_doc\",\"doc_to_query\"]' (repeatable)")
    ap.add_argument("--limit", type=int, default=None, help="first N queries of each file only (a quick smoke run)")
    args = ap.parse_args(argv)
    if not (args.toolbench / "tools").is_dir():
        print(f"no ToolBench data under {args.toolbench}", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="retriever-training-"))
    index_dir = work / "index"
    files = sorted((args.toolbench / "queries").glob("*.json"))
    raw = {f.stem: json.loads(f.read_text(encoding="utf-8"))[: args.limit] for f in files}
    catalog = Catalog.from_toolbench(args.toolbench / "tools")
    if args.limit:
        files = write_fold_files(raw, {(g, n) for g, items in raw.items() for n in range(len(items))},
                                 work / "limited")
    queries = load_queries(files, catalog)
    keys = [(g, n) for g, items in raw.items() for n in range(len(items))]
    by_key = dict(zip(keys, queries, strict=True))
    settings = TrainSettings(epochs=args.epochs, seed=args.seed, learning_rate=args.lr, threads=args.threads,
                             near_duplicate=args.near_duplicate, **parse_settings(args.set))
    extra: dict[str, FusionWeights] = {}
    for spec in filter(None, args.extra_weights.split(",")):
        b, d, t, w, *k = (float(x) for x in spec.split(":"))
        rrf_k = int(k[0]) if k else FusionWeights().rrf_k
        extra[f"bm25 {b:g} dense {d:g} tool {t:g} whole {w:g} rrf_k {rrf_k}"] = FusionWeights(
            bm25=b, dense=d, tool=t, whole=w, rrf_k=rrf_k)
    fit = not args.no_fit_fusion
    figures: dict[str, Any] = {"settings": {"folds": args.folds, "epochs": args.epochs, "seed": args.seed,
                                            "lr": args.lr, "threads": args.threads,
                                            "near_duplicate": args.near_duplicate, "queries": len(queries), "apis": len(catalog),
                                            "set": args.set},
                               "load_average_start": load_average(), "rows": {}, "seconds": {}}
    print(f"catalog {len(catalog)} APIs; {len(queries)} queries; {args.folds}-fold CV, {args.epochs} epoch(s), "
          f"seed {args.seed}{''.join(' ' + x for x in args.set)}; load average {figures['load_average_start']}; work dir {work}", flush=True)

    def log(msg: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)
        (work / "figures.json").write_text(json.dumps(figures, indent=1), encoding="utf-8")

    # untrained: the default encoder and weights
    base = CatalogSearcher(catalog, embeddings=minilm("int8"), index_dir=index_dir, weights=FusionWeights(),
                           progress=False)
    scored = [q for q in queries if q.relevant]
    base_res = per_query_scores(base, scored, {"d": FusionWeights(), "t": trained_fusion_weights()} | extra)
    figures["rows"]["untrained encoder, default weights (all queries)"] = (len(scored), mean(base_res["d"]))
    figures["rows"]["untrained encoder, fixed trained-encoder weights (all queries)"] = (len(scored),
                                                                                       mean(base_res["t"]))
    for name in extra:
        figures["rows"][f"untrained encoder, {name} (all queries)"] = (len(scored), mean(base_res[name]))
    log("untrained scored")

    # held-out: k-fold CV by query (identical query texts share a fold)
    fold_by_text = query_folds([by_key[k].query for k in keys], args.folds, args.seed)
    fold_of = {k: fold_by_text[by_key[k].query] for k in keys}
    held: dict[str, list[dict[str, float]]] = {"d": [], "f": []}
    held |= {name: [] for name in extra}
    fold_seconds = []
    for fold in range(args.folds):
        train_keys = {k for k in keys if fold_of[k] != fold}
        test = [by_key[k] for k in keys if fold_of[k] == fold and by_key[k].relevant]
        fold_files = write_fold_files(raw, train_keys, work / f"fold{fold}" / "queries")
        model_dir = work / f"fold{fold}" / "model"
        t0 = time.perf_counter()
        train_encoder(catalog, fold_files, model_dir, settings, fit_fusion_weights=fit, index_dir=index_dir,
                      progress=False, out=sys.stderr)
        fold_seconds.append(time.perf_counter() - t0)
        searcher = CatalogSearcher(catalog, embeddings=minilm("int8", model_path=model_dir), index_dir=index_dir,
                                   weights=FusionWeights(), progress=False)
        check_train_overlap(searcher.embeddings, test, allow=False)  # raises if a held-out query was trained on
        sets = {"d": FusionWeights(), "f": fusion_of(model_dir) or FusionWeights()} | extra
        res = per_query_scores(searcher, test, sets)
        for name in res:
            held[name] += res[name]
        log(f"fold {fold + 1}/{args.folds}: {len(test)} held-out queries, "
            + ", ".join(f"Recall@10 {mean(rows)['Recall@10']:.1f} ({name})" for name, rows in res.items()))
    figures["rows"][f"trained, default weights (HELD-OUT, {args.folds}-fold CV)"] = (len(held["d"]), mean(held["d"]))
    own = "fitted weights" if fit else "fixed trained-encoder weights"  # what the model's fusion.json holds
    figures["rows"][f"trained, {own} (HELD-OUT, {args.folds}-fold CV)"] = (len(held["f"]), mean(held["f"]))
    for name in extra:
        figures["rows"][f"trained, {name} (HELD-OUT, {args.folds}-fold CV)"] = (len(held[name]), mean(held[name]))
    figures["seconds"]["train one fold (mean, incl. fusion fit)"] = statistics.fmean(fold_seconds)

    log("cross-validation done")
    if args.cv_only:
        figures["load_average_end"] = load_average()
        print_table(figures)
        if args.json:
            args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")
        return 0

    # train overlap: trained on all, scored on the same queries
    t0 = time.perf_counter()
    full_dir = work / "model-all"
    train_encoder(catalog, files, full_dir, settings, fit_fusion_weights=fit, index_dir=index_dir,
                  progress=False, out=sys.stderr)
    figures["seconds"]["train all queries (incl. fusion fit)"] = time.perf_counter() - t0
    spent = json.loads((full_dir / "manifest.json").read_text(encoding="utf-8"))["seconds"]
    figures["seconds"]["train all queries (training only)"] = spent["train"]
    if "train_cpu" in spent:
        figures["seconds"]["train all queries (training only, CPU-seconds of all threads)"] = spent["train_cpu"]
    full = CatalogSearcher(catalog, embeddings=minilm("int8", model_path=full_dir), index_dir=index_dir,
                           weights=FusionWeights(), progress=False)
    assert check_train_overlap(full.embeddings, scored, allow=True) == len(scored)
    fitted = fusion_of(full_dir) or FusionWeights()
    res = per_query_scores(full, scored, {"d": FusionWeights(), "f": fitted})
    figures["rows"]["trained on all, default weights (TRAIN OVERLAP)"] = (len(scored), mean(res["d"]))
    figures["rows"][f"trained on all, {own} (TRAIN OVERLAP)"] = (len(scored), mean(res["f"]))
    figures["own_weights_all"] = {k: getattr(fitted, k) for k in ("bm25", "dense", "tool", "whole", "rrf_k")}
    log("full-set model scored")

    figures["latency"] = p50_latency(catalog, scored, full_dir, index_dir)
    figures["load_average_end"] = load_average()

    print_table(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
