"""`anytool report` build time for 400 queries, and the size of the query pages (issue 30: under 10 s, and under
2 MB per page at the 95th percentile).

    python benchmarks/report.py [--queries 400] [--distinct 40] [--results FILE]

Runs a real batch of `--distinct` queries with the offline stand-in over the builtin catalog (`anytool eval run
--offline`: agent trees, pools, reflections, search trees, usage, as any run records them), then repeats those
records under new query ids up to `--queries` records (`--distinct` equal to `--queries` runs them all for real;
`--results FILE` reports on a results file of your own instead). Prints the time `write_site` takes for the whole
site (index + one page per query, secrets masked, as `anytool report` does), pages per second, and the median,
95th percentile and largest page sizes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from langgraph_anytool.cli.app import main
from langgraph_anytool.eval.anytool.results import read_results
from langgraph_anytool.eval.report import write_site

QUERIES = ["Convert 26.2 miles to kilometers.", "What day of the week was 2024-02-29?",
           "What is the geographic midpoint between Paris and Berlin?", "Convert 100 degrees Fahrenheit to Celsius.",
           "How many days are there between 2024-01-01 and 2024-03-01?", "Convert 5 kilograms to pounds.",
           "Is 2025-07-14 a public holiday in France?", "What is the capital of Australia and its population?",
           "Book me a flight to Mars next week.", "What is the next prime after 1000, and is 2024 a leap year?"]


def real_batch(workdir: Path, n: int) -> list[dict[str, object]]:
    queries = workdir / "bench.json"
    queries.write_text(json.dumps([{"query_id": i, "query": QUERIES[i % len(QUERIES)]} for i in range(n)]))
    out = workdir / "results.jsonl"
    code = main(["eval", "run", "--queries", str(queries), "--offline", "--out", str(out), "--no-progress",
                 "--quiet"])
    if code != 0:
        raise SystemExit(f"eval run failed (exit {code})")
    return list(read_results(out))


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--distinct", type=int, default=40)
    parser.add_argument("--results", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.results:
            records = list(read_results(args.results))
            origin = f"{len(records)} records of {args.results}"
        else:
            started = time.perf_counter()
            runs = real_batch(work, min(args.distinct, args.queries))
            origin = (f"{len(runs)} offline runs ({time.perf_counter() - started:.0f} s), repeated under new ids to "
                      f"{args.queries}")
            records = [{**runs[i % len(runs)], "query_id": f"q{i}"} for i in range(args.queries)]
        started = time.perf_counter()
        site = write_site(records, work / "site", sources=["bench"])
        seconds = time.perf_counter() - started
        sizes = site.sizes
        index = site.index.stat().st_size
    print(f"records: {origin}")
    print(f"report build: {len(sizes)} query pages + index in {seconds:.2f} s ({len(sizes) / seconds:.0f} pages/s)")
    print(f"page size: median {statistics.median(sizes) / 1e3:.1f} kB, p95 {percentile(sizes, 0.95) / 1e3:.1f} kB, "
          f"max {max(sizes) / 1e3:.1f} kB; index {index / 1e3:.1f} kB")


if __name__ == "__main__":
    main_()
