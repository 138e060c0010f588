"""Plan only (`plan_only`): after retrieval, one "outline" model call turns the pool into an ordered plan of API
calls with their purposes (the state's `plan`; the run's answer is the plan as text). No API is called.

Steps naming a function outside the pool are dropped and listed in the run's reason; a reply without a usable
plan leaves `plan` empty (status "unsolved", the reason says why).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from ...models.llm import ModelCallError, ModelNotConfiguredError
from ...protocol import SUBMIT_PLAN
from ...state import AnyToolState, PlanStep
from ...text import shorten
from ..solver.functions import describe_functions, pool_functions
from ..solver.textmode import call_role_tools
from . import prompts
from .conversation import conversation_messages, prior_turns, render_conversation, request_of

if TYPE_CHECKING:
    from ...runtime import Deps


def plan_schema() -> dict[str, Any]:
    """OpenAI function schema of `submit_plan`."""
    step = {"type": "object", "properties": {
        "function": {"type": "string", "description": "The function to call (one of the listed functions)."},
        "purpose": {"type": "string", "description": "What this call is for in the plan."},
        "arguments": {"type": "object", "description": "The arguments foreseen (values may refer to earlier steps)."},
    }, "required": ["function", "purpose"]}
    return {"type": "function", "function": {
        "name": SUBMIT_PLAN, "description": prompts.SUBMIT_PLAN_DESCRIPTION,
        "parameters": {"type": "object", "properties": {"steps": {"type": "array", "items": step}},
                       "required": ["steps"]}}}


def parse_plan(ai: AIMessage, functions: Mapping[str, str], deps: Deps) -> tuple[list[PlanStep], list[str], str]:
    """(plan steps over the pool, functions named outside it, why there is no plan — "" when there is one)."""
    call = next((tc for tc in ai.tool_calls if tc["name"] == SUBMIT_PLAN), None)
    if call is None:
        return [], [], "the outline model did not call submit_plan"
    raw = (call.get("args") or {}).get("steps")
    if not isinstance(raw, list):
        return [], [], "submit_plan: 'steps' is not a list"
    steps: list[PlanStep] = []
    outside: list[str] = []
    for item in raw:
        if not isinstance(item, Mapping):
            continue
        name = str(item.get("function") or "").strip()
        if name not in functions:
            outside.append(name or "(no function)")
            continue
        api = deps.catalog.api(functions[name])
        args = item.get("arguments")
        steps.append(PlanStep(step=len(steps) + 1, function=name, api_id=api.id, tool=api.tool_name, api=api.name,
                              purpose=str(item.get("purpose") or "").strip(),
                              arguments=dict(args) if isinstance(args, Mapping) else {}))
    return steps, outside, "" if steps else "the plan names no function of the pool"


def render_plan(plan: Sequence[PlanStep]) -> str:
    """The plan as numbered lines: `1. function (tool / API): purpose`."""
    return "\n".join(f"{s['step']}. {s['function']} ({s['tool']} / {s['api']}): {s['purpose'] or '(no purpose given)'}"
                     for s in plan)


def make_outline(base: Deps) -> Any:
    """The `outline` node: the plan over the pool (edge to `finalize`)."""

    def outline(state: AnyToolState, runtime: Runtime[Any]) -> dict[str, Any]:
        deps = base.for_run(runtime.context)
        run_key = state.get("run_key", "")
        query = request_of(state)
        prior = prior_turns(state)
        functions = pool_functions(deps, state.get("api_pool") or [])
        prompt: list[BaseMessage] = [
            SystemMessage(content=prompts.OUTLINE_SYSTEM.format(
                functions=describe_functions(deps, functions, with_params=True))),
            *conversation_messages(prior), HumanMessage(content=prompts.OUTLINE_QUERY.format(query=query))]
        try:
            ai, used = call_role_tools(deps, "outline", run_key, [plan_schema()], prompt, inputs={
                "query": query, "functions": list(functions), "conversation": render_conversation(prior)})
        except (ModelNotConfiguredError, GraphBubbleUp):
            raise
        except Exception as exc:  # a provider error: no plan, and why
            spent = exc.usage() if isinstance(exc, ModelCallError) else {}  # e.g. a reply cut at the budget's cap
            return {"plan": [], "reason": shorten(f"outline model call failed: {type(exc).__name__}: {exc}", 500),
                    **({"usage": spent} if spent else {})}
        steps, outside, why = parse_plan(ai, functions, deps)
        reason = why or f"a plan of {len(steps)} step(s) over the pool; no API was called"
        if outside:
            reason += f"; dropped steps naming functions outside the pool: {', '.join(outside[:10])}"
        return {"plan": steps, "reason": reason, "usage": {"outline": dict(used)}}

    return outline
