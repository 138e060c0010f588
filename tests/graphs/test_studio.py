"""`langgraph dev` (LangGraph Studio's server) loads langgraph.json, lists the graph and returns its structure."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.graphs.studio import make_graph
from tests.servers import free_port, langgraph_dev  # noqa: F401  (free_port: imported from here too)

ROOT = Path(__file__).resolve().parents[2]


def request(url: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:  # the first request builds the graph (cold imports)
        return json.loads(resp.read())


def _server_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ANYTOOL_MODEL"}  # Studio must load without a model
    env.update({"ANYTOOL_INDEX_DIR": str(tmp_path / "index"), "ANYTOOL_CACHE_DIR": str(tmp_path / "responses"),
                **extra})
    return env


@pytest.mark.slow
def test_langgraph_dev_serves_the_anytool_graph(tmp_path: Path) -> None:
    with langgraph_dev(ROOT / "langgraph.json", tmp_path, _server_env(tmp_path, ANYTOOL_EMBEDDINGS="none")) as base:
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


def test_factory_builds_the_graph_once_per_process_and_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")
    monkeypatch.setenv("ANYTOOL_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setenv("ANYTOOL_CACHE_DIR", str(tmp_path / "responses"))
    monkeypatch.delenv("ANYTOOL_MODEL", raising=False)
    first = asyncio.run(make_graph())
    assert asyncio.run(make_graph()) is first  # `langgraph dev` calls the factory on every request
    assert list((tmp_path / "index").iterdir()), "the catalog's search index is built with the graph"
    monkeypatch.setenv("ANYTOOL_MAX_API_POOL", "8")  # another setting: another graph
    other = asyncio.run(make_graph())
    assert other is not first and asyncio.run(make_graph()) is other


@pytest.mark.slow
def test_studio_requests_log_no_slow_graph_load_and_no_faiss_probe(tmp_path: Path) -> None:
    # default embeddings (MiniLM when installed): the search index loads faiss, whose loader probes for builds the
    # wheel lacks; the server logs at INFO
    log = tmp_path / "dev.log"  # where langgraph_dev writes the server's log
    with langgraph_dev(ROOT / "langgraph.json", tmp_path, _server_env(tmp_path)) as base:
        for _ in range(3):
            assistant = request(f"{base}/assistants/search", {})[0]["assistant_id"]
            request(f"{base}/assistants/{assistant}/graph?xray=true")
            request(f"{base}/assistants/{assistant}/schemas")
        thread = request(f"{base}/threads", {})["thread_id"]
        out = request(f"{base}/threads/{thread}/runs/wait",
                      {"assistant_id": assistant, "input": {"query": "Convert 26.2 miles to kilometers"},
                       "context": {"model": "offline"}})
        assert "42.16" in out["answer"], out
        request(f"{base}/threads/{thread}/state")
        text = log.read_text()
    assert "Slow graph load" not in text, [line for line in text.splitlines() if "Slow graph load" in line]
    assert "ModuleNotFoundError" not in text and "No module named" not in text, text[-3000:]


def test_server_start_builds_the_graph_and_survives_a_bad_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    from langgraph_anytool.graphs.studio import graph_once, studio_settings
    from langgraph_anytool.graphs.studio_app import app, build_at_start

    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")
    monkeypatch.setenv("ANYTOOL_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setenv("ANYTOOL_CACHE_DIR", str(tmp_path / "responses"))
    monkeypatch.setenv("ANYTOOL_MAX_REFLECTIONS", "7")  # a setting no other test builds

    async def start() -> None:
        async with build_at_start(app):
            pass

    asyncio.run(start())
    assert graph_once(studio_settings()).value is not None  # built before any request
    monkeypatch.setenv("ANYTOOL_CATALOG", str(tmp_path / "missing"))
    asyncio.run(start())  # logged, not raised: the server starts and each request reports the error
    failures = [r for r in caplog.records if r.name.endswith("studio_app")]
    assert len(failures) == 1 and "could not be built" in failures[0].getMessage()
    assert str(tmp_path / "missing") in failures[0].getMessage()
    with pytest.raises(Exception, match="missing"):
        asyncio.run(make_graph())
