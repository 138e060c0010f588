"""α-UMi's step-level metrics (α-UMi §4.2 and Appendix C, "static evaluation on ToolBench"), defined as the
authors' released scorers compute them: X-PLUG/Multi-LLM-Agent `GLPFT/inference_utils/toolbench/
evaluate-multi_agent.py` (multi-model mode) and `evaluate-backbone.py` (single-model mode). Both share the metric
functions; they differ only in how a reply is parsed (`parse_multi_agent_reply`, `parse_backbone_reply`).

Every reference step t has a plan (call / conclusion / give up); the model under test predicts step t from the
reference history before it (teacher forcing). Over the steps of a set:

- Plan ACC: share of steps whose predicted plan equals the reference plan (all steps; `evaluate_action_em` on the
  plan lists).
- Act. EM: share of reference *call* steps whose predicted action equals the reference action as strings; a step
  not predicted as a call has the action "none" (`action_pred.append('none')`), and so has a call without an
  `Action:` line.
- Hallu.: predicted actions that are not "none" and not a `Name` of the step's tools, divided by the number of
  steps (`hallu_pred / len(data)`); `hallucinated` / `predicted_calls` are reported too.
- Arg. F1: mean over reference call steps of `argument_f1` (`evaluate_action_input_f1`, its `f1` list).
- Rouge-L: mean over reference *conclusion* steps of the `rouge` package's ROUGE-L F (`Rouge().get_scores(...)
  ["rouge-l"]["f"]`, `evaluate_rougel`) of the predicted answer against the reference; a step not predicted as a
  conclusion scores the text "none". Tokens keep their case and punctuation; the text is cut into sentences at
  every "."; the package's summary-level LCS counts distinct tokens.

One more column, not the paper's: `rouge_l_norm`, the `rouge-score` package's ROUGE-L F (lowercased tokens with
punctuation removed, one LCS over the whole text — Lin's sentence-level definition as most papers report it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ...sanitize.files import loads_json

Plan = Literal["call", "conclusion", "give_up"]
METRICS: tuple[str, ...] = ("plan_acc", "act_em", "hallu", "arg_f1", "rouge_l", "rouge_l_norm")
PAPER_METRICS: tuple[str, ...] = ("plan_acc", "act_em", "hallu", "arg_f1", "rouge_l")
METRIC_LABELS: dict[str, str] = {"plan_acc": "Plan ACC", "act_em": "Act. EM", "hallu": "Hallu.",
                                 "arg_f1": "Arg. F1", "rouge_l": "Rouge-L", "rouge_l_norm": "Rouge-L norm."}
NO_ACTION = "none"  # the released scorers' action of a step without one
NO_INPUT = "{}"  # their Action Input of a call without an `Action Input:` line


# ------------------------------------------------------------------------------------------------ reply parsing
@dataclass(frozen=True)
class ParsedReply:
    """A reply read as the released scorers read it (`parse_output`)."""

    plan: Plan
    action: str | None = None  # "none" for a call without an `Action:` line
    action_input: str | None = None  # the text after the last `Action Input:`, stripped ("{}" when absent)
    answer: str | None = None


def authors_candidate(text: str) -> str:
    """A raw model output as the authors' inference scripts store it (`inference.py`, `infer_pipeline.py`): a
    leading ": " dropped, and an output that is empty or only "." or "," replaced by "none"."""
    if text.startswith(": "):
        text = text[2:]
    return "none" if text.strip() in ("", ".", ",") else text


def parse_call_text(text: str) -> tuple[str, str]:
    """(action, action input) of a call text (`parse_output`'s call branch): the input is everything after the last
    `Action Input:`, stripped ("{}" without one); the action is the text after the last `Action:`, cut at an
    `Action Input:` and stripped ("none" without one). Nothing else is cleaned: the scorer compares these strings."""
    if "Action Input:" in text:
        action_input = text[text.rindex("Action Input:") + len("Action Input:"):].strip()
    else:
        action_input = NO_INPUT
    if "Action:" in text:
        action = text[text.rindex("Action:") + len("Action:"):].strip()
        if "Action Input:" in action:
            action = action[: action.index("Action Input:")].strip()
    else:
        action = NO_ACTION
    return action, action_input


def parse_backbone_reply(text: str) -> ParsedReply:
    """A single-model reply as `evaluate-backbone.py` `parse_output` reads it: "conclusion: give up" anywhere → give
    up; else "conclusion: " anywhere → a conclusion whose answer is the text after the last "conclusion: "; else a
    call (`parse_call_text`) — a reply with neither a conclusion nor an `Action:` is a call of "none"."""
    if "conclusion: give up" in text:
        return ParsedReply("give_up")
    if "conclusion: " in text:
        return ParsedReply("conclusion", answer=text[text.rindex("conclusion: ") + len("conclusion: "):])
    action, action_input = parse_call_text(text)
    return ParsedReply("call", action, action_input)


def parse_multi_agent_reply(text: str) -> ParsedReply:
    """A multi-model prediction or reference string (`planner</s>caller: ...` / `planner</s>conclusion: ...`, as
    `infer_pipeline.py` writes them) as `evaluate-multi_agent.py` `parse_output` reads it: "Next: give up" → give
    up; "Next: conclusion" → a conclusion (the text after the last "conclusion: ", "</s>" removed; the whole text
    without one); else a call, parsed from the part between the first and the second "</s>"."""
    if "Next: give up" in text:
        return ParsedReply("give_up")
    if "Next: conclusion" in text:
        answer = text[text.rindex("conclusion: ") + len("conclusion: "):] if "conclusion:" in text else text
        return ParsedReply("conclusion", answer=answer.replace("</s>", ""))
    parts = text.split("</s>")
    action, action_input = parse_call_text(parts[1] if len(parts) > 1 else "")
    return ParsedReply("call", action, action_input)


# ------------------------------------------------------------------------------------------------ Arg. F1
_MISSING = object()


def _action(name: str | None) -> str:
    """A step's action as the scorers hold it: None (no call) is "none"; any string as it is — an `Action:` line with
    nothing after it gives "", which is not "none" (a hallucinated name in `evaluate-multi_agent.py`)."""
    return NO_ACTION if name is None else name


def _loads(raw: Any) -> Any:
    """A JSON value from an arguments field: a mapping as it is, None as the scorers' default "{}", text through
    `json.loads` as it stands (so "" and Python-literal dicts fail); `_MISSING` when it does not parse."""
    if isinstance(raw, Mapping):
        return dict(raw)
    text = NO_INPUT if raw is None else str(raw)
    try:  # bounded (`sanitize.files.loads_json`): arguments nested past `MAX_NESTING` levels do not parse either
        return loads_json(text, source="arguments", allow_nonfinite=True)
    except ValueError:
        return _MISSING


def argument_f1(pred_name: str | None, pred_args: Any, ref_name: str | None, ref_args: Any) -> float | None:
    """Arg. F1 of one call step, as `evaluate_action_input_f1` computes its `f1` entry.

    Names ("none" for None; an empty name "" stays "", as the scorer's parser gives it) differ → 0. Reference arguments that are not JSON → None (the step is left out of the
    mean). Predicted arguments that are not JSON — an empty `Action Input:` included (`json.loads("")` fails) → 0.
    Reference `{}`: 1 when the prediction is `{}` too, else 0. Otherwise both must be JSON objects (else 0); each
    reference key present in the prediction scores 1 (same value, Python `==`) or 0.5 (other value); precision
    divides that sum by the number of predicted keys, recall by the number of reference keys; F1 = 2PR / (P + R),
    and 0 when P + R is 0 (the scorer's ZeroDivisionError lands in its `except`: 0)."""
    if _action(pred_name) != _action(ref_name):
        return 0.0
    ref = _loads(ref_args)
    if ref is _MISSING:
        return None
    pred = _loads(pred_args)
    if pred is _MISSING:
        return 0.0
    if isinstance(ref, dict) and not ref:
        return 1.0 if isinstance(pred, dict) and not pred else 0.0
    if not isinstance(ref, dict) or not isinstance(pred, dict):
        return 0.0
    score = 0.0
    for key, value in ref.items():
        if key in pred:
            score += 1.0 if pred[key] == value else 0.5
    recall = score / len(ref)
    precision = score / len(pred) if pred else 0.0
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


# ------------------------------------------------------------------------------------------------ Rouge-L
def _sentences(text: str) -> list[str]:
    # the `rouge` package's split: at ".", empty pieces dropped, whitespace runs made one space
    return [" ".join(piece.split()) for piece in text.split(".") if len(piece) > 0]


def _lcs_tokens(x: Sequence[str], y: Sequence[str]) -> list[str]:
    """One longest common subsequence of x and y, backtracked from the end with the `rouge` package's tie rule
    (equal tokens first; up when the cell above is strictly larger, else left), without recursion."""
    n, m = len(x), len(y)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            table[i][j] = table[i - 1][j - 1] + 1 if x[i - 1] == y[j - 1] else max(table[i - 1][j], table[i][j - 1])
    out: list[str] = []
    i, j = n, m
    while i > 0 and j > 0:
        if x[i - 1] == y[j - 1]:
            out.append(x[i - 1])
            i, j = i - 1, j - 1
        elif table[i - 1][j] > table[i][j - 1]:
            i -= 1
        else:
            j -= 1
    return out[::-1]


def summary_rouge_l(prediction: str, reference: str) -> float:
    """The `rouge` package's ROUGE-L F (`rouge_l_summary_level`, distinct tokens) computed without recursion: our
    code for the answers whose sentences are too long for the package's recursive LCS (tests check that both give
    the same number). Raises ValueError on a text without a sentence, as the package does."""
    hyp, ref = _sentences(prediction), _sentences(reference)
    if not hyp or not ref:
        raise ValueError("Collections must contain at least 1 sentence.")
    ref_words = [w for s in ref for w in s.split(" ")]
    hyp_words = [w for s in hyp for w in s.split(" ")]
    union: set[str] = set()
    for ref_s in ref:
        for hyp_s in hyp:
            union.update(_lcs_tokens(ref_s.split(" "), hyp_s.split(" ")))
    recall = len(union) / len(set(ref_words))
    precision = len(union) / len(set(hyp_words))
    return 2.0 * ((precision * recall) / (precision + recall + 1e-8))


def rouge_l(prediction: str, reference: str) -> float:
    """ROUGE-L F of one answer as the authors compute it (`evaluate_rougel`: the `rouge` package, `rouge-l`, `f`).

    A prediction or reference without any sentence (empty, or only "." characters) scores 0: the package raises
    ValueError there, which stops the authors' script."""
    from rouge import Rouge

    try:
        score = Rouge(metrics=["rouge-l"]).get_scores(hyps=[prediction], refs=[reference], avg=True)
        return float(score["rouge-l"]["f"])
    except ValueError:
        return 0.0
    except RecursionError:  # the package's LCS recurses once per token: long sentences overflow the stack
        return summary_rouge_l(prediction, reference)


def rouge_l_norm(prediction: str, reference: str) -> float:
    """ROUGE-L F-measure of the `rouge-score` package (not the paper's column: lowercased, punctuation removed)."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"])
    return float(scorer.score(reference, prediction)["rougeL"].fmeasure)


# ------------------------------------------------------------------------------------------------ scoring
@dataclass(frozen=True)
class StepOutcome:
    """A reference step and the model's prediction for it (plain data; the input of the metrics).

    Actions are the parsed strings ("none" or None: no action; "" is an empty `Action:` line, a name no tool has);
    arguments are the raw `Action Input` text (or a
    mapping from a native function call); None arguments mean the scorers' default "{}"."""

    ref_plan: Plan
    pred_plan: Plan | None  # None: the model gave nothing usable (its call failed)
    tools: tuple[str, ...]  # the function names the step offered
    ref_action: str | None = None
    ref_args: Any = None
    ref_answer: str | None = None
    pred_action: str | None = None
    pred_args: Any = None
    pred_answer: str | None = None


@dataclass
class StepScores:
    """The metrics (fractions in [0, 1]; None when no step of the kind exists) and the counts behind them."""

    steps: int = 0
    call_steps: int = 0
    conclusion_steps: int = 0
    give_up_steps: int = 0
    predicted_calls: int = 0
    hallucinated: int = 0
    arg_f1_steps: int = 0  # call steps in the Arg. F1 mean (a reference whose arguments are not JSON is left out)
    rouge_unscorable: int = 0  # conclusion steps scored 0 because a text had no sentence (the package raises)
    plan_acc: float | None = None
    act_em: float | None = None
    hallu: float | None = None
    arg_f1: float | None = None
    rouge_l: float | None = None
    rouge_l_norm: float | None = None

    def metric(self, name: str) -> float | None:
        value: float | None = getattr(self, name)
        return value


def _has_sentence(text: str) -> bool:
    return bool(_sentences(text))


def score_steps(outcomes: Iterable[StepOutcome]) -> StepScores:
    """The α-UMi metrics over a set of steps (the released scorers' definitions; see the module docstring)."""
    items: Sequence[StepOutcome] = list(outcomes)
    s = StepScores(steps=len(items))
    if not items:
        return s
    plan_hits = 0
    em: list[float] = []
    f1: list[float] = []
    rl: list[float] = []
    rn: list[float] = []
    for o in items:
        plan_hits += int(o.pred_plan == o.ref_plan)
        name = _action(o.pred_action) if o.pred_plan == "call" else NO_ACTION
        if name != NO_ACTION:
            s.predicted_calls += 1
            if name not in o.tools:
                s.hallucinated += 1
        if o.ref_plan == "call":
            s.call_steps += 1
            ref_name = _action(o.ref_action)
            em.append(1.0 if name == ref_name else 0.0)
            value = argument_f1(name, o.pred_args if o.pred_plan == "call" else None, ref_name, o.ref_args)
            if value is not None:
                f1.append(value)
        elif o.ref_plan == "conclusion":
            s.conclusion_steps += 1
            answer = o.pred_answer if o.pred_plan == "conclusion" and o.pred_answer is not None else "none"
            reference = o.ref_answer or ""
            s.rouge_unscorable += int(not (_has_sentence(answer) and _has_sentence(reference)))
            rl.append(rouge_l(answer, reference))
            rn.append(rouge_l_norm(answer or "none", reference))
        else:
            s.give_up_steps += 1
    s.arg_f1_steps = len(f1)
    s.plan_acc = plan_hits / len(items)
    s.hallu = s.hallucinated / len(items)
    s.act_em = sum(em) / len(em) if em else None
    s.arg_f1 = sum(f1) / len(f1) if f1 else None
    s.rouge_l = sum(rl) / len(rl) if rl else None
    s.rouge_l_norm = sum(rn) / len(rn) if rn else None
    return s
