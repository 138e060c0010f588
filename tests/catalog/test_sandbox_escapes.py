"""Escape attempts against the Python code tool (issue 11, section 1): each must fail under the OS sandbox, with
the host process, its files and its secrets unaffected.

These run only where bubblewrap works; CI sets ANYTOOL_REQUIRE_SANDBOX=1 so a missing sandbox fails instead of
skipping.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.catalog.builtin._sandbox import (
    SANDBOX_UID,
    SandboxLimits,
    SandboxStatus,
    SandboxUnavailable,
    run_python,
    sandbox_status,
)
from langgraph_anytool.catalog.builtin.code_tools import run_python_code
from tests.sandbox_isolation import require_isolated_sandbox
from tests.servers import loopback_listener

_STATUS = sandbox_status(allow_unsandboxed=False)
if _STATUS.mode != "bwrap":
    if os.environ.get("ANYTOOL_REQUIRE_SANDBOX"):
        raise RuntimeError(f"ANYTOOL_REQUIRE_SANDBOX is set but {_STATUS.detail}")
    pytest.skip(f"no OS sandbox here: {_STATUS.detail}", allow_module_level=True)


@pytest.fixture(autouse=True)
def _isolated_sandbox() -> None:
    """Every test here runs escape code: first a probe proves the sandbox isolates pids (`tests.sandbox_isolation`)."""
    require_isolated_sandbox()


PROJECT = Path(__file__).resolve().parents[2]


def run(code: str, timeout: float = 10) -> dict[str, Any]:
    return run_python_code(code, timeout_seconds=timeout)


@pytest.fixture
def victim() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A host process whose environment holds a secret (as an API server's would)."""
    secret = "sk-test-" + secrets.token_hex(16)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                            env={**os.environ, "OPENAI_API_KEY": secret})
    try:
        yield proc, secret
    finally:
        proc.kill()
        proc.wait()


def test_environment_of_host_processes_is_unreadable(victim: tuple[subprocess.Popen[bytes], str]) -> None:
    proc, secret = victim
    assert secret.encode() in Path(f"/proc/{proc.pid}/environ").read_bytes()  # the attack works outside
    code = f"""
import os
for pid in ({proc.pid}, {os.getpid()}, os.getppid(), 1):
    try:
        print(pid, open(f"/proc/{{pid}}/environ", "rb").read())
    except OSError as exc:
        print(pid, "refused", type(exc).__name__)
print("env", dict(os.environ))
"""
    r = run(code)
    assert r["exit_code"] == 0, r
    assert secret not in r["stdout"] and "sk-test" not in r["stdout"]
    assert f"{proc.pid} refused" in r["stdout"] and f"{os.getpid()} refused" in r["stdout"]
    assert proc.poll() is None  # the victim still runs


def test_host_files_are_neither_readable_nor_writable(tmp_path: Path) -> None:
    secret_file = tmp_path / "secret.txt"
    secret = "sk-test-" + secrets.token_hex(8)
    secret_file.write_text(secret)
    secret_file.chmod(0o644)
    tmp_path.chmod(0o755)
    targets = [str(secret_file), str(PROJECT / "README.md"), "/etc/passwd", "/root/.bashrc", "/etc/shadow"]
    code = f"""
for path in {targets!r}:
    try:
        print("read", path, open(path).read()[:40])
    except OSError as exc:
        print("refused", path, type(exc).__name__)
for path in ({str(tmp_path / "pwned")!r}, {str(PROJECT / "pwned")!r}, "/usr/lib/pwned", "/sandbox/pwned"):
    try:
        open(path, "w").write("x")
        print("wrote", path)
    except OSError as exc:
        print("refused", path, type(exc).__name__)
open("/tmp/scratch.txt", "w").write("private tmp works")
print(open("/tmp/scratch.txt").read())
"""
    r = run(code)
    assert r["exit_code"] == 0, r
    assert secret not in r["stdout"] and "read " not in r["stdout"] and "wrote" not in r["stdout"]
    assert r["stdout"].count("refused") == len(targets) + 4
    assert "private tmp works" in r["stdout"]
    assert not (tmp_path / "pwned").exists() and not (PROJECT / "pwned").exists()
    assert not Path("/tmp/scratch.txt").exists() or Path("/tmp/scratch.txt").read_text() != "private tmp works"


def test_posix_system_and_exec_run_no_shell(tmp_path: Path) -> None:
    marker = tmp_path / "shell-ran"
    code = f"""
import posix
print("rc", posix.system("echo pwned > {marker}"))
for prog in ("/bin/sh", "/usr/bin/sh", "/bin/bash", "/usr/bin/env"):
    try:
        posix.execv(prog, [prog, "-c", "echo pwned"])
    except OSError as exc:
        print("no", prog, type(exc).__name__)
"""
    r = run(code)
    assert "rc 0" not in r["stdout"] and r["stdout"].count("no ") == 4, r
    assert "pwned" not in r["stdout"] and not marker.exists()


