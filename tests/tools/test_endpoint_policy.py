"""The endpoint policy (a deterministic "model" of the request body) drives a real AnyTool run through the real
`ChatOpenAI` client against the loopback OpenAI-compatible server, and answers the same body the same way."""

from __future__ import annotations

import copy
import json
from typing import Any

from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import SecretStr

from langgraph_anytool import AnyToolConfig, create_anytool_graph
from tests.endpoint_policy import EndpointPolicy, canonical, query_of, role_of
from tests.graph_world import make_world
from tests.servers import ChatReply, OpenAIChatServer

QUERY = "What is the current weather in 'Paris' right now?"


def run_world(policy: EndpointPolicy) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    catalog, executor = make_world()
    with OpenAIChatServer(policy=policy) as server:
        model = ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key=SecretStr("sk-test"), max_retries=0, timeout=10)
        graph = create_anytool_graph(catalog, model, config=AnyToolConfig(seed_with_search=False),
                                     executor=executor, checkpointer=InMemorySaver())
        out = graph.invoke({"query": QUERY}, {"configurable": {"thread_id": "policy"}})
        return out, server.chat_requests


def test_policy_solves_a_query_through_chatopenai() -> None:
    out, requests = run_world(EndpointPolicy())
    assert out["status"] == "solved", out.get("reason")
    assert "Paris" in out["answer"] and "21" in out["answer"]
    roles = [role_of(r) for r in requests]
    judged = [r for r in requests if role_of(r) == "judge"]
    assert "from its whole working" in judged[-1]["messages"][0]["content"]  # the answer alone was "Unsure"
    assert json.loads(EndpointPolicy()(judged[-1]).content)["label"] == "Solved"
    assert {"meta", "tool", "solvable", "solver", "judge"} <= set(roles)
    assert "other" not in roles
    assert all(query_of(r) == QUERY for r in requests)  # every role's request names the query
    # the solver called the weather API with the city from the query, then finished
    calls = [c["tool_calls"] for r in requests if role_of(r) == "solver"
             for c in r["messages"] if c.get("tool_calls")]
    fn = calls[0][0]["function"]
    assert fn["name"].startswith("current_for_weather") and json.loads(fn["arguments"]) == {"city": "Paris"}


def test_policy_is_a_pure_function_of_the_body() -> None:
    _, requests = run_world(EndpointPolicy())
    policy = EndpointPolicy()
    for body in requests:
        again = policy(copy.deepcopy(body))
        assert again == policy(body)
        renumbered = copy.deepcopy(body)  # servers number tool calls: the ids must not matter
        for m in renumbered["messages"]:
            for c in m.get("tool_calls") or []:
                c["id"] = "x" + c["id"]
            if m.get("role") == "tool":
                m["tool_call_id"] = "x" + m["tool_call_id"]
        assert canonical(renumbered) == canonical(body)
        assert policy(renumbered) == again  # usage included: counted without the ids


def test_policy_ends_and_gives_up_when_every_call_fails() -> None:
    body: dict[str, Any] = {"messages": [{"role": "system", "content": "You solve a task by calling functions"},
                         {"role": "user", "content": f"{QUERY}\nBegin!"}],
            "tools": [{"type": "function", "function": {"name": "current_for_weather_now", "description": "weather",
                                                        "parameters": {"type": "object", "properties": {}}}},
                      {"type": "function", "function": {"name": "Finish", "parameters": {}}}]}
    policy = EndpointPolicy()
    for i in range(10):
        reply = policy(body)
        assert isinstance(reply, ChatReply) and len(reply.tool_calls) == 1
        name, args = reply.tool_calls[0]
        if name == "Finish":
            break
        body["messages"] += [{"role": "assistant", "content": reply.content, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": '{"status":"server_error","error":"down"}'}]
    assert name == "Finish" and args["return_type"] == "give_up"
    assert args["failed_functions"] == ["current_for_weather_now"]


def test_content_faults_are_seeded_and_once_per_conversation() -> None:
    _, requests = run_world(EndpointPolicy())
    faulty = EndpointPolicy(seed=3, content_fault_rate=1.0)
    clean = EndpointPolicy(seed=3)
    convos: dict[str, list[str | None]] = {}
    for body in requests:
        kind = faulty.content_fault(body)
        assert kind == faulty.content_fault(copy.deepcopy(body))
        convos.setdefault(json.dumps(body["messages"][:2]), []).append(kind)
        if kind is None:
            assert faulty(body) == clean(body)
        elif kind == "bad_json":
            reply = faulty(body)
            assert isinstance(reply, ChatReply) and reply.raw_tool_calls and not reply.tool_calls
            with_error = reply.raw_tool_calls[0][1]
            try:
                json.loads(with_error)
                raise AssertionError("arguments should not parse")
            except ValueError:
                pass
    assert all(sum(k is not None for k in kinds) <= 1 for kinds in convos.values())
    assert any(k is not None for kinds in convos.values() for k in kinds)
    assert EndpointPolicy(seed=3, content_fault_rate=0.0).content_fault(requests[0]) is None
