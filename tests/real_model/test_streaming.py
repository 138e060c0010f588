"""A real model's tokens through LangChain's streaming doors: `astream_events(version="v2")` and
`astream(stream_mode="messages")`, with SmolLM2 on llama-server playing the solver and the judge (the retrieval
agents are the offline stand-in, to keep the tier's CPU time small).

What must hold whatever the model says: the run ends with a documented status, the solver's and the judge's tokens
arrive as `on_chat_model_stream` events (several per call) carrying the role in their metadata, and the tokens of
each call add up to the reply the call ended with; a constrained call's arrive as `tool_call_chunks` that add up to
its call; a text-mode call streams its text, then its parsed call as tool_call_chunks.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from langgraph_anytool import AnyToolConfig, Catalog, create_anytool_graph
from langgraph_anytool.integrations.local_models import LlamaServer
from langgraph_anytool.models.llm import ROLE_KEY
from tests.real_model.harness import ENDED, MAX_TOKENS, SMOLLM2, WINDOW

pytestmark = pytest.mark.slow

QUERY = "Convert 26.2 miles to kilometers."


def graph_on(server: LlamaServer) -> Any:
    real = ChatOpenAI(model=SMOLLM2, base_url=server.base_url, api_key="sk-local-unused")  # type: ignore[arg-type]
    # the default call mode on a loopback llama.cpp server: constrained calls, whose tokens stream as native ones do
    profile = {SMOLLM2: {"context_window": WINDOW, "tool_calling": True, "input_price": 0, "output_price": 0,
                         "max_tokens": MAX_TOKENS}}
    config = AnyToolConfig(max_reflections=0, max_api_calls=2, max_run_seconds=240, model_profiles=profile)
    return create_anytool_graph(Catalog.builtin(), "offline", models={"solver": real, "judge": real}, config=config)


def test_real_model_tokens_stream_with_their_role(servers: Callable[[str], LlamaServer]) -> None:
    server = servers(SMOLLM2)

    async def events() -> list[dict[str, Any]]:
        return [e async for e in graph_on(server).astream_events({"query": QUERY}, version="v2")]

    seen = asyncio.run(events())
    final = next(e for e in seen if e["event"] == "on_chain_end" and not e["parent_ids"])["data"]["output"]
    assert final["status"] in ENDED, final.get("reason")
    streamed: dict[str, list[str]] = {}
    call_chunks: dict[str, list[Any]] = {}
    for e in seen:
        if e["event"] == "on_chat_model_stream":
            assert e["metadata"].get(ROLE_KEY), e["metadata"]
            streamed.setdefault(e["run_id"], []).append(str(e["data"]["chunk"].content))
            call_chunks.setdefault(e["run_id"], []).extend(e["data"]["chunk"].tool_call_chunks)
    ends = {e["run_id"]: e for e in seen if e["event"] == "on_chat_model_end"}
    roles = {ends[r]["metadata"][ROLE_KEY] for r in streamed}
    assert "solver" in roles, roles
    for run_id, pieces in streamed.items():
        reply = ends[run_id]["data"]["output"]
        assert "".join(pieces) == str(reply.content)
        if str(reply.content).strip():
            assert sum(1 for p in pieces if p) >= 2, pieces  # streamed token by token, not in one piece
    # a constrained call streams as tool_call_chunks (its JSON is no text): name and id first, then the arguments
    assert any(call_chunks.values()), "no call streamed as tool_call_chunks"
    for run_id, calls in call_chunks.items():
        reply = ends[run_id]["data"]["output"]
        if calls and reply.tool_calls:
            assert (calls[0]["name"], calls[0]["id"]) == (reply.tool_calls[0]["name"], reply.tool_calls[0]["id"])
            assert json.loads("".join(c["args"] or "" for c in calls)) == reply.tool_calls[0]["args"]

    async def messages() -> list[tuple[Any, dict[str, Any]]]:
        return [part[1] async for part in graph_on(server).astream({"query": QUERY}, stream_mode="messages",
                                                                   subgraphs=True)]

    parts = asyncio.run(messages())
    chunks = [(c, m) for c, m in parts if type(c).__name__ == "AIMessageChunk"]
    assert chunks and all(m.get(ROLE_KEY) for _, m in chunks)
    assert {m[ROLE_KEY] for _, m in chunks} >= {"solver"}, json.dumps(sorted({m[ROLE_KEY] for _, m in chunks}))


def test_real_model_text_mode_call_streams_its_text_then_its_call(servers: Callable[[str], LlamaServer]) -> None:
    """The solver in text mode (held to one `Action:` call by llama.cpp's grammar): each call's text streams as
    content token by token, then one chunk with no text carries the parsed call as tool_call_chunks under the final
    message's call id; a reader's chunks add up to that call."""
    from functools import reduce

    server = servers(SMOLLM2)
    real = ChatOpenAI(model=SMOLLM2, base_url=server.base_url, api_key="sk-local-unused")  # type: ignore[arg-type]
    profile = {SMOLLM2: {"context_window": WINDOW, "tool_calling": True, "input_price": 0, "output_price": 0,
                         "max_tokens": MAX_TOKENS}}
    config = AnyToolConfig(max_reflections=0, max_api_calls=1, max_run_seconds=240, model_profiles=profile,
                           text_mode_roles=["solver"])
    graph = create_anytool_graph(Catalog.builtin(), "offline", models={"solver": real, "judge": real}, config=config)

    async def events() -> list[dict[str, Any]]:
        return [e async for e in graph.astream_events({"query": QUERY}, version="v2")]

    seen = asyncio.run(events())
    final = next(e for e in seen if e["event"] == "on_chain_end" and not e["parent_ids"])["data"]["output"]
    assert final["status"] in ENDED, final.get("reason")
    ends = {e["run_id"]: e["data"]["output"] for e in seen if e["event"] == "on_chat_model_end"}
    chunks: dict[str, list[Any]] = {}
    for e in seen:
        if e["event"] == "on_chat_model_stream" and e["metadata"].get(ROLE_KEY) == "solver":
            chunks.setdefault(e["run_id"], []).append(e["data"]["chunk"])
    called = {r: c for r, c in chunks.items() if ends[r].tool_calls}
    assert called, "no solver call parsed"
    for run_id, run_chunks in called.items():
        assert sum(1 for c in run_chunks if c.content) >= 2  # its text, token by token
        assert [bool(c.tool_call_chunks) for c in run_chunks][-1] and not run_chunks[-1].content
        whole = reduce(lambda a, b: a + b, run_chunks)
        assert [(c["name"], c["args"], c["id"]) for c in whole.tool_calls] == [
            (c["name"], c["args"], c["id"]) for c in ends[run_id].tool_calls]
