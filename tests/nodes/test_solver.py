"""The DFSDT / CoT solver subgraph: real tree, real backtracking, budgets, seeding (scripted models, no network)."""

from __future__ import annotations

import json
import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from langgraph_anytool.catalog import Api, Catalog, Category, Param, Tool
from langgraph_anytool.config import AnyToolConfig
from langgraph_anytool.graphs.solver import build_solver_graph
from langgraph_anytool.models.llm import ModelSet
from langgraph_anytool.nodes.solver import FinishError, parse_finish, resolve_failed, seed_messages
from langgraph_anytool.nodes.solver.tree import add_child, backtrack_target, new_tree
from langgraph_anytool.runtime import Deps, RunSignals
from langgraph_anytool.state import PoolEntry, SolverAttempt, merge_usage
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.fakes import ScriptedChatModel, ai, call

TOOLBENCH = Path(__file__).resolve().parents[2].parent / "shared" / "toolbench"


def _api(cat: str, tool_key: str, tool_name: str, key: str, name: str, desc: str,
         params: list[Param], template: Any) -> Api:
    return Api(id=f"{cat}/{tool_key}/{key}", name=name, tool_key=tool_key, tool_name=tool_name, category=cat,
               description=desc, params=tuple(params), template_response=template)


def make_catalog() -> Catalog:
    city = Param(name="city", type="string", description="City name", required=True)
    days = Param(name="days", type="integer", description="Number of days", required=False)
    current = _api("Weather", "weatherly", "Weatherly", "current", "Current weather", "Current weather of a city",
                   [city], {"temperature": "float", "condition": "str"})
    forecast = _api("Weather", "weatherly", "Weatherly", "forecast", "Forecast", "Daily forecast of a city",
                    [city, days], {"days": [{"date": "str", "high": "float", "_list_length": 2}]})
    amount = Param(name="amount", type="number", description="Amount", required=True)
    convert = _api("Finance", "fxer", "FXer", "convert", "Convert", "Convert currencies",
                   [amount, Param(name="to", type="string", required=True)], {"result": "float"})
    return Catalog([
        Category(name="Weather", tools=(Tool(key="weatherly", name="Weatherly", category="Weather",
                                             description="Weather data", apis=(current, forecast)),)),
        Category(name="Finance", tools=(Tool(key="fxer", name="FXer", category="Finance",
                                             description="Currency exchange", apis=(convert,)),)),
    ])


CAT = make_catalog()
CURRENT = CAT.function_name("Weather/weatherly/current")
FORECAST = CAT.function_name("Weather/weatherly/forecast")
CONVERT = CAT.function_name("Finance/fxer/convert")


def pool(*api_ids: str, catalog: Catalog = CAT) -> list[PoolEntry]:
    out: list[PoolEntry] = []
    for api_id in api_ids:
        api = catalog.api(api_id)
        out.append(PoolEntry(api_id=api_id, category=api.category, tool=api.tool_name, api=api.name,
                             function_name=catalog.function_name(api_id), added_by="test"))
    return out


WEATHER_POOL = pool("Weather/weatherly/current", "Weather/weatherly/forecast")


def make_deps(model: ScriptedChatModel, catalog: Catalog = CAT, cache: bool = False, **config: Any) -> Deps:
    cfg = AnyToolConfig(**config)
    executor = ApiExecutor.for_catalog(catalog, kind="template", cache_path=":memory:" if cache else None)
    return Deps(catalog=catalog, models=ModelSet(default=None, by_role={"solver": model}), executor=executor,
                config=cfg, signals=RunSignals())


def solve(deps: Deps, api_pool: list[PoolEntry] = WEATHER_POOL, previous: list[SolverAttempt] | None = None,
          query: str = "What is the weather in Paris?") -> dict[str, Any]:
    graph = build_solver_graph(deps)
    return graph.invoke({"query": query, "run_key": "run1", "round": 0, "api_pool": api_pool,
                         "previous_attempts": previous or []})


def finish(return_type: str, **kw: Any) -> dict[str, Any]:
    return call("Finish", return_type=return_type, **kw)


def only_attempt(out: dict[str, Any]) -> SolverAttempt:
    assert set(out) <= {"solver_attempts", "usage"}
    assert len(out["solver_attempts"]) == 1
    attempt: SolverAttempt = out["solver_attempts"][0]
    json.dumps(attempt)  # JSON-friendly throughout
    return attempt


