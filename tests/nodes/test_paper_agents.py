"""Issue 36 §3: `paper()`'s retriever agents are not ended by replies without a function call.

dyabel/AnyTool `scripts/main.py` (`Main_Search_Agent.assign_main`, `Category_Agent.category_search` /
`resume_search`, `Tool_Agent.tool_search`): `for i in range(20)`, and a reply without a function call is answered
with the nudge (`self.messages.append({"role": "user", "content": ...})`) and the loop goes on; only the 20 steps
end it. Ours ends an activation after `max_turns_without_call` (3) such replies in a row.
"""

from __future__ import annotations

from typing import Any, cast

from langchain_core.messages import HumanMessage

from langgraph_anytool import AnyToolConfig
from langgraph_anytool.models.llm import ModelSet
from langgraph_anytool.nodes.agents import new_agent_record
from langgraph_anytool.runtime import Deps, RunSignals
from tests.fakes import ScriptedChatModel, ai, call
from tests.nodes.test_agent_loop import SMALL_PLAN, make_catalog, run_loop


def _silent_meta(config: AnyToolConfig) -> dict[str, Any]:
    model = ScriptedChatModel(responder=lambda m, t: ai("Let me think about the categories."))
    deps = Deps(catalog=make_catalog(SMALL_PLAN), models=ModelSet(default=model, by_role={}),
                executor=cast(Any, None), config=config, signals=RunSignals())
    return dict(run_loop("meta", new_agent_record("meta", "meta"), deps)["agents"]["meta"])


def test_a_paper_agent_is_nudged_up_to_the_step_limit_as_main_py_does() -> None:
    rec = _silent_meta(AnyToolConfig.paper())
    assert (rec["status"], rec["end_reason"], rec["steps"]) == ("finished", "step_limit", 20)
    nudges = [m for m in rec["messages"] if isinstance(m, HumanMessage)][1:]  # after the first user message
    assert len(nudges) == 20  # each reply without a call is answered (the 20th too, as main.py's loop does)


def test_ours_ends_a_silent_agent_after_max_turns_without_call() -> None:
    rec = _silent_meta(AnyToolConfig(seed_with_search=False))
    assert rec["steps"] == 3 and str(rec["end_reason"]).startswith("no_calls")


def _offered(level: str, config: AnyToolConfig) -> list[str]:
    model = ScriptedChatModel(responder=lambda m, t: ai("", call("finish_search")))
    deps = Deps(catalog=make_catalog(SMALL_PLAN), models=ModelSet(default=model, by_role={}),
                executor=cast(Any, None), config=config, signals=RunSignals())
    category = next(iter(SMALL_PLAN))
    record = new_agent_record(level, level, category=None if level == "meta" else category,
                              tools=list(SMALL_PLAN[category])[:1] if level == "tool" else None)
    run_loop(level, record, deps)
    return list(model.calls[0]["tools"])


def test_paper_agents_are_offered_what_main_py_offers_them_in_its_order() -> None:
    """main.py: Main_Search_Agent (get_tools_in_category, get_tools_descriptions, create_agent_category_level, then
    Finish appended), Category_Agent (get_tools_descriptions, Finish; category_search appends
    create_agent_tool_level), Tool_Agent (Finish, check_if_request_solvable, add_apis_into_api_pool: get_api_details
    and get_apis_in_tool commented out). Our `finish_search` is their Finish."""
    paper = AnyToolConfig.paper()
    assert _offered("meta", paper) == ["get_tools_in_category", "get_tools_descriptions",
                                       "create_agent_category_level", "finish_search"]
    assert _offered("category", paper) == ["get_tools_descriptions", "finish_search", "create_agent_tool_level"]
    assert _offered("tool", paper) == ["finish_search", "check_if_request_solvable", "add_apis_into_api_pool"]
    ours = AnyToolConfig(seed_with_search=False)
    assert "get_tools_in_category" in _offered("category", ours)
    assert {"get_apis_in_tool", "get_api_details"} <= set(_offered("tool", ours))


def test_the_category_order_is_drawn_per_query_as_query_all_categories_draws_it() -> None:
    """api_database_function.py `query_all_categories`: `random.sample(list(database.keys()), len(...))`: every
    category once, a new order per query (ours keyed by the query: a re-run repeats it)."""
    from langgraph_anytool.nodes.draws import seeded_sample

    names = [f"C{i}" for i in range(8)]
    orders = {tuple(seeded_sample(names, "query_all_categories", f"query {q}")) for q in range(20)}
    assert len(orders) > 10 and all(sorted(o) == names for o in orders)
    assert seeded_sample(names, "x", "q") == seeded_sample(names, "x", "q")


def test_the_diversity_candidates_are_dfs_py_s_js_list() -> None:
    """DFS.py DFS_tree_search.DFS: per child, down `children[0]` to its first action: {"name", "arguments",
    "function_output", "mento-carlo-action-value": compute_weight() (0.0, Tree.py)}; `json.dumps(js_list,
    indent=2)` + "\\n", then "again, your former observation: <obs>\\n" when the expanded node has one."""
    import json

    from langchain_core.messages import AIMessage, ToolMessage

    from langgraph_anytool.nodes.solver.dfsdt import authors_candidates

    def node(children: list[int], *messages: Any) -> Any:
        return {"messages": list(messages), "children": children}

    def called(name: str, cid: str, **args: Any) -> AIMessage:
        return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": cid, "type": "tool_call"}])

    nodes = [node([1]),
             node([2, 3], called("f", "c1", q="a"), ToolMessage(content="obs1", tool_call_id="c1")),
             node([4], AIMessage(content="thinking first")),  # no action: DFS.py follows children[0]
             node([], called("h", "c3", q="c"), ToolMessage(content="obs3", tool_call_id="c3")),
             node([], called("g", "c4", q="b"), ToolMessage(content="obs4", tool_call_id="c4"))]
    js_list = [{"name": "g", "arguments": json.dumps({"q": "b"}), "function_output": "obs4",
                "mento-carlo-action-value": 0.0},
               {"name": "h", "arguments": json.dumps({"q": "c"}), "function_output": "obs3",
                "mento-carlo-action-value": 0.0}]
    assert authors_candidates(nodes, 1) == f"{json.dumps(js_list, indent=2)}\nagain, your former observation: obs1\n"
    assert authors_candidates(nodes, 3) == ""  # no child: DFS.py sends no diversity message
