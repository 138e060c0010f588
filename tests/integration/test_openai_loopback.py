"""The real `ChatOpenAI` client drives a whole AnyTool run against a loopback OpenAI-compatible server."""

from __future__ import annotations

import json
from typing import Any

from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_anytool import AnyToolConfig, create_anytool_graph
from tests.graph_world import make_world
from tests.servers import ChatReply, OpenAIChatServer, tool_call

SECRET = "sk-loopback-secret-4242"


def responder(weather_fn: str) -> Any:
    """Answers each chat request by the role its `tools` reveal (parallel agents arrive in any order)."""

    def reply(body: dict[str, Any]) -> str | ChatReply:
        tools = [t["function"]["name"] for t in body.get("tools") or []]
        msgs = body["messages"]
        turns = sum(m["role"] == "assistant" for m in msgs)
        if "create_agent_category_level" in tools:
            return tool_call("create_agent_category_level", category_name="Weather") if turns == 0 \
                else tool_call("finish_search")
        if "add_apis_into_api_pool" in tools:
            return tool_call("add_apis_into_api_pool", apis=[{"tool_name": "Weather Now", "api_name": "Current"}]) \
                if turns == 0 else tool_call("finish_search")
        if "Finish" in tools:
            if not any(m["role"] == "tool" and '"status":"ok"' in str(m.get("content")) for m in msgs):
                return tool_call(weather_fn, city="Paris")
            return tool_call("Finish", return_type="give_answer", final_answer="It is 21°C in Paris.")
        return ChatReply(content=json.dumps({"label": "Solved", "reason": "gives the temperature"}), usage=(50, 12))

    return reply


def test_chatopenai_over_http_with_tool_calls_and_a_retried_429() -> None:
    catalog, executor = make_world()
    weather_fn = catalog.function_name(catalog.find_api("Weather Now", "Current").id)
    with OpenAIChatServer([responder(weather_fn)] * 20) as server:
        server.fail_chat(429, 1, retry_after="0.05")
        model = ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key=SECRET, max_retries=3, timeout=10)
        graph = create_anytool_graph(catalog, model, config=AnyToolConfig(seed_with_search=False),
                                     executor=executor, checkpointer=InMemorySaver())
        config: Any = {"configurable": {"thread_id": "http"}}
        out = graph.invoke({"query": "What's the temperature in Paris?"}, config)
        requests = server.chat_requests
        answered = 20 - server.remaining  # scripted replies consumed (the 429 consumed none)

    assert out["status"] == "solved" and out["answer"] == "It is 21°C in Paris."
    assert len(requests) == answered + 1  # exactly one request got the 429, and the client retried it
    assert answered >= 6
    solver_req = next(r for r in requests if any(t["function"]["name"] == "Finish" for t in r.get("tools") or []))
    names = {t["function"]["name"] for t in solver_req["tools"]}
    assert names == {weather_fn, "Finish"}
    params = next(t for t in solver_req["tools"] if t["function"]["name"] == weather_fn)["function"]["parameters"]
    assert params["required"] == ["city"]
    # real usage metadata from the HTTP responses, not estimates
    assert out["usage"]["judge"]["input_tokens"] == 50 and "estimated_tokens" not in out["usage"]["judge"]
    # the API key never reaches checkpointed state
    snapshot = graph.get_state(config)
    assert SECRET not in json.dumps(snapshot.values, default=str)
    history = list(graph.get_state_history(config))
    assert all(SECRET not in json.dumps(s.values, default=str) for s in history)
