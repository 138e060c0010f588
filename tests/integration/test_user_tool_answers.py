"""A tool of the user's own answers, and the run says solved (issue 19, point 6): `lookup_capital` returned
"Paris." with status ok and the run still ended `unsolved: No API call succeeded`.

Two causes: the offline solver's answer ("lookup_capital: Paris.") did not say what it was about, so the offline
judge found it did not address "...of France?"; and after that reflection the solver resumed from the previous
attempt's chain (AnyTool §4.3) and answered from the carried-over observation, which the judge and the answer's
sources did not count (they read only the new attempt's own calls). Plus: inside a tool call LangChain's generic
recursion limit (25 supersteps) cut a run with a few reflections short (GraphRecursionError)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import tool

from langgraph_anytool import Catalog, create_anytool_graph, create_anytool_tool
from langgraph_anytool.models.testing import ScriptedChatModel, ai
from langgraph_anytool.nodes.judge import observed_calls, process_text


@tool
async def fetch_population(city: str) -> dict[str, Any]:
    """The population of a city."""
    return {"city": city, "population": 2_100_000}


def lookup_capital(country: str) -> str:
    """The capital city of a country."""
    return {"France": "Paris."}.get(country, "unknown")


def _user_catalog() -> Catalog:
    return Catalog.from_langchain_tools([fetch_population, lookup_capital], category="Geo")


@pytest.mark.parametrize("merged", [False, True])
@pytest.mark.parametrize("query", ["What is the capital of France?", "What is the capital city of France?"])
def test_a_user_tool_that_answers_solves_the_run(merged: bool, query: str) -> None:
    catalog = Catalog.merge(_user_catalog(), Catalog.builtin()) if merged else _user_catalog()
    result = create_anytool_tool(catalog, "offline").invoke(
        {"type": "tool_call", "id": "c1", "name": "anytool", "args": {"request": query}}).artifact
    assert result["status"] == "solved", result
    assert "Paris" in result["answer"] and "France" in result["answer"]
    assert [(s["api"], s["status"]) for s in result["sources"]] == [("lookup_capital", "ok")]
    out = create_anytool_graph(catalog, "offline").invoke({"query": query})
    assert out["status"] == "solved", out.get("reason")


def _attempt(n: int, tree: list[dict[str, Any]]) -> dict[str, Any]:
    return {"attempt": n, "mode": "dfsdt", "finish_type": "give_answer", "answer": "Paris.", "reason": "",
            "failed_functions": [], "tree": tree}


def test_the_judge_counts_calls_carried_over_from_the_previous_attempt() -> None:
    call = {"tool_call_id": "c1", "function": "lookup_capital_for_t", "api_id": "Geo/t/lookup_capital",
            "arguments": {"country": "France"}, "status": "ok", "cached": False}
    ai_msg = {"role": "assistant", "content": "", "tool_calls": [{"name": "lookup_capital_for_t",
                                                                 "args": {"country": "France"}, "id": "c1"}]}
    tool_msg = {"role": "tool", "content": '{"status": "ok", "response": "Paris."}', "tool_call_id": "c1"}
    first = _attempt(1, [{"id": 0, "parent": None, "status": "open", "messages": [], "calls": []},
                         {"id": 1, "parent": 0, "status": "open", "messages": [ai_msg, tool_msg], "calls": [call]}])
    # the second solve starts from that chain: its root holds the call and its output, its own calls are only Finish
    finish = {"tool_call_id": "f2", "function": "Finish", "api_id": "", "arguments": {}, "status": "finish:give_answer"}
    second = _attempt(2, [{"id": 0, "parent": None, "status": "open", "messages": [ai_msg, tool_msg], "calls": []},
                          {"id": 1, "parent": 0, "status": "answer", "messages": [], "calls": [finish]}])
    assert observed_calls(second) == []  # alone, the attempt shows no call (what the judge saw before the fix)
    assert process_text(second) == "(no API was called)"
    assert observed_calls(second, [first]) == [{"function": "lookup_capital_for_t", "status": "ok"}]
    text = process_text(second, earlier=[first])
    assert "lookup_capital_for_t → ok" in text and "Paris." in text and '"country": "France"' in text


def test_a_run_with_many_reflections_fits_in_a_tool_call() -> None:
    """A judge that is never convinced: the run reflects until its own budgets end it (over 25 supersteps)."""
    judge = ScriptedChatModel(responder=lambda messages, tools: ai('{"label": "Unsolved", "reason": "not convinced"}'))
    anytool = create_anytool_tool(Catalog.builtin(), "offline", models={"judge": judge})
    result = anytool.invoke({"type": "tool_call", "id": "c1", "name": "anytool",
                             "args": {"request": "Convert 26.2 miles to kilometers."}}).artifact
    assert result["status"] == "unsolved" and result["reason"] == "not convinced"
    assert len(judge.calls) >= 2  # a second attempt was judged
    # the last attempt answered from the calls it carried over: they are its sources
    assert [(s["api"], s["status"]) for s in result["sources"]] == [("Convert Units", "ok")]
