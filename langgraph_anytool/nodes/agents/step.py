"""One step of a retriever agent: a model call (`call_model`), then its function calls (`run_functions`).

An agent takes one step per superstep: the dispatcher sends every ready agent's record; the step ends with the
record `pending` (ready for its next step), `finished` (finish_search, its step limit as the paper counts it, or
`max_turns_without_call` replies in a row without a function call: end reason "no_calls: ...") or `stopped` (the
pool judged solvable, a full pool, a budget or the run's time limit, a model error). So a child created in a step
starts in the very next superstep, beside its parent, as the paper's concurrent agents do.

Steps of one superstep are bulk-synchronous (see nodes/dispatch.py): a step checks the pool, the removed APIs and
the budget tallies of its payload (the run's state at dispatch) plus its own step's effects, never a sibling's
in-flight ones, so its result does not depend on which parallel reply arrived first.

Unknown functions, bad arguments and turns without a function call are answered in-band and counted in
`invalid_calls`; every tool call is answered by a ToolMessage before the agent's next model call. An agent runs
every call of a turn, in order. Content faults (`faults.py`) are also counted in `usage[level]`; an `Action:` written
as text by a natively tool-calling model is run as a call; `max_malformed_turns` malformed turns in a row end the
activation (status `stopped`, end reason "malformed: ..."). A model without function calling (its profile, or an
endpoint that refuses `tools`) works in text mode (`Action:` / `Action Input:`), as the solver does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from ...models.constrained import choose_call_mode
from ...models.faults import (
    MALFORMED_END,
    NO_CALLS_END,
    bound_reason,
    fault_usage,
    next_no_call_streak,
    next_streak,
    no_calls_reason,
    review_reply,
    turn_fault,
    with_call_ids,
)
from ...models.llm import (
    BUDGET_KIND,
    NO_CALL_ENDS,
    TIME_LIMIT_KIND,
    ModelCallError,
    ModelNotConfiguredError,
    total_tokens,
)
from ...models.profiles import profile_for
from ...runtime import total_cost
from ...state import AgentRecord, PoolEntry, PoolUpdate, RunEvent, RunTally, extend, merge_agents, merge_usage, since
from ...text import shorten
from ..judge.tooleval_request import refuses_functions, speaks_functions
from ..solver.textmode import bind_role_tools, call_with_text_fallback, probed
from . import prompts, wire
from .choices import NOTHING_LEFT, held_to_finish, narrowed
from .context import CallContext, FunctionResult, Role, role_inputs
from .records import copy_record

if TYPE_CHECKING:
    from ...runtime import Deps

log = logging.getLogger(__name__)


class AgentStepState(TypedDict):
    """The step subgraph's state: the payload, the output keys and whether the step is over."""

    query: str
    run_key: str
    round: int
    tick: int
    agent: AgentRecord  # the working record
    pool: list[str]
    removed: NotRequired[list[str]]  # API ids pruned by reflection
    tally: NotRequired[RunTally]  # the run's budget tallies at dispatch
    started_at: NotRequired[float]  # the run's start (the wall-time budget)
    agents: Annotated[dict[str, AgentRecord], merge_agents]
    api_pool: NotRequired[PoolUpdate]
    solvable_round: NotRequired[int]
    usage: Annotated[dict[str, Any], merge_usage]
    events: Annotated[list[RunEvent], extend]
    ended: NotRequired[bool]
    step_t0: NotRequired[float]  # epoch seconds when the step's model call started (for its event)


def step_event(state: AgentStepState, rec: AgentRecord, *, functions: list[str] | None = None,
               added: list[PoolEntry] | None = None, verdicts: list[dict[str, Any]] | None = None) -> RunEvent:
    """The step's entry in the run's event log: who, when, which functions it called, what it added, its checks."""
    started = state.get("started_at")
    event: RunEvent = {"kind": "agent_step", "agent": rec["id"], "level": rec["level"], "round": state["round"],
                       "tick": state["tick"], "functions": list(functions or []),
                       "added": [e["api_id"] for e in added or []], "status": rec["status"],
                       "end_reason": rec["end_reason"]}
    t0, t1 = since(started, state.get("step_t0") or time.time()), since(started, time.time())
    if t0 is not None and t1 is not None:
        event["t0"], event["t"] = t0, t1
    if verdicts:
        event["solvable"] = list(verdicts)
    return event


