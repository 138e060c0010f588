"""α-UMi mode of the solver: planner → caller | summarizer, each its own scripted model; give-up backtracking."""

from __future__ import annotations

from typing import Any, cast

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_anytool.config import AnyToolConfig
from langgraph_anytool.graphs.solver import build_solver_graph
from langgraph_anytool.models.llm import ModelSet
from langgraph_anytool.nodes.solver.tree import QUERY_LIMIT_NOTE, SolverState, add_child, new_tree
from langgraph_anytool.nodes.solver.umi import DECISIONS, QUERY_LIMIT, parse_next, planner_decisions, planner_grammar
from langgraph_anytool.runtime import Deps, RunSignals
from langgraph_anytool.state import SolverAttempt
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.fakes import ScriptedChatModel, ai, call
from tests.nodes.test_solver import CAT, CURRENT, FORECAST, WEATHER_POOL, node, only_attempt


def make_deps(planner: ScriptedChatModel, caller: ScriptedChatModel, summarizer: ScriptedChatModel,
              **config: Any) -> Deps:
    solver = ScriptedChatModel(replies=[])  # must never be used in α-UMi mode
    models = ModelSet(default=None, by_role={"solver": solver, "planner": planner, "caller": caller,
                                             "summarizer": summarizer})
    return Deps(catalog=CAT, models=models, executor=ApiExecutor.for_catalog(CAT, kind="template"),
                config=AnyToolConfig(solver="umi", **config), signals=RunSignals())


def solve(deps: Deps) -> SolverAttempt:
    out = build_solver_graph(deps).invoke({"query": "Weather in Paris?", "run_key": "r", "round": 1,
                                           "api_pool": WEATHER_POOL, "previous_attempts": []})
    assert out["usage"]["api"]["calls"] == only_attempt(out)["api_calls"]
    return only_attempt(out)


def system_of(model: ScriptedChatModel, i: int) -> str:
    msg = model.calls[i]["messages"][0]
    assert isinstance(msg, SystemMessage)
    return str(msg.content)


def test_planner_caller_summarizer_each_get_their_own_prompt_and_tools() -> None:
    planner = ScriptedChatModel(replies=[
        ai(f"I should call {CURRENT} for Paris. Next: caller"),
        ai("The weather is known now. Next: summarizer"),
    ])
    first = call(CURRENT, city="Paris")
    caller = ScriptedChatModel(replies=[ai("", first)])
    summarizer = ScriptedChatModel(replies=[ai("It is sunny in Paris.")])
    deps = make_deps(planner, caller, summarizer)
    attempt = solve(deps)
    assert attempt["finish_type"] == "give_answer" and attempt["answer"] == "It is sunny in Paris."
    assert attempt["mode"] == "umi" and attempt["round"] == 1 and attempt["api_calls"] == 1
    assert len(planner.calls) == 2 and len(caller.calls) == 1 and len(summarizer.calls) == 1
    solver = deps.models.for_role("solver")
    assert isinstance(solver, ScriptedChatModel) and solver.calls == []
    # planner: the functions' descriptions with parameters, the decision format; no tools bound
    p0 = system_of(planner, 0)
    assert CURRENT in p0 and FORECAST in p0 and "city (string)" in p0 and "Next: caller" in p0
    assert planner.calls[0]["tools"] == [] and "first step" in p0
    # caller: the planner's rationale as the thought, the pooled APIs bound (no Finish)
    c0 = system_of(caller, 0)
    assert f"I should call {CURRENT} for Paris." in c0 and caller.calls[0]["tools"] == [CURRENT, FORECAST]
    assert caller.calls[0]["messages"][1].content == "Weather in Paris?"
    # the second planner call sees the action and its observation in the history
    p1 = system_of(planner, 1)
    assert f"Action: {CURRENT}" in p1 and "Observation" in p1 and "temperature" in p1
    # summarizer: the history and the last thought
    s0 = system_of(summarizer, 0)
    assert "temperature" in s0 and "The weather is known now." in s0 and summarizer.calls[0]["tools"] == []
    # one tree node per step: [planner, caller, tool], then [planner, summarizer]
    step1, step2 = node(attempt, 1), node(attempt, 2)
    assert [(m["role"], m.get("name")) for m in step1["messages"]] == [
        ("assistant", "planner"), ("assistant", "caller"), ("tool", CURRENT)]
    assert [(m["role"], m.get("name")) for m in step2["messages"]] == [("assistant", "planner"), ("assistant", "summarizer")]
    assert step2["status"] == "answer"
    assert deps.signals.tokens("r") > 0


def test_planner_give_up_backtracks_with_a_diversity_prompt() -> None:
    planner = ScriptedChatModel(replies=[
        ai("Call the current weather API. Next: caller"),
        ai(f"{CURRENT} gives nothing useful for this query. Next: give up"),
        ai("Try the forecast API instead. Next: caller"),
        ai("Done. Next: conclusion"),
    ])
    caller = ScriptedChatModel(replies=[ai("", call(CURRENT, city="Paris")), ai("", call(FORECAST, city="Paris"))])
    summarizer = ScriptedChatModel(replies=[ai("Sunny tomorrow.")])
    attempt = solve(make_deps(planner, caller, summarizer))
    assert attempt["finish_type"] == "give_answer" and attempt["answer"] == "Sunny tomorrow."
    # step 1 (current) → step 2 (give up) closed both; the root got a second child
    assert node(attempt, 0)["children"] == [1, 3]
    assert node(attempt, 2)["status"] == "given_up" and node(attempt, 1)["status"] == "dead"
    assert node(attempt, 3)["messages"][0]["name"] == "diversity_prompt"
    third = system_of(planner, 2)
    assert "not the first time" in third and CURRENT in third and "Paris" in third
    assert "Observation" not in third  # the abandoned branch is not in the history
    assert caller.calls[1]["tools"] == [CURRENT, FORECAST]


