"""Answer without tools (`route_tools`): one "router" model call before retrieval decides tool / no tool.

No tool → the model's direct answer becomes a solver attempt of mode "direct" (no API calls) and goes to the
in-loop judge like any other answer: Solved → the run is solved without retrieval; otherwise the router's call was
wrong and the run retrieves tools after all (the judge sends it to `dispatch`). A reply that calls neither
function, a failed call or a malformed answer counts as "needs tools": the safe side is today's behaviour.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from langgraph.types import Command

from ...models.llm import ModelCallError, ModelNotConfiguredError
from ...protocol import ANSWER_DIRECTLY, USE_TOOLS
from ...state import AnyToolState, SolverAttempt
from ...text import shorten
from ..solver.textmode import call_role_tools
from . import prompts
from .conversation import conversation_messages, prior_turns, render_conversation, request_of

if TYPE_CHECKING:
    from ...runtime import Deps

DIRECT_MODE = "direct"  # SolverAttempt.mode of an answer given without tools


def router_tools() -> list[dict[str, Any]]:
    """The router's two functions (OpenAI schemas)."""
    return [
        {"type": "function", "function": {
            "name": USE_TOOLS, "description": prompts.USE_TOOLS_DESCRIPTION,
            "parameters": {"type": "object", "properties": {
                "reason": {"type": "string", "description": "Why a tool is needed."}}, "required": ["reason"]}}},
        {"type": "function", "function": {
            "name": ANSWER_DIRECTLY, "description": prompts.ANSWER_DIRECTLY_DESCRIPTION,
            "parameters": {"type": "object", "properties": {
                "answer": {"type": "string", "description": "The complete answer shown to the user."}},
                "required": ["answer"]}}},
    ]


def parse_route(ai: AIMessage) -> tuple[Literal["tools", "answer"], str]:
    """("answer", text) when the reply answers directly with a non-empty answer; else ("tools", reason)."""
    for tc in ai.tool_calls:
        args = tc.get("args") or {}
        if tc["name"] == ANSWER_DIRECTLY:
            answer = args.get("answer") if isinstance(args, dict) else None
            if isinstance(answer, str) and answer.strip():
                return "answer", answer.strip()
            return "tools", "the router answered directly with an empty answer"
        if tc["name"] == USE_TOOLS:
            reason = args.get("reason") if isinstance(args, dict) else None
            return "tools", reason if isinstance(reason, str) else ""
    return "tools", "the router called neither function"


def direct_attempt(answer: str, reason: str, attempt: int) -> SolverAttempt:
    return SolverAttempt(attempt=attempt, round=0, mode=DIRECT_MODE, finish_type="give_answer", answer=answer,
                         reason=reason, failed_functions=[], failed_api_ids=[], api_calls=0, tree=[])


def make_route_after_init(deps: Deps) -> Callable[[Any], Literal["route", "dispatch"]]:
    """After `init`: the router when `route_tools` is on, else retrieval straight away (the paper's flow)."""

    def route_after_init(_state: Any) -> Literal["route", "dispatch"]:
        return "route" if deps.config.route_tools else "dispatch"

    return route_after_init


def make_route(base: Deps) -> Any:
    """The `route` node: tool / no tool; no tool → the direct answer goes to the judge."""

    def route(state: AnyToolState, runtime: Runtime[Any]) -> Command[Literal["dispatch", "judge"]]:
        deps = base.for_run(runtime.context)
        run_key = state.get("run_key", "")
        query = request_of(state)
        prior = prior_turns(state)
        prompt: list[BaseMessage] = [SystemMessage(content=prompts.ROUTER_SYSTEM), *conversation_messages(prior),
                                     HumanMessage(content=prompts.ROUTER_QUERY.format(query=query))]
        try:
            ai, used = call_role_tools(deps, "router", run_key, router_tools(), prompt, inputs={
                "query": query, "conversation": render_conversation(prior)})
        except (ModelNotConfiguredError, GraphBubbleUp):
            raise
        except Exception as exc:  # a provider error: retrieve, as without the router
            why = f"router model call failed ({type(exc).__name__}: {exc}); retrieving tools"
            spent = exc.usage() if isinstance(exc, ModelCallError) else {}  # e.g. a reply cut at the budget's cap
            return Command(update={"reason": shorten(why, 500), **({"usage": spent} if spent else {})}, goto="dispatch")
        usage = {"router": dict(used)}
        decision, text = parse_route(ai)
        if decision == "tools":
            return Command(update={"usage": usage}, goto="dispatch")
        attempts = state.get("solver_attempts") or []
        attempt = direct_attempt(text, "answered without tools (the router judged no tool necessary)",
                                 len(attempts) + 1)
        return Command(update={"usage": usage, "solver_attempts": [attempt]}, goto="judge")

    return route
