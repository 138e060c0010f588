"""The graphs through LangChain's streaming doors: `astream_events(version="v2")` and `stream_mode="messages"`.

Under a streaming callback handler LangGraph runs a subgraph node with `astream` instead of `invoke`; the package's
subgraphs must then write what they write under `invoke` (graphs/subgraph.py), so every graph the package builds
ends in the same state whichever door a run comes through; and a model that streams shows its tokens with the
role that called it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from langgraph_anytool import AnyToolConfig, Catalog, create_anytool_graph, create_retriever_graph
from langgraph_anytool.models.llm import ROLE_KEY
from langgraph_anytool.models.testing import StreamingScriptedChatModel
from tests.fakes import ai, call
from tests.graph_world import World, adds, make_world, solved_judge, turns

QUERY = "Convert 26.2 miles to kilometers."


def comparable(value: Any) -> Any:
    """A run's output without what differs between two identical runs: message and tool-call ids (the scripted
    model numbers its calls across runs) and the event log's clock."""
    if isinstance(value, BaseMessage):
        return (value.type, value.content, [(c["name"], c["args"]) for c in getattr(value, "tool_calls", [])])
    if isinstance(value, Mapping):
        return {k: comparable(v) for k, v in value.items() if k not in ("t", "t0", "id", "tool_call_id")}
    if isinstance(value, list | tuple):
        return [comparable(v) for v in value]
    return value


async def run_events(graph: Any, payload: Any, config: Any = None) -> tuple[list[dict[str, Any]], Any]:
    """All events of one `astream_events` run and the output of its root run."""
    events = [e async for e in graph.astream_events(payload, config, version="v2")]
    ends = [e for e in events if e["event"] == "on_chain_end" and not e["parent_ids"]]
    assert len(ends) == 1
    return events, ends[0]["data"]["output"]


def offline(**settings: Any) -> Callable[..., Any]:
    return lambda checkpointer=None: create_anytool_graph(
        Catalog.builtin(), "offline", config=AnyToolConfig(**settings), checkpointer=checkpointer)


def world_graph(checkpointer: Any = None) -> Any:
    """The scripted world: a meta-agent and a tool agent step in the same superstep (parallel `Send`s)."""
    catalog, executor = make_world()
    weather = catalog.function_name(catalog.find_api("Weather Now", "Current").id)
    world = World({
        "meta": lambda m: (ai("", call("create_agent_category_level", category_name="Weather"))
                           if turns(m) == 0 else ai("", call("finish_search"))),
        "tool:Weather Now": lambda m: [adds("Weather Now", "Current"), ai("", call("check_if_request_solvable"))][
            turns(m)] if turns(m) < 2 else ai("", call("finish_search")),
        "solvable": lambda m: ai("Solvable"),
        "solver": lambda m: (ai("Let me call the API.", call(weather, city="Paris")) if turns(m) == 0 else
                             ai("", call("Finish", return_type="give_answer", final_answer="It is 21°C in Paris."))),
        "judge": solved_judge,
    })
    return create_anytool_graph(catalog, StreamingScriptedChatModel(responder=world),
                                config=AnyToolConfig(seed_with_search=False), executor=executor,
                                checkpointer=checkpointer)


