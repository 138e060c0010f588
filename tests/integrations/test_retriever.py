"""The hierarchical retriever graph: a whole retrieval, parallel siblings, pool cap, stop signal, budget."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.graphs.retriever import create_retriever_graph
from langgraph_anytool.nodes.meta_agent import seed_categories
from langgraph_anytool.state import AgentRecord
from tests.fakes import ScriptedChatModel, ai, call
from tests.nodes.test_agent_loop import SMALL_PLAN, Script, assert_calls_answered, make_catalog, make_deps, turn

TOOLBENCH = Path(__file__).resolve().parents[2].parent / "shared" / "toolbench"


def retriever(catalog: Catalog, model: ScriptedChatModel, solvable_model: ScriptedChatModel | None = None,
              **cfg: Any) -> Any:
    return create_retriever_graph(catalog, deps=make_deps(catalog, model, solvable_model, **cfg))


def statuses(agents: Mapping[str, AgentRecord]) -> dict[str, tuple[str, str]]:
    return {i: (a["status"], a["end_reason"]) for i, a in agents.items()}


def pool_names(out: Mapping[str, Any]) -> set[tuple[str, str]]:
    return {(e["tool"], e["api"]) for e in out["api_pool"]}


def adds(tool: str, *apis: str) -> AIMessage:
    return ai("", call("add_apis_into_api_pool", apis=[{"tool_name": tool, "api_name": a} for a in apis]))


def test_whole_retrieval_builds_the_agent_tree_and_the_pool() -> None:
    catalog = make_catalog(SMALL_PLAN)
    script = Script({
        "meta": [ai("", call("get_tools_in_category", category_name="Finance")),
                 ai("Finance, Weather and Small.", call("create_agent_category_level", category_name="Finance"),
                    call("create_agent_category_level", category_name="Weather"),
                    call("create_agent_category_level", category_name="Small"))],
        "category:Finance": [ai("", call("get_tools_descriptions", category_name="Finance",
                                         tool_names=["Stocks API", "FX Rates"])),
                             ai("", call("create_agent_tool_level", tool_names=["Stocks API"]),
                                call("create_agent_tool_level", tool_names=["FX Rates", "Crypto Prices"]))],
        "category:Weather": [ai("", call("create_agent_tool_level", tool_names=["Weather Now"]))],
        "tool:Jokes, Quotes": [adds("Jokes", "Random Joke")],
        "tool:Stocks API": [ai("", call("get_apis_in_tool", tool_name="Stocks API")), adds("Stocks API", "Quote"),
                            ai("", call("check_if_request_solvable"))],
        "tool:FX Rates, Crypto Prices": [adds("FX Rates", "Convert")],
        "tool:Weather Now": [adds("Weather Now", "Current")],
    }, solvable=lambda prompt: "Solvable" if '"api": "Quote"' in prompt else "Unsolvable: no stock quote")
    model = ScriptedChatModel(responder=script)
    judge = ScriptedChatModel(responder=script, latency=0.3)  # siblings finish before the pool is judged solvable
    out = retriever(catalog, model, judge).invoke({"query": "AAPL quote in EUR, and the weather"})

    assert pool_names(out) == {("Stocks API", "Quote"), ("FX Rates", "Convert"), ("Weather Now", "Current"),
                               ("Jokes", "Random Joke")}
    assert out["solvable_round"] == 0
    agents = out["agents"]
    assert statuses(agents) == {
        "meta": ("finished", "finish_search"),
        "meta/Finance": ("finished", "finish_search"),
        "meta/Weather": ("finished", "finish_search"),
        "meta/Small": ("finished", "small_category"),
        "meta/Small/t1": ("finished", "finish_search"),
        "meta/Finance/t1": ("stopped", "pool_solvable"),
        "meta/Finance/t2": ("finished", "finish_search"),
        "meta/Weather/t1": ("finished", "finish_search"),
    }
    levels = {i: (a["level"], a["parent"]) for i, a in agents.items()}
    assert levels["meta"] == ("meta", None) and levels["meta/Weather"] == ("category", "meta")
    assert levels["meta/Finance/t2"] == ("tool", "meta/Finance") and levels["meta/Small/t1"] == ("tool", "meta/Small")
    assert agents["meta"]["children"] == ["meta/Finance", "meta/Weather", "meta/Small"]
    assert agents["meta/Finance"]["children"] == ["meta/Finance/t1", "meta/Finance/t2"]
    assert agents["meta/Finance/t2"]["tools"] == ["FX Rates", "Crypto Prices"]
    by_agent = {e["api"]: e["added_by"] for e in out["api_pool"]}
    assert by_agent == {"Quote": "meta/Finance/t1", "Convert": "meta/Finance/t2", "Current": "meta/Weather/t1",
                        "Random Joke": "meta/Small/t1"}
    assert "category:Small" not in script.scopes  # the small category needed no model call
    for rec in agents.values():
        assert_calls_answered(rec["messages"])
        if rec["end_reason"] != "small_category":
            assert rec["activations"] == 1 and isinstance(rec["messages"][0], HumanMessage)
            assert str(rec["messages"][0].content).startswith("Query: AAPL quote in EUR")
            assert rec["steps"] == turn(rec["messages"]) and rec["invalid_calls"] == 0
    usage = out["usage"]
    assert usage["meta"]["model_calls"] == 3 and usage["category"]["model_calls"] == 5
    assert usage["tool"]["model_calls"] == 3 + 2 + 2 + 2 and usage["solvable"]["model_calls"] == 1
    assert len(model.calls) + len(judge.calls) == sum(u["model_calls"] for u in usage.values())
    total = sum(u["input_tokens"] + u["output_tokens"] for u in usage.values())
    assert total == sum(a["tokens"] for a in agents.values()) > 0


def test_sibling_agents_run_in_parallel() -> None:
    plan = {f"C{i}": {f"T{i}a": ["A"], f"T{i}b": ["B"]} for i in range(4)}
    catalog = make_catalog(plan)
    latency = 0.3
    script = Script({"meta": [ai("", *(call("create_agent_category_level", category_name=c) for c in plan))],
                     **{f"category:{c}": [ai("", call("get_tools_in_category", category_name=c))] for c in plan}})
    model = ScriptedChatModel(responder=script, latency=latency)
    graph = retriever(catalog, model, small_category_shortcut=False)
    start = time.perf_counter()
    out = graph.invoke({"query": "q"})
    wall = time.perf_counter() - start
    one_agent = 2 * latency  # each agent makes two model calls
    assert all(out["agents"][f"meta/{c}"]["end_reason"] == "finish_search" for c in plan)
    assert len(model.calls) == 2 + 4 * 2
    # sequentially: meta + 4 siblings = 5 agents' time; in parallel: meta + about one sibling
    assert wall < one_agent + 2 * one_agent, f"siblings did not overlap: {wall:.2f}s"


def test_dispatch_starts_at_most_max_concurrency_oldest_first() -> None:
    plan = {f"C{i}": {f"T{i}a": ["A"], f"T{i}b": ["B"]} for i in range(5)}
    script = Script({"meta": [ai("", *(call("create_agent_category_level", category_name=c) for c in plan))]})
    graph = retriever(make_catalog(plan), ScriptedChatModel(responder=script), small_category_shortcut=False,
                      max_concurrency=2)
    started = [[i for i, a in u["dispatch"]["agents"].items() if a["status"] == "running"]
               for u in graph.stream({"query": "q"}, stream_mode="updates") if "dispatch" in u]
    # one step per agent per superstep: the meta-agent continues beside its children (longest waiting first)
    assert started == [["meta"], ["meta", "meta/C0"], ["meta/C1", "meta/C2"], ["meta/C3", "meta/C4"], []]


def test_pool_cap_holds_with_parallel_adders() -> None:
    plan = {f"S{i}": {f"Tool{i}": ["A", "B"]} for i in range(3)}
    script = Script({"meta": [ai("", *(call("create_agent_category_level", category_name=c) for c in plan))],
                     **{f"tool:Tool{i}": [adds(f"Tool{i}", "A", "B")] for i in range(3)}})
    model = ScriptedChatModel(responder=script, latency=0.05)
    out = retriever(make_catalog(plan), model, max_api_pool=3).invoke({"query": "q"})
    assert len(out["api_pool"]) == 3
    assert len({e["api_id"] for e in out["api_pool"]}) == 3
    # a full pool stops every agent at its next step (not only new ones): nobody steps again after it filled up
    tool_agents = {i: st for i, st in statuses(out["agents"]).items() if i.count("/") == 2}
    assert tool_agents == {f"meta/S{i}/t1": ("stopped", "pool_full") for i in range(3)}
    assert len([c for c in model.calls if c["role"] == "tool"]) == 3


def _browse_finance(messages: list[BaseMessage]) -> AIMessage:
    """A category agent's step that only browses (it never finishes by itself)."""
    return ai("", call("get_tools_in_category", category_name="Finance"))


