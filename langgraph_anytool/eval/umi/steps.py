"""`anytool eval steps`: α-UMi's static, step-level evaluation (α-UMi §4.2, Appendix C) over ToolBench answer
files or α-UMi test files, per file group and overall. The metrics are the authors' (`step_metrics`), plus one
named extra column (`rouge_l_norm`)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ...config import AnyToolConfig
from ...paper_prompts import PromptBook, ours_provenance
from .data import LoadReport, StepCase
from .metrics import METRIC_LABELS, METRICS, StepOutcome, StepScores, score_steps
from .predict import Mode, ModelsFor, Prediction, StepTools, predict_step, step_tools


@dataclass
class StepRecord:
    """One evaluated step: where it comes from, the reference and the prediction."""

    source: str
    case_id: str
    step: int
    reference: dict[str, Any]
    prediction: dict[str, Any]


@dataclass
class StepsReport:
    groups: dict[str, StepScores]
    overall: StepScores
    records: list[StepRecord]
    mode: str
    model_label: str
    files: int = 0
    skipped_files: list[str] = field(default_factory=list)
    skipped_turns: int = 0
    errors: int = 0
    seconds: float = 0.0
    prompts: dict[str, Any] = field(default_factory=ours_provenance)  # which role prompts ran (files and sha256)

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "model": self.model_label, "prompts": self.prompts, "files": self.files,
                "skipped_files": self.skipped_files, "skipped_turns": self.skipped_turns, "errors": self.errors,
                "seconds": round(self.seconds, 3), "metrics": list(METRICS),
                "groups": {k: asdict(v) for k, v in self.groups.items()}, "overall": asdict(self.overall),
                "steps": [asdict(r) for r in self.records]}

    def table(self) -> str:
        """Per-group and overall scores in percent ("-" where a metric has no step of its kind)."""
        head = ["group", "steps", *(METRIC_LABELS[m] for m in METRICS)]
        rows = []
        for name, s in [*sorted(self.groups.items()), ("overall", self.overall)]:
            vals = [s.metric(m) for m in METRICS]
            rows.append([name, str(s.steps), *("-" if v is None else f"{100 * v:.1f}" for v in vals)])
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
                 for r in [head, *rows]]
        lines.insert(1, "  ".join("-" * w for w in widths))
        notes = [f"model: {self.model_label}; mode: {self.mode}; files: {self.files}"]
        if self.prompts.get("files"):
            notes.append(f"role prompts: α-UMi's, from {self.prompts['path']} ({', '.join(self.prompts['files'])})")
        if self.skipped_files:
            notes.append(f"skipped files: {len(self.skipped_files)} (no train_messages)")
        if self.skipped_turns:
            notes.append(f"assistant turns without a decision (not scored): {self.skipped_turns}")
        if self.errors:
            notes.append(f"steps whose model call failed (scored as misses): {self.errors}")
        if self.overall.rouge_unscorable:
            notes.append(f"conclusion steps with an empty answer or reference (Rouge-L 0; the rouge package "
                         f"raises there): {self.overall.rouge_unscorable}")
        notes.append("Plan ACC .. Rouge-L: the authors' scorers (X-PLUG/Multi-LLM-Agent evaluate-multi_agent.py / "
                     "evaluate-backbone.py; Rouge-L from the `rouge` package, case and punctuation kept); "
                     "Rouge-L norm.: rouge-score (lowercased, punctuation removed), not the paper's")
        return "\n".join([*lines, *notes])


def _outcome(case: StepCase, pred: Prediction) -> StepOutcome:
    ref = case.reference
    return StepOutcome(ref_plan=ref.plan, pred_plan=pred.plan, tools=case.function_names, ref_action=ref.action,
                       ref_args=ref.args, ref_answer=ref.answer, pred_action=pred.action, pred_args=pred.args,
                       pred_answer=pred.answer)


def evaluate_steps(cases: Sequence[StepCase], models_for: ModelsFor, *, mode: Mode = "single",
                   config: AnyToolConfig | None = None, model_label: str = "",
                   loaded: LoadReport | None = None, progress: Any = None,
                   prompts: PromptBook | None = None) -> StepsReport:
    """Predict every step (teacher forcing) and score the set per source group and overall. `prompts`: α-UMi's own
    role prompts read from a clone of X-PLUG/Multi-LLM-Agent (`paper_prompts.umi_book`; multi mode)."""
    cfg = config or AnyToolConfig()
    start = time.perf_counter()
    tools_cache: dict[tuple[Any, ...], tuple[StepTools, Any]] = {}
    outcomes: dict[str, list[StepOutcome]] = {}
    records: list[StepRecord] = []
    errors = 0
    for case in cases:
        key = tuple((f.name, f.description) for f in case.functions)
        if key not in tools_cache:
            tools = step_tools(case.functions)
            tools_cache[key] = (tools, models_for(tools.catalog))
        tools, models = tools_cache[key]
        pred = predict_step(case, tools, models, cfg, mode, prompts)
        errors += int(bool(pred.error) and pred.plan is None)
        outcomes.setdefault(case.source, []).append(_outcome(case, pred))
        records.append(StepRecord(case.source, case.case_id, case.step, asdict(case.reference), asdict(pred)))
        if progress is not None:
            progress(1)
    groups = {k: score_steps(v) for k, v in outcomes.items()}
    overall = score_steps(o for v in outcomes.values() for o in v)
    rep = StepsReport(groups=groups, overall=overall, records=records, mode=mode, model_label=model_label,
                      errors=errors, seconds=time.perf_counter() - start,
                      prompts=prompts.provenance() if prompts is not None else ours_provenance())
    if loaded is not None:
        rep.files, rep.skipped_files, rep.skipped_turns = loaded.files, loaded.skipped_files, loaded.skipped_turns
    return rep


def reference_outcomes(cases: Iterable[StepCase]) -> list[StepOutcome]:
    """Each step predicted exactly as its reference (a sanity check: every metric is 100)."""
    return [StepOutcome(ref_plan=c.reference.plan, pred_plan=c.reference.plan, tools=c.function_names,
                        ref_action=c.reference.action, ref_args=c.reference.args, ref_answer=c.reference.answer,
                        pred_action=c.reference.action, pred_args=c.reference.args, pred_answer=c.reference.answer)
            for c in cases]
