"""Through the LangGraph server API (`langgraph dev`, the in-memory server on a free loopback port): a run started
with `context={"ask_user": true}` pauses; the resume sends only `command={"resume": ...}` and the answer uses the
user's value (issue 29 §1)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.graphs.test_studio import ROOT, request
from tests.servers import langgraph_dev


@pytest.mark.slow
def test_a_server_resume_without_context_keeps_ask_user(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ANYTOOL_MODEL"}  # the model comes with the run's context
    with langgraph_dev(ROOT / "langgraph.json", tmp_path, {**env, "ANYTOOL_EMBEDDINGS": "none"}) as base:
        assistant = request(f"{base}/assistants/search", {})[0]["assistant_id"]
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
