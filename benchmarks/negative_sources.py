"""What each hard-negative source of `anytool index train` mines on the tuning part (issue 37, round 5).

For the tuning part of the developers' split (folds 0 and 1 of `training.query_folds`: 346 of the 519 shared
development queries; fold 2 is never read here), each source of `TrainSettings.negative_source` ("bm25", "hybrid":
the default untrained hybrid search, "dense": its dense terms alone) mines each query's 10 best non-relevant APIs
with the training code itself (`training.negative_miner`, `prepare_training_data`). Printed per source and rank of
the first four negatives: how often the negative shares a tool with one of the query's relevant APIs, is a
near-duplicate of one (`training.is_near_duplicate` at 0.9: same tool, names alike) or has the very description of
one (ToolBench's near-copies, which the labels rarely mark relevant: probable unlabelled positives); then how many
of a source's 10 negatives BM25's 10 also hold (mean per query). No training, a few seconds of search per source
after the MiniLM index is built (persisted under `--index-dir`).

    python benchmarks/negative_sources.py [--toolbench DIR] [--index-dir DIR] [--ranks 4]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from retriever_training import default_toolbench, load_average  # the benchmark beside this one

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.search import CatalogSearcher
from langgraph_anytool.eval.retrieval import load_queries
from langgraph_anytool.eval.training import (
    EVAL_FOLD,
    Example,
    is_near_duplicate,
    negative_miner,
    prepare_training_data,
    query_folds,
)


def first_per_query(examples: list[Example]) -> list[Example]:
    """One example per query (its negatives are the query's, whichever relevant API the pair holds)."""
    seen: dict[str, Example] = {}
    for ex in examples:
        seen.setdefault(ex.qhash, ex)
    return list(seen.values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--toolbench", type=Path, default=default_toolbench())
    ap.add_argument("--index-dir", type=Path, default=None, help="where the indexes persist (default: a temp dir)")
    ap.add_argument("--ranks", type=int, default=4, help="negatives described per query, best first")
    args = ap.parse_args(argv)
    if not (args.toolbench / "tools").is_dir():
        print(f"no ToolBench data under {args.toolbench}", file=sys.stderr)
        return 2
    index_dir = args.index_dir or Path(tempfile.mkdtemp(prefix="negative-sources-"))
    catalog = Catalog.from_toolbench(args.toolbench / "tools")
    queries = [q for q in load_queries(sorted((args.toolbench / "queries").glob("*.json")), catalog) if q.relevant]
    fold = query_folds([q.query for q in queries])
    tuning = [q for q in queries if fold[q.query] != EVAL_FOLD]
    print(f"{len(tuning)} tuning-part queries (folds 0-1); load average {load_average()}")
    bm25 = CatalogSearcher(catalog, embeddings="none", index_dir=index_dir, progress=False)
    mined: dict[str, list[Example]] = {}
    print("| source | negative | same tool as a relevant API | near-duplicate (0.9) | same description |")
    print("|---|---|---|---|---|")
    for source in ("bm25", "hybrid", "dense"):
        miner = negative_miner(catalog, source, index_dir=index_dir, progress=False)
        data = prepare_training_data(catalog, [], searcher=bm25, queries=tuning, negative_depth=10, miner=miner)
        mined[source] = first_per_query(data.examples)
        for rank in range(args.ranks):
            same_tool = dup = same_text = n = 0
            for ex in mined[source]:
                if len(ex.negatives) <= rank:
                    continue
                neg = catalog.api(ex.negatives[rank])
                n += 1
                rel = [catalog.api(r) for r in ex.relevant]
                same_tool += any((neg.category, neg.tool_key) == (r.category, r.tool_key) for r in rel)
                dup += any(is_near_duplicate(catalog, neg.id, r.id, 0.9) for r in rel)
                text = neg.description.strip().lower()
                same_text += bool(text) and any(text == r.description.strip().lower() for r in rel)
            print(f"| {source} | #{rank + 1} ({n} queries) | {100 * same_tool / n:.0f} % | {100 * dup / n:.0f} % "
                  f"| {100 * same_text / n:.0f} % |")
    base = {ex.qhash: set(ex.negatives) for ex in mined["bm25"]}
    for source in ("hybrid", "dense"):
        shared = [len(set(ex.negatives) & base[ex.qhash]) for ex in mined[source]]
        print(f"{source}: {sum(shared) / len(shared):.1f} of its 10 negatives are among BM25's 10 (mean per query)")
    print(f"load average at the end {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
