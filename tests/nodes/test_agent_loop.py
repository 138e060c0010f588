"""The generic agent loop: in-band answers to bad calls, limits, handlers of each role, re-activation."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, cast

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langgraph_anytool.catalog import Catalog, Category
from langgraph_anytool.catalog.parse import parse_tool
from langgraph_anytool.config import AnyToolConfig
from langgraph_anytool.graphs.agent_step import build_agent_step
from langgraph_anytool.models.llm import ModelSet
from langgraph_anytool.nodes.agents import CallContext, FunctionResult, copy_record, new_agent_record
from langgraph_anytool.nodes.category_agent import REACTIVATE_PROMPT as CATEGORY_REACTIVATE
from langgraph_anytool.nodes.meta_agent import REACTIVATE_PROMPT as META_REACTIVATE
from langgraph_anytool.nodes.reflection import reactivated
from langgraph_anytool.nodes.tool_agent import REACTIVATE_PROMPT as TOOL_REACTIVATE
from langgraph_anytool.nodes.tool_agent import parse_solvable
from langgraph_anytool.nodes.tool_agent.handlers import check_if_request_solvable
from langgraph_anytool.runtime import Deps, RunSignals
from langgraph_anytool.state import AgentInput, AgentRecord, merge_usage
from langgraph_anytool.tools.agent_functions import NoArgs
from tests.fakes import ScriptedChatModel, ai, call
from tests.graph_world import scope_of

# ------------------------------------------------------------------ helpers (also used by test_retriever)
Plan = Mapping[str, Any]  # category -> tool -> [api names]


def make_catalog(plan: Plan) -> Catalog:
    """A small catalog: every API takes one required `q` parameter."""
    cats = []
    for cat, tools in plan.items():
        parsed = tuple(
            parse_tool({"tool_name": tool, "tool_description": f"{tool} of {cat}",
                        "api_list": [{"name": a, "description": f"{a} from {tool}",
                                      "required_parameters": [{"name": "q", "type": "STRING", "description": "q"}]}
                                     for a in apis]},
                       category=cat, source=f"test:{cat}/{tool}")
            for tool, apis in tools.items())
        cats.append(Category(name=cat, description=cat, tools=parsed))
    return Catalog(cats, name="test")


SMALL_PLAN: Plan = {
    "Finance": {"Stocks API": ["Quote", "History"], "FX Rates": ["Convert", "Latest"], "Crypto Prices": ["Price"],
                "Bank Holidays": ["List"], "Tax Calc": ["Income Tax"], "Loan Calc": ["Monthly Payment"]},
    "Weather": {"Weather Now": ["Current", "Forecast"], "Air Quality": ["AQI"], "Pollen": ["Count"],
                "Storms": ["Alerts"], "Tides": ["High Tide"], "Sun": ["Sunrise"]},
    "Small": {"Jokes": ["Random Joke", "Joke By Id"], "Quotes": ["Quote Of The Day"]},
}


def turn(messages: list[BaseMessage]) -> int:
    """The number of model turns already in the agent's history."""
    return sum(isinstance(m, AIMessage) for m in messages)


Step = AIMessage | Callable[[list[BaseMessage]], AIMessage]


class Script:
    """A responder: per agent scope, the reply of each turn (finish_search once the script runs out)."""

    def __init__(self, plan: Mapping[str, list[Step]], solvable: Callable[[str], str] | None = None) -> None:
        self.plan = plan
        self.solvable = solvable or (lambda prompt: "Unsolvable: not enough")
        self.scopes: list[str] = []

    def __call__(self, messages: list[BaseMessage], tools: list[str], meta: Mapping[str, Any]) -> AIMessage:
        scope = scope_of(messages, tools, meta)
        self.scopes.append(scope)
        if scope == "solvable":
            return ai(self.solvable(str(messages[-1].content)))
        steps = self.plan.get(scope, [])
        n = turn(messages)
        if n >= len(steps):
            return ai("done", call("finish_search"))
        step = steps[n]
        return step if isinstance(step, AIMessage) else step(messages)


def make_deps(catalog: Catalog, model: ScriptedChatModel, solvable_model: ScriptedChatModel | None = None,
              **cfg: Any) -> Deps:
    cfg.setdefault("seed_with_search", False)
    by_role = {"solvable": solvable_model} if solvable_model is not None else {}
    return Deps(catalog=catalog, models=ModelSet(default=model, by_role=by_role), executor=cast(Any, None),
                config=AnyToolConfig(**cfg), signals=RunSignals())


