"""`Api.function_name` (issue 29 §12): the catalog's name for the API, as the pool and the retriever show it; a
LangChain (or MCP) tool keeps its own name when no other API of the catalog wants it, and every API that wants a
name another one wants too gets the usual `<api>_for_<tool>` name."""

from __future__ import annotations

from langchain_core.tools import tool

from langgraph_anytool import AnyToolRetriever, Catalog, create_anytool_graph
from langgraph_anytool.catalog.models import Api
from langgraph_anytool.catalog.naming import kept_names


@tool
def get_weather(city: str) -> dict:
    """The current weather of a city."""
    return {"city": city, "temperature_c": 21}


def lookup_capital(country: str) -> str:
    """The capital city of a country."""
    return {"France": "Paris"}.get(country, "unknown")


def test_every_api_carries_the_catalogs_function_name() -> None:
    builtin = Catalog.builtin()
    for api in builtin:
        assert api.function_name == builtin.function_name(api.id)
        assert builtin.api_for_function(api.function_name) is api
    for tool_ in builtin.category("Geography").tools:  # the tree's APIs are the same objects
        assert all(a is builtin.api(a.id) for a in tool_.apis)
    doc = AnyToolRetriever(catalog=builtin, k=1).invoke("distance between two cities")[0]
    assert builtin.api(doc.metadata["api_id"]).function_name == doc.metadata["function_name"]
    assert Api(id="c/t/a", name="a", tool_key="t", tool_name="T", category="c").function_name == ""


def test_a_langchain_tool_keeps_its_own_name() -> None:
    catalog = Catalog.from_langchain_tools([get_weather, lookup_capital])
    assert sorted(a.function_name for a in catalog) == ["get_weather", "lookup_capital"]
    assert catalog.api_for_function("get_weather").name == "get_weather"
    merged = Catalog.merge(catalog, Catalog.builtin())  # still unique: kept
    assert merged.api_for_function("lookup_capital").category == "LangChain"
    out = create_anytool_graph(catalog, "offline").invoke({"query": "What is the weather in Paris?"})
    assert "get_weather" in [e["function_name"] for e in out["api_pool"]]


def test_names_wanted_twice_are_kept_by_none() -> None:
    twice = Catalog.merge(Catalog.from_langchain_tools([lookup_capital], category="A"),
                          Catalog.from_langchain_tools([lookup_capital, get_weather], category="B"))
    names = {a.id: a.function_name for a in twice}
    assert names["B/langchain_tools/get_weather"] == "get_weather"  # unique: kept
    wanted_twice = [names["A/langchain_tools/lookup_capital"], names["B/langchain_tools/lookup_capital"]]
    assert "lookup_capital" not in wanted_twice and len(set(wanted_twice)) == 2
    assert all(n.startswith("lookup_capital") and n.endswith("_for_langchain_tools") for n in wanted_twice)
    assert kept_names({"a": "x", "b": "x", "c": "y", "d": "bad name!"}) == {"c": "y"}


def test_a_catalogs_names_do_not_depend_on_the_catalogs_built_before() -> None:
    # two categories share one API key and tool; a catalog of both disambiguates them, one of B alone need not,
    # and building the first must not leave its name on the shared API objects
    from langgraph_anytool.catalog.models import Category, Tool

    def category(name: str) -> Category:
        api = Api(id=f"{name}/t/get", name="get", tool_key="t", tool_name="T", category=name)
        return Category(name=name, tools=(Tool(key="t", name="T", category=name, apis=(api,)),))

    a, b = category("A"), category("B")
    fresh = Catalog([category("B")]).function_name("B/t/get")
    both = Catalog([a, b])
    assert both.function_name("A/t/get") != both.function_name("B/t/get")
    assert Catalog([b]).function_name("B/t/get") == fresh
    assert b.tools[0].apis[0].function_name == ""  # the caller's objects are left as they were
