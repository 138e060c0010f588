"""Issue 38 §4: the run's clock (`max_run_seconds`, the events' times) starts at `anytool run`'s start, not when
the graph starts: loading the catalog and building the graph count; a graph caller may start it earlier too
(`clock_start` in the input), and a thread's next run starts its own clock."""

from __future__ import annotations

import json
import math
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_anytool import AnyToolConfig, Catalog, create_anytool_graph
from langgraph_anytool.cli import app
from langgraph_anytool.nodes.lifecycle import clock_start
from langgraph_anytool.offline import OfflinePolicyModel

QUERY = "Convert 5 kilograms to pounds."
SLOW_START = 0.6  # seconds the command spends before its graph starts (a slow catalog load)


def slow_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    load = app._load_catalog

    def slowly(path: str | None) -> Any:
        time.sleep(SLOW_START)
        return load(path)

    monkeypatch.setattr(app, "_load_catalog", slowly)


def stored_start(db: Path, thread: str) -> float:
    with sqlite3.connect(db, check_same_thread=False) as conn:
        found = SqliteSaver(conn).get_tuple({"configurable": {"thread_id": thread}})
    assert found is not None
    return float(found.checkpoint["channel_values"]["started_at"])


def test_the_runs_clock_starts_with_the_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Old code: `init` started the clock after the catalog load and the graph build (here 0.6 s later)."""
    slow_catalog(monkeypatch)
    db = tmp_path / "runs.sqlite"
    before = time.time()
    assert app.main(["run", QUERY, "--offline", "--no-cache", "--json", "--db", str(db), "--thread", "c1"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "solved"
    assert before <= stored_start(db, "c1") < before + SLOW_START / 2


def test_a_time_limit_counts_the_commands_start(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A limit shorter than the start-up: the run ends `time_limit` before any model call."""
    slow_catalog(monkeypatch)
    code = app.main(["run", QUERY, "--offline", "--no-cache", "--json", "--set", f"max_run_seconds={SLOW_START / 2}"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["status"] == "time_limit", out["reason"]
    assert not out["usage"].get("meta", {}).get("model_calls")


def test_a_graph_caller_may_start_the_clock_and_the_next_run_starts_its_own() -> None:
    catalog = Catalog.builtin()
    graph = create_anytool_graph(catalog, OfflinePolicyModel(catalog=catalog), config=AnyToolConfig(),
                                 checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    earlier = time.time() - 5
    graph.invoke({"query": QUERY, "clock_start": earlier}, config)
    first = graph.get_state(config).values
    assert first["started_at"] == earlier and not first.get("clock_start")
    after = time.time()
    graph.invoke({"query": QUERY}, config)
    assert graph.get_state(config).values["started_at"] >= after  # not the first run's clock, nor its start


@pytest.mark.parametrize("given", [None, "0", True, math.nan, math.inf, 2e12])
def test_a_clock_start_that_is_no_past_time_is_ignored(given: Any) -> None:
    assert clock_start(given, 1000.0) == 1000.0


def test_a_past_clock_start_is_taken() -> None:
    assert clock_start(990, 1000.0) == 990.0
