"""Issue 28, the evaluation's other input files: OPPO task CSVs are streamed and `eval tasks --limit N` stops reading
after N items (point 12); task CSVs, α-UMi step files and cache files (the OPPO evaluator's verdicts, pass rate's
evaluator cache, a response-cache export) are bounded and checked field by field, each fault one line naming the
file (and the line) and the field, or a damaged cache entry recomputed with a warning naming it (point 10)."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.cli.app import main
from langgraph_anytool.eval.oppo.data import TaskDataError, load_task
from langgraph_anytool.sanitize.files import DataFileError
from tests.cli_support import cli_error

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_CELL = "[" * 10_000 + "]" * 10_000  # fits a CSV field (csv.field_size_limit: 131,072 characters)
TASK1_HEADER = ",did,tool_name,api_name,instruction,type,tool_use_label\n"
TASK1_ROW = '{n},{n},Universal Unit Converter,Convert Units,"Convert {n} miles to km.",1,1\n'




def _csv_field(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


# ------------------------------------------------------------------------------------------- point 12
def test_eval_tasks_limit_stops_reading_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Three good rows, then a file that could not be read whole: a 40 MB line without a newline (over the line
    cap) and, after it, bytes that are no UTF-8. `--limit 3` never gets there; without it, one line names the
    line that is too long."""
    path = tmp_path / "task1.csv"
    with path.open("w", encoding="utf-8") as fh:
        fh.write(TASK1_HEADER + "".join(TASK1_ROW.format(n=n) for n in range(3)))
        fh.write("9,9,a,b," + "x" * (40 << 20) + "\n")
    with path.open("ab") as fh:
        fh.write(b"\xff\xfe not utf-8\n")
    start = time.perf_counter()
    assert main(["eval", "tasks", "--task", "1", "--data", str(tmp_path), "--offline", "--limit", "3",
                 "--json"]) == 0
    seconds = time.perf_counter() - start
    report = json.loads(capsys.readouterr().out)
    assert [item["id"] for item in report[0]["items"]] == ["0", "1", "2"]
    assert len(load_task(1, tmp_path, limit=2)) == 2
    line = cli_error(capsys, "eval", "tasks", "--task", "1", "--data", str(tmp_path), "--offline")
    assert "task1.csv" in line and "line 5" in line and "over 16,777,216 bytes" in line
    assert seconds < 60  # a loose bound on a shared machine; the real figure is in benchmarks/hardening.py


# ------------------------------------------------------------------------------------------- point 10: task CSVs
TASK6_HEADER = ",did,tool_name,api_name,instruction,conv\n"


@pytest.mark.parametrize("conv, words", [
    (DEEP_CELL, ("line 2", "column 'conv'", "nesting too deep")),
    ('{"role": "user"}', ("line 2", "column 'conv'", "JSON list of OpenAI-format messages")),
    ('[{"role": ["user"]}, {"role": "assistant"}]', ("column 'conv'", "'role' string")),
    ('[{"role": "user", "content": "hi"}]', ("column 'conv'", "needs the user's message and the function call")),
    ('[{"role": "user", "content": 1e999}, {"role": "assistant"}]', ("column 'conv'", "overflows a float")),
])
def test_a_bad_task6_conversation_is_one_line_before_any_model_call(tmp_path: Path, conv: str,
                                                                    words: tuple[str, ...],
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "task6.csv").write_text(TASK6_HEADER + f"0,1,Date Calculator,Day of Week,hi,{_csv_field(conv)}\n")
    line = cli_error(capsys, "eval", "tasks", "--task", "6", "--data", str(tmp_path), "--offline")
    assert "task6.csv" in line and all(w in line for w in words)


def test_bad_task_columns_are_found_when_the_file_is_loaded(tmp_path: Path) -> None:
    (tmp_path / "task1.csv").write_text(TASK1_HEADER + TASK1_ROW.format(n=0)
                                        + '1,1,a,b,"two\nlines",1,maybe\n')
    with pytest.raises(TaskDataError, match=r"task1\.csv: line 3, column 'tool_use_label': must be 0 or 1"):
        load_task(1, tmp_path)
    (tmp_path / "task4.csv").write_text(",did,tool_name,api_name,instruction,type,ref_call\n"
                                        f"0,1,a,b,hi,1,{_csv_field(DEEP_CELL)}\n")
    with pytest.raises(TaskDataError, match=r"line 2, column 'ref_call': not usable JSON \(nesting too deep"):
        load_task(4, tmp_path)
    fifo = tmp_path / "task8.csv"
    os.mkfifo(fifo)
    with pytest.raises(TaskDataError, match="not a regular file"):
        load_task(8, tmp_path)


