"""Self-reflection (AnyTool §4.3): route the failure reason back to unfinished agents, prune failed APIs.

A reflection starts after a failed solve (or an empty pool after retrieval): the round advances, the APIs that
failed leave the pool (those the solver named, and pooled APIs whose function or API name the failure reason
mentions, as the authors' code does), the reason is appended to the history of every unfinished agent, and the
lowest level (tool, then category, then meta: Table 4's order) that has unfinished agents is re-activated.
When the re-activated agents leave the pool as it was, the next level up is re-activated in the same round
("climb") before the solver runs again; an unchanged or empty pool never reaches the solver.

`AnyToolConfig.paper()` follows the authors' loop (dyabel/AnyTool `scripts/main.py`, the `while` loop of
`__main__`) in two places: `reflect_when_pool_full=False` ends the run instead of reflecting when the pool, the
failed APIs pruned, is still full (`remove_apis(...)` then `if len(global_api_list) >= max_api_number: break`), and
`failure_reason_to="reactivated"` gives the reason only to the agents being re-activated (`agent.failed_reason =
str(failed_reason)` for `agents_to_resume`), also on a climb (there the round's failure reason; with
`round_gate="solvability_check"` the gate's check status, as the authors' `failed_reason = status`).

Three more settings follow the same loop, all in `paper()`:
- `failure_reason_form="verbatim"`: the reason is main.py's `failed_reason` as it stands: after a give-up, an
  empty answer or an exclusion word, `solve_data['result']` as a whole (the Finish call's arguments, `str` of the
  dict; `anytool/dfs_gt.py solve_given_api_main` reads them from the terminal node, else from a
  give_up_and_restart node drawn at random as `DFS.py to_json` draws it); after an answer the judge judged, the
  reason `check_solved_toolbench` returns (a drawn sample's); when the solver did not run, the status;
- `prune_match="substring"`: every pooled API whose function name occurs anywhere in `str(failed_reason)` is
  pruned (`for standardized_api_name, origin_api in dfs_data['api2origin'].items(): if standardized_api_name in
  str(failed_reason)`), and nothing else (the Finish arguments carry the solver's `failed_functions`);
- `round_gate="solvability_check"`: with nobody left to re-activate after a failed solve the run ends (main.py's
  `while` loop stops once every agent is finished), and a climb hands the next level the gate's solvability
  status (`failed_reason = status`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime
from langgraph.types import Command

from ...config import PruneMatch, ReflectionScope
from ...paper_prompts import PromptBook
from ...state import AgentRecord, AnyToolState, PoolEntry, SolverAttempt
from ..category_agent.prompts import REACTIVATE_PROMPT as CATEGORY_REACTIVATE
from ..draws import seeded_index
from ..flat_agent.prompts import REACTIVATE_PROMPT as FLAT_REACTIVATE
from ..meta_agent.prompts import REACTIVATE_PROMPT as META_REACTIVATE
from ..tool_agent.prompts import REACTIVATE_PROMPT as TOOL_REACTIVATE

if TYPE_CHECKING:
    from ...runtime import Deps

# The paper's Table 4 / §4.3 order: re-activate the lowest level that has unfinished agents.
# The flat retriever's single agent ("flat") stands in for the whole hierarchy.
LEVEL_ORDER: tuple[str, ...] = ("tool", "category", "meta", "flat")
SCOPE_LEVELS: Mapping[str, tuple[str, ...]] = {
    "all": LEVEL_ORDER, "tool+category": ("tool", "category", "flat"), "tool": ("tool", "flat")}

ReflectRequest = Literal["new", "climb"]


def reactivation_prompt(level: str, reason: str, book: PromptBook | None = None) -> str:
    """The re-activation message for an agent of `level` (Tables 18-20's contract, kept beside each role); with
    the authors' prompts (`book`), main.py's `REFIND_*_PROMPT.replace('{failed_reason}', str(failed_reason))`
    (`resume_search` of each agent: REFIND_CATEGORY for the meta-agent, REFIND_TOOL for a category agent,
    REFIND_API for a tool agent)."""
    if book is not None:
        slot = {"tool": "tool_reactivate", "category": "category_reactivate", "flat": "flat_reactivate"}.get(
            level, "meta_reactivate")
        return book.fill(slot, reason=reason)
    template = {"tool": TOOL_REACTIVATE, "category": CATEGORY_REACTIVATE, "flat": FLAT_REACTIVATE}.get(
        level, META_REACTIVATE)
    return template.format(reason=reason)


def failure_reason(state: Mapping[str, Any]) -> str:
    """The judge's reason for an answer judged unsolved, the solver's give-up reason, or the state's reason."""
    attempts = state.get("solver_attempts") or []
    verdict = state.get("verdict") or {}
    if not attempts or attempts[-1]["round"] != state.get("round", 0):
        return state.get("reason") or "no API relevant to the query was found"
    attempt = attempts[-1]
    if attempt["finish_type"] == "give_answer" and verdict.get("reason"):
        return str(verdict["reason"])
    return attempt["reason"] or verdict.get("reason") or f"the solver ended with {attempt['finish_type']}"


# judge verdicts decided by the judge's model (ToolEval's stages, the authors' vote): their reason is main.py's
# `check_solved_toolbench` reason; any other verdict (a rule, an exclusion word) leaves the Finish arguments
_JUDGED = frozenset({"answer", "process", "majority"})


def finish_arguments(attempt: SolverAttempt, *key: object) -> dict[str, Any]:
    """main.py's `solve_data['result']` for an attempt: the arguments of the Finish call that ended it (as
    `dfs_gt.py solve_given_api_main` parses the terminal node's), else those of a give_up_and_restart Finish drawn
    at random (`DFS.py to_json`: `random.randint` over `give_up_node`; ours reproducible from `key`), else what
    their parser makes of an empty answer, `{'return_type': ''}`. An α-UMi attempt has no Finish calls: its
    outcome as α-UMi's `utils.py collab_agent_parser` turns it into one (conclusion → give_answer with the answer,
    give up → give_up_and_restart)."""
    tree = attempt.get("tree") or []
    calls = [c for n in tree for c in n.get("calls", []) if str(c.get("status", "")).startswith("finish:")]
    ending = f"finish:{attempt['finish_type']}"
    ended = [c for c in calls if c["status"] == ending and ending in ("finish:give_answer", "finish:give_up")]
    if ended and isinstance(ended[-1].get("arguments"), Mapping):
        return dict(ended[-1]["arguments"])
    if attempt.get("mode") == "umi":
        if attempt["finish_type"] == "give_answer":
            return {"return_type": "give_answer", "final_answer": attempt["answer"]}
        restarts: list[Any] = [{"return_type": "give_up_and_restart"} for n in tree if n.get("status") == "given_up"]
    else:
        restarts = [c.get("arguments") for c in calls if c["status"] == "finish:give_up_and_restart"]
    restarts = [r for r in restarts if isinstance(r, Mapping)]
    if restarts:
        return dict(restarts[seeded_index(len(restarts), *key)])
    return {"return_type": ""}


def verbatim_reason(state: Mapping[str, Any]) -> str:
    """`failure_reason_form="verbatim"`: main.py's `str(failed_reason)`: the reason of the judge's drawn sample
    after an answer the judge's model judged (`check_solved_toolbench`), else `str` of the Finish arguments
    (`reason = solve_data['result']`: a give-up, no answer, an exclusion word); the state's reason (the
    solvability status) when the solver did not run this round."""
    attempts = state.get("solver_attempts") or []
    if not attempts or attempts[-1]["round"] != state.get("round", 0):
        return state.get("reason") or "no API relevant to the query was found"
    attempt = attempts[-1]
    verdict = state.get("verdict") or {}
    if verdict.get("by") in _JUDGED:
        return str(verdict.get("sample_reason") or verdict.get("reason") or "")
    return str(finish_arguments(attempt, state.get("query", ""), attempt["attempt"]))


def substring_apis(pool: Sequence[PoolEntry], text: str) -> list[str]:
    """Pooled API ids whose function name occurs anywhere in the text (main.py's `name in str(failed_reason)`)."""
    return [e["api_id"] for e in pool if e["function_name"] and e["function_name"] in text]


def mentioned_apis(pool: Sequence[PoolEntry], text: str) -> list[str]:
    """Pooled API ids whose function name or API name the text mentions (whole words, as written)."""
    out = []
    for entry in pool:
        for name in (entry["function_name"], entry["api"]):
            if name and re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text):
                out.append(entry["api_id"])
                break
    return out


