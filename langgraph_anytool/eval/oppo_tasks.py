"""`anytool eval tasks`: runners of the OPPO paper's eight tasks (seed 001, §3.4, Table 1). Each runner asks the
model under test through `oppo_agent` and scores with `oppo_score`; LLM-judged tasks use a `TaskEvaluator` when one
is given and otherwise the rule check against the row's reference columns (the report says which)."""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel

from ..catalog import Catalog
from ..llm import ModelNotConfiguredError
from ..tools.pipeline import ApiExecutor
from . import oppo_agent as agent
from . import oppo_score as score
from .oppo_data import TASKS, TaskDataError, TaskItem, resolve_api
from .oppo_judge import TaskEvaluator

JUDGED = frozenset({4, 5, 6, 7, 8})
METRIC_NAMES: dict[int, str] = {1: "macro_f1", 2: "accuracy", 3: "clarification_rate", 4: "correct_call_rate",
                                5: "pass_rate", 6: "pass_rate", 7: "progress", 8: "pass_rate"}


@dataclass
class ItemResult:
    id: str
    type: str
    score: float
    prediction: Any
    reason: str = ""


@dataclass
class TaskReport:
    task: int
    name: str
    metrics: dict[str, float]
    items: list[ItemResult]
    scoring: str  # "rules" or "evaluator <id>"
    model_label: str
    types: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    seconds: float = 0.0
    evaluator_calls: int = 0
    evaluator_cache_hits: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "name": self.name, "metrics": self.metrics, "scoring": self.scoring,
                "model": self.model_label, "types": self.types, "errors": self.errors,
                "seconds": round(self.seconds, 3), "evaluator_calls": self.evaluator_calls,
                "evaluator_cache_hits": self.evaluator_cache_hits, "items": [asdict(i) for i in self.items]}

    def table(self) -> str:
        head = f"task {self.task} ({self.name}): {len(self.items)} items, types " + \
            ", ".join(f"{k}={v}" for k, v in sorted(self.types.items()))
        lines = [head, f"model: {self.model_label}; scoring: {self.scoring}"]
        lines += [f"  {k:<20} {100 * v:6.1f}" for k, v in self.metrics.items()]
        if self.errors:
            lines.append(f"  items whose model call failed (scored 0): {self.errors}")
        return "\n".join(lines)


def _shuffled(item_id: str, values: Sequence[str]) -> list[str]:
    """A deterministic order (per item) so the right API is not always first."""
    return sorted(values, key=lambda v: hashlib.sha256(f"{item_id}|{v}".encode()).hexdigest())


