"""Issue 28, results files and conversion: `eval convert --to tooleval` writes only inside `--out` whatever the groups
say (point 2), and every results, answer and query file read by `eval stats | passrate | convert | run` is bounded
and validated field by field, each fault one line naming the file, the line and the field (point 10)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.catalog.errors import CatalogError
from langgraph_anytool.cli.app import main
from langgraph_anytool.eval.anytool import results as results_module
from langgraph_anytool.eval.anytool.results import ResultsWriter, read_results
from tests.cli_support import cli_error

DEEP = "[" * 100_000 + "]" * 100_000


def record(qid: str = "1", group: str = "G1", **extra: Any) -> dict[str, Any]:
    return {"query_id": qid, "group": group, "query": "q", "status": "solved", "answer": "an answer",
            "usage": {"model_calls": 2, "input_tokens": 10, "output_tokens": 5}, "wall_time": 1.5,
            "pool": ["Cat/tool/api"], "pool_recall": 1.0, "trajectory": [], **extra}


def write_jsonl(path: Path, *lines: str | dict[str, Any]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path




# ------------------------------------------------------------------------------------------- point 2
def test_convert_never_writes_outside_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    out = work / "out"
    absolute = tmp_path / "abs_target"
    groups = ["../../escaped", "../x", str(absolute), "/" + str(absolute), ".hidden", "a/b", "a_b", "", "results",
              "..", "~", "G1"]
    src = write_jsonl(work / "r.jsonl", *(record(str(i), g) for i, g in enumerate(groups)))
    before = {p for p in tmp_path.rglob("*")}
    assert main(["eval", "convert", str(src), "--to", "tooleval", "--out", str(out)]) == 0
    created = {p for p in tmp_path.rglob("*")} - before
    written = sorted(p for p in created if p.is_file())
    assert written and all(p.parent == out for p in written)  # every file inside --out, none anywhere else
    assert not absolute.with_suffix(".json").exists()
    assert all(not p.name.startswith(".") for p in written)
    assert len(written) == len(groups)  # distinct groups never share (overwrite) a file
    back = {qid for p in written for qid in json.loads(p.read_text())}
    assert back == {str(i) for i in range(len(groups))}
    assert "G1.json" in {p.name for p in written}  # a plain group keeps its name
    capsys.readouterr()


def test_convert_refuses_a_symlink_planted_in_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (out / "G1.json").symlink_to(victim)
    src = write_jsonl(tmp_path / "r.jsonl", record("1", "G1"))
    line = cli_error(capsys, "eval", "convert", str(src), "--to", "tooleval", "--out", str(out))
    assert "outside" in line and "G1.json" in line
    assert victim.read_text() == "keep me"


# ------------------------------------------------------------------------------------------- point 10: results
@pytest.mark.parametrize("command", [
    ["eval", "stats"], ["eval", "passrate", "--offline", "--no-cache"],
    ["eval", "convert", "--to", "tooleval", "--out", "OUT"],
])
def test_a_deep_results_line_is_one_line_naming_file_and_line(tmp_path: Path, command: list[str],
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    src = write_jsonl(tmp_path / "r.jsonl", record("1"), '{"query_id": "2", "trajectory": ' + DEEP + "}")
    args = [a.replace("OUT", str(tmp_path / "out")) for a in command]
    line = cli_error(capsys, *args[:2], str(src), *args[2:])
    assert str(src) in line and "line 2" in line and "nesting too deep" in line


def test_eval_run_resume_refuses_a_deep_results_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "G1.json"
    queries.write_text(json.dumps([{"query_id": 1, "query": "Convert 5 kilograms to pounds."}]))
    out = write_jsonl(tmp_path / "r.jsonl", '{"query_id": "9", "group": "G1", "pool": ' + DEEP + "}")
    line = cli_error(capsys, "eval", "run", "--queries", str(queries), "--offline", "--out", str(out),
                     "--no-progress", "--quiet")
    assert str(out) in line and "line 1" in line and "nesting too deep" in line


@pytest.mark.parametrize("fields, field", [
    ({"usage": "abc"}, "usage"),
    ({"usage": {"model_calls": "abc"}}, "usage.model_calls"),
    ({"usage": {"input_tokens": -5}}, "usage.input_tokens"),
    ({"usage": {"roles": {"solver": {"model_calls": [1]}}}}, "usage.roles.solver.model_calls"),
    ({"usage": {"agents": {"tool": "many"}}}, "usage.agents.tool"),
    ({"wall_time": "slow"}, "wall_time"),
    ({"pool_recall": 3}, "pool_recall"),
    ({"pool": "Cat/tool/api"}, "pool"),
    ({"trajectory": "x"}, "trajectory"),
    ({"trajectory": [{"tree": [5]}]}, "trajectory[0].tree[0]"),
    ({"trajectory": [{"tree": [{"calls": [{"function": ["f"]}]}]}]}, "trajectory[0].tree[0].calls[0].function"),
    ({"query_id": {"id": 1}}, "query_id"),
    ({"attempt": 0}, "attempt"),
])
@pytest.mark.parametrize("command", [["eval", "stats"], ["eval", "passrate", "--offline", "--no-cache"]])
def test_a_wrongly_typed_record_is_one_line_naming_the_field(tmp_path: Path, fields: dict[str, Any], field: str,
                                                            command: list[str],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    src = write_jsonl(tmp_path / "r.jsonl", record("1"), record("2", **fields))
    line = cli_error(capsys, *command[:2], str(src), *command[2:])
    assert str(src) in line and "line 2" in line and f"field {field!r}" in line


def test_non_finite_numbers_in_results_are_refused(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "r.jsonl", '{"query_id": "1", "wall_time": NaN}')
    with pytest.raises(CatalogError, match=r"line 1, field 'wall_time': .*finite number"):
        read_results(src)
    src = write_jsonl(tmp_path / "r.jsonl", '{"query_id": "1", "usage": {"model_calls": 1e999}}')
    with pytest.raises(CatalogError, match=r"line 1, field 'usage.model_calls': .*finite number"):
        read_results(src)
    # NaN inside a model's call arguments (what Python's json writes) is data, not a count: the record loads
    src = write_jsonl(tmp_path / "r.jsonl", '{"query_id": "1", "trajectory": [{"tree": [{"calls": [{"function": '
                                            '"f", "arguments": {"x": NaN}}]}]}]}')
    assert read_results(src)[0]["query_id"] == "1"


def test_an_over_long_line_is_refused_before_it_is_read_whole(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(results_module, "MAX_RECORD_BYTES", 10_000)
    src = write_jsonl(tmp_path / "r.jsonl", record("1"), json.dumps(record("2", answer="x" * 20_000)))
    with pytest.raises(CatalogError, match=r"line 2.*over 10,000 bytes"):
        read_results(src)


def test_a_crash_cut_line_is_still_skipped_and_stats_still_run(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "r.jsonl"
    src.write_text(json.dumps(record("1")) + "\n" + json.dumps(record("2"))[:40])
    assert [r["query_id"] for r in read_results(src)] == ["1"]
    converted = {"query_id": "3", "group": "G1", "usage": {"model_calls": None, "total_tokens": None}}
    write_jsonl(src, record("1"), converted)  # what `convert --to ours` writes for a run without counts
    assert main(["eval", "stats", str(src)]) == 0
    capsys.readouterr()
    with ResultsWriter(src) as writer:  # a resumed batch reads the same records
        assert writer.is_finished("G1", "1") and writer.is_finished("G1", "3")


def test_a_fifo_as_results_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "r.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(CatalogError, match="not a regular file"):
        read_results(fifo)
    from langgraph_anytool.tools.dbfile import StorageError

    with pytest.raises(StorageError, match="not a regular file"):  # eval run --out FIFO: refused, not blocked
        ResultsWriter(fifo)


# ------------------------------------------------------------------------------------------- convert --to ours
def _tooleval(entry: dict[str, Any]) -> dict[str, Any]:
    base = {"query": "q", "available_tools": [{"name": "f"}], "answer": {
        "method": "m", "total_steps": 2, "final_answer": '{"return_type": "give_answer", "final_answer": "x"}',
        "answer_details": [{"role": "system", "message": "", "next": []}]}}
    for key, value in entry.items():
        if key.startswith("answer."):
            base["answer"][key[7:]] = value
        else:
            base[key] = value
    return {"42": base}


@pytest.mark.parametrize("entry, words", [
    ({"available_tools": 5}, ("field '42.available_tools'",)),
    ({"answer.total_steps": "many"}, ("field '42.answer.total_steps'",)),
    ({"answer.answer_details": 5}, ("field '42.answer.answer_details'",)),
    ({"query": ["q"]}, ("field '42.query'",)),
])
def test_a_wrongly_typed_converted_answer_file_is_one_line(tmp_path: Path, entry: dict[str, Any],
                                                          words: tuple[str, ...],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "G1.json"
    src.write_text(json.dumps(_tooleval(entry)))
    line = cli_error(capsys, "eval", "convert", str(src), "--to", "ours", "--out", str(tmp_path / "o.jsonl"))
    assert str(src) in line and all(w in line for w in words)


def test_deep_answer_files_are_one_line_and_a_deep_final_answer_is_text(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    deep = tmp_path / "G1.json"
    deep.write_text('{"42": ' + DEEP + "}")
    line = cli_error(capsys, "eval", "convert", str(deep), "--to", "ours", "--out", str(tmp_path / "o.jsonl"))
    assert "nesting too deep" in line and str(deep) in line
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "7_dfs.json").write_text('{"answer_generation": {"query": "q", "train_messages": ' + DEEP + "}}")
    line = cli_error(capsys, "eval", "convert", str(answers), "--to", "ours", "--out", str(tmp_path / "o.jsonl"))
    assert "nesting too deep" in line and "7_dfs.json" in line
    (answers / "7_dfs.json").write_text(json.dumps({"answer_generation": {"query": "q", "query_count": "x"}}))
    line = cli_error(capsys, "eval", "convert", str(answers), "--to", "ours", "--out", str(tmp_path / "o.jsonl"))
    assert "field 'answer_generation.query_count'" in line
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps(_tooleval({"answer.final_answer": DEEP})))
    assert main(["eval", "convert", str(ok), "--to", "ours", "--out", str(tmp_path / "o.jsonl")]) == 0
    assert read_results(tmp_path / "o.jsonl")[0]["answer"] == DEEP  # kept as the text it is
    capsys.readouterr()


# ------------------------------------------------------------------------------------------- query files
@pytest.mark.parametrize("content, words", [
    (DEEP, ("nesting too deep",)),
    (json.dumps([{"query": "q", "query_id": 1, "api_list": 5}]), ("field '[0].api_list'",)),
    (json.dumps([{"query": "q", "query_id": 1, "gt_api_list": "[" * 50_000 + "]" * 50_000}]),
     ("field '[0].gt_api_list'",)),
    (json.dumps([{"query": "q", "query_id": 1, "gt_api_list": "-" * 100_000 + "1"}]), ("field '[0].gt_api_list'",)),
    ('[{"query": "q", "query_id": ' + "9" * 5000 + "}]", ("digits",)),
])
def test_a_bad_query_file_is_one_line(tmp_path: Path, content: str, words: tuple[str, ...],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "G1.json"
    queries.write_text(content)
    line = cli_error(capsys, "eval", "run", "--queries", str(queries), "--offline", "--out",
                     str(tmp_path / "r.jsonl"), "--no-progress", "--quiet")
    assert str(queries) in line and all(w in line for w in words)


def test_eval_run_limit_reads_the_query_file_no_further_than_it_needs(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Two queries, then an item that could not be read (100,000 levels deep): `--limit 2` never reaches it."""
    queries = tmp_path / "G1.json"
    good = [{"query_id": i, "query": "Convert 5 kilograms to pounds."} for i in (1, 2)]
    queries.write_text(json.dumps(good)[:-1] + ", " + DEEP + "]")
    out = tmp_path / "r.jsonl"
    assert main(["eval", "run", "--queries", str(queries), "--offline", "--out", str(out), "--limit", "2",
                 "--no-progress", "--quiet"]) == 0
    assert sorted(r["query_id"] for r in read_results(out)) == ["1", "2"]
    line = cli_error(capsys, "eval", "run", "--queries", str(queries), "--offline", "--out", str(out),
                     "--no-progress", "--quiet")
    assert str(queries) in line and "field '[2]'" in line and "nesting too deep" in line
