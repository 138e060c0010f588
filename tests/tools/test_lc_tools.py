"""Function schemas and LangChain StructuredTools over the execution pipeline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.catalog.models import Api, Category, Param, Tool
from langgraph_anytool.tools.cache import ResponseCache
from langgraph_anytool.tools.executors import LocalExecutor
from langgraph_anytool.tools.lc import api_json_schema, api_tools
from langgraph_anytool.tools.pipeline import ApiExecutor

TOOLBENCH = Path(__file__).resolve().parents[2].parent / "shared" / "toolbench"

SEARCH = Api(
    id="Travel/flights/search",
    name="Search flights",
    tool_key="flights",
    tool_name="Flights",
    category="Travel",
    description="Find flights between two airports.   " + "Very long text. " * 120,
    params=(
        Param("origin", "string", "IATA code of the departure airport", required=True, default="JFK"),
        Param("date", "date", "Departure day", required=True),
        Param("adults", "integer", "Number of adults", default="1"),
        Param("cabin", "enum", "Cabin class", enum=("economy", "business")),
        Param("nonstop", "boolean", default="true"),
        Param("max_price", "number", default="not a number"),
        Param("airlines", "array", "Airline codes", default='["AA", "DL"]'),
        Param("at", "time", "Earliest departure time"),
    ),
)
PING = Api(id="Travel/flights/ping", name="Ping", tool_key="flights", tool_name="Flights", category="Travel")
CATALOG = Catalog([Category("Travel", tools=(Tool("flights", "Flights", "Travel", apis=(SEARCH, PING)),))])


def search(origin: str, date: str, adults: int = 1, **rest: Any) -> dict[str, Any]:
    return {"origin": origin, "date": date, "adults": adults, "rest": rest}


def make_pipeline() -> ApiExecutor:
    return ApiExecutor(CATALOG, default=LocalExecutor({SEARCH.id: search, PING.id: lambda: "pong"}),
                       cache=ResponseCache.memory(), max_observation_chars=4000)


def test_function_schema_from_parameters() -> None:
    schema = api_json_schema(CATALOG, SEARCH.id)
    assert schema["name"] == CATALOG.function_name(SEARCH.id)
    assert len(schema["description"]) <= 1024 and schema["description"].endswith("…")
    assert schema["description"].startswith("Search flights (tool: Flights). Find flights between two airports. Very")
    params = schema["parameters"]
    assert params["type"] == "object" and params["required"] == ["origin", "date"]
    props = params["properties"]
    assert list(props) == [p.name for p in SEARCH.params]
    assert props["origin"] == {"type": "string", "description": "IATA code of the departure airport Example: JFK"}
    assert props["date"] == {"type": "string", "format": "date", "description": "Departure day Format: YYYY-MM-DD."}
    assert props["adults"] == {"type": "integer", "default": 1, "description": "Number of adults"}
    assert props["cabin"] == {"type": "string", "enum": ["economy", "business"], "description": "Cabin class"}
    assert props["nonstop"] == {"type": "boolean", "default": True}
    assert props["max_price"] == {"type": "number"}  # an unusable documented default is dropped
    assert props["airlines"] == {"type": "array", "items": {"type": "string"}, "default": ["AA", "DL"],
                                 "description": "Airline codes"}
    assert props["at"]["type"] == "string" and "HH:MM" in props["at"]["description"]
    assert api_json_schema(CATALOG, PING.id)["parameters"] == {"type": "object", "properties": {}, "required": []}


def test_structured_tool_schema_round_trip() -> None:
    tools = api_tools(CATALOG, make_pipeline())
    assert [t.name for t in tools] == [CATALOG.function_name(SEARCH.id), CATALOG.function_name(PING.id)]
    for tool, api in zip(tools, (SEARCH, PING), strict=True):
        schema = api_json_schema(CATALOG, api.id)
        assert tool.description == schema["description"]
        assert tool.args == schema["parameters"]["properties"]
        assert tool.metadata == {"api_id": api.id}
        assert convert_to_openai_tool(tool) == {"type": "function", "function": schema}
    assert [t.name for t in api_tools(CATALOG, make_pipeline(), [PING.id])] == [CATALOG.function_name(PING.id)]


def test_invocation_through_a_tool_call() -> None:
    pipe = make_pipeline()
    tool = api_tools(CATALOG, pipe, [SEARCH.id])[0]
    call = {"name": tool.name, "args": {"origin": "CDG", "date": "2024-05-01", "adults": "2"}, "id": "call_1",
            "type": "tool_call"}
    msg = tool.invoke(call)
    assert isinstance(msg, ToolMessage) and msg.tool_call_id == "call_1"
    body = json.loads(msg.content if isinstance(msg.content, str) else "")
    assert body == {"status": "ok", "response": {"origin": "CDG", "date": "2024-05-01", "adults": 2, "rest": {}}}
    again = json.loads(str(tool.invoke({**call, "id": "call_2"}).content))
    assert again["cached"] is True and again["response"] == body["response"]
    bad = json.loads(str(tool.invoke({**call, "args": {"origin": "CDG", "date": "May 1st"}, "id": "c3"}).content))
    assert bad["status"] == "invalid_arguments" and "expected a date YYYY-MM-DD" in bad["error"]
    assert pipe.stats["executed"] == 1


async def test_async_invocation_via_tool_node() -> None:
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    pipe = make_pipeline()
    tools = api_tools(CATALOG, pipe)
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "tools")
    node = builder.compile()
    ai = AIMessage("", tool_calls=[
        {"name": tools[1].name, "args": {}, "id": "a", "type": "tool_call"},
        {"name": tools[0].name, "args": {"origin": "LHR", "date": "2024-01-02", "cabin": "Business"}, "id": "b",
         "type": "tool_call"},
    ])
    out = await node.ainvoke({"messages": [ai]})
    by_id = {m.tool_call_id: json.loads(str(m.content)) for m in out["messages"] if isinstance(m, ToolMessage)}
    assert by_id["a"] == {"status": "ok", "response": "pong"}
    assert by_id["b"]["response"]["rest"] == {"cabin": "business"}  # coerced to the documented spelling
    pipe.close()


@pytest.mark.toolbench
def test_every_toolbench_schema_is_well_formed() -> None:
    if not (TOOLBENCH / "tools").is_dir():
        pytest.skip("../shared/toolbench is not available")
    cat = Catalog.from_toolbench(TOOLBENCH / "tools")
    names = set()
    for api in cat:
        schema = api_json_schema(cat, api.id)
        json.dumps(schema, allow_nan=False)
        names.add(schema["name"])
        assert 0 < len(schema["description"]) <= 1024
        params = schema["parameters"]
        assert set(params["required"]) <= set(params["properties"])
        for prop in params["properties"].values():
            assert prop.get("type") in ("string", "number", "integer", "boolean", "array", "object", None)
            if prop.get("type") == "array":
                assert "items" in prop
            if "enum" in prop:
                assert prop["enum"]
    assert len(names) == len(cat)
