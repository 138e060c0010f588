"""The retriever switches of the paper's ablations and baselines: each changes what a run does."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langgraph_anytool import AnyToolConfig, create_anytool_graph
from langgraph_anytool.config import ConfigError
from tests.fakes import ScriptedChatModel, ai, call
from tests.graph_world import make_world, turns


def _solver_and_judge(catalog: Any, function: str, args: dict[str, Any], answer: str) -> Any:
    def respond(messages: list[BaseMessage], tools: list[str], meta: Any) -> AIMessage:
        if meta["role"] == "solver":
            if function not in tools:
                return ai("", call("Finish", return_type="give_up", reason=f"{function} is not available"))
            if not any(isinstance(m, ToolMessage) for m in messages):
                return ai("", call(function, **args))
            return ai("", call("Finish", return_type="give_answer", final_answer=answer))
        if meta["role"] == "judge":
            return ai('{"label": "Solved", "reason": "answered"}')
        raise AssertionError(f"unexpected role {meta['role']}")

    return respond


def test_flat_retriever_is_one_agent_without_hierarchy() -> None:
    catalog, executor = make_world()
    weather = catalog.function_name(catalog.find_api("Weather Now", "Current").id)
    solve = _solver_and_judge(catalog, weather, {"city": "Oslo"}, "Cold in Oslo; AAPL at 187.5.")

    def respond(messages: list[BaseMessage], tools: list[str], meta: Any) -> AIMessage:
        if meta["role"] == "flat":
            n = turns(messages)
            if n == 0:
                return ai("", call("get_apis_in_tool", category_name="Weather", tool_name="Weather Now"))
            if n == 1:
                return ai("", call("add_apis_into_api_pool", apis=[
                    {"category_name": "Weather", "tool_name": "Weather Now", "api_name": "Current"},
                    {"category_name": "Finance", "tool_name": "Backup Quotes", "api_name": "Quote"},
                    {"category_name": "Finance", "tool_name": "Nope", "api_name": "Quote"}]))
            return ai("", call("finish_search"))
        return solve(messages, tools, meta)

    model = ScriptedChatModel(responder=respond)
    out = create_anytool_graph(catalog, model, executor=executor,
                               config=AnyToolConfig(retriever="flat", seed_with_search=False)).invoke(
        {"query": "Weather in Oslo and the AAPL price?"})
    assert out["status"] == "solved" and set(out["agents"]) == {"flat"}  # no category or tool agents
    assert {e["api"] for e in out["api_pool"]} == {"Current", "Quote"}
    flat_tools = model.calls[0]["tools"]
    assert {"get_tools_in_category", "get_apis_in_tool", "add_apis_into_api_pool", "finish_search"} <= set(flat_tools)
    added = str([m for m in out["agents"]["flat"]["messages"] if isinstance(m, ToolMessage)][1].content)
    assert "no tool named 'Nope'" in added


def test_search_retriever_fills_the_pool_without_agents() -> None:
    catalog, executor = make_world()
    weather = catalog.function_name(catalog.find_api("Weather Now", "Current").id)
    model = ScriptedChatModel(responder=_solver_and_judge(catalog, weather, {"city": "Oslo"}, "Cold."))
    out = create_anytool_graph(catalog, model, executor=executor,
                               config=AnyToolConfig(retriever="search", search_k=2)).invoke(
        {"query": "current weather in Oslo"})
    assert out["agents"] == {} and 1 <= len(out["api_pool"]) <= 2  # at most search_k hits
    assert all(e["added_by"] == "search" for e in out["api_pool"]) and weather in tools_of(model)
    assert model.calls[0]["role"] == "solver"  # no retriever model call at all


def tools_of(model: ScriptedChatModel) -> list[str]:
    return model.calls[0]["tools"]


def test_reference_retriever_solves_with_the_given_apis() -> None:
    catalog, executor = make_world()
    api = catalog.find_api("Backup Quotes", "Quote")
    fn = catalog.function_name(api.id)
    model = ScriptedChatModel(responder=_solver_and_judge(catalog, fn, {"symbol": "AAPL"}, "AAPL: 187.5"))
    graph = create_anytool_graph(catalog, model, executor=executor, config=AnyToolConfig(retriever="reference"))
    out = graph.invoke({"query": "AAPL price?", "api_ids": [api.id]})
    assert out["status"] == "solved" and [e["api_id"] for e in out["api_pool"]] == [api.id]
    assert tools_of(model) == [fn, "Finish"]
    with pytest.raises(ConfigError, match="api_ids"):
        graph.invoke({"query": "AAPL price?"})
    with pytest.raises(ConfigError, match="not in the catalog"):
        graph.invoke({"query": "AAPL price?", "api_ids": ["No/such/api"]})
    # the same graph, hierarchical for one run, reference for another: the switch is per run
    other = create_anytool_graph(catalog, model, executor=executor)
    out = other.invoke({"query": "AAPL price?", "api_ids": [api.id]}, context={"retriever": "reference"})
    assert out["status"] == "solved"