def payload(record: AgentRecord, query: str = "q", pool: list[str] | None = None, run_key: str = "run",
            round_: int = 0, tick: int = 1) -> AgentInput:
    return {"query": query, "run_key": run_key, "round": round_, "tick": tick, "agent": record, "pool": pool or []}


def assert_calls_answered(messages: list[BaseMessage]) -> None:
    """Every tool call of an AIMessage is answered by a ToolMessage (same id) before the next AIMessage."""
    pending: set[str] = set()
    for m in messages:
        if isinstance(m, AIMessage):
            assert not pending, f"unanswered tool calls {pending}"
            pending = {tc["id"] or "" for tc in m.tool_calls} | {tc["id"] or "" for tc in m.invalid_tool_calls}
        elif isinstance(m, ToolMessage):
            assert m.tool_call_id in pending, f"ToolMessage for unknown call {m.tool_call_id}"
            pending.discard(m.tool_call_id)
    assert not pending, f"unanswered tool calls {pending}"


def tool_texts(record: AgentRecord) -> list[str]:
    return [str(m.content) for m in record["messages"] if isinstance(m, ToolMessage)]


def run_loop(level: str, record: AgentRecord, deps: Deps, **kw: Any) -> dict[str, Any]:
    """One activation, step by step (what the dispatcher does): the step subgraph runs while the agent is pending
    again after its step; outputs are merged as the parent graph's reducers would, and each step's payload has the
    pool as of its start (the given pool plus the earlier steps' additions)."""
    step = build_agent_step(level, deps)
    out: dict[str, Any] = {"agents": {}}
    adds: list[Any] = []
    current = record
    pool = list(kw.pop("pool", None) or [])
    for tick in range(1, 200):
        more = step.invoke(payload(current, tick=tick, pool=[*pool, *(e["api_id"] for e in adds)], **kw))
        adds += (more.get("api_pool") or {}).get("add", [])
        out = {**out, **more, "agents": {**out["agents"], **more["agents"]},
               "usage": merge_usage(out.get("usage"), more.get("usage"))}
        current = more["agents"][record["id"]]
        if current["status"] != "pending":
            break
    out.pop("api_pool", None)
    if adds:
        out["api_pool"] = {"add": adds, "cap": deps.config.max_api_pool}
    return out


# ------------------------------------------------------------------ tests
@pytest.fixture
def catalog() -> Catalog:
    return make_catalog(SMALL_PLAN)


def test_bad_calls_are_answered_in_band_and_counted(catalog: Catalog) -> None:
    bad_json = AIMessage(content="", invalid_tool_calls=[
        {"type": "invalid_tool_call", "name": "finish_search", "args": "{oops", "id": "bad1", "error": "bad JSON"}])
    script = Script({"meta": [
        ai("", call("search_everything", q="x"), call("create_agent_category_level", category="Finance"),
           call("get_tools_in_category")),
        ai("Finance looks right."),  # no function call
        bad_json,
        ai("", call("get_tools_descriptions", category_name="Finance", tool_names="FX Rates")),  # one name → list
    ]})
    model = ScriptedChatModel(responder=script)
    out = run_loop("meta", new_agent_record("meta", "meta"), make_deps(catalog, model))
    rec = out["agents"]["meta"]
    assert rec["status"] == "finished" and rec["end_reason"] == "finish_search"
    assert rec["invalid_calls"] == 5  # unknown function, wrong argument name, missing argument, no call, bad JSON
    texts = tool_texts(rec)
    assert "unknown function 'search_everything'" in texts[0] and "create_agent_category_level(category_name)" in texts[0]
    assert "unknown argument 'category'" in texts[1] and "missing argument 'category_name'" in texts[1]
    assert "missing argument 'category_name'" in texts[2]
    assert "not valid JSON" in texts[3]
    assert '"FX Rates": "FX Rates of Finance"' in texts[4]
    nudges = [m for m in rec["messages"] if isinstance(m, HumanMessage) and "No function was called" in str(m.content)]
    assert len(nudges) == 1
    assert_calls_answered(rec["messages"])
    assert rec["steps"] == len(model.calls) == 5 and rec["activations"] == 1
    assert set(model.calls[0]["tools"]) == {"get_tools_in_category", "get_tools_descriptions",
                                            "create_agent_category_level", "finish_search"}
    assert out["usage"]["meta"]["model_calls"] == 5 and "api_pool" not in out