def _end(record: AgentRecord, status: Literal["finished", "stopped"], reason: str) -> None:
    record["status"] = status
    record["end_reason"] = reason


def step_tally(state: AgentStepState, own: Mapping[str, Any] | None = None) -> RunTally | None:
    """The budget tallies a step checks: the payload's (the run's at dispatch) plus `own`, this step's usage so
    far; None for a payload without tallies (the run's live tallies are checked then)."""
    base = state.get("tally")
    if base is None:
        return None
    used = own or {}
    out: RunTally = {"tokens": int(base["tokens"]) + total_tokens(used), "cost": float(base["cost"]) + total_cost(used)}
    if "share" in base:  # what is left of the step's share of the token budget
        out["share"] = max(0, int(base["share"]) - total_tokens(used))
    return out


def stop_before_call(deps: Deps, record: AgentRecord, run_key: str, pool: list[str],
                     tally: RunTally | None = None) -> tuple[str, str] | None:
    """Why the agent must not make its next model call: (status, end reason), or None. `pool` and `tally` are
    the step's view (its payload's); the stop signal (`solvable_round`) is the dispatcher's, which sends no step
    in a round judged solvable."""
    if len(pool) >= deps.config.max_api_pool:
        return "stopped", "pool_full"
    stop = deps.budget_stop(run_key, tally)
    if stop is not None:
        return "stopped", TIME_LIMIT_KIND if stop.kind == TIME_LIMIT_KIND else "budget"
    if record["activation_calls"] >= deps.config.agent_step_limit:
        return "finished", "step_limit"
    return None


def _count_faults(deps: Deps, rec: AgentRecord, level: str, faults: list[str], accepted: bool,
                  out: dict[str, Any], detail: str = "") -> bool:
    """Add a turn's faults to the step's usage and the record's streak; True when the bound ends the activation."""
    if faults:
        out["usage"] = merge_usage(out.get("usage"), {level: fault_usage(faults)})
    streak = next_streak(int(rec.get("malformed_streak") or 0), faults, accepted)
    rec["malformed_streak"] = streak
    if faults and streak >= deps.config.max_malformed_turns:
        reason = bound_reason(streak, deps.config.max_malformed_turns, faults[-1], detail)
        _end(rec, "stopped", shorten(f"{MALFORMED_END}: {reason}", 500))
        return True
    return False


def authors_wire(deps: Deps, role: Role, run_key: str) -> list[dict[str, Any]] | None:
    """The authors' function dicts this role's call offers with `functions=` (wire.py), or None for today's request:
    not `paper(prompts_from=...)` with the authors' offer, a checkout without them, a client that is not
    OpenAI-compatible, a role in text mode or a call mode other than native."""
    book = deps.paper_prompts
    if book is None or deps.config.agent_functions != "authors" or deps.signals.in_text_mode(run_key, role.level):
        return None
    model = deps.models.for_role(role.level)
    if role.level in deps.config.text_mode_roles or not speaks_functions(model) or choose_call_mode(
            model, profile_for(model, deps.config.model_profiles), probed(deps)) != "native":
        return None
    return wire.authors_functions(book.data, [f.name for f in role.offered(True)])


