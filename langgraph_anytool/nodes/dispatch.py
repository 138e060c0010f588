"""The retriever's dispatcher: starts pending agents (bounded per superstep) or ends retrieval.

`dispatch` runs once per superstep (after every agent branch of the previous one has returned): it marks up to
`max_concurrency` pending agents, oldest first, `running` and lists them in `to_start`; `route_dispatch` then
`Send`s each to its level's loop node. When the pool was judged solvable in this round, is full, or the token
budget is spent, pending agents are marked `stopped` instead and retrieval is over (route to `done`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from langgraph.types import Send

from ..graphs.agent_loop import NODE_FOR_LEVEL
from ..llm import total_tokens
from ..state import AgentInput, AgentRecord

if TYPE_CHECKING:
    from ..runtime import Deps


def stop_reason(state: Mapping[str, Any], deps: Deps) -> str | None:
    """Why no agent may start now (`pool_solvable`, `pool_full`, `budget`), or None."""
    if state.get("solvable_round", -1) == state.get("round", 0):
        return "pool_solvable"
    if len(state.get("api_pool") or []) >= deps.config.max_api_pool:
        return "pool_full"
    if deps.over_budget(state.get("run_key", "")):
        return "budget"
    return None


def make_dispatch(deps: Deps) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The `dispatch` node."""

    def dispatch(state: Mapping[str, Any]) -> dict[str, Any]:
        agents: Mapping[str, AgentRecord] = state.get("agents") or {}
        pending = [a for a in agents.values() if a["status"] == "pending"]  # insertion order = creation order
        run_key = state.get("run_key", "")
        # the checkpointed state is authoritative: re-seed the run-scoped views from it (also after a resume)
        deps.signals.sync_pool(run_key, [e["api_id"] for e in state.get("api_pool") or []],
                               list(state.get("removed_apis") or []))
        deps.signals.seed_tokens(run_key, total_tokens(state.get("usage") or {}))
        reason = stop_reason(state, deps)
        if reason is not None:
            stopped = {a["id"]: {**a, "status": "stopped", "end_reason": reason} for a in pending}
            return {"agents": stopped, "to_start": []}
        start = pending[: deps.config.max_concurrency]
        return {"agents": {a["id"]: {**a, "status": "running"} for a in start}, "to_start": [a["id"] for a in start]}

    return dispatch


def make_route_dispatch(done: str) -> Callable[[Mapping[str, Any]], list[Send] | str]:
    """The conditional edge after `dispatch`: one `Send` per started agent, or `done` when none starts."""

    def route_dispatch(state: Mapping[str, Any]) -> list[Send] | str:
        ids = state.get("to_start") or []
        if not ids:
            return done
        agents: Mapping[str, AgentRecord] = state["agents"]
        pool = [e["api_id"] for e in state.get("api_pool") or []]
        sends = []
        for agent_id in ids:
            record = agents[agent_id]
            payload: AgentInput = {"query": state["query"], "run_key": state.get("run_key", ""),
                                   "round": state.get("round", 0), "agent": record, "pool": list(pool)}
            sends.append(Send(NODE_FOR_LEVEL[record["level"]], payload))
        return sends

    return route_dispatch
