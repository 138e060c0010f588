"""Through the LangGraph server API (`langgraph dev`, the in-memory server on a free loopback port): a run started
with `context={"ask_user": true}` pauses; the resume sends only `command={"resume": ...}` and the answer uses the
user's value (issue 29 §1)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.graphs.test_studio import ROOT, free_port, request


@pytest.mark.slow
def test_a_server_resume_without_context_keeps_ask_user(tmp_path: Path) -> None:
    cli = Path(sys.executable).with_name("langgraph")
    if not cli.exists() and shutil.which("langgraph") is None:
        pytest.skip("langgraph-cli[inmem] is not installed")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "ANYTOOL_MODEL"}
    env.update({"ANYTOOL_EMBEDDINGS": "none", "LANGSMITH_TRACING": "false", "LANGGRAPH_CLI_NO_ANALYTICS": "1"})
    log = (tmp_path / "dev.log").open("w")
    proc = subprocess.Popen([str(cli if cli.exists() else "langgraph"), "dev", "--port", str(port), "--host",
                             "127.0.0.1", "--no-browser", "--no-reload", "--config", str(ROOT / "langgraph.json")],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        assistants: Any = None
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                assistants = request(f"{base}/assistants/search", {})
                break
            except OSError:
                time.sleep(0.5)
        assert assistants is not None, f"server did not start: {(tmp_path / 'dev.log').read_text()[-2000:]}"
        assistant = assistants[0]["assistant_id"]
        thread = request(f"{base}/threads", {})["thread_id"]
        paused = request(f"{base}/threads/{thread}/runs/wait",
                         {"assistant_id": assistant, "input": {"query": "Convert miles to kilometers"},
                          "context": {"model": "offline", "ask_user": True}})
        state = request(f"{base}/threads/{thread}/state")
        questions = [i["value"] for t in state["tasks"] for i in t.get("interrupts", [])] + [
            i["value"] for i in state.get("interrupts", [])]
        assert any(q.get("type") == "ask_user" and "'value'" in q.get("question", "") for q in questions), (paused,
                                                                                                           state)
        assert state["values"]["run_context"] == {"model": "offline", "ask_user": True}
        # the resume carries no context: the run's own (model and ask_user) holds
        out = request(f"{base}/threads/{thread}/runs/wait",
                      {"assistant_id": assistant, "command": {"resume": "26.2 miles"}})
        assert out["status"] == "solved" and "26.2 mi = 42.1648128 km" in out["answer"], json.dumps(out)[:2000]
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
