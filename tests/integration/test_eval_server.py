"""`anytool eval run --server`: every query as a run on a loopback `langgraph dev`, through langgraph-sdk."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from langgraph_anytool.eval.anytool.results import read_results
from tests.eval.anytool.test_eval_run import write_group
from tests.graphs.test_studio import free_port, request

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_eval_run_against_langgraph_dev(tmp_path: Path) -> None:
    cli = Path(sys.executable).with_name("langgraph")
    if not cli.exists() and shutil.which("langgraph") is None:
        pytest.skip("langgraph-cli[inmem] is not installed")
    config = tmp_path / "langgraph.json"
    config.write_text(json.dumps({"python_version": "3.11", "dependencies": [str(ROOT)],
                                  "graphs": {"anytool": str(ROOT / "tests" / "data" / "offline_server_graph.py")
                                             + ":make_graph"}}))
    port = free_port()
    env = {**os.environ, "ANYTOOL_EMBEDDINGS": "none", "LANGSMITH_TRACING": "false", "LANGGRAPH_CLI_NO_ANALYTICS": "1"}
    log = (tmp_path / "dev.log").open("w")
    proc = subprocess.Popen([str(cli if cli.exists() else "langgraph"), "dev", "--port", str(port), "--host",
                             "127.0.0.1", "--no-browser", "--no-reload", "--config", str(config)],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        up = False
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                request(f"{base}/assistants/search", {})
                up = True
                break
            except OSError:
                time.sleep(0.5)
        assert up, f"server did not start: {(tmp_path / 'dev.log').read_text()[-2000:]}"
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
            assert r["model"] == f"server {base}"
        assert any(r["answer"] for r in recs)
        again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert "0 queries run now, 3 already" in again.stdout
        assert len(out.read_text().splitlines()) == 3
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
