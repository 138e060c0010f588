"""Scorers of the OPPO tasks: the authors' definitions (repository OPPO-Mente-Lab/agent_eval,
`eval_scripts/eval_func.py`), written as pure functions of predictions, plus our own stricter figures under their
own names. Each function names the authors' function it follows.

| task | paper figure (default) | authors' function | ours, beside it |
|---|---|---|---|
| 1 | precision, recall, F1 macro-averaged over both classes | `evaluate_task1` (sklearn `average="macro"`) | accuracy; P/R/F1 of the "tool needed" class |
| 2 | accuracy = right first call / items | `evaluate_task2` (`score`) | precision = right / items with a call; tool-use rate |
| 3 | no call, and the evaluator says the reply asks for more information | `evaluate_task3`, `_check_clarification` | (`--protocol ours`: `ask_user` or a question mark) |
| 4 | precision = calls passing the rule check / calls made | `evaluate_task4`, `_check_params_with_rule`; `run_eval.ipynb` | strict rate: raw-call schema checks and evaluator (or `ref_call`) / items |
| 5 | evaluator verdict | `evaluate_task5`, `_check_direct_response` | (without evaluator: `answer` facts) |
| 6 | URL rule, then evaluator verdict | `evaluate_task6`, `_check_response_w_tool_via_rule` | (without evaluator: URL rule and `answer` facts) |
| 7 | 1 if the evaluator says solved, else step progress over the steps the evaluator lists; runs that raised left out | `evaluate_task7`, `_check_act_steps`, `_extract_tools`; `run_eval.ipynb` | the mean with those runs as 0; `task7_steps="calls"`: progress over the calls made |
| 8 | evaluator verdict | `evaluate_task8`, `_check_plan` | outline coverage of the `comb` APIs |
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...catalog.models import Api


def rate(flags: Sequence[bool] | Sequence[float]) -> float:
    """Mean of 0/1 flags (or scores); an empty set is an error."""
    if not flags:
        raise ValueError("no item to score")
    return sum(float(x) for x in flags) / len(flags)


# ------------------------------------------------------------------------------------------------ task 1
def _prf(labels: Sequence[int], preds: Sequence[int], cls: int) -> tuple[float, float, float]:
    tp = sum(1 for y, p in zip(labels, preds, strict=True) if y == cls and p == cls)
    fp = sum(1 for y, p in zip(labels, preds, strict=True) if y != cls and p == cls)
    fn = sum(1 for y, p in zip(labels, preds, strict=True) if y == cls and p != cls)
    precision = tp / (tp + fp) if tp + fp else 0.0  # sklearn's zero_division: 0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def task1_scores(labels: Sequence[bool | int], predictions: Sequence[bool | int]) -> dict[str, float]:
    """`eval_func.py` `evaluate_task1`: `precision_recall_fscore_support(labels, preds, average="macro")` — the
    unweighted mean over the classes present in labels or predictions of each class's precision, recall and F1
    (F1 is the mean of the per-class F1s, not the F1 of the means; an undefined ratio counts 0). Beside it, ours:
    accuracy and the "tool needed" class's own precision / recall / F1 (`tool_*`)."""
    if len(labels) != len(predictions) or not labels:
        raise ValueError("task 1 needs as many predictions as labels, and at least one")
    y = [int(v) for v in labels]
    p = [int(v) for v in predictions]
    classes = sorted(set(y) | set(p))
    per = [_prf(y, p, c) for c in classes]
    tool = _prf(y, p, 1)
    return {"precision": sum(x[0] for x in per) / len(per), "recall": sum(x[1] for x in per) / len(per),
            "f1": sum(x[2] for x in per) / len(per),
            "accuracy": sum(1 for a, b in zip(y, p, strict=True) if a == b) / len(y),
            "tool_precision": tool[0], "tool_recall": tool[1], "tool_f1": tool[2]}


# ------------------------------------------------------------------------------------------------ task 2
def task2_item(called: bool, parsed: bool, first_name: str | None, right_name: str,
               similar_names: Sequence[str]) -> tuple[int, str]:
    """`eval_func.py` `evaluate_task2` for one item: no call → 0; a call whose arguments are not valid JSON (any
    call of the reply; `_extract_func_calls` runs `json.loads`) → 0; otherwise 1 when the first call's function name
    is the right API's."""
    if not called:
        return 0, "did not call a function"
    if not parsed or first_name is None:
        return 0, "function call is not parsed successfully"
    if first_name == right_name:
        return 1, ""
    return 0, "has chosen an incorrect function" if first_name in similar_names else "has hallucinated a function name"