# ------------------------------------------------------------------------------------------- α-UMi step files
def _umi(item: dict[str, Any]) -> list[dict[str, Any]]:
    base: dict[str, Any] = {"tools": [{"Name": "f", "function": "d", "input": {"x": "string, a value"}}],
                            "instruction": "q", "conversations": [
                                {"from": "user", "value": "q"},
                                {"from": "assistant", "value": "Next: caller."},
                                {"from": "caller", "value": "Action: f\nAction Input: {}"}]}
    base.update(item)
    return [base]


@pytest.mark.parametrize("content, words", [
    (DEEP, ("nesting too deep",)),
    (json.dumps(_umi({"tools": [{"Name": "f", "input": ["x"]}]})), ("field '[0].tools[0].input'",)),
    (json.dumps(_umi({"tools": [{"Name": 5}]})), ("field '[0].tools[0].Name'",)),
    (json.dumps({"answer_generation": {"train_messages": [[{"role": "assistant", "function_call": "f"}]],
                                       "function": []}}),
     ("field 'answer_generation.train_messages[0][0].function_call'",)),
    (json.dumps({"answer_generation": {"train_messages": [["m"]], "function": []}}),
     ("field 'answer_generation.train_messages[0][0]'",)),
    (json.dumps({"answer_generation": {"train_messages": "all", "function": []}}),
     ("field 'answer_generation.train_messages'",)),
])
def test_a_bad_step_file_is_one_line(tmp_path: Path, content: str, words: tuple[str, ...],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "steps.json"
    path.write_text(content)
    line = cli_error(capsys, "eval", "steps", str(path), "--offline")
    assert "steps.json" in line and all(w in line for w in words)


def test_deep_call_arguments_in_a_toolbench_answer_are_no_arguments(tmp_path: Path) -> None:
    from langgraph_anytool.eval.umi.data import load_toolbench_answer

    path = tmp_path / "1_dfs.json"
    path.write_text(json.dumps({"answer_generation": {"query": "q", "function": [{"name": "f"}], "train_messages": [[
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "function_call": {"name": "f", "arguments": DEEP}},
        {"role": "function", "name": "f", "content": "ok"},
        {"role": "assistant", "content": "", "function_call": {"name": "f", "arguments": "{}"}}]]}}))
    cases, _ = load_toolbench_answer(path)
    assert cases[0].history[-2].tool_calls[0]["args"] == {}  # type: ignore[attr-defined]


