"""Our retriever as the client-side search of provider-native tool search (issue 35 §4), against loopback servers
that replay each provider's documented request/response shapes and refuse (HTTP 400) what the documentation does
not allow: Anthropic's Messages API (`defer_loading` tools, a search tool answered with `tool_reference` blocks) and
OpenAI's Responses API (a `tool_search` tool with `execution: "client"`, answered with a `tool_search_output`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langchain_core.tools import BaseTool, tool

from langgraph_anytool import Catalog
from langgraph_anytool.integrations.tool_search import RetrieverToolSearch, ToolSearchError
from langgraph_anytool.tools.lc import api_tools
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.servers import FunctionServer, Request, Response


@tool
def get_weather(city: str) -> str:
    """Current weather conditions (temperature, sky) of a city."""
    return f"sunny in {city}"


@tool
def send_email(to: str, body: str) -> str:
    """Send an email message to an address."""
    return "sent"


@pytest.fixture(scope="module")
def search() -> Iterator[RetrieverToolSearch]:
    """The builtin catalog's APIs as LangChain tools (≈190, none loaded up front) plus two of the user's."""
    builtin = Catalog.builtin()
    with ApiExecutor.for_catalog(builtin, kind="template") as executor:
        tools: list[BaseTool] = [*api_tools(builtin, executor), get_weather, send_email]
        yield RetrieverToolSearch(tools, k=3)


def _error(message: str) -> Response:
    return Response.json({"type": "error", "error": {"type": "invalid_request_error", "message": message}}, 400)


class AnthropicReplay:
    """POST /v1/messages as the docs describe it: the first turn calls the search tool; the next must answer with a
    `tool_result` of `tool_reference` blocks naming deferred tools of the request, then the model calls the first."""

    def __init__(self, query: str) -> None:
        self.query = query

    async def __call__(self, request: Request) -> Response:
        if request.path != "/v1/messages" or request.method != "POST":
            return _error(f"no route {request.method} {request.path}")
        body = request.json()
        tools = {t["name"]: t for t in body.get("tools", [])}
        deferred = {n for n, t in tools.items() if t.get("defer_loading") is True}
        if not deferred or len(deferred) == len(tools):
            return _error("at least one tool must be deferred and one loaded (the search tool)")
        if any("input_schema" not in t or "description" not in t for t in tools.values()):
            return _error("each tool needs a name, a description and an input_schema")
        messages = body["messages"]
        if len(messages) == 1:
            (search_tool,) = [n for n in tools if n not in deferred]
            return Response.json({"id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
                                  "content": [{"type": "tool_use", "id": "toolu_1", "name": search_tool,
                                               "input": {"query": self.query}}]})
        results = [b for b in messages[-1]["content"] if b.get("type") == "tool_result"]
        if len(results) != 1 or results[0].get("tool_use_id") != "toolu_1":
            return _error("the last user message must hold the tool_result of toolu_1")
        refs = results[0].get("content")
        if not refs or any(set(r) != {"type", "tool_name"} or r["type"] != "tool_reference" for r in refs):
            return _error(f"a tool search result is a list of tool_reference blocks, not {refs!r}")
        unknown = [r["tool_name"] for r in refs if r["tool_name"] not in deferred]
        if unknown:
            return _error(f"tool_reference to tools that are not deferred tools of this request: {unknown}")
        chosen = refs[0]["tool_name"]
        return Response.json({"id": "msg_2", "type": "message", "role": "assistant", "stop_reason": "tool_use",
                              "content": [{"type": "tool_use", "id": "toolu_2", "name": chosen,
                                           "input": {"loaded": [r["tool_name"] for r in refs]}}]})


class OpenAIReplay:
    """POST /v1/responses: a client-executed `tool_search` first emits a `tool_search_call`; the next request must
    carry a `tool_search_output` with that `call_id` whose tools are deferred functions of the request."""

    def __init__(self, query: str) -> None:
        self.query = query

    async def __call__(self, request: Request) -> Response:
        if request.path != "/v1/responses" or request.method != "POST":
            return _error(f"no route {request.method} {request.path}")
        body = request.json()
        searches = [t for t in body.get("tools", []) if t.get("type") == "tool_search"]
        if len(searches) != 1 or searches[0].get("execution") != "client" or "parameters" not in searches[0]:
            return _error("one tool_search tool with execution 'client' and its parameters")
        functions = {t["name"]: t for t in body["tools"] if t.get("type") == "function"}
        deferred = {n for n, t in functions.items() if t.get("defer_loading") is True}
        items = body["input"] if isinstance(body["input"], list) else []
        outputs = [i for i in items if i.get("type") == "tool_search_output"]
        if not outputs:
            return Response.json({"id": "resp_1", "object": "response", "status": "completed", "output": [
                {"type": "tool_search_call", "id": "tsc_1", "call_id": "call_ts1", "execution": "client",
                 "status": "completed", "arguments": {"query": self.query}}]})
        (out,) = outputs
        if out.get("call_id") != "call_ts1" or out.get("execution") != "client":
            return _error("tool_search_output needs the call's call_id and execution 'client'")
        loaded = out.get("tools") or []
        def same(t: dict[str, Any]) -> bool:  # the request's definition of that function (deferral aside)
            request_def = {k: v for k, v in functions[t["name"]].items() if k != "defer_loading"}
            return {k: v for k, v in t.items() if k != "defer_loading"} == request_def

        if not loaded or any(t.get("type") != "function" or t.get("name") not in deferred or not same(t)
                             for t in loaded):
            return _error(f"tool_search_output.tools must be definitions of deferred functions: {loaded!r}")
        return Response.json({"id": "resp_2", "object": "response", "status": "completed", "output": [
            {"type": "function_call", "id": "fc_1", "call_id": "call_f1", "name": loaded[0]["name"],
             "arguments": json.dumps({"loaded": [t["name"] for t in loaded]}), "status": "completed"}]})


@pytest.mark.parametrize(("query", "expected"), [
    ("convert 26.2 miles to kilometers", "convert"),
    ("what is the weather like in Rome", "get_weather"),
    ("email the report to my boss", "send_email"),
])
def test_anthropic_loop_loads_the_tool_our_retriever_finds(search: RetrieverToolSearch, query: str,
                                                           expected: str) -> None:
    with FunctionServer(AnthropicReplay(query)) as server, httpx.Client(
            base_url=f"http://127.0.0.1:{server.port}", timeout=10) as http:
        messages: list[dict[str, Any]] = [{"role": "user", "content": query}]
        request = {"model": "claude-test", "max_tokens": 256, "tools": search.anthropic_tools()}
        first = http.post("/v1/messages", json={**request, "messages": messages})
        assert first.status_code == 200, first.text
        (tool_use,) = first.json()["content"]
        messages += [{"role": "assistant", "content": [tool_use]},
                     {"role": "user", "content": [search.anthropic_result(tool_use)]}]
        second = http.post("/v1/messages", json={**request, "messages": messages})
        assert second.status_code == 200, second.text
        (call,) = second.json()["content"]
    assert expected in call["name"], (call["name"], call["input"]["loaded"])
    assert len(call["input"]["loaded"]) == 3


@pytest.mark.parametrize(("query", "expected"), [
    ("convert 26.2 miles to kilometers", "convert"),
    ("what is the weather like in Rome", "get_weather"),
])
def test_openai_loop_loads_the_tool_our_retriever_finds(search: RetrieverToolSearch, query: str,
                                                        expected: str) -> None:
    import openai

    with FunctionServer(OpenAIReplay(query)) as server:
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{server.port}/v1", api_key="sk-loopback", max_retries=0)
        tools: Any = search.openai_tools()
        first = client.responses.create(model="gpt-test", input=query, tools=tools)
        call = first.output[0].model_dump()
        assert call["type"] == "tool_search_call"
        items: Any = [{"role": "user", "content": query}, call, search.openai_output(call)]
        second = client.responses.create(model="gpt-test", input=items, tools=tools)
        (function_call,) = second.output
    assert function_call.type == "function_call" and expected in function_call.name, function_call
    assert len(json.loads(function_call.arguments)["loaded"]) == 3


def test_the_replays_refuse_a_wrong_answer(search: RetrieverToolSearch) -> None:
    """The servers are no rubber stamp: a tool_result of text, or references to a tool that is not deferred, get
    the provider's 400."""
    with FunctionServer(AnthropicReplay("weather")) as server, httpx.Client(
            base_url=f"http://127.0.0.1:{server.port}", timeout=10) as http:
        request = {"model": "claude-test", "max_tokens": 256, "tools": search.anthropic_tools()}
        use = http.post("/v1/messages", json={**request, "messages": [{"role": "user", "content": "weather"}]})
        (tool_use,) = use.json()["content"]
        for content in ("get_weather", [{"type": "tool_reference", "tool_name": "search_tools"}]):
            messages = [{"role": "user", "content": "weather"}, {"role": "assistant", "content": [tool_use]},
                        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                      "content": content}]}]
            assert http.post("/v1/messages", json={**request, "messages": messages}).status_code == 400


def test_bad_calls_name_the_field(search: RetrieverToolSearch) -> None:
    with pytest.raises(ToolSearchError, match=r"tool_use.input.query"):
        search.anthropic_result({"type": "tool_use", "id": "t", "name": "search_tools", "input": {}})
    with pytest.raises(ToolSearchError, match="not a tool_use of 'search_tools'"):
        search.anthropic_result({"type": "tool_use", "id": "t", "name": "get_weather", "input": {"query": "x"}})
    with pytest.raises(ToolSearchError, match=r"tool_search_call.arguments: not a JSON object"):
        search.openai_output({"type": "tool_search_call", "call_id": "c", "arguments": "{oops"})
    with pytest.raises(ValueError, match="always_loaded names no tool"):
        RetrieverToolSearch([get_weather], always_loaded=["nope"])
    with pytest.raises(ValueError, match="already named 'get_weather'"):
        RetrieverToolSearch([get_weather], search_tool_name="get_weather")