BUILDERS: dict[str, Callable[..., Any]] = {
    "anytool-dfsdt": offline(solver="dfsdt"),
    "anytool-umi": offline(solver="umi"),
    "anytool-cot": offline(solver="cot"),
    "anytool-scripted-parallel": world_graph,
    "retriever": lambda checkpointer=None: create_retriever_graph(Catalog.builtin(), "offline",
                                                                  checkpointer=checkpointer),
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize("door", ["query", "messages+checkpointer"])
def test_astream_events_ends_where_invoke_ends(name: str, door: str) -> None:
    build = BUILDERS[name]
    if door == "query" or name == "retriever":  # the retriever's input is a query only
        payload: Any = {"query": QUERY}
        saver, config = None, None
    else:
        payload = {"messages": [HumanMessage(QUERY)]}
        saver, config = InMemorySaver(), {"configurable": {"thread_id": "t"}}
    expected = build().invoke(payload)
    graph = build(saver)
    events, output = asyncio.run(run_events(graph, payload, config))
    # the root run's output is the last `values` chunk: the whole state, as with any LangGraph graph's astream
    assert comparable({k: output[k] for k in expected}) == comparable(expected)
    if saver is not None:  # the checkpointed state holds the same run
        state = graph.get_state(config).values
        assert comparable({k: state[k] for k in expected}) == comparable(expected)
    assert any(e["event"] == "on_chain_stream" for e in events)


class Outer(TypedDict, total=False):
    query: str
    status: str
    answer: str
    note: str


def test_anytool_as_a_node_of_a_users_graph_writes_its_output_only_under_astream_events() -> None:
    """The graph as one node of someone else's graph: it hands back its output schema; its internal keys (run_key,
    tick, ...) stay inside it."""
    inner = offline(solver="dfsdt")()
    builder = StateGraph(Outer)
    builder.add_node("anytool", inner)
    builder.add_node("after", lambda s: {"note": f"{s['status']}: {s['answer'][:20]}"})
    builder.add_edge(START, "anytool")
    builder.add_edge("anytool", "after")
    builder.add_edge("after", END)
    outer = builder.compile()
    expected = outer.invoke({"query": QUERY})
    writes: list[set[str]] = []

    async def go() -> Any:
        out = None
        async for e in outer.astream_events({"query": QUERY}, version="v2"):
            if e["event"] == "on_chain_end" and e["name"] == "anytool" and e["metadata"].get("langgraph_node") \
                    == "anytool" and isinstance(e["data"].get("output"), Mapping):
                writes.append(set(e["data"]["output"]))
            if e["event"] == "on_chain_end" and not e["parent_ids"]:
                out = e["data"]["output"]
        return out

    assert comparable(asyncio.run(go())) == comparable(expected)
    assert writes and all(w <= set(inner.output_channels) for w in writes), writes  # not run_key, tick, ...


def test_streamed_tokens_carry_the_role_in_events_and_in_messages_mode() -> None:
    graph = world_graph()
    events, output = asyncio.run(run_events(graph, {"query": "What's the temperature in Paris?"}))
    assert output["status"] == "solved"
    tokens = [e for e in events if e["event"] == "on_chat_model_stream"]
    by_role: dict[str, str] = {}
    for e in tokens:
        role = e["metadata"].get(ROLE_KEY)
        assert role, e["metadata"]
        by_role[role] = by_role.get(role, "") + str(e["data"]["chunk"].content)
    assert by_role["solver"].startswith("Let me call the API.")
    assert len([e for e in tokens if e["metadata"][ROLE_KEY] == "solver" and e["data"]["chunk"].content]) >= 5
    assert {"meta", "tool", "solvable", "judge"} <= set(by_role)

    async def messages_mode() -> list[tuple[Any, dict[str, Any]]]:
        return [part async for part in world_graph().astream({"query": "What's the temperature in Paris?"},
                                                            stream_mode="messages", subgraphs=True)
                for part in [part[1]]]

    parts = asyncio.run(messages_mode())
    solver_text = "".join(str(chunk.content) for chunk, meta in parts if meta.get(ROLE_KEY) == "solver")
    assert solver_text.startswith("Let me call the API.")
    assert all(meta.get(ROLE_KEY) for chunk, meta in parts if type(chunk).__name__ == "AIMessageChunk")


# ------------------------------------------------------------------------------------------ prompted calls stream too
CONVERT_TOOL = {"type": "function", "function": {"name": "convert_units", "description": "Convert units.",
                                                 "parameters": {"type": "object",
                                                                "properties": {"value": {"type": "number"}}}}}
JSON_CALL = '{"name": "convert_units", "arguments": {"value": 26.2}}'
TEXT_CALL = 'Thought: convert the miles\nAction: convert_units\nAction Input: {"value": 26.2}'
# the wrappers that give a model its tools in the prompt, or hold its reply to a grammar: (what a held model
# writes, the call parsed from it)
PROMPTED = {
    "constrained": (JSON_CALL, [("convert_units", {"value": 26.2})]),
    "text": (TEXT_CALL, [("convert_units", {"value": 26.2})]),
    "text-grammar": (TEXT_CALL, [("convert_units", {"value": 26.2})]),
    "planner-grammar": ("Call the converter for the miles.\nNext: caller", []),
}


class Calls(TypedDict, total=False):
    query: str
    calls: list[Any]


def prompted_graph(mode: str, base_url: str) -> Any:
    """One node making one solver call through `mode`'s wrapper of a real `ChatOpenAI` client of a loopback
    llama.cpp server, with `call_role` (which streams a local server's reply under its stall watch), as the solver's
    nodes make it."""
    from langchain_openai import ChatOpenAI

    from langgraph_anytool.models.constrained import ConstrainedToolRunnable, GrammarRunnable
    from langgraph_anytool.models.llm import call_role
    from langgraph_anytool.nodes.solver.textmode import GrammarTextToolRunnable, TextToolRunnable
    from langgraph_anytool.nodes.solver.umi import planner_grammar

    model = ChatOpenAI(model="smollm2", base_url=base_url, api_key="x")  # type: ignore[arg-type]
    runnable = {"constrained": lambda: ConstrainedToolRunnable(model, [CONVERT_TOOL]),
                "text": lambda: TextToolRunnable(model, [CONVERT_TOOL]),
                "text-grammar": lambda: GrammarTextToolRunnable(model, [CONVERT_TOOL]),
                "planner-grammar": lambda: GrammarRunnable(model, planner_grammar("default"))}[mode]()

    def node(state: Calls) -> dict[str, Any]:
        reply, _ = call_role(runnable, "solver", [HumanMessage(state["query"])])
        return {"calls": [(c["name"], c["args"]) for c in getattr(reply, "tool_calls", [])]}

    builder = StateGraph(Calls)
    builder.add_node("solve", node)
    builder.add_edge(START, "solve")
    builder.add_edge("solve", END)
    return builder.compile()


@pytest.mark.parametrize("mode", sorted(PROMPTED))
def test_a_prompted_call_streams_its_tokens_with_its_role(mode: str) -> None:
    """Before: a constrained or text-mode call (and α-UMi's grammar-held planner) on a local server sent no
    `on_chat_model_stream` event, and nothing in `stream_mode="messages"`: the wrapper handed its model the call's
    own callbacks (`call_role`'s stream watch) in place of the run's. Now its reply's tokens stream as events
    carrying the role, and as role-tagged chunks in `astream(stream_mode="messages")`, as a native call's do; the
    tokens add up to what the server wrote, and the call is parsed from it as under `invoke`."""
    from tests.model_servers import LlamaCppServer

    reply, parsed = PROMPTED[mode]
    with LlamaCppServer(policy=lambda body: reply, n_ctx=8192, chars_per_token=3.3) as server:
        expected = prompted_graph(mode, server.base_url).invoke({"query": QUERY})
        assert expected["calls"] == parsed
        events, output = asyncio.run(run_events(prompted_graph(mode, server.base_url), {"query": QUERY}))

        async def messages_mode() -> list[tuple[Any, dict[str, Any]]]:
            return [part async for part in prompted_graph(mode, server.base_url).astream(
                {"query": QUERY}, stream_mode="messages")]

        parts = asyncio.run(messages_mode())
    assert output["calls"] == parsed
    tokens = [e for e in events if e["event"] == "on_chat_model_stream"]
    assert all(e["metadata"].get(ROLE_KEY) == "solver" for e in tokens)
    assert parts and all(meta.get(ROLE_KEY) == "solver" for _, meta in parts)
    if mode == "constrained":  # the call's JSON streams as tool_call_chunks, not as text (see the test below)
        assert len(tokens) >= 3 and not any(e["data"]["chunk"].content for e in tokens)
        return
    assert len([e for e in tokens if e["data"]["chunk"].content]) >= 3  # token by token
    assert "".join(str(e["data"]["chunk"].content) for e in tokens) == reply
    assert "".join(str(chunk.content) for chunk, _ in parts) == reply


def _call_chunks(chunks: list[Any]) -> None:
    """The chunks of a streamed call, as a native call's: no text; the first names the function with the call's id
    and index 0; the arguments' JSON text follows in pieces; together they make the call."""
    from functools import reduce

    from langchain_core.messages import AIMessageChunk

    assert chunks and all(isinstance(c, AIMessageChunk) and c.content == "" for c in chunks)
    pieces = [p for c in chunks for p in c.tool_call_chunks]
    assert pieces[0]["name"] == "convert_units" and pieces[0]["id"] and pieces[0]["index"] == 0
    assert all(p["name"] is None and p["index"] == 0 for p in pieces[1:])
    assert len([p for p in pieces if p["args"]]) >= 3  # token by token
    assert "".join(p["args"] or "" for p in pieces) == '{"value": 26.2}'
    whole = reduce(lambda a, b: a + b, chunks)
    assert [(c["name"], c["args"], c["id"]) for c in whole.tool_calls] == [
        ("convert_units", {"value": 26.2}, pieces[0]["id"])]
    assert len({c.id for c in chunks}) == 1


@pytest.mark.parametrize("reply", [JSON_CALL, '{"arguments": {"value": 26.2, "name": "x"}, "name": "convert_units"}'])
def test_a_constrained_call_streams_as_tool_call_chunks(reply: str) -> None:
    """Before: a constrained call streamed its reply as raw JSON text chunks, so an app reading
    `AIMessageChunk.tool_call_chunks` from `astream_events` or `stream_mode="messages"` saw no call. Now its chunks
    are the call's pieces (name, id, index, then the arguments' text), with no text content, through a real
    `ChatOpenAI` talking to the loopback llama.cpp fake; the final message carries the same call id, and messages
    mode does not send it again. Either key order works (an argument called "name" is no function name)."""
    from tests.model_servers import LlamaCppServer

    with LlamaCppServer(policy=lambda body: reply, n_ctx=8192, chars_per_token=3.3) as server:
        events, output = asyncio.run(run_events(prompted_graph("constrained", server.base_url), {"query": QUERY}))

        async def messages_mode() -> list[tuple[Any, dict[str, Any]]]:
            return [part async for part in prompted_graph("constrained", server.base_url).astream(
                {"query": QUERY}, stream_mode="messages")]

        parts = asyncio.run(messages_mode())
    args = {"value": 26.2, "name": "x"} if '"name": "x"' in reply else {"value": 26.2}
    assert output["calls"] == [("convert_units", args)]
    if args != {"value": 26.2}:  # the other key order: only the name and the call are checked
        chunks = [e["data"]["chunk"] for e in events if e["event"] == "on_chat_model_stream"]
        assert sum(chunks[1:], chunks[0]).tool_calls[0]["args"] == args
        assert next(p["name"] for c in chunks for p in c.tool_call_chunks) == "convert_units"
        return
    streamed = [e for e in events if e["event"] == "on_chat_model_stream"]
    assert all(e["metadata"].get(ROLE_KEY) == "solver" for e in streamed)
    _call_chunks([e["data"]["chunk"] for e in streamed])
    ends = [e for e in events if e["event"] == "on_chat_model_end"]
    assert len(ends) == 1 and ends[0]["data"]["output"].tool_calls[0]["id"] == (
        streamed[0]["data"]["chunk"].tool_call_chunks[0]["id"])
    assert all(meta.get(ROLE_KEY) == "solver" for _, meta in parts)
    _call_chunks([chunk for chunk, _ in parts])  # every part is a chunk: the final message is not sent again


TWO_ACTIONS = ('Thought: first the miles\nAction: convert_units\nAction Input: {"value": 1}\n'
               'No, the marathon.\nAction: convert_units\nAction Input: {"value": 26.2, "unit": "mi"}')


@pytest.mark.parametrize(("mode", "reply", "args"), [
    ("text", TEXT_CALL, {"value": 26.2}), ("text-grammar", TEXT_CALL, {"value": 26.2}),
    ("text", TWO_ACTIONS, {"value": 26.2, "unit": "mi"})])
def test_a_text_mode_call_streams_its_parsed_call_as_tool_call_chunks(mode: str, reply: str,
                                                                      args: dict[str, Any]) -> None:
    """Before: a text-mode call streamed its `Action:` text as content only, so an app reading
    `AIMessageChunk.tool_call_chunks` from `astream_events` or `stream_mode="messages"` saw no call. Now the text
    still streams as content token by token, and once the reply is parsed one last chunk (no text) carries the
    parsed call — the last `Action:` — as tool_call_chunks (name, the arguments' JSON, index 0) under the final
    message's call id; the chunks add up to the reply's text and that call, and messages mode does not send the
    final message again."""
    from functools import reduce

    from tests.model_servers import LlamaCppServer

    with LlamaCppServer(policy=lambda body: reply, n_ctx=8192, chars_per_token=3.3) as server:
        events, output = asyncio.run(run_events(prompted_graph(mode, server.base_url), {"query": QUERY}))

        async def messages_mode() -> list[tuple[Any, dict[str, Any]]]:
            return [part async for part in prompted_graph(mode, server.base_url).astream(
                {"query": QUERY}, stream_mode="messages")]

        parts = asyncio.run(messages_mode())
    assert output["calls"] == [("convert_units", args)]
    ends = [e for e in events if e["event"] == "on_chat_model_end"]
    assert len(ends) == 1
    final = ends[0]["data"]["output"]
    assert [(c["name"], c["args"]) for c in final.tool_calls] == [("convert_units", args)]
    streamed = [e["data"]["chunk"] for e in events if e["event"] == "on_chat_model_stream"]
    for chunks in (streamed, [chunk for chunk, _ in parts]):  # every part is a chunk: no final message again
        assert len([c for c in chunks if c.content]) >= 3  # the text, token by token
        pieces = [p for c in chunks for p in c.tool_call_chunks]
        assert [(p["name"], p["id"], p["index"]) for p in pieces] == [("convert_units", final.tool_calls[0]["id"], 0)]
        assert all(not c.content for c in chunks if c.tool_call_chunks)
        whole = reduce(lambda a, b: a + b, chunks)
        assert whole.content == reply
        assert [(c["name"], c["args"], c["id"]) for c in whole.tool_calls] == [
            ("convert_units", args, final.tool_calls[0]["id"])]
        assert len({c.id for c in chunks}) == 1
    assert all(meta.get(ROLE_KEY) == "solver" for _, meta in parts)


@pytest.mark.parametrize("reply", ['Thought: convert\nAction: convert_units\nAction Input: {"value": 26.2, "unit',
                                   "Thought: nothing to call.\nThe marathon is 42.195 km."])
def test_a_text_mode_reply_without_a_valid_call_streams_what_was_parsed(reply: str) -> None:
    """A text-mode reply whose arguments are cut, or with no `Action:`, streams its text and no call chunk (LangChain
    reads a chunk's arguments as partial JSON: cut arguments would add up to a call the final message does not
    have; the final message holds the invalid call). Either way messages mode does not send the final message
    again."""
    from functools import reduce

    from tests.model_servers import LlamaCppServer

    with LlamaCppServer(policy=lambda body: reply, n_ctx=8192, chars_per_token=3.3) as server:
        events, output = asyncio.run(run_events(prompted_graph("text", server.base_url), {"query": QUERY}))

        async def messages_mode() -> list[tuple[Any, dict[str, Any]]]:
            return [part async for part in prompted_graph("text", server.base_url).astream(
                {"query": QUERY}, stream_mode="messages")]

        parts = asyncio.run(messages_mode())
    assert output["calls"] == []
    final = next(e for e in events if e["event"] == "on_chat_model_end")["data"]["output"]
    streamed = [e["data"]["chunk"] for e in events if e["event"] == "on_chat_model_stream"]
    for chunks in (streamed, [chunk for chunk, _ in parts]):
        whole = reduce(lambda a, b: a + b, chunks)
        assert whole.content == reply and not whole.tool_call_chunks and not whole.tool_calls
        assert len({c.id for c in chunks}) == 1
    assert ("Action:" in reply) == bool(final.invalid_tool_calls)
