"""What torch's intra-op thread count costs `anytool index train` in wall and CPU time (issue 37).

Training pins the count (`TrainSettings.threads`, default `train_defaults.THREADS`) because a different count sums
in another order, so a seed reproduces a model only with the same count. This times `training.fine_tune` (model
load included) on the first PAIRS training pairs of the tuning part (folds 0 and 1 of the 519 development queries
of ../shared/toolbench), 1 epoch, once per count in `--threads`, in order, repeated `--rounds` times, and prints
wall seconds, CPU seconds (this process, every thread) and the weights' digest of each run, with the load average:
the machine's 2 cores may be shared, and a second thread only helps when a core is idle.

    python benchmarks/train_threads.py [--pairs 96] [--threads 1 2] [--rounds 1]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from pathlib import Path

from retriever_training import default_toolbench, load_average  # the benchmark beside this one

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.search import CatalogSearcher
from langgraph_anytool.eval.retrieval import load_queries
from langgraph_anytool.eval.training import (
    EVAL_FOLD,
    SPLIT_FOLDS,
    SPLIT_SEED,
    TrainSettings,
    fine_tune,
    prepare_training_data,
    query_folds,
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--toolbench", type=Path, default=default_toolbench())
    ap.add_argument("--pairs", type=int, default=96, help="training pairs (batches of 32)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args(argv)
    if not (args.toolbench / "tools").is_dir():
        print(f"no ToolBench data under {args.toolbench}", file=sys.stderr)
        return 2
    catalog = Catalog.from_toolbench(args.toolbench / "tools")
    files = sorted((args.toolbench / "queries").glob("*.json"))
    queries = [q for q in load_queries(files, catalog) if q.relevant]
    fold = query_folds([q.query for q in queries], SPLIT_FOLDS, SPLIT_SEED)
    tuning = [q for q in queries if fold[q.query] != EVAL_FOLD]
    with tempfile.TemporaryDirectory(prefix="train-threads-") as work:  # never the user's index folder
        bm25 = CatalogSearcher(catalog, embeddings="none", index_dir=work, progress=False)
        data = prepare_training_data(catalog, files, searcher=bm25, queries=tuning)
    data.examples = data.examples[:args.pairs]
    print(f"{len(data.examples)} pairs, 1 epoch; load average {load_average()}", flush=True)
    print("| threads | wall s | CPU s | weights (sha256 of the parameters, first 12) | load average after |")
    print("|---|---|---|---|---|")
    for _ in range(args.rounds):
        for count in args.threads:
            settings = TrainSettings(epochs=1, threads=count)
            t0, c0 = time.perf_counter(), time.process_time()
            model = fine_tune(data, catalog, settings, progress=False)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            digest = hashlib.sha256()
            for _name, param in sorted(model.named_parameters()):
                digest.update(param.detach().numpy().tobytes())
            print(f"| {count} | {wall:.1f} | {cpu:.1f} | {digest.hexdigest()[:12]} | {load_average()} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
