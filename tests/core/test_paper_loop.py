"""`AnyToolConfig.paper()` follows the authors' loop to the last rule (issue 27 §1). Scripted models only; each
test's expectation is derived from the authors' code (dyabel/AnyTool), cited beside it:

1. `anytool/rapidapi.py` `pipeline_runner.run_single_task` passes `max_query_count=10`; `toolbench/inference/
   Algorithms/DFS.py` `DFS_tree_search.DFS` counts one query per `self.llm.parse` and, once `query_count >=
   max_query_count`, appends the "call Finish" note to the node that query produced (no stop). α-UMi's step is one
   `parse` (planner + caller/summarizer, Multi-LLM-Agent `collab_agent_model.py`). DFS.py also marks the
   diversity prompt `"valid": False` after its one query;
2. `scripts/main.py` `Category_Agent.category_search`: a category with ≤ `leaf_tool_number` (5) tools makes its
   tool agent directly and returns without `finish_search`; `resume_search` then finishes it without a model call;
3. `scripts/main.py` main loop: after resumed agents end, `if not stop: check_if_request_solvable()`; the next
   iteration solves when `stop` (judged solvable, unchanged pool or not), else resumes the next level with
   `failed_reason = status`; the loop ends once every agent is finished;
4. `scripts/main.py` main loop: `if standardized_api_name in str(failed_reason)` prunes (a substring test);
5. `scripts/main.py` main loop: `failed_reason` = `solve_data['result']` (the Finish arguments) after a give-up or
   an exclusion word, the reason `anytool/verifier.py check_solved_toolbench` returns (`random.sample` over all
   samples' reasons) after a judged answer, `status` when the solver did not run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.runtime import Runtime

from langgraph_anytool import create_anytool_graph
from langgraph_anytool.catalog import Catalog
from langgraph_anytool.config import AnyToolConfig
from langgraph_anytool.graphs.solver import build_solver_graph
from langgraph_anytool.models.llm import ModelSet
from langgraph_anytool.nodes.agents import new_agent_record
from langgraph_anytool.nodes.draws import seeded_index
from langgraph_anytool.nodes.judge import make_judge
from langgraph_anytool.nodes.lifecycle import NOT_SOLVABLE
from langgraph_anytool.nodes.reflection import make_reflect
from langgraph_anytool.nodes.solver import prompts, umi
from langgraph_anytool.runtime import Deps, RunSignals
from langgraph_anytool.state import AgentRecord, PoolEntry, SolverAttempt
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.core.test_paper_profile import _pool, _weather_catalog
from tests.fakes import ScriptedChatModel, ai, call
from tests.graph_world import World, adds, last_human, make_world, solved_judge, turns

RUNTIME: Any = Runtime(context=None)
WEATHER = "Weather/weatherly/current"


def _solve(config: AnyToolConfig, models: dict[str, Any]) -> SolverAttempt:
    catalog = _weather_catalog()
    deps = Deps(catalog=catalog, models=ModelSet(default=None, by_role=models),
                executor=ApiExecutor.for_catalog(catalog, kind="template"), config=config, signals=RunSignals())
    out = build_solver_graph(deps).invoke({"query": "Weather?", "run_key": "r", "round": 0,
                                           "api_pool": _pool(catalog, WEATHER), "previous_attempts": []})
    attempt: SolverAttempt = out["solver_attempts"][0]
    return attempt


def _notes(messages: Sequence[BaseMessage], text: str = prompts.QUERY_LIMIT) -> int:
    return sum(isinstance(m, HumanMessage) and m.content == text for m in messages)


# ------------------------------------------------------------------------------------------ 1. the query limit
def test_paper_query_limit_is_ten_model_queries() -> None:
    """rapidapi.py `run_single_task`: `max_query_count=10`. DFS.py: queries 1-10 see no note; the note follows
    the 10th query's observation, so the 11th sees one, the 12th two (kept along the path); no API-call stop."""
    fn = _weather_catalog().function_name(WEATHER)
    replies = [ai("", call(fn, city=f"city {i}")) for i in range(12)]
    model = ScriptedChatModel(replies=[*replies, ai("", call("Finish", return_type="give_answer",
                                                              final_answer="Sunny everywhere."))])
    attempt = _solve(AnyToolConfig.paper(max_depth=100), {"solver": model})
    assert AnyToolConfig.paper().max_solver_queries == 10
    assert attempt["finish_type"] == "give_answer" and attempt["api_calls"] == 12 and len(model.calls) == 13
    assert [_notes(c["messages"]) for c in model.calls] == [0] * 10 + [1, 2, 3]


