"""`anytool eval run --server` against the project's own server running the offline stand-in: the records, the
command's first line and `eval stats` say that the answers come from the stand-in, NOT an LLM, as a local batch
with `--offline` does (the server says which model its graph runs: `GET /anytool/model`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from langgraph_anytool.eval.anytool.results import read_results
from langgraph_anytool.eval.anytool.runner import OFFLINE_LABEL
from tests.eval.anytool.test_eval_run import write_group
from tests.servers import langgraph_dev

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_batch_on_a_stand_in_server_is_labelled_as_not_an_llm(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANYTOOL_")}
    env.update({"ANYTOOL_MODEL": "offline", "ANYTOOL_EMBEDDINGS": "none", "ANYTOOL_INDEX_DIR": str(tmp_path / "idx"),
                "ANYTOOL_CACHE_DIR": str(tmp_path / "responses"), "LANGSMITH_TRACING": "false"})
    with langgraph_dev(ROOT / "langgraph.json", tmp_path, env) as base:
        with urllib.request.urlopen(f"{base}/anytool/model", timeout=30) as resp:
            assert json.loads(resp.read()) == {"model": "offline", "models": {}}
        queries = write_group(tmp_path / "srv.json", 2)
        out = tmp_path / "r.jsonl"
        client_env = {k: v for k, v in env.items() if k != "ANYTOOL_MODEL"}  # the client names no model
        cmd = [sys.executable, "-m", "langgraph_anytool.cli", "eval", "run", "--server", base, "--queries",
               str(queries), "--out", str(out), "--timeout", "120", "--no-progress"]
        done = subprocess.run(cmd, env=client_env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        recs = read_results(out)
        assert len(recs) == 2 and all(r["model"] == f"server {base}: {OFFLINE_LABEL}" for r in recs), recs
        shown = done.stdout + done.stderr
        assert "not from an LLM" in shown and "NOT an LLM" in shown, shown
    stats = subprocess.run([sys.executable, "-m", "langgraph_anytool.cli", "eval", "stats", str(out)], env=client_env,
                           capture_output=True, text=True, timeout=120)
    assert stats.returncode == 0 and f"server {base}: {OFFLINE_LABEL}" in stats.stdout, stats.stdout
