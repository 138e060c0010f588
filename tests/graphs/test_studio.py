"""`langgraph dev` (LangGraph Studio's server) loads langgraph.json, lists the graph and returns its structure."""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.servers import free_port, langgraph_dev  # noqa: F401  (free_port: imported from here too)

ROOT = Path(__file__).resolve().parents[2]


def request(url: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:  # the first request builds the graph (cold imports)
        return json.loads(resp.read())


@pytest.mark.slow
def test_langgraph_dev_serves_the_anytool_graph(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ANYTOOL_MODEL"}  # Studio must load without a model
    env.update({"ANYTOOL_EMBEDDINGS": "none"})
    with langgraph_dev(ROOT / "langgraph.json", tmp_path, env) as base:
        assistants = request(f"{base}/assistants/search", {})
        assert [a["graph_id"] for a in assistants] == ["anytool"]
        graph = request(f"{base}/assistants/{assistants[0]['assistant_id']}/graph")
        nodes = {n["id"] for n in graph["nodes"]}
        assert {"init", "dispatch", "meta_agent", "category_agent", "tool_agent", "gate", "solver", "judge",
                "reflect", "finalize"} <= nodes
        edges = {(e["source"], e["target"]) for e in graph["edges"]}
        assert ("solver", "judge") in edges and ("reflect", "dispatch") in edges
        # the solver's own structure (its backtracking edge) is visible as a subgraph
        assistant = assistants[0]["assistant_id"]
        sub = request(f"{base}/assistants/{assistant}/graph?xray=true")
        assert any("backtrack" in n["id"] for n in sub["nodes"])
        schemas = request(f"{base}/assistants/{assistant}/schemas")
        assert schemas["input_schema"]["properties"]["query"] and schemas["output_schema"]["properties"]["answer"]
        assert {"model", "max_api_pool", "profile"} <= set(schemas["context_schema"]["properties"])
        # a run without a model ends with the one-line "configure a model" error
        thread = request(f"{base}/threads", {})["thread_id"]
        failed = request(f"{base}/threads/{thread}/runs/wait", {"assistant_id": assistant, "input": {"query": "q"}})
        assert "ANYTOOL_MODEL" in json.dumps(failed), failed
        # the offline stand-in, chosen per run through the context panel's fields
        thread = request(f"{base}/threads", {})["thread_id"]
        out = request(f"{base}/threads/{thread}/runs/wait",
                      {"assistant_id": assistant, "input": {"query": "Convert 26.2 miles to kilometers"},
                       "context": {"model": "offline", "max_api_pool": 8}})
        assert out["status"] in ("solved", "unsolved") and "42.16" in out["answer"], out
        # chat: Studio's chat view needs a `messages` list in the input and output schemas; a messages-only
        # input is answered and the answer comes back as the last message
        assert schemas["input_schema"]["properties"]["messages"]["type"] == "array"
        assert "messages" in schemas["output_schema"]["properties"]
        thread = request(f"{base}/threads", {})["thread_id"]
        chat = request(f"{base}/threads/{thread}/runs/wait",
                       {"assistant_id": assistant, "context": {"model": "offline", "max_api_pool": 8},
                        "input": {"messages": [{"role": "user", "content": "Convert 26.2 miles to kilometers"}]}})
        assert chat["query"] == "Convert 26.2 miles to kilometers", chat
        first, last = chat["messages"][0], chat["messages"][-1]
        assert first["type"] == "human" and first["content"] == "Convert 26.2 miles to kilometers"
        assert last["type"] == "ai" and chat["answer"] and chat["answer"] in last["content"] and "42.16" in last["content"]
        # the thread keeps the conversation: the next human message is the next request
        state = request(f"{base}/threads/{thread}/state")
        assert [m["type"] for m in state["values"]["messages"]] == ["human", "ai"]