def test_the_note_sits_on_the_node_its_query_made() -> None:
    """DFS.py appends the note to `temp_now_node` (the node the query produced). With a limit of 2: query 1 calls
    the API, query 2 restarts (that node is pruned), query 3 starts again from an older node, which carries no
    note; the node of query 3 does, so query 4 sees one."""
    fn = _weather_catalog().function_name(WEATHER)
    model = ScriptedChatModel(replies=[
        ai("", call(fn, city="Paris")),
        ai("", call("Finish", return_type="give_up_and_restart", reason="wrong city")),
        ai("", call(fn, city="Oslo")),
        ai("", call("Finish", return_type="give_answer", final_answer="Cold in Oslo.")),
    ])
    attempt = _solve(AnyToolConfig.paper(max_solver_queries=2, max_depth=100), {"solver": model})
    assert attempt["finish_type"] == "give_answer"
    assert [_notes(c["messages"]) for c in model.calls] == [0, 0, 0, 1]


def test_the_diversity_prompt_goes_with_one_query_only() -> None:
    """DFS.py: the diversity prompt is appended before the query that expands a node with children, then marked
    `"valid": False`, which `chat_completion_request` leaves out of every later query. Query 1 calls the API,
    query 2 restarts, query 3 (from a node with a child) gets the prompt, query 4 (below it) does not."""
    from langgraph_anytool.protocol import DIVERSITY

    fn = _weather_catalog().function_name(WEATHER)
    replies = [ai("", call(fn, city="Paris")),
               ai("", call("Finish", return_type="give_up_and_restart", reason="wrong city")),
               ai("", call(fn, city="Oslo")),
               ai("", call("Finish", return_type="give_answer", final_answer="Cold in Oslo."))]

    def prompts_seen(config: AnyToolConfig) -> list[int]:
        model = ScriptedChatModel(replies=list(replies))
        assert _solve(config, {"solver": model})["finish_type"] == "give_answer"
        return [sum(isinstance(m, HumanMessage) and m.name == DIVERSITY for m in c["messages"]) for c in model.calls]

    assert prompts_seen(AnyToolConfig.paper()) == [0, 0, 1, 0]
    assert prompts_seen(AnyToolConfig()) == [0, 0, 1, 1]  # ours keeps it in the chain below it


def test_the_query_limit_counts_umi_steps_and_never_stops_the_calls() -> None:
    """α-UMi under paper(): a query is a step (planner, then caller or summarizer: one `parse` of α-UMi's
    `collab_agent_model.py`), so the 11th planner call is the first to read the note (a count of model calls
    would put it after step 5); no API-call budget: all 12 calls run, then the planner concludes."""
    fn = _weather_catalog().function_name(WEATHER)
    planned = {"n": 0}

    def respond(messages: list[BaseMessage], tools: list[str], meta: dict[str, Any]) -> AIMessage:
        if meta["role"] == "planner":
            planned["n"] += 1
            return ai("Next: summarizer" if planned["n"] > 12 else f"Check city {planned['n']}. Next: caller")
        if meta["role"] == "caller":
            return ai("", call(fn, city=f"city {planned['n']}"))
        return ai("Sunny in all twelve cities.")

    model = ScriptedChatModel(responder=respond)
    attempt = _solve(AnyToolConfig.paper(solver="umi", max_depth=100),
                     {"planner": model, "caller": model, "summarizer": model})
    assert attempt["finish_type"] == "give_answer" and attempt["api_calls"] == 12
    planners = [c for c in model.calls if c["role"] == "planner"]
    seen = [str(c["messages"][0].content).count(umi.QUERY_LIMIT) for c in planners]
    assert seen == [0] * 10 + [1, 2, 3]
    assert [c["role"] for c in model.calls][-2:] == ["planner", "summarizer"]  # no forced summary