def test_step_limit_finishes_like_the_paper(catalog: Catalog) -> None:
    model = ScriptedChatModel(responder=lambda m, t: ai("", call("get_tools_in_category", category_name="Small")))
    deps = make_deps(catalog, model, agent_step_limit=3)
    rec = run_loop("meta", new_agent_record("meta", "meta"), deps)["agents"]["meta"]
    assert (rec["status"], rec["end_reason"], rec["steps"]) == ("finished", "step_limit", 3)
    assert_calls_answered(rec["messages"])
    assert deps.signals.tokens("run") == rec["tokens"] > 0


def test_calls_after_finish_are_answered_not_executed(catalog: Catalog) -> None:
    script = Script({"meta": [ai("", call("finish_search"), call("create_agent_category_level",
                                                                   category_name="Finance"))]})
    out = run_loop("meta", new_agent_record("meta", "meta"), make_deps(catalog, ScriptedChatModel(responder=script)))
    rec = out["agents"]["meta"]
    assert rec["status"] == "finished" and rec["children"] == [] and set(out["agents"]) == {"meta"}
    assert "Not executed" in tool_texts(rec)[1]
    assert_calls_answered(rec["messages"])


def test_meta_spawns_categories_refuses_duplicates_and_unknowns(catalog: Catalog) -> None:
    script = Script({"meta": [
        ai("", call("create_agent_category_level", category_name="finance"),
           call("create_agent_category_level", category_name="Small")),
        ai("", call("create_agent_category_level", category_name="Finance"),
           call("create_agent_category_level", category_name="Wether")),
    ]})
    out = run_loop("meta", new_agent_record("meta", "meta"), make_deps(catalog, ScriptedChatModel(responder=script)))
    agents = out["agents"]
    assert agents["meta"]["children"] == ["meta/Finance", "meta/Small"]
    fin, small, small_tool = agents["meta/Finance"], agents["meta/Small"], agents["meta/Small/t1"]
    assert (fin["level"], fin["parent"], fin["category"], fin["status"]) == ("category", "meta", "Finance", "pending")
    # a category with ≤ max_tools_per_agent tools: finished without a model call, one tool agent for all
    assert (small["status"], small["end_reason"], small["steps"]) == ("finished", "small_category", 0)
    assert small["children"] == ["meta/Small/t1"]
    assert (small_tool["level"], small_tool["parent"], small_tool["status"]) == ("tool", "meta/Small", "pending")
    assert small_tool["tools"] == ["Jokes", "Quotes"]
    texts = tool_texts(agents["meta"])
    assert "already exists" in texts[2] and "Did you mean: Weather" in texts[3]
    assert agents["meta"]["invalid_calls"] == 0  # refusals are answers, not invalid calls


def test_category_agent_assigns_tools_with_limits(catalog: Catalog) -> None:
    cat = new_agent_record("meta/Finance", "category", parent="meta", category="Finance")
    script = Script({"category:Finance": [
        ai("", call("get_tools_in_category", category_name="Weather")),
        ai("", call("get_tools_in_category", category_name="Finance")),
        ai("", call("create_agent_tool_level", tool_names=["Stocks API", "FX Rates"]),
           call("create_agent_tool_level", tool_names=["fx rates", "Crypto Prices"]),
           call("create_agent_tool_level", tool_names=["Stock API"]),
           call("create_agent_tool_level", tool_names=["Crypto Prices", "Bank Holidays", "Tax Calc"])),
    ]})
    deps = make_deps(catalog, ScriptedChatModel(responder=script), max_tools_per_agent=2)
    agents = run_loop("category", cat, deps)["agents"]
    rec = agents["meta/Finance"]
    texts = tool_texts(rec)
    assert "you search the category 'Finance' only" in texts[0]
    assert '"Stocks API"' in texts[1] and '"Loan Calc"' in texts[1]
    assert texts[2].startswith("Created tool agent meta/Finance/t1")
    assert "already assigned to another tool agent: FX Rates" in texts[3] and '"Crypto Prices"' in texts[3]
    assert "no tool named 'Stock API'" in texts[4] and "Stocks API" in texts[4]
    assert "at most 2 tools per agent" in texts[5]
    assert rec["children"] == ["meta/Finance/t1"] and rec["tools"] == ["Stocks API", "FX Rates"]
    assert agents["meta/Finance/t1"]["tools"] == ["Stocks API", "FX Rates"]
    assert agents["meta/Finance/t1"]["status"] == "pending" and rec["status"] == "finished"


