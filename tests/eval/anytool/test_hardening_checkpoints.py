"""Issue 21, point 11: a finished query's thread keeps only what a resume or an audit needs (its final checkpoint),
and a new SQLite --db hands freed pages back (incremental auto-vacuum)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.eval.anytool.persistence import async_checkpointer, db_size
from langgraph_anytool.eval.anytool.results import ResultsWriter, read_results
from langgraph_anytool.eval.anytool.runner import BatchOptions, run_batch
from langgraph_anytool.eval.datasets import load_queries
from langgraph_anytool.offline import OfflinePolicyModel
from tests.eval.anytool.test_eval_run import write_group


def _batch(tmp_path: Path, name: str, *, compact: bool, options: dict[str, object] | None = None) -> Path:
    catalog = Catalog.builtin()
    queries = load_queries(write_group(tmp_path / "g.json"))
    db = tmp_path / f"{name}.sqlite"

    async def go() -> None:
        async with async_checkpointer(str(db)) as saver:
            with ResultsWriter(tmp_path / f"{name}.jsonl") as writer:
                await run_batch(queries, catalog, OfflinePolicyModel(catalog=catalog), writer,
                                BatchOptions(compact=compact, db=str(db), **(options or {})), checkpointer=saver)

    asyncio.run(go())
    return db


def test_finished_threads_keep_only_their_final_checkpoint(tmp_path: Path) -> None:
    full = _batch(tmp_path, "full", compact=False)
    small = _batch(tmp_path, "small", compact=True)
    with sqlite3.connect(full) as conn:
        before = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    with sqlite3.connect(small) as conn:
        per_thread = conn.execute("SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id").fetchall()
        writes = conn.execute("SELECT count(*) FROM writes").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    assert len(per_thread) == 6 and all(n == 1 for _, n in per_thread) and writes == 0
    assert before > 10 * len(per_thread)  # today: every step of every query, and its subgraph calls
    assert free == 0 and db_size(str(small)) * 3 < db_size(str(full)), (db_size(str(small)), db_size(str(full)))
    # the records are the same, and the final state still answers a resume (nothing runs again)
    recs = {r["query_id"]: r["status"] for r in read_results(tmp_path / "small.jsonl")}
    assert recs == {r["query_id"]: r["status"] for r in read_results(tmp_path / "full.jsonl")}


def test_a_compacted_thread_still_resumes_and_reruns(tmp_path: Path) -> None:
    db = _batch(tmp_path, "c", compact=True)
    again = _batch(tmp_path, "c", compact=True)  # every query finished: nothing to run
    assert again == db and len((tmp_path / "c.jsonl").read_text().splitlines()) == 6
    # a retried error runs again on its compacted thread (rerun=True) and records a second attempt
    lines = (tmp_path / "c.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first.update(status="error", error_kind="rate_limited")
    (tmp_path / "c.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    _batch(tmp_path, "c", compact=True)
    recs = read_results(tmp_path / "c.jsonl")
    redo = next(r for r in recs if r["query_id"] == first["query_id"])
    assert redo["attempt"] == 2 and redo["status"] != "error"


def test_anytool_run_compacts_its_finished_thread(tmp_path: Path) -> None:
    from langgraph_anytool.cli.app import main

    db = tmp_path / "runs.sqlite"
    for thread in ("a", "b"):
        assert main(["run", "Convert 5 kilograms to pounds.", "--offline", "--db", str(db), "--thread", thread,
                     "--no-cache", "--quiet"]) == 0
    with sqlite3.connect(db) as conn:
        rows = dict(conn.execute("SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id").fetchall())
        writes = conn.execute("SELECT count(*) FROM writes").fetchone()[0]
    assert rows == {"a": 1, "b": 1} and writes == 0
    # the same thread, asked again: a new run on the compacted thread
    assert main(["run", "Convert 5 kilograms to pounds.", "--offline", "--db", str(db), "--thread", "a",
                 "--no-cache", "--quiet"]) == 0