# ------------------------------------------------------------------------------------------ 2-3, 5. the loop
def _finance_world(check: Any, tool_second: Any, solver: Any) -> World:
    """A run in `make_world`'s catalog: the meta-agent makes the Finance agent (2 tools: the small-category
    shortcut), looks at the tools once more (so it is still running when the pool is judged solvable), then
    finishes when re-activated; the tool agent adds Backup Quotes' Quote, then `tool_second` when re-activated."""
    return World({
        "meta": lambda m: (ai("", call("create_agent_category_level", category_name="Finance")) if turns(m) == 0
                           else ai("", call("get_tools_in_category", category_name="Finance")) if turns(m) == 1
                           else ai("", call("finish_search"))),
        "tool": lambda m: adds("Backup Quotes", "Quote") if turns(m) == 0 else tool_second(m),
        "solvable": check,
        "solver": solver,
        "judge": solved_judge,
    })


def _give_up_then_answer(catalog: Catalog) -> Any:
    """The solver gives up once (naming no API), then answers with Backup Quotes."""
    backup = catalog.function_name(catalog.find_api("Backup Quotes", "Quote").id)
    state = {"solves": 0}

    def solver(m: list[BaseMessage]) -> AIMessage:
        if not any(isinstance(x, AIMessage) for x in m[2:]):  # a new solve's first turn
            state["solves"] += 1
        if state["solves"] == 1:
            return ai("", call("Finish", return_type="give_up", reason="not sure"))
        if not any(isinstance(x, AIMessage) and x.tool_calls and x.tool_calls[0]["name"] == backup for x in m):
            return ai("", call(backup, symbol="AAPL"))
        return ai("", call("Finish", return_type="give_answer", final_answer="AAPL trades at 187.5 USD."))

    return solver


def test_the_small_category_shortcut_is_on_and_its_agent_stays_open() -> None:
    """main.py `category_search`: Finance has 2 ≤ 5 tools, so no category model call; the agent stays unfinished
    and a later re-activation finishes it without a model call and without reading the reason (`resume_search`).
    Here the round-end checks say Unsolvable: the climb reaches the category level (the shortcut agent ends at once,
    then the check runs again), then the meta-agent, which reads the check's status."""
    catalog, executor = make_world()
    verdicts = iter(["Solvable", "Unsolvable: no quote source works", "Unsolvable: still no quote source"])
    world = _finance_world(lambda m: ai(next(verdicts)), lambda m: ai("", call("finish_search")),
                           _give_up_then_answer(catalog))
    out = create_anytool_graph(catalog, ScriptedChatModel(responder=world), config=AnyToolConfig.paper(),
                               executor=executor).invoke({"query": "Price of AAPL?"})
    assert not any(r.startswith("category") for r in world.roles)  # the shortcut: never a category model call
    finance = out["agents"]["meta/Finance"]
    assert (finance["status"], finance["end_reason"], finance["messages"]) == ("finished", "small_category", [])
    assert out["agents"]["meta/Finance/t1"]["tools"] == ["Stocks API", "Backup Quotes"]
    # after the tool agent's round: a check; after the category level's (no model call) round: a check again
    assert world.roles.count("solvable") == 3 and out["status"] == "gave_up" and len(out["solver_attempts"]) == 1
    meta = out["agents"]["meta"]
    assert meta["activations"] == 2  # re-activated with the last check's status (main.py: failed_reason = status)
    read = [str(x.content) for x in meta["messages"] if isinstance(x, HumanMessage)][-1]
    assert NOT_SOLVABLE.format(reason="still no quote source") in read
    # ours: the shortcut agent is finished at once, so the climb goes from the tools straight to the meta-agent
    assert AnyToolConfig().small_category_shortcut and AnyToolConfig().small_category_finished