def test_tool_agent_browses_only_its_tools_and_fills_the_pool(catalog: Catalog) -> None:
    rec = new_agent_record("meta/Finance/t1", "tool", parent="meta/Finance", category="Finance",
                           tools=["Stocks API", "FX Rates"])
    stocks_quote = catalog.find_api("Stocks API", "Quote").id
    script = Script({"tool:Stocks API, FX Rates": [
        ai("", call("get_apis_in_tool", tool_name="Weather Now"), call("get_apis_in_tool", tool_name="FX Rates")),
        ai("", call("get_api_details", tool_name="FX Rates", api_name="Convert"),
           call("get_api_details", tool_name="FX Rates", api_name="Teleport")),
        ai("", call("add_apis_into_api_pool", apis=[
            {"tool_name": "FX Rates", "api_name": "Convert"}, {"tool_name": "Stocks API", "api_name": "Quote"},
            {"tool_name": "FX Rates", "api_name": "Nope"}, {"tool_name": "Tides", "api_name": "High Tide"},
            {"tool_name": "FX Rates", "api_name": "Latest"}]), call("check_if_request_solvable")),
    ]}, solvable=lambda prompt: "Unsolvable: no stock history" if "History" not in prompt else "Solvable")
    model = ScriptedChatModel(responder=script)
    out = run_loop("tool", rec, make_deps(catalog, model, max_api_pool=2), pool=[stocks_quote])
    agent = out["agents"][rec["id"]]
    texts = tool_texts(agent)
    assert "not one of your tools" in texts[0] and '"Convert"' in texts[1]
    assert '"required_parameters"' in texts[2] and "has no API 'Teleport'" in texts[3] and '"Latest"' in texts[3]
    added = texts[4]
    assert '"added": ["FX Rates: Convert"]' in added and '"already_in_pool": ["Stocks API: Quote"]' in added
    assert "pool is full (2 APIs)" in added and "no API 'Nope'" in added and "not one of your tools" in added
    assert texts[5] == "False: no stock history"
    assert [e["api"] for e in out["api_pool"]["add"]] == ["Convert"] and out["api_pool"]["cap"] == 2
    entry = out["api_pool"]["add"][0]
    assert entry["added_by"] == rec["id"] and entry["function_name"] == catalog.function_name(entry["api_id"])
    # the pool is full now: the agent is stopped before its next model call
    assert "solvable_round" not in out and (agent["status"], agent["end_reason"]) == ("stopped", "pool_full")
    # the solvable check saw the pool as this step sees it (payload pool + own additions)
    check_prompt = str(next(c for c in model.calls if not c["tools"])["messages"][-1].content)
    assert '"api": "Quote"' in check_prompt and '"api": "Convert"' in check_prompt
    assert out["usage"]["solvable"]["model_calls"] == 1 and out["usage"]["tool"]["model_calls"] == 3


def test_solvable_pool_stops_the_agent_and_signals_the_run(catalog: Catalog) -> None:
    rec = new_agent_record("meta/Small/t1", "tool", parent="meta/Small", category="Small", tools=["Jokes", "Quotes"])
    script = Script({"tool:Jokes, Quotes": [
        ai("", call("check_if_request_solvable")),  # empty pool: no model call
        ai("", call("add_apis_into_api_pool", apis=[{"tool_name": "Jokes", "api_name": "Random Joke"}]),
           call("check_if_request_solvable"), call("finish_search")),
    ]}, solvable=lambda prompt: "**Solvable** – the joke API covers it")
    deps = make_deps(catalog, ScriptedChatModel(responder=script))
    out = run_loop("tool", rec, deps, round_=2)
    agent = out["agents"][rec["id"]]
    assert (agent["status"], agent["end_reason"]) == ("stopped", "pool_solvable")
    texts = tool_texts(agent)
    assert texts[0].startswith("False: the API pool is empty") and texts[2].startswith("True")
    assert "Not executed" in texts[3]
    assert out["solvable_round"] == 2  # the run's stop signal, through state: the dispatcher stops the others


