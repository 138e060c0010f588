"""The generic function-calling loop every retriever agent runs (meta, category and tool agents alike).

`build_agent_loop(role, deps)` compiles a subgraph `call_model` ↔ `run_functions` whose input is one agent's
`AgentInput` (the `Send` payload) and whose output is an `AgentOutput` (the agent's updated record, the records of
the children it created, its pool additions, the solvable flag and the usage of this activation). A role differs
from another only in its level, its prompts, its function schemas and its handlers (`Role`).

The loop ends on `finish_search` (status `finished`), on the step limit (`finished`, end reason `step_limit`, as
the paper counts it), on the run's stop signal (`stopped`, `stop_signal`), on the token budget (`stopped`,
`budget`) and when a tool agent finds the pool solvable (`stopped`, `pool_solvable`). Unknown functions, bad
arguments and turns without a function call are answered in-band and counted in `invalid_calls`; every tool
call is answered by a ToolMessage before the next model call.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired, TypedDict

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.errors import GraphBubbleUp
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from ..llm import ModelNotConfiguredError, call_role, merge_usage
from ..state import AgentInput, AgentLevel, AgentOutput, AgentRecord, PoolEntry, PoolUpdate, merge_agents
from ..tools.agent_functions import AgentFunction

if TYPE_CHECKING:
    from ..runtime import Deps

log = logging.getLogger(__name__)

# The parent graph's node name of each level's loop.
NODE_FOR_LEVEL: Mapping[str, str] = MappingProxyType(
    {"meta": "meta_agent", "category": "category_agent", "tool": "tool_agent"})


def new_agent_record(
    agent_id: str,
    level: AgentLevel,
    *,
    parent: str | None = None,
    category: str | None = None,
    tools: list[str] | None = None,
) -> AgentRecord:
    """A fresh, pending agent record."""
    return {
        "id": agent_id, "level": level, "parent": parent, "category": category, "tools": list(tools or []),
        "status": "pending", "steps": 0, "activations": 0, "messages": [], "children": [], "tokens": 0,
        "invalid_calls": 0, "end_reason": "",
    }


def copy_record(record: AgentRecord) -> AgentRecord:
    """A copy whose lists can be changed without touching the (checkpointed) original."""
    return {**record, "messages": list(record["messages"]), "children": list(record["children"]),
            "tools": list(record["tools"])}


def role_inputs(query: str, record: AgentRecord) -> dict[str, Any]:
    """The structured inputs of an agent's model call: the query and the agent's scope."""
    out: dict[str, Any] = {"query": query, "agent_id": record["id"]}
    if record["category"] is not None:
        out["category"] = record["category"]
    if record["tools"]:
        out["tools"] = list(record["tools"])
    return out


def to_json(value: Any) -> str:
    """Function results are JSON text (non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False)


@dataclass
class CallContext:
    """What a function handler sees and may change during one `run_functions` step."""

    deps: Deps
    query: str
    run_key: str
    round: int
    record: AgentRecord  # the agent's working record (handlers may append children, assign tools)
    pool: list[str]  # API ids in the pool when the activation started
    adds: list[PoolEntry]  # this activation's pool additions so far
    config: RunnableConfig | None = None
    children: dict[str, AgentRecord] = field(default_factory=dict)  # records created in this step
    usage: dict[str, Any] = field(default_factory=dict)  # model usage of this step (e.g. solvable checks)
    solvable: bool = False

    def pool_ids(self) -> list[str]:
        """The whole pool as of now: the payload's pool, what parallel agents added since (the run's live pool),
        and this agent's own additions."""
        seen = dict.fromkeys(self.pool)
        seen.update(dict.fromkeys(self.deps.signals.pool_ids(self.run_key)))
        seen.update(dict.fromkeys(e["api_id"] for e in self.adds))
        return list(seen)

    def call_model(self, role: str, model: Runnable[Any, BaseMessage], prompt: list[BaseMessage],
                   inputs: Mapping[str, Any]) -> AIMessage:
        """One model call made by a function handler (e.g. the solvable check), accounted once: usage delta,
        the run's token tally, the record's tokens."""
        reply, usage = call_role(model, role, prompt, self.config, inputs=inputs,
                                 on_tokens=lambda n: self.deps.signals.add_tokens(self.run_key, n))
        self.usage = merge_usage(self.usage, {role: usage})
        self.record["tokens"] += int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
        return reply


@dataclass(frozen=True)
class FunctionResult:
    """A handler's answer; `end` set when the function ends the agent's activation."""

    content: str
    end: Literal["finished", "stopped"] | None = None
    end_reason: str = ""


Handler = Callable[[CallContext, Any], "FunctionResult | str"]


