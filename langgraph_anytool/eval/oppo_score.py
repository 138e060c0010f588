"""Scorers of the OPPO tasks (seed 001, §3.4 "Assessment & Metrics", App. C.2). Pure functions of predictions.

- Task 1: precision, recall and F1 of the "tool needed" decision (positive = needs a tool), plus macro-F1 over
  both classes and accuracy (§3.4: "overall precision, recall and macro-F1").
- Task 2: accuracy — the right API chosen among the candidates.
- Task 3: share of responses that ask the user to clarify the missing information.
- Task 4: share of correct function calls, judged on the raw call (before validation converts anything):
  rule checks first (right function, a JSON object, required parameters present, no unknown parameter, values of
  the schema's type); then the evaluator (or, without one, equality with the row's `ref_call`).
- Tasks 5, 6, 8: pass rate (evaluator verdicts; without one, the rule check against the row's reference facts /
  the `comb` APIs named in the outline).
- Task 7: progress along the reference sequence: 1 for an answer judged successful, otherwise k / n where k is the
  longest prefix of the n reference steps that the called APIs contain in order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..catalog.models import Api


def task1_scores(labels: Sequence[bool], predictions: Sequence[bool]) -> dict[str, float]:
    """Precision / recall / F1 of the positive class (tool needed), macro-F1, accuracy."""
    if len(labels) != len(predictions) or not labels:
        raise ValueError("task 1 needs as many predictions as labels, and at least one")

    def prf(pos: bool) -> tuple[float, float, float]:
        tp = sum(1 for y, p in zip(labels, predictions, strict=True) if y == pos and p == pos)
        fp = sum(1 for y, p in zip(labels, predictions, strict=True) if y != pos and p == pos)
        fn = sum(1 for y, p in zip(labels, predictions, strict=True) if y == pos and p != pos)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return precision, recall, f1

    p, r, f = prf(True)
    _, _, f_neg = prf(False)
    acc = sum(1 for y, q in zip(labels, predictions, strict=True) if y == q) / len(labels)
    return {"precision": p, "recall": r, "f1": f, "macro_f1": (f + f_neg) / 2, "accuracy": acc}


def rate(flags: Sequence[bool] | Sequence[float]) -> float:
    """Mean of 0/1 flags (or scores); an empty set is an error."""
    if not flags:
        raise ValueError("no item to score")
    return sum(float(x) for x in flags) / len(flags)


_TYPE_CHECKS: dict[str, Any] = {
    "string": lambda v: isinstance(v, str), "date": lambda v: isinstance(v, str), "time": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool), "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def check_raw_call(api: Api, function_ok: bool, args: Any) -> tuple[bool, str]:
    """Rule checks of a raw call's arguments against the API's parameters (no conversion): (ok, reason)."""
    if not function_ok:
        return False, "wrong or unknown function"
    if not isinstance(args, Mapping):
        return False, "the arguments are not a JSON object"
    names = {p.name for p in api.params}
    unknown = [k for k in args if k not in names]
    if unknown:
        return False, f"unknown parameter(s): {', '.join(unknown)}"
    missing = [p.name for p in api.required_params if p.name not in args]
    if missing:
        return False, f"missing required parameter(s): {', '.join(missing)}"
    for p in api.params:
        if p.name not in args:
            continue
        value = args[p.name]
        if p.enum:
            if value not in p.enum:
                return False, f"{p.name}={value!r} is not one of the allowed values"
            continue
        check = _TYPE_CHECKS.get(p.type)
        if check is not None and not check(value):
            return False, f"{p.name}={value!r} is not of type {p.type}"
    return True, "ok"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool) and not isinstance(b, bool):
        return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(b)))
    if isinstance(a, str) and isinstance(b, str):
        return " ".join(a.lower().split()) == " ".join(b.lower().split())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def matches_reference(args: Mapping[str, Any], reference: Mapping[str, Any]) -> tuple[bool, str]:
    """Every reference argument given with the same value (numbers numerically, text case-insensitively)."""
    for key, value in reference.items():
        if key not in args:
            return False, f"{key} missing (reference {value!r})"
        if not _same(args[key], value):
            return False, f"{key}={args[key]!r}, reference {value!r}"
    return True, "matches the reference call"


def has_facts(text: str, facts: Sequence[str]) -> tuple[bool, str]:
    """Whether every reference fact appears in the text (case-insensitive); no fact → not checkable."""
    if not facts:
        return False, "no reference facts in the row (the task needs --evaluator)"
    low = text.lower()
    missing = [f for f in facts if f.lower() not in low]
    return (not missing), ("all reference facts present" if not missing else f"missing: {', '.join(missing)}")


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", name.lower()).strip()


def progress(reference: Sequence[str], called: Sequence[str]) -> float:
    """k / n: the longest prefix of the reference steps found, in order, among the called API names."""
    if not reference:
        raise ValueError("the reference sequence is empty")
    ref = [_norm(r) for r in reference]
    k = 0
    for name in (_norm(c) for c in called):
        if k < len(ref) and name == ref[k]:
            k += 1
    return k / len(ref)


def outline_coverage(outline: str, apis: Sequence[str]) -> float:
    """Share of the given API names that the outline mentions (case- and punctuation-insensitive)."""
    if not apis:
        raise ValueError("no API to cover")
    text = f" {_norm(outline)} "
    return sum(1 for a in apis if f" {_norm(a)} " in text) / len(apis)
