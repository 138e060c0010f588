"""Every step of an MCP session has a deadline (issue 28, point 8).

A stdio server that never answered the tools listing kept `Catalog.from_mcp(timeout=10)` waiting past 150 s: the
timeout covered calls only. `tests/mcp_hang_server.py` hangs at one chosen step (start, initialise, list, call);
each run happens in a child process with a watchdog, so a loader that waits for ever fails the test instead of
hanging it, and the server's process must be gone afterwards.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("langchain_mcp_adapters")

from langgraph_anytool.catalog.catalog import Catalog

SERVER = Path(__file__).parents[1] / "mcp_hang_server.py"

_CHILD = """
import json, sys, time
import langchain_mcp_adapters.client  # imported first: the clock below times the session, not the imports
from langgraph_anytool.catalog import Catalog
from langgraph_anytool.tools.pipeline import ApiExecutor
connection = {"transport": "stdio", "command": sys.executable, "args": sys.argv[1:]}
start = time.monotonic()
out = {}
try:
    catalog = Catalog.from_mcp({"slow": connection}, timeout=2)
    out["apis"] = [api.id for api in catalog]
    with ApiExecutor.for_catalog(catalog, kind="auto") as ex:
        obs = ex.call("MCP/slow/echo", {"text": "hi"})
    out.update(status=obs.status.value, error=obs.error, content=obs.content)
except Exception as exc:
    out.update(raised=type(exc).__name__, message=str(exc))
out["seconds"] = time.monotonic() - start
print(json.dumps(out))
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def _session(tmp_path: Path, step: str, *extra: str) -> dict[str, object]:
    """Load the hanging server's catalog and call its tool, in a child process given 60 s; the server is gone after."""
    pidfile = tmp_path / f"{step}.pid"
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, str(SERVER), step, str(pidfile), *extra],
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the MCP loader still waited after 60 s on a server that hangs at {step!r}")
    finally:
        pid = int(pidfile.read_text()) if pidfile.exists() else 0
        deadline = time.monotonic() + 10
        while pid and _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if pid and _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            pytest.fail(f"the MCP server process {pid} (hanging at {step!r}) outlived its session")
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("step", ["start", "initialize", "list"])
def test_loading_a_server_that_hangs_ends_at_the_deadline(tmp_path: Path, step: str) -> None:
    out = _session(tmp_path, step)
    assert out.get("raised") == "CatalogError", out
    assert "MCP server 'slow' did not start, initialise and list its tools within 2 s" in str(out["message"])
    assert float(str(out["seconds"])) < 10  # 2 s, and the server killed at once


@pytest.mark.parametrize("step", ["start", "list", "call"])
def test_a_server_that_ignores_the_end_of_its_input_and_sigterm_is_killed(tmp_path: Path, step: str) -> None:
    """Such a server cannot even close the listing session in time (the `call` one lists its tool, then never
    exits): with `asyncio.wait_for`, whose cancellation is delivered once, the transport's clean-up then waited for
    it for ever."""
    out = _session(tmp_path, step, "--ignore-term")
    assert out.get("raised") == "CatalogError", out
    assert float(str(out["seconds"])) < 10


def test_a_call_that_hangs_ends_at_the_deadline(tmp_path: Path) -> None:
    out = _session(tmp_path, "call")
    assert out["apis"] == ["MCP/slow/echo"]
    assert out["status"] == "timeout" and "within 2 s" in str(out["error"]), out


def test_a_server_that_answers_works(tmp_path: Path) -> None:
    out = _session(tmp_path, "none")
    assert out["status"] == "ok" and out["content"] == "hi", out


@pytest.mark.parametrize("timeout", [None, 0, -1, math.inf, math.nan, True])
def test_an_mcp_catalog_needs_a_finite_deadline(timeout: object) -> None:
    with pytest.raises(ValueError, match="every step of an MCP session"):
        Catalog.from_mcp({"s": {"transport": "stdio", "command": sys.executable, "args": [str(SERVER)]}},
                         timeout=timeout)  # type: ignore[arg-type]
