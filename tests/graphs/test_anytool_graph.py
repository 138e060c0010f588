"""Whole AnyTool runs with scripted models: straight solve, reflection, budget, new query on a thread, ToolBench."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_anytool import AnyToolConfig, Catalog, create_anytool_graph
from langgraph_anytool.models.llm import ModelNotConfiguredError
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.fakes import ScriptedChatModel, ai, call
from tests.graph_world import World, adds, last_human, make_world, observations, solved_judge, turns

TOOLBENCH = Path(__file__).resolve().parents[2].parent / "shared" / "toolbench"
CFG = {"seed_with_search": False}


def fn(catalog: Catalog, tool: str, api: str) -> str:
    return catalog.function_name(catalog.find_api(tool, api).id)


def solver_calling(function: str, args: dict[str, Any], answer: str) -> Any:
    """A solver script: call `function`; on an ok observation answer, on an error give up naming it."""

    def solve(messages: list[BaseMessage]) -> AIMessage:
        seen = observations(messages)
        if not seen:
            return ai("Let me call the API.", call(function, **args))
        if seen[-1]["status"] == "ok":
            return ai("", call("Finish", return_type="give_answer", final_answer=answer))
        return ai("", call("Finish", return_type="give_up", reason=f"{function} failed: {seen[-1].get('error')}",
                           failed_functions=[function]))

    return solve


def test_straight_solve_returns_answer_pool_agents_and_usage() -> None:
    catalog, executor = make_world()
    weather = fn(catalog, "Weather Now", "Current")
    world = World({
        "meta": lambda m: (ai("", call("create_agent_category_level", category_name="Weather"))
                           if turns(m) == 0 else ai("", call("finish_search"))),
        "tool:Weather Now": lambda m: [adds("Weather Now", "Current"), ai("", call("check_if_request_solvable"))][turns(m)]
        if turns(m) < 2 else ai("", call("finish_search")),
        "solvable": lambda m: ai("Solvable"),
        "solver": solver_calling(weather, {"city": "Paris"}, "It is 21°C in Paris."),
        "judge": solved_judge,
    })
    model = ScriptedChatModel(responder=world)
    graph = create_anytool_graph(catalog, model, config=AnyToolConfig(**CFG), executor=executor)
    out = graph.invoke({"query": "What's the temperature in Paris?"})

    assert out["status"] == "solved" and out["answer"] == "It is 21°C in Paris."
    assert [e["function_name"] for e in out["api_pool"]] == [weather]
    agents = out["agents"]
    assert agents["meta"]["status"] == "finished" and agents["meta/Weather"]["end_reason"] == "small_category"
    assert agents["meta/Weather/t1"]["end_reason"] == "pool_solvable"
    assert len(out["solver_attempts"]) == 1
    attempt = out["solver_attempts"][0]
    assert attempt["finish_type"] == "give_answer" and attempt["api_calls"] == 1
    usage = out["usage"]
    assert usage["api"]["calls"] == 1 and usage["judge"]["model_calls"] == 1
    assert usage["total_tokens"] == sum(v["input_tokens"] + v["output_tokens"] for v in usage.values()
                                        if isinstance(v, dict) and "input_tokens" in v) > 0
    assert usage.get("reflections", 0) == 0
    # the meta-agent's second step and the tool agent's first run in the same superstep (in either order)
    assert world.roles[0] == "meta" and sorted(world.roles[1:3]) == ["meta", "tool:Weather Now"]
    assert world.roles[3:] == ["tool:Weather Now", "solvable", "solver", "solver", "judge"]


def test_reflection_prunes_failed_api_and_reactivates_tool_agent_first() -> None:
    catalog, executor = make_world()
    broken, backup = fn(catalog, "Stocks API", "Quote"), fn(catalog, "Backup Quotes", "Quote")

    def tool_agent(m: list[BaseMessage]) -> AIMessage:
        if broken in last_human(m):  # re-activated by reflection with the failure reason (paper Table 18)
            return adds("Backup Quotes", "Quote") if not isinstance(m[-1], ToolMessage) else ai("", call("finish_search"))
        return [adds("Stocks API", "Quote"), ai("", call("check_if_request_solvable"))][min(turns(m), 1)]

    def solver(m: list[BaseMessage]) -> AIMessage:
        names = {tc["name"] for x in m if isinstance(x, AIMessage) for tc in x.tool_calls}
        target = backup if backup in str(m[0].content) else broken
        assert broken not in names or target == broken, "the failed call must leave the solver's history"
        return solver_calling(target, {"symbol": "AAPL"}, "AAPL trades at 187.5 USD.")(m)

    world = World({
        "meta": lambda m: (ai("", call("create_agent_category_level", category_name="Finance"))
                           if turns(m) == 0 else ai("", call("finish_search"))),
        "tool": tool_agent,
        "solvable": lambda m: ai("Solvable"),
        "solver": solver,
        "judge": solved_judge,
    })
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=world), config=AnyToolConfig(**CFG),
                                 executor=executor)
    out = graph.invoke({"query": "Price of AAPL?"})

    assert out["status"] == "solved" and out["answer"] == "AAPL trades at 187.5 USD."
    first, second = out["solver_attempts"]
    assert first["finish_type"] == "give_up" and first["failed_api_ids"] == [catalog.find_api("Stocks API", "Quote").id]
    assert second["finish_type"] == "give_answer"
    assert [e["function_name"] for e in out["api_pool"]] == [backup]  # the failed API left the pool
    assert out["usage"]["reflections"] == 1
    agents = out["agents"]
    tool_agent_rec = agents["meta/Finance/t1"]
    assert tool_agent_rec["activations"] == 2 and tool_agent_rec["status"] == "finished"
    assert any("did not solve the query" in str(msg.content) and broken in str(msg.content)
               for msg in tool_agent_rec["messages"])
    assert agents["meta"]["activations"] == 1  # the meta-agent had finished: not re-activated
    second_calls = [n for n in second["tree"] for tc in n.get("tool_calls", []) if tc.get("name") == broken]
    assert not second_calls


def test_reflection_climbs_from_tool_agents_to_the_meta_agent() -> None:
    """Reflection re-activates unfinished agents level by level: tool agents first, then (when none is left
    unfinished) the meta-agent, which the stop signal had cut off while it was still exploring."""
    catalog, executor = make_world()
    broken, board = fn(catalog, "Stocks API", "Quote"), fn(catalog, "Exchange Board", "Last Price")

    def meta(m: list[BaseMessage]) -> AIMessage:
        if isinstance(m[-1], ToolMessage) and "agent meta/Markets" in str(m[-1].content):
            return ai("", call("finish_search"))
        if broken in last_human(m):  # re-activated by reflection with the failure reason (paper Table 20)
            return ai("", call("create_agent_category_level", category_name="Markets"))
        if turns(m) == 0:
            return ai("", call("create_agent_category_level", category_name="Finance"))
        return ai("", call("get_tools_in_category", category_name="Fun"))  # keeps exploring beside its children

    def finance_tools(m: list[BaseMessage]) -> AIMessage:
        if broken in last_human(m):  # re-activated with the reason (Table 18): nothing more in these tools
            return ai("", call("finish_search"))
        return [adds("Stocks API", "Quote"), ai("", call("check_if_request_solvable"))][min(turns(m), 1)]

    def market_tools(m: list[BaseMessage]) -> AIMessage:
        return adds("Exchange Board", "Last Price") if turns(m) == 0 else ai("", call("finish_search"))

    def solver(m: list[BaseMessage]) -> AIMessage:
        target = board if board in str(m[0].content) else broken
        args = {"ticker": "AAPL"} if target == board else {"symbol": "AAPL"}
        return solver_calling(target, args, "AAPL last traded at 190.0.")(m)

    world = World({"meta": meta, "tool:Stocks API, Backup Quotes": finance_tools, "tool:Exchange Board": market_tools,
                   "solvable": lambda m: ai("Solvable"), "solver": solver, "judge": solved_judge})
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=world, latency=0.05),
                                 config=AnyToolConfig(**CFG), executor=executor)
    out = graph.invoke({"query": "Last price of AAPL?"})

    assert out["status"] == "solved" and out["answer"] == "AAPL last traded at 190.0."
    # the pruned pool was empty after the tool agent's second activation: no solve, the meta level next, same round
    assert [a["finish_type"] for a in out["solver_attempts"]] == ["give_up", "give_answer"]
    assert out["usage"]["reflections"] == 1 and [a["round"] for a in out["solver_attempts"]] == [0, 1]
    agents = out["agents"]
    finance_agent, meta_agent = agents["meta/Finance/t1"], agents["meta"]
    # the reflection re-activated the (stopped) tool agent only; the climb then the meta-agent
    assert finance_agent["activations"] == 2 and finance_agent["end_reason"] == "finish_search"
    assert meta_agent["activations"] == 2 and meta_agent["end_reason"] == "finish_search"
    meta_texts = [str(x.content) for x in meta_agent["messages"]]
    # §4.3: each reason goes into every unfinished agent's history; only the lowest level is re-activated
    assert sum(broken in t for t in meta_texts) == 1
    assert agents["meta/Finance"]["activations"] == 0  # small category: never a model call, never re-activated
    assert agents["meta/Markets/t1"]["status"] == "finished"
    assert [e["function_name"] for e in out["api_pool"]] == [board]


def test_unsolvable_run_ends_after_max_reflections_with_gave_up() -> None:
    catalog, executor = make_world()
    broken = fn(catalog, "Stocks API", "Quote")
    world = World({
        "meta": lambda m: (ai("", call("create_agent_category_level", category_name="Finance"))
                           if turns(m) == 0 else ai("", call("finish_search"))),
        "tool": lambda m: adds("Stocks API", "Quote") if turns(m) == 0 else ai("", call("check_if_request_solvable")),
        "solvable": lambda m: ai("Solvable"),
        "solver": lambda m: ai("", call("Finish", return_type="give_up", reason="no working API",
                                        failed_functions=[])),
    })
    cfg = AnyToolConfig(**CFG, max_reflections=2)
    out = create_anytool_graph(catalog, ScriptedChatModel(responder=world), config=cfg, executor=executor).invoke(
        {"query": "Price of AAPL?"})
    assert out["status"] == "gave_up" and out["reason"] == "no working API" and out["answer"] == ""
    assert len(out["solver_attempts"]) == 3 and out["usage"]["reflections"] == 2
    assert broken in {e["function_name"] for e in out["api_pool"]}


def test_reflection_can_be_switched_off() -> None:
    catalog, executor = make_world()
    world = World({
        "meta": lambda m: (ai("", call("create_agent_category_level", category_name="Finance"))
                           if turns(m) == 0 else ai("", call("finish_search"))),
        "tool": lambda m: adds("Stocks API", "Quote") if turns(m) == 0 else ai("", call("check_if_request_solvable")),
        "solvable": lambda m: ai("Solvable"),
        "solver": lambda m: ai("", call("Finish", return_type="give_up", reason="no", failed_functions=[])),
    })
    out = create_anytool_graph(catalog, ScriptedChatModel(responder=world), executor=executor,
                               config=AnyToolConfig(**CFG, max_reflections=0)).invoke({"query": "Price of AAPL?"})
    assert out["status"] == "gave_up" and len(out["solver_attempts"]) == 1
    assert out["usage"].get("reflections", 0) == 0


def test_tool_calls_without_ids_get_ids_and_answers() -> None:
    catalog, executor = make_world()

    def meta(m: list[BaseMessage]) -> AIMessage:
        reply = (ai("", call("create_agent_category_level", category_name="Fun")) if turns(m) == 0
                 else ai("", call("finish_search")))
        return reply.model_copy(update={"tool_calls": [{**tc, "id": None} for tc in reply.tool_calls]})

    out = create_anytool_graph(catalog, ScriptedChatModel(responder=World({"meta": meta})), executor=executor,
                               config=AnyToolConfig(**CFG)).invoke({"query": "a joke"})
    messages = out["agents"]["meta"]["messages"]
    ids = [tc["id"] for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls]
    answered = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    assert ids and all(ids) and answered == ids


def test_token_budget_exhaustion() -> None:
    catalog, executor = make_world()
    world = World({"meta": lambda m: ai("x" * 400, call("get_tools_in_category", category_name="Finance"))})
    cfg = AnyToolConfig(**CFG, token_budget=300)
    out = create_anytool_graph(catalog, ScriptedChatModel(responder=world), config=cfg, executor=executor).invoke(
        {"query": "Price of AAPL? " * 50})
    assert out["status"] == "budget_exhausted"
    assert out["agents"]["meta"]["end_reason"] == "budget"
    # issue 21: the budget holds counting the call about to be made: no call fits, so none is sent
    assert out["usage"]["total_tokens"] <= 300


def test_no_apis_found() -> None:
    catalog, executor = make_world()
    world = World({"meta": lambda m: ai("", call("finish_search"))})
    out = create_anytool_graph(catalog, ScriptedChatModel(responder=world), config=AnyToolConfig(**CFG),
                               executor=executor).invoke({"query": "Translate Klingon"})
    assert out["status"] == "no_apis" and out["api_pool"] == []
    assert out["solver_attempts"] == []  # an empty pool never reaches the solver


def test_a_thread_takes_a_new_query_from_a_clean_state() -> None:
    catalog, executor = make_world()
    weather = fn(catalog, "Weather Now", "Current")
    world = World({
        "meta": lambda m: (ai("", call("create_agent_category_level", category_name="Weather"))
                           if turns(m) == 0 else ai("", call("finish_search"))),
        "tool": lambda m: adds("Weather Now", "Current") if turns(m) == 0 else ai("", call("finish_search")),
        "solver": solver_calling(weather, {"city": "Oslo"}, "Cold in Oslo."),
        "judge": solved_judge,
    })
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=world), config=AnyToolConfig(**CFG),
                                 executor=executor, checkpointer=InMemorySaver())
    cfg: Any = {"configurable": {"thread_id": "t"}}
    first = graph.invoke({"query": "Weather in Oslo?"}, cfg)
    second = graph.invoke({"query": "Weather in Oslo again?"}, cfg)
    assert first["status"] == second["status"] == "solved"
    assert len(second["solver_attempts"]) == 1 and len(second["api_pool"]) == 1
    assert second["usage"]["api"]["calls"] == 1 and second["agents"]["meta"]["activations"] == 1


def test_missing_model_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANYTOOL_MODEL", raising=False)
    catalog, executor = make_world()
    graph = create_anytool_graph(catalog, executor=executor)  # builds (Studio draws it) without a model
    assert "solver" in graph.get_graph().nodes
    with pytest.raises(ModelNotConfiguredError) as err:
        graph.invoke({"query": "q"})
    assert "\n" not in str(err.value) and "ANYTOOL_MODEL" in str(err.value)
    # a model given per run, through the run-time context, is enough
    out = graph.invoke({"query": "q"}, context={"model": "offline"})
    assert out["status"] in ("solved", "unsolved", "gave_up", "no_apis")


@pytest.mark.toolbench
def test_toolbench_catalog_with_template_simulation() -> None:
    if not (TOOLBENCH / "tools").is_dir():
        pytest.skip("../shared/toolbench is absent")
    catalog = Catalog.from_toolbench(TOOLBENCH / "tools")
    api = catalog.find_api("TheClique", "Songkick concert")
    function = catalog.function_name(api.id)
    world = World({
        "meta": lambda m: (ai("", call("create_agent_category_level", category_name="Data"))
                           if turns(m) == 0 else ai("", call("finish_search"))),
        "category:Data": lambda m: (ai("", call("create_agent_tool_level", tool_names=["TheClique"]))
                                    if turns(m) == 0 else ai("", call("finish_search"))),
        "tool": lambda m: (adds("TheClique", "Songkick concert") if turns(m) == 0
                           else ai("", call("finish_search"))),
        "solver": solver_calling(function, {"id_conc": "123"}, "The concert details are in."),
        "judge": solved_judge,
    })
    executor = ApiExecutor.for_catalog(catalog, kind="template")
    out = create_anytool_graph(catalog, ScriptedChatModel(responder=world), config=AnyToolConfig(**CFG),
                               executor=executor).invoke({"query": "Tell me about concert 123"})
    assert out["status"] == "solved"
    assert out["api_pool"][0]["api_id"] == api.id
    node_obs = [o for n in out["solver_attempts"][0]["tree"] for o in n.get("observations", [])]
    assert node_obs and node_obs[0]["status"] == "ok"


def test_failing_model_ends_the_run_as_error_naming_the_failure() -> None:
    """Every model call fails (e.g. a provider's 401): status `error` with the failure, not `no_apis`."""
    catalog, executor = make_world()

    def unauthorized(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        raise RuntimeError("Error code: 401 - Unauthorized")

    model = ScriptedChatModel(responder=unauthorized)
    out = create_anytool_graph(catalog, model, config=AnyToolConfig(**CFG), executor=executor).invoke({"query": "q"})
    assert out["status"] == "error" and "model call failed" in out["reason"] and "401" in out["reason"]
    assert len(model.calls) == 1  # no reflection loop on a provider that keeps failing


def test_solver_model_error_is_an_error_status() -> None:
    catalog, executor = make_world()
    weather = fn(catalog, "Weather Now", "Current")

    def solver_down(m: list[BaseMessage]) -> AIMessage:
        raise RuntimeError("503 Service Unavailable")

    world = World({"meta": lambda m: (ai("", call("create_agent_category_level", category_name="Weather"))
                                      if turns(m) == 0 else ai("", call("finish_search"))),
                   "tool": lambda m: adds("Weather Now", "Current") if turns(m) == 0 else ai("", call("finish_search")),
                   "solver": solver_down})
    out = create_anytool_graph(catalog, ScriptedChatModel(responder=world), config=AnyToolConfig(**CFG),
                               executor=executor).invoke({"query": "Weather in Oslo?"})
    assert out["status"] == "error" and "503" in out["reason"] and len(out["solver_attempts"]) == 1
    assert [e["function_name"] for e in out["api_pool"]] == [weather]
