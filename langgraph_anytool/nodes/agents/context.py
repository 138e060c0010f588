"""What a retriever agent's function handlers see (`CallContext`), what they return, and what a role is."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig

from ...models.llm import call_role, total_tokens
from ...runtime import total_cost
from ...state import AgentLevel, AgentRecord, PoolEntry, RunTally, merge_usage
from ...tools.agent_functions import AgentFunction

if TYPE_CHECKING:
    from ...runtime import BudgetStop, Deps


def to_json(value: Any) -> str:
    """Function results are JSON text (non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False)


def role_inputs(query: str, record: AgentRecord, max_tools: int | None = None) -> dict[str, Any]:
    """The structured inputs of an agent's model call: the query, the agent's scope (and a category agent's limit
    of tools per tool agent)."""
    out: dict[str, Any] = {"query": query, "agent_id": record["id"]}
    if record["category"] is not None:
        out["category"] = record["category"]
    if record["level"] == "category" and max_tools is not None:
        out["max_tools"] = max_tools
    if record["tools"] and record["level"] == "tool":
        out["tools"] = list(record["tools"])
    return out


@dataclass
class CallContext:
    """What a function handler sees and may change during one agent step.

    The run's shared state is seen as of the step's start (its `Send` payload) plus this step's own effects:
    parallel siblings' additions, stop signal and usage reach it at the next superstep (nodes/dispatch.py)."""

    deps: Deps  # with the run's settings and models (`Deps.for_run`)
    query: str
    run_key: str
    round: int
    tick: int  # the dispatch tick of this step (children created now are ready from the next one)
    record: AgentRecord  # the agent's working record (handlers may append children, assign tools)
    pool: list[str]  # API ids in the pool when the step started
    adds: list[PoolEntry]  # this step's pool additions so far
    config: RunnableConfig | None = None
    children: dict[str, AgentRecord] = field(default_factory=dict)  # records created in this step
    usage: dict[str, Any] = field(default_factory=dict)  # model usage of handlers (e.g. solvable checks)
    solvable: bool = False
    verdicts: list[dict[str, Any]] = field(default_factory=list)  # this step's solvability checks (label, reason)
    removed: list[str] = field(default_factory=list)  # API ids pruned by reflection (may not be added again)
    tally: RunTally | None = None  # the run's budget tallies at dispatch plus this step's model call (None: live)

    def pool_ids(self) -> list[str]:
        """The pool as this step sees it: the payload's pool (the run's at dispatch) and this step's additions."""
        seen = dict.fromkeys(self.pool)
        seen.update(dict.fromkeys(e["api_id"] for e in self.adds))
        return list(seen)

    def budget_stop(self) -> BudgetStop | None:
        """Which budget is spent as this step sees it (`tally` plus the handlers' usage so far), or None."""
        tally = self.tally
        if tally is not None:
            tally = {"tokens": int(tally["tokens"]) + total_tokens(self.usage),
                     "cost": float(tally["cost"]) + total_cost(self.usage)}
        return self.deps.budget_stop(self.run_key, tally)

    def call_model(self, role: str, model: Runnable[Any, BaseMessage], prompt: list[BaseMessage],
                   inputs: Mapping[str, Any]) -> AIMessage:
        """One model call made by a function handler (e.g. the solvable check), accounted once: usage delta,
        the run's token tally, the record's tokens."""
        reply, usage = call_role(model, role, prompt, self.config, inputs=inputs,
                                 on_usage=self.deps.meter(self.run_key, self.tally, lambda: total_tokens(self.usage)),
                                 profiles=self.deps.config.model_profiles)
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
    # the functions (names, in order) the authors' scripts/main.py offers this level (`agent_functions="authors"`);
    # empty: the same as `functions`
    authors_offer: tuple[str, ...] = ()

    def offered(self, authors: bool) -> tuple[AgentFunction, ...]:
        """The functions a call binds: ours, or (`authors`) the authors' selection in their order."""
        if not authors or not self.authors_offer:
            return self.functions
        by_name = {f.name: f for f in self.functions}
        return tuple(by_name[n] for n in self.authors_offer if n in by_name)

    def function(self, name: str) -> AgentFunction | None:
        return next((f for f in self.functions if f.name == name), None)

    def signatures(self) -> str:
        return ", ".join(f.signature() for f in self.functions)


def finish_search(ctx: CallContext, args: Any) -> FunctionResult:
    """`finish_search()`: every role's way to end its search (status `finished`); with the authors' prompts their
    answer (main.py `Tool_Agent.tool_search`, the same in every agent's loop: the tool message 'Finished')."""
    book = ctx.deps.paper_prompts
    return FunctionResult(book.fill("agent_finished") if book is not None else "Search finished.", end="finished",
                          end_reason="finish_search")
