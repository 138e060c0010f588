"""The judge: quick rules, then a model labels the solver's answer Solved / Unsolved / Unsure."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from langgraph.types import Command
from typing_extensions import TypedDict

from ...llm import ModelNotConfiguredError, call_role
from ...state import AnyToolState, SolverAttempt
from ...tools.observation import Status
from ..reflection import can_reflect
from .prompts import JUDGE_SYSTEM, JUDGE_USER

if TYPE_CHECKING:
    from ...runtime import Deps

_OBSERVED = frozenset(s.value for s in Status)

Label = Literal["Solved", "Unsolved", "Unsure"]

# Phrases that mark an answer as a refusal or failure, matched case-insensitively as whole phrases.
_APOLOGY = re.compile(
    r"\b(sorry|apologi[sz]e|unfortunately|i (?:am|'m) (?:unable|not able)|i (?:can ?not|can't|couldn't|could not)"
    r"|unable to (?:retrieve|find|get|access|fetch|provide)|no (?:relevant )?(?:information|data|results) (?:is |was )?(?:available|found))\b",
    re.IGNORECASE,
)


class Verdict(TypedDict):
    label: Label
    reason: str
    by: str  # "rule" or "model"


def rule_verdict(attempt: SolverAttempt) -> Verdict | None:
    """Quick rules that need no model; None when the model must decide."""
    if attempt["finish_type"] != "give_answer":
        reason = attempt["reason"] or f"the solver ended with {attempt['finish_type']}"
        return {"label": "Unsolved", "reason": reason, "by": "rule"}
    answer = attempt["answer"].strip()
    if not answer:
        return {"label": "Unsolved", "reason": "the final answer is empty", "by": "rule"}
    if _APOLOGY.search(answer):
        return {"label": "Unsolved", "reason": f"the answer is a refusal or apology: {answer[:200]!r}", "by": "rule"}
    return None


def parse_verdict(text: str) -> Verdict:
    """Parse the judge model's reply (JSON, or a plain label as a fall-back)."""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if match:
        try:
            data: Any = json.loads(match.group(0))
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict):
            label = str(data.get("label", "")).strip().capitalize()
            if label in ("Solved", "Unsolved", "Unsure"):
                return {"label": label, "reason": str(data.get("reason", "")).strip(), "by": "model"}  # type: ignore[typeddict-item]
    low = text.lower()
    for word, label in (("unsolved", "Unsolved"), ("unsure", "Unsure"), ("solved", "Solved")):
        if word in low:
            return {"label": label, "reason": text.strip()[:500], "by": "model"}  # type: ignore[typeddict-item]
    return {"label": "Unsure", "reason": f"unparseable judge reply: {text.strip()[:200]!r}", "by": "model"}


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
    finalize; Unsolved or Unsure (Unsure never counts as solved) → reflect, while reflections and budget last."""

    def judge(state: AnyToolState, runtime: Runtime[Any]) -> Command[Literal["reflect", "finalize"]]:
        deps = base.for_run(runtime.context)
        attempt = state["solver_attempts"][-1]
        verdict = rule_verdict(attempt)
        usage: dict[str, Any] = {}
        if verdict is None and deps.over_budget(state.get("run_key", "")):
            verdict = {"label": "Unsure", "reason": "token budget exhausted before judging", "by": "rule"}
        elif verdict is None:
            prompt = [SystemMessage(JUDGE_SYSTEM),
                      HumanMessage(JUDGE_USER.format(query=state["query"], calls=process_text(attempt),
                                                     answer=attempt["answer"]))]
            try:
                reply, used = call_role(deps.models.for_role("judge"), "judge", prompt,
                                        inputs={"query": state["query"], "answer": attempt["answer"],
                                                "calls": observed_calls(attempt)},
                                        on_tokens=lambda n: deps.signals.add_tokens(state.get("run_key", ""), n))
                verdict = parse_verdict(str(reply.content))
                usage = {"judge": dict(used)}
            except (ModelNotConfiguredError, GraphBubbleUp):
                raise
            except Exception as exc:  # a provider error must not discard the solver's answer
                verdict = {"label": "Unsure", "reason": f"judge model call failed: {type(exc).__name__}: {exc}"[:500],
                           "by": "rule"}
        update = {"verdict": dict(verdict), "usage": usage}
        if verdict["label"] == "Solved" or not can_reflect(state, deps):
            return Command(update=update, goto="finalize")
        return Command(update={**update, "reflect_request": "new"}, goto="reflect")

    return judge
