"""Judge rules and parsing, reflection routing order, reducers, config and model resolution."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from langgraph_anytool.config import AnyToolConfig, ConfigError
from langgraph_anytool.models.llm import ModelNotConfiguredError, ModelSet, message_usage, total_tokens
from langgraph_anytool.nodes.judge import rule_verdict
from langgraph_anytool.nodes.reflection import failure_reason, make_reflect, mentioned_apis, plan_reactivation
from langgraph_anytool.state import (
    AgentRecord,
    PoolEntry,
    SolverAttempt,
    add_unique,
    extend,
    latest_round,
    merge_agents,
    merge_usage,
    update_pool,
)
from tests.fakes import ScriptedChatModel, ai


def attempt(finish: str = "give_answer", answer: str = "", reason: str = "", failed: list[str] | None = None) -> SolverAttempt:
    return {"attempt": 1, "round": 0, "mode": "dfsdt", "finish_type": finish, "answer": answer, "reason": reason,
            "failed_functions": [], "failed_api_ids": failed or [], "api_calls": 0, "tree": []}


def agent(id_: str, level: str, status: str) -> AgentRecord:
    return {"id": id_, "level": level, "parent": None, "category": None, "tools": [], "status": status,  # type: ignore[typeddict-item]
            "steps": 1, "activations": 1, "activation_calls": 3, "ready": 0, "messages": [], "children": [],
            "tokens": 0, "invalid_calls": 0, "end_reason": "step_limit" if status == "finished" else "stop_signal"}


RUNTIME: Any = Runtime(context=None)


def deps_for(model: Any = None, **cfg: Any) -> Any:
    from langgraph_anytool.catalog import Catalog
    from langgraph_anytool.runtime import Deps

    return Deps(catalog=Catalog([], name="empty"), models=ModelSet(default=model, by_role={}), executor=None,  # type: ignore[arg-type]
                config=AnyToolConfig(**cfg))


def entry(api_id: str) -> PoolEntry:
    return {"api_id": api_id, "category": "c", "tool": "t", "api": api_id, "function_name": api_id, "added_by": "x"}


# ------------------------------------------------------------------ judge
@pytest.mark.parametrize(
    ("att", "label"),
    [
        (attempt("give_up", reason="weather_for_x failed"), "Unsolved"),
        (attempt("give_answer", answer="   "), "Unsolved"),
        (attempt("call_budget", reason=""), "Unsolved"),
    ],
)
def test_rule_verdicts_catch_failures(att: SolverAttempt, label: str) -> None:
    verdict = rule_verdict(att)
    assert verdict is not None and verdict["label"] == label and verdict["by"] == "rule" and verdict["reason"]


def test_rule_verdict_defers_real_answers_to_the_model() -> None:
    assert rule_verdict(attempt("give_answer", answer="It is 21°C in Paris.")) is None
    # an apology is the model's call, as in ToolEval (no phrase list decides it)
    assert rule_verdict(attempt("give_answer", answer="Unfortunately the museum is closed today.")) is None


def test_judge_runs_toolevals_two_stages_and_sees_api_outputs() -> None:
    """Stage 1 on the answer; on Unsure, stage 2 on the whole solve, whose API outputs (truncated) it sees."""
    from langgraph_anytool.nodes.judge import make_judge

    tree = [{"id": 0, "status": "open", "messages": [], "calls": []},
            {"id": 1, "status": "answer", "calls": [
                {"tool_call_id": "c1", "function": "weather_for_x", "api_id": "W/x/w", "arguments": {"city": "Oslo"},
                 "status": "ok", "cached": False}],
             "messages": [{"role": "tool", "tool_call_id": "c1", "content": '{"temp_c": -3}' + "x" * 2000}]}]
    att = {**attempt("give_answer", answer="It is -3°C in Oslo."), "tree": tree}
    model = ScriptedChatModel(replies=[ai('{"label": "Unsure", "reason": "cannot tell"}'),
                                       ai('{"label": "Solved", "reason": "the API gave -3"}')])
    state: Any = {"query": "Temperature in Oslo?", "run_key": "r", "solver_attempts": [att]}
    out = make_judge(deps_for(model))(state, RUNTIME)
    assert out.goto == "finalize" and out.update["verdict"] == {"label": "Solved", "reason": "the API gave -3",
                                                                 "by": "process"}
    assert [c["inputs"]["stage"] for c in model.calls] == ["answer", "process"]
    second = str(model.calls[1]["messages"][-1].content)
    assert '{"temp_c": -3}' in second and "more characters]" in second and len(second) < 2000
    assert out.update["usage"]["judge"]["model_calls"] == 2


# ------------------------------------------------------------- reflection
def test_reactivation_goes_to_lowest_unfinished_level_first() -> None:
    agents = {a["id"]: a for a in [agent("meta", "meta", "stopped"), agent("meta/A", "category", "stopped"),
                                   agent("meta/A/t1", "tool", "finished"), agent("meta/A/t2", "tool", "stopped")]}
    assert plan_reactivation(agents) == ("tool", ["meta/A/t2"])
    agents["meta/A/t2"]["status"] = "finished"
    assert plan_reactivation(agents) == ("category", ["meta/A"])
    agents["meta/A"]["status"] = "finished"
    assert plan_reactivation(agents) == ("meta", ["meta"])
    agents["meta"]["status"] = "finished"
    assert plan_reactivation(agents) == (None, [])


def test_judge_model_failure_is_a_verdict_not_a_crash() -> None:
    """A provider error in the judge must not discard the solver's answer (Unsure, which is not Solved)."""
    from langgraph_anytool.nodes.judge import make_judge

    def down(*_: Any) -> Any:
        raise RuntimeError("judge provider 503")

    state: Any = {"query": "q", "run_key": "r", "solver_attempts": [attempt("give_answer", answer="42 km")]}
    out = make_judge(deps_for(ScriptedChatModel(responder=down)))(state, RUNTIME)
    assert out.update["verdict"]["label"] == "Unsure" and "judge provider 503" in out.update["verdict"]["reason"]
    assert out.goto == "reflect"