def call_authors_form(deps: Deps, role: Role, run_key: str, prompt: list[BaseMessage],
                      functions: list[dict[str, Any]], config: RunnableConfig, inputs: dict[str, Any],
                      state: AgentStepState) -> tuple[AIMessage, dict[str, Any]]:
    """One agent call as call_gpt makes it (`functions=`, the legacy history); a provider refusing `functions=`
    gets the same functions with `tools=`, and so does every later call of the role in the run (the refusal is
    remembered, `RunSignals.functions_refusal`, and counted once: usage `functions_refused`). The reply's calls are
    read as ours."""
    model = deps.models.for_role(role.level)
    fields = {f.name: tuple(f.args.model_fields) for f in role.functions}
    refusal = deps.signals.functions_refusal(run_key, role.level)

    def send(runnable: Any, form: wire.WireForm) -> tuple[AIMessage, dict[str, Any]]:
        return call_with_text_fallback(deps, role.level, run_key, runnable, wire.wire_prompt(prompt, form),
                                       config=config, inputs=inputs, tally=state.get("tally"),
                                       own=lambda: total_tokens(state.get("usage") or {}))

    def with_tools() -> Any:
        return model.bind_tools([{"type": "function", "function": f} for f in functions])

    if refusal.reason is not None:  # refused earlier in the run: not asked again
        reply, used = send(with_tools(), "tools")
        return wire.read_reply(reply, fields), used
    try:
        reply, used = send(model.bind(functions=functions), "functions")
    except ModelCallError as exc:
        if not refuses_functions(exc):
            raise
        log.info("agent %s: the provider refused functions=, sent with tools= for the rest of the run: %s",
                 role.level, exc)
        first = refusal.refuse(shorten(str(exc), 200))
        reply, used = send(with_tools(), "tools")
        if first:
            used = {**used, "functions_refused": 1}
    return wire.read_reply(reply, fields), used


def make_call_model(role: Role, base: Deps) -> Any:
    """The `call_model` node of `role`: checks, then one model call with the role's functions bound."""
    offers = {authors: [f.as_tool() for f in role.offered(authors)] for authors in (False, True)}

    def call_model(state: AgentStepState, config: RunnableConfig, runtime: Runtime[Any]) -> dict[str, Any]:
        deps = base.for_run(runtime.context)
        rec = copy_record(state["agent"])
        run_key = state["run_key"]
        if rec.get("small_category"):  # a re-activated small category's agent: done at once, no model call
            _end(rec, "finished", "small_category")  # (main.py `Category_Agent.resume_search`)
            return {"agent": rec, "agents": {rec["id"]: rec}, "ended": True}
        deps.signals.seed_start(run_key, state.get("started_at"))  # e.g. a step resumed in a new process
        if rec["activation_calls"] == 0:  # start of an activation
            rec["activations"] += 1
            rec["malformed_streak"] = 0
            rec["no_call_streak"] = 0
            if rec["activations"] == 1:  # the query opens the history (before any re-activation message)
                rec["messages"].insert(0, HumanMessage(role.first_message(state["query"], rec, deps)))
        rec["status"], rec["end_reason"] = "running", ""
        out: dict[str, Any] = {"agent": rec, "agents": {rec["id"]: rec}, "ended": True}
        stop = stop_before_call(deps, rec, run_key, state["pool"], step_tally(state))
        if stop is not None:
            _end(rec, stop[0], stop[1])  # type: ignore[arg-type]
            return out
        prompt: list[BaseMessage] = [SystemMessage(role.system_prompt(rec, deps)), *rec["messages"]]
        schemas = offers[deps.config.agent_functions == "authors"]
        inputs = role_inputs(state["query"], rec, deps.config.max_tools_per_agent)
        try:
            authors = authors_wire(deps, role, run_key)
            if authors is not None:  # paper(prompts_from): call_gpt's request (wire.py)
                reply, used = call_authors_form(deps, role, run_key, prompt, authors, config, inputs, state)
            else:
                constraint = narrowed(role.level, rec, deps, schemas, pool=state["pool"],
                                      removed=state.get("removed") or ())
                model = bind_role_tools(deps.models.for_role(role.level), deps.config, role.level, schemas,
                                        text=deps.signals.in_text_mode(run_key, role.level), endpoints=probed(deps),
                                        constraint=constraint)
                if held_to_finish(model, constraint):  # the only call it could make: made without asking the model
                    _end(rec, "finished", NOTHING_LEFT)
                    return out
                reply, used = call_with_text_fallback(
                    deps, role.level, run_key, model, prompt, tools=schemas, config=config, inputs=inputs,
                    tally=state.get("tally"), own=lambda: total_tokens(state.get("usage") or {}))
        except (ModelNotConfiguredError, GraphBubbleUp):
            raise
        except Exception as exc:  # a provider error ends this agent only; reflection may re-activate it
            if isinstance(exc, ModelCallError) and exc.kind == BUDGET_KIND:  # not sent: it would pass the budget
                _end(rec, "stopped", "budget")  # (or its reply was cut at the budget's cap: its tokens count)
                if exc.usage():
                    out["usage"] = exc.usage()
                return out
            log.warning("agent %s: model call failed: %s", rec["id"], exc)
            if isinstance(exc, ModelCallError):  # "error: rate_limited: meta model: ... after 6 retries"
                _end(rec, "stopped", shorten(f"error: {exc}", 500))
                out["usage"] = exc.usage()
                return out
            _end(rec, "stopped", shorten(f"error: model call failed: {type(exc).__name__}: {exc}", 500))
            return out
        reply, noted = review_reply(reply, id_prefix=f"{rec['id']}:{rec['steps']}:text")
        reply = with_call_ids(reply, f"{rec['id']}:{rec['steps']}")  # some servers omit ids: a ToolMessage needs one
        rec["tokens"] += int(used.get("input_tokens", 0)) + int(used.get("output_tokens", 0))
        rec["messages"].append(reply)
        rec["steps"] += 1
        rec["activation_calls"] += 1
        out["usage"] = {role.level: {**used, **noted}}
        if reply.tool_calls or reply.invalid_tool_calls:
            rec["no_call_streak"] = 0
            out["ended"] = False
            return out
        rec["invalid_calls"] += 1
        fault = turn_fault(reply)
        if _count_faults(deps, rec, role.level, [fault] if fault else [], False, out,
                         str(reply.content) if fault == "refusal" else ""):
            return out
        rec["no_call_streak"] = next_no_call_streak(int(rec.get("no_call_streak") or 0), reply)
        if rec["no_call_streak"] >= deps.config.max_turns_without_call:  # a model that does not call functions
            _end(rec, "finished", f"{NO_CALLS_END}: "
                 f"{no_calls_reason(rec['no_call_streak'], deps.config.max_turns_without_call)}")
            out["usage"] = merge_usage(out["usage"], {role.level: {NO_CALL_ENDS: 1}})
            return out
        book = deps.paper_prompts  # main.py: the same user message after every turn without a function call
        nudge = book.fill("agent_nudge") if book is not None else prompts.nudge(role.signatures())
        rec["messages"].append(HumanMessage(nudge))  # no call: nudged, next step
        rec["status"], rec["ready"] = "pending", state["tick"] + 1
        return out

    def timed_call_model(state: AgentStepState, config: RunnableConfig, runtime: Runtime[Any]) -> dict[str, Any]:
        """`call_model`, with the step's start kept for its event (logged here when the step ends here)."""
        started = time.time()
        out = call_model(state, config, runtime)
        if out.get("ended"):
            out["events"] = [step_event({**state, "step_t0": started}, out["agent"])]
        else:
            out["step_t0"] = started
        return out

    return timed_call_model