def test_eval_steps_limit_reads_no_further_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.json").write_text(json.dumps(_umi({})))
    (tmp_path / "b.json").write_text(DEEP)  # never read with --limit 1
    assert main(["eval", "steps", str(tmp_path), "--offline", "--limit", "1", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["steps"]) == 1
    line = cli_error(capsys, "eval", "steps", str(tmp_path), "--offline")
    assert "b.json" in line and "nesting too deep" in line


# ------------------------------------------------------------------------------------------- cache files
@pytest.mark.parametrize("entry", [DEEP, '{"passed": "no", "reason": "x"}', '{"reason": "x"}', "[1]", "FIFO",
                                   '{"passed": true, "reason": ' + '"' + "x" * (2 << 20) + '"}'])
def test_a_damaged_oppo_verdict_cache_entry_is_recomputed(tmp_path: Path, entry: str,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    from langgraph_anytool.eval.oppo.judge import TaskEvaluator
    from langgraph_anytool.models.testing import ScriptedChatModel, ai

    cache = tmp_path / "cache"
    evaluator = TaskEvaluator(ScriptedChatModel(replies=[ai("yes, it is right")]), cache_dir=cache, identity="j")
    probe = TaskEvaluator(ScriptedChatModel(replies=[ai("yes")]), cache_dir=tmp_path / "probe", identity="j")
    probe.judge(5, "prompt")
    name = next((tmp_path / "probe").iterdir()).name  # the entry's file name (a hash of identity, task, prompt)
    cache.mkdir()
    if entry == "FIFO":
        os.mkfifo(cache / name)
    else:
        (cache / name).write_text(entry)
    with caplog.at_level(logging.WARNING):
        verdict = evaluator.judge(5, "prompt")
    assert verdict.passed and not verdict.cached and evaluator.calls == 1
    assert name in caplog.text and "recomputed" in caplog.text
    assert json.loads((cache / name).read_text())["passed"] is True  # rewritten whole
    again = TaskEvaluator(ScriptedChatModel(replies=[]), cache_dir=cache, identity="j").judge(5, "prompt")
    assert again.cached and again.passed


@pytest.mark.parametrize("value", [DEEP, '{"label": "Maybe", "reason": "", "stage": "answer"}',
                                   '{"label": "Solved"}', "not json", '{"label": "Solved", "reason": "r", '
                                   '"stage": "answer", "usage": {"model_calls": "x"}}'])
def test_a_damaged_passrate_cache_row_is_recomputed(tmp_path: Path, value: str,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    from langgraph_anytool.eval.anytool.passrate import EvaluatorCache
    from langgraph_anytool.models.llm import RoleUsage
    from langgraph_anytool.nodes.judge.tooleval import JudgeResult

    path = tmp_path / "evaluator.sqlite"
    cache = EvaluatorCache(path)
    calls = []

    def call() -> JudgeResult:
        calls.append(1)
        return JudgeResult("Solved", "fine", "answer", RoleUsage(model_calls=1))

    cache.get_or_call("k", call)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE verdicts SET value = ? WHERE key = 'k'", (value,))
    with caplog.at_level(logging.WARNING):
        result = cache.get_or_call("k", call)
    assert result.label == "Solved" and len(calls) == 2 and "recomputed" in caplog.text
    assert cache.get_or_call("k", call).usage == {"model_calls": 1} and len(calls) == 2
    cache.close()


@pytest.mark.parametrize("line, words", [
    ('{"api_id": "a/b/c", "arguments": ' + DEEP + ', "status": "ok"}', ("line 2", "nesting too deep")),
    ('{"api_id": "a/b/c", "arguments": [], "status": "ok"}', ("line 2", "field 'arguments'")),
    ('{"api_id": "a/b/c", "arguments": {}, "status": "fine"}', ("line 2", "field 'status'")),
    ('{"api_id": "a/b/c", "arguments": {}, "status": "ok", "created": -1}', ("line 2", "field 'created'")),
    ('{"api_id": "a/b/c", "arguments": {}, "status": "ok", "simulated": "yes"}', ("line 2", "field 'simulated'")),
    ('{"api_id": "a/b/c", "arguments": {"x": NaN}, "status": "ok"}', ("line 2", "not storable")),
    ("[1, 2]", ("line 2", "not a cache record")),
])
def test_a_bad_cache_export_is_one_line_naming_the_line_and_field(tmp_path: Path, line: str,
                                                                  words: tuple[str, ...]) -> None:
    from langgraph_anytool.tools.cache import ResponseCache

    path = tmp_path / "export.jsonl"
    path.write_text('{"api_id": "a/b/c", "arguments": {}, "status": "ok", "content": 1}\n' + line + "\n")
    with ResponseCache.memory() as cache, pytest.raises(DataFileError) as info:
        cache.import_jsonl(path)
    text = str(info.value)
    assert "\n" not in text and str(path) in text and all(w in text for w in words)


def test_an_oppo_doc_changed_after_loading_is_read_bounded(tmp_path: Path) -> None:
    """The paper protocol re-reads a tool's own document (`authors_doc`); one replaced by a deep file since the
    catalog loaded falls back to the catalog's schema instead of a RecursionError."""
    import shutil

    from langgraph_anytool import Catalog
    from langgraph_anytool.eval.oppo.agent import authors_doc

    root = tmp_path / "toolset"
    shutil.copytree(Path(__file__).parents[1] / "data" / "oppo_toolset", root)
    catalog = Catalog.load(root)
    api = catalog.find_api("fx_rates", "convert")
    assert authors_doc(catalog, api.id) is not None
    (root / "rapidapi" / "docs" / "fx_rates.json").write_text('{"APIs": ' + DEEP + ', "pad": 1}')
    assert authors_doc(catalog, api.id) is None