@pytest.mark.parametrize(("label", "goto"), [("Solved", "finalize"), ("Unsure", "reflect"), ("Unsolved", "reflect")])
def test_unsure_is_not_solved(label: str, goto: str) -> None:
    """AnyTool §4.3 / Eq. 2: only Solved ends the run as solved; Unsure goes to reflection like Unsolved."""
    from langgraph_anytool.nodes.judge import make_judge
    from langgraph_anytool.nodes.lifecycle import outcome

    judge_model = ScriptedChatModel(replies=[ai(f'{{"label": "{label}", "reason": "r"}}')])
    state: Any = {"query": "q", "run_key": "r", "api_pool": [entry("a")],
                  "solver_attempts": [attempt("give_answer", answer="42 km")]}
    out = make_judge(deps_for(judge_model))(state, RUNTIME)
    assert out.goto == goto
    status, _ = outcome({**state, **out.update}, deps_for())
    assert status == ("solved" if label == "Solved" else "unsolved")


def test_failure_reason_prefers_judge_for_given_answers() -> None:
    state: Any = {"solver_attempts": [attempt("give_answer", answer="x")], "verdict": {"reason": "misses the price"}}
    assert failure_reason(state) == "misses the price"
    state = {"solver_attempts": [attempt("give_up", reason="f_for_t returned 500")], "verdict": {"reason": "r"}}
    assert failure_reason(state) == "f_for_t returned 500"


def _reflect_state(agents: dict[str, AgentRecord], **extra: Any) -> Any:
    return {"query": "q", "run_key": "r", "round": 0, "tick": 7, "reflections": 0, "agents": agents,
            "api_pool": [entry("x"), entry("y")], "pool_at_last_solve": ["x", "y"],
            "solver_attempts": [attempt("give_up", reason="y broke", failed=["x"])], "reflect_request": "new",
            **extra}


def test_reflect_node_reactivates_only_the_lowest_unfinished_level_and_prunes_by_id() -> None:
    agents = {"meta": agent("meta", "meta", "stopped"), "meta/A": agent("meta/A", "category", "stopped"),
              "meta/A/t1": agent("meta/A/t1", "tool", "finished"), "meta/A/t2": agent("meta/A/t2", "tool", "stopped")}
    out = make_reflect(deps_for())(_reflect_state(agents), RUNTIME)
    upd = out.update
    assert out.goto == "dispatch" and upd["round"] == 1 and upd["reflections"] == 1
    assert {i: a["status"] for i, a in upd["agents"].items()} == {
        "meta": "stopped", "meta/A": "stopped", "meta/A/t2": "pending"}  # finished agents are left out entirely
    assert upd["agents"]["meta/A/t2"]["activation_calls"] == 0 and upd["reflect_level"] == "tool"
    # the reason reached every unfinished agent; "y" is pruned because the reason names it, "x" as failed
    assert all("y broke" in str(a["messages"][-1].content) for a in upd["agents"].values())
    assert upd["api_pool"] == {"remove": ["x", "y"]} and upd["removed_apis"] == ["x", "y"]


