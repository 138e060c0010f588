"""`--db postgresql://...`: a real PostgreSQL on loopback (`.ci/postgres.sh` starts one and CI exports
ANYTOOL_TEST_POSTGRES). Two worker processes share one batch without running a query twice; `anytool run`
checkpoints there too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path

import pytest

from tests.eval.anytool.test_eval_run import QUERIES, write_group

PG = os.environ.get("ANYTOOL_TEST_POSTGRES", "")


def _reachable() -> str | None:
    if not PG:
        return "ANYTOOL_TEST_POSTGRES is not set (run `export ANYTOOL_TEST_POSTGRES=$(bash .ci/postgres.sh)`)"
    try:
        import psycopg
    except ImportError:
        return "the postgres extra is not installed (pip install 'langgraph-anytool[postgres]')"
    try:
        with psycopg.connect(PG, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except Exception as exc:
        return f"PostgreSQL at {PG} is not reachable: {exc}"
    return None


pytestmark = pytest.mark.skipif(_reachable() is not None, reason=str(_reachable()))


def test_two_workers_share_one_batch(tmp_path: Path) -> None:
    q = write_group(tmp_path / "pg.json")
    out = tmp_path / "r.jsonl"
    batch = f"test-{uuid.uuid4().hex[:8]}"
    cmd = [sys.executable, "-m", "langgraph_anytool.cli", "eval", "run", "--queries", str(q), "--offline",
           "--concurrency", "1", "--out", str(out), "--db", PG, "--batch", batch, "--no-progress"]
    env = {**os.environ, "ANYTOOL_EMBEDDINGS": "none"}
    workers = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(2)]
    outs = [w.communicate(timeout=300) for w in workers]
    assert all(w.returncode == 0 for w in workers), [e[-1500:] for _, e in outs]
    ids = Counter(json.loads(line)["query_id"] for line in out.read_text().splitlines())
    assert sorted(ids) == [str(100 + i) for i in range(len(QUERIES))] and max(ids.values()) == 1
    import psycopg

    with psycopg.connect(PG) as conn:
        rows = conn.execute("SELECT worker, done FROM anytool_claims WHERE batch = %s", (batch,)).fetchall()
        threads = conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints WHERE thread_id LIKE 'pg:%%'"
                               ).fetchone()
    assert len(rows) == len(QUERIES) and all(done for _, done in rows)
    assert len({w for w, _ in rows}) == 2, "both workers should have taken queries"
    assert threads is not None and threads[0] >= len(QUERIES)  # every query checkpointed in the shared database
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert f"0 queries run now, {len(QUERIES)} already" in again.stdout


def test_anytool_run_checkpoints_to_postgres() -> None:
    from langgraph_anytool.cli.app import main

    thread = f"pg-run-{uuid.uuid4().hex[:8]}"
    assert main(["run", "Convert 26.2 miles to kilometers.", "--offline", "--db", PG, "--thread", thread,
                 "--json"]) in (0, 1)
    import psycopg

    with psycopg.connect(PG) as conn:
        n = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread,)).fetchone()
    assert n is not None and n[0] > 0


def test_a_done_claim_is_taken_again_only_to_retry_it() -> None:
    """A resumed batch re-runs a query whose record is a transport error: its done claim is re-opened (retry),
    never without retry, and not while another worker holds the re-opened claim."""
    import asyncio

    from langgraph_anytool.eval.anytool.persistence import PostgresClaims

    batch = f"retry-{uuid.uuid4().hex[:8]}"

    async def go() -> list[bool]:
        async with PostgresClaims(PG, batch, worker="a") as a, PostgresClaims(PG, batch, worker="b") as b:
            got = [await a.claim("q1")]
            await a.done("q1")
            got += [await b.claim("q1"), await a.claim("q1")]  # done: nobody takes it without retry
            got += [await b.claim("q1", retry=True)]  # re-opened for b
            got += [await a.claim("q1", retry=True)]  # b holds it now (not done, not stale)
            await b.done("q1")
            return got

    assert asyncio.run(go()) == [True, False, False, True, False]
