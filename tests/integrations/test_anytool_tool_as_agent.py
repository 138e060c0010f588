"""The offline stand-in as someone else's agent: `create_agent(stand-in, tools=[create_anytool_tool(...), *theirs])`.

The stand-in picks the tool that fits the request among those it is given (the user's `get_weather` for the
weather; AnyTool for what none of theirs fits), and what every model reads from the AnyTool tool is text — the
answer, or why there is none — with the run's record as the ToolMessage's artifact.
"""

from __future__ import annotations

import json

import pytest
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from langgraph_anytool import Catalog, create_anytool_tool
from langgraph_anytool.offline import OfflinePolicyModel


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return f"Sunny, 24 degrees Celsius in {city}."


@tool
def lookup_stock_price(symbol: str) -> str:
    """Look up the latest stock price of a ticker symbol."""
    return f"{symbol}: 187.50 USD"


def not_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


def run_agent(request: str) -> tuple[list[ToolMessage], str]:
    cat = Catalog.builtin()
    agent = create_agent(OfflinePolicyModel(catalog=cat),
                         tools=[create_anytool_tool(cat, "offline"), get_weather, lookup_stock_price])
    out = agent.invoke({"messages": [{"role": "user", "content": request}]})
    return [m for m in out["messages"] if isinstance(m, ToolMessage)], str(out["messages"][-1].content)


@pytest.mark.parametrize(("request_text", "tool_name", "shown"), [
    ("What is the weather in Rome?", "get_weather", "Rome"),
    ("Tell me the current weather in Oslo.", "get_weather", "Oslo"),
    ("What is the stock price of AAPL?", "lookup_stock_price", "187.50"),
])
def test_the_users_own_tool_that_fits_is_called_not_anytool(request_text: str, tool_name: str, shown: str) -> None:
    results, final = run_agent(request_text)
    assert [m.name for m in results] == [tool_name], [(m.name, m.content) for m in results]
    assert shown in final and not_json(final), final


@pytest.mark.parametrize("request_text", ["Convert 26.2 miles to kilometers.",
                                          "Is 2025-07-14 a public holiday in France?"])
def test_a_request_none_of_the_users_tools_fits_goes_to_anytool_and_reads_as_text(request_text: str) -> None:
    results, final = run_agent(request_text)
    assert [m.name for m in results] == ["anytool"]
    assert results[0].artifact["status"] == "solved" and results[0].artifact["sources"]
    assert not_json(str(results[0].content)) and not_json(final), final
    assert final.startswith(results[0].artifact["answer"])  # the text the tool gave: the answer, its sources


def test_the_tool_reads_as_text_and_carries_the_record_as_its_artifact() -> None:
    anytool = create_anytool_tool(Catalog.builtin(), "offline")
    msg = anytool.invoke({"type": "tool_call", "id": "c1", "name": "anytool",
                          "args": {"request": "Convert 26.2 miles to kilometers."}})
    record = msg.artifact
    assert record["status"] == "solved" and record["query"] == "Convert 26.2 miles to kilometers."
    assert record["total_tokens"] > 0 and record["api_pool"]
    assert str(msg.content).startswith(record["answer"]) and "Sources: " in str(msg.content)
    assert not_json(str(msg.content))
    # no answer: the text says why, not an empty JSON field
    none = anytool.invoke({"type": "tool_call", "id": "c2", "name": "anytool",
                           "args": {"request": "Xyzzy plugh frobnicate the quux."}})
    assert none.artifact["answer"] == "" and none.artifact["status"] != "solved"
    assert str(none.content).startswith(f"No answer ({none.artifact['status']}): ")
    assert none.artifact["reason"] and none.artifact["reason"] in str(none.content)
