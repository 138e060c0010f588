"""Fusion settings chosen honestly on the developers' split, by re-fusing cached rankings (issue 37, round 5).

Queries: the 519 shared development queries of ../shared/toolbench split by `eval.training.query_folds` (3 folds,
seed 0). Each encoder searches every query once (`CatalogSearcher.api_rankings`, `DEPTH` deep); every setting is
then a re-fusion of those rankings (`api_scores_from_rankings`: the ranking `search_apis` gives with it), so a grid
of thousands of points costs no search.

Trained encoders (`--tune SPEC --report SPEC`): the fusion grid (offset × depth × bm25 × tool × whole, dense 2) is
scored with the `--tune` encoder on `--tune-folds` (an encoder trained on other folds: fold 0 → fold 1); the
setting is chosen there by a rule fixed in advance (the best mean Recall@10 + NDCG@5 over the point and its
neighbours one grid step away on one axis: a plateau, not the best of many noisy points), then applied to the
`--report` encoder on `--report-folds` (trained on folds 0-1 → fold 2) beside the fixed trained weights
(`training.trained_fusion_weights()`). `--second SPEC` adds that encoder's dense rankings as a third retriever
(weight chosen the same way, the other weights fixed).

Untrained encoders (`--untrained SPEC ...`): the dense weight of the default fusion (z-score, bm25 1.5) chosen on
the tuning part (folds 0-1), reported on fold 2 and all 519.

    python benchmarks/fusion_grid.py --tune trained:int8:DIR0@INDEX0 --tune-folds 1 \\
        --report trained:int8:DIR01@INDEX01 --report-folds 2 [--second wordllama@INDEXW] [--work DIR]
    python benchmarks/fusion_grid.py --untrained wordllama@INDEXW minilm:int8@INDEXU [--work DIR]

`SPEC@INDEX` searches with the index folder INDEX (default: a folder under `--work`); the recipe is the trained
folder's own, else `--recipe` (default: the default recipe).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import pickle
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from retriever_training import default_toolbench, load_average  # the benchmark beside this one

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.encoders import resolve_encoder
from langgraph_anytool.catalog.fusion import FusionWeights
from langgraph_anytool.catalog.search import CatalogSearcher, Rankings
from langgraph_anytool.eval.metrics import ndcg_at_k, recall_at_k
from langgraph_anytool.eval.retrieval import EvalQuery, check_train_overlap, load_queries
from langgraph_anytool.eval.training import SPLIT_FOLDS, SPLIT_SEED, query_folds, trained_fusion_weights

DEPTH = 400  # rankings cached this deep: every grid depth is a cut of them
GRID: dict[str, tuple[float, ...]] = {
    "offset": (0.0, 0.25, 0.5, 1.0),
    "depth": (50, 100, 200, 400),
    "bm25": (0.5, 1.0, 1.5, 2.0, 2.5, 3.0),  # the dense weight stays 2 (the trained weights'): bm25 sets the ratio
    "tool": (0.0, 0.25, 0.5, 0.75, 1.0),
    "whole": (0.5, 1.0, 1.5, 2.0),
}
SECOND_WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)
DENSE_WEIGHTS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0)


class Cached:
    """One encoder's rankings of every query (cached under the work folder), re-fused on demand."""

    def __init__(self, spec: str, catalog: Catalog, queries: list[EvalQuery], work: Path, recipe: str | None) -> None:
        encoder, _, index = spec.rpartition("@") if "@" in spec else (spec, "", "")
        key = hashlib.sha256(f"{spec}\x00{recipe}\x00{DEPTH}".encode()).hexdigest()[:12]
        path = work / f"rankings-{key}.pkl"
        self.searcher = CatalogSearcher(catalog, embeddings=resolve_encoder(encoder),
                                        index_dir=Path(index) if index else work / f"index-{key}", progress=False,
                                        documents=None if encoder.startswith("trained:") else recipe)
        self.name = encoder
        if path.is_file():
            with path.open("rb") as f:
                self.rankings: list[Rankings] = pickle.load(f)  # our own file, written below
            return
        self.searcher.build()
        c0, t0 = time.process_time(), time.perf_counter()
        self.rankings = [self.searcher.api_rankings(q.query, DEPTH) for q in queries]
        print(f"{encoder}: {len(queries)} queries searched in {time.perf_counter() - t0:.1f} s, "
              f"{time.process_time() - c0:.1f} s CPU, load average {load_average()}", file=sys.stderr, flush=True)
        with path.open("wb") as f:
            pickle.dump(self.rankings, f)

    def figures(self, w: FusionWeights, rows: list[int], queries: list[EvalQuery], second: Cached | None = None,
                second_weight: float = 0.0) -> tuple[float, float, np.ndarray]:
        """Recall@10 and NDCG@5 (percent) over `rows`, and each query's Recall@10."""
        r10, n5 = [], []
        for i in rows:
            scores = self.searcher.api_scores_from_rankings(
                self.rankings[i], w, extra=second.rankings[i] if second else None, extra_weight=second_weight)
            ranked = self.searcher.ranked_api_ids(scores, 10)
            r10.append(recall_at_k(ranked, queries[i].relevant, 10))
            n5.append(ndcg_at_k(ranked, queries[i].relevant, 5))
        return 100 * float(np.mean(r10)), 100 * float(np.mean(n5)), np.asarray(r10)