def node(attempt: SolverAttempt, node_id: int) -> dict[str, Any]:
    found = [n for n in attempt["tree"] if n["id"] == node_id]
    assert len(found) == 1
    return found[0]


# ------------------------------------------------------------------------------------------ straight solve
def test_straight_solve_calls_the_api_then_answers() -> None:
    first = call(CURRENT, city="Paris")
    model = ScriptedChatModel(replies=[
        ai("I will look up the current weather.", first),
        ai("", finish("give_answer", final_answer="It is sunny in Paris.")),
    ])
    deps = make_deps(model)
    attempt = only_attempt(out := solve(deps))
    assert attempt["finish_type"] == "give_answer"
    assert attempt["answer"] == "It is sunny in Paris."
    assert attempt["attempt"] == 1 and attempt["mode"] == "dfsdt" and attempt["api_calls"] == 1
    # tree: root → step 1 (API call) → step 2 (Finish)
    assert [(n["id"], n["parent"], n["depth"]) for n in attempt["tree"]] == [(0, None, 0), (1, 0, 1), (2, 1, 2)]
    step1, step2 = node(attempt, 1), node(attempt, 2)
    assert step1["calls"][0]["api_id"] == "Weather/weatherly/current" and step1["calls"][0]["status"] == "ok"
    tool_msg = step1["messages"][1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == first["id"] and "temperature" in tool_msg["content"]
    assert step2["status"] == "answer" and step2["calls"][0]["status"] == "finish:give_answer"
    # convenience views: the node's function calls, and the calls that reached the executor
    assert step1["tool_calls"] == [{"name": CURRENT, "args": {"city": "Paris"}, "id": first["id"]}]
    assert step1["observations"] == [{"function": CURRENT, "api_id": "Weather/weatherly/current",
                                      "arguments": {"city": "Paris"}, "status": "ok", "cached": False}]
    assert step2["observations"] == [] and step2["tool_calls"][0]["name"] == "Finish"
    # the model saw the functions (bound and listed), and the observation in its second prompt
    assert model.calls[0]["tools"] == [CURRENT, FORECAST, "Finish"]
    system = model.calls[0]["messages"][0]
    assert isinstance(system, SystemMessage) and CURRENT in system.content and "calling functions" in system.content
    assert "What is the weather in Paris?" in model.calls[0]["messages"][1].content
    second = model.calls[1]["messages"]
    assert isinstance(second[-1], ToolMessage) and second[-1].tool_call_id == first["id"]
    # usage: this solve's delta
    usage = out["usage"]
    assert usage["solver"]["model_calls"] == 2 and usage["solver"]["input_tokens"] > 0
    assert usage["api"] == {"calls": 1, "cache_hits": 0, "errors": 0}
    assert deps.signals.tokens("run1") == usage["solver"]["input_tokens"] + usage["solver"]["output_tokens"]


def test_repeated_call_is_served_from_the_cache_and_counted() -> None:
    model = ScriptedChatModel(replies=[
        ai("", call(CURRENT, city="Paris")), ai("", call(CURRENT, city="Paris")),
        ai("", finish("give_answer", final_answer="Sunny.")),
    ])
    out = solve(make_deps(model, cache=True))
    attempt = only_attempt(out)
    assert [node(attempt, i)["calls"][0]["cached"] for i in (1, 2)] == [False, True]
    assert out["usage"]["api"] == {"calls": 2, "cache_hits": 1, "errors": 0} and attempt["api_calls"] == 2


def test_empty_pool_finishes_without_a_model_call() -> None:
    model = ScriptedChatModel(replies=[])
    attempt = only_attempt(solve(make_deps(model), api_pool=[]))
    assert attempt["finish_type"] == "no_apis" and model.calls == []


# ------------------------------------------------------------------------------------------ in-band errors
def test_hallucinated_function_and_bad_arguments_are_answered_in_band() -> None:
    bad_json = AIMessage(content="", invalid_tool_calls=[
        {"name": CURRENT, "args": '{"city": "Par', "id": "bad_1", "error": "unterminated string", "type": "invalid_tool_call"}])
    replies = [
        ai("", call("get_weather_everywhere", city="Paris")),  # hallucinated
        ai("", call(CONVERT, amount=3, to="EUR")),  # exists in the catalog, not in the pool
        bad_json,  # malformed JSON arguments
        ai("", call(CURRENT, days=2)),  # missing the required city
        ai("", call(CURRENT, city="Paris")),
        ai("", finish("give_answer", final_answer="Sunny.")),
    ]
    model = ScriptedChatModel(replies=replies)
    attempt = only_attempt(solve(make_deps(model, max_malformed_turns=5)))  # four faulty turns in a row
    assert attempt["finish_type"] == "give_answer" and attempt["answer"] == "Sunny."
    statuses = [node(attempt, i)["calls"][0]["status"] for i in range(1, 6)]
    assert statuses == ["unknown_function", "not_in_pool", "malformed_arguments", "invalid_arguments", "ok"]
    observed = [o["status"] for nd in attempt["tree"] for o in nd["observations"]]
    assert observed == ["invalid_arguments", "ok"]  # rejected calls never reached the executor
    assert attempt["api_calls"] == 2  # only the two calls that reached the executor
    # each error went back to the model as the answer to its call
    for i, reply in enumerate(replies[:4]):
        prompt = model.calls[i + 1]["messages"]
        answer = prompt[-1]
        assert isinstance(answer, ToolMessage)
        call_id = (reply.tool_calls or reply.invalid_tool_calls)[0]["id"]
        assert answer.tool_call_id == call_id
    assert "does not exist" in model.calls[1]["messages"][-1].content
    assert "not among the available functions" in model.calls[2]["messages"][-1].content
    assert "malformed arguments" in model.calls[3]["messages"][-1].content
    assert "city" in model.calls[4]["messages"][-1].content


def test_reply_without_a_call_gets_a_nudge_and_counts_as_a_step() -> None:
    model = ScriptedChatModel(replies=[ai("Let me think."), ai("", finish("give_answer", final_answer="ok"))])
    attempt = only_attempt(solve(make_deps(model)))
    step1 = node(attempt, 1)
    assert step1["depth"] == 1 and step1["messages"][-1]["role"] == "user" and step1["messages"][-1]["name"] == "nudge"
    assert isinstance(model.calls[1]["messages"][-1], HumanMessage)
    assert node(attempt, 2)["depth"] == 2


def test_finish_together_with_other_calls_is_not_accepted() -> None:
    model = ScriptedChatModel(replies=[
        ai("", call(CURRENT, city="Paris"), finish("give_answer", final_answer="guess")),
        ai("", finish("give_answer", final_answer="Sunny, 20 degrees.")),
    ])
    attempt = only_attempt(solve(make_deps(model)))
    step1 = node(attempt, 1)
    assert [c["status"] for c in step1["calls"]] == ["ok", "finish_rejected"]
    assert [m["role"] for m in step1["messages"]] == ["assistant", "tool", "tool"]
    assert attempt["answer"] == "Sunny, 20 degrees." and attempt["api_calls"] == 1


# ------------------------------------------------------------------------------------------ backtracking
def test_restart_backtracks_and_the_diversity_prompt_lists_the_earlier_action() -> None:
    first = call(CURRENT, city="Paris")
    model = ScriptedChatModel(replies=[
        ai("Try the current weather.", first),
        ai("", finish("give_up_and_restart", reason="current weather is useless", failed_functions=[CURRENT])),
        ai("Try the forecast instead.", call(FORECAST, city="Paris", days=1)),
        ai("", finish("give_answer", final_answer="Sunny tomorrow.")),
    ])
    attempt = only_attempt(solve(make_deps(model)))
    assert attempt["finish_type"] == "give_answer" and attempt["answer"] == "Sunny tomorrow."
    root = node(attempt, 0)
    assert root["children"] == [1, 3]  # two root children: the first branch was abandoned
    assert node(attempt, 2)["status"] == "given_up" and node(attempt, 2)["parent"] == 1
    assert node(attempt, 1)["status"] == "dead"
    assert node(attempt, 3)["parent"] == 0 and node(attempt, 4)["parent"] == 3
    # the third model call started again from the root, with the diversity prompt naming the first child's action
    third = model.calls[2]["messages"]
    assert not any(isinstance(m, ToolMessage) for m in third)
    diversity = third[-1]
    assert isinstance(diversity, HumanMessage) and diversity.name == "diversity_prompt"
    assert CURRENT in diversity.content and "Paris" in diversity.content
    # the diversity prompt is part of the new branch, so later steps keep seeing it
    assert node(attempt, 3)["messages"][0]["name"] == "diversity_prompt"
    assert attempt["failed_functions"] == [] and attempt["api_calls"] == 2


def test_depth_limit_backtracks_to_the_parent() -> None:
    model = ScriptedChatModel(replies=[
        ai("", call(CURRENT, city="Paris")),
        ai("", call(FORECAST, city="Paris")),  # depth 2 = limit: backtrack
        ai("", finish("give_answer", final_answer="Sunny.")),  # second child of step 1
    ])
    attempt = only_attempt(solve(make_deps(model, max_depth=4)))  # 2 turns × (action + action input)
    assert attempt["finish_type"] == "give_answer"
    assert node(attempt, 2)["status"] == "dead" and "depth limit" in node(attempt, 2)["note"]
    assert node(attempt, 1)["children"] == [2, 3]
    third = model.calls[2]["messages"]
    assert third[-1].name == "diversity_prompt" and FORECAST in third[-1].content
    # the dead branch's messages are not in the new prompt, the parent's are
    assert [m.tool_call_id for m in third if isinstance(m, ToolMessage)] == [node(attempt, 1)["calls"][0]["tool_call_id"]]


def test_width_exhaustion_gives_up_with_reason_and_failed_functions() -> None:
    model = ScriptedChatModel(replies=[
        ai("", finish("give_up_and_restart", reason="no luck", failed_functions=[CURRENT, "nonexistent_fn"])),
        ai("", finish("give_up_and_restart", reason="still nothing", failed_functions=[FORECAST])),
    ])
    attempt = only_attempt(solve(make_deps(model, dfsdt_width=2)))
    assert attempt["finish_type"] == "give_up"
    assert attempt["reason"].startswith("all branches exhausted") and "still nothing" in attempt["reason"]
    assert attempt["failed_functions"] == [CURRENT, FORECAST]  # the union; unknown names dropped
    assert attempt["failed_api_ids"] == ["Weather/weatherly/current", "Weather/weatherly/forecast"]
    assert node(attempt, 0)["children"] == [1, 2] and len(model.calls) == 2


# ------------------------------------------------------------------------------------------ budgets
def test_api_call_budget_is_a_hard_stop_then_one_finish_only_turn() -> None:
    """AnyTool A.1 / the authors' code: after the 10th API call the solver gets one turn with Finish alone."""
    n = 0

    def keep_calling(messages: list[Any], tools: list[str]) -> AIMessage:
        nonlocal n
        n += 1
        if tools == ["Finish"]:
            assert "used all 10 API calls" in str(messages[-1].content)
            return ai("", finish("give_answer", final_answer="Paris is 21°C."))
        return ai("", call(CURRENT, city=f"City{n}"))

    model = ScriptedChatModel(responder=keep_calling)
    attempt = only_attempt(out := solve(make_deps(model, max_depth=100)))
    assert attempt["finish_type"] == "give_answer" and attempt["answer"] == "Paris is 21°C."
    assert attempt["api_calls"] == 10 and out["usage"]["api"]["calls"] == 10  # no 11th call
    assert len(model.calls) == 11 and model.calls[-1]["tools"] == ["Finish"]
    assert max(nd["depth"] for nd in attempt["tree"]) == 11


def test_finish_only_turn_without_finish_ends_as_call_budget() -> None:
    model = ScriptedChatModel(responder=lambda m, t: ai("", call(CURRENT, city="Paris")))  # ignores the limit
    attempt = only_attempt(solve(make_deps(model, max_api_calls=2, max_depth=100)))
    assert attempt["finish_type"] == "call_budget" and attempt["api_calls"] == 2
    assert len(model.calls) == 3 and model.calls[-1]["tools"] == ["Finish"]
    last = node(attempt, 3)
    assert [c["status"] for c in last["calls"]] == ["not_executed"]  # refused: no call is left
    # a restart is not offered on the last turn: there are no calls left to restart with
    enum = model.calls[-1]["tool_schemas"][0]["function"]["parameters"]["properties"]["return_type"]["enum"]
    assert "give_up_and_restart" not in enum


def test_parallel_calls_over_the_budget_are_not_executed() -> None:
    model = ScriptedChatModel(replies=[ai("", *[call(CURRENT, city=f"C{i}") for i in range(4)]),
                                       ai("", finish("give_up", reason="out of calls"))])
    attempt = only_attempt(solve(make_deps(model, max_api_calls=3)))
    assert attempt["finish_type"] == "give_up" and attempt["api_calls"] == 3
    assert [c["status"] for c in node(attempt, 1)["calls"]] == ["ok", "ok", "ok", "not_executed"]
    assert len([m for m in node(attempt, 1)["messages"] if m["role"] == "tool"]) == 4


def test_token_budget_stops_before_the_next_model_call() -> None:
    model = ScriptedChatModel(replies=[ai("", call(CURRENT, city="Paris")), ai("", finish("give_answer", final_answer="x"))])
    deps = make_deps(model, token_budget=5)  # the first call's prompt alone is more than 5 tokens: not sent
    attempt = only_attempt(out := solve(deps))
    assert attempt["finish_type"] == "budget" and len(model.calls) == 0  # issue 21: counting the call to be made
    assert "solver" not in out["usage"] and "(estimated" in attempt["reason"]
    # a run already over budget makes no model call at all
    model2 = ScriptedChatModel(replies=[])
    deps2 = make_deps(model2, token_budget=100)
    deps2.signals.add_tokens("run1", 100)
    assert only_attempt(solve(deps2))["finish_type"] == "budget" and model2.calls == []


def test_model_call_cap_bounds_a_model_that_never_calls() -> None:
    model = ScriptedChatModel(responder=lambda messages, tools: ai("thinking..."))
    attempt = only_attempt(solve(make_deps(model, max_api_calls=1, max_depth=100, dfsdt_width=1,
                                           max_turns_without_call=100)))
    assert attempt["finish_type"] == "call_budget" and "model-call limit" in attempt["reason"]
    assert len(model.calls) == 4 * 1 + 10


def test_a_model_that_never_calls_ends_the_attempt_after_three_replies() -> None:
    """Issue 26: a reply without a function call is answered with a reminder, but three in a row
    (`max_turns_without_call`) end the attempt (finish type "no_calls"), not the model-call cap's 14 calls."""
    model = ScriptedChatModel(responder=lambda messages, tools: ai("thinking..."))
    attempt = only_attempt(solve(make_deps(model, max_api_calls=1, max_depth=100, dfsdt_width=1)))
    assert attempt["finish_type"] == "no_calls" and len(model.calls) == 3
    assert attempt["reason"].startswith("3 replies in a row without a function call (max_turns_without_call=3)")


def test_model_error_ends_the_solve_as_error() -> None:
    def boom(messages: list[Any], tools: list[str]) -> AIMessage:
        raise RuntimeError("provider down")

    attempt = only_attempt(solve(make_deps(ScriptedChatModel(responder=boom))))
    assert attempt["finish_type"] == "error" and "provider down" in attempt["reason"]


# ------------------------------------------------------------------------------------------ give up, CoT
def test_give_up_maps_failed_functions_to_api_ids() -> None:
    model = ScriptedChatModel(replies=[
        ai("", call(FORECAST, city="Paris")),
        ai("", finish("give_up", reason=f"{FORECAST} returns nothing useful",
                      failed_functions=f"{FORECAST}, made_up_function")),
    ])
    attempt = only_attempt(solve(make_deps(model)))
    assert attempt["finish_type"] == "give_up" and FORECAST in attempt["reason"]
    assert attempt["failed_functions"] == [FORECAST]
    assert attempt["failed_api_ids"] == ["Weather/weatherly/forecast"]
    assert node(attempt, 2)["status"] == "given_up"


def test_cot_has_one_chain_and_a_restart_ends_it() -> None:
    model = ScriptedChatModel(replies=[
        ai("", call(CURRENT, city="Paris")),
        ai("", finish("give_up_and_restart", reason="broken", failed_functions=[CURRENT])),
    ])
    attempt = only_attempt(solve(make_deps(model, solver="cot")))
    assert attempt["mode"] == "cot" and attempt["finish_type"] == "give_up" and attempt["reason"] == "broken"
    assert attempt["failed_api_ids"] == ["Weather/weatherly/current"]
    assert len(model.calls) == 2 and all(len(n["children"]) <= 1 for n in attempt["tree"])
    finish_schema = next(t for t in model.calls[0]["tool_schemas"] if t["function"]["name"] == "Finish")
    assert "give_up_and_restart" not in finish_schema["function"]["parameters"]["properties"]["return_type"]["enum"]


def test_cot_depth_limit_gives_up() -> None:
    model = ScriptedChatModel(responder=lambda m, t: ai("", call(CURRENT, city="Paris")))
    attempt = only_attempt(solve(make_deps(model, solver="cot", max_depth=6)))
    assert attempt["finish_type"] == "give_up" and "depth limit" in attempt["reason"] and len(model.calls) == 3


def test_depth_counts_toolllm_tree_nodes() -> None:
    """max_depth is ToolLLM's single_chain_max_step: a thought node per turn with text, action + action input per
    call. With 12, a chain of thought-and-call turns is cut after 4 turns (12 nodes), not 12 turns."""
    model = ScriptedChatModel(responder=lambda m, t: ai("Let me check.", call(CURRENT, city="Paris")))
    attempt = only_attempt(solve(make_deps(model, solver="cot", max_depth=12)))
    assert attempt["finish_type"] == "give_up" and len(model.calls) == 4


# ------------------------------------------------------------------------------------------ seeding
def _previous_tree() -> list[dict[str, Any]]:
    """A first attempt: a current-weather call, a convert call, a forecast call in one step, then give up."""
    model = ScriptedChatModel(replies=[
        ai("Current first.", call(CURRENT, city="Paris")),
        ai("Two more.", call(CONVERT, amount=1, to="EUR"), call(FORECAST, city="Paris")),
        ai("", finish("give_up", reason="forecast broken", failed_functions=[FORECAST])),
    ])
    full_pool = pool("Weather/weatherly/current", "Weather/weatherly/forecast", "Finance/fxer/convert")
    return only_attempt(solve(make_deps(model), api_pool=full_pool))["tree"]


def test_seed_messages_keep_the_chain_without_finish_and_without_pruned_calls() -> None:
    tree = _previous_tree()
    msgs = seed_messages(tree, keep_functions={CURRENT, CONVERT})
    kinds = [(type(m).__name__, [tc["name"] for tc in m.tool_calls] if isinstance(m, AIMessage) else None) for m in msgs]
    assert kinds == [("AIMessage", [CURRENT]), ("ToolMessage", None), ("AIMessage", [CONVERT]), ("ToolMessage", None)]
    assert msgs[2].content == "Two more."
    # every kept call is answered, and no answer is left without its call
    call_ids = {tc["id"] for m in msgs if isinstance(m, AIMessage) for tc in m.tool_calls}
    assert {m.tool_call_id for m in msgs if isinstance(m, ToolMessage)} == call_ids
    # when every call of a step is pruned the step leaves the history entirely
    only_current = seed_messages(tree, keep_functions={CURRENT})
    assert [type(m).__name__ for m in only_current] == ["AIMessage", "ToolMessage"]
    assert seed_messages([], keep_functions={CURRENT}) == []


def test_a_new_attempt_starts_from_the_previous_chain() -> None:
    tree = _previous_tree()
    previous = [SolverAttempt(attempt=1, round=0, mode="dfsdt", finish_type="give_up", answer="", reason="x",
                              failed_functions=[FORECAST], failed_api_ids=["Weather/weatherly/forecast"],
                              api_calls=3, tree=tree)]
    model = ScriptedChatModel(replies=[ai("", finish("give_answer", final_answer="20 degrees."))])
    new_pool = pool("Weather/weatherly/current", "Finance/fxer/convert")  # forecast was pruned
    attempt = only_attempt(solve(make_deps(model), api_pool=new_pool, previous=previous))
    assert attempt["attempt"] == 2 and attempt["finish_type"] == "give_answer"
    prompt = model.calls[0]["messages"]
    called = [tc["name"] for m in prompt if isinstance(m, AIMessage) for tc in m.tool_calls]
    assert called == [CURRENT, CONVERT]
    assert FORECAST not in model.calls[0]["tools"] and all(FORECAST not in str(m.content) for m in prompt[1:])
    root = node(attempt, 0)
    assert root["messages"][-1]["name"] == "seed_note" and len(root["messages"]) == 5


# ------------------------------------------------------------------------------------------ tree operations
def test_backtrack_target_finds_the_deepest_ancestor_with_room() -> None:
    nodes = new_tree()
    nodes, a = add_child(nodes, 0)
    nodes, b = add_child(nodes, a)
    # depth-limit style: close b only → a has room
    out, target = backtrack_target(nodes, b, width=2)
    assert target == a and out[b]["status"] == "dead" and nodes[b]["status"] == "open"  # inputs untouched
    # restart style: b's parent step a is closed too → the root has room
    out, target = backtrack_target(nodes, b, width=2, close_parent=True)
    assert target == 0 and out[a]["status"] == "dead"
    # the root full of closed children: exhausted
    out, c = add_child(out, 0)
    out, target = backtrack_target(out, c, width=2)
    assert target is None and out[0]["status"] == "dead"
    # width 1 (CoT): nothing to go back to
    assert backtrack_target(nodes, b, width=1)[1] is None


# ------------------------------------------------------------------------------------------ Finish parsing
def test_parse_finish_validates_and_normalises() -> None:
    fc = parse_finish({"return_type": "Give-Up", "reason": "r", "failed_functions": "a, b"})
    assert fc.return_type == "give_up" and fc.failed_functions == ["a", "b"]
    with pytest.raises(FinishError, match="return_type"):
        parse_finish({"return_type": "done"})
    with pytest.raises(FinishError, match="final_answer"):
        parse_finish({"return_type": "give_answer", "final_answer": "  "})
    names, ids = resolve_failed(CAT, [CURRENT, "Weather/weatherly/forecast", "nope", CURRENT])
    assert names == [CURRENT, "Weather/weatherly/forecast"]
    assert ids == ["Weather/weatherly/current", "Weather/weatherly/forecast"]


# ------------------------------------------------------------------------------------------ ToolBench
@pytest.mark.toolbench
def test_solve_on_the_toolbench_catalog_with_template_simulation() -> None:
    if not (TOOLBENCH / "tools").is_dir():
        pytest.skip("../shared/toolbench is absent")
    catalog = Catalog.from_toolbench(TOOLBENCH / "tools")
    api = next(a for a in catalog if a.template_response and not a.required_params)
    fn = catalog.function_name(api.id)
    model = ScriptedChatModel(replies=[ai("", call(fn)), ai("", finish("give_answer", final_answer="done"))])
    attempt = only_attempt(solve(make_deps(model, catalog=catalog), api_pool=pool(api.id, catalog=catalog),
                                 query=f"Use {api.name}"))
    assert attempt["finish_type"] == "give_answer" and node(attempt, 1)["calls"][0]["status"] == "ok"
    assert model.calls[0]["tools"] == [fn, "Finish"]


# ------------------------------------------------------------------------------------------ as a parent's node
class _Parent(TypedDict):
    query: str
    solver_attempts: Annotated[list[SolverAttempt], operator.add]
    usage: Annotated[dict[str, Any], merge_usage]


def test_runs_as_a_node_of_a_checkpointed_parent_graph() -> None:
    model = ScriptedChatModel(replies=[
        ai("", call(CURRENT, city="Paris")), ai("", finish("give_up", reason="no", failed_functions=[CURRENT])),
        ai("", finish("give_answer", final_answer="Sunny.")),
    ])
    deps = make_deps(model)

    def dispatch(state: _Parent) -> Send:
        return Send("solver", {"query": state["query"], "run_key": "run1", "round": 0, "api_pool": WEATHER_POOL,
                               "previous_attempts": list(state.get("solver_attempts") or [])})

    builder = StateGraph(_Parent)
    builder.add_node("solver", build_solver_graph(deps))
    builder.add_conditional_edges(START, dispatch, ["solver"])
    builder.add_edge("solver", END)
    parent = builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    parent.invoke({"query": "Weather in Paris?", "solver_attempts": [], "usage": {}}, config)
    out = parent.invoke({"query": "Weather in Paris?", "solver_attempts": [], "usage": {}}, config)
    attempts = out["solver_attempts"]
    assert [a["attempt"] for a in attempts] == [1, 2]
    assert [a["finish_type"] for a in attempts] == ["give_up", "give_answer"]
    # the second solve was seeded with the first one's chain: the current-weather call and its answer
    seeded = [type(m).__name__ for m in model.calls[2]["messages"][2:]]
    assert seeded == ["AIMessage", "ToolMessage", "HumanMessage"]
    assert out["usage"]["solver"]["model_calls"] == 3 and out["usage"]["api"]["calls"] == 1
    snapshot = parent.get_state(config)
    assert snapshot.values["solver_attempts"][1]["tree"][0]["messages"][0]["role"] == "assistant"
