"""The in-loop judge (AnyTool §4.2-4.3): did the solver's answer solve the query? Solved / Unsolved / Unsure.

It follows ToolEval's two-stage procedure, as the paper's judge uses ToolBench's: a give-up or an empty answer is
Unsolved without a model call; otherwise `check_answer_status` on the query and answer, and on Unsure
`parse_answer_status` on the whole solve (the API calls with their truncated outputs). A final Unsure is not
Solved: the run reflects as on Unsolved. The judge has its own model (role "judge"), separate from any evaluator
(`eval/`), which runs the same procedure with its own model and cache.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from langgraph.types import Command
from typing_extensions import TypedDict

from ...llm import BUDGET_KIND, ModelCallError, ModelNotConfiguredError
from ...state import AnyToolState, SolverAttempt
from ...tools.observation import Status
from ..abilities.router import DIRECT_MODE
from ..reflection import can_reflect
from .tooleval import check_is_solved

if TYPE_CHECKING:
    from ...runtime import Deps

_OBSERVED = frozenset(s.value for s in Status)

Label = Literal["Solved", "Unsolved", "Unsure"]


class Verdict(TypedDict):
    label: Label
    reason: str
    by: str  # "rule", or the ToolEval stage that decided: "answer" | "process"; "error": the judge's model failed


def rule_verdict(attempt: SolverAttempt) -> Verdict | None:
    """The verdicts that need no model (a give-up, an empty answer: ToolEval's rule); None when the model decides."""
    if attempt["finish_type"] != "give_answer":
        reason = attempt["reason"] or f"the solver ended with {attempt['finish_type']}"
        return {"label": "Unsolved", "reason": reason, "by": "rule"}
    if not attempt["answer"].strip():
        return {"label": "Unsolved", "reason": "the final answer is empty", "by": "rule"}
    return None


PROCESS_OUTPUT_CHARS = 600  # per API output shown to the judge


def process_text(attempt: SolverAttempt, max_chars: int = PROCESS_OUTPUT_CHARS) -> str:
    """The solve the judge reviews: each API call on the answer's path with its status and (truncated) output."""
    lines = []
    for node in attempt["tree"]:
        if node.get("status") == "dead":
            continue
        outputs = {m.get("tool_call_id"): str(m.get("content", "")) for m in node.get("messages", [])
                   if m.get("role") == "tool"}
        for call in node.get("calls", []):
            if call.get("status") not in _OBSERVED:
                continue
            text = outputs.get(call.get("tool_call_id"), "")
            if len(text) > max_chars:
                text = text[:max_chars] + f"... [{len(text) - max_chars} more characters]"
            args = json.dumps(call.get("arguments"), ensure_ascii=False, default=str)
            lines.append(f"- {call.get('function', '?')} → {call.get('status')}\n  arguments: {args}\n  output: {text}")
    return "\n".join(lines) or "(no API was called)"


def observed_calls(attempt: SolverAttempt) -> list[dict[str, str]]:
    """The API calls of a solve that reached the executor: function and status (structured judge input)."""
    return [{"function": str(c.get("function")), "status": str(c.get("status"))}
            for node in attempt["tree"] for c in node.get("calls", []) if c.get("status") in _OBSERVED]


def make_judge(base: Deps) -> Any:
    """The `judge` node: the verdict ({label, reason, by}) on the latest solver attempt, then the route: Solved →
    finalize; Unsolved or Unsure (Unsure never counts as solved) → reflect, while reflections and budget last; a
    solve ended by a model error, or a judge call that failed for good (verdict "by": "error") → finalize (status
    `error`: reflecting cannot mend a failing provider).
    An answer given without tools (the router's, mode "direct") that is not Solved → retrieval (`dispatch`)."""

    def judge(state: AnyToolState, runtime: Runtime[Any]) -> Command[Literal["reflect", "dispatch", "finalize"]]:
        deps = base.for_run(runtime.context)
        run_key = state.get("run_key", "")
        attempt = state["solver_attempts"][-1]
        verdict = rule_verdict(attempt)
        usage: dict[str, Any] = {}
        stop = deps.budget_stop(run_key) if verdict is None else None
        if stop is not None:
            verdict = {"label": "Unsure", "reason": f"not judged: {stop.reason}", "by": "rule"}
        elif verdict is None:
            try:
                result = check_is_solved(deps.models.for_role("judge"), state["query"], attempt["answer"],
                                         process_text(attempt), inputs={"calls": observed_calls(attempt)},
                                         on_usage=deps.meter(run_key))
            except (ModelNotConfiguredError, GraphBubbleUp):
                raise
            except ModelCallError as exc:  # the provider failed for good: the run ends as an error of that kind
                result = None
                verdict = ({"label": "Unsure", "reason": f"not judged: {str(exc).split(': ', 1)[1]}"[:500], "by": "rule"}
                           if exc.kind == BUDGET_KIND else {"label": "Unsure", "reason": str(exc)[:500], "by": "error"})
                usage = exc.usage()
            except Exception as exc:  # a provider error must not discard the solver's answer
                result = None
                verdict = {"label": "Unsure", "reason": f"judge model call failed: {type(exc).__name__}: {exc}"[:500],
                           "by": "rule"}
            if result is not None:
                used: dict[str, Any] = {k: v for k, v in result.usage.items() if isinstance(v, int | float)}
                usage = {"judge": used} if used else {}  # (the run's tallies were metered call by call)
                label: Label = "Solved" if result.label == "Solved" else (
                    "Unsolved" if result.label == "Unsolved" else "Unsure")
                verdict = {"label": label, "reason": result.reason, "by": result.stage}
        assert verdict is not None
        update = {"verdict": dict(verdict), "usage": usage}
        if attempt["mode"] == DIRECT_MODE and verdict["label"] != "Solved" and not deps.over_budget(run_key):
            # the router's "no tool" was wrong: retrieve tools after all (not a reflection)
            why = f"the answer without tools was not accepted ({verdict['label']}: {verdict['reason']})"
            return Command(update={**update, "reason": why[:500]}, goto="dispatch")
        if (verdict["label"] == "Solved" or attempt["finish_type"] == "error" or verdict["by"] == "error"
                or not can_reflect(state, deps)):
            return Command(update=update, goto="finalize")
        return Command(update={**update, "reflect_request": "new"}, goto="reflect")

    return judge