def test_reflect_does_not_repeat_a_reactivation_message_the_agent_has_not_answered() -> None:
    """An agent stopped again before its first turn of an activation is re-activated without a duplicate message;
    a new reason, or a turn taken since, gets its message."""
    agents = {"meta/A/t2": agent("meta/A/t2", "tool", "stopped")}
    first = make_reflect(deps_for())(_reflect_state(agents), RUNTIME).update["agents"]["meta/A/t2"]
    assert len(first["messages"]) == 1
    again = {"meta/A/t2": {**first, "status": "stopped", "end_reason": "pool_solvable"}}
    second = make_reflect(deps_for())(_reflect_state(again, reflections=1), RUNTIME).update["agents"]["meta/A/t2"]
    assert second["messages"] == first["messages"] and second["status"] == "pending"
    other = _reflect_state(again, reflections=1, solver_attempts=[attempt("give_up", reason="z broke", failed=["x"])])
    third = make_reflect(deps_for())(other, RUNTIME).update["agents"]["meta/A/t2"]
    assert len(third["messages"]) == 2 and "z broke" in str(third["messages"][-1].content)
    answered = {"meta/A/t2": {**again["meta/A/t2"], "messages": [*first["messages"], ai("")]}}
    fourth = make_reflect(deps_for())(_reflect_state(answered, reflections=1), RUNTIME).update["agents"]["meta/A/t2"]
    assert len(fourth["messages"]) == 3 and fourth["messages"][-1].content == first["messages"][-1].content


def test_reflect_climbs_a_level_without_spending_a_reflection() -> None:
    agents = {"meta": agent("meta", "meta", "stopped"), "meta/A": agent("meta/A", "category", "stopped"),
              "meta/A/t2": agent("meta/A/t2", "tool", "stopped")}
    state = _reflect_state(agents, reflect_request="climb", reflect_level="tool", round=1, reflections=1)
    out = make_reflect(deps_for())(state, RUNTIME)
    assert out.goto == "dispatch" and set(out.update) == {"agents", "reflect_level", "events"}
    assert out.update["reflect_level"] == "category" and list(out.update["agents"]) == ["meta/A"]
    out = make_reflect(deps_for(reflection_scope="tool"))(state, RUNTIME)  # Table 4's tool-only scope
    assert out.goto == "finalize"


def test_reflect_without_agents_to_reactivate() -> None:
    done = {"a": agent("a", "tool", "finished")}
    state = _reflect_state(done, solver_attempts=[attempt("give_up", reason="a call failed", failed=["x"])])
    assert make_reflect(deps_for())(state, RUNTIME).goto == "gate"  # pruning x changed the pool: solve again
    assert make_reflect(deps_for())(_reflect_state(done), RUNTIME).goto == "finalize"  # x and y pruned: empty
    state = _reflect_state(done, solver_attempts=[attempt("give_up", reason="nothing fits")])
    assert make_reflect(deps_for())(state, RUNTIME).goto == "finalize"  # nothing new: no re-solve
    assert make_reflect(deps_for(max_reflections=0))(_reflect_state(done), RUNTIME).goto == "finalize"


def test_mentioned_apis_match_whole_names() -> None:
    pool = [entry("get_quote_for_stocks"), {**entry("c/t/q"), "api": "Quote", "function_name": "quote_for_t"}]
    assert mentioned_apis(pool, "get_quote_for_stocks returned 500") == ["get_quote_for_stocks"]
    assert mentioned_apis(pool, "the Quote API is down") == ["c/t/q"]
    assert mentioned_apis(pool, "the quotes were stale; my_get_quote_for_stocks_v2 too") == []


