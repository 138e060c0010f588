"""Run untrusted Python under an OS-level sandbox (bubblewrap), or not at all.

The security boundary is bubblewrap (`bwrap`, Debian package `bubblewrap`): the code runs in new user, PID,
network, IPC, UTS and (where possible) cgroup namespaces as uid/gid 65534, with a read-only root holding only
the Python installation and the shared libraries it loads (no shell, no `/etc`, no home directories, no project
files, no third-party packages: the standard library only), a private size-capped `/tmp` (the only writable
place: `/`, `/etc` and `/dev/shm` are read-only), a fresh `/proc` that shows only the sandbox's own processes, an empty
environment, its own session, `--die-with-parent`, no capabilities and no further user namespaces. Resource
limits: CPU time, address space, file size, open files and core size are set before `bwrap` starts; the number of
processes (RLIMIT_NPROC) is set inside the sandbox's user namespace. When the run ends or times out, the sandbox's
PID namespace is torn down, which kills every process the code started (`setsid` included).

Inside, a small bootstrap also replaces socket constructors, process spawning and `ctypes` with functions that
raise. That layer only produces friendly errors; it is not a boundary (it can be bypassed, and the sandbox holds
when it is).

Without a working `bwrap` the code tool is not offered (see `sandbox_status`), unless the user opts into running
code with only that process-level hardening: `ANYTOOL_UNSANDBOXED_CODE=1` (or `allow_unsandboxed=True`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

logger = logging.getLogger(__name__)

UNSANDBOXED_ENV = "ANYTOOL_UNSANDBOXED_CODE"
ENABLE_HINT = ("install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`) on a kernel that allows user "
               f"namespaces, or set {UNSANDBOXED_ENV}=1 to run code without an OS sandbox (not safe for untrusted "
               "code)")
SANDBOX_UID = 65534

_GUARDS = r'''
import sys
sys.stdout.reconfigure(encoding="utf-8", errors="backslashreplace")
sys.stderr.reconfigure(encoding="utf-8", errors="backslashreplace")

_NPROC = int(sys.argv[1]) if len(sys.argv) > 1 else -1
if _NPROC >= 0:
    import resource
    resource.setrlimit(resource.RLIMIT_NPROC, (_NPROC, _NPROC))


def _install_guards():
    import _socket
    import os
    import socket

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
'''

_BOOTSTRAP = _GUARDS + r'''

_install_guards()
del _install_guards

import runpy
import traceback

try:
    import os
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "main.py"), run_name="__main__")
except SystemExit:
    raise
except BaseException as exc:
    tb = exc.__traceback__
    while tb is not None and not tb.tb_frame.f_code.co_filename.endswith("main.py"):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)
    sys.exit(1)
'''


# `run_python_tests` (see `_sandbox_rpc.py`): two sandboxes joined by one socket pair per test. The code server
# forks a fresh child per test that runs main.py and then answers requests about its objects until the tester closes
# that test's socket. The tester's harness forks a child per test that runs the test snippet with the code's names
# bound to proxies, and writes the verdicts (each child's exit status and report) to the descriptor the host opened
# for it. The code never runs in the tester's sandbox, and never holds that descriptor.
_LOAD_PROTOCOL = r'''
import importlib.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("sandbox_rpc", os.path.join(_HERE, "sandbox_rpc.py"))
sandbox_rpc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sandbox_rpc)
_FDS = [int(fd) for fd in sys.argv[-1].split(",") if fd]
'''

_CODE_SERVER = _GUARDS + _LOAD_PROTOCOL + r'''
import runpy

for _index, _fd in enumerate(_FDS):
    _pid = os.fork()
    if _pid == 0:
        for _other in _FDS[_index + 1:]:  # the sockets of later tests (earlier ones are closed already)
            os.close(_other)
        _saved_stdout = os.dup(1)
        if _index > 0:  # the code's own output is shown once (from the first test's run)
            _null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(_null, 1)
            os.close(_null)
        _install_guards()
        _namespace, _error = None, None
        try:
            _namespace = runpy.run_path(os.path.join(_HERE, "main.py"), run_name="__main__")
        except BaseException as _exc:
            _error = _exc
        sys.stdout.flush()
        os.dup2(_saved_stdout, 1)
        try:
            sandbox_rpc.Peer(_fd, serves=sandbox_rpc.EVERYTHING, namespace=_namespace,
                             load_error=_error).serve_forever()
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(0)
    os.close(_fd)
    os.waitpid(_pid, 0)
'''

_TESTER = _GUARDS + _LOAD_PROTOCOL + r'''
import json
import runpy

_VERDICT_FD = int(sys.argv[2])
_fork, _waitpid, _write, _close, _pipe, _read = os.fork, os.waitpid, os.write, os.close, os.pipe, os.read


def _detail(exc):
    try:
        return (type(exc).__name__ + ": " + str(exc))[:500]
    except BaseException:
        return type(exc).__name__


def _child(index, fd, report_fd):
    _close(_VERDICT_FD)
    for other in _FDS[index + 1:]:  # the sockets of later tests (earlier ones are closed already)
        _close(other)
    _install_guards()
    try:
        names = sandbox_rpc.Peer(fd, serves=sandbox_rpc.CALLS).request("names")
        runpy.run_path(os.path.join(_HERE, f"test_{index}.py"), init_globals=names, run_name="__test__")
        outcome = b"ok"
    except BaseException as exc:
        outcome = b"fail" + _detail(exc).encode("utf-8", "backslashreplace")
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        _write(report_fd, outcome[:2000])
        os._exit(0 if outcome == b"ok" else 1)


for _index, _fd in enumerate(_FDS):
    _r, _w = _pipe()
    _pid = _fork()
    if _pid == 0:
        _close(_r)
        _child(_index, _fd, _w)
    _close(_w)
    _close(_fd)  # the code server's child for this test sees the end of it once the test's child is done
    _chunks = []
    while True:
        _chunk = _read(_r, 4096)
        if not _chunk or sum(map(len, _chunks)) > 4096:
            break
        _chunks.append(_chunk)
    _close(_r)
    _status = _waitpid(_pid, 0)[1]
    _report = b"".join(_chunks)
    _passed = os.waitstatus_to_exitcode(_status) == 0 and _report == b"ok"
    if _passed:
        _error = ""
    elif _report.startswith(b"fail"):
        _error = _report[4:].decode("utf-8", "replace")
    elif os.WIFSIGNALED(_status):
        _error = f"the test process was killed by signal {os.WTERMSIG(_status)}"
    else:
        _error = f"the test did not finish (exit status {os.waitstatus_to_exitcode(_status)})"
    _write(_VERDICT_FD, (json.dumps([_index, _passed, _error]) + "\n").encode())
'''


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Resource limits of one sandboxed run."""

    timeout_s: float = 5.0  # wall clock
    cpu_s: int = 5  # RLIMIT_CPU
    memory_bytes: int = 512 * 1024 * 1024  # RLIMIT_AS
    file_bytes: int = 8 * 1024 * 1024  # RLIMIT_FSIZE: largest file (and output file) the code may write
    tmp_bytes: int = 32 * 1024 * 1024  # size of the private /tmp (a tmpfs)
    open_files: int = 64  # RLIMIT_NOFILE
    processes: int = 16  # RLIMIT_NPROC inside the sandbox's user namespace
    output_chars: int = 20_000  # kept of stdout and of stderr


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """How submitted code would run here: `bwrap` (OS sandbox), `unsandboxed` (opted in) or `unavailable`."""

    mode: Literal["bwrap", "unsandboxed", "unavailable"]
    detail: str

    @property
    def available(self) -> bool:
        return self.mode != "unavailable"