def _run_one(role: Role, ctx: CallContext, name: str, args: Any) -> tuple[FunctionResult, str | None]:
    """Run one function call; returns the result and its content fault (faults.py), None for a valid call."""
    fn = role.function(name)
    if fn is None:
        return (FunctionResult(f"Error: unknown function {name!r}. Valid functions: {role.signatures()}."),
                "unknown_function")
    parsed = fn.validate(args)
    if isinstance(parsed, str):
        return FunctionResult(parsed), "bad_arguments"
    handler = role.handlers.get(name)
    if handler is None:
        return FunctionResult(f"Error: {name} is not available to this agent."), "unknown_function"
    try:
        result = handler(ctx, parsed)
    except (ModelNotConfiguredError, GraphBubbleUp):
        raise
    except ModelCallError as exc:  # a handler's own model call failed for good (e.g. the solvable check): the
        # provider is failing, so the agent ends on that error as if its own call had failed
        if exc.kind == BUDGET_KIND:  # not sent: it would pass the token budget; the agent stops as on a budget
            ctx.usage = merge_usage(ctx.usage, exc.usage())  # a reply cut at the budget's cap: its tokens count
            return FunctionResult(f"Not checked: {exc.args[0].split(': ', 2)[-1]}", end="stopped",
                                  end_reason="budget"), None
        log.warning("agent %s: %s: model call failed: %s", ctx.record["id"], name, exc)
        ctx.usage = merge_usage(ctx.usage, exc.usage())  # its retries count (a resumed run rebuilds them from usage)
        return FunctionResult(f"Error: {name} failed: {exc}", end="stopped", end_reason=shorten(f"error: {exc}", 500)), None
    except Exception as exc:  # a handler bug or a catalog error: answered, not raised
        log.warning("agent %s: %s failed: %s", ctx.record["id"], name, exc)
        return FunctionResult(f"Error: {name} failed: {exc}"), None
    return (FunctionResult(result) if isinstance(result, str) else result), None