# --------------------------------------------------------------- reducers
def test_pool_reducer_dedupes_caps_removes() -> None:
    pool = update_pool([], {"add": [entry("a"), entry("b"), entry("a")], "cap": 3})
    assert [e["api_id"] for e in pool] == ["a", "b"]
    pool = update_pool(pool, {"add": [entry("c"), entry("d")], "cap": 3})
    assert [e["api_id"] for e in pool] == ["a", "b", "c"]
    pool = update_pool(pool, {"remove": ["b"], "add": [entry("b")]})  # a removed API is not re-added by the same update
    assert [e["api_id"] for e in pool] == ["a", "c"]
    assert update_pool(pool, [entry("q")])[-1]["api_id"] == "q"


def test_other_reducers() -> None:
    a = agent("a", "tool", "running")
    assert merge_agents({"a": a}, {"b": agent("b", "tool", "pending")}).keys() == {"a", "b"}
    assert add_unique(["x"], ["x", "y"]) == ["x", "y"]
    assert extend([1], [2]) == [1, 2]
    assert latest_round(2, 1) == 2 and latest_round(None, None) == -1 and latest_round(-1, 0) == 0
    usage = merge_usage({"solver": {"model_calls": 1, "input_tokens": 5}}, {"solver": {"model_calls": 2}, "reflections": 1})
    assert usage == {"solver": {"model_calls": 3, "input_tokens": 5}, "reflections": 1}
    assert total_tokens({"a": {"input_tokens": 3, "output_tokens": 4}, "reflections": 9}) == 7


# ----------------------------------------------------------- config, models
def test_config_validation_names_the_field() -> None:
    with pytest.raises(ConfigError, match="max_api_pool"):
        AnyToolConfig(max_api_pool=0)
    assert AnyToolConfig(max_reflections=0).max_reflections == 0  # reflection off: the plain-agent ablation
    with pytest.raises(ConfigError, match="max_reflections must be an integer ≥ 0"):
        AnyToolConfig(max_reflections=-1)
    with pytest.raises(ConfigError, match="solver"):
        AnyToolConfig(solver="bfs")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown role 'chef'"):
        AnyToolConfig(models={"chef": "openai:gpt-4o"})


def test_models_resolve_with_role_fallbacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANYTOOL_MODEL", raising=False)
    with pytest.raises(ModelNotConfiguredError, match="ANYTOOL_MODEL"):
        ModelSet.resolve(None).for_role("meta")  # building without a model is fine; using it is not
    base, planner = ScriptedChatModel(), ScriptedChatModel()
    ms = ModelSet.resolve(base, {"planner": planner})
    assert ms.for_role("planner") is planner and ms.for_role("caller") is base and ms.for_role("judge") is base
    only_solver = ModelSet.resolve(None, {"solver": planner})
    assert only_solver.for_role("caller") is planner
    with pytest.raises(ModelNotConfiguredError, match="no model for role 'meta'"):
        only_solver.for_role("meta")


def test_string_model_goes_through_init_chat_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    model = ModelSet.resolve("openai:gpt-4o-mini").for_role("solver")
    assert type(model).__name__ == "ChatOpenAI"


def test_usage_is_estimated_and_labelled_without_metadata() -> None:
    used = message_usage(ai("four words of text"), [HumanMessage("x" * 40)])
    assert used["estimated_tokens"] == used["input_tokens"] + used["output_tokens"] and used["input_tokens"] == 10


def test_usage_flagged_as_estimated_by_the_provider_is_labelled() -> None:
    msg = ai("x")
    msg.usage_metadata = {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}
    assert "estimated_tokens" not in message_usage(msg)
    msg.response_metadata = {"estimated_usage": True}
    assert message_usage(msg)["estimated_tokens"] == 10


def test_reflect_uses_the_latest_attempt_of_this_round() -> None:
    """Only the newest attempt's failed APIs are pruned, and the round advances from where it is."""
    first = {**attempt("give_up", reason="x broke", failed=["x"]), "round": 0}
    latest = {**attempt("give_up", reason="the call failed", failed=["y"]), "round": 1}
    state = _reflect_state({"a": agent("a", "tool", "stopped")}, round=1, reflections=1,
                           solver_attempts=[first, latest], pool_at_last_solve=["x", "y"])
    upd = make_reflect(deps_for())(state, RUNTIME).update
    assert upd["api_pool"] == {"remove": ["y"]} and upd["round"] == 2 and upd["reflections"] == 2
    assert failure_reason(state) == "the call failed"
