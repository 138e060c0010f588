"""Graph states and their reducers. Everything here is plain, checkpoint-serialisable data.

A new query on a thread that already ran one starts from empty accumulators: `init` writes them with LangGraph's
`Overwrite`, which bypasses the reducers; the reducers themselves only ever merge.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, NotRequired

from langchain_core.messages import AnyMessage, BaseMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


def merge_usage(left: Mapping[str, Any] | None, right: Mapping[str, Any] | None) -> dict[str, Any]:
    """Reducer: add role → counter dicts (and plain numeric counters) key by key."""
    out: dict[str, Any] = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in (left or {}).items()}
    for key, value in (right or {}).items():
        if isinstance(value, Mapping):
            slot = out.setdefault(key, {})
            for k, v in value.items():
                slot[k] = slot.get(k, 0) + v
        else:
            out[key] = out.get(key, 0) + value
    return out


AgentLevel = Literal["meta", "category", "tool", "flat"]  # flat: the one agent of the -hierarchy ablation
AgentStatus = Literal["pending", "running", "finished", "stopped"]
StopReason = Literal["", "tokens", "cost", "wall_time"]  # which budget ended a `budget_exhausted` run
RunStatus = Literal["running", "solved", "unsolved", "gave_up", "budget_exhausted", "no_apis", "error", "planned",
                    "time_limit"]


class AgentRecord(TypedDict):
    """One agent of the hierarchical retriever, as kept in the checkpointed state.

    An agent runs one step (a model call and its functions) per superstep; between steps it is `pending` again
    until it ends (`finished`: it called finish_search or hit its step limit; `stopped`: cut off, re-activatable).
    """

    id: str
    level: AgentLevel
    parent: str | None
    category: str | None  # scope: the category of a category/tool agent
    tools: list[str]  # scope: tool display names of a tool agent; what a category agent has assigned so far
    status: AgentStatus
    steps: int  # model calls over all activations
    activations: int
    activation_calls: int  # model calls of the current activation (0: the activation has not started)
    ready: int  # the dispatch tick at which the agent became ready: the dispatcher starts the longest-waiting first
    messages: list[AnyMessage]  # the agent's own history (system prompt not included)
    children: list[str]
    tokens: int
    invalid_calls: int  # unknown functions, malformed arguments, turns without a function call
    end_reason: str  # finish_search | step_limit | pool_solvable | pool_full | budget | time_limit | error: ... |
    # malformed: ... | no_calls: ...
    malformed_streak: NotRequired[int]  # malformed model turns in a row in this activation (faults.py)
    # a small category's agent that made its tool agent without a model call and was left unfinished
    # (`small_category_finished=False`): a re-activation finishes it at once, without a model call
    small_category: NotRequired[bool]
    no_call_streak: NotRequired[int]  # replies in a row without a function call in this activation


class PoolEntry(TypedDict):
    """An API in the candidate pool."""

    api_id: str
    category: str
    tool: str
    api: str
    function_name: str
    added_by: str
    round: NotRequired[int]  # the retrieval round in which it was added (absent in runs of older versions)


class PoolUpdate(TypedDict, total=False):
    """A change to the pool: entries to add (deduplicated, capped) and API ids to remove."""

    add: list[PoolEntry]
    remove: list[str]
    cap: int


def update_pool(left: list[PoolEntry] | None, right: PoolUpdate | Sequence[PoolEntry] | None) -> list[PoolEntry]:
    """Reducer for `api_pool`: dedupe by API id, keep order of arrival, honour the cap, apply removals.

    Parallel agent steps of one superstep each write their additions; LangGraph folds them into the pool one
    task at a time in its deterministic task order (sorted task paths, i.e. the order of the dispatcher's `Send`s),
    so when together they overshoot the cap, the earlier-dispatched agents' additions are kept and the rest dropped,
    whatever order the steps finished in."""
    if not right:
        return list(left or [])
    upd: Mapping[str, Any] = right if isinstance(right, Mapping) else {"add": list(right)}
    removed = set(upd.get("remove") or ())
    pool = [e for e in left or [] if e["api_id"] not in removed]
    cap = upd.get("cap")
    have = {e["api_id"] for e in pool}
    for entry in upd.get("add") or ():
        if entry["api_id"] in have or entry["api_id"] in removed:
            continue
        if cap is not None and len(pool) >= cap:
            break
        pool.append(entry)
        have.add(entry["api_id"])
    return pool


def merge_agents(left: Mapping[str, AgentRecord] | None, right: Mapping[str, AgentRecord] | None) -> dict[str, AgentRecord]:
    """Reducer for `agents`: records are replaced whole, by id (each branch writes only its own and new ones)."""
    return {**(left or {}), **(right or {})}


def add_unique(left: list[str] | None, right: Sequence[str] | None) -> list[str]:
    """Reducer: append unseen items."""
    out = list(left or [])
    out.extend(x for x in right or () if x not in out)
    return out


def extend(left: list[Any] | None, right: Sequence[Any] | None) -> list[Any]:
    """Reducer: concatenate."""
    return [*(left or []), *(right or [])]


# A run's event log (`events`): what happened when, for `anytool report` and `render_run`. Each event is a plain dict
# with `kind` and `t` (seconds since the run started; absent when the start is unknown), and by kind:
#   start; agent_step (agent, level, round, tick, t0, functions, added, solvable, status, end_reason);
#   solvable (by "gate": round, label, reason); solve (round, attempt, pool); judge (attempt, round, label, reason,
#   by, t0); reflect (request "new" | "climb", round, level, reactivated, reason, pruned: the pool entries removed);
#   end (status).
RunEvent = dict[str, Any]


def run_event(kind: str, started_at: float | None, **fields: Any) -> RunEvent:
    """One event of the run's log, stamped with the seconds since `started_at` (the run's start)."""
    out: RunEvent = {"kind": kind}
    if started_at is not None:
        out["t"] = round(max(0.0, time.time() - float(started_at)), 3)
    out.update(fields)
    return out


def since(started_at: float | None, moment: float) -> float | None:
    """`moment` (epoch seconds) as seconds since the run's start, or None when the start is unknown."""
    return None if started_at is None else round(max(0.0, moment - float(started_at)), 3)


