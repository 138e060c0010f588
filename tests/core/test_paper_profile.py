"""`AnyToolConfig.paper()` = the authors' AnyTool loop (issue 18 §4), and an API's own refusal of a value is an
observation, not a malformed model turn (§5). Scripted models and loopback servers only.

The authors' code each rule follows (dyabel/AnyTool):
1. `scripts/main.py` `Tool_Agent.add_apis_into_api_pool`: the solvability check after every addition;
2. `scripts/main.py` (exclusion words) and `anytool/verifier.py check_solved_toolbench` (3 samples, passed >= failed;
   `anytool/check_solved.py compute_pass_rate` → `rtl.py is_passed` with `task_status='Solvable'`, a str that never
   equals `TaskStatus.Solvable`: an Unsure sample is failed, never a coin flip);
3. `toolbench/inference/Algorithms/DFS.py DFS_tree_search.DFS`: the query count and its note;
4. `scripts/main.py` main loop: `if len(global_api_list) >= max_api_number: break` after pruning;
5. `scripts/main.py` main loop: `agent.failed_reason = str(failed_reason)` for `agents_to_resume` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.runtime import Runtime

from langgraph_anytool import create_anytool_graph
from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.models import Api, Category, Param, Tool
from langgraph_anytool.config import PAPER_SETTINGS, AnyToolConfig
from langgraph_anytool.context import resolve_settings
from langgraph_anytool.graphs.solver import build_solver_graph
from langgraph_anytool.models.llm import ModelSet
from langgraph_anytool.nodes.agents import new_agent_record
from langgraph_anytool.nodes.judge import make_judge
from langgraph_anytool.nodes.judge.anytool import EXCLUSION_WORDS, seeded_coin
from langgraph_anytool.nodes.reflection import make_reflect
from langgraph_anytool.nodes.solver import prompts
from langgraph_anytool.runtime import Deps, RunSignals
from langgraph_anytool.state import AgentRecord, PoolEntry, SolverAttempt
from langgraph_anytool.tools.executors.http import HttpExecutor
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.fakes import ScriptedChatModel, ai, call
from tests.graph_world import World, adds, last_human, make_world, observations, solved_judge, turns
from tests.nodes.test_agent_loop import SMALL_PLAN, Script, make_catalog, run_loop, tool_texts
from tests.nodes.test_agent_loop import make_deps as agent_deps
from tests.servers import FunctionServer, Request, Response

RUNTIME: Any = Runtime(context=None)


# ------------------------------------------------------------------------------------------ the profile
def test_paper_profile_takes_the_authors_value_of_each_setting() -> None:
    paper, default = AnyToolConfig.paper(), AnyToolConfig()
    assert {k: getattr(paper, k) for k in PAPER_SETTINGS} == dict(PAPER_SETTINGS)
    assert (paper.solvable_check, paper.judge, paper.judge_samples, paper.call_limit, paper.max_solver_queries,
            paper.reflect_when_pool_full, paper.failure_reason_to, paper.round_gate, paper.prune_match,
            paper.failure_reason_form, paper.small_category_shortcut, paper.small_category_finished) == (
        "after_add", "anytool", 3, "model_queries", 10, False, "reactivated", "solvability_check", "substring",
        "verbatim", True, False)
    assert (default.solvable_check, default.judge, default.call_limit, default.reflect_when_pool_full,
            default.failure_reason_to, default.round_gate, default.prune_match, default.failure_reason_form,
            default.small_category_shortcut, default.small_category_finished) == (
        "on_request", "tooleval", "api_calls", True, "unfinished", "pool_changed", "whole_word", "summary", True, True)
    # the run-time profile gets them too, over a build-time config made with the defaults
    per_run = resolve_settings(AnyToolConfig(max_api_pool=16), {"profile": "paper"})
    assert per_run.max_api_pool == 16 and all(getattr(per_run, k) == v for k, v in PAPER_SETTINGS.items())
    # settable from strings (command line, environment), validated
    got = AnyToolConfig().with_values({"call_limit": "model_queries", "reflect_when_pool_full": "false"})
    assert (got.call_limit, got.reflect_when_pool_full) == ("model_queries", False)
    with pytest.raises(ValueError, match="call_limit must be one of api_calls, model_queries"):
        AnyToolConfig(call_limit="queries")  # type: ignore[arg-type]
    assert {"solvable_check", "judge", "judge_samples", "call_limit", "max_solver_queries",
            "reflect_when_pool_full", "failure_reason_to", "round_gate", "prune_match", "failure_reason_form",
            "small_category_finished"} <= {f.name for f in fields(AnyToolConfig)}


# ------------------------------------------------------------------------------------------ 1. solvability check
def _tool_agent() -> AgentRecord:
    return new_agent_record("meta/Small/t1", "tool", parent="meta/Small", category="Small", tools=["Jokes", "Quotes"])


def _adding_script(verdicts: list[str]) -> tuple[Script, list[str]]:
    """A tool agent that adds one API per turn and never asks for the check itself; the solvable model's
    verdicts in order (the prompts it saw are recorded)."""
    seen: list[str] = []

    def solvable(prompt: str) -> str:
        seen.append(prompt)
        return verdicts[len(seen) - 1]

    return Script({"tool:Jokes, Quotes": [
        ai("", call("add_apis_into_api_pool", apis=[{"tool_name": "Jokes", "api_name": "Random Joke"}])),
        ai("", call("add_apis_into_api_pool", apis=[{"tool_name": "Quotes", "api_name": "Quote Of The Day"}])),
    ]}, solvable=solvable), seen


def test_solvability_check_runs_by_itself_after_every_addition() -> None:
    catalog = make_catalog(SMALL_PLAN)
    script, seen = _adding_script(["Unsolvable: no quote API yet", "Solvable"])
    out = run_loop("tool", _tool_agent(), agent_deps(catalog, ScriptedChatModel(responder=script),
                                                    solvable_check="after_add"), round_=1)
    agent = out["agents"]["meta/Small/t1"]
    assert len(seen) == 2  # one check after each of the two additions, none asked for by the agent
    assert "Random Joke" in seen[0] and "Quote Of The Day" not in seen[0] and "Quote Of The Day" in seen[1]
    # "Unsolvable": the search goes on, and the agent reads the additions' report, not the verdict (as there)
    texts = tool_texts(agent)
    assert '"added": ["Jokes: Random Joke"]' in texts[0] and "no quote API" not in texts[0]
    # any other verdict stops the whole search: the agent at once, the others through `solvable_round`
    assert "The search stops" in texts[1] and (agent["status"], agent["end_reason"]) == ("stopped", "pool_solvable")
    assert out["solvable_round"] == 1

    # ours ("on_request"): the same agent is never checked unless it asks
    script, seen = _adding_script(["Solvable", "Solvable"])
    out = run_loop("tool", _tool_agent(), agent_deps(catalog, ScriptedChatModel(responder=script)), round_=1)
    assert seen == [] and out["agents"]["meta/Small/t1"]["end_reason"] == "finish_search"
    assert "solvable_round" not in out


@pytest.mark.parametrize(("verdict", "stops"), [("Unsure", True), ("I would need to look closer.", True),
                                                ("Unsolvable: nothing tells jokes", False)])
def test_only_unsolvable_lets_the_search_go_on(verdict: str, stops: bool) -> None:
    """main.py `if solvable != 'Unsolvable': stop = True` (their verifier says "Unsure" after 5 replies without a
    verdict): Unsure and a reply without a verdict stop it, only "Unsolvable" goes on."""
    script, _ = _adding_script([verdict, verdict])
    out = run_loop("tool", _tool_agent(), agent_deps(make_catalog(SMALL_PLAN), ScriptedChatModel(responder=script),
                                                    solvable_check="after_add"))
    agent = out["agents"]["meta/Small/t1"]
    assert (agent["end_reason"] == "pool_solvable") is stops
    assert len(tool_texts(agent)) == (1 if stops else 3)  # two additions and finish_search when it goes on


def test_unsolvable_on_a_full_pool_stops_too() -> None:
    script, seen = _adding_script(["Unsolvable: only jokes", "Solvable"])
    out = run_loop("tool", _tool_agent(), agent_deps(make_catalog(SMALL_PLAN), ScriptedChatModel(responder=script),
                                                    solvable_check="after_add", max_api_pool=1))
    agent = out["agents"]["meta/Small/t1"]
    assert len(seen) == 1 and (agent["status"], agent["end_reason"]) == ("stopped", "pool_full")


# ------------------------------------------------------------------------------------------ 2. the in-loop judge
def _judge_deps(model: ScriptedChatModel, **cfg: Any) -> Deps:
    return Deps(catalog=Catalog([], name="empty"), models=ModelSet(default=model, by_role={}), executor=None,  # type: ignore[arg-type]
                config=AnyToolConfig(**cfg), signals=RunSignals())


def _answered(answer: str) -> SolverAttempt:
    return {"attempt": 1, "round": 0, "mode": "dfsdt", "finish_type": "give_answer", "answer": answer, "reason": "",
            "failed_functions": [], "failed_api_ids": [], "api_calls": 1, "tree": []}


def _judge(answer: str, labels: list[str], query: str = "How tall is the Eiffel tower?", **cfg: Any
           ) -> tuple[dict[str, str], ScriptedChatModel]:
    model = ScriptedChatModel(replies=[ai(f'{{"label": "{x}", "reason": "sample says {x}"}}') for x in labels])
    state: Any = {"query": query, "run_key": "r", "solver_attempts": [_answered(answer)], "reflections": 0}
    out = make_judge(_judge_deps(model, **cfg))(state, RUNTIME)
    return out.update["verdict"], model


def test_exclusion_words_are_the_authors_and_case_sensitive() -> None:
    # anytool/api_database_function.py `exclusion_words`, tested with `word in final_answer` in main.py
    assert EXCLUSION_WORDS == ("sorry", "apologize", "apology", "unfortunately", "couldn't", "could not", "can't",
                               "cannot", "unable", "regret", "not successfully")
    verdict, model = _judge("It is 330 m tall, sorry for the wait.", [], judge="anytool")
    assert verdict == {"label": "Unsolved", "by": "exclusion",
                       "reason": "the answer contains 'sorry' (AnyTool's exclusion rule)"} and model.calls == []
    # "Sorry" is not "sorry": the evaluator decides (three samples, all Solved here)
    verdict, model = _judge("Sorry for the wait: it is 330 m tall.", ["Solved"] * 3, judge="anytool")
    assert verdict["label"] == "Solved" and len(model.calls) == 3
    # ours: no phrase list, one ToolEval check
    verdict, model = _judge("It is 330 m tall, sorry for the wait.", ["Solved"])
    assert verdict["label"] == "Solved" and len(model.calls) == 1


def test_three_samples_vote_and_a_tie_is_solved() -> None:
    # 2 passed, 1 failed → Solved; 1 passed, 2 failed → Unsolved
    verdict, model = _judge("330 m.", ["Solved", "Unsolved", "Solved"], judge="anytool")
    assert (verdict["label"], verdict["by"]) == ("Solved", "majority") and "2 of 3 samples passed" in verdict["reason"]
    assert [c["inputs"]["sample"] for c in model.calls] == [0, 1, 2]
    verdict, _ = _judge("330 m.", ["Unsolved", "Solved", "Unsolved"], judge="anytool")
    assert verdict["label"] == "Unsolved" and verdict["reason"].startswith("sample says Unsolved")
    # two samples, 1 passed and 1 failed: passed >= failed → Solved (verifier.py, no coin on the tie)
    verdict, _ = _judge("330 m.", ["Unsolved", "Solved"], judge="anytool", judge_samples=2)
    assert verdict["label"] == "Solved"


def test_an_unsure_sample_fails_as_in_the_authors_loop() -> None:
    """Samples Solved, Unsolved, Unsure (Unsure in both ToolEval stages). The authors' loop passes the plain string
    task_solvable='Solvable' (scripts/main.py) into anytool/check_solved.py compute_pass_rate, whose rtl.py
    is_passed compares it with TaskStatus.Solvable (a plain Enum: never equal) and falls through to
    `return AnswerPass.Failed`: the Unsure sample fails, no coin. T,F,F → 1 passed < 2 failed → Unsolved,
    whichever side a coin would have shown."""
    query = "How tall is the Eiffel tower?"
    answers = [f"It is {h} m tall." for h in range(300, 340)]
    heads = next(a for a in answers if seeded_coin(query, a, 2))
    tails = next(a for a in answers if not seeded_coin(query, a, 2))
    labels = ["Solved", "Unsolved", "Unsure", "Unsure"]  # the third sample takes two calls (stage 2 on Unsure)
    for answer in (heads, tails):
        verdict, model = _judge(answer, labels, query, judge="anytool")
        assert verdict["label"] == "Unsolved" and "1 of 3 samples passed" in verdict["reason"]
        assert len(model.calls) == 4
    # Solved, Unsure, Solved → T,F,T → 2 ≥ 1 → Solved
    assert _judge(heads, ["Solved", "Unsure", "Unsure", "Solved"], query, judge="anytool")[0]["label"] == "Solved"
    # ours: one sample, Unsure in both stages stays Unsure (not solved)
    verdict, model = _judge(heads, ["Unsure", "Unsure"], query)
    assert verdict["label"] == "Unsure" and len(model.calls) == 2


# ------------------------------------------------------------------------------------------ 3. the call limit
def _weather_catalog() -> Catalog:
    city = Param(name="city", type="string", description="City name", required=True)
    api = Api(id="Weather/weatherly/current", name="Current weather", tool_key="weatherly", tool_name="Weatherly",
              category="Weather", description="Current weather of a city", params=(city,),
              template_response={"temperature": "float"}, path="/weather")
    return Catalog([Category(name="Weather", tools=(Tool(key="weatherly", name="Weatherly", category="Weather",
                                                         description="Weather data", apis=(api,)),))])


def _pool(catalog: Catalog, *ids: str) -> list[PoolEntry]:
    return [PoolEntry(api_id=i, category=catalog.api(i).category, tool=catalog.api(i).tool_name,
                      api=catalog.api(i).name, function_name=catalog.function_name(i), added_by="test") for i in ids]


def _solve(catalog: Catalog, executor: ApiExecutor, model: ScriptedChatModel, api_id: str, **cfg: Any
           ) -> SolverAttempt:
    deps = Deps(catalog=catalog, models=ModelSet(default=None, by_role={"solver": model}), executor=executor,
                config=AnyToolConfig(**cfg), signals=RunSignals())
    out = build_solver_graph(deps).invoke({"query": "Weather?", "run_key": "r", "round": 0,
                                           "api_pool": _pool(catalog, api_id), "previous_attempts": []})
    attempt: SolverAttempt = out["solver_attempts"][0]
    return attempt


def _notes(messages: Sequence[BaseMessage]) -> int:
    return sum(isinstance(m, HumanMessage) and m.content == prompts.QUERY_LIMIT for m in messages)


def test_query_limit_counts_model_queries_and_asks_for_finish_without_stopping() -> None:
    catalog = _weather_catalog()
    fn = catalog.function_name("Weather/weatherly/current")
    replies = [ai("", call(fn, city=c)) for c in ("Paris", "Oslo", "Rome", "Lima")]
    replies.append(ai("", call("Finish", return_type="give_answer", final_answer="Sunny everywhere.")))
    model = ScriptedChatModel(replies=replies)
    attempt = _solve(catalog, ApiExecutor.for_catalog(catalog, kind="template"), model, "Weather/weatherly/current",
                     call_limit="model_queries", max_solver_queries=2, max_api_calls=2, max_depth=100)
    # no API-call budget: all four calls ran although max_api_calls is 2; the model finished when it chose to
    assert attempt["finish_type"] == "give_answer" and attempt["api_calls"] == 4 and len(model.calls) == 5
    # queries 1-2 without the note; from the 3rd on every query carries one more (kept along the path, as in DFS.py)
    assert [_notes(c["messages"]) for c in model.calls] == [0, 0, 1, 2, 3]
    assert all(fn in c["tools"] and "Finish" in c["tools"] for c in model.calls)  # nothing is taken away
    finish = next(s for s in model.calls[2]["tool_schemas"] if s["function"]["name"] == "Finish")
    assert "give_up_and_restart" in str(finish)  # the note asks; the Finish function is the same

    # ours: 2 API calls, then one Finish-only turn; a call there ends the solve on the budget
    model = ScriptedChatModel(replies=replies)
    attempt = _solve(catalog, ApiExecutor.for_catalog(catalog, kind="template"), model, "Weather/weatherly/current",
                     max_api_calls=2, max_depth=100)
    assert attempt["finish_type"] == "call_budget" and attempt["api_calls"] == 2 and len(model.calls) == 3
    assert model.calls[2]["tools"] == ["Finish"] and _notes(model.calls[2]["messages"]) == 0


def test_query_limit_note_leaves_a_reseeded_chain() -> None:
    from langgraph_anytool.nodes.solver import seed_messages

    catalog = _weather_catalog()
    fn = catalog.function_name("Weather/weatherly/current")
    model = ScriptedChatModel(replies=[ai("", call(fn, city="Paris")), ai("", call(fn, city="Oslo")),
                                       ai("", call("Finish", return_type="give_up", reason="no luck"))])
    attempt = _solve(catalog, ApiExecutor.for_catalog(catalog, kind="template"), model, "Weather/weatherly/current",
                     call_limit="model_queries", max_solver_queries=1, max_depth=100)
    assert attempt["finish_type"] == "give_up" and _notes(model.calls[2]["messages"]) == 2
    seeded = seed_messages(attempt["tree"], [fn])
    assert _notes(seeded) == 0 and sum(isinstance(m, AIMessage) for m in seeded) == 2  # DFS.py drops its notes too


# ------------------------------------------------------------------------------------------ 4-5. reflection
def _agent(id_: str, level: str) -> AgentRecord:
    record = new_agent_record(id_, level)  # type: ignore[arg-type]
    return {**record, "status": "stopped", "activations": 1, "steps": 2, "end_reason": "pool_solvable"}


def _entry(api_id: str) -> PoolEntry:
    return {"api_id": api_id, "category": "c", "tool": "t", "api": api_id, "function_name": api_id, "added_by": "x"}


def _failed_state(agents: dict[str, AgentRecord], reason: str, pool: list[str], **extra: Any) -> Any:
    failed: SolverAttempt = {**_answered(""), "finish_type": "give_up", "reason": reason}
    return {"query": "q", "run_key": "r", "round": 0, "tick": 3, "reflections": 0, "agents": agents,
            "api_pool": [_entry(a) for a in pool], "pool_at_last_solve": sorted(pool),
            "solver_attempts": [failed], "reflect_request": "new", **extra}


def _deps(**cfg: Any) -> Deps:
    return _judge_deps(ScriptedChatModel(replies=[]), **cfg)


def test_no_reflection_once_the_pool_is_full() -> None:
    agents = {"meta/A/t1": _agent("meta/A/t1", "tool")}
    full = _failed_state(agents, "the answer missed the tides", ["p1", "p2"])
    assert make_reflect(_deps(max_api_pool=2, reflect_when_pool_full=False))(full, RUNTIME).goto == "finalize"
    assert make_reflect(_deps(max_api_pool=2))(full, RUNTIME).goto == "dispatch"  # ours reflects on
    # the authors prune first: a reason naming p2 removes it, the pool is no longer full, reflection goes on
    pruned = _failed_state(agents, "p2 failed", ["p1", "p2"])
    out = make_reflect(_deps(max_api_pool=2, reflect_when_pool_full=False))(pruned, RUNTIME)
    assert out.goto == "dispatch" and out.update["api_pool"] == {"remove": ["p2"]}


def test_failure_reason_goes_to_the_reactivated_agents_only() -> None:
    agents = {"meta": _agent("meta", "meta"), "meta/A": _agent("meta/A", "category"),
              "meta/A/t1": _agent("meta/A/t1", "tool")}
    state = _failed_state(agents, "the tide API answered nothing", ["p1"])
    paper = make_reflect(_deps(failure_reason_to="reactivated"))(state, RUNTIME).update["agents"]
    assert list(paper) == ["meta/A/t1"] and paper["meta/A/t1"]["status"] == "pending"
    assert "tide API answered nothing" in str(paper["meta/A/t1"]["messages"][-1].content)
    ours = make_reflect(_deps())(state, RUNTIME).update["agents"]
    assert set(ours) == {"meta", "meta/A", "meta/A/t1"}  # every unfinished agent read it, two wait for a climb
    assert all("tide API answered nothing" in str(a["messages"][-1].content) for a in ours.values())
    # a climb: the next level up reads the reason when it is re-activated (and not before)
    after: dict[str, AgentRecord] = {**agents, **paper}
    climb = {**state, "agents": after, "reflect_request": "climb", "reflect_level": "tool", "round": 1,
             "reflections": 1, "reason": "the tide API answered nothing"}
    out = make_reflect(_deps(failure_reason_to="reactivated"))(climb, RUNTIME).update["agents"]
    assert list(out) == ["meta/A"] and "tide API answered nothing" in str(out["meta/A"]["messages"][-1].content)


# ------------------------------------------------------------------------------------------ §5 API refusals
CONVERT = "Units_Conversion/universal_unit_converter/convert_units"


def test_a_builtin_refusing_a_unit_is_an_observation_not_a_malformed_turn() -> None:
    catalog = Catalog.builtin()
    fn = catalog.function_name(CONVERT)
    bad = [ai("", call(fn, value=3, from_unit="furlongz", to_unit="m")) for _ in range(4)]
    good = ai("", call(fn, value=3, from_unit="furlong", to_unit="m"))
    done = ai("", call("Finish", return_type="give_answer", final_answer="3 furlongs are 603.5 m."))
    model = ScriptedChatModel(replies=[*bad, good, done])
    with ApiExecutor.for_catalog(catalog, kind="local") as executor:
        attempt = _solve(catalog, executor, model, CONVERT, max_depth=100)
    assert attempt["finish_type"] == "give_answer" and attempt["api_calls"] == 5  # each refusal counts as a call
    statuses = [c["status"] for n in attempt["tree"] for c in n["calls"] if c["function"] == fn]
    assert statuses == ["rejected"] * 4 + ["ok"]
    assert "unknown unit 'furlongz'" in str(model.calls[1]["messages"][-1].content)  # the model saw why

    # the model may correct itself until the call budget ends (then the Finish-only turn), not a malformed end
    model = ScriptedChatModel(replies=[*bad, ai("", call("Finish", return_type="give_up", reason="unknown unit"))])
    with ApiExecutor.for_catalog(catalog, kind="local") as executor:
        attempt = _solve(catalog, executor, model, CONVERT, max_depth=100, max_api_calls=4)
    assert attempt["finish_type"] == "give_up" and attempt["api_calls"] == 4
    assert model.calls[4]["tools"] == ["Finish"]


def test_a_schema_refusal_is_still_a_malformed_turn() -> None:
    catalog = Catalog.builtin()
    fn = catalog.function_name(CONVERT)
    model = ScriptedChatModel(replies=[ai("", call(fn, value=3, from_unit="furlong")) for _ in range(4)])
    with ApiExecutor.for_catalog(catalog, kind="local") as executor:
        attempt = _solve(catalog, executor, model, CONVERT, max_depth=100)
    assert attempt["finish_type"] == "malformed" and len(model.calls) == 3  # max_malformed_turns=3
    statuses = [c["status"] for n in attempt["tree"] for c in n["calls"]]
    assert statuses == ["invalid_arguments"] * 3 and "to_unit" in str(model.calls[1]["messages"][-1].content)


def test_an_http_400_is_an_observation_the_model_can_correct() -> None:
    async def weather(request: Request) -> Response:
        city = request.target.split("city=", 1)[-1] if "city=" in request.target else ""
        if city != "Paris":
            return Response.json({"message": f"invalid city {city!r}"}, 400)
        return Response.json({"temperature": 21})

    catalog = _weather_catalog()
    fn = catalog.function_name("Weather/weatherly/current")
    replies = [ai("", call(fn, city=c)) for c in ("Atlantis", "Eldorado", "Lemuria", "Paris")]
    model = ScriptedChatModel(replies=[*replies, ai("", call("Finish", return_type="give_answer",
                                                             final_answer="21 degrees in Paris."))])
    with FunctionServer(weather) as server:
        http = HttpExecutor(base_urls={"*": server.url}, allow_private=True, backoff=0.01, max_backoff=0.05,
                            timeout=3.0)
        with ApiExecutor(catalog, default=http) as executor:
            attempt = _solve(catalog, executor, model, "Weather/weatherly/current", max_depth=100)
        assert len(server.requests) == 4  # every call reached the API
    assert attempt["finish_type"] == "give_answer" and attempt["api_calls"] == 4
    statuses = [c["status"] for n in attempt["tree"] for c in n["calls"] if c["function"] == fn]
    assert statuses == ["rejected"] * 3 + ["ok"]
    assert "invalid city" in str(model.calls[1]["messages"][-1].content)


# ------------------------------------------------------------------------------------------ a whole paper() run
def test_a_whole_run_with_the_paper_profile() -> None:
    """The authors' loop end to end: the small category gets its tool agent without a model call, every addition
    is checked without the agent asking, a failed solve re-activates the tool agent with the Finish arguments as
    they are (the broken API pruned: its name is in them), and the answer is judged by three samples."""
    catalog, executor = make_world()
    broken = catalog.function_name(catalog.find_api("Stocks API", "Quote").id)
    backup = catalog.function_name(catalog.find_api("Backup Quotes", "Quote").id)

    def tool_agent(m: list[BaseMessage]) -> AIMessage:
        if broken in last_human(m):  # re-activated with the failure reason
            return adds("Backup Quotes", "Quote")
        return adds("Stocks API", "Quote") if turns(m) == 0 else ai("", call("finish_search"))

    def solver(m: list[BaseMessage]) -> AIMessage:
        target = backup if backup in str(m[0].content) else broken
        seen = observations(m)
        if not seen:
            return ai("", call(target, symbol="AAPL"))
        if seen[-1]["status"] == "ok":
            return ai("", call("Finish", return_type="give_answer", final_answer="AAPL trades at 187.5 USD."))
        return ai("", call("Finish", return_type="give_up", reason=f"{target} failed", failed_functions=[target]))

    world = World({
        "meta": lambda m: (ai("", call("create_agent_category_level", category_name="Finance"))
                           if turns(m) == 0 else ai("", call("finish_search"))),
        "category": lambda m: (ai("", call("create_agent_tool_level", tool_names=["Stocks API", "Backup Quotes"]))
                               if turns(m) == 0 else ai("", call("finish_search"))),
        "tool": tool_agent,
        "solvable": lambda m: ai("Solvable"),
        "solver": solver,
        "judge": solved_judge,
    })
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=world), config=AnyToolConfig.paper(),
                                 executor=executor)
    out = graph.invoke({"query": "Price of AAPL?"})
    assert out["status"] == "solved" and out["answer"] == "AAPL trades at 187.5 USD."
    assert "category:Finance" not in world.roles  # 2 tools: the small-category shortcut
    assert out["agents"]["meta/Finance"]["end_reason"] == "small_category"
    tool_turns = [r for r in world.roles if r.startswith("tool:")]
    assert len(tool_turns) == 2 and world.roles.count("solvable") == 2  # one check after each addition
    told = str(out["agents"]["meta/Finance/t1"]["messages"][-3].content)  # its re-activation message
    assert str({"return_type": "give_up", "reason": f"{broken} failed", "failed_functions": [broken]}) in told
    assert world.roles.count("judge") == 3  # the give-up is Unsolved by rule, the answer gets three samples
    first, second = out["solver_attempts"]
    assert (first["finish_type"], second["finish_type"]) == ("give_up", "give_answer")
    assert [e["function_name"] for e in out["api_pool"]] == [backup]
    assert out["agents"]["meta/Finance/t1"]["activations"] == 2