def after_end(deps: Deps, name: str, terminal: FunctionResult) -> str:
    """The answer to a call made after a call that ended the agent's search in the same turn; with the authors'
    prompts, a solvability check after the pool was judged solvable gets their answer (main.py
    `check_if_request_solvable`: `if stop: return ...`)."""
    book = deps.paper_prompts
    if book is not None and name == "check_if_request_solvable" and terminal.end_reason == "pool_solvable":
        return book.fill("agent_check_stopped")
    return prompts.after_end(terminal.end_reason)


def make_run_functions(role: Role, base: Deps) -> Any:
    """The `run_functions` node of `role`: answers every tool call of the step's model turn, in order."""

    def run_functions(state: AgentStepState, config: RunnableConfig, runtime: Runtime[Any]) -> dict[str, Any]:
        deps = base.for_run(runtime.context)
        rec = copy_record(state["agent"])
        ctx = CallContext(deps, state["query"], state["run_key"], state["round"], state["tick"], rec,
                          state["pool"], [], config, removed=list(state.get("removed") or []),
                          tally=step_tally(state, state.get("usage")))  # + this step's model call
        last = rec["messages"][-1]
        assert isinstance(last, AIMessage), "run_functions follows a model turn"
        terminal: FunctionResult | None = None
        faults: list[str] = []
        accepted = False
        for tc in last.tool_calls:
            name, call_id = tc.get("name") or "", tc.get("id") or ""
            if terminal is not None:
                content, error = after_end(deps, name, terminal), True
            else:
                result, fault = _run_one(role, ctx, name, tc.get("args"))
                rec["invalid_calls"] += int(fault is not None)
                if fault is not None:
                    faults.append(fault)
                accepted |= fault is None
                content, error = result.content, fault is not None or result.content.startswith("Error")
                if result.end is not None:
                    terminal = result
            rec["messages"].append(ToolMessage(content=content, tool_call_id=call_id, name=name,
                                               status="error" if error else "success"))
        for bad in last.invalid_tool_calls:
            rec["invalid_calls"] += 1
            faults.append("bad_json")
            fn = role.function(bad.get("name") or "")
            expected = fn.signature() if fn else f"one of {role.signatures()}"
            rec["messages"].append(ToolMessage(
                content=prompts.malformed(bad.get("name"), bad.get("error"), expected),
                tool_call_id=bad.get("id") or "", name=bad.get("name") or "", status="error"))
        out: dict[str, Any] = {"agent": rec, "agents": {rec["id"]: rec, **ctx.children}, "ended": True}
        if ctx.usage:
            out["usage"] = ctx.usage
        if terminal is not None and terminal.end is not None:
            _end(rec, terminal.end, terminal.end_reason)
            _count_faults(deps, rec, role.level, faults, True, out)
        elif not _count_faults(deps, rec, role.level, faults, accepted, out):
            rec["status"], rec["ready"] = "pending", state["tick"] + 1
        if ctx.adds:
            out["api_pool"] = {"add": ctx.adds, "cap": deps.config.max_api_pool}
        if ctx.solvable:
            out["solvable_round"] = state["round"]
        out["events"] = [step_event(state, rec, functions=[tc.get("name") or "" for tc in last.tool_calls],
                                    added=ctx.adds, verdicts=ctx.verdicts)]
        return out

    return run_functions


def route_after_model(state: AgentStepState) -> Literal["run_functions", "__end__"]:
    return "__end__" if state.get("ended") else "run_functions"
