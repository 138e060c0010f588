"""`anytool eval run --server`: every query as a run on a loopback `langgraph dev`, through langgraph-sdk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from langgraph_anytool.eval.anytool.results import read_results
from tests.eval.anytool.test_eval_run import write_group
from tests.servers import langgraph_dev

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_eval_run_against_langgraph_dev(tmp_path: Path) -> None:
    config = tmp_path / "langgraph.json"
    config.write_text(json.dumps({"python_version": "3.11", "dependencies": [str(ROOT)],
                                  "graphs": {"anytool": str(ROOT / "tests" / "data" / "offline_server_graph.py")
                                             + ":make_graph"}}))
    env = {**os.environ, "ANYTOOL_EMBEDDINGS": "none", "LANGSMITH_TRACING": "false", "LANGGRAPH_CLI_NO_ANALYTICS": "1"}
    with langgraph_dev(config, tmp_path, env) as base:
        queries = write_group(tmp_path / "srv.json", 3)
        out = tmp_path / "r.jsonl"
        cmd = [sys.executable, "-m", "langgraph_anytool.cli", "eval", "run", "--server", base, "--queries",
               str(queries), "--out", str(out), "--timeout", "120", "--concurrency", "2", "--no-progress"]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        recs = read_results(out)
        assert sorted(r["query_id"] for r in recs) == ["100", "101", "102"]
        for r in recs:
            assert r["error"] is None and r["status"] in ("solved", "unsolved", "gave_up"), r
            assert r["pool"] and r["trajectory"] and r["usage"]["model_calls"] > 0
            assert r["model"] == f"server {base}: model unknown (the server does not say)"  # a graph without our HTTP app
        assert any(r["answer"] for r in recs)
        again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert "0 queries run now, 3 already" in again.stdout
        assert len(out.read_text().splitlines()) == 3
