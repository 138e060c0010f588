"""`anytool eval run`: settings, results file, resume, timeout, kill -9, reference mode."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.config import ConfigError
from langgraph_anytool.eval.datasets import load_queries
from langgraph_anytool.eval.results import ResultsWriter, read_results
from langgraph_anytool.eval.runner import BatchOptions, parse_settings, run_batch
from langgraph_anytool.testing import ScriptedChatModel

ROOT = Path(__file__).resolve().parents[1]

QUERIES = [
    ("Convert 26.2 miles to kilometers.", [["Universal Unit Converter", "Convert Units"]]),
    ("What day of the week was 2024-02-29?", [["Date Calculator", "Day of Week"]]),
    ("What is the geographic midpoint between Paris and Berlin?", [["Geo Distance Calculator", "Geographic Midpoint"]]),
    ("Convert 100 degrees Fahrenheit to Celsius.", [["Universal Unit Converter", "Convert Units"]]),
    ("What day of the week is 2030-01-01?", [["Date Calculator", "Day of Week"]]),
    ("Convert 5 kilograms to pounds.", [["Universal Unit Converter", "Convert Units"]]),
]


def write_group(path: Path, n: int = len(QUERIES)) -> Path:
    items = [{"query": q, "query_id": 100 + i, "api_list": [{"tool_name": t, "api_name": a} for t, a in rel],
              "relevant APIs": rel} for i, (q, rel) in enumerate(QUERIES[:n])]
    path.write_text(json.dumps(items))
    return path


@pytest.fixture(scope="module")
def builtin() -> Catalog:
    return Catalog.builtin()


def test_parse_settings_validates_against_the_config() -> None:
    assert parse_settings(["max_api_pool=16", "solver=cot", "seed_with_search=false", "max-reflections=0"]) == {
        "max_api_pool": 16, "solver": "cot", "seed_with_search": False, "max_reflections": 0}
    with pytest.raises(ConfigError, match=r"no field 'max_pool'.*max_api_pool"):
        parse_settings(["max_pool=3"])
    with pytest.raises(ConfigError, match="expected key=value"):
        parse_settings(["max_api_pool"])
    with pytest.raises(ConfigError, match="max_api_pool"):
        parse_settings(["max_api_pool=-2"])
    with pytest.raises(ConfigError, match="solver"):
        parse_settings(["solver=magic"])


def test_results_writer_drops_a_half_written_line(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text('{"group": "g", "query_id": "1", "status": "solved"}\n{"group": "g", "query_id": "2", "sta')
    assert [r["query_id"] for r in read_results(out)] == ["1"]
    with ResultsWriter(out) as w:
        assert w.is_finished("g", "1") and not w.is_finished("g", "2")
        w.append({"group": "g", "query_id": "2", "status": "unsolved"})
    lines = out.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["query_id"] == "2"


def test_batch_writes_one_record_per_query_and_resumes(tmp_path: Path, builtin: Catalog) -> None:
    from langgraph_anytool.offline import OfflinePolicyModel

    queries = load_queries(write_group(tmp_path / "mini.json", 3))
    model = OfflinePolicyModel(catalog=builtin)
    out = tmp_path / "r.jsonl"
    with ResultsWriter(out) as w:
        tally = asyncio.run(run_batch(queries[:2], builtin, model, w, BatchOptions(concurrency=2)))
    assert (tally.done, tally.skipped) == (2, 0)
    with ResultsWriter(out) as w:
        tally = asyncio.run(run_batch(queries, builtin, model, w, BatchOptions(concurrency=2)))
    assert (tally.done, tally.skipped) == (1, 2)
    recs = read_results(out)
    assert sorted(r["query_id"] for r in recs) == ["100", "101", "102"]
    assert len(out.read_text().splitlines()) == 3
    r = next(r for r in recs if r["query_id"] == "100")
    assert r["group"] == "mini" and r["relevant"] == ["Units_Conversion/universal_unit_converter/convert_units"]
    assert r["status"] in ("solved", "unsolved", "gave_up") and r["error"] is None
    assert r["usage"]["model_calls"] > 0 and r["usage"]["input_tokens"] > 0 and r["trajectory"]
    assert r["pool_recall"] == (1.0 if r["relevant"][0] in r["pool"] else 0.0)
    assert r["config"]["max_api_pool"] == 64 and r["mode"] == "whole"


def test_a_slow_query_times_out_and_the_batch_goes_on(tmp_path: Path, builtin: Catalog) -> None:
    queries = load_queries(write_group(tmp_path / "slow.json", 2))
    model = ScriptedChatModel(responder=lambda msgs, tools: (_ for _ in ()).throw(AssertionError("unused")),
                              latency=3.0)
    out = tmp_path / "r.jsonl"
    t0 = time.monotonic()
    with ResultsWriter(out) as w:
        tally = asyncio.run(run_batch(queries, builtin, model, w, BatchOptions(concurrency=2, timeout=0.5)))
    assert time.monotonic() - t0 < 10
    recs = read_results(out)
    assert [r["status"] for r in recs] == ["timeout", "timeout"] and tally.count("timeout") == 2
    assert "timed out after 0.5 s" in recs[0]["error"]


def test_reference_mode_solves_with_each_querys_api_list(tmp_path: Path, builtin: Catalog) -> None:
    """ToolBench's setting: no retrieval, the solver gets the query's api_list (mapped to catalog API ids)."""
    from langgraph_anytool.offline import OfflinePolicyModel

    queries = load_queries(write_group(tmp_path / "ref.json", 2))
    out = tmp_path / "r.jsonl"
    with ResultsWriter(out) as w:
        asyncio.run(run_batch(queries, builtin, OfflinePolicyModel(catalog=builtin), w,
                              BatchOptions(mode="reference", concurrency=2)))
    recs = read_results(out)
    assert [r["mode"] for r in recs] == ["reference", "reference"]
    for r in recs:
        assert r["pool"] == r["relevant"] and r["pool_recall"] == 1.0  # exactly the query's own APIs
        assert r["error"] is None and r["usage"]["model_calls"] > 0
        assert r["config"]["retriever"] == "reference"

def test_cli_set_error_is_one_line(tmp_path: Path) -> None:
    from langgraph_anytool.cli import main

    q = write_group(tmp_path / "g.json", 1)
    assert main(["eval", "run", "--queries", str(q), "--offline", "--set", "nope=1", "--out",
                 str(tmp_path / "r.jsonl")]) == 2


@pytest.mark.slow
def test_kill_9_mid_batch_then_resume_redoes_nothing_finished(tmp_path: Path) -> None:
    q = write_group(tmp_path / "k.json")
    out = tmp_path / "r.jsonl"
    cmd = [sys.executable, "-m", "langgraph_anytool.cli", "eval", "run", "--queries", str(q), "--offline",
           "--concurrency", "1", "--out", str(out), "--no-progress"]
    env = {**os.environ, "ANYTOOL_EMBEDDINGS": "none"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not out.exists() or len(out.read_text().splitlines()) < 2):
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = out.read_text().splitlines()
    assert 2 <= len(before) < len(QUERIES), "kill -9 came too late to test a resume"
    with out.open("a") as f:  # as if the kill had cut a line in half
        f.write('{"group": "k", "query_id": "105", "status": "sol')
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    after = out.read_text().splitlines()
    assert after[: len(before)] == before  # finished records untouched
    ids = [json.loads(line)["query_id"] for line in after]
    assert sorted(ids) == [str(100 + i) for i in range(len(QUERIES))]  # each query exactly once
    assert f"{len(QUERIES) - len(before)} queries run now, {len(before)} already" in done.stdout


def test_cli_virtual_execution_needs_a_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from langgraph_anytool.cli import main

    monkeypatch.delenv("ANYTOOL_VIRTUAL_URL", raising=False)
    q = write_group(tmp_path / "g.json", 1)
    assert main(["eval", "run", "--queries", str(q), "--offline", "--execution", "virtual", "--out",
                 str(tmp_path / "r.jsonl"), "--no-progress"]) == 2
    assert "--virtual-url" in capsys.readouterr().err


def test_db_returns_a_finished_thread_without_running_it_again(tmp_path: Path, builtin: Catalog) -> None:
    """The record of a finished query was lost (crash between the end of the run and the write): with --db the
    re-run takes the finished state from the checkpoint and makes no model call."""
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from langgraph_anytool.offline import OfflinePolicyModel

    queries = load_queries(write_group(tmp_path / "db.json", 1))

    async def go(model: object, out: Path) -> None:
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "ck.sqlite")) as saver:
            with ResultsWriter(out) as w:
                await run_batch(queries, builtin, model, w, BatchOptions(model_label="m"), checkpointer=saver)

    asyncio.run(go(OfflinePolicyModel(catalog=builtin), tmp_path / "a.jsonl"))
    silent = ScriptedChatModel(replies=[])  # any call would fail the query
    asyncio.run(go(silent, tmp_path / "b.jsonl"))
    (a,), (b,) = read_results(tmp_path / "a.jsonl"), read_results(tmp_path / "b.jsonl")
    assert b["error"] is None and b["answer"] == a["answer"] and b["status"] == a["status"]
    assert silent.calls == []
