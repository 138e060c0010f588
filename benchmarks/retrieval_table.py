"""One table of catalog search quality and cost: encoder × document recipe × trained or not (issue 37).

Queries: the 519 shared development queries of ../shared/toolbench, split as the developers document it
(`eval.training.query_folds`: 3 folds by query text, seed 0). Figures are measured on the evaluation fold
(`EVAL_FOLD`, 2) only; the tuning part (folds 0 and 1) is where variants were chosen and where trained encoders are
trained (`anytool index train`'s code, `train_encoder`, with the settings given). `--all` adds the figures on all
519 queries (the number `anytool eval retrieval` prints) for the untrained rows.

Per row: Recall@10 and NDCG@5 on the evaluation fold, the index build time from nothing (BM25 + dense, every level,
into a fresh folder) and its size on disk, and `search_apis(q, 10)` p50 / p95 ms over the evaluation queries (the
encoder's query cache off), with BM25-only search of the same catalog timed in the same loop (interleaved) and the
ratio of the p50s. The load average is printed at the start and the end: the machine's 2 cores may be shared.

    python benchmarks/retrieval_table.py [--recipes 3 4-expanded] [--encoders minilm] \\
        [--trained SPEC ...] [--work DIR] [--all]

`--trained NAME:RECIPE:TOOL:CATEGORY[:PSEUDO[:KIND:PATH]]` trains (or reuses, under `--work`) an encoder on the
tuning part with document recipe RECIPE, the given shares of same-tool / same-category hard negatives, PSEUDO
template pseudo-query pairs and the extra pairs KIND:PATH (`TrainSettings.pseudo_pairs` / `extra_pairs`), e.g.
`--trained today:3:0:0 --trained harder:4-expanded:0.25:0.25 --trained atb:4-expanded:0:0:0:anytoolbench:FILE`;
`--epochs`, `--scale` (MNRL), `--lr` and `--tool-pairs` (`TrainSettings.tool_pairs`) set those of every such run,
`--negative-source`, `--negative-skip` and `--negatives-per-pair` its hard negatives (`TrainSettings.negative_source`
/ `negative_skip` / `hard_negatives_per_pair`); `--train-folds` / `--eval-fold` move the split (e.g. train on fold
0, score fold 1: a check inside the tuning part). Training refuses any pair whose query text equals an evaluation
query (`training.check_held_out`). A trained row also gives the training's wall and CPU seconds (its manifest) and
the load average at its end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from retriever_training import default_toolbench, load_average  # the benchmark beside this one

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.documents import RECIPES
from langgraph_anytool.catalog.encoders import resolve_encoder
from langgraph_anytool.catalog.search import CatalogSearcher
from langgraph_anytool.eval.metrics import ndcg_at_k, recall_at_k
from langgraph_anytool.eval.retrieval import EvalQuery, check_train_overlap, load_queries
from langgraph_anytool.eval.training import (
    EVAL_FOLD,
    SPLIT_FOLDS,
    SPLIT_SEED,
    TrainSettings,
    query_folds,
    train_encoder,
)


def folder_bytes(*folders: str | None) -> int:
    return sum(p.stat().st_size for f in folders if f for p in Path(f).rglob("*") if p.is_file())


def scores(searcher: CatalogSearcher, queries: list[EvalQuery]) -> dict[str, float]:
    r10 = n5 = 0.0
    for q in queries:
        ranked = [h.api_id for h in searcher.search_apis(q.query, 10)]
        r10 += recall_at_k(ranked, q.relevant, 10)
        n5 += ndcg_at_k(ranked, q.relevant, 5)
    n = max(1, len(queries))
    return {"Recall@10": 100 * r10 / n, "NDCG@5": 100 * n5 / n}


def latency(searcher: CatalogSearcher, bm25: CatalogSearcher, queries: list[EvalQuery]) -> dict[str, float]:
    """p50 / p95 ms of `search_apis(q, 10)` for the searcher and BM25-only search, interleaved query by query."""
    if searcher.embeddings is not None and hasattr(searcher.embeddings, "cache_size"):
        searcher.embeddings.cache_size = 0  # type: ignore[attr-defined]  # every query encoded, as a new one is
    searcher.search_apis("warm up the encoder", 10)
    bm25.search_apis("warm up", 10)
    times: dict[str, list[float]] = {"hybrid": [], "bm25": []}
    for n, q in enumerate(queries):
        order = (("hybrid", searcher), ("bm25", bm25)) if n % 2 == 0 else (("bm25", bm25), ("hybrid", searcher))
        for name, s in order:
            t0 = time.perf_counter()
            s.search_apis(q.query, 10)
            times[name].append(1000 * (time.perf_counter() - t0))
    out = {}
    for name, values in times.items():
        values.sort()
        out[f"{name} p50"] = statistics.median(values)
        out[f"{name} p95"] = values[min(len(values) - 1, int(0.95 * len(values)))]
    out["ratio"] = out["hybrid p50"] / max(out["bm25 p50"], 1e-9)
    return out


def measure(catalog: Catalog, embeddings: Any, recipe: str | None, queries: list[EvalQuery], index_dir: Path,
            bm25: CatalogSearcher, everything: list[EvalQuery] | None) -> dict[str, Any]:
    """Build from nothing into `index_dir`, then score and time (see the module docstring)."""
    searcher = CatalogSearcher(catalog, embeddings=embeddings, index_dir=index_dir, progress=False, documents=recipe)
    t0 = time.perf_counter()
    stats = searcher.build()
    row: dict[str, Any] = {"recipe": searcher.recipe.id, "build s": time.perf_counter() - t0,
                           "index MB": folder_bytes(stats.bm25_path, stats.index_path) / 1e6}
    check_train_overlap(searcher.embeddings, queries, allow=False)  # a trained encoder never saw these queries
    row |= scores(searcher, queries)
    if everything is not None:
        row |= {f"all {k}": v for k, v in scores(searcher, everything).items()}
    row |= latency(searcher, bm25, queries)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--toolbench", type=Path, default=default_toolbench())
    ap.add_argument("--recipes", nargs="*", default=list(RECIPES), help="document recipes (documents.RECIPES)")
    ap.add_argument("--encoders", nargs="+", default=["minilm:int8"], help="untrained encoder specs")
    ap.add_argument("--trained", action="append", default=[], metavar="NAME:RECIPE:TOOL:CATEGORY",
                    help="train (or reuse under --work) an encoder on the tuning part; repeatable")
    ap.add_argument("--epochs", type=int, default=TrainSettings().epochs)
    ap.add_argument("--negative-source", default=TrainSettings().negative_source,
                    help="where trained runs mine hard negatives: bm25, hybrid or dense")
    ap.add_argument("--negative-skip", type=int, default=TrainSettings().negative_skip)
    ap.add_argument("--negatives-per-pair", type=int, default=TrainSettings().hard_negatives_per_pair)
    ap.add_argument("--threads", type=int, default=TrainSettings().threads, help="torch threads for training")
    ap.add_argument("--scale", type=float, default=TrainSettings().scale, help="MNRL scale of every training run")
    ap.add_argument("--tool-pairs", type=float, default=TrainSettings().tool_pairs,
                    help="share of the (query, relevant tool) pairs of every run (TrainSettings.tool_pairs)")
    ap.add_argument("--lr", type=float, default=TrainSettings().learning_rate, help="peak learning rate of every run")
    ap.add_argument("--train-folds", type=int, nargs="+", default=None,
                    help=f"folds trained on (default: all but the evaluation fold {EVAL_FOLD})")
    ap.add_argument("--eval-fold", type=int, default=EVAL_FOLD)
    ap.add_argument("--all", action="store_true", help="also score the untrained rows on all 519 queries")
    ap.add_argument("--work", type=Path, default=None, help="keep models and indexes here (default: a temp dir)")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    if not (args.toolbench / "tools").is_dir():
        print(f"no ToolBench data under {args.toolbench}", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="retrieval-table-"))
    work.mkdir(parents=True, exist_ok=True)
    catalog = Catalog.from_toolbench(args.toolbench / "tools")
    files = sorted((args.toolbench / "queries").glob("*.json"))
    queries = [q for q in load_queries(files, catalog) if q.relevant]
    fold = query_folds([q.query for q in queries], SPLIT_FOLDS, SPLIT_SEED)
    train_folds = set(args.train_folds) if args.train_folds is not None else set(range(SPLIT_FOLDS)) - {args.eval_fold}
    evaluation = [q for q in queries if fold[q.query] == args.eval_fold]
    training = [q for q in queries if fold[q.query] in train_folds]
    load_start = load_average()
    print(f"catalog {len(catalog)} APIs; {len(queries)} queries: train folds {sorted(train_folds)} "
          f"({len(training)}), evaluation fold {args.eval_fold} ({len(evaluation)}); load average {load_start}; "
          f"work dir {work}", flush=True)
    bm25 = CatalogSearcher(catalog, embeddings="none", index_dir=work / "bm25-timing", progress=False)
    bm25.build()
    rows: dict[str, dict[str, Any]] = {}

    def log(name: str, row: dict[str, Any]) -> None:
        rows[name] = row
        print(f"[{time.strftime('%H:%M:%S')}] {name}: " + ", ".join(
            f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()), file=sys.stderr,
            flush=True)
        (work / "rows.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")

    for recipe in args.recipes:
        row = measure(catalog, "none", recipe, evaluation, work / f"index-bm25-{recipe}", bm25,
                      queries if args.all else None)
        log(f"BM25 only | {recipe} | no", row)
        for spec in args.encoders:
            row = measure(catalog, resolve_encoder(spec), recipe, evaluation, work / f"index-{spec}-{recipe}", bm25,
                          queries if args.all else None)
            log(f"{spec} | {recipe} | no", row)
    for item in args.trained:
        name, recipe, tool_share, category_share, *more = item.split(":", 5)
        pseudo = int(more[0]) if more and more[0] else 0
        extra = tuple(more[1:2])
        model_dir = work / f"model-{name}"
        if not (model_dir / "manifest.json").is_file():
            settings = TrainSettings(epochs=args.epochs, threads=args.threads, documents=recipe,
                                     scale=args.scale, learning_rate=args.lr, tool_pairs=args.tool_pairs,
                                     tool_negatives=float(tool_share), category_negatives=float(category_share),
                                     pseudo_pairs=pseudo, extra_pairs=extra,
                                     negative_source=args.negative_source, negative_skip=args.negative_skip,
                                     hard_negatives_per_pair=args.negatives_per_pair)
            queries_dir = work / f"train-queries-{name}"
            queries_dir.mkdir(exist_ok=True)
            kept = {(q.group, q.query_id) for q in training}
            train_files = []
            for f in files:  # the released format, the training part's entries only
                items = [it for it in json.loads(f.read_text(encoding="utf-8"))
                         if (f.stem, str(it.get("query_id"))) in kept]
                (queries_dir / f.name).write_text(json.dumps(items), encoding="utf-8")
                train_files.append(queries_dir / f.name)
            t0 = time.perf_counter()
            train_encoder(catalog, train_files, model_dir, settings, index_dir=work / "train-index", progress=False,
                          out=sys.stderr, held_out=[q.query for q in evaluation])
            print(f"trained {name} in {time.perf_counter() - t0:.0f} s, load average {load_average()}",
                  file=sys.stderr, flush=True)
        manifest = json.loads((model_dir / "manifest.json").read_text(encoding="utf-8"))
        spent = manifest["seconds"]
        encoder = resolve_encoder(f"trained:int8:{model_dir}")
        row = measure(catalog, encoder, None, evaluation, work / f"index-trained-{name}", bm25, None)
        row["train s"] = float(spent["train"])
        row["train CPU s"] = float(spent.get("train_cpu", 0.0))
        row["pairs"] = int(manifest["pairs"])
        row["load"] = load_average()
        extras = "".join(f", + {e['kind']} ({e['pairs']} pairs)" for e in manifest.get("extra_pairs", []))
        extras += f", + {manifest['pseudo_pairs']} pseudo-query pairs" if manifest.get("pseudo_pairs") else ""
        st = manifest["settings"]
        extras += f", scale {st['scale']:g}, lr {st['learning_rate']:g}, tool pairs {st.get('tool_pairs', 0):g}"
        if st.get("negative_source", "bm25") != "bm25" or st.get("negative_skip") or st.get("hard_negatives_per_pair", 1) > 1:
            extras += (f", negatives {st['negative_source']} skip {st['negative_skip']} "
                       f"×{st['hard_negatives_per_pair']}")
        log(f"trained {name} (tool {tool_share}, category {category_share}{extras}, "
            f"{st['epochs']} epochs) | {recipe} | yes", row)
    print(f"\nload average: start {load_start}, end {load_average()} ({os.cpu_count()} CPUs); evaluation fold "
          f"{args.eval_fold}: {len(evaluation)} queries")
    extra = ["all Recall@10", "all NDCG@5"] if args.all else []
    head = ["encoder | recipe | trained", "Recall@10", "NDCG@5", *extra, "build s", "index MB", "p50 ms", "p95 ms",
            "BM25 p50 ms", "p50 / BM25"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * (len(head) + 2))
    for name, r in rows.items():
        cells = [name, f"{r['Recall@10']:.1f}", f"{r['NDCG@5']:.1f}"]
        cells += [f"{r[k]:.1f}" if k in r else "" for k in extra]
        cells += [f"{r['build s']:.1f}", f"{r['index MB']:.1f}", f"{r['hybrid p50']:.1f}", f"{r['hybrid p95']:.1f}",
                  f"{r['bm25 p50']:.1f}", f"{r['ratio']:.1f}×"]
        print("| " + " | ".join(cells) + " |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
