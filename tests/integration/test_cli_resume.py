"""Through the command line (issue 29 §1, §10): Ctrl-C stops a paused `anytool run` with exit code 130 and the command
that resumes it; the resume needs neither `--set ask_user=true` nor the model flag (the run keeps its settings) and
uses the user's answer. `anytool eval run` prints its resuming command on Ctrl-C too."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.cli.app import main
from tests.signals import default_sigint

QUERY = "Convert miles to kilometers"


def _anytool(*args: str) -> list[str]:
    return [sys.executable, "-I", "-m", "langgraph_anytool.cli", *args]


def _read_until(proc: subprocess.Popen[bytes], marker: str, timeout: float = 240.0) -> str:
    assert proc.stdout is not None
    os.set_blocking(proc.stdout.fileno(), False)
    seen, deadline = b"", time.monotonic() + timeout
    while marker.encode() not in seen and time.monotonic() < deadline and proc.poll() is None:
        seen += proc.stdout.read() or b""
        time.sleep(0.1)
    os.set_blocking(proc.stdout.fileno(), True)
    assert marker.encode() in seen, seen.decode(errors="replace")
    return seen.decode()


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGINT"), reason="needs SIGINT")
def test_ctrl_c_prints_the_resume_command_and_the_resume_keeps_the_settings(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    first = [*_anytool("run", QUERY, "--offline", "--set", "ask_user=true", "--db", str(db), "--quiet")]
    proc = subprocess.Popen(first, cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=default_sigint)
    try:
        shown = _read_until(proc, "your answer>")
        assert "'value'" in shown
        proc.send_signal(signal.SIGINT)  # Ctrl-C at the question
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err.decode()
    lines = err.decode().strip().splitlines()
    assert lines[-2].startswith("interrupted: the run on thread ") and f"checkpointed in {db}" in lines[-2]
    resume = shlex.split(lines[-1].strip())
    assert resume[:3] == ["anytool", "run", QUERY] and "--thread" in resume and resume[-2:] == ["--thread",
                                                                                                resume[-1]]
    thread = resume[-1]
    # the resume: no --set ask_user=true, no --offline: the run's context brings both back
    again = subprocess.run(_anytool("run", QUERY, "--thread", thread, "--db", str(db), "--quiet"), cwd=tmp_path,
                           input="26.2\n", capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "with the settings it started with (model=offline, ask_user=true)" in again.stdout
    assert "answer: Convert Units: 26.2 mi = 42.1648128 km." in again.stdout
    assert again.stdout.splitlines()[1].startswith("model: OfflinePolicyModel")  # labelled on resume too


def test_ctrl_c_without_db_says_the_run_cannot_resume(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    import langgraph_anytool.cli.progress as progress

    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(progress, "stream_run", interrupted)
    code = main(["run", "Convert 26.2 miles to kilometers", "--offline", "--thread", "t9", "--quiet"])
    err = capsys.readouterr().err
    assert code == 130
    assert "kept its checkpoints in memory (no --db), so it cannot be resumed" in err
    assert ("anytool run 'Convert 26.2 miles to kilometers' --offline --thread t9 --quiet --db anytool-runs.sqlite"
            in err)


def test_ctrl_c_in_eval_run_prints_the_command_that_resumes_the_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import langgraph_anytool.eval.anytool.runner as runner

    queries = tmp_path / "G1.json"
    queries.write_text(json.dumps([{"query": "Convert 26.2 miles to kilometers", "query_id": 1,
                                    "relevant APIs": [["Universal Unit Converter", "Convert Units"]]}]))

    async def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run_batch", interrupted)
    out = tmp_path / "results.jsonl"
    argv = ["eval", "run", "--queries", str(queries), "--offline", "--out", str(out), "--no-progress"]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert f"interrupted: 0 queries recorded in {out} in this session; the same command resumes the batch" in err
    assert "queries in flight start over (give --db FILE" in err
    assert shlex.join(["anytool", *argv]) in err
