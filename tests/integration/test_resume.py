"""A run killed mid-way (real subprocess, SIGKILL) resumes on the same thread without redoing finished branches."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.resume_worker import build

ROOT = Path(__file__).resolve().parents[2]


def wait_for(log: Path, lines: set[str], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen = set(log.read_text().splitlines()) if log.exists() else set()
        if lines <= seen:
            return
        time.sleep(0.05)
    raise AssertionError(f"worker never reached {lines}; log: {log.read_text() if log.exists() else ''}")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_killed_run_resumes_without_redoing_finished_branches(tmp_path: Path) -> None:
    db, log = tmp_path / "runs.sqlite", tmp_path / "calls.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "tests.resume_worker", str(db), "t1", str(log)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # the meta-agent and the Weather tool agent have finished; the Finance agent hangs in its 2nd model call
        wait_for(log, {"meta 0", "meta 1", "weather 0", "weather 1", "finance 0", "finance 1"})
        time.sleep(2.0)  # let the finished branches' writes reach the checkpoint (Finance hangs 120 s)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    before = log.read_text().splitlines()

    graph, conn = build(str(db), log, fast=True)
    config = {"configurable": {"thread_id": "t1"}}
    state = graph.get_state(config)
    assert state.next, "the checkpoint should show unfinished work"
    out = graph.invoke(None, config)  # resume
    conn.close()

    resumed = log.read_text().splitlines()[len(before):]
    assert out["status"] == "solved" and out["answer"] == "AAPL is at 187.5."
    # finished branches were not redone: no model call for the meta-agent nor the Weather agent after the kill;
    # the Finance agent repeats only the call that was cut off (its first turn is in its subgraph checkpoint)
    assert [r for r in resumed if r.split()[0] in ("meta", "weather")] == []
    assert [r for r in resumed if r.startswith("finance")] == ["finance 1"]
    assert {e["api"] for e in out["api_pool"]} == {"Current", "Quote"}
    agents = out["agents"]
    assert all(a["status"] in ("finished", "stopped") for a in agents.values())
    assert agents["meta/Finance/t1"]["steps"] == 2 and agents["meta/Weather/t1"]["steps"] == 2