class TaskRunner:
    """Runs one task's items against a model; `evaluator` scores the LLM-judged tasks (else the rules)."""

    def __init__(self, catalog: Catalog, model: BaseChatModel, *, evaluator: TaskEvaluator | None = None,
                 executor: ApiExecutor | None = None, model_label: str = "") -> None:
        self.catalog = catalog
        self.model = model
        self.evaluator = evaluator
        self.executor = executor
        self.model_label = model_label or type(model).__name__

    def _api(self, item: TaskItem, column: str = "api") -> str:
        return resolve_api(self.catalog, item.get(column), item.where(column))

    def run(self, task: int, items: Sequence[TaskItem], progress: Callable[[int], Any] | None = None) -> TaskReport:
        start = time.perf_counter()
        handler = getattr(self, f"_task{task}")
        results: list[ItemResult] = []
        extra: dict[str, Any] = {"labels": [], "preds": []}
        errors = 0
        calls0 = self.evaluator.calls if self.evaluator else 0
        hits0 = self.evaluator.hits if self.evaluator else 0
        for item in items:
            try:
                results.append(handler(item, extra))
            except LookupError as exc:  # a row the task cannot use
                raise ValueError(f"{item.where()}: {exc}") from exc
            except (TaskDataError, ModelNotConfiguredError):
                raise
            except Exception as exc:  # a provider error costs this item, not the run
                errors += 1
                results.append(ItemResult(item.id, item.type, 0.0, None, f"model call failed: {type(exc).__name__}: {exc}"))
                if task == 1:
                    extra["labels"].append(item.get("tool_use_label") == "1")
                    extra["preds"].append(False)
            if progress is not None:
                progress(1)
        if task == 1:
            metrics = score.task1_scores(extra["labels"], extra["preds"])
        else:
            metrics = {METRIC_NAMES[task]: score.rate([r.score for r in results])}
            if task == 8 and extra.get("coverage"):
                metrics["api_coverage"] = score.rate(extra["coverage"])
        scoring = "rules"
        if task in JUDGED and self.evaluator is not None:
            scoring = f"evaluator {self.evaluator.identity}"
        if task == 4:
            scoring = f"rule checks on the raw call, then {'evaluator ' + self.evaluator.identity if self.evaluator else 'the ref_call column'}"
        return TaskReport(task=task, name=TASKS[task], metrics=metrics, items=results, scoring=scoring,
                          model_label=self.model_label, types=dict(Counter(i.type for i in items)), errors=errors,
                          seconds=time.perf_counter() - start,
                          evaluator_calls=(self.evaluator.calls - calls0) if self.evaluator else 0,
                          evaluator_cache_hits=(self.evaluator.hits - hits0) if self.evaluator else 0)

    # ------------------------------------------------------------------------------------------ tasks
    def _task1(self, item: TaskItem, extra: dict[str, Any]) -> ItemResult:
        label = item.get("tool_use_label")
        if label not in ("0", "1"):
            raise LookupError(f"column 'tool_use_label' must be 0 or 1, got {label!r}")
        d = agent.decide_tool_use(self.model, self.catalog, item.instruction, [self._api(item)])
        extra["labels"].append(label == "1")
        extra["preds"].append(d.use_tool)
        return ItemResult(item.id, item.type, float(d.use_tool == (label == "1")), {"use_tool": d.use_tool})

    def _task2(self, item: TaskItem, extra: dict[str, Any]) -> ItemResult:
        right = self._api(item)
        others = [resolve_api(self.catalog, ref, item.where("simi_apis")) for ref in item.lines("simi_apis")]
        candidates = _shuffled(item.id, list(dict.fromkeys([right, *others])))
        s = agent.select_api(self.model, self.catalog, item.instruction, candidates)
        return ItemResult(item.id, item.type, float(s.api_id == right), {"selected": s.api_id, "function": s.function})

    def _task3(self, item: TaskItem, extra: dict[str, Any]) -> ItemResult:
        r = agent.ask_or_call(self.model, self.catalog, item.instruction, [self._api(item)])
        return ItemResult(item.id, item.type, float(r.asked),
                          {"kind": r.kind, "question": r.question, "calls": [asdict(c) for c in r.calls]})

    def _task4(self, item: TaskItem, extra: dict[str, Any]) -> ItemResult:
        api_id = self._api(item)
        api = self.catalog.api(api_id)
        raw = agent.fill_parameters(self.model, self.catalog, item.instruction, api_id)
        if raw is None:
            return ItemResult(item.id, item.type, 0.0, None, "no function call")
        pred = asdict(raw)
        ok, why = score.check_raw_call(api, raw.api_id == api_id, raw.args)
        if not ok:
            return ItemResult(item.id, item.type, 0.0, pred, why)
        if self.evaluator is not None:
            v = self.evaluator.judge(4, item.instruction, f"call {raw.function} with {raw.args}",
                                     context=f"API specification: {api.details()}")
            return ItemResult(item.id, item.type, float(v.passed), pred, v.reason)
        ref = item.ref_call()
        if ref is None:
            raise LookupError("column 'ref_call' is empty: task 4 without --evaluator needs a reference call")
        ok, why = score.matches_reference(raw.args, ref)
        return ItemResult(item.id, item.type, float(ok), pred, why)

    def _judged_text(self, task: int, item: TaskItem, output: str, context: str = "") -> tuple[float, str]:
        if self.evaluator is not None:
            v = self.evaluator.judge(task, item.instruction, output, context=context)
            return float(v.passed), v.reason
        ok, why = score.has_facts(output, item.facts())
        return float(ok), why

    def _task5(self, item: TaskItem, extra: dict[str, Any]) -> ItemResult:
        answer = agent.answer_directly(self.model, item.instruction)
        value, why = self._judged_text(5, item, answer)
        return ItemResult(item.id, item.type, value, {"answer": answer}, why)

    def _task6(self, item: TaskItem, extra: dict[str, Any]) -> ItemResult:
        conv = item.conv()
        answer = agent.answer_from_conversation(self.model, self.catalog, conv)
        tool_text = "\n".join(str(m.get("content")) for m in conv if m.get("role") == "tool")
        value, why = self._judged_text(6, item, answer, context=f"Tool result:\n{tool_text}")
        return ItemResult(item.id, item.type, value, {"answer": answer}, why)

    def _task7(self, item: TaskItem, extra: dict[str, Any]) -> ItemResult:
        if self.executor is None:
            raise LookupError("task 7 executes API calls: the runner needs an executor")
        ids = list(dict.fromkeys([self._api(item), *(resolve_api(self.catalog, r, item.where("dep"))
                                                    for r in item.lines("dep"))]))
        chain = agent.solve_chain(self.model, self.catalog, self.executor, item.instruction, _shuffled(item.id, ids))
        called = [self.catalog.api(s.api_id).name for s in chain.steps if s.api_id is not None and s.ok]
        reference = item.ref_steps()
        prog = score.progress(reference, called)
        pred = {"calls": [asdict(s) for s in chain.steps], "answer": chain.answer, "stopped": chain.stopped}
        if self.evaluator is not None and chain.answer:
            v = self.evaluator.judge(7, item.instruction, chain.answer,
                                     context="Function calls made: " + "; ".join(
                                         f"{s.function}({s.args}) -> {'ok' if s.ok else 'failed'}" for s in chain.steps))
            if v.passed:
                return ItemResult(item.id, item.type, 1.0, pred, v.reason)
            return ItemResult(item.id, item.type, prog, pred, f"judged unsuccessful ({v.reason}); progress {prog:.2f}")
        return ItemResult(item.id, item.type, prog, pred, f"progress {prog:.2f} along {' -> '.join(reference)}")

    def _task8(self, item: TaskItem, extra: dict[str, Any]) -> ItemResult:
        ids = [resolve_api(self.catalog, r, item.where("comb")) for r in item.lines("comb")]
        if not ids:
            raise LookupError("column 'comb' lists no API")
        outline = agent.plan_outline(self.model, self.catalog, item.instruction, ids)
        names = [self.catalog.api(a).name for a in ids]
        coverage = score.outline_coverage(outline, names)
        extra.setdefault("coverage", []).append(coverage)
        if self.evaluator is not None:
            v = self.evaluator.judge(8, item.instruction, outline, context="Provided APIs: " + ", ".join(names))
            return ItemResult(item.id, item.type, float(v.passed), {"outline": outline, "coverage": coverage}, v.reason)
        return ItemResult(item.id, item.type, float(coverage == 1.0), {"outline": outline, "coverage": coverage},
                          f"names {coverage:.0%} of the provided APIs")
