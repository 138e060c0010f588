"""α-UMi's step-level metrics (α-UMi §4.2 and Appendix C, "static evaluation on ToolBench"; the definitions follow
the authors' released scorer, GLPFT/inference_utils/toolbench/evaluate-multi_agent.py).

Every reference step t has a plan (call / conclusion / give up); the model under test predicts step t from the
reference history before it (teacher forcing). Over the steps of a set:

- Plan ACC: share of steps whose predicted plan equals the reference plan (all steps).
- Act. EM: share of reference *call* steps whose predicted function name equals the reference name exactly
  (a step predicted as no call counts as a miss).
- Hallu.: predicted calls to a function that is not in the step's tool list, divided by the number of steps
  (the released scorer divides by all steps; `hallucinated` / `predicted_calls` are reported too).
- Arg. F1: mean over reference call steps of `argument_f1` (0 when the name differs).
- Rouge-L: mean ROUGE-L F-measure (the `rouge-score` package) of the predicted final answer against the reference
  on reference *conclusion* steps (a step not predicted as a conclusion scores against the text "none").
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Plan = Literal["call", "conclusion", "give_up"]
METRICS: tuple[str, ...] = ("plan_acc", "act_em", "hallu", "arg_f1", "rouge_l")
METRIC_LABELS: dict[str, str] = {"plan_acc": "Plan ACC", "act_em": "Act. EM", "hallu": "Hallu.",
                                 "arg_f1": "Arg. F1", "rouge_l": "Rouge-L"}


def parse_arguments(raw: Any) -> dict[str, Any] | None:
    """Arguments as a JSON object: a dict as is, a JSON text parsed; None when not a JSON object."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if raw is None:
        return None
    text = str(raw).strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def argument_f1(pred_name: str | None, pred_args: Any, ref_name: str, ref_args: Any) -> float | None:
    """Arg. F1 of one call step (α-UMi Appendix C; released scorer).

    0 when the names differ, or when the predicted arguments are not a JSON object. `{}` vs `{}` is 1; `{}` reference
    vs non-empty prediction is 0. Otherwise each reference key present in the prediction scores 1 (same value)
    or 0.5 (other value); precision divides that sum by the number of predicted keys, recall by the number of
    reference keys; F1 = 2PR / (P + R), 0 when both are 0. None when the names match but the reference arguments
    are not a JSON object (the step is left out of the mean, as the released scorer does).
    """
    if pred_name != ref_name:
        return 0.0
    ref = parse_arguments(ref_args)
    if ref is None:
        return None
    pred = parse_arguments(pred_args)
    if pred is None:
        return 0.0
    if not ref:
        return 1.0 if not pred else 0.0
    score = 0.0
    for key, value in ref.items():
        if key in pred:
            score += 1.0 if pred[key] == value else 0.5
    recall = score / len(ref)
    precision = score / len(pred) if pred else 0.0
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def rouge_l(prediction: str, reference: str) -> float:
    """ROUGE-L F-measure of one answer (rouge-score, stemming off as in the default scorer)."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"])
    return float(scorer.score(reference, prediction)["rougeL"].fmeasure)


@dataclass(frozen=True)
class StepOutcome:
    """A reference step and the model's prediction for it (plain data; the input of the metrics)."""

    ref_plan: Plan
    pred_plan: Plan | None  # None: the model gave nothing usable (no decision)
    tools: tuple[str, ...]  # the function names the step offered
    ref_action: str | None = None
    ref_args: Any = None
    ref_answer: str | None = None
    pred_action: str | None = None
    pred_args: Any = None
    pred_answer: str | None = None


@dataclass
class StepScores:
    """The five metrics (fractions in [0, 1]; None when no step of the kind exists) and the counts behind them."""

    steps: int = 0
    call_steps: int = 0
    conclusion_steps: int = 0
    give_up_steps: int = 0
    predicted_calls: int = 0
    hallucinated: int = 0
    plan_acc: float | None = None
    act_em: float | None = None
    hallu: float | None = None
    arg_f1: float | None = None
    rouge_l: float | None = None

    def metric(self, name: str) -> float | None:
        value: float | None = getattr(self, name)
        return value


def score_steps(outcomes: Iterable[StepOutcome]) -> StepScores:
    """The five α-UMi metrics over a set of steps."""
    items: Sequence[StepOutcome] = list(outcomes)
    s = StepScores(steps=len(items))
    if not items:
        return s
    plan_hits = 0
    em: list[float] = []
    f1: list[float] = []
    rl: list[float] = []
    for o in items:
        plan_hits += int(o.pred_plan == o.ref_plan)
        if o.pred_plan == "call" and o.pred_action:
            s.predicted_calls += 1
            if o.pred_action not in o.tools:
                s.hallucinated += 1
        if o.ref_plan == "call":
            s.call_steps += 1
            name = o.pred_action if o.pred_plan == "call" else None
            em.append(1.0 if name is not None and name == o.ref_action else 0.0)
            value = argument_f1(name, o.pred_args if name is not None else None, o.ref_action or "", o.ref_args)
            if value is not None:
                f1.append(value)
        elif o.ref_plan == "conclusion":
            s.conclusion_steps += 1
            answer = o.pred_answer if o.pred_plan == "conclusion" and o.pred_answer else "none"
            rl.append(rouge_l(answer, o.ref_answer or ""))
        else:
            s.give_up_steps += 1
    s.plan_acc = plan_hits / len(items)
    s.hallu = s.hallucinated / len(items)
    s.act_em = sum(em) / len(em) if em else None
    s.arg_f1 = sum(f1) / len(f1) if f1 else None
    s.rouge_l = sum(rl) / len(rl) if rl else None
    return s
