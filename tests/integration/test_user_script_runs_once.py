"""A user's script runs once (issue 19, point 1): builtin APIs run in worker processes, and a worker must never
re-import the user's `__main__` (multiprocessing's spawn/forkserver do, which ran an unguarded script twice)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# The four lines, plus one line that leaves a trace of every run of the script in a file.
SCRIPT = """\
from langgraph_anytool import Catalog, create_anytool_graph
open({trace!r}, "a").write("ran\\n")
graph = create_anytool_graph(catalog=Catalog.builtin(), model="offline")
out = graph.invoke({{"query": "Convert 26.2 miles to kilometers."}})
print(out["status"], out["answer"])
"""


def _check_once(done: subprocess.CompletedProcess[str], trace: Path) -> None:
    assert done.returncode == 0, done.stderr[-2000:]
    assert trace.read_text().splitlines() == ["ran"]  # the script body ran in one process only
    printed = done.stdout.strip().splitlines()
    assert len(printed) == 1 and printed[0].startswith("solved "), done.stdout
    assert "42.16" in printed[0]  # the answer came from the unit converter, which runs in a worker process


@pytest.mark.parametrize("how", ["file", "stdin", "dash-c", "module"])
def test_an_unguarded_script_runs_once(tmp_path: Path, how: str) -> None:
    trace = tmp_path / "trace.txt"
    code = SCRIPT.format(trace=str(trace))
    if how == "file":
        (tmp_path / "script.py").write_text(code)
        argv, stdin = [sys.executable, "script.py"], None
    elif how == "stdin":
        argv, stdin = [sys.executable, "-"], code
    elif how == "dash-c":
        argv, stdin = [sys.executable, "-c", code], None
    else:  # python -m pkg
        (tmp_path / "userpkg").mkdir()
        (tmp_path / "userpkg" / "__init__.py").write_text("")
        (tmp_path / "userpkg" / "__main__.py").write_text(code)
        argv, stdin = [sys.executable, "-m", "userpkg"], None
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    _check_once(done, trace)