def _joke_found_models(finance: list[Any], **more: list[Any]) -> tuple[ScriptedChatModel, ScriptedChatModel]:
    """Agent model and (slow) judge: meta creates Small and Finance; Small's tool agent adds Random Joke and asks the
    judge, which says solvable; Finance and any `more` agents follow their own replies meanwhile."""
    script = Script({
        "meta": [ai("", call("create_agent_category_level", category_name="Small"),
                    call("create_agent_category_level", category_name="Finance"))],
        "tool:Jokes, Quotes": [adds("Jokes", "Random Joke"), ai("", call("check_if_request_solvable"))],
        "category:Finance": finance, **more,
    }, solvable=lambda prompt: "Solvable")
    return ScriptedChatModel(responder=script, latency=0.02), ScriptedChatModel(responder=script, latency=0.3)


def test_solvable_pool_stops_siblings_and_pending_children() -> None:
    catalog = make_catalog(SMALL_PLAN)
    model, judge = _joke_found_models([_browse_finance] * 60)  # Finance keeps browsing until the stop signal
    out = retriever(catalog, model, judge, agent_step_limit=60).invoke({"query": "tell me a joke"})
    agents = out["agents"]
    assert statuses(agents) == {
        "meta": ("finished", "finish_search"),
        "meta/Small": ("finished", "small_category"),
        "meta/Small/t1": ("stopped", "pool_solvable"),
        "meta/Finance": ("stopped", "pool_solvable"),  # a sibling, cut off before its next step
    }
    assert agents["meta/Finance"]["steps"] >= 2
    assert pool_names(out) == {("Jokes", "Random Joke")} and out["solvable_round"] == 0