def test_a_pool_judged_solvable_after_a_round_is_solved_again_unchanged() -> None:
    """main.py: the re-activated tool agent adds nothing; `if not stop: check_if_request_solvable()` says
    solvable, so the next iteration solves the same pool again, and this time the answer is found."""
    catalog, executor = make_world()
    world = _finance_world(lambda m: ai("Solvable"), lambda m: ai("", call("finish_search")),
                           _give_up_then_answer(catalog))
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=world), config=AnyToolConfig.paper(),
                                 executor=executor)
    out = graph.invoke({"query": "Price of AAPL?"})
    assert out["status"] == "solved" and out["answer"] == "AAPL trades at 187.5 USD."
    first, second = out["solver_attempts"]
    assert (first["finish_type"], second["finish_type"]) == ("give_up", "give_answer")
    assert len(out["api_pool"]) == 1 and world.roles.count("solvable") == 2  # after the addition, after the round
    # ours (`round_gate="pool_changed"`): an unchanged pool is never solved again; the levels above are re-activated
    world = _finance_world(lambda m: ai("Solvable"), lambda m: ai("", call("finish_search")),
                           _give_up_then_answer(catalog))
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=world),
                                 config=AnyToolConfig.paper(round_gate="pool_changed"), executor=executor)
    out = graph.invoke({"query": "Price of AAPL?"})
    assert out["status"] == "gave_up" and len(out["solver_attempts"]) == 1 and world.roles.count("solvable") == 1


def test_a_changed_pool_judged_unsolvable_is_not_solved() -> None:
    """main.py: a round that adds APIs is solved only when `stop` is set; an "Unsolvable" check sends its status
    up a level instead (and once every agent is finished the loop ends, unsolved)."""
    catalog, executor = make_world()
    checks: list[str] = []

    def check(m: list[BaseMessage]) -> AIMessage:
        checks.append(last_human(m))
        return ai("Solvable" if len(checks) == 1 else "Unsolvable: quotes are not enough")

    world = _finance_world(check, lambda m: adds("Stocks API", "Quote") if turns(m) == 1
                           else ai("", call("finish_search")), _give_up_then_answer(catalog))
    out = create_anytool_graph(catalog, ScriptedChatModel(responder=world), config=AnyToolConfig.paper(),
                               executor=executor).invoke({"query": "Price of AAPL?"})
    assert len(out["api_pool"]) == 2 and len(out["solver_attempts"]) == 1 and out["status"] == "gave_up"
    # checks: after each addition (the second says Unsolvable: the search goes on), then at the end of the tool
    # level's round and of the category level's; the meta-agent then finishes and the loop ends
    assert len(checks) == 4 and all("Stocks API" in c for c in checks[1:])
    assert out["agents"]["meta"]["activations"] == 2


# ------------------------------------------------------------------------------------------ 4. pruning
def _entry(function_name: str, api: str) -> PoolEntry:
    return {"api_id": f"c/t/{function_name}", "category": "c", "tool": "t", "api": api,
            "function_name": function_name, "added_by": "x"}


def _tool_agent(id_: str = "meta/A/t1") -> AgentRecord:
    return {**new_agent_record(id_, "tool"), "status": "stopped", "activations": 1, "end_reason": "pool_solvable"}


