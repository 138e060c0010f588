"""LangChain parts: `AnyToolRetriever` (sync/async Documents) and `AnyToolSelectorMiddleware` in `create_agent`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from langgraph_anytool import AnyToolRetriever, AnyToolSelectorMiddleware, Catalog, api_tools
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.fakes import ScriptedChatModel, ai, call

BUILTIN = Catalog.builtin()


def test_retriever_documents_sync_and_async() -> None:
    retriever = AnyToolRetriever(catalog=BUILTIN, k=4)
    docs = retriever.invoke("What is the distance between Paris and Berlin?")
    assert len(docs) == 4
    top = docs[0].metadata
    assert top["api_id"] == "Geography/geo_distance_calculator/distance_between_cities"
    assert top["function_name"] == BUILTIN.function_name(top["api_id"]) and top["category"] == "Geography"
    assert top["tool"] == BUILTIN.api(top["api_id"]).tool_name and top["api"] == BUILTIN.api(top["api_id"]).name
    assert [p["name"] for p in top["parameters"] if p["required"]] == ["city_a", "city_b"]
    assert [d.metadata["rank"] for d in docs] == [1, 2, 3, 4]
    rel = [d.metadata["relevance"] for d in docs]
    assert all(0 < r <= 1 for r in rel) and rel == sorted(rel, reverse=True)
    assert "city_a" in docs[0].page_content and docs[0].id == top["api_id"]
    adocs = asyncio.run(retriever.ainvoke("What is the distance between Paris and Berlin?"))
    assert [d.metadata["api_id"] for d in adocs] == [d.metadata["api_id"] for d in docs]
    # a blank query: the same ValueError as Catalog.search (issue 29 §10: one behaviour)
    for search in (AnyToolRetriever(catalog=BUILTIN).invoke, BUILTIN.search):
        with pytest.raises(ValueError, match="empty query '   ': a search needs some text"):
            search("   ")
    strict = AnyToolRetriever(catalog=BUILTIN, k=10, min_relevance=0.99)
    assert all(d.metadata["relevance"] >= 0.99 for d in strict.invoke("distance between cities"))


def _agent_model(target: str, args: dict[str, Any]) -> ScriptedChatModel:
    """Calls `target` when it is among the tools it was given, then answers with the observation."""

    def respond(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if results:
            return ai(f"Result: {results[-1].content}")
        if target not in tools:
            return ai("I do not have a suitable tool.")
        return ai("", call(target, **args))

    return ScriptedChatModel(responder=respond)


@pytest.mark.parametrize(("query", "target", "args", "with_catalog"), [
    ("What is the distance between Paris and Berlin in km?", "distance_between_cities_for_geo_distance_calculator",
     {"city_a": "Paris", "city_b": "Berlin"}, False),
    ("Which currencies does Japan use today (2024-05-01)?", "currencies_of_country_for_currency_reference",
     {"country": "Japan", "date": "2024-05-01"}, True),
])
def test_selector_middleware_narrows_all_builtin_tools(query: str, target: str, args: dict[str, Any],
                                                        with_catalog: bool) -> None:
    executor = ApiExecutor.for_catalog(BUILTIN, kind="auto")
    tools = api_tools(BUILTIN, executor)
    # one tool per builtin API: 194, or 191 where bubblewrap is missing and the three code-running APIs are not offered
    assert len(tools) == len(BUILTIN) >= 191
    model = _agent_model(target, args)
    selector = AnyToolSelectorMiddleware(max_tools=5, catalog=BUILTIN if with_catalog else None)
    agent = create_agent(model, tools=tools, middleware=[selector])
    try:
        out = agent.invoke({"messages": [HumanMessage(query)]})
    finally:
        executor.close()
    assert len(model.calls) == 2
    for c in model.calls:
        assert len(c["tools"]) <= 5 and target in c["tools"], c["tools"]
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert json.loads(str(result.content))["status"] == "ok"  # the selected tool really ran
    assert out["messages"][-1].content.startswith("Result:")
    assert executor.stats["calls"] == 1


def test_selector_always_include_keeps_called_tools_and_async() -> None:
    @tool
    def ask_human(question: str) -> str:
        """Ask the user a question."""
        return "yes"

    executor = ApiExecutor.for_catalog(BUILTIN, kind="auto")
    tools = [*api_tools(BUILTIN, executor), ask_human]
    target = "is_public_holiday_for_public_holidays"
    api = BUILTIN.api_for_function(target)
    args = {p.name: {"country": "DE", "date": "2024-12-25"}.get(p.name, "DE") for p in api.required_params}
    model = _agent_model(target, args)
    selector = AnyToolSelectorMiddleware(max_tools=3, always_include=["ask_human"], catalog=BUILTIN)
    agent = create_agent(model, tools=tools, middleware=[selector])
    try:
        out = asyncio.run(agent.ainvoke({"messages": [HumanMessage("Is Christmas 2024 a public holiday in Germany?")]}))
    finally:
        executor.close()
    for c in model.calls:
        assert "ask_human" in c["tools"] and target in c["tools"] and len(c["tools"]) <= 4
    assert out["messages"][-1].content.startswith("Result:")
    assert len(selector.selections) == 2

    # a tool the model called stays selected on the next call, whatever the search says
    picked = selector.select(tools[:-1], [HumanMessage("distance between Paris and Berlin"),
                                          ai("", call("convert_length_for_quick_metric_converter", value=1))])
    assert picked[0] == "convert_length_for_quick_metric_converter" and len(picked) == 3
    assert "distance_between_cities_for_geo_distance_calculator" in picked

    with pytest.raises(ValueError, match="always_include"):
        create_agent(model, tools=tools[:10], middleware=[AnyToolSelectorMiddleware(always_include=["nope"])]).invoke(
            {"messages": [HumanMessage("hi")]})