class SandboxUnavailable(RuntimeError):
    """No OS sandbox here and unsandboxed execution was not allowed."""


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def _world_usable(path: Path) -> bool:
    """Whether a user in no group of ours could reach and run `path` (o+x on every directory, o+rx on the file)."""
    try:
        if path.stat().st_mode & 0o005 != 0o005:
            return False
        return all(d.stat().st_mode & 0o001 for d in path.parents)
    except OSError:
        return False


def _sandbox_user() -> int | None:
    """Root starts bwrap as uid 65534: the kernel never applies RLIMIT_NPROC to processes whose real uid is root."""
    return SANDBOX_UID if os.geteuid() == 0 else None


def _interpreter(user: int | None = None) -> str:
    """The base interpreter (a venv's python is a symlink to it; the venv is not mounted); when bwrap starts as
    another user who cannot reach it (e.g. under /root), the system's /usr/bin/python3."""
    exe = Path(sys.executable).resolve()
    candidate = Path(sys.base_prefix).resolve() / "bin" / exe.name
    chosen = candidate if candidate.exists() else exe
    if user is not None and not _world_usable(chosen):
        system = Path("/usr/bin/python3").resolve()
        if _world_usable(system):
            return str(system)
    return str(chosen)


def bwrap_command(bwrap: str, interpreter: str, code_dir: str, limits: SandboxLimits,
                  extra_args: tuple[str, ...] = ()) -> list[str]:
    """The `bwrap` command line running `code_dir/bootstrap.py` with `interpreter`."""
    exe = Path(interpreter).resolve()
    stdlib = exe.parent.parent / "lib"  # <prefix>/bin/python3.x → <prefix>/lib/python3.x, libpython
    cmd = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--disable-userns", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
           "--hostname", "sandbox", "--die-with-parent", "--new-session", "--clearenv", "--cap-drop", "ALL"]
    mounted: list[str] = []
    for src in ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libx32", str(stdlib)):
        if Path(src).is_dir() and not any(src == m or src.startswith(m + "/") for m in mounted):
            cmd += ["--ro-bind", src, src]
            mounted.append(src)
    cmd += ["--ro-bind", str(exe), str(exe)]
    for link in ("lib", "lib64", "lib32", "libx32"):
        host = Path("/") / link
        if host.is_symlink():
            cmd += ["--symlink", os.readlink(host), f"/{link}"]
        elif host.is_dir():
            cmd += ["--ro-bind", str(host), str(host)]
    for ext in sorted(stdlib.glob("python3*/lib-dynload/_ctypes*.so")):
        cmd += ["--ro-bind", "/dev/null", str(ext)]  # no foreign-function interface, even when re-imported
    hidden: list[str] = []
    for package_dir in _package_dirs(mounted):  # only the standard library: no dist-/site-packages (e.g. cffi)
        cmd += ["--size", "4096", "--perms", "0555", "--tmpfs", package_dir]
        hidden.append(package_dir)
    cmd += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache",
            "--proc", "/proc", "--dev", "/dev",
            "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
            "--ro-bind", code_dir, "/sandbox", "--chdir", "/tmp"]
    # Only /tmp (size-capped) stays writable: the root tmpfs bwrap builds (/, /etc, ...), /dev (and so /dev/shm)
    # and the empty directories hiding third-party packages are made read-only once every mount is in place.
    for path in ("/", "/dev", *hidden):
        cmd += ["--remount-ro", path]
    cmd += ["--", str(exe), "-I", "-S", "/sandbox/bootstrap.py", str(limits.processes), *extra_args]
    return cmd