def _state(attempt: SolverAttempt, pool: list[PoolEntry], verdict: dict[str, str] | None = None) -> Any:
    return {"query": "q", "run_key": "r", "round": 0, "tick": 3, "reflections": 0,
            "agents": {"meta/A/t1": _tool_agent()}, "api_pool": pool,
            "pool_at_last_solve": sorted(e["api_id"] for e in pool), "solver_attempts": [attempt],
            "verdict": verdict or {}, "reflect_request": "new"}


def _gave_up(arguments: dict[str, Any], failed: Sequence[str] = ()) -> SolverAttempt:
    """An attempt whose solver ended with this Finish call (the tree as the solver records it)."""
    node = {"id": 1, "parent": 0, "depth": 1, "children": [], "messages": [], "status": "given_up", "note": "",
            "calls": [{"tool_call_id": "c1", "function": "Finish", "api_id": "", "arguments": arguments,
                       "status": f"finish:{arguments['return_type']}", "cached": False}]}
    return {"attempt": 1, "round": 0, "mode": "dfsdt", "finish_type": arguments["return_type"],
            "answer": arguments.get("final_answer", ""), "reason": arguments.get("reason", ""),
            "failed_functions": list(failed), "failed_api_ids": [f"c/t/{f}" for f in failed], "api_calls": 1,
            "tree": [{"id": 0, "parent": None, "depth": 0, "children": [1], "messages": [], "status": "open",
                      "calls": [], "note": ""}, node]}


def _reflect(config: AnyToolConfig, state: Any) -> Any:
    deps = Deps(catalog=Catalog([], name="empty"), models=ModelSet(default=None, by_role={}), executor=None,  # type: ignore[arg-type]
                config=config, signals=RunSignals())
    return make_reflect(deps)(state, RUNTIME)


def test_pruning_matches_function_names_as_substrings() -> None:
    """main.py: `if standardized_api_name in str(failed_reason)`: every function name found anywhere in the text,
    also inside a longer name; the API's display name is not looked at."""
    pool = [_entry("get_quote", "Quote"), _entry("get_quote_history", "History"), _entry("get_news", "News")]
    reason = "get_quote_history failed; the News API is down"
    attempt = _gave_up({"return_type": "give_up", "reason": reason})
    paper = _reflect(AnyToolConfig.paper(), _state(attempt, pool)).update
    assert paper["removed_apis"] == ["c/t/get_quote", "c/t/get_quote_history"]
    ours = _reflect(AnyToolConfig(), _state(attempt, pool)).update  # whole words, display names too
    assert ours["removed_apis"] == ["c/t/get_quote_history", "c/t/get_news"]


def test_pruning_looks_at_the_text_only() -> None:
    """A function the solver named in `failed_functions` but that the text given to `remove_apis` does not
    contain stays (main.py prunes by the text alone); with the verbatim reason the names are in the text."""
    pool = [_entry("get_quote", "Quote"), _entry("get_news", "News")]
    attempt = _gave_up({"return_type": "give_up", "reason": "no luck", "failed_functions": ["get_news"]},
                       failed=["get_news"])
    summary = AnyToolConfig.paper(failure_reason_form="summary")
    assert _reflect(summary, _state(attempt, pool)).update["removed_apis"] == []
    assert _reflect(AnyToolConfig.paper(), _state(attempt, pool)).update["removed_apis"] == ["c/t/get_news"]


# ------------------------------------------------------------------------------------------ 5. the failure reason
def _read(update: dict[str, Any]) -> str:
    return str(update["agents"]["meta/A/t1"]["messages"][-1].content)


