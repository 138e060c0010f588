"""Child interpreters start isolated (issue 28, point 1): code in the directory the user runs from never runs.

A directory holding booby-trapped `multiprocessing/`, `json/`, `encodings/` and `langgraph_anytool/` packages (each
leaves a PWNED file when imported) is the current directory of every entry point that starts a child interpreter:
the CLI (`run`, `eval run`), a script run from elsewhere, and the code tool's sandbox.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from langgraph_anytool.tools.executors.worker_pool import WorkerPool, package_root, worker_command

TRAPS = ("multiprocessing", "json", "encodings", "langgraph_anytool")
ANYTOOL = str(Path(sys.executable).with_name("anytool"))


def _booby_trapped(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in TRAPS:
        (folder / name).mkdir()
        (folder / name / "__init__.py").write_text(
            f"open({str(folder / f'PWNED-{name}')!r}, 'w').write('ran')\nraise SystemExit('trap {name} imported')\n")
    return folder


def _pwned(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("PWNED-*"))


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**env, "ANYTOOL_EMBEDDINGS": "none", "ANYTOOL_CACHE": "off"}


def test_the_worker_command_is_isolated() -> None:
    cmd = worker_command(5, 10, 1 << 30)
    assert cmd[0] == sys.executable and cmd[1:3] == ["-I", "-S"]
    assert package_root() in cmd and Path(package_root(), "langgraph_anytool", "__init__.py").is_file()


def test_anytool_run_from_a_booby_trapped_directory_runs_none_of_it(tmp_path: Path) -> None:
    trap = _booby_trapped(tmp_path)
    done = subprocess.run([ANYTOOL, "run", "Convert 26.2 miles to kilometers.", "--offline", "--no-cache"],
                          cwd=trap, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "42.16" in done.stdout  # the unit converter ran, in a worker process
    assert _pwned(trap) == []


def test_eval_run_from_a_booby_trapped_directory_runs_none_of_it(tmp_path: Path) -> None:
    trap = _booby_trapped(tmp_path)
    queries = tmp_path / "queries" / "g.json"
    queries.parent.mkdir()
    queries.write_text(json.dumps([{"query_id": 1, "query": "Convert 26.2 miles to kilometers."},
                                   {"query_id": 2, "query": "Convert 5 kilograms to pounds."}]))
    done = subprocess.run([ANYTOOL, "eval", "run", "--queries", str(queries), "--offline", "--out", "r.jsonl",
                           "--no-progress"], cwd=trap, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    records = [json.loads(line) for line in (trap / "r.jsonl").read_text().splitlines()]
    assert len(records) == 2
    assert _pwned(trap) == []


def test_a_script_from_elsewhere_run_in_a_booby_trapped_directory_runs_none_of_it(tmp_path: Path) -> None:
    """`python /elsewhere/script.py` from the trapped folder: the parent never had that folder on its path, and its
    worker processes must not either (the old worker started as `python -c`, with '' first on sys.path)."""
    trap = _booby_trapped(tmp_path / "here")
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "convert.py").write_text(
        "from langgraph_anytool import Catalog\nfrom langgraph_anytool.tools.pipeline import ApiExecutor\n"
        "with ApiExecutor.for_catalog(Catalog.builtin(), kind='local') as ex:\n"
        "    obs = ex.call('Units_Conversion/universal_unit_converter/convert_units',\n"
        "                  {'value': 26.2, 'from_unit': 'mile', 'to_unit': 'km'})\n"
        "    print(obs.status.value, obs.content['result'])\n")
    done = subprocess.run([sys.executable, str(scripts / "convert.py")], cwd=trap, env=_env(), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["ok", "42.1648128"]
    assert _pwned(trap) == []


def test_a_worker_never_imports_from_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process: the parent's `sys.path` may hold '' (as under `python -c`); the worker drops relative entries,
    puts the standard library first and finds this package where the parent found it."""
    trap = _booby_trapped(tmp_path)
    monkeypatch.chdir(trap)
    monkeypatch.setattr(sys, "path", ["", *sys.path])
    pool = WorkerPool(1)
    try:
        assert pool.call(os.getcwd, {}, 60) == str(trap)
        assert pool.call(_module_file, {"name": "json"}, 60).startswith(os.path.dirname(os.__file__))
        assert pool.call(_module_file, {"name": "langgraph_anytool"}, 60) == str(
            Path(package_root(), "langgraph_anytool", "__init__.py"))
    finally:
        pool.close()
    assert _pwned(trap) == []


def _module_file(name: str) -> str:
    import importlib

    return str(importlib.import_module(name).__file__)


def test_the_code_tool_from_a_booby_trapped_directory_runs_none_of_it(tmp_path: Path) -> None:
    """The code tool's sandbox (bubblewrap, or the unsandboxed opt-in) from the trapped folder."""
    trap = _booby_trapped(tmp_path / "here")
    script = tmp_path / "code.py"
    script.write_text(
        "from langgraph_anytool.catalog.builtin.code_tools import run_python_code, run_python_tests\n"
        "print(run_python_code('import json, multiprocessing\\nprint(json.dumps([1]))')['stdout'].strip())\n"
        "print(run_python_tests('import json\\ndef f():\\n    return json.dumps(1)', ['assert f() == \"1\"'])"
        "['passed'])\n")
    env = {**_env(), "ANYTOOL_UNSANDBOXED_CODE": "1"}
    done = subprocess.run([sys.executable, str(script)], cwd=trap, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["[1]", "1"]
    assert _pwned(trap) == []
