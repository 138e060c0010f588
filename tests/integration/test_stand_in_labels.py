"""The offline stand-in is labelled however it is chosen (issue 29 §6): `--offline`, `--model offline`,
`ANYTOOL_MODEL=offline`, a per-role option or an evaluator named "offline" — in `run`, `demo` and the `eval`
commands, in the first and the last line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langgraph_anytool.cli.app import main
from tests.eval.umi.test_step_eval import UMI_ITEM

FIRST = "model: OfflinePolicyModel (rule-based heuristic stand-in, NOT an LLM)"
LAST = "note: answers and token counts come from OfflinePolicyModel (rule-based heuristic stand-in, NOT an LLM)"


@pytest.mark.parametrize("how", ["--offline", "--model offline", "ANYTOOL_MODEL=offline"])
def test_run_labels_the_stand_in_first_and_last(how: str, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("ANYTOOL_MODEL", raising=False)
    if how.startswith("ANYTOOL_MODEL="):
        monkeypatch.setenv("ANYTOOL_MODEL", "offline")
        flags = []
    else:
        flags = how.split()
    assert main(["run", "Convert 26.2 miles to kilometers", *flags, "--quiet"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith(FIRST) and lines[-1].startswith(LAST), (lines[0], lines[-1])


@pytest.mark.parametrize("how", ["--model offline", "ANYTOOL_MODEL=offline"])
def test_demo_labels_the_stand_in_chosen_by_name(how: str, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("ANYTOOL_MODEL", raising=False)
    flags = how.split() if how.startswith("--") else []
    if not flags:
        monkeypatch.setenv("ANYTOOL_MODEL", "offline")
    main(["demo", "Convert 26.2 miles to kilometers", *flags])
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("model: OfflinePolicyModel (rule-based heuristic stand-in, NOT an LLM); chosen by")
    assert lines[-2].startswith(LAST) and lines[-1].startswith("next: ")  # the last line: what to type next


def test_eval_run_labels_the_stand_in_chosen_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "G1.json"
    queries.write_text(json.dumps([{"query": "Convert 26.2 miles to kilometers", "query_id": 1,
                                    "relevant APIs": [["Universal Unit Converter", "Convert Units"]]}]))
    out = tmp_path / "results.jsonl"
    assert main(["eval", "run", "--queries", str(queries), "--model", "offline", "--out", str(out),
                 "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith(FIRST)
    assert captured.out.strip().splitlines()[-1].startswith(LAST)
    record = json.loads(out.read_text().splitlines()[0])
    assert "NOT an LLM" in record["model"]


def test_eval_passrate_takes_an_evaluator_named_offline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = tmp_path / "r.jsonl"
    res.write_text(json.dumps({"group": "G1", "query_id": "1", "query": "q", "answer": "", "status": "gave_up",
                               "model": "x", "relevant_apis": [], "trajectory": []}) + "\n")
    assert main(["eval", "passrate", str(res), "--evaluator", "offline", "--cache", str(tmp_path / "c.sqlite")]) == 0
    assert "evaluator: offline-policy (rule-based stand-in, NOT an LLM)" in capsys.readouterr().out


def test_eval_steps_labels_a_role_played_by_the_stand_in(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    umi_file = tmp_path / "in_domain.json"
    umi_file.write_text(json.dumps([UMI_ITEM]), encoding="utf-8")
    assert main(["eval", "steps", str(umi_file), "--mode", "multi", "--planner", "offline", "--caller", "offline",
                 "--summarizer", "offline", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["model"] == ", ".join(
        f"{role}=OfflinePolicyModel (rule-based heuristic stand-in, NOT an LLM)"
        for role in ("planner", "caller", "summarizer"))
    err = captured.err.strip().splitlines()
    assert err[0].startswith(FIRST) and "plays planner, caller, summarizer" in err[0] and err[-1].startswith(LAST)


def test_eval_tasks_labels_the_stand_in_and_refuses_it_as_evaluator(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "tasks", "--task", "1", "--model", "offline", "--limit", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith(FIRST) and captured.err.strip().splitlines()[-1].startswith(LAST)
    assert "NOT an LLM" in captured.out
    assert main(["eval", "tasks", "--task", "1", "--offline", "--evaluator", "offline"]) == 2
    assert "the offline stand-in is not an LLM and cannot judge" in capsys.readouterr().err


def test_eval_run_labels_a_role_the_stand_in_plays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A real model for the run and the stand-in as its judge (`--set models=...`): the roles are named."""
    import langgraph_anytool.cli.eval_commands as commands
    from langgraph_anytool.models.testing import ScriptedChatModel, ai, call

    give_up = ScriptedChatModel(responder=lambda messages, tools: ai("", call(
        "Finish", return_type="give_up", final_answer="", reason="scripted", failed_functions=[])))
    monkeypatch.setattr(commands, "_model", lambda args, catalog: (give_up, "scripted-model"))
    queries = tmp_path / "G1.json"
    queries.write_text(json.dumps([{"query": "Convert 26.2 miles to kilometers", "query_id": 1,
                                    "api_list": [{"tool_name": "Universal Unit Converter", "api_name": "Convert Units"}],
                                    "relevant APIs": [["Universal Unit Converter", "Convert Units"]]}]))
    out = tmp_path / "results.jsonl"
    assert main(["eval", "run", "--queries", str(queries), "--model", "scripted", "--mode", "reference",
                 "--set", 'models={"judge": "offline"}', "--out", str(out), "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith(FIRST) and "plays judge" in captured.err.splitlines()[0]
    assert captured.out.strip().splitlines()[-1].startswith(LAST)
    record = json.loads(out.read_text().splitlines()[0])
    assert record["model"] == "scripted-model (judge: offline-policy (rule-based stand-in, NOT an LLM))"
