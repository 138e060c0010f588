"""A result record's answer process: the function calls of its solver attempts, in order (what an evaluator's
second stage reads, and what ToolEval's converted answer chains)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def answer_process(record: Mapping[str, Any], max_content: int = 600) -> list[dict[str, Any]]:
    """The answer process the second stage reads: every function call of the solver attempts with its arguments,
    status and (clipped) result, in order."""
    steps: list[dict[str, Any]] = []
    for attempt in record.get("trajectory") or []:
        for node in attempt.get("tree") or []:
            results = {m.get("tool_call_id"): str(m.get("content", "")) for m in node.get("messages") or []
                       if isinstance(m, Mapping) and m.get("tool_call_id")}
            for c in node.get("calls") or []:
                steps.append({"attempt": attempt.get("attempt"), "function": c.get("function"),
                              "arguments": c.get("arguments"), "status": c.get("status"),
                              "result": results.get(c.get("tool_call_id"), "")[:max_content]})
    return steps