def task2_scores(results: Sequence[tuple[int, bool]]) -> dict[str, float]:
    """`evaluate_task2`'s three figures from (score, called) per item: `accuracy` (its `score`: right / items),
    `precision` (right / items with a call; 0 without any) and `tool_use_rate` (items with a call / items)."""
    if not results:
        raise ValueError("no item to score")
    right = sum(s for s, _ in results)
    called = sum(1 for _, c in results if c)
    return {"accuracy": right / len(results), "precision": right / called if called else 0.0,
            "tool_use_rate": called / len(results)}


# ------------------------------------------------------------------------------------------------ task 4
def task4_rule(called: bool, parsed: bool, tool_result: str | None) -> tuple[int, str]:
    """`eval_func.py` `evaluate_task4` + `_check_params_with_rule` for one item: no call → 0; arguments not JSON →
    0 (but see `task4_scores`: such a run never reaches the authors' scorer); the API's result containing
    "file not found" (any case) → 0; else 1 ("error" in the result only raises a warning). The evaluator's verdict
    on the call is recorded by the authors but never counted."""
    if not called:
        return 0, "did not call a function"
    if not parsed:
        return 0, "function call is not parsed successfully"
    text = (tool_result or "").lower()
    if "file not found" in text:
        return 0, "File not found"
    if "error" in text:
        return 1, "WARNING: to double check"
    return 1, ""


TASK4_STATUSES = ("call", "none", "excluded")


def task4_scores(results: Sequence[tuple[int, str]], strict: Sequence[bool]) -> dict[str, float]:
    """From (rule score, status) per item — status "call" (a call whose arguments parsed), "none" (no call) or
    "excluded" (the run raised: the first call's arguments are not JSON, `agent_interface.py` `perform_task4`
    `json.loads`, or the model call failed; `run_eval.ipynb` scores such rows 0 but leaves them out of
    `evaluate_task4`) — the paper's `precision` = passing calls / calls made, and `evaluate_task4`'s `score` =
    passing calls / items that were scored (both 0 when empty; the authors divide by zero there). Ours,
    `strict_correct_rate` = items whose raw call passes our schema checks and the evaluator (or the row's
    `ref_call`) / all items."""
    if not results or len(strict) != len(results):
        raise ValueError("task 4 needs one strict flag per item, and at least one item")
    bad = [s for _, s in results if s not in TASK4_STATUSES]
    if bad:
        raise ValueError(f"unknown task 4 status {bad[0]!r}")
    ok = sum(v for v, s in results if s == "call")
    called = sum(1 for _, s in results if s == "call")
    scored = sum(1 for _, s in results if s != "excluded")
    return {"precision": ok / called if called else 0.0, "score": ok / scored if scored else 0.0,
            "strict_correct_rate": rate([float(x) for x in strict])}


_TYPE_CHECKS: dict[str, Any] = {
    "string": lambda v: isinstance(v, str), "date": lambda v: isinstance(v, str), "time": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool), "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def check_raw_call(api: Api, function_ok: bool, args: Any) -> tuple[bool, str]:
    """Ours (task 4's strict figure): rule checks of a raw call's arguments against the API's parameters (no
    conversion): right function, a JSON object, no unknown or missing parameter, values of the schema's type."""
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
    """Ours: every reference argument given with the same value (numbers numerically, text case-insensitively)."""
    for key, value in reference.items():
        if key not in args:
            return False, f"{key} missing (reference {value!r})"
        if not _same(args[key], value):
            return False, f"{key}={args[key]!r}, reference {value!r}"
    return True, "matches the reference call"


# ------------------------------------------------------------------------------------------------ task 6
_URL = re.compile(r"(?:https?://|www\.)[^\s'\"<>]+", re.IGNORECASE)


def find_urls(text: str) -> list[str]:
    """URLs in a text as the authors find them (`urlextract`'s `URLExtract().find_urls`); a plain pattern for
    scheme:// and www. addresses when the package is not installed."""
    try:
        from urlextract import URLExtract
    except ImportError:  # pragma: no cover - urlextract is a dependency
        return _URL.findall(text)
    return [str(u) for u in URLExtract().find_urls(text)]


def task6_rule(roles: Sequence[str], tool_result: str, reply: str) -> tuple[int, str]:
    """`eval_func.py` `_check_response_w_tool_via_rule`: after an optional system message the roles must be user,
    assistant, tool, assistant (else 0); a URL longer than 30 characters in the reply that is not among the URLs of
    the tool result fails the item. `tool_result` is the next-to-last message (the authors' `msgs[-2]`)."""
    start = 1 if roles and roles[0] == "system" else 0
    if list(roles[start:start + 4]) != ["user", "assistant", "tool", "assistant"]:
        return 0, "the roles of messages are not expected"
    known = find_urls(tool_result)
    for url in find_urls(reply):
        if url not in known and len(url) > 30:
            return 0, f"Found URL not in the function result: {url}"
    return 1, ""


