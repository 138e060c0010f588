"""The guard in front of every destructive payload (code that signals every process it can, `posix.kill(-1, 9)`, or
writes to every descriptor under /proc): before one runs, a harmless probe proves that the sandbox really gives the
code its own process-id namespace. Outside one, such a payload kills the machine's processes and truncates other
people's files (it once did); so without that proof the test is skipped, or fails under ANYTOOL_REQUIRE_SANDBOX=1.

The probe runs through both entry points the payloads use (`run_python`, `run_python_with_tests`) and checks, from
inside: its own pid is tiny, its parent is the namespace's init, and /proc lists only the sandbox's few processes,
not the host's (this test process's pid among them).
"""

from __future__ import annotations

import functools
import os

import pytest

from langgraph_anytool.catalog.builtin._sandbox import SandboxLimits, run_python, run_python_with_tests, sandbox_status

MAX_SANDBOX_PID = 16  # a fresh pid namespace numbers its processes from 1: bwrap's init, then the code
PROBE = ("import os\npids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
         "print('pids', os.getpid(), os.getppid(), *pids)\n")


def _probe_problem(stdout: str, where: str) -> str | None:
    """What the probe's output shows wrong (None: isolated)."""
    line = next((x for x in stdout.splitlines() if x.startswith("pids ")), "")
    try:
        pid, parent, *visible = (int(x) for x in line.split()[1:])
    except ValueError:
        return f"the isolation probe ({where}) printed {stdout[:200]!r}"
    if pid > MAX_SANDBOX_PID or parent > MAX_SANDBOX_PID or not visible or max(visible) > MAX_SANDBOX_PID:
        return (f"the sandbox ({where}) does not isolate process ids: the code is pid {pid} (parent {parent}) and "
                f"sees {len(visible)} processes up to pid {max(visible, default=0)}")
    return None


@functools.cache
def isolation_problem() -> str | None:
    """Why a destructive payload must not run here (no bwrap, or no pid isolation in it); None when it may."""
    status = sandbox_status(allow_unsandboxed=False)  # never the opted-in unsandboxed mode
    if status.mode != "bwrap":
        return f"no OS sandbox here: {status.detail}"
    limits = SandboxLimits(timeout_s=30, cpu_s=10)
    try:
        alone = run_python(PROBE, status=status, limits=limits)
        tested = run_python_with_tests(PROBE, ["assert True"], status=status, limits=limits)
    except Exception as exc:  # the sandbox failed to start: nothing hostile may run
        return f"the isolation probe failed: {type(exc).__name__}: {str(exc)[:200]}"
    return _probe_problem(alone["stdout"], "run_python") or _probe_problem(tested["stdout"], "run_python_with_tests")


def require_isolated_sandbox() -> None:
    """Skip the calling test unless the sandbox isolates pids (fail instead under ANYTOOL_REQUIRE_SANDBOX=1)."""
    problem = isolation_problem()
    if problem is None:
        return
    if os.environ.get("ANYTOOL_REQUIRE_SANDBOX"):
        pytest.fail(f"ANYTOOL_REQUIRE_SANDBOX is set but {problem}; the destructive payload was not run")
    pytest.skip(f"{problem}; the destructive payload was not run")