@dataclass(frozen=True)
class Role:
    """One kind of retriever agent: level, prompts, functions and their handlers."""

    level: AgentLevel
    system_prompt: Callable[[AgentRecord, Deps], str]  # built from the record's scope at every call
    first_message: Callable[[str, AgentRecord, Deps], str]  # the user message opening the first activation
    functions: tuple[AgentFunction, ...]
    handlers: Mapping[str, Handler]

    def function(self, name: str) -> AgentFunction | None:
        return next((f for f in self.functions if f.name == name), None)

    def signatures(self) -> str:
        return ", ".join(f.signature() for f in self.functions)


def finish_search(ctx: CallContext, args: Any) -> FunctionResult:
    """`finish_search()`: every role's way to end its search (status `finished`)."""
    return FunctionResult("Search finished.", end="finished", end_reason="finish_search")


def role_for_level(level: str) -> Role:
    """The built-in role of a level."""
    if level == "meta":
        from ..nodes.meta_agent import meta_role

        return meta_role()
    if level == "category":
        from ..nodes.category_agent import category_role

        return category_role()
    if level == "tool":
        from ..nodes.tool_agent import tool_role

        return tool_role()
    raise ValueError(f"unknown agent level {level!r}; levels are meta, category, tool")


class AgentLoopState(TypedDict):
    """The loop's own state: the payload, the output keys and the activation's model-call counter."""

    query: str
    run_key: str
    round: int
    agent: AgentRecord  # the working record
    pool: list[str]
    agents: Annotated[dict[str, AgentRecord], merge_agents]
    api_pool: NotRequired[PoolUpdate]  # all additions of this activation, with the cap
    solvable_round: NotRequired[int]
    usage: Annotated[dict[str, Any], merge_usage]
    calls: NotRequired[int]  # model calls in this activation
    ended: NotRequired[bool]


SPAWNED = "spawned"  # end reason of an agent that yielded so its new children could start


def _nudge(role: Role) -> str:
    return (f"You did not call a function. Every step must call one of: {role.signatures()}. "
            "Call finish_search() when your search is complete.")


def _end(record: AgentRecord, status: Literal["finished", "stopped"], reason: str) -> None:
    record["status"] = status
    record["end_reason"] = reason


