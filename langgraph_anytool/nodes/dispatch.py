"""The retriever's dispatcher: each superstep, starts one step of each ready agent (bounded) or ends retrieval.

`dispatch` runs after every agent step of the previous superstep has returned. It marks up to `max_concurrency`
pending agents `running` (longest waiting first) and `Send`s each to its level's step subgraph. When the pool was
judged solvable in this round, is full, or a budget (tokens, cost, wall time) is spent, pending agents are marked
`stopped` instead and retrieval is over (`goto` the `done` node).

The parallel phase is bulk-synchronous: every `Send` payload carries the run's shared state as of this dispatch
(the pool, the APIs reflection removed, the budget tallies), and a step sees that snapshot plus its own step's
effects, never a sibling's in-flight ones. Siblings see each other's pool additions, a `solvable_round` and token
usage at the next superstep, through the checkpointed state, so the order in which parallel replies arrive
(wall-clock timing: load, a retried request) cannot change any agent's history. The paper's global pool and its
cap hold at superstep granularity: agents of one superstep may together propose more than the cap, and the
`api_pool` reducer keeps the earlier-dispatched agents' additions (state.update_pool). The stop signal is
`solvable_round`: a step that finds the pool solvable ends its own agent at once; its siblings finish the step
they are in and are stopped here before their next one. Only the wall-time budget is the clock's (timing by
nature).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from ..state import AgentInput, AgentRecord
from .agents.records import NODE_FOR_LEVEL

if TYPE_CHECKING:
    from ..runtime import Deps


def stop_reason(state: Mapping[str, Any], deps: Deps) -> str | None:
    """Why no agent may take another step now (`pool_solvable`, `pool_full`, `budget`, `time_limit`), or None."""
    if state.get("solvable_round", -1) == state.get("round", 0):
        return "pool_solvable"
    if len(state.get("api_pool") or []) >= deps.config.max_api_pool:
        return "pool_full"
    stop = deps.budget_stop(state.get("run_key", ""))
    if stop is not None:
        return "time_limit" if stop.kind == "time_limit" else "budget"
    return None


def make_dispatch(base: Deps, done: str) -> Callable[..., Command[Any]]:
    """The `dispatch` node; `done` is the node that follows retrieval."""

    def dispatch(state: Mapping[str, Any], runtime: Runtime[Any]) -> Command[Any]:
        deps = base.for_run(runtime.context)
        agents: Mapping[str, AgentRecord] = state.get("agents") or {}
        # oldest ready first; insertion (creation) order breaks ties
        pending = sorted((a for a in agents.values() if a["status"] == "pending"), key=lambda a: a["ready"])
        run_key = state.get("run_key", "")
        tick = state.get("tick", 0) + 1
        # the checkpointed state is authoritative: re-seed the run-scoped tallies from it (also after a resume)
        deps.sync_run(run_key, state)  # budget tallies (tokens, USD, the run's start) and retries
        reason = stop_reason(state, deps)
        if reason is not None or not pending:
            stopped = {a["id"]: {**a, "status": "stopped", "end_reason": reason} for a in pending}
            return Command(update={"agents": stopped, "tick": tick}, goto=done)
        start = {a["id"]: AgentRecord(**{**a, "status": "running"}) for a in pending[: deps.config.max_concurrency]}
        pool = [e["api_id"] for e in state.get("api_pool") or []]
        removed = list(state.get("removed_apis") or [])
        tally = deps.tally(run_key)  # every step of this superstep checks the budgets against the same figures
        # each step may spend its share of the tokens left: the siblings together keep to the budget
        tally["share"] = max(0, deps.config.token_budget - tally["tokens"]) // len(start)
        sends = []
        for record in start.values():
            payload: AgentInput = {"query": state["query"], "run_key": run_key, "round": state.get("round", 0),
                                   "tick": tick, "agent": record, "pool": list(pool), "removed": list(removed),
                                   "tally": tally}  # read-only in the steps
            if state.get("started_at") is not None:
                payload["started_at"] = state["started_at"]
            sends.append(Send(NODE_FOR_LEVEL[record["level"]], payload))
        return Command(update={"agents": start, "tick": tick}, goto=sends)

    return dispatch
