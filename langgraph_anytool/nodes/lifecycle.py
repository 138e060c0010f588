"""The run's lifecycle nodes: `init` (a fresh run), `gate` (solve now, or reflect) and `finalize` (the outcome).

`init` starts retrieval the configured way (`retriever`): the meta-agent (hierarchical, the paper's), one agent
with every level's functions (flat: Table 3's "-hierarchy"), the query's own APIs (reference: ToolBench's
setting), or the top-k of our hybrid search (search: a non-LLM baseline).
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from langgraph.types import Command, Overwrite, Send

from ..catalog import Catalog
from ..chat import outcome_message, resolve_request, stand_in_label
from ..config import ConfigError
from ..context import context_values, storable_context
from ..models.fitting import MAX_QUERY_CHARS
from ..models.llm import (
    BUDGET_KIND,
    CUT_AT_CAP,
    ModelCallError,
    ModelNotConfiguredError,
    call_role,
    error_kind_of,
    total_tokens,
)
from ..paper_prompts import prompts_record
from ..state import AnyToolState, PoolEntry, RunStatus, SolverInput, run_event
from .abilities import prior_turns, render_plan, request_of
from .agents.records import new_agent_record
from .reflection import can_reflect, pool_ids
from .tool_agent.handlers import ask_solvable, read_solvable

if TYPE_CHECKING:
    from ..runtime import Deps

META_AGENT_ID = "meta"
FLAT_AGENT_ID = "flat"


def pool_entry(catalog: Catalog, api_id: str, added_by: str, round: int = 0) -> PoolEntry:
    api = catalog.api(api_id)
    return {"api_id": api.id, "category": api.category, "tool": api.tool_name, "api": api.name,
            "function_name": catalog.function_name(api.id), "added_by": added_by, "round": round}


def initial_pool(deps: Deps, state: Mapping[str, Any]) -> list[PoolEntry]:
    """The pool a non-agent retriever starts the run with (reference: the input's `api_ids`; search: top-k)."""
    mode = deps.config.retriever
    if mode == "reference":
        ids = list(state.get("api_ids") or [])
        if not ids:
            raise ConfigError("retriever='reference' needs the input's 'api_ids' (catalog API ids)")
        unknown = [i for i in ids if i not in deps.catalog]
        if unknown:
            raise ConfigError(f"input 'api_ids': not in the catalog: {', '.join(unknown[:5])}")
        return [pool_entry(deps.catalog, i, "reference") for i in dict.fromkeys(ids)][: deps.config.max_api_pool]
    hits = deps.catalog.search(request_of(state), k=min(deps.config.search_k, deps.config.max_api_pool))
    return [pool_entry(deps.catalog, h.api_id, "search") for h in hits]


class QueryTooLongError(ValueError):
    """A query over `fitting.MAX_QUERY_CHARS` characters, refused before any model call."""


def check_query_size(query: Any) -> None:
    """Refuse a query longer than `MAX_QUERY_CHARS` (a longer text is a document, not a request: every model call
    of the run would carry it, and the token budget would be spent on copies of it)."""
    if isinstance(query, str) and len(query) > MAX_QUERY_CHARS:
        raise QueryTooLongError(f"the query is {len(query):,} characters long; the limit is {MAX_QUERY_CHARS:,} "
                                "characters (langgraph_anytool.models.fitting.MAX_QUERY_CHARS); shorten it or pass the "
                                "long text through an API instead")


def make_init(base: Deps) -> Any:
    """The `init` node: a fresh run (new run key, empty accumulators) and its retrieval start."""

    def init(state: AnyToolState, runtime: Runtime[Any]) -> dict[str, Any]:
        deps = base.for_run(runtime.context)
        deps.check_prices()  # max_cost needs every role's price (the run's context may have changed models)
        request = resolve_request(state)  # `query`, or the last human message of `messages`
        check_query_size(request.get("query"))  # before any model call
        mode = deps.config.retriever
        agents = {} if mode in ("reference", "search") else (
            {FLAT_AGENT_ID: new_agent_record(FLAT_AGENT_ID, "flat")} if mode == "flat"
            else {META_AGENT_ID: new_agent_record(META_AGENT_ID, "meta")})
        pool = initial_pool(deps, {**state, **request}) if mode in ("reference", "search") else []
        run_key, started_at = uuid.uuid4().hex, clock_start(state.get("clock_start"), time.time())
        deps.signals.seed_start(run_key, started_at)  # wall clock: a resumed run counts from here
        return {
            **request,
            "plan": [],
            "run_key": run_key, "started_at": started_at, "stop_reason": "", "round": 0, "tick": 0,
            "reflections": 0,
            "agents": Overwrite(agents), "api_pool": Overwrite(pool), "removed_apis": Overwrite([]),
            "solvable_round": Overwrite(-1), "solver_attempts": Overwrite([]), "usage": Overwrite({}),
            "pool_at_last_solve": [], "verdict": {}, "answer": "", "status": "running", "reason": "", "error_kind": "",
            "reflect_request": "", "reflect_level": "", "events": Overwrite([run_event("start", started_at)]),
            "run_context": storable_context(context_values(runtime.context)),  # a resume without context uses it
            "clock_start": None,  # taken: the thread's next run starts its own clock
        }

    return init


def clock_start(given: Any, now: float) -> float:
    """When the run's clock starts: the input's `clock_start` (a caller's start, e.g. the command's) when it is a
    finite time not after `now`, else `now`."""
    if isinstance(given, int | float) and not isinstance(given, bool) and math.isfinite(given) and given <= now:
        return float(given)
    return now


def make_gate(base: Deps) -> Any:
    """The `gate` node (retrieval is over): solve when the pool is new to the solver, or the retriever judged it
    solvable or full; else reflect (a new reflection on an empty first pool, a climb within a round).

    With `round_gate="solvability_check"` the end of a re-activation round follows the authors' loop instead
    (`checked_round`)."""

    def gate(state: AnyToolState, config: RunnableConfig, runtime: Runtime[Any]
             ) -> Command[Literal["solver", "outline", "reflect", "finalize"]]:
        deps = base.for_run(runtime.context)
        run_key = state.get("run_key", "")
        deps.sync_run(run_key, state)  # budget tallies (tokens, USD, start) and the retry tally, from the state
        if deps.over_budget(run_key):
            return Command(goto="finalize")
        current = pool_ids(state)
        attempts = state.get("solver_attempts", [])
        vouched = state.get("solvable_round", -1) == state.get("round", 0) or len(current) >= deps.config.max_api_pool
        if deps.config.round_gate == "solvability_check" and attempts and state.get("reflect_level"):
            return checked_round(deps, state, config, current, vouched)
        if current and (not attempts or current != sorted(state.get("pool_at_last_solve") or []) or vouched):
            return to_solver(deps, state, current)
        if not current and failed_by_errors(state):  # every agent's model failed: reflecting cannot help
            return Command(goto="finalize")
        if state.get("reflect_level"):  # re-activated agents changed nothing: the next level up, same round
            return Command(update={"reflect_request": "climb"}, goto="reflect")
        if not current and can_reflect(state, deps):
            return Command(update={"reflect_request": "new",
                                   "reason": "the retriever found no API relevant to the query"}, goto="reflect")
        return Command(goto="finalize")

    return gate


def to_solver(deps: Deps, state: AnyToolState, current: list[str], update: dict[str, Any] | None = None
              ) -> Command[Any]:
    """Send the pool to the solver (or, in outline mode, to the planner of calls), recording it as solved."""
    event = run_event("solve", state.get("started_at"), round=state.get("round", 0),
                      attempt=len(state.get("solver_attempts") or []) + 1, pool=list(current))
    update = {**(update or {}), "pool_at_last_solve": current, "events": [*(update or {}).get("events", []), event]}
    if deps.config.plan_only:  # outline mode: a plan over the pool, no API call
        return Command(update=update, goto="outline")
    payload: SolverInput = {"query": state["query"], "run_key": state.get("run_key", ""),
                            "round": state.get("round", 0), "api_pool": list(state.get("api_pool", [])),
                            "previous_attempts": list(state.get("solver_attempts", [])),
                            "prior_messages": prior_turns(state)}
    if state.get("started_at") is not None:
        payload["started_at"] = state["started_at"]
    return Command(update=update, goto=Send("solver", payload))


# the status a climb hands the next level when the gate's check finds the pool insufficient (main.py `status`)
NOT_SOLVABLE = "The APIs in the pool cannot solve the query: {reason}"


def checked_round(deps: Deps, state: AnyToolState, config: RunnableConfig | None, current: list[str],
                  vouched: bool) -> Command[Any]:
    """`round_gate="solvability_check"`: the end of a re-activation round as dyabel/AnyTool `scripts/main.py`'s
    `while` loop has it.

    - every agent finished → the run ends (the loop's condition `not all(agent.finish_search ...)`), even when the
      round changed the pool; the check the authors still make then (`if not stop: check_if_request_solvable()`)
      decides nothing and is skipped;
    - the pool judged solvable in this round (an agent's check: `stop`) or full → solved, changed or not (`if stop
      ...: solve_given_api_main`);
    - else the solvability check on the pool (`check_if_request_solvable` → `verifier.py
      check_task_solvable_by_function`): any verdict but "Unsolvable" (none, "Unsure", a failed call: their
      verifier answers "Unsure") → solved; "Unsolvable" → the next level up is re-activated with the check's
      status as its reason (`failed_reason = status`). An empty pool is not checked: it cannot solve anything."""
    agents = state.get("agents") or {}
    if all(a["status"] == "finished" for a in agents.values()):
        return Command(goto="finalize")
    update: dict[str, Any] = {}
    if not vouched:
        label: str | None = "Unsolvable"
        reason = "the API pool is empty"
        if current:
            try:
                label, reason, used = pool_check(deps, state, config, current)
                update["usage"] = {"solvable": used} if used else {}
            except (ModelNotConfiguredError, GraphBubbleUp):
                raise
            except ModelCallError as exc:
                if exc.usage():
                    update["usage"] = exc.usage()
                if exc.kind == BUDGET_KIND:  # not sent: it would pass the token budget (the outcome says so)
                    return Command(update=update, goto="finalize")
                label = None  # no verdict: their verifier's "Unsure" (the solve meets a failing provider itself)
            except Exception:  # an unrecognised provider error: no verdict either
                label = None
        update["events"] = [run_event("solvable", state.get("started_at"), by="gate", round=state.get("round", 0),
                                      label=label or "Unsure", reason=reason if label == "Unsolvable" else "")]
        if label == "Unsolvable":
            return Command(update={**update, "reflect_request": "climb",
                                   "reason": not_solvable_status(deps, reason)[:2000]}, goto="reflect")
        update["solvable_round"] = state.get("round", 0)
    return to_solver(deps, state, current, update)


def not_solvable_status(deps: Deps, reason: str) -> str:
    """The status the next level up reads when the round-end check finds the pool insufficient: ours, or with the
    authors' prompts their text (main.py `check_if_request_solvable`: `status = f'...{reason}'`)."""
    book = deps.paper_prompts
    return book.fill("status_unsolvable", reason=reason) if book is not None else NOT_SOLVABLE.format(reason=reason)


def pool_check(deps: Deps, state: AnyToolState, config: RunnableConfig | None, current: list[str]
               ) -> tuple[str | None, str, dict[str, Any]]:
    """One call of the `solvable` model on the pool: (label as `solvable_label` reads it, reason, usage)."""
    (reply, used), _ = ask_solvable(
        deps, state["query"], current,
        lambda prompt, model, inputs: call_role(model, "solvable", prompt, config, inputs=inputs,
                                                on_usage=deps.meter(state.get("run_key", "")),
                                                profiles=deps.config.model_profiles), state.get("run_key", ""))
    label, reason = read_solvable(deps, reply)
    return label, reason, {k: v for k, v in used.items() if isinstance(v, int | float)}


def failed_by_errors(state: Mapping[str, Any]) -> str | None:
    """The model error that ended retrieval, when every agent that is not finished ended on one (else None)."""
    unfinished = [a for a in (state.get("agents") or {}).values() if a["status"] != "finished"]
    errors = [a["end_reason"] for a in unfinished if a["end_reason"].startswith("error")]
    return errors[-1].removeprefix("error: ") if errors and len(errors) == len(unfinished) else None


def budget_refusal(state: Mapping[str, Any]) -> str | None:
    """The reason of a retrieval that ended because its next model call would have passed the token budget."""
    error = failed_by_errors(state)
    if error is not None and error_kind_of(error) == BUDGET_KIND:
        return error.split(":", 1)[1].strip()
    return None


def outcome(state: Mapping[str, Any], deps: Deps) -> tuple[RunStatus, str]:
    """The run's status and reason from its attempts, verdict, pool and agents."""
    attempts = state.get("solver_attempts") or []
    verdict = state.get("verdict") or {}
    last = attempts[-1] if attempts else None
    if deps.config.plan_only and state.get("plan"):
        return "planned", state.get("reason", "")
    if last is not None and verdict.get("label") == "Solved":
        return "solved", verdict.get("reason", "")
    limit = deps.time_limit(state.get("run_key", ""))  # the run's hard wall-clock limit passed: whatever it cut
    if limit is not None:
        return "time_limit", limit.reason
    # a model that failed for good ends the run as an error of its kind (a resumed batch may retry it), even when
    # a budget ran out meanwhile (e.g. the wall time during the retries)
    if last is not None and last["finish_type"] in ("error", "context_length"):  # context_length: the prompt of
        if error_kind_of(last["reason"]) == BUDGET_KIND:  # the last attempt did not fit the model's window, even cut
            return "budget_exhausted", last["reason"].split(":", 1)[1].strip()
        return "error", last["reason"]
    if verdict.get("by") == "error":  # the judge's model failed for good (the answer is kept)
        if error_kind_of(verdict.get("reason", "")) == BUDGET_KIND:
            return "budget_exhausted", verdict.get("reason", "").split(":", 1)[1].strip()
        return "error", verdict.get("reason", "")
    stop = deps.budget_stop(state.get("run_key", ""))
    refused = budget_refusal(state)  # a call not sent: it would have passed the token budget
    if refused is not None:
        return "budget_exhausted", refused
    if last is not None and last["finish_type"] == "budget" and CUT_AT_CAP in last["reason"]:
        return "budget_exhausted", last["reason"]  # the solver's reply was cut at the budget's cap: say so
    if stop is not None or (last is not None and last["finish_type"] == "budget"):
        return "budget_exhausted", stop.reason if stop is not None else last["reason"]  # type: ignore[index]
    if last is None and any(a.get("end_reason") == "budget" for a in (state.get("agents") or {}).values()):
        spent = total_tokens(state.get("usage") or {})  # an agent's next call would have passed the token budget
        return "budget_exhausted", (f"token budget of {deps.config.token_budget} tokens reached: the next model "
                                    f"call (its prompt and reply, estimated) would have passed it ({spent} spent)")
    if not state.get("api_pool") and (last is None or last["finish_type"] == "no_apis"):
        error = failed_by_errors(state)
        if error is not None:
            return "error", error
        return "no_apis", "no API in the catalog was found relevant to the query"
    if last is None:
        return "unsolved", state.get("reason") or "the solver never ran: the pool did not change"
    if last["finish_type"] != "give_answer":
        return "gave_up", last["reason"] or state.get("reason", "")
    if verdict.get("label") == "Unsure":
        return "unsolved", f"the judge could not confirm the answer (Unsure): {verdict.get('reason', '')}"
    return "unsolved", verdict.get("reason") or state.get("reason", "")


def make_finalize(base: Deps) -> Any:
    """The `finalize` node: the run's answer and status (and for status `error` its `error_kind`: the
    `ModelCallError` kind the reason starts with, "other" when it names none); the run's signals are dropped."""

    def finalize(state: AnyToolState, runtime: Runtime[Any]) -> dict[str, Any]:
        deps = base.for_run(runtime.context)
        attempts = state.get("solver_attempts", [])
        answers = [a["answer"] for a in attempts if a["finish_type"] == "give_answer" and a["answer"]]
        run_key = state.get("run_key", "")
        deps.sync_run(run_key, state)  # after a resume in a new process the tallies start from the state
        status, reason = outcome(state, deps)
        stop = deps.budget_stop(run_key) if status == "budget_exhausted" else None
        stop_kind = stop.kind if stop is not None else ("tokens" if status == "budget_exhausted" else "")
        deps.signals.forget(run_key)
        # usage was overwritten by init, so this is the run's total (input + output tokens over all roles)
        answer = answers[-1] if answers else render_plan(state.get("plan") or [])
        kind = (error_kind_of(reason) or "other") if status == "error" else ""
        return {"answer": answer, "status": status, "reason": reason, "error_kind": kind,
                "stop_reason": stop_kind, "events": [run_event("end", state.get("started_at"), status=status)],
                "usage": {"total_tokens": total_tokens(state.get("usage", {}))},
                "prompts": prompts_record(deps.config.prompts_from),
                "messages": [outcome_message(status, answer, reason, stand_in_label(deps.models))]}

    return finalize