@pytest.mark.parametrize(
    ("text", "ok", "reason"),
    [
        ("Solvable", True, ""),
        ("  solvable.", True, ""),
        ("Unsolvable: no API gives tide times", False, "no API gives tide times"),
        ("The query is not solvable - missing weather data", False, "missing weather data"),
        ('{"solvable": false, "reason": "no prices"}', False, "no prices"),
        ('```json\n{"solvable": true}\n```', True, ""),
        ("True", True, ""),
        ("I am not sure.", False, "unclear judgement: I am not sure."),
        ("Unsure", True, ""),  # ToolBench's semantics: an Unsure check counts as solvable
        ('{"label": "Unsure", "reason": "maybe"}', True, ""),
        ("", False, "no judgement given"),
    ],
)
def test_parse_solvable(text: str, ok: bool, reason: str) -> None:
    assert parse_solvable(text) == (ok, reason)


def test_full_pool_and_budget_are_checked_before_each_call(catalog: Catalog) -> None:
    model = ScriptedChatModel(responder=lambda m, t: ai("", call("get_tools_in_category", category_name="Small")))
    deps = make_deps(catalog, model, max_api_pool=1)
    rec = run_loop("meta", new_agent_record("meta", "meta"), deps, pool=["x"])["agents"]["meta"]
    assert (rec["status"], rec["end_reason"], rec["steps"], rec["activations"]) == ("stopped", "pool_full", 0, 1)
    assert len(model.calls) == 0 and str(rec["messages"][0].content) == "Query: q"  # the query is kept for later
    # the budget a step checks is its payload's tally (the run's at dispatch), not the live one
    deps = make_deps(catalog, model, token_budget=2000)
    deps.signals.add_tokens("run", 5000)  # e.g. a sibling's reply in the same superstep: not seen
    step = build_agent_step("meta", deps)
    one = step.invoke({**payload(new_agent_record("meta", "meta")), "tally": {"tokens": 0, "cost": 0.0}})
    assert one["agents"]["meta"]["steps"] == 1 and one["agents"]["meta"]["status"] == "pending"
    spent = step.invoke({**payload(new_agent_record("meta", "meta")), "tally": {"tokens": 2000, "cost": 0.0}})
    assert (spent["agents"]["meta"]["status"], spent["agents"]["meta"]["end_reason"]) == ("stopped", "budget")
    # issue 21: the call about to be made counts (its prompt, estimated): with 1,990 of 2,000 tokens spent at
    # dispatch, no call fits, although the budget is not spent yet
    nearly = step.invoke({**payload(new_agent_record("meta", "meta")), "tally": {"tokens": 1990, "cost": 0.0}})
    assert (nearly["agents"]["meta"]["end_reason"], nearly["agents"]["meta"]["steps"]) == ("budget", 0)

    deps = make_deps(catalog, model, token_budget=1)
    rec = run_loop("meta", new_agent_record("meta", "meta"), deps)["agents"]["meta"]
    assert (rec["status"], rec["end_reason"], rec["steps"]) == ("stopped", "budget", 0)