def latest_round(left: int | None, right: int | None) -> int:
    """Reducer for `solvable_round`: the highest round written (-1: none)."""
    values = [v for v in (left, right) if v is not None]
    return max(values) if values else -1


class SolverAttempt(TypedDict):
    """One solver run (a whole search tree) and how it ended."""

    attempt: int
    round: int
    mode: str
    finish_type: str  # give_answer | give_up | call_budget | no_apis | budget | error | malformed | context_length |
    # no_calls
    answer: str
    reason: str
    failed_functions: list[str]
    failed_api_ids: list[str]
    api_calls: int
    tree: list[dict[str, Any]]  # explicit search tree nodes (id, parent, depth, kind, ...)


class AnyToolInput(TypedDict):
    """The graph's input: the request as `query` or as chat `messages` (the last human message is the request;
    see `chat.resolve_request`), and for `retriever="reference"` the API ids to solve it with. The turns before
    the request reach the router, the solver and the outline as context."""

    query: NotRequired[str]
    messages: NotRequired[Annotated[list[AnyMessage], add_messages]]
    api_ids: NotRequired[list[str]]
    # epoch seconds the run's clock (`max_run_seconds`, the events' times) starts at, when it started before the
    # graph did: `anytool run` gives its own start, so that loading and building count (default: `init`'s time)
    clock_start: NotRequired[float]


class PlanStep(TypedDict):
    """One step of an outline (`plan_only`): a pooled API to call, why, and the arguments foreseen."""

    step: int
    function: str
    api_id: str
    tool: str
    api: str
    purpose: str
    arguments: dict[str, Any]


