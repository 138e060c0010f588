"""Run untrusted Python in a separate, resource-limited process without network access.

The code is written to a temporary directory and started as `sys.executable -I bootstrap.py` with an empty
environment, its own session (so the whole process group can be killed), CPU-time, address-space, file-size
and open-file limits set in `preexec_fn`, and a wall-clock timeout. Where the process may (root / CAP_SYS_ADMIN) the
child also gets an empty network namespace. The bootstrap replaces the socket
constructors and name resolution with functions that raise, blocks `ctypes` and process spawning, then runs
the user's file with `runpy`. Output goes to files (bounded by RLIMIT_FSIZE) and is read back truncated.

Limits: this is process-level hardening, not a container. The code can still read files the server's user
can read; run the server as an unprivileged user when exposing this API.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_BOOTSTRAP = r'''
import sys
sys.stdout.reconfigure(encoding="utf-8", errors="backslashreplace")
sys.stderr.reconfigure(encoding="utf-8", errors="backslashreplace")


def _install_guards():
    import _socket
    import socket
    import os

    def deny(*args, **kwargs):
        raise PermissionError("network access is disabled in this sandbox")

    raw_socket = _socket.socket

    class NoNewSocket(raw_socket):
        # socket.socket.__init__ calls _socket.socket.__init__ at call time, so this guards both; sockets
        # wrapping an existing descriptor (socket.socketpair, used by asyncio) stay possible.
        def __init__(self, family=-1, type=-1, proto=-1, fileno=None):
            if fileno is None:
                deny()
            raw_socket.__init__(self, family, type, proto, fileno)

    _socket.socket = NoNewSocket
    _socket.SocketType = NoNewSocket
    for module in (socket, _socket):
        for name in ("create_connection", "create_server", "getaddrinfo", "gethostbyname", "gethostbyname_ex",
                     "gethostbyaddr", "getnameinfo", "fromfd"):
            if hasattr(module, name):
                setattr(module, name, deny)

    def no_process(*args, **kwargs):
        raise PermissionError("starting processes is disabled in this sandbox")

    for name in ("system", "popen", "fork", "forkpty", "execv", "execve", "execl", "execle", "execlp", "execlpe",
                 "execvp", "execvpe", "spawnv", "spawnve", "spawnl", "spawnle", "posix_spawn", "posix_spawnp",
                 "kill", "killpg"):
        if hasattr(os, name):
            setattr(os, name, no_process)
    import _posixsubprocess
    _posixsubprocess.fork_exec = no_process
    for name in ("ctypes", "_ctypes"):
        sys.modules[name] = None


_install_guards()
del _install_guards

import runpy
import traceback

try:
    runpy.run_path("main.py", run_name="__main__")
except SystemExit:
    raise
except BaseException as exc:
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != "main.py":
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)
    sys.exit(1)
'''


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Resource limits of one sandboxed run."""

    timeout_s: float = 5.0  # wall clock
    cpu_s: int = 5  # RLIMIT_CPU
    memory_bytes: int = 512 * 1024 * 1024  # RLIMIT_AS
    file_bytes: int = 8 * 1024 * 1024  # RLIMIT_FSIZE: largest file (and output file) the code may write
    open_files: int = 64  # RLIMIT_NOFILE
    output_chars: int = 20_000  # kept of stdout and of stderr


_CLONE_NEWNET = 0x40000000


@functools.lru_cache(maxsize=1)
def _unshare_fn() -> Callable[[int], int] | None:
    """libc `unshare`, looked up in the parent (never inside preexec_fn); None where unavailable."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        fn: Callable[[int], int] = ctypes.CDLL(None, use_errno=True).unshare
        return fn
    except (OSError, AttributeError):
        return None


def _preexec(limits: SandboxLimits, unshare: Callable[[int], int] | None) -> None:
    """Runs in the child between fork and exec: resource limits, then (best effort, when privileged) an
    empty network namespace so that even code that slips past the Python-level guard has no network."""
    cpu = max(1, int(limits.cpu_s))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if unshare is not None:
        unshare(_CLONE_NEWNET)  # fails harmlessly (EPERM) without CAP_SYS_ADMIN


def _read_capped(path: Path, limit: int) -> tuple[str, bool]:
    with path.open("rb") as fh:
        raw = fh.read(limit * 4 + 4)
    text = raw.decode("utf-8", errors="replace")
    truncated = len(text) > limit or path.stat().st_size > len(raw)
    return text[:limit], truncated


def run_python(code: str, *, stdin: str = "", limits: SandboxLimits | None = None) -> dict[str, Any]:
    """Run `code` as a script in a sandboxed child process and report what happened."""
    lim = limits or SandboxLimits()
    unshare = _unshare_fn()
    with tempfile.TemporaryDirectory(prefix="anytool-sandbox-") as tmp:
        work = Path(tmp)
        (work / "main.py").write_text(code, encoding="utf-8")
        (work / "bootstrap.py").write_text(_BOOTSTRAP, encoding="utf-8")
        (work / "stdin.txt").write_text(stdin, encoding="utf-8")
        out_path, err_path = work / "stdout.txt", work / "stderr.txt"
        started = time.monotonic()
        timed_out = False
        with (work / "stdin.txt").open("rb") as fin, out_path.open("wb") as fout, err_path.open("wb") as ferr:
            proc = subprocess.Popen(
                [sys.executable, "-I", "bootstrap.py"],
                stdin=fin, stdout=fout, stderr=ferr, cwd=work, env={}, close_fds=True,
                start_new_session=True, preexec_fn=lambda: _preexec(lim, unshare),
            )
            try:
                proc.wait(timeout=lim.timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        duration = time.monotonic() - started
        stdout, out_trunc = _read_capped(out_path, lim.output_chars)
        stderr, err_trunc = _read_capped(err_path, lim.output_chars)
    code_ = proc.returncode
    sig = ""
    if code_ is not None and code_ < 0:
        try:
            sig = signal.Signals(-code_).name
        except ValueError:
            sig = f"signal {-code_}"
    if timed_out:
        stderr += f"\n[sandbox] killed after the {lim.timeout_s:g}s wall-clock limit"
    elif sig == "SIGXCPU":
        stderr += f"\n[sandbox] killed after the {lim.cpu_s}s CPU-time limit"
    return {"stdout": stdout, "stderr": stderr.strip("\n"), "exit_code": code_, "timed_out": timed_out,
            "signal": sig, "duration_s": round(duration, 3), "stdout_truncated": out_trunc,
            "stderr_truncated": err_trunc}