def test_model_errors_stop_only_this_agent(catalog: Catalog) -> None:
    def boom(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        raise RuntimeError("provider down")

    rec = run_loop("meta", new_agent_record("meta", "meta"), make_deps(catalog, ScriptedChatModel(responder=boom)))
    assert rec["agents"]["meta"]["status"] == "stopped"
    assert rec["agents"]["meta"]["end_reason"].startswith("error: model call failed: RuntimeError: provider down")


def test_reactivation_keeps_the_history(catalog: Catalog) -> None:
    script = Script({"category:Finance": [ai("", call("create_agent_tool_level", tool_names=["Stocks API"])),
                                          ai("", call("get_tools_in_category", category_name="Finance"))]})
    deps = make_deps(catalog, ScriptedChatModel(responder=script), agent_step_limit=2)
    first = run_loop("category", new_agent_record("meta/Finance", "category", parent="meta", category="Finance"),
                     deps)["agents"]["meta/Finance"]
    assert first["end_reason"] == "step_limit" and first["children"] == ["meta/Finance/t1"]
    # what reflection does: append the re-activation prompt, set pending
    reason = "no stock history API"
    again = copy_record(first)
    again["messages"].append(HumanMessage(CATEGORY_REACTIVATE.format(reason=reason)))
    again = reactivated({again["id"]: again}, [again["id"]], ready=5)[again["id"]]
    script.plan = {"category:Finance": [*script.plan["category:Finance"],
                                        ai("", call("create_agent_tool_level", tool_names=["Stocks API"])),
                                        ai("", call("create_agent_tool_level", tool_names=["Crypto Prices"]))]}
    out = run_loop("category", again, make_deps(catalog, ScriptedChatModel(responder=script)), round_=1)
    rec = out["agents"]["meta/Finance"]
    assert rec["activations"] == 2 and rec["steps"] == 5 and rec["messages"][: len(first["messages"])] == first["messages"]
    assert str(rec["messages"][0].content).startswith("Query: q") and reason in str(rec["messages"][len(first["messages"])].content)
    assert "already assigned" in tool_texts(rec)[2]  # assignments survive re-activation
    assert rec["children"] == ["meta/Finance/t1", "meta/Finance/t2"] and set(out["agents"]) == {"meta/Finance",
                                                                                               "meta/Finance/t2"}
    assert rec["status"] == "finished" and rec["end_reason"] == "finish_search"


def test_reactivation_prompts_have_a_reason_slot() -> None:
    for template in (META_REACTIVATE, CATEGORY_REACTIVATE, TOOL_REACTIVATE):
        assert "<<R>>" in template.format(reason="<<R>>")


def test_solvable_check_skipped_once_the_step_is_over_budget(catalog: Catalog) -> None:
    model = ScriptedChatModel(responder=Script({}, solvable=lambda prompt: "Solvable"))
    deps = make_deps(catalog, model, token_budget=100)
    rec = new_agent_record("meta/Small/t1", "tool", parent="meta/Small", category="Small", tools=["Jokes"])
    pool = [catalog.find_api("Jokes", "Random Joke").id]
    # the step's view: the tally at dispatch plus its own usage so far (the live tally is a sibling's business)
    deps.signals.add_tokens("run", 1000)
    ctx = CallContext(deps, "q", "run", 0, 1, rec, pool, [], tally={"tokens": 60, "cost": 0.0},
                      usage={"tool": {"input_tokens": 30, "output_tokens": 10}})
    assert str(check_if_request_solvable(ctx, NoArgs())).startswith("Not checked: the run's token budget")
    assert model.calls == [] and not ctx.solvable
    deps = make_deps(catalog, model, token_budget=5000)  # room for the check's call (its prompt, estimated)
    deps.signals.add_tokens("run", 10_000)  # the live tally (a sibling's business) is not what the step checks
    ctx = CallContext(deps, "q", "run", 0, 1, rec, pool, [], tally={"tokens": 60, "cost": 0.0})
    result = check_if_request_solvable(ctx, NoArgs())
    assert isinstance(result, FunctionResult) and result.content.startswith("True") and ctx.solvable


def test_small_category_shortcut_uses_k_and_can_be_switched_off(catalog: Catalog) -> None:
    """A 2-tool category with K=1 gets a real category agent; K=5 takes the shortcut unless it is switched off."""
    script = Script({"meta": [ai("", call("create_agent_category_level", category_name="Small"))]})
    for cfg, shortcut in (({"max_tools_per_agent": 1}, False), ({"max_tools_per_agent": 5}, True),
                          ({"max_tools_per_agent": 5, "small_category_shortcut": False}, False)):
        deps = make_deps(catalog, ScriptedChatModel(responder=script), **cfg)
        agents = run_loop("meta", new_agent_record("meta", "meta"), deps)["agents"]
        small = agents["meta/Small"]
        assert (small["end_reason"] == "small_category") is shortcut, cfg
        assert ("meta/Small/t1" in agents) is shortcut


def test_get_api_details_takes_several_apis(catalog: Catalog) -> None:
    rec = new_agent_record("meta/Finance/t1", "tool", parent="meta/Finance", category="Finance", tools=["FX Rates"])
    script = Script({"tool:FX Rates": [ai("", call("get_api_details", tool_name="FX Rates",
                                                   api_names=["Convert", "Latest", "Teleport"]))]})
    agent = run_loop("tool", rec, make_deps(catalog, ScriptedChatModel(responder=script)))["agents"][rec["id"]]
    details = json.loads(tool_texts(agent)[0])
    assert [d.get("api_name") for d in details] == ["Convert", "Latest", "Teleport"]
    assert "required_parameters" in details[0] and "has no API 'Teleport'" in details[2]["error"]
    assert agent["invalid_calls"] == 0
