"""Catalogs of the user's own tools: LangChain tools (sync, async, @tool, StructuredTool, plain functions) and MCP
servers run by default, through validation and cache; `Catalog.merge` keeps each API's executor; the AnyTool graph
runs over such a catalog and every tool really runs."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import StructuredTool, tool

from langgraph_anytool import AnyToolConfig, Catalog, create_anytool_graph
from langgraph_anytool.catalog.errors import CatalogError
from langgraph_anytool.tools.executors import make_executor
from langgraph_anytool.tools.observation import Status
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.fakes import ScriptedChatModel, ai, call
from tests.graph_world import World, observations, solved_judge, turns

SERVER = (Path(__file__).parents[1] / "mcp_notes_server.py")


class Calls:
    """Records which of the user's tools ran, with what."""

    def __init__(self) -> None:
        self.log: list[tuple[str, dict[str, Any]]] = []

    def tools(self) -> list[Any]:
        log = self.log

        @tool
        def convert_km_to_miles(km: float) -> float:
            """Convert a distance in kilometres to miles."""
            log.append(("convert_km_to_miles", {"km": km}))
            return round(km * 0.621371, 3)

        def lookup_capital(country: str) -> str:
            log.append(("lookup_capital", {"country": country}))
            return {"France": "Paris", "Japan": "Tokyo"}.get(country, "unknown")

        capital = StructuredTool.from_function(lookup_capital, name="lookup_capital",
                                               description="The capital city of a country.")

        @tool
        async def fetch_population(city: str) -> dict[str, Any]:
            """The population of a city (async only)."""
            await asyncio.sleep(0)
            log.append(("fetch_population", {"city": city}))
            return {"city": city, "population": 2_100_000 if city == "Paris" else 0}

        return [convert_km_to_miles, capital, fetch_population]


def mcp_connection(log: Path) -> dict[str, Any]:
    return {"notes": {"transport": "stdio", "command": sys.executable, "args": [str(SERVER)],
                      "env": {"NOTES_LOG": str(log)}}}


