"""`anytool run` and `anytool demo`: a run, JSON output, resume/continue on a thread, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.cli.app import main


@pytest.fixture(autouse=True)
def _offline_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ANYTOOL_MODEL", raising=False)
    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")
    monkeypatch.setenv("ANYTOOL_INDEX_DIR", str(tmp_path / "index"))


def test_run_offline_prints_progress_answer_and_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "Convert 26.2 miles to kilometers", "--offline"]) == 0
    out = capsys.readouterr().out
    assert "solver attempt 1 (dfsdt): give_answer" in out
    assert "answer: Convert Units: 26.2 mi = 42.1648128 km." in out and "status: solved" in out
    assert "total tokens:" in out and "API calls: 1" in out


def test_run_json_with_sqlite_thread(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    args = ["run", "Is 2025-07-14 a public holiday in France?", "--offline", "--json", "--db", str(db),
            "--thread", "t1", "--solver", "cot"]
    assert main(args) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["status"] == "solved" and result["thread_id"] == "t1" and "National Day" in result["answer"]
    assert result["solver_attempts"][0]["mode"] == "cot" and result["usage"]["api"]["calls"] >= 1
    assert all("messages" not in a for a in result["agents"].values())
    assert "judge: Solved" in captured.err  # progress goes to stderr with --json
    # the thread's run is finished: the same command starts a fresh run on it
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["status"] == "solved" and len(again["solver_attempts"]) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "   ", "--offline"], "the query is empty"),
        (["run", "hello"], "no chat model configured"),
        (["run", "hello", "--offline", "--catalog", "/no/such/dir"], "does not exist"),
        (["demo", " "], "the query is empty"),
    ],
)
def test_run_errors_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("anytool: error:") and message in err and "\n" not in err


def test_demo_runs_offline(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "How far is Paris from Berlin?"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("model: OfflinePolicyModel") and "NOT an LLM" in out.splitlines()[0]
    assert "879.7" in out and "status: solved" in out


def test_run_settings_profile_flags_and_set() -> None:
    from langgraph_anytool.cli.app import build_parser, run_settings

    args = build_parser().parse_args(["run", "q", "--profile", "paper", "--max-reflections", "0",
                                      "--set", "max_api_pool=16", "--set", "reflection_scope=tool"])
    cfg = run_settings(args)
    assert (cfg.max_reflections, cfg.max_api_pool, cfg.reflection_scope) == (0, 16, "tool")
    assert not cfg.seed_with_search and cfg.small_category_shortcut and not cfg.small_category_finished  # paper()
    assert run_settings(build_parser().parse_args(["run", "q"])).max_reflections == 50


def test_run_resumes_a_thread_whose_checkpoint_has_no_next_step(capsys: pytest.CaptureFixture[str],
                                                                tmp_path: Path) -> None:
    """A kill between a node and its checkpoint can leave an unfinished run (status running) with no step due:
    the same command must finish that run, not report the stale state or start a second query."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    from langgraph_anytool import Catalog, create_anytool_graph
    from langgraph_anytool.offline import OfflinePolicyModel

    db = tmp_path / "runs.sqlite"
    query = "Is 2025-07-14 a public holiday in France?"
    args = ["run", query, "--offline", "--json", "--db", str(db), "--thread", "t1"]
    assert main(args) == 0
    capsys.readouterr()
    catalog = Catalog.builtin()
    with SqliteSaver.from_conn_string(str(db)) as saver:  # make the thread's last run look cut off after `judge`
        graph = create_anytool_graph(catalog, OfflinePolicyModel(catalog=catalog), checkpointer=saver)
        cfg: Any = {"configurable": {"thread_id": "t1"}}
        graph.update_state(cfg, {"status": "running", "answer": ""}, as_node="judge")
        stale = graph.get_state(cfg)
        assert not stale.next and stale.values["status"] == "running"
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "resuming the interrupted run" in captured.err
    assert json.loads(captured.out)["status"] == "solved"


def test_run_with_one_agent_step_at_a_time_finishes(capsys: pytest.CaptureFixture[str]) -> None:
    # the CLI streams with subgraphs: a subgraph's tasks share the thread pool with the node that runs it, so a pool
    # sized to max_concurrency=1 waited for ever; in a thread, so that a hang fails the test instead of holding it
    import threading

    codes: list[int] = []
    worker = threading.Thread(target=lambda: codes.append(main(
        ["run", "Convert 26.2 miles to kilometers", "--offline", "--no-cache", "--set", "max_concurrency=1"])),
        daemon=True)
    worker.start()
    worker.join(timeout=180)
    assert codes == [0], "anytool run --set max_concurrency=1 did not finish in 180 s"
    assert "42.1648128 km" in capsys.readouterr().out