def test_agents_between_steps_are_stopped_when_solvable() -> None:
    catalog = make_catalog(SMALL_PLAN)
    model, judge = _joke_found_models(
        [ai("", call("create_agent_tool_level", tool_names=["Stocks API"])), _browse_finance, _browse_finance],
        **{"tool:Stocks API": [ai("", call("get_apis_in_tool", tool_name="Stocks API"))] * 3})
    agents = retriever(catalog, model, judge).invoke({"query": "tell me a joke"})["agents"]
    # Finance and the tool agent it created stepped beside the check; both were pending when it said solvable
    assert statuses(agents)["meta/Finance"] == ("stopped", "pool_solvable")
    assert statuses(agents)["meta/Finance/t1"] == ("stopped", "pool_solvable")
    assert agents["meta/Finance"]["steps"] == 2 and agents["meta/Finance/t1"]["steps"] == 1


def test_budget_stops_agents_and_dispatch() -> None:
    catalog = make_catalog(SMALL_PLAN)
    script = Script({"meta": [ai("", call("create_agent_category_level", category_name="Finance"),
                                 call("create_agent_category_level", category_name="Small"))]})
    model = ScriptedChatModel(responder=script)
    # the budget counts the call about to be made (its estimated prompt): the meta agent's first prompt fits in
    # 1,000 tokens, the prompts of the agents it creates no longer do
    out = retriever(catalog, model, token_budget=1000).invoke({"query": "q"})
    assert statuses(out["agents"]) == {
        "meta": ("stopped", "budget"),
        "meta/Finance": ("stopped", "budget"),
        "meta/Small": ("finished", "small_category"),
        "meta/Small/t1": ("stopped", "budget"),
    }
    assert len(model.calls) == 1 and out["agents"]["meta"]["steps"] == 1