def failed_apis(state: Mapping[str, Any], reason: str, match: PruneMatch = "whole_word") -> list[str]:
    """The pooled APIs to prune: those the solver named as failed, and those the reason mentions (whole words);
    with `match="substring"` (the authors'), every API whose function name occurs in the reason, and only those."""
    pool: list[PoolEntry] = list(state.get("api_pool") or [])
    if match == "substring":
        return substring_apis(pool, reason)
    pooled = {e["api_id"] for e in pool}
    attempts = state.get("solver_attempts") or []
    named = attempts[-1].get("failed_api_ids", []) if attempts and attempts[-1]["round"] == state.get("round") else []
    return list(dict.fromkeys([a for a in named if a in pooled] + mentioned_apis(pool, reason)))


def plan_reactivation(agents: Mapping[str, AgentRecord], scope: ReflectionScope = "all", above: str = ""
                      ) -> tuple[str | None, list[str]]:
    """The level to re-activate and the ids of its unfinished agents, looking at the levels of `scope` above
    `above` (all of them when empty), lowest first; (None, []) when none has unfinished agents."""
    levels = SCOPE_LEVELS[scope]
    if above in levels:
        levels = levels[levels.index(above) + 1:]
    for level in levels:
        ids = [a["id"] for a in agents.values() if a["level"] == level and a["status"] != "finished"]
        if ids:
            return level, ids
    return None, []


