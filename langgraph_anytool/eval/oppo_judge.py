"""The LLM evaluator of the OPPO tasks the paper scores with GPT-4 (seed 001, App. C.2: tasks 4, 5, 6, 8 and the
success check of task 7). It is its own model (never the in-loop judge of the graph) and every verdict is cached on
disk, keyed by the evaluator's identity and the full prompt, so a re-run costs no evaluator call."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from ..llm import call_role
from . import oppo_prompts as P

ROLE = "evaluator"


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reason: str
    cached: bool = False


def model_identity(model: Any) -> str:
    """A stable name for a model (the cache key's first part)."""
    if isinstance(model, str):
        return model
    for attr in ("model_name", "model", "name_"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return f"{type(model).__name__}:{value}"
    return type(model).__name__


_JSON = re.compile(r"\{.*\}", re.DOTALL)


def parse_verdict(text: str) -> Verdict | None:
    """`{"label": "pass"|"fail", "reason": ...}` (the first JSON object in the reply), or None."""
    m = _JSON.search(text or "")
    if not m:
        return None
    try:
        data = json.loads(m.group(0))
    except ValueError:
        return None
    label = str(data.get("label", "")).strip().lower() if isinstance(data, dict) else ""
    if label not in ("pass", "fail"):
        return None
    return Verdict(passed=label == "pass", reason=str(data.get("reason", "")).strip())


class TaskEvaluator:
    """Judges an output against a task's criterion, with an on-disk cache (`cache_dir`, one JSON file per key)."""

    def __init__(self, model: Any, *, cache_dir: str | Path | None = None, identity: str | None = None) -> None:
        self.model = model
        self.identity = identity or model_identity(model)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.calls = 0
        self.hits = 0

    def _path(self, key: str) -> Path | None:
        return self.cache_dir / f"{key}.json" if self.cache_dir is not None else None

    def judge(self, task: int, instruction: str, output: str, context: str = "") -> Verdict:
        prompt = P.EVALUATOR_TASK.format(criterion=P.CRITERIA[task], instruction=instruction,
                                         context=f"{context.strip()}\n" if context.strip() else "", output=output)
        key = hashlib.sha256(json.dumps([self.identity, P.EVALUATOR_SYSTEM, prompt]).encode()).hexdigest()
        path = self._path(key)
        if path is not None and path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                self.hits += 1
                return Verdict(bool(data["passed"]), str(data.get("reason", "")), cached=True)
            except (ValueError, KeyError):
                pass  # a damaged entry is recomputed
        self.calls += 1
        ai, _ = call_role(self.model, ROLE, [SystemMessage(content=P.EVALUATOR_SYSTEM), HumanMessage(content=prompt)],
                          None, inputs={"task": task})
        text = ai.content if isinstance(ai.content, str) else json.dumps(ai.content)
        verdict = parse_verdict(text)
        if verdict is None:  # not cached: a retry may get a usable reply
            return Verdict(False, f"unusable evaluator reply: {text[:200]!r}")
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"passed": verdict.passed, "reason": verdict.reason, "task": task,
                                        "evaluator": self.identity}), encoding="utf-8")
        return verdict