def _package_dirs(mounted: list[str]) -> list[str]:
    """Third-party package directories inside the mounted trees (Debian's /usr/lib/python3/dist-packages, a
    prefix's lib/python3.x/site-packages), to be covered by empty read-only directories."""
    found: list[str] = []
    for root in mounted:
        base = Path(root)
        for pattern in ("python3*/dist-packages", "python3*/site-packages", "python3/dist-packages"):
            for candidate in sorted(base.glob(pattern)):
                path = str(candidate)
                if candidate.is_dir() and not candidate.is_symlink() and path not in found:
                    found.append(path)
    return found


def _prepare_dirs(work: Path, code_dir: Path, user: int | None) -> None:
    """Let a different sandbox user reach the code (the temporary directory stays unlistable)."""
    if user is None:
        return
    work.chmod(0o711)
    code_dir.chmod(0o755)
    for f in code_dir.iterdir():
        f.chmod(0o644)


@functools.lru_cache(maxsize=8)
def _probe(bwrap: str, interpreter: str, user: int | None) -> str:
    """"" when a trivial program runs under bwrap here, else why not."""
    with tempfile.TemporaryDirectory(prefix="anytool-probe-") as tmp:
        work = Path(tmp)
        code_dir = work / "code"
        code_dir.mkdir()
        (code_dir / "bootstrap.py").write_text("print('ok')\n", encoding="utf-8")
        _prepare_dirs(work, code_dir, user)
        try:
            proc = subprocess.run(bwrap_command(bwrap, interpreter, str(code_dir), SandboxLimits()),
                                  capture_output=True, env={}, cwd="/", timeout=30, check=False, user=user,
                                  group=user, extra_groups=[] if user is not None else None)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"{bwrap} could not be started: {exc}"
    if proc.returncode != 0 or proc.stdout.strip() != b"ok":
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"{bwrap} does not work here: {err[-1] if err else f'exit code {proc.returncode}'}"
    return ""