def test_after_a_give_up_the_agents_read_the_finish_arguments_as_a_whole() -> None:
    """main.py: `reason = solve_data['result']`, the Finish arguments (dfs_gt.py `json.loads` of the terminal
    node), and `agent.failed_reason = str(failed_reason)`: the dict's `str`."""
    args = {"return_type": "give_up", "reason": "the tide API timed out", "failed_functions": ["tide_api"]}
    update = _reflect(AnyToolConfig.paper(), _state(_gave_up(args), [_entry("tide_api", "Tides")])).update
    assert str(args) in _read(update) and update["reason"] == str(args)
    assert update["removed_apis"] == ["c/t/tide_api"]
    ours = _reflect(AnyToolConfig(), _state(_gave_up(args), [_entry("tide_api", "Tides")])).update
    assert ours["reason"] == "the tide API timed out"


def test_an_answer_with_an_exclusion_word_gives_its_finish_arguments_too() -> None:
    """main.py: `if not solved or any(word in final_answer for word in exclusion_words): reason =
    solve_data['result']` (no judge call)."""
    args = {"return_type": "give_answer", "final_answer": "Sorry, I could not find the tide table."}
    state = _state(_gave_up(args), [_entry("tide_api", "Tides")],
                   {"label": "Unsolved", "reason": "the answer contains 'could not'", "by": "exclusion"})
    assert _reflect(AnyToolConfig.paper(), state).update["reason"] == str(args)


def test_an_exhausted_tree_gives_a_restarts_arguments() -> None:
    """No terminal node: DFS.py `to_json` takes a give_up_and_restart node drawn at random (`give_up_node`), and
    dfs_gt.py parses its Finish arguments: the agents read one restart's arguments, not our summary."""
    fn = _weather_catalog().function_name(WEATHER)
    model = ScriptedChatModel(replies=[
        ai("", call("Finish", return_type="give_up_and_restart", reason=f"{fn} said no")),
        ai("", call("Finish", return_type="give_up_and_restart", reason="still nothing")),
    ])
    attempt = _solve(AnyToolConfig.paper(), {"solver": model})
    assert attempt["finish_type"] == "give_up" and attempt["reason"].startswith("all branches exhausted")
    restarts = [str(c["args"]) for c in (call("Finish", return_type="give_up_and_restart", reason=f"{fn} said no"),
                                         call("Finish", return_type="give_up_and_restart", reason="still nothing"))]
    reason = _reflect(AnyToolConfig.paper(), _state(attempt, [_entry(fn, "Current weather")])).update["reason"]
    assert reason in restarts


def _judged(answer: str, labels: list[str]) -> dict[str, str]:
    model = ScriptedChatModel(replies=[ai(f'{{"label": "{x}", "reason": "sample {i}: {x}"}}')
                                       for i, x in enumerate(labels)])
    deps = Deps(catalog=Catalog([], name="empty"), models=ModelSet(default=model, by_role={}), executor=None,  # type: ignore[arg-type]
                config=AnyToolConfig.paper(), signals=RunSignals())
    answered: SolverAttempt = {"attempt": 1, "round": 0, "mode": "dfsdt", "finish_type": "give_answer",
                               "answer": answer, "reason": "", "failed_functions": [], "failed_api_ids": [],
                               "api_calls": 1, "tree": []}
    state: Any = {"query": "How high is the tide?", "run_key": "r", "solver_attempts": [answered], "reflections": 0}
    verdict: dict[str, str] = make_judge(deps)(state, RUNTIME).update["verdict"]
    return verdict


def test_a_judged_answer_gives_the_reason_of_a_sample_drawn_from_all() -> None:
    """verifier.py `check_solved_toolbench`: `random.sample(reason_list, 1)[0]` over every sample's reason,
    passed or failed, whatever the vote; main.py hands it to the agents as it is (no vote count added)."""
    labels = ["Unsolved", "Solved", "Unsolved"]
    reasons = [f"sample {i}: {x}" for i, x in enumerate(labels)]
    drawn = set()
    for h in range(12):
        answer = f"The tide is {h} m high."
        verdict = _judged(answer, labels)
        assert verdict["label"] == "Unsolved"
        assert verdict["sample_reason"] == reasons[seeded_index(3, "How high is the tide?", answer, reasons)]
        state = _state({**_gave_up({"return_type": "give_answer", "final_answer": answer})}, [], verdict)
        assert _reflect(AnyToolConfig.paper(), state).update["reason"] == verdict["sample_reason"]
        drawn.add(verdict["sample_reason"])
    assert drawn == set(reasons)  # the Solved sample's reason too, as random.sample draws from all three