def build_agent_loop(role: Role | str, deps: Deps) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the function-calling loop of one role (a `Role` or a level name) as a subgraph."""
    spec = role_for_level(role) if isinstance(role, str) else role
    schemas = [f.as_tool() for f in spec.functions]

    def call_model(state: AgentLoopState, config: RunnableConfig) -> dict[str, Any]:
        """Check the stop signal, the budget and the step limit; then one model call."""
        rec = copy_record(state["agent"])
        run_key, rnd = state["run_key"], state["round"]
        calls = state.get("calls")
        if calls is None and rec["end_reason"] == SPAWNED:  # continuing beside the children it started
            calls = rec.get("activation_calls", 0)
            rec["status"] = "running"
            rec["end_reason"] = ""
        elif calls is None:  # start of an activation
            calls = 0
            rec["activations"] += 1
            rec["status"] = "running"
            rec["end_reason"] = ""
            if rec["activations"] == 1:  # the query opens the history (before any re-activation message)
                rec["messages"].insert(0, HumanMessage(spec.first_message(state["query"], rec, deps)))
        out: dict[str, Any] = {"agent": rec, "agents": {rec["id"]: rec}, "calls": calls}
        if deps.signals.is_stopped(run_key, rnd):
            _end(rec, "stopped", "stop_signal")
        elif deps.over_budget(run_key):
            _end(rec, "stopped", "budget")
        elif calls >= deps.config.agent_step_limit:
            _end(rec, "finished", "step_limit")
        if rec["status"] != "running":
            out["ended"] = True
            return out
        prompt: list[BaseMessage] = [SystemMessage(spec.system_prompt(rec, deps)), *rec["messages"]]
        try:
            model = deps.models.for_role(spec.level).bind_tools(schemas)
            reply, used = call_role(model, spec.level, prompt, config, inputs=role_inputs(state["query"], rec),
                                    on_tokens=lambda n: deps.signals.add_tokens(run_key, n))
        except (ModelNotConfiguredError, GraphBubbleUp):
            raise
        except Exception as exc:  # a provider error ends this agent only; reflection may re-activate it
            log.warning("agent %s: model call failed: %s", rec["id"], exc)
            _end(rec, "stopped", f"error: {type(exc).__name__}: {exc}"[:500])
            out["ended"] = True
            return out
        if any(not tc.get("id") for tc in reply.tool_calls):  # some servers omit ids: a ToolMessage needs one
            reply = reply.model_copy(update={"tool_calls": [
                {**tc, "id": tc.get("id") or f"{rec['id']}:{rec['steps']}:{i}"} for i, tc in enumerate(reply.tool_calls)]})
        tokens = int(used.get("input_tokens", 0)) + int(used.get("output_tokens", 0))
        rec["tokens"] += tokens
        rec["messages"].append(reply)
        rec["steps"] += 1
        if not reply.tool_calls and not reply.invalid_tool_calls:
            rec["messages"].append(HumanMessage(_nudge(spec)))
            rec["invalid_calls"] += 1
        out.update(calls=calls + 1, usage={spec.level: dict(used)})
        return out

    def run_one(ctx: CallContext, name: str, args: Any) -> tuple[FunctionResult, bool]:
        """Run one function call; returns the result and whether it was an invalid call."""
        fn = spec.function(name)
        if fn is None:
            return FunctionResult(f"Error: unknown function {name!r}. Valid functions: {spec.signatures()}."), True
        parsed = fn.validate(args)
        if isinstance(parsed, str):
            return FunctionResult(parsed), True
        handler = spec.handlers.get(name)
        if handler is None:
            return FunctionResult(f"Error: {name} is not available to this agent."), True
        try:
            result = handler(ctx, parsed)
        except (ModelNotConfiguredError, GraphBubbleUp):
            raise
        except Exception as exc:  # a handler bug or a catalog error: answered, not raised
            log.warning("agent %s: %s failed: %s", ctx.record["id"], name, exc)
            return FunctionResult(f"Error: {name} failed: {exc}"), False
        return (FunctionResult(result) if isinstance(result, str) else result), False

    def run_functions(state: AgentLoopState, config: RunnableConfig) -> dict[str, Any]:
        """Answer every tool call of the last model turn, in order."""
        rec = copy_record(state["agent"])
        prior = state.get("api_pool") or {}
        ctx = CallContext(deps, state["query"], state["run_key"], state["round"], rec, state["pool"],
                          list(prior.get("add") or []), config)
        last = rec["messages"][-1]
        assert isinstance(last, AIMessage), "run_functions follows a model turn"
        terminal: FunctionResult | None = None
        for tc in last.tool_calls:
            name, call_id = tc.get("name") or "", tc.get("id") or ""
            if terminal is not None:
                content, error = (f"Not executed: this agent's search already ended ({terminal.end_reason}) "
                                  "earlier in this turn."), True
            else:
                result, invalid = run_one(ctx, name, tc.get("args"))
                rec["invalid_calls"] += int(invalid)
                content, error = result.content, invalid or result.content.startswith("Error")
                if result.end is not None:
                    terminal = result
            rec["messages"].append(ToolMessage(content=content, tool_call_id=call_id, name=name,
                                               status="error" if error else "success"))
        for bad in last.invalid_tool_calls:
            rec["invalid_calls"] += 1
            fn = spec.function(bad.get("name") or "")
            expected = fn.signature() if fn else f"one of {spec.signatures()}"
            rec["messages"].append(ToolMessage(
                content=f"Error: the arguments of {bad.get('name')!r} are not valid JSON ({bad.get('error') or ''}). "
                        f"Expected {expected}.",
                tool_call_id=bad.get("id") or "", name=bad.get("name") or "", status="error"))
        if terminal is not None and terminal.end is not None:
            _end(rec, terminal.end, terminal.end_reason)
        elif ctx.children:
            # Yield so the new children start now (Send, next superstep); this agent continues beside them in
            # that superstep, as the paper's agents run concurrently, and the stop signal can cut it off there.
            rec["status"] = "pending"
            rec["end_reason"] = SPAWNED
            rec["activation_calls"] = state.get("calls", 0)
        out: dict[str, Any] = {"agent": rec, "agents": {rec["id"]: rec, **ctx.children}}
        if terminal is not None or ctx.children:
            out["ended"] = True
        if ctx.adds:
            out["api_pool"] = {"add": ctx.adds, "cap": deps.config.max_api_pool}
        if ctx.solvable:
            out["solvable_round"] = state["round"]
        if ctx.usage:
            out["usage"] = ctx.usage
        return out

    def after_model(state: AgentLoopState) -> Literal["run_functions", "call_model", "__end__"]:
        if state.get("ended"):
            return "__end__"
        last = state["agent"]["messages"][-1]
        if isinstance(last, AIMessage) and (last.tool_calls or last.invalid_tool_calls):
            return "run_functions"
        return "call_model"

    def after_functions(state: AgentLoopState) -> Literal["call_model", "__end__"]:
        return "__end__" if state.get("ended") else "call_model"

    builder = StateGraph(AgentLoopState, input_schema=AgentInput, output_schema=AgentOutput)
    builder.add_node("call_model", call_model)
    builder.add_node("run_functions", run_functions)
    builder.add_edge(START, "call_model")
    builder.add_conditional_edges("call_model", after_model, ["run_functions", "call_model", END])
    builder.add_conditional_edges("run_functions", after_functions, ["call_model", END])
    return builder.compile(name=NODE_FOR_LEVEL[spec.level])