def sandbox_status(environ: Mapping[str, str] | None = None, *, allow_unsandboxed: bool | None = None) -> SandboxStatus:
    """Whether code can run under bwrap here; else whether the user opted into unsandboxed execution."""
    env = os.environ if environ is None else environ
    bwrap = shutil.which("bwrap") if sys.platform.startswith("linux") else None
    user = _sandbox_user()
    problem = ("bwrap (bubblewrap) is not installed" if bwrap is None
               else _probe(bwrap, _interpreter(user), user))
    if not problem:
        return SandboxStatus("bwrap", f"bubblewrap at {bwrap}")
    opted = _truthy(env.get(UNSANDBOXED_ENV)) if allow_unsandboxed is None else allow_unsandboxed
    if opted:
        return SandboxStatus("unsandboxed", f"{UNSANDBOXED_ENV}=1: the Python code tool runs submitted code WITHOUT "
                                            f"an OS sandbox ({problem})")
    return SandboxStatus("unavailable", f"the Python code tool is disabled: {problem}; to enable it, {ENABLE_HINT}")


@functools.lru_cache(maxsize=1)
def warn_unsandboxed(detail: str) -> None:
    """Say once per process (a logging warning) that submitted code runs without an OS sandbox: the user opted in
    with `ANYTOOL_UNSANDBOXED_CODE=1`; the first unsandboxed run, or a command that offers the code tool, says so."""
    logger.warning("warning: %s; only process limits apply, so do not use it on untrusted requests", detail)


def announce_code_tool(write: Callable[[str], Any]) -> None:
    """At the start of a command that runs the builtin catalog (`run`, `demo`): a note through `write` when the
    code tool is not offered here (and how to enable it), the warning when it runs unsandboxed (logged, once per
    process); nothing under bwrap. Other commands and `Catalog.builtin()` say nothing about it."""
    st = sandbox_status()
    if st.mode == "unsandboxed":
        warn_unsandboxed(st.detail)
    elif st.mode == "unavailable":
        write(f"note: {st.detail}\n")


# ------------------------------------------------------------------------------ running
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
    """Runs in the child between fork and exec: resource limits (inherited by bwrap and the code), and, in the
    unsandboxed mode only, a best-effort empty network namespace."""
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