# ------------------------------------------------------------------------------------------ the round-end gate
def _gate_state(agents: dict[str, AgentRecord], pool: list[PoolEntry]) -> Any:
    attempt = _gave_up({"return_type": "give_up", "reason": "not sure"})
    return {"query": "Price of AAPL?", "run_key": "r", "round": 1, "tick": 5, "reflections": 1, "agents": agents,
            "api_pool": pool, "pool_at_last_solve": sorted(e["api_id"] for e in pool), "solver_attempts": [attempt],
            "solvable_round": 0, "reflect_level": "tool", "verdict": {}, "usage": {}}


def _gate(config: AnyToolConfig, model: ScriptedChatModel, state: Any) -> Any:
    from langgraph_anytool.nodes.lifecycle import make_gate

    catalog, _ = make_world()
    deps = Deps(catalog=catalog, models=ModelSet(default=model, by_role={}), executor=None,  # type: ignore[arg-type]
                config=config, signals=RunSignals())
    return make_gate(deps)(state, {}, RUNTIME)


def test_the_round_end_check_reads_any_reply_but_unsolvable_as_solvable() -> None:
    """main.py `check_if_request_solvable`: `if solvable != 'Unsolvable': stop = True` (their verifier answers
    "Unsure" when the model gives no verdict): an unclear reply, or a failed call, sends the unchanged pool to the
    solver; every agent finished ends the run without a check (the loop's condition)."""
    catalog, _ = make_world()
    api = catalog.find_api("Backup Quotes", "Quote")
    pool: list[PoolEntry] = [{"api_id": api.id, "category": "Finance", "tool": api.tool_name, "api": api.name,
                              "function_name": catalog.function_name(api.id), "added_by": "meta/Finance/t1"}]
    open_meta = {**new_agent_record("meta", "meta"), "status": "stopped", "end_reason": "pool_solvable"}
    done_tool = {**_tool_agent("meta/Finance/t1"), "status": "finished", "end_reason": "finish_search"}
    agents: dict[str, AgentRecord] = {"meta": open_meta, "meta/Finance/t1": done_tool}  # type: ignore[dict-item]
    unclear = ScriptedChatModel(replies=[ai("I would have to try the API to know.")])
    out = _gate(AnyToolConfig.paper(), unclear, _gate_state(agents, pool))
    assert out.goto.node == "solver" and out.update["solvable_round"] == 1 and len(unclear.calls) == 1

    def failing(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        raise RuntimeError("upstream 502")

    out = _gate(AnyToolConfig.paper(), ScriptedChatModel(responder=failing), _gate_state(agents, pool))
    assert out.goto.node == "solver"
    unsolvable = ScriptedChatModel(replies=[ai("Unsolvable: the quotes are delayed")])
    out = _gate(AnyToolConfig.paper(), unsolvable, _gate_state(agents, pool))
    assert out.goto == "reflect" and out.update["reflect_request"] == "climb"
    assert out.update["reason"] == NOT_SOLVABLE.format(reason="the quotes are delayed")
    finished = {k: {**a, "status": "finished"} for k, a in agents.items()}
    silent = ScriptedChatModel(replies=[])
    assert _gate(AnyToolConfig.paper(), silent, _gate_state(finished, pool)).goto == "finalize" and not silent.calls
    # ours: the pool is unchanged since the last solve, so no check and no solve: the next level up
    out = _gate(AnyToolConfig(), silent, _gate_state(agents, pool))
    assert out.goto == "reflect" and out.update == {"reflect_request": "climb"} and not silent.calls