def has_facts(text: str, facts: Sequence[str]) -> tuple[bool, str]:
    """Ours (tasks 5 and 6 without an evaluator): every reference fact appears in the text (case-insensitive)."""
    if not facts:
        return False, "no reference facts in the row (the paper's protocol needs --evaluator)"
    low = text.lower()
    missing = [f for f in facts if f.lower() not in low]
    return (not missing), ("all reference facts present" if not missing else f"missing: {', '.join(missing)}")


# ------------------------------------------------------------------------------------------------ task 7
def task7_progress(steps: Sequence[tuple[str, bool]], alternatives: Sequence[str]) -> float:
    """`eval_func.py` `_check_act_steps`: the calls made, as (API name, succeeded), in order. Every call but the
    last is kept when it succeeded; the last is kept even if it failed. (The authors also drop earlier calls named
    `ref_steps[0][-1]`, which is the last character of the first sequence string, so in practice nothing.) Each
    reference sequence `a -> b -> c` is compared position by position with the kept calls: step i matches when it
    equals the i-th call or contains it as a substring (so `languages/currencies` matches either); the score is
    matches / sequence length, the best over the alternative sequences. No call → 0."""
    if not alternatives:
        raise ValueError("the reference sequence is empty")
    if not steps:
        return 0.0
    main_tool = alternatives[0][-1]  # as in the authors' code: a character, not a tool name
    used = [name for name, ok in steps[:-1] if name != main_tool and ok]
    used.append(steps[-1][0])
    best = 0.0
    for alternative in alternatives:
        ref = [t.strip() for t in alternative.split("->")]
        overlap = 0
        for i, step in enumerate(ref):
            if i >= len(used):
                break
            if step == used[i] or used[i] in step:
                overlap += 1
        best = max(best, overlap / len(ref))
    return best


# `eval_func.py _extract_tools`: the evaluator's list of the tools used and their results, read with the authors'
# patterns (a list starting with "-" or numbered, a name in backticks or not)
_LISTED = {("-", True): re.compile(r"-\s*`+(.+)`+:\s*(.+)"), ("-", False): re.compile(r"-\s*(.+):\s*(.+)"),
           ("1.", True): re.compile(r"\d+\.\s*`+(.+)`+:\s*(.+)"), ("1.", False): re.compile(r"\d+\.\s*(.+):\s*(.+)")}
_PARENS = re.compile(r"\(.+\)")


def extracted_steps(reply: str) -> list[tuple[str, bool]]:
    """The (tool, succeeded) steps in the evaluator's reply to task 7's extraction prompt, as `eval_func.py
    _extract_tools` reads it: the pattern by the reply's first character and whether it holds a backtick, each
    tool name without its parenthesised part, and a step succeeded when its result says "success"."""
    pattern = _LISTED[("-" if reply.startswith("-") else "1.", "`" in reply)]
    return [(_PARENS.sub("", tool).strip(), "success" in result.lower()) for tool, result in pattern.findall(reply)]


def called_functions(conversation: Sequence[Mapping[str, Any]]) -> list[tuple[str, bool]]:
    """`_extract_tools`' fallback when the reply lists no step: every assistant message's `function_call` name,
    each counted a success (the conversation after its first message when that is the system's). A `tool_calls`
    message (the `tools=` form, ours) gives its calls' names."""
    msgs = list(conversation[1:] if conversation and conversation[0].get("role") == "system" else conversation)
    out: list[tuple[str, bool]] = []
    for msg in msgs:
        if msg.get("role") != "assistant":
            continue
        call = msg.get("function_call")
        if isinstance(call, str):
            try:
                call = json.loads(call)
            except ValueError:
                call = None
        if isinstance(call, Mapping) and call.get("name"):
            out.append((str(call["name"]), True))
        for tc in msg.get("tool_calls") or []:
            fn = tc.get("function") if isinstance(tc, Mapping) else None
            if isinstance(fn, Mapping) and fn.get("name"):
                out.append((str(fn["name"]), True))
    return out


# ------------------------------------------------------------------------------------------------ task 8
def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", name.lower()).strip()


def outline_coverage(outline: str, apis: Sequence[str]) -> float:
    """Ours (task 8, beside the evaluator): share of the given API names the outline mentions (case- and
    punctuation-insensitive)."""
    if not apis:
        raise ValueError("no API to cover")
    text = f" {_norm(outline)} "
    return sum(1 for a in apis if f" {_norm(a)} " in text) / len(apis)
