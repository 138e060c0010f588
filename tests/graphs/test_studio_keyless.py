"""LangGraph Studio / the Agent Server without a key, and context fields the library refuses, on a real `langgraph dev`.

The docs' own line, `ANYTOOL_MODEL=openai:gpt-4o-mini langgraph dev`, in an environment without OPENAI_API_KEY:
the server draws the graph, shows its schemas and thread states; only a run reports the missing key, in one line.
A context with a field the library does not know is refused by the server as by `graph.invoke(..., context=...)`.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.config import ConfigError
from langgraph_anytool.context import check_context
from langgraph_anytool.graphs.studio import build_graph
from langgraph_anytool.models.llm import ModelNotConfiguredError
from tests.servers import langgraph_dev

ROOT = Path(__file__).resolve().parents[2]
KEY_NAMES = ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GROQ_API_KEY")
QUERY = "Convert 26.2 miles to kilometers."


def keyless_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in KEY_NAMES and not k.startswith("ANYTOOL_")}
    env.update({"ANYTOOL_MODEL": "openai:gpt-4o-mini", "ANYTOOL_EMBEDDINGS": "none",
                "ANYTOOL_INDEX_DIR": str(tmp_path / "index"), "ANYTOOL_CACHE_DIR": str(tmp_path / "responses")})
    return env


def call(url: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def library_error(context: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as err:
        check_context(context)
    return str(err.value)


def test_the_studio_graph_builds_without_a_key_and_a_run_says_which_key(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path) -> None:
    for name in KEY_NAMES:
        monkeypatch.delenv(name, raising=False)
    env = keyless_env(tmp_path)
    graph = build_graph(env)
    assert "solver" in graph.get_graph().nodes and graph.get_context_jsonschema()["properties"]["model"]
    with pytest.raises(ModelNotConfiguredError) as err:
        graph.invoke({"query": QUERY})
    assert "\n" not in str(err.value) and "OPENAI_API_KEY" in str(err.value)
    out = graph.invoke({"query": QUERY}, context={"model": "offline"})  # another model per run is enough
    assert out["status"] == "solved"


@pytest.mark.slow
def test_langgraph_dev_without_a_key_draws_and_refuses_what_the_library_refuses(tmp_path: Path) -> None:
    with langgraph_dev(ROOT / "langgraph.json", tmp_path, keyless_env(tmp_path)) as base:
        status, assistants = call(f"{base}/assistants/search", {})
        assert status == 200
        assistant = assistants[0]["assistant_id"]
        status, drawn = call(f"{base}/assistants/{assistant}/graph")
        assert status == 200 and {"dispatch", "solver", "judge"} <= {n["id"] for n in drawn["nodes"]}
        status, schemas = call(f"{base}/assistants/{assistant}/schemas")
        assert status == 200 and "model" in schemas["context_schema"]["properties"]
        thread = call(f"{base}/threads", {})[1]["thread_id"]
        # only a run reports the missing key, in one line
        status, failed = call(f"{base}/threads/{thread}/runs/wait", {"assistant_id": assistant,
                                                                      "input": {"query": QUERY}})
        message = failed["__error__"]["message"]
        assert "\n" not in message and "needs an API key: set OPENAI_API_KEY" in message, failed
        status, state = call(f"{base}/threads/{thread}/state")
        assert status == 200 and state["values"]["query"] == QUERY
        # unknown context fields: refused with the library's line, on each route that starts a run or keeps one
        for context in ({"model": "offline", "no_such_field": 1}, {"max_api_pol": 3}):
            expected = library_error(context)
            for route, extra in ((f"/threads/{thread}/runs/wait", {}), (f"/threads/{thread}/runs", {}),
                                 ("/runs/stream", {}), ("/runs/wait", {})):
                status, refused = call(f"{base}{route}", {"assistant_id": assistant, "input": {"query": QUERY},
                                                           "context": context, **extra})
                assert (status, refused) == (422, {"detail": expected}), (route, status, refused)
            status, refused = call(f"{base}/assistants", {"graph_id": "anytool", "context": context})
            assert (status, refused) == (422, {"detail": expected})
        assert "did you mean 'max_api_pool'" in library_error({"max_api_pol": 3})
        status, bad_value = call(f"{base}/runs/wait", {"assistant_id": assistant, "input": {"query": QUERY},
                                                       "context": {"max_api_pool": "many"}})
        assert status == 422 and bad_value["detail"] == library_error({"max_api_pool": "many"})
        # a known context runs: the offline stand-in per run, no key needed
        status, out = call(f"{base}/threads/{thread}/runs/wait", {"assistant_id": assistant, "input": {"query": QUERY},
                                                                  "context": {"model": "offline"}})
        assert status == 200 and out["status"] == "solved", out
        status, state = call(f"{base}/threads/{thread}/state")
        assert status == 200 and state["values"]["status"] == "solved"