def reactivated(agents: Mapping[str, AgentRecord], ids: Iterable[str], ready: int) -> dict[str, AgentRecord]:
    """The records of `ids` made pending for a new activation."""
    return {i: {**agents[i], "status": "pending", "end_reason": "", "activation_calls": 0, "ready": ready}
            for i in ids}


def with_reason(agents: Mapping[str, AgentRecord], ids: Iterable[str], reason: str,
                book: PromptBook | None = None) -> dict[str, AgentRecord]:
    """The records of `ids` with the failure reason appended to their histories (its re-activation prompt),
    unless the same prompt is already their last message (no turn since). A small category's agent left
    unfinished reads nothing (main.py `Category_Agent.resume_search` ends before its prompt)."""
    out: dict[str, AgentRecord] = {}
    for i in ids:
        agent = agents[i]
        if agent.get("small_category"):
            out[i] = agent
            continue
        message = HumanMessage(reactivation_prompt(agent["level"], reason, book))
        last = agent["messages"][-1] if agent["messages"] else None
        repeated = isinstance(last, HumanMessage) and last.content == message.content
        out[i] = {**agent, "messages": [*agent["messages"], *([] if repeated else [message])]}
    return out


def can_reflect(state: Mapping[str, Any], deps: Deps) -> bool:
    """Whether a new reflection may start: reflections left and budget left."""
    return state.get("reflections", 0) < deps.config.max_reflections and not deps.over_budget(
        state.get("run_key", ""))


def pool_ids(state: Mapping[str, Any]) -> list[str]:
    return sorted(e["api_id"] for e in state.get("api_pool") or [])


def make_reflect(base: Deps) -> Any:
    """The `reflect` node: a new reflection (`reflect_request` "new") or a climb to the next level ("climb")."""

    def reflect(state: AnyToolState, runtime: Runtime[Any]) -> Command[Literal["dispatch", "gate", "finalize"]]:
        deps = base.for_run(runtime.context)
        agents = state.get("agents", {})
        tick = state.get("tick", 0)
        scope = deps.config.reflection_scope
        only_reactivated = deps.config.failure_reason_to == "reactivated"
        checked = deps.config.round_gate == "solvability_check"
        if state.get("reflect_request") == "climb":
            level, ids = plan_reactivation(agents, scope, above=state.get("reflect_level") or "")
            if not ids:
                return Command(goto="finalize")
            climbing = dict(agents)
            if only_reactivated or checked:  # they have not read the reason (the gate's solvability status) yet
                climbing.update(with_reason(agents, ids, state.get("reason") or failure_reason(state),
                                            deps.paper_prompts))
            return Command(update={"agents": reactivated(climbing, ids, tick), "reflect_level": level},
                           goto="dispatch")
        if not can_reflect(state, deps):
            return Command(goto="finalize")
        reason = verbatim_reason(state) if deps.config.failure_reason_form == "verbatim" else failure_reason(state)
        failed = failed_apis(state, reason, deps.config.prune_match)
        left = set(pool_ids(state)) - set(failed)
        if not deps.config.reflect_when_pool_full and len(left) >= deps.config.max_api_pool:
            return Command(update={"reason": reason}, goto="finalize")  # the authors' loop: no reflection then
        level, ids = plan_reactivation(agents, scope)
        readers = ids if only_reactivated else [a["id"] for a in agents.values() if a["status"] != "finished"]
        updated = with_reason(agents, readers, reason, deps.paper_prompts)
        updated.update(reactivated(updated, ids, tick))
        update: dict[str, Any] = {
            "agents": updated, "api_pool": {"remove": failed}, "removed_apis": failed,
            "round": state.get("round", 0) + 1, "reflections": state.get("reflections", 0) + 1, "reason": reason,
            "reflect_level": level or "", "usage": {"reflections": 1},
        }
        if ids:
            return Command(update=update, goto="dispatch")
        if checked:  # main.py: once every agent is finished the loop ends, even on a pruned pool
            return Command(update=update, goto="finalize")
        remaining = sorted(set(pool_ids(state)) - set(failed))
        changed = bool(remaining) and remaining != sorted(state.get("pool_at_last_solve") or [])
        return Command(update=update, goto="gate" if changed else "finalize")

    return reflect
