"""Checkpoint database growth per query, with and without compaction of finished threads (issue 21, point 11).

    python benchmarks/checkpoint_growth.py [--queries 40] [--concurrency 4]

Runs the same batch twice through `run_batch` with a SQLite checkpointer and the offline policy model on the
built-in catalog: once keeping every checkpoint (`BatchOptions(compact=False)`, the old behaviour), once compacting
each finished thread to its final checkpoint (the default). Prints, for each: database bytes on disk (file + WAL),
bytes per query, checkpoint and write rows, and the wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.eval.anytool.persistence import async_checkpointer, db_size
from langgraph_anytool.eval.anytool.results import ResultsWriter
from langgraph_anytool.eval.anytool.runner import BatchOptions, run_batch
from langgraph_anytool.eval.datasets import load_queries
from langgraph_anytool.offline import OfflinePolicyModel

QUERIES = ["Convert 26.2 miles to kilometers.", "What day of the week was 2024-02-29?",
           "What is the geographic midpoint between Paris and Berlin?", "Convert 100 degrees Fahrenheit to Celsius.",
           "How many days are there between 2024-01-01 and 2024-03-01?", "Convert 5 kilograms to pounds."]


def batch(workdir: Path, name: str, n: int, concurrency: int, compact: bool) -> dict[str, float]:
    catalog = Catalog.builtin()
    group = workdir / "bench.json"
    group.write_text(json.dumps([{"query_id": i, "query": QUERIES[i % len(QUERIES)]} for i in range(n)]))
    queries = load_queries(group)
    db = workdir / f"{name}.sqlite"

    async def go() -> None:
        async with async_checkpointer(str(db)) as saver:
            with ResultsWriter(workdir / f"{name}.jsonl") as writer:
                await run_batch(queries, catalog, OfflinePolicyModel(catalog=catalog), writer,
                                BatchOptions(concurrency=concurrency, compact=compact, db=str(db)),
                                checkpointer=saver)

    started = time.perf_counter()
    asyncio.run(go())
    seconds = time.perf_counter() - started
    with sqlite3.connect(db) as conn:
        checkpoints = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
        writes = conn.execute("SELECT count(*) FROM writes").fetchone()[0]
    size = db_size(str(db))
    return {"bytes": size, "per_query": size / n, "checkpoints": checkpoints, "writes": writes, "seconds": seconds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--concurrency", type=int, default=4)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="anytool-ckpt-") as tmp:
        rows = [(label, batch(Path(tmp), label, args.queries, args.concurrency, compact))
                for label, compact in (("keep every checkpoint", False), ("compact finished threads", True))]
    print(f"{args.queries} queries, concurrency {args.concurrency}, offline policy model, builtin catalog")
    print(f"{'':26} {'DB bytes':>12} {'bytes/query':>12} {'checkpoints':>12} {'writes':>8} {'seconds':>8}")
    for label, r in rows:
        print(f"{label:26} {r['bytes']:>12,.0f} {r['per_query']:>12,.0f} {r['checkpoints']:>12,.0f} "
              f"{r['writes']:>8,.0f} {r['seconds']:>8.1f}")
    print(f"compaction: {rows[0][1]['per_query'] / max(rows[1][1]['per_query'], 1):.1f}x less per query")


if __name__ == "__main__":
    main()
