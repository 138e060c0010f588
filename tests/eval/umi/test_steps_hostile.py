"""`eval steps` on arguments nested far deeper than any call's (issue 34 §5): in every input format (ToolBench
answer files, α-UMi test files), in the step's reference and in the history, as JSON text or as JSON objects, a
step is one line naming the file and the step (exit 2), never a `RecursionError`; a prediction nested so deep
scores as arguments that are not JSON."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.cli.app import main
from langgraph_anytool.eval.umi.metrics import argument_f1
from langgraph_anytool.protocol import parse_action
from tests.eval.umi.test_step_eval import UMI_ITEM

DEPTHS = (300, 5_000, 100_000)


def deep_text(depth: int) -> str:
    return '{"q": ' + "[" * depth + "]" * depth + "}"


def deep_value(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return {"q": value}


def toolbench(args: Any, where: str) -> dict[str, Any]:
    """A ToolBench answer file whose reference step (`where="reference"`) or history call carries `args`."""
    fn = {"name": "get_x", "description": "d", "parameters": {"type": "object", "properties": {}}}
    call = {"role": "assistant", "content": "t", "function_call": {"name": "get_x", "arguments": args}}
    plain = {"role": "assistant", "content": "t", "function_call": {"name": "get_x", "arguments": '{"q": 1}'}}
    chain = [{"role": "system", "content": "s"}, {"role": "user", "content": "q Begin!"}]
    chain += [call, {"role": "function", "name": "get_x", "content": "{}"}, plain] if where == "history" else [call]
    return {"answer_generation": {"valid_data": True, "query": "q", "function": [fn, {"name": "Finish"}],
                                  "train_messages": [chain]}}


def umi(args: str, where: str) -> list[dict[str, Any]]:
    """An α-UMi test file whose first caller turn (history of the second step, reference of the first) carries
    `args` (α-UMi's caller turns are text: `Action Input:` then the JSON)."""
    item = copy.deepcopy(UMI_ITEM)
    turn = 2 if where == "reference" else 5
    item["conversations"][turn]["value"] = f"Action: search_for_video_db\nAction Input: {args}"
    return [item]


CASES = [(fmt, where, form) for fmt in ("toolbench", "umi") for where in ("reference", "history")
         for form in ("text", "object") if not (fmt == "umi" and form == "object")]


@pytest.mark.parametrize(("fmt", "where", "form"), CASES)
@pytest.mark.parametrize("depth", DEPTHS)
def test_deep_arguments_in_every_step_format_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           fmt: str, where: str, form: str, depth: int) -> None:
    args: Any = deep_text(depth) if form == "text" else deep_value(min(depth, 5_000))
    data = toolbench(args, where) if fmt == "toolbench" else umi(args, where)
    folder = tmp_path / "G1"
    folder.mkdir()
    path = folder / "1.json"
    text = json.dumps(data) if form == "text" else _dumps_deep(data)
    path.write_text(text)
    code = main(["eval", "steps", str(tmp_path), "--format", fmt, "--offline"])
    out = capsys.readouterr()
    assert "Traceback" not in out.err and "RecursionError" not in out.err
    if code != 0:  # refused: one line naming the file (a deep reference, or a file nesting past the cap)
        assert code == 2 and out.err.count("\n") == 1 and "1.json" in out.err and "nesting too deep" in out.err
    else:  # the deep arguments sit in the history, read as arguments that are not JSON: the steps are scored
        assert where == "history" and "Plan ACC" in out.out


def _dumps_deep(data: Any) -> str:
    """`json.dumps` without its recursion (a value nested 5,000 levels deep is written here by hand)."""
    if isinstance(data, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_dumps_deep(v)}" for k, v in data.items()) + "}"
    if isinstance(data, list):
        depth, node = 0, data
        while isinstance(node, list) and len(node) == 1 and isinstance(node[0], list):
            depth, node = depth + 1, node[0]
        if node == [] and depth:
            return "[" * (depth + 1) + "]" * (depth + 1)
        return "[" + ", ".join(_dumps_deep(v) for v in data) + "]"
    return json.dumps(data)


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_prediction_scores_as_arguments_that_are_not_json(depth: int) -> None:
    assert argument_f1("f", deep_text(depth), "f", '{"q": 1}') == 0.0
    assert argument_f1("f", '{"q": 1}', "f", deep_text(depth)) is None  # a reference the scorer cannot read
    parsed = parse_action(f"Action: f\nAction Input: {deep_text(depth)}")
    assert parsed is not None and parsed.args is None  # a model's reply: not a JSON object, never a crash