def plateau_choice(scored: dict[tuple[float, ...], float]) -> tuple[float, ...]:
    """The grid point whose mean score over itself and its one-step neighbours (one axis at a time) is highest."""
    axes = [sorted({k[i] for k in scored}) for i in range(len(GRID))]

    def mean_around(k: tuple[float, ...]) -> float:
        values = [scored[k]]
        for i, axis in enumerate(axes):
            j = axis.index(k[i])
            values += [scored[(*k[:i], axis[n], *k[i + 1:])] for n in (j - 1, j + 1) if 0 <= n < len(axis)]
        return float(np.mean(values))

    return max(scored, key=mean_around)


def line(name: str, got: tuple[float, float, np.ndarray], base: tuple[float, float, np.ndarray] | None) -> str:
    text = f"{got[0]:.1f} / {got[1]:.1f}"
    if base is not None:
        up, down = int(np.sum(got[2] > base[2])), int(np.sum(got[2] < base[2]))
        text += f" ({got[0] - base[0]:+.1f} / {got[1] - base[1]:+.1f}; Recall@10 of {up} queries up, {down} down)"
    return f"  {name}: {text}"


def trained(args: argparse.Namespace, catalog: Catalog, queries: list[EvalQuery], fold: list[int]) -> None:
    tune = Cached(args.tune, catalog, queries, args.work, args.recipe)
    report = Cached(args.report, catalog, queries, args.work, args.recipe)
    tune_rows = [i for i, f in enumerate(fold) if f in args.tune_folds]
    report_rows = [i for i, f in enumerate(fold) if f in args.report_folds]
    check_train_overlap(tune.searcher.embeddings, [queries[i] for i in tune_rows], allow=False)
    check_train_overlap(report.searcher.embeddings, [queries[i] for i in report_rows], allow=False)
    fixed = trained_fusion_weights()
    base_t = tune.figures(fixed, tune_rows, queries)
    base_r = report.figures(fixed, report_rows, queries)
    print(f"fixed trained weights ({fixed}): tune {line('', base_t, None)[4:]}, report {line('', base_r, None)[4:]}")
    c0 = time.process_time()
    scored: dict[tuple[float, ...], float] = {}
    for point in itertools.product(*GRID.values()):
        offset, depth, bm25, tool, whole = point
        w = replace(fixed, offset=offset, depth=int(depth), bm25=bm25, tool=tool, whole=whole)
        r, n, _ = tune.figures(w, tune_rows, queries)
        scored[point] = r + n
    chosen = plateau_choice(scored)
    best = max(scored, key=scored.__getitem__)
    print(f"grid: {len(scored)} points on the tune folds, {time.process_time() - c0:.0f} s CPU")
    for name, point in (("chosen (plateau)", chosen), ("best single point", best)):
        setting = dict(zip(GRID, point, strict=True))
        w = replace(fixed, **(setting | {"depth": int(point[1])}))  # type: ignore[arg-type]
        print(f"{name}: {setting}")
        print(line("tune folds", tune.figures(w, tune_rows, queries), base_t))
        print(line("tune encoder on the report folds", tune.figures(w, report_rows, queries),
                   tune.figures(fixed, report_rows, queries)))
        print(line("report encoder on the report folds", report.figures(w, report_rows, queries), base_r))
    for spec in args.second:
        second = Cached(spec, catalog, queries, args.work, args.recipe)
        tried = {x: tune.figures(fixed, tune_rows, queries, second, x) for x in SECOND_WEIGHTS}
        pick = max(tried, key=lambda x: tried[x][0] + tried[x][1])
        print(f"third retriever {second.name} (fixed weights + its dense rankings), tune folds: " +
              ", ".join(f"{x}: {v[0]:.1f} / {v[1]:.1f}" for x, v in tried.items()))
        print(line(f"chosen weight {pick}, report encoder on the report folds",
                   report.figures(fixed, report_rows, queries, second, pick), base_r))
        print("  report folds, every weight (reported, not chosen): " + ", ".join(
            f"{x}: {v[0]:.1f} / {v[1]:.1f}" for x in SECOND_WEIGHTS
            for v in [report.figures(fixed, report_rows, queries, second, x)]))