def run_python(code: str, *, stdin: str = "", limits: SandboxLimits | None = None,
               status: SandboxStatus | None = None, interpreter: str | None = None,
               user: int | None = None) -> dict[str, Any]:
    """Run `code` as a script in the sandbox and report what happened.

    Raises `SandboxUnavailable` (with how to enable it) when there is no OS sandbox and unsandboxed execution was
    not allowed. `interpreter` and `user` (start bwrap as this uid) exist for tests and special deployments.
    """
    lim = limits or SandboxLimits()
    with _Runner(status, interpreter, user) as runner:
        proc = runner.launch("code", {"main.py": code, "bootstrap.py": _BOOTSTRAP}, lim, stdin=stdin)
        timed_out = runner.wait(proc, lim)
        return runner.report(proc, lim, timed_out)


def run_python_with_tests(code: str, tests: list[str], *, limits: SandboxLimits | None = None,
                          status: SandboxStatus | None = None) -> dict[str, Any]:
    """Run each test snippet against `code` (run afresh for each test) and report; the run report gains
    `verdicts`, `{index: (passed, error)}`.

    The code runs in one sandbox (a code server) and the tests in another (a tester), joined by one socket pair
    per test (`_sandbox_rpc.py`): a test operates on the code's objects through proxies, so every verdict comes
    from a process the code never ran in, and the tester's harness alone holds the descriptor the verdicts go to.
    The report's `stdout` is the code's output (from its first run), then the tests' own prints."""
    lim = limits or SandboxLimits()
    protocol = Path(__file__).with_name("_sandbox_rpc.py").read_text(encoding="utf-8")
    with _Runner(status, None, None) as runner:
        pairs = [socket.socketpair() for _ in tests]
        code_fds = [a.fileno() for a, _ in pairs]
        test_fds = [b.fileno() for _, b in pairs]
        verdict_path = runner.work / "verdicts.txt"
        verdict_fd = os.open(verdict_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            server = runner.launch("code", {"main.py": code, "bootstrap.py": _CODE_SERVER,
                                            "sandbox_rpc.py": protocol}, lim,
                                   pass_fds=code_fds, extra=(",".join(map(str, code_fds)),))
            tester = runner.launch("tests", {"bootstrap.py": _TESTER, "sandbox_rpc.py": protocol,
                                             **{f"test_{i}.py": t for i, t in enumerate(tests)}}, lim,
                                   pass_fds=(*test_fds, verdict_fd),
                                   extra=(str(verdict_fd), ",".join(map(str, test_fds))))
        finally:
            os.close(verdict_fd)
            for a, b in pairs:
                a.close()
                b.close()
        timed_out = runner.wait(tester, lim)
        runner.stop(server)
        report = runner.report(tester, lim, timed_out)
        code_report = runner.report(server, lim, False)
        report["stdout"] = (code_report["stdout"] + report["stdout"])[:lim.output_chars]
        report["stdout_truncated"] = report["stdout_truncated"] or code_report["stdout_truncated"]
        report["stderr"] = "\n".join(x for x in (code_report["stderr"], report["stderr"]) if x)
        report["verdicts"] = _read_verdicts(verdict_path)
    return report


class _Runner:
    """Sandboxed processes of one run, in one temporary directory; every one of them is killed on exit."""

    def __init__(self, status: SandboxStatus | None, interpreter: str | None, user: int | None) -> None:
        st = status or sandbox_status()
        if not st.available:
            raise SandboxUnavailable(st.detail)
        self.sandboxed = st.mode == "bwrap"
        if not self.sandboxed:
            warn_unsandboxed(st.detail)
        self.bwrap = shutil.which("bwrap") or "bwrap"
        self.user = _sandbox_user() if self.sandboxed and user is None else user
        self.interpreter = interpreter
        self._tmp = tempfile.TemporaryDirectory(prefix="anytool-sandbox-")
        self.work = Path(self._tmp.name)
        self._started: list[tuple[subprocess.Popen[bytes], str, float]] = []

    def __enter__(self) -> _Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            for proc, _, _ in self._started:
                self.stop(proc)
        finally:
            self._tmp.cleanup()

    def launch(self, name: str, files: Mapping[str, str], lim: SandboxLimits, *, stdin: str = "",
               pass_fds: Sequence[int] = (), extra: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
        """Start `bootstrap.py` of a new folder holding `files`, in its own sandbox (bwrap) or process."""
        code_dir = self.work / name
        code_dir.mkdir()
        for file_name, text in files.items():
            (code_dir / file_name).write_text(text, encoding="utf-8")
        (self.work / f"{name}.stdin").write_text(stdin, encoding="utf-8")
        _prepare_dirs(self.work, code_dir, self.user)
        if self.sandboxed:
            argv = bwrap_command(self.bwrap, self.interpreter or _interpreter(self.user), str(code_dir), lim, extra)
            cwd, unshare = Path("/"), None
        else:
            argv = [self.interpreter or sys.executable, "-I", "bootstrap.py", "-1", *extra]
            cwd, unshare = code_dir, _unshare_fn()
        with ((self.work / f"{name}.stdin").open("rb") as fin, (self.work / f"{name}.out").open("wb") as fout,
              (self.work / f"{name}.err").open("wb") as ferr):
            proc = subprocess.Popen(
                argv, stdin=fin, stdout=fout, stderr=ferr, cwd=cwd, env={}, close_fds=True, pass_fds=tuple(pass_fds),
                start_new_session=True, preexec_fn=lambda: _preexec(lim, unshare), user=self.user, group=self.user,
                extra_groups=[] if self.user is not None else None,
            )
        self._started.append((proc, name, time.monotonic()))
        return proc

    def wait(self, proc: subprocess.Popen[bytes], lim: SandboxLimits) -> bool:
        """Wait for `proc` up to the wall-clock limit, then end its process group; whether it timed out."""
        try:
            proc.wait(timeout=lim.timeout_s)
            return False
        except subprocess.TimeoutExpired:
            return True
        finally:
            self.stop(proc)

    @staticmethod
    def stop(proc: subprocess.Popen[bytes]) -> None:
        # The whole group: bwrap's death tears down the sandbox's PID namespace (every process in it).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def report(self, proc: subprocess.Popen[bytes], lim: SandboxLimits, timed_out: bool) -> dict[str, Any]:
        """What `proc` printed and how it ended."""
        name, started = next((n, t) for p, n, t in self._started if p is proc)
        stdout, out_trunc = _read_capped(self.work / f"{name}.out", lim.output_chars)
        stderr, err_trunc = _read_capped(self.work / f"{name}.err", lim.output_chars)
        code_ = proc.returncode
        sig = ""
        if code_ is not None and code_ < 0:
            try:
                sig = signal.Signals(-code_).name
            except ValueError:
                sig = f"signal {-code_}"
        elif self.sandboxed and code_ is not None and code_ > 128:  # bwrap reports a killed child as 128 + signal
            with contextlib.suppress(ValueError):
                sig = signal.Signals(code_ - 128).name
        if timed_out:
            stderr += f"\n[sandbox] killed after the {lim.timeout_s:g}s wall-clock limit"
        elif sig == "SIGXCPU":
            stderr += f"\n[sandbox] killed after the {lim.cpu_s}s CPU-time limit"
        return {"stdout": stdout, "stderr": stderr.strip("\n"), "exit_code": code_, "timed_out": timed_out,
                "signal": sig, "duration_s": round(time.monotonic() - started, 3), "stdout_truncated": out_trunc,
                "stderr_truncated": err_trunc}


def _read_verdicts(path: Path) -> dict[int, tuple[bool, str]]:
    """The harness's verdict lines `[index, passed, error]` (it alone writes this file)."""
    out: dict[int, tuple[bool, str]] = {}
    with path.open("rb") as fh:
        raw = fh.read(1 << 20)
    for line in raw.decode("utf-8", "replace").splitlines():
        with contextlib.suppress(ValueError, TypeError):
            index, passed, error = json.loads(line)
            out[int(index)] = (passed is True, str(error))
    return out