def mcp_log(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_langchain_tools_run_by_default_sync_and_async() -> None:
    calls = Calls()
    cat = Catalog.from_langchain_tools(calls.tools())
    ids = {a.name: a.id for a in cat}
    ex = ApiExecutor.for_catalog(cat, kind="auto", cache_path=":memory:")
    try:
        obs = ex.call(ids["fetch_population"], {"city": "Paris"})  # async-only tool from the blocking path
        assert obs.ok and obs.content == {"city": "Paris", "population": 2100000}
        assert ex.call(ids["convert_km_to_miles"], {"km": "10"}).content == 6.214  # coerced by our validation
        again = ex.call(ids["convert_km_to_miles"], {"km": 10})
        assert again.cached and again.content == 6.214
        bad = ex.call(ids["lookup_capital"], {})
        assert bad.status is Status.INVALID_ARGUMENTS and "country" in bad.error

        async def both() -> list[Any]:
            return [await ex.acall(ids["lookup_capital"], {"country": "Japan"}),
                    await ex.acall(ids["fetch_population"], {"city": "Lyon"})]

        japan, lyon = asyncio.run(both())
        assert japan.content == "Tokyo" and lyon.content["population"] == 0
    finally:
        ex.close()
    # the cached call did not run the tool a second time
    assert calls.log == [("fetch_population", {"city": "Paris"}), ("convert_km_to_miles", {"km": 10.0}),
                         ("lookup_capital", {"country": "Japan"}), ("fetch_population", {"city": "Lyon"})]


def test_plain_functions_are_accepted_and_explicit_kinds_win() -> None:
    def double(x: int) -> int:
        """Double a number."""
        return 2 * x

    cat = Catalog.from_langchain_tools([double])
    (api,) = list(cat)
    auto = ApiExecutor.for_catalog(cat, kind="auto")
    template = ApiExecutor.for_catalog(cat, kind="template")
    try:
        assert auto.call(api.id, {"x": 21}).content == 42
        simulated = template.call(api.id, {"x": 21})
        assert simulated.simulated  # an explicit kind simulates even bound tools
    finally:
        auto.close()
        template.close()
    with pytest.raises(CatalogError, match=r"tools\[0\]"):
        Catalog.from_langchain_tools([42])  # type: ignore[list-item]


def test_merge_keeps_each_apis_executor() -> None:
    calls = Calls()
    merged = Catalog.merge(Catalog.from_langchain_tools(calls.tools(), category="Mine"), Catalog.builtin())
    assert merged.unbound_apis() == []
    ex = ApiExecutor.for_catalog(merged, kind="auto")
    try:
        mine = merged.find_api("langchain_tools", "lookup_capital", category="Mine")
        assert ex.call(mine.id, {"country": "France"}).content == "Paris"
        builtin = merged.find_api("Universal Unit Converter", "Convert Units")
        obs = ex.call(builtin.id, {"value": 1, "from_unit": "km", "to_unit": "m"})
        assert obs.ok and not obs.simulated, obs
    finally:
        ex.close()
    with pytest.raises(CatalogError, match="two merged catalogs"):
        Catalog.merge(Catalog.builtin(), Catalog.builtin())
    with pytest.raises(CatalogError, match="no API id"):
        Catalog([merged.category("Mine")], executors={"Nope/x": make_executor("template")})


def test_mcp_catalog_calls_go_through_validation_and_cache(tmp_path: Path) -> None:
    log = tmp_path / "notes.log"
    cat = Catalog.from_mcp(mcp_connection(log))
    assert [a.id for a in cat] == ["MCP/notes/save_note", "MCP/notes/count_words", "MCP/notes/fail_always"]
    assert [p.name for p in cat.api("MCP/notes/save_note").required_params] == ["title", "body"]
    ex = ApiExecutor.for_catalog(cat, kind="auto", cache_path=":memory:")
    try:
        assert ex.call("MCP/notes/count_words", {"text": "one two three"}).content == "3"
        assert ex.call("MCP/notes/count_words", {"text": "one two three"}).cached
        invalid = ex.call("MCP/notes/save_note", {"title": "t"})
        assert invalid.status is Status.INVALID_ARGUMENTS and "body" in invalid.error
        failed = ex.call("MCP/notes/fail_always", {"reason": "no"})
        assert failed.status is Status.ERROR and "refused: no" in failed.error
    finally:
        ex.close()
    assert mcp_log(log) == [{"tool": "count_words", "text": "one two three"}]  # once: the second was cached
    with pytest.raises(CatalogError, match="transport"):
        Catalog.from_mcp({"notes": {"command": "x"}})


def _tool_agent(apis: list[str], tool_name: str) -> Any:
    def handler(messages: list[BaseMessage]) -> AIMessage:
        if turns(messages) == 0:
            return ai("", call("add_apis_into_api_pool",
                               apis=[{"tool_name": tool_name, "api_name": a} for a in apis]))
        return ai("", call("finish_search"))
    return handler


def test_anytool_graph_runs_langchain_and_mcp_tools(tmp_path: Path) -> None:
    log = tmp_path / "notes.log"
    calls = Calls()
    catalog = Catalog.merge(Catalog.from_langchain_tools(calls.tools(), category="Geo"),
                            Catalog.from_mcp(mcp_connection(log)))
    fn = {a.name: catalog.function_name(a.id) for a in catalog}
    plan = [(fn["lookup_capital"], {"country": "France"}), (fn["fetch_population"], {"city": "Paris"}),
            (fn["convert_km_to_miles"], {"km": 12}), (fn["save_note"], {"title": "Paris", "body": "2.1M people"})]

    def solver(messages: list[BaseMessage]) -> AIMessage:
        seen = observations(messages)
        if len(seen) < len(plan):
            name, args = plan[len(seen)]
            return ai("", call(name, **args))
        assert all(o["status"] == "ok" for o in seen), seen
        return ai("", call("Finish", return_type="give_answer", final_answer="Paris has 2.1M people; note saved."))

    world = World({
        "meta": lambda m: [ai("", call("create_agent_category_level", category_name="Geo")),
                           ai("", call("create_agent_category_level", category_name="MCP")),
                           ai("", call("finish_search"))][min(turns(m), 2)],
        "tool:langchain_tools": _tool_agent(["lookup_capital", "fetch_population", "convert_km_to_miles"],
                                            "langchain_tools"),
        "tool:notes": _tool_agent(["save_note"], "notes"),
        "solver": solver,
        "judge": solved_judge,
    })
    graph = create_anytool_graph(catalog, model=ScriptedChatModel(responder=world),
                                 config=AnyToolConfig(seed_with_search=False))
    out = graph.invoke({"query": "Find the capital of France, its population, 12 km in miles, and save a note."})

    assert out["status"] == "solved", out.get("reason")
    assert sorted(e["function_name"] for e in out["api_pool"]) == sorted(name for name, _ in plan)
    assert calls.log == [("lookup_capital", {"country": "France"}), ("fetch_population", {"city": "Paris"}),
                         ("convert_km_to_miles", {"km": 12.0})]
    assert mcp_log(log) == [{"tool": "save_note", "title": "Paris", "body": "2.1M people"}]
