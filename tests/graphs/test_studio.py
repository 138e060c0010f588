"""`langgraph dev` (LangGraph Studio's server) loads langgraph.json, lists the graph and returns its structure."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.graphs.studio import make_graph

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def request(url: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:  # the first request builds the graph (cold imports)
        return json.loads(resp.read())


@contextmanager
def langgraph_dev(tmp_path: Path, env: dict[str, str], config: Path = ROOT / "langgraph.json"
                  ) -> Iterator[tuple[str, Path]]:
    """`langgraph dev` on `config` (default: this project's langgraph.json) and a free loopback port: (base URL,
    its log file)."""
    cli = Path(sys.executable).with_name("langgraph")
    if not cli.exists() and shutil.which("langgraph") is None:
        pytest.skip("langgraph-cli[inmem] is not installed")
    port = free_port()
    path = tmp_path / "dev.log"
    log = path.open("w")
    proc = subprocess.Popen([str(cli if cli.exists() else "langgraph"), "dev", "--port", str(port), "--host",
                             "127.0.0.1", "--no-browser", "--no-reload", "--config", str(config)],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        up = False
        deadline = time.monotonic() + 180  # the server builds the graph and its search index before it answers
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                request(f"{base}/assistants/search", {})
                up = True
                break
            except OSError:
                time.sleep(0.5)
        assert up, f"server did not start: {path.read_text()[-2000:]}"
        yield base, path
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def _server_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ANYTOOL_MODEL"}  # Studio must load without a model
    env.update({"LANGSMITH_TRACING": "false", "LANGGRAPH_CLI_NO_ANALYTICS": "1",
                "ANYTOOL_INDEX_DIR": str(tmp_path / "index"), "ANYTOOL_CACHE_DIR": str(tmp_path / "responses"),
                **extra})
    return env


@pytest.mark.slow
def test_langgraph_dev_serves_the_anytool_graph(tmp_path: Path) -> None:
    with langgraph_dev(tmp_path, _server_env(tmp_path, ANYTOOL_EMBEDDINGS="none")) as (base, _log):
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
    with langgraph_dev(tmp_path, _server_env(tmp_path)) as (base, log):
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