class AnyToolState(TypedDict):
    """Top-level state of the AnyTool graph."""

    query: str
    api_ids: NotRequired[list[str]]
    messages: Annotated[list[AnyMessage], add_messages]  # the conversation: requests and the answers appended
    request_message_id: NotRequired[str]  # the id of the human message the current run answers
    plan: NotRequired[list[PlanStep]]  # plan_only: the outline
    run_key: NotRequired[str]
    started_at: NotRequired[float]  # epoch seconds when the run started (max_seconds counts from it, also on resume)
    clock_start: NotRequired[float | None]  # the input's start of the clock (AnyToolInput), taken by `init`
    round: NotRequired[int]  # retrieval round: 0, then +1 per reflection
    tick: NotRequired[int]  # dispatch supersteps so far
    agents: Annotated[dict[str, AgentRecord], merge_agents]
    api_pool: Annotated[list[PoolEntry], update_pool]
    removed_apis: Annotated[list[str], add_unique]
    solvable_round: Annotated[int, latest_round]  # the last round in which a tool agent judged the pool solvable
    solver_attempts: Annotated[list[SolverAttempt], extend]
    pool_at_last_solve: NotRequired[list[str]]
    reflections: NotRequired[int]
    reflect_request: NotRequired[str]  # "new" (after a failure) or "climb" (the pool did not change): see reflect
    reflect_level: NotRequired[str]  # the level re-activated in this round ("" when none)
    verdict: NotRequired[dict[str, str]]  # judge: {"label", "reason", "by"}
    answer: NotRequired[str]
    status: NotRequired[RunStatus]
    reason: NotRequired[str]
    error_kind: NotRequired[str]  # status "error": the ModelCallError kind (llm.ERROR_KINDS) or "other"; else ""
    stop_reason: NotRequired[StopReason]  # status budget_exhausted: which budget was spent ("" otherwise)
    usage: Annotated[dict[str, Any], merge_usage]
    # the run-time context the run started with (its set fields, plain data): a resume without one uses it
    run_context: NotRequired[dict[str, Any]]
    events: Annotated[list[RunEvent], extend]  # the run's event log (`run_event`): the report's timeline and rounds
    prompts: NotRequired[dict[str, Any]]  # which prompts ran: {"repo", "path", "files": {path: sha256}} (ours: no files)


class AnyToolOutput(TypedDict):
    query: str
    messages: list[AnyMessage]  # the conversation, the run's outcome appended as an AIMessage
    answer: str
    status: RunStatus
    reason: str
    error_kind: str  # status "error": the ModelCallError kind (rate_limited, context_length, ...), else ""
    stop_reason: StopReason
    api_pool: list[PoolEntry]
    agents: dict[str, AgentRecord]
    solver_attempts: list[SolverAttempt]
    usage: dict[str, Any]
    events: list[RunEvent]  # the run's event log: agent steps, solves, verdicts, reflections, with their times
    plan: list[PlanStep]
    prompts: dict[str, Any]  # which prompts ran (AnyToolConfig.prompts_from's files and their sha256, or ours)


class RunTally(TypedDict):
    """The run's budget tallies at a point in time: tokens and USD spent."""

    tokens: int
    cost: float
    share: NotRequired[int]  # a parallel agent step: the tokens it may spend (what was left, split between siblings)


class AgentInput(TypedDict):
    """The `Send` payload that runs one step of one agent: the run's shared state as of the superstep's start.

    A step sees this snapshot plus its own step's effects, never a sibling's in-flight ones (bulk-synchronous:
    siblings see each other's pool additions, the stop signal and token usage at the next superstep)."""

    query: str
    run_key: str
    round: int
    tick: int  # the dispatch tick that started the step
    agent: AgentRecord
    pool: list[str]  # API ids in the pool when the step starts
    removed: NotRequired[list[str]]  # API ids pruned by reflection: they may not be added again
    tally: NotRequired[RunTally]  # the run's budget tallies at dispatch (the step adds its own usage)
    started_at: NotRequired[float]  # the run's start (its wall-time budget counts from it, also after a resume)


class AgentOutput(TypedDict, total=False):
    agents: dict[str, AgentRecord]
    api_pool: PoolUpdate
    solvable_round: int
    usage: dict[str, Any]
    events: list[RunEvent]


class SolverInput(TypedDict):
    query: str
    run_key: str
    round: int
    api_pool: list[PoolEntry]
    previous_attempts: list[SolverAttempt]  # earlier solves of this run (failed calls already pruned)
    prior_messages: NotRequired[list[BaseMessage]]  # the conversation before the request (context, not tasks)
    started_at: NotRequired[float]  # the run's start (its wall-time budget counts from it, also after a resume)


class SolverOutput(TypedDict, total=False):
    """Only the new attempt and the usage of this solve (the parent's reducers add them)."""

    solver_attempts: list[SolverAttempt]
    usage: dict[str, Any]