def test_fork_bomb_is_capped_and_the_host_still_forks() -> None:
    code = """
import posix, time
n = 0
for _ in range(2000):
    try:
        pid = posix.fork()
    except OSError as exc:
        print("refused after", n, type(exc).__name__)
        break
    if pid == 0:
        time.sleep(30)
        posix._exit(0)
    n += 1
print("forked", n)
"""
    started = time.monotonic()
    r = run(code, timeout=10)
    limit = SandboxLimits().processes
    assert "refused after" in r["stdout"], r
    forked = int(r["stdout"].split("forked")[1].split()[0])
    assert forked < limit
    assert time.monotonic() - started < 10  # the parent's exit tore the sleeping children down at once
    assert subprocess.run(["true"], check=False).returncode == 0


def test_signals_cannot_reach_the_host(victim: tuple[subprocess.Popen[bytes], str]) -> None:
    proc, _ = victim
    code = f"""
import os, posix
for pid in (os.getppid(), {os.getpid()}, {proc.pid}):
    try:
        posix.kill(pid, 9)
        print("sent", pid)
    except OSError as exc:
        print("refused", pid, type(exc).__name__)
"""
    r = run(code)
    assert r["stdout"].count("refused") >= 2, r  # host pids do not exist in the sandbox's PID namespace
    assert f"sent {os.getpid()}" not in r["stdout"] and f"sent {proc.pid}" not in r["stdout"]
    assert proc.poll() is None


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("parent", ["times_out", "exits"])
def test_setsid_children_do_not_outlive_the_run(parent: str) -> None:
    marker = "anytool-escape-" + secrets.token_hex(6)
    tail = "time.sleep(60)" if parent == "times_out" else "time.sleep(0.5)"
    code = f"""
import os, posix, sys, time
for _ in range(3):
    if posix.fork() == 0:
        posix.setsid()
        posix.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)", "{marker}"])
time.sleep(0.3)
print("children", len([p for p in os.listdir("/proc") if p.isdigit()]))
{tail}
"""
    r = run(code, timeout=2)
    assert r["timed_out"] is (parent == "times_out"), r
    time.sleep(0.3)
    assert _processes_with(marker) == []


def test_ctypes_cannot_be_reimported() -> None:
    code = """
import sys
for name in ("ctypes", "_ctypes"):
    sys.modules.pop(name, None)
import importlib
try:
    importlib.import_module("ctypes")
    print("ctypes loaded")
except ImportError as exc:
    print("refused", type(exc).__name__)
"""
    r = run(code)
    assert "refused" in r["stdout"] and "ctypes loaded" not in r["stdout"], r


def test_loopback_sockets_through_the_mro_reach_nothing() -> None:
    with loopback_listener(4.0) as (port, accepted):
        code = f"""
import socket
raw = socket.socket.__mro__[1]
s = raw(socket.AF_INET, socket.SOCK_STREAM)
try:
    s.connect(("127.0.0.1", {port}))
    print("connected")
except OSError as exc:
    print("refused", type(exc).__name__, exc.errno)
"""
        r = run(code)
    assert "connected" not in r["stdout"] and "refused" in r["stdout"], r
    assert accepted == []


def test_sandboxed_code_never_runs_as_root_outside() -> None:
    """The kernel skips RLIMIT_NPROC for real root, so a root server starts bwrap as uid 65534; the host sees the
    sandboxed process under that uid (the report's non-root case: isolation no longer depends on privileges)."""
    marker = "anytool-uid-" + secrets.token_hex(6)
    code = f"""
import posix, sys
posix.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(3)", "{marker}"])
"""
    seen: list[int] = []

    def watch() -> None:
        deadline = time.monotonic() + 8
        while not seen and time.monotonic() < deadline:
            for pid in _processes_with(marker):
                status = Path(f"/proc/{pid}/status").read_text()
                uid_line = next(line for line in status.splitlines() if line.startswith("Uid:"))
                seen.append(int(uid_line.split()[1]))  # real uid as the host sees it
            time.sleep(0.05)

    thread = threading.Thread(target=watch)
    thread.start()
    run(code)
    thread.join()
    assert seen, "the sandboxed process was never seen"
    assert seen[0] == (SANDBOX_UID if os.geteuid() == 0 else os.geteuid())
    assert seen[0] != 0


def test_without_a_sandbox_code_is_refused_with_how_to_enable_it() -> None:
    st = SandboxStatus("unavailable", "the Python code tool is disabled: bwrap (bubblewrap) is not installed")
    with pytest.raises(SandboxUnavailable, match="disabled"):
        run_python("print(1)", status=st)
    env_status = sandbox_status({"ANYTOOL_UNSANDBOXED_CODE": "1"})
    assert env_status.mode == "bwrap"  # a working sandbox always wins over the opt-out


def test_code_tool_is_not_offered_without_a_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    import langgraph_anytool.catalog.builtin as builtin
    from langgraph_anytool.catalog.builtin import _sandbox

    monkeypatch.setattr(_sandbox.shutil, "which", lambda name: None)
    monkeypatch.delenv("ANYTOOL_UNSANDBOXED_CODE", raising=False)
    status = _sandbox.sandbox_status()
    assert status.mode == "unavailable" and "apt-get install bubblewrap" in status.detail
    names = {a.name for c in builtin.builtin_categories() for t in c.tools for a in t.apis}
    assert "Run Python Code" not in names and "Check Python Syntax" in names
    monkeypatch.setenv("ANYTOOL_UNSANDBOXED_CODE", "1")
    assert _sandbox.sandbox_status().mode == "unsandboxed"
    names = {a.name for c in builtin.builtin_categories() for t in c.tools for a in t.apis}
    assert "Run Python Code" in names