def untrained(args: argparse.Namespace, catalog: Catalog, queries: list[EvalQuery], fold: list[int]) -> None:
    parts = {"tuning part": [i for i, f in enumerate(fold) if f != 2], "fold 2": [i for i, f in enumerate(fold) if f == 2],
             "all": list(range(len(queries)))}
    for spec in args.untrained:
        enc = Cached(spec, catalog, queries, args.work, args.recipe)
        default = FusionWeights(method="zscore")
        got = {d: {p: enc.figures(replace(default, dense=d), rows, queries) for p, rows in parts.items()}
               for d in DENSE_WEIGHTS}
        pick = max(got, key=lambda d: got[d]["tuning part"][0] + got[d]["tuning part"][1])
        print(f"{enc.name} (z-score, bm25 1.5, tool 0.5, whole 1; dense weight chosen on the tuning part: {pick})")
        for d, row in got.items():
            print(f"  dense {d}{' (default)' if d == default.dense else ''}{' (chosen)' if d == pick else ''}: " +
                  ", ".join(f"{p} {v[0]:.1f} / {v[1]:.1f}" for p, v in row.items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--toolbench", type=Path, default=default_toolbench())
    ap.add_argument("--tune", help="encoder SPEC[@INDEX] trained without --tune-folds")
    ap.add_argument("--tune-folds", type=int, nargs="+", default=[1])
    ap.add_argument("--report", help="encoder SPEC[@INDEX] trained without --report-folds")
    ap.add_argument("--report-folds", type=int, nargs="+", default=[2])
    ap.add_argument("--second", nargs="*", default=[], help="encoders SPEC[@INDEX] tried as a third retriever")
    ap.add_argument("--untrained", nargs="*", default=[], help="untrained encoders SPEC[@INDEX]: dense weight")
    ap.add_argument("--recipe", default=None, help="document recipe of untrained encoders (default: the default)")
    ap.add_argument("--work", type=Path, default=None, help="cached rankings and indexes (default: a temp dir)")
    args = ap.parse_args(argv)
    if not (args.toolbench / "tools").is_dir():
        print(f"no ToolBench data under {args.toolbench}", file=sys.stderr)
        return 2
    if bool(args.tune) != bool(args.report):
        print("--tune and --report go together", file=sys.stderr)
        return 2
    args.work = args.work or Path(tempfile.mkdtemp(prefix="fusion-grid-"))
    args.work.mkdir(parents=True, exist_ok=True)
    catalog = Catalog.from_toolbench(args.toolbench / "tools")
    queries = [q for q in load_queries(sorted((args.toolbench / "queries").glob("*.json")), catalog) if q.relevant]
    folds = query_folds([q.query for q in queries], SPLIT_FOLDS, SPLIT_SEED)
    fold = [folds[q.query] for q in queries]
    print(f"{len(catalog)} APIs, {len(queries)} queries; load average {load_average()}; work {args.work}", flush=True)
    t0, c0 = time.perf_counter(), time.process_time()
    if args.tune:
        trained(args, catalog, queries, fold)
    if args.untrained:
        untrained(args, catalog, queries, fold)
    print(f"{time.perf_counter() - t0:.0f} s wall, {time.process_time() - c0:.0f} s CPU; load average "
          f"{load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
