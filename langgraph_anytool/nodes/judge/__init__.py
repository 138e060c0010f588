"""The judge: quick rules, then a model labels the solver's answer Solved / Unsolved / Unsure."""

from __future__ import annotations

import json
import re
from typing import Any, Literal, TypedDict

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.errors import GraphBubbleUp

from ...llm import ModelNotConfiguredError, call_role
from ...runtime import Deps
from ...state import AnyToolState, SolverAttempt
from .prompts import JUDGE_SYSTEM, JUDGE_USER

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


def _calls_summary(attempt: SolverAttempt) -> str:
    lines = []
    for node in attempt["tree"]:
        for obs in node.get("observations", []) or []:
            lines.append(f"- {obs.get('function', '?')} → {obs.get('status', '?')}")
    return "\n".join(lines) or "(none)"


def _calls_inputs(attempt: SolverAttempt) -> list[dict[str, Any]]:
    """The attempt's API calls as structured judge inputs: `[{function, status}]`."""
    return [{"function": obs.get("function", "?"), "status": obs.get("status", "?")}
            for node in attempt["tree"] for obs in node.get("observations", []) or []]


def make_judge(deps: Deps) -> Any:
    """The `judge` node: writes `verdict` ({label, reason, by}) for the latest solver attempt."""

    def judge(state: AnyToolState) -> dict[str, Any]:
        attempt = state["solver_attempts"][-1]
        verdict = rule_verdict(attempt)
        usage: dict[str, Any] = {}
        if verdict is None:
            if deps.over_budget(state.get("run_key", "")):
                verdict = {"label": "Unsure", "reason": "token budget exhausted before judging", "by": "rule"}
            else:
                prompt = [
                    SystemMessage(JUDGE_SYSTEM),
                    HumanMessage(JUDGE_USER.format(query=state["query"], calls=_calls_summary(attempt),
                                                   answer=attempt["answer"])),
                ]
                try:
                    reply, used = call_role(deps.models.for_role("judge"), "judge", prompt,
                                            inputs={"query": state["query"], "answer": attempt["answer"],
                                                    "calls": _calls_inputs(attempt)},
                                            on_tokens=lambda n: deps.signals.add_tokens(state.get("run_key", ""), n))
                except (ModelNotConfiguredError, GraphBubbleUp):
                    raise
                except Exception as exc:  # a provider error must not discard the solver's answer
                    reason = f"judge model call failed: {type(exc).__name__}: {exc}"[:500]
                    return {"verdict": {"label": "Unsure", "reason": reason, "by": "rule"}, "usage": usage}
                usage = {"judge": dict(used)}
                verdict = parse_verdict(str(reply.content))
        return {"verdict": dict(verdict), "usage": usage}

    return judge