def test_planner_give_up_everywhere_exhausts_the_tree() -> None:
    planner = ScriptedChatModel(responder=lambda m, t: ai(f"{FORECAST} is broken. Next: Give Up."))
    caller = ScriptedChatModel(replies=[])
    summarizer = ScriptedChatModel(replies=[])
    attempt = solve(make_deps(planner, caller, summarizer))
    assert attempt["finish_type"] == "give_up" and attempt["reason"].startswith("all branches exhausted")
    assert attempt["failed_functions"] == [FORECAST] and attempt["failed_api_ids"] == ["Weather/weatherly/forecast"]
    assert len(planner.calls) == 2 and caller.calls == []  # width 2 at the root


def test_unparseable_planner_goes_to_the_caller_with_a_note() -> None:
    planner = ScriptedChatModel(replies=[ai("Hmm, the current weather would help."), ai("Next: summarizer")])
    caller = ScriptedChatModel(replies=[ai("", call(CURRENT, city="Paris"), call(FORECAST, city="Paris"))])
    summarizer = ScriptedChatModel(replies=[ai("Sunny.")])
    attempt = solve(make_deps(planner, caller, summarizer))
    step1 = node(attempt, 1)
    assert "no 'Next:' decision" in step1["note"]
    assert [c["status"] for c in step1["calls"]] == ["ok", "not_executed"]  # one call per step
    assert attempt["api_calls"] == 1 and attempt["answer"] == "Sunny."


def test_caller_without_a_call_is_noted_and_the_planner_continues() -> None:
    planner = ScriptedChatModel(replies=[ai("Next: caller"), ai("Nothing worked. Next: summarizer")])
    caller = ScriptedChatModel(replies=[AIMessage(content="I cannot.")])
    summarizer = ScriptedChatModel(replies=[ai("Sorry, no data.")])
    attempt = solve(make_deps(planner, caller, summarizer))
    assert node(attempt, 1)["messages"][-1]["name"] == "nudge"
    assert "The caller made no function call" in system_of(planner, 1)
    assert attempt["finish_type"] == "give_answer" and attempt["api_calls"] == 0


@pytest.mark.parametrize(("text", "decision"), [
    ("I will call it. Next: caller", "caller"),
    ("next: Caller.", "caller"),
    ("All set.\nNext: conclusion", "summarizer"),
    ("**Next:** Summarizer", "summarizer"),
    ("It cannot be done. Next: give up", "give_up"),
    ("Next: Give_Up", "give_up"),
    ("Next: caller ... on reflection, Next: give up", "give_up"),
])
def test_parse_next(text: str, decision: str) -> None:
    assert parse_next(text) == (decision, "")


def test_parse_next_fallback() -> None:
    decision, note = parse_next("Let us look at the weather.")
    assert decision == "caller" and note


# ------------------------------------------------------------------------------------------ the planner's decisions
def planner_state(*messages: Any, failed: tuple[str, ...] = (), prior: tuple[Any, ...] = ()) -> SolverState:
    """A solve whose current node is one step holding `messages` (a planner step, its caller's call, observations)."""
    nodes, child = add_child(new_tree(), 0, list(messages))
    return cast(SolverState, {"nodes": nodes, "current": child, "failed_seen": list(failed),
                              "prior_messages": list(prior)})


def test_the_planners_decisions_follow_the_steps_state() -> None:
    """Held to a grammar, the planner may take only what the protocol's state allows (nodes/solver/umi.py
    `planner_decisions`): the caller before any observation; the summarizer once there is something to answer from;
    give up once a call failed or the query limit's note says to end; with nothing to call, no caller."""
    deps = make_deps(ScriptedChatModel(), ScriptedChatModel(), ScriptedChatModel())
    offered = {CURRENT: "", FORECAST: ""}
    acted = [AIMessage(content="Call it. Next: caller", name="planner"),
             AIMessage(content="", tool_calls=[{"name": CURRENT, "args": {"city": "Paris"}, "id": "c1"}])]
    ok = ToolMessage(content='{"temperature": 21}', tool_call_id="c1", name=CURRENT)
    failed = ToolMessage(content="error: unknown city", tool_call_id="c1", name=CURRENT, status="error")
    assert planner_decisions(deps, cast(SolverState, {"nodes": new_tree(), "current": 0, "failed_seen": []}),
                             offered) == ("caller",)
    assert planner_decisions(deps, planner_state(*acted, ok), offered) == ("caller", "summarizer")
    assert planner_decisions(deps, planner_state(*acted, failed), offered) == ("caller", "summarizer", "give_up")
    assert planner_decisions(deps, planner_state(failed=(CURRENT,)), offered) == ("caller", "give_up")
    assert planner_decisions(deps, planner_state(prior=(HumanMessage("Hi"),)), offered) == ("caller", "summarizer")
    ending = HumanMessage(content=QUERY_LIMIT, name=QUERY_LIMIT_NOTE)
    assert planner_decisions(deps, planner_state(*acted, ok, ending), offered) == DECISIONS
    assert planner_decisions(deps, planner_state(), {}) == ("summarizer", "give_up")
    asking = make_deps(ScriptedChatModel(), ScriptedChatModel(), ScriptedChatModel(), ask_user=True)
    assert planner_decisions(asking, planner_state(), {}) == ("caller",)
    # the grammar offers exactly those, in the profile's words
    assert '( "caller" )' in planner_grammar("default", ("caller",))
    assert '( "caller" | "conclusion" ) "."' in planner_grammar("alpha_umi", ("caller", "summarizer"))