def test_checkpointed_runs_start_fresh_per_query() -> None:
    catalog = make_catalog(SMALL_PLAN)
    script = Script({"meta": [ai("", call("create_agent_category_level", category_name="Small"))],
                     "tool:Jokes, Quotes": [adds("Jokes", "Random Joke")]})
    graph = create_retriever_graph(catalog, deps=make_deps(catalog, ScriptedChatModel(responder=script)),
                                   checkpointer=InMemorySaver())
    cfg: Any = {"configurable": {"thread_id": "t"}}
    first = graph.invoke({"query": "joke"}, cfg)
    second = graph.invoke({"query": "another joke"}, cfg)
    for out in (first, second):
        assert set(out["agents"]) == {"meta", "meta/Small", "meta/Small/t1"} and len(out["api_pool"]) == 1
    assert str(second["agents"]["meta"]["messages"][0].content) == "Query: another joke"
    assert second["usage"]["meta"]["model_calls"] == 2  # usage restarted with the new query
    assert graph.get_state(cfg).values["agents"]["meta/Small/t1"]["status"] == "finished"


def test_meta_agent_gets_search_hints_when_search_is_available(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")  # BM25 only: fast, nothing written to disk
    catalog = make_catalog(SMALL_PLAN)
    model = ScriptedChatModel(responder=Script({}))
    deps = make_deps(catalog, model, seed_with_search=True)
    query = "current weather forecast and air quality"
    out = create_retriever_graph(catalog, deps=deps).invoke({"query": query})
    first = str(out["agents"]["meta"]["messages"][0].content)
    hints = seed_categories(deps, query)
    try:
        catalog.search_categories(query, 5)
        searchable = True
    except ImportError:  # the search module is optional here: no hints, retrieval unaffected
        searchable = False
    if searchable:
        assert hints and hints[0] == "Weather" and set(hints) <= set(catalog.categories)
        assert "ranks these categories highest" in first and ", ".join(hints) in first
    else:
        assert hints == [] and first == f"Query: {query}"
    assert out["agents"]["meta"]["status"] == "finished"


# ------------------------------------------------------------------ ToolBench catalog
def _toolbench_query() -> tuple[str, dict[str, dict[str, list[str]]]]:
    """A development query whose relevant APIs span several categories: query, category → tool → APIs."""
    for group in ("G2_category", "G3_instruction", "G2_instruction"):
        path = TOOLBENCH / "queries" / f"{group}.json"
        if not path.exists():
            continue
        for q in json.loads(path.read_text(encoding="utf-8")):
            cat_of = {(a["tool_name"], a["api_name"]): a["category_name"] for a in q["api_list"]}
            plan: dict[str, dict[str, list[str]]] = {}
            for tool, api in q["relevant APIs"]:
                if (tool, api) in cat_of:
                    plan.setdefault(cat_of[(tool, api)], {}).setdefault(tool, []).append(api)
            if len(plan) >= 2:
                return q["query"], plan
    pytest.skip("no multi-category query in the ToolBench development split")


@pytest.mark.toolbench
def test_retrieval_on_the_toolbench_catalog() -> None:
    if not (TOOLBENCH / "tools").is_dir():
        pytest.skip("../shared/toolbench is absent")
    catalog = Catalog.from_toolbench(TOOLBENCH / "tools")
    query, plan = _toolbench_query()
    tools_of = {t: c for c, ts in plan.items() for t in ts}

    def responder(messages: list[BaseMessage], tools: list[str], meta: Mapping[str, Any]) -> AIMessage:
        n = turn(messages)
        if "create_agent_category_level" in tools:
            calls = [call("create_agent_category_level", category_name=c) for c in plan]
            return ai("", *calls) if n == 0 else ai("", call("finish_search"))
        if "create_agent_tool_level" in tools:
            names = list(plan[meta["inputs"]["category"]])
            calls = [call("create_agent_tool_level", tool_names=names[i:i + 5]) for i in range(0, len(names), 5)]
            return ai("", *calls) if n == 0 else ai("", call("finish_search"))
        if "add_apis_into_api_pool" in tools:
            mine = list(meta["inputs"]["tools"])
            if n == 0:
                return ai("", call("get_apis_in_tool", tool_name=mine[0]))
            if n == 1:
                refs = [{"tool_name": t, "api_name": a} for t in mine for a in plan[tools_of[t]][t]]
                return ai("", call("add_apis_into_api_pool", apis=refs), call("check_if_request_solvable"))
            return ai("", call("finish_search"))
        return ai("Unsolvable: other parts of the query are not covered yet")

    model = ScriptedChatModel(responder=responder)
    out = retriever(catalog, model).invoke({"query": query})
    expected = {(t, a) for ts in plan.values() for t, apis in ts.items() for a in apis}
    assert pool_names(out) == expected
    agents = out["agents"]
    assert all(a["status"] == "finished" for a in agents.values()), statuses(agents)
    assert {a["category"] for a in agents.values() if a["level"] == "category"} == set(plan)
    assert {t for a in agents.values() if a["level"] == "tool" for t in a["tools"]} == set(tools_of)
    for entry in out["api_pool"]:
        assert catalog.api_for_function(entry["function_name"]).id == entry["api_id"]
    for rec in agents.values():
        assert_calls_answered(rec["messages"])
        assert rec["invalid_calls"] == 0, (rec["id"], [m.content for m in rec["messages"]])


def test_solvable_check_sees_the_whole_live_pool_of_parallel_agents() -> None:
    """The paper's pool is global: a tool agent's check also sees what a sibling added in the same superstep."""
    catalog = make_catalog({"C": {"T1": ["A1"], "T2": ["A2"]}})
    prompts: list[str] = []

    def solvable(prompt: str) -> str:
        prompts.append(prompt)
        return "Unsolvable: need more"

    script = Script({
        "meta": [ai("", call("create_agent_category_level", category_name="C"))],
        "category:C": [ai("", call("create_agent_tool_level", tool_names=["T1"]),
                          call("create_agent_tool_level", tool_names=["T2"]))],
        "tool:T1": [adds("T1", "A1")],
        "tool:T2": [adds("T2", "A2"), ai("", call("check_if_request_solvable"))],
    }, solvable=solvable)
    model = ScriptedChatModel(responder=script, latency=0.2)
    out = retriever(catalog, model, small_category_shortcut=False).invoke({"query": "q"})
    assert pool_names(out) == {("T1", "A1"), ("T2", "A2")}
    assert len(prompts) == 1 and '"api": "A1"' in prompts[0] and '"api": "A2"' in prompts[0]


def test_a_child_starts_in_the_next_superstep_not_after_its_busy_sibling() -> None:
    """AnyTool's agents run concurrently: a tool agent created by one category agent starts its first step in the
    next superstep, beside a sibling that is still mid-activation (before: after the sibling's whole activation)."""
    catalog = make_catalog(SMALL_PLAN)

    def browse(messages: list[BaseMessage]) -> AIMessage:
        return ai("", call("get_tools_in_category", category_name="Weather"))

    script = Script({
        "meta": [ai("", call("create_agent_category_level", category_name="Weather"),
                    call("create_agent_category_level", category_name="Finance"))],
        "category:Weather": [browse] * 5,
        "category:Finance": [ai("", call("create_agent_tool_level", tool_names=["Stocks API"]))],
    })
    model = ScriptedChatModel(responder=script)
    retriever(catalog, model).invoke({"query": "q"})
    order = [("tool" if c["role"] == "tool" else c["inputs"].get("category", c["role"])) for c in model.calls]
    first_tool = order.index("tool")
    assert order[:first_tool].count("Weather") <= 2  # Weather's third step comes after the child's first
    assert order.count("Weather") == 6  # 5 browsing steps and finish_search
