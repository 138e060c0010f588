"""A machine without bubblewrap (issue 19, points 3 and 8): the code tool is simply not offered; only the commands
that run the builtin catalog (`run`, `demo`) say so, once; `ANYTOOL_UNSANDBOXED_CODE=1` warns that code runs
unsandboxed. bwrap's absence is simulated the way the code detects it: no `bwrap` on PATH (an empty folder), or
`shutil.which` returning None in-process."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

HINT = "apt-get install bubblewrap"
UNSANDBOXED = "WITHOUT an OS sandbox"


def _no_bwrap_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    empty = tmp_path / "empty-path"
    empty.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "ANYTOOL_UNSANDBOXED_CODE"}
    return {**env, "PATH": str(empty), **extra}


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "langgraph_anytool.cli", *args], capture_output=True, text=True,
                          env=env, timeout=180)


def test_building_the_builtin_catalog_warns_nothing_without_bwrap(monkeypatch: pytest.MonkeyPatch,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    """The quickstart notebook's first cell (`Catalog.builtin()`) printed the disabled-tool warning on stderr."""
    from langgraph_anytool import Catalog
    from langgraph_anytool.catalog.builtin import _sandbox

    monkeypatch.setattr(_sandbox.shutil, "which", lambda name: None)
    monkeypatch.delenv("ANYTOOL_UNSANDBOXED_CODE", raising=False)
    with caplog.at_level(logging.INFO):
        catalog = Catalog.builtin()
    assert "Run Python Code" not in {a.name for a in catalog}
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_only_run_and_demo_say_the_code_tool_is_not_offered(tmp_path: Path) -> None:
    env = _no_bwrap_env(tmp_path)
    for args in (["catalog"], ["search", "distance between cities"], ["catalog", "--category", "Code_Execution"]):
        done = _cli(env, *args)
        assert done.returncode == 0, done.stderr
        assert "bwrap" not in done.stdout + done.stderr, args
    run = _cli(env, "run", "--offline", "--quiet", "--no-cache", "Convert 26.2 miles to kilometers.")
    assert run.returncode == 0, run.stderr
    out = run.stdout + run.stderr
    assert out.count("bwrap (bubblewrap) is not installed") == 1 and out.count(HINT) == 1, out
    assert "191 APIs" in out
    demo = _cli(env, "demo", "--no-cache", "Convert 26.2 miles to kilometers.")
    assert demo.returncode == 0, demo.stderr
    assert (demo.stdout + demo.stderr).count(HINT) == 1


def test_unsandboxed_code_warns_once(tmp_path: Path) -> None:
    env = _no_bwrap_env(tmp_path, ANYTOOL_UNSANDBOXED_CODE="1")
    script = ("from langgraph_anytool import Catalog\nfrom langgraph_anytool.tools.pipeline import ApiExecutor\n"
              "cat = Catalog.builtin()\nprint('catalog built', flush=True)\n"
              "api = cat.find_api('Python Sandbox', 'Run Python Code')\n"
              "with ApiExecutor.for_catalog(cat, kind='local') as ex:\n"
              "    for n in (6, 7):\n"
              "        print(ex.call(api.id, {'code': f'print({n} * 7)'}).content['stdout'].strip())\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["catalog", "built", "42", "49"]
    assert done.stderr.count(UNSANDBOXED) == 1 and "ANYTOOL_UNSANDBOXED_CODE=1" in done.stderr, done.stderr
    run = _cli(env, "run", "--offline", "--quiet", "--no-cache", "Convert 26.2 miles to kilometers.")
    assert run.returncode == 0, run.stderr
    assert (run.stdout + run.stderr).count(UNSANDBOXED) == 1
    assert "194 APIs" in run.stdout
