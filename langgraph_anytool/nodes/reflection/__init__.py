"""Self-reflection (AnyTool §4.3): route the failure reason back to unfinished agents, prune failed APIs."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import HumanMessage

from ...runtime import Deps
from ...state import AgentRecord, AnyToolState
from ..category_agent.prompts import REACTIVATE_PROMPT as CATEGORY_REACTIVATE
from ..meta_agent.prompts import REACTIVATE_PROMPT as META_REACTIVATE
from ..tool_agent.prompts import REACTIVATE_PROMPT as TOOL_REACTIVATE

# The paper's Table 4 / §4.3 order: re-activate the lowest level that has unfinished agents.
LEVEL_ORDER: tuple[str, ...] = ("tool", "category", "meta")


def reactivation_prompt(level: str, reason: str) -> str:
    """The re-activation message for an agent of `level` (paper Tables 18-20, kept beside each role)."""
    template = {"tool": TOOL_REACTIVATE, "category": CATEGORY_REACTIVATE}.get(level, META_REACTIVATE)
    return template.format(reason=reason)


def failure_reason(state: AnyToolState) -> str:
    """The solver's give-up reason, or the judge's reason for an answer judged unsolved."""
    attempt = state["solver_attempts"][-1]
    verdict = state.get("verdict") or {}
    if attempt["finish_type"] == "give_answer" and verdict.get("reason"):
        return verdict["reason"]
    return attempt["reason"] or verdict.get("reason") or f"the solver ended with {attempt['finish_type']}"


def plan_reactivation(agents: dict[str, AgentRecord]) -> tuple[str | None, list[str]]:
    """The level to re-activate and the ids of its unfinished agents (none → (None, []))."""
    for level in LEVEL_ORDER:
        ids = [a["id"] for a in agents.values() if a["level"] == level and a["status"] != "finished"]
        if ids:
            return level, ids
    return None, []


def make_reflect(deps: Deps) -> Any:
    """The `reflect` node: prunes failed APIs, appends the reason to unfinished agents, re-activates a level."""

    def reflect(state: AnyToolState) -> dict[str, Any]:
        reason = failure_reason(state)
        attempt = state["solver_attempts"][-1]
        pooled = {e["api_id"] for e in state.get("api_pool", [])}
        failed = [a for a in attempt.get("failed_api_ids", []) if a in pooled]
        _level, reactivate = plan_reactivation(state.get("agents", {}))
        updated: dict[str, AgentRecord] = {}
        for agent in state.get("agents", {}).values():
            if agent["status"] == "finished":
                continue
            record: AgentRecord = {**agent, "messages": [*agent["messages"],
                                                         HumanMessage(reactivation_prompt(agent["level"], reason))]}
            if agent["id"] in reactivate:
                record["status"] = "pending"
            updated[agent["id"]] = record
        return {
            "agents": updated,
            "api_pool": {"remove": failed},
            "removed_apis": failed,
            "round": state.get("round", 0) + 1,
            "reflections": state.get("reflections", 0) + 1,
            "reason": reason,
            "usage": {"reflections": 1},
        }

    return reflect


def route_after_reflect(state: AnyToolState) -> Literal["dispatch", "gate", "finalize"]:
    """Re-run the retriever if agents were re-activated; re-solve if only the pool changed; else stop."""
    if any(a["status"] == "pending" for a in state.get("agents", {}).values()):
        return "dispatch"
    current = sorted(e["api_id"] for e in state.get("api_pool", []))
    if current != sorted(state.get("pool_at_last_solve", [])) and current:
        return "gate"
    return "finalize"
