"""Worker processes for local calls that can run long: a timeout kills the worker, so no CPU keeps burning.

A thread cannot be stopped from outside: `asyncio.wait_for` on a thread returns at the timeout while the thread
computes on (and a big-integer operation holds the GIL, so every other thread stops with it). `WorkerPool.call`
runs a picklable callable in a long-lived worker process (warm caches, no start-up cost per call); when the call
overruns its timeout the worker is killed and a fresh one is started for the next call. Each call also gets an
RLIMIT_CPU budget of its own (the worker's CPU time so far plus `cpu_seconds`), and the worker an address-space
limit (RLIMIT_AS, `memory_bytes`): a call that asks for more gets a MemoryError, reported as an error, and the
worker is replaced.

A worker is a fresh, isolated interpreter (`python -I -S`, see `worker_command`) whose main module is our own
bootstrap (`_BOOT`), never the user's `__main__` (multiprocessing's `spawn` and `forkserver` start methods
re-import the parent's main script in the child, which runs a script without an `if __name__ == "__main__":`
guard a second time: issue 19). Isolated means: no current directory on `sys.path`, no PYTHON* environment
variables, no user site directory (issue 28: a `multiprocessing/` or `json/` folder in the directory the user runs
from must never be imported). The bootstrap then builds the worker's path itself: the standard
library first, then the folder holding this `langgraph_anytool` package (passed on the command line), then the
parent's absolute `sys.path` entries (so a callable's module imports as it does in the parent; relative entries
such as the `''` of `python -c` are dropped), then the worker's own site-packages. It talks to the parent over a
socket pair with `multiprocessing.connection.Connection` (pickled messages).
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where a worker starts: a run that calls no local tool does not pay for it
    from multiprocessing.connection import Connection

DEFAULT_MEMORY_BYTES = 1 << 30  # each worker's address-space limit: 1 GiB


class WorkerDied(RuntimeError):
    """The worker process ended without answering (killed by a resource limit, crashed)."""


# The worker's main module (run by `python -I -S -c`): note the standard library's entries, add the site
# directories, connect, then put together the path described in the module docs before importing anything of ours.
_BOOT = ("import os\n"
         "import sys\n"
         "stdlib = list(sys.path)\n"
         "import site\n"
         "site.main()\n"
         "own = list(sys.path)\n"
         "from multiprocessing.connection import Connection\n"
         "conn = Connection(int(sys.argv[1]))\n"
         "path = []\n"
         "for entry in (*stdlib, sys.argv[2], *conn.recv(), *own):\n"
         "    if isinstance(entry, str) and os.path.isabs(entry) and entry not in path:\n"
         "        path.append(entry)\n"
         "sys.path[:] = path\n"
         "from langgraph_anytool.tools.executors.worker_pool import serve\n"
         "serve(conn, int(sys.argv[3]), int(sys.argv[4]))\n")


def package_root() -> str:
    """The folder that holds this `langgraph_anytool` package (the worker puts it on its path explicitly)."""
    return str(Path(__file__).resolve().parents[3])


def worker_command(fd: int, cpu_seconds: int, memory_bytes: int) -> list[str]:
    """The worker's command line: an isolated interpreter (`-I`: no current directory or script folder on
    `sys.path`, no PYTHON* variables, no user site; `-S`: the site directories are added by `_BOOT` once it has
    noted the standard library's entries) running `_BOOT`."""
    return [sys.executable, "-I", "-S", "-c", _BOOT, str(fd), package_root(), str(cpu_seconds), str(memory_bytes)]


def _limit_memory(memory_bytes: int) -> None:
    import resource

    if memory_bytes > 0:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))


def _cpu_budget(cpu_seconds: int) -> None:
    """Allow the next call `cpu_seconds` of CPU time from now (RLIMIT_CPU counts the process's whole life)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(usage.ru_utime + usage.ru_stime) + cpu_seconds
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.RLIM_INFINITY))


def serve(conn: Connection, cpu_seconds: int, memory_bytes: int = 0) -> None:
    """Worker main loop: a callable in (its module is imported: not timed), "ready" out, then kwargs in and
    ("ok", value) or ("error", exception) out; None or a closed connection ends it. A call that runs out of
    memory is answered, then the worker ends (the next call gets a fresh one)."""
    _limit_memory(memory_bytes)
    # Ctrl-C in a terminal reaches the whole process group: the parent stops its workers itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        fn = message
        conn.send(("ready", None))
        try:
            kwargs = conn.recv()
        except (EOFError, OSError):
            return
        _cpu_budget(cpu_seconds)
        out_of_memory = False
        try:
            reply: tuple[str, Any] = ("ok", fn(**kwargs))
        except MemoryError:
            out_of_memory = True
            reply = ("error", MemoryError(f"the call needed more than the worker's memory limit "
                                          f"({memory_bytes // (1 << 20)} MB)"))
        except Exception as exc:
            reply = ("error", exc)
        try:
            conn.send(reply)
        except Exception as exc:  # an unpicklable value or exception: say what it was
            conn.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
        if out_of_memory:
            return


class _Worker:
    def __init__(self, cpu_seconds: int, memory_bytes: int) -> None:
        ours, theirs = socket.socketpair()
        try:
            self.process = subprocess.Popen(worker_command(theirs.fileno(), cpu_seconds, memory_bytes),
                                            stdin=subprocess.DEVNULL, pass_fds=(theirs.fileno(),), close_fds=True)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        from multiprocessing.connection import Connection

        self.conn = Connection(ours.detach())
        self.conn.send(list(sys.path))

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.process.kill()
        with contextlib.suppress(Exception):
            self.process.wait(5)
        self.conn.close()

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.send(None)
        try:
            self.process.wait(1)
        except subprocess.TimeoutExpired:
            self.kill()
        self.conn.close()


def _shutdown(idle: list[_Worker], busy: set[_Worker]) -> None:
    """Kill every worker still listed (a pool that was never closed: at garbage collection or interpreter exit)."""
    for w in [*idle, *busy]:
        w.kill()
    idle.clear()
    busy.clear()


class WorkerPool:
    """Up to `max_workers` worker processes, started on demand and reused; `call` blocks (use a thread)."""

    def __init__(self, max_workers: int = 2, *, cpu_seconds: int = 600, memory_bytes: int = DEFAULT_MEMORY_BYTES,
                 startup_timeout: float = 120.0) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self._cpu_seconds = cpu_seconds
        self._memory_bytes = memory_bytes  # RLIMIT_AS of each worker (0: none)
        self._startup_timeout = startup_timeout  # starting a worker and importing the callable's module
        self._slots = threading.BoundedSemaphore(max_workers)
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._closed = False
        weakref.finalize(self, _shutdown, self._idle, self._busy)

    def _take(self) -> _Worker:
        with self._lock:
            if self._closed:
                raise RuntimeError("the worker pool is closed")
            while self._idle:
                worker = self._idle.pop()
                if worker.alive:
                    self._busy.add(worker)
                    return worker
                worker.kill()
        worker = _Worker(self._cpu_seconds, self._memory_bytes)
        with self._lock:
            self._busy.add(worker)
        return worker

    def _give_back(self, worker: _Worker, healthy: bool) -> None:
        with self._lock:
            self._busy.discard(worker)
            if healthy and not self._closed:
                self._idle.append(worker)
                return
        worker.kill()

    def call(self, fn: Callable[..., Any], kwargs: dict[str, Any], timeout: float | None) -> Any:
        """`fn(**kwargs)` in a worker. Raises TimeoutError (the worker is killed), the call's own exception, or
        `WorkerDied`."""
        with self._slots:
            worker = self._take()
            healthy = False
            try:
                worker.conn.send(fn)
                if not worker.conn.poll(self._startup_timeout):
                    raise WorkerDied(f"the worker process did not start within {self._startup_timeout:g} s")
                try:
                    worker.conn.recv()
                except (EOFError, OSError):
                    raise WorkerDied("the worker process could not load the API's implementation") from None
                worker.conn.send(kwargs)
                if not worker.conn.poll(timeout):
                    raise TimeoutError(f"the call did not finish within {timeout:g} s; its process was killed")
                try:
                    status, value = worker.conn.recv()
                except (EOFError, OSError):
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        worker.process.wait(1)
                    code = worker.process.returncode
                    raise WorkerDied(f"the worker process ended without an answer (exit code {code})") from None
                healthy = not isinstance(value, MemoryError)  # that worker ends: the next call gets a fresh one
            finally:
                self._give_back(worker, healthy)
        if status == "error":
            raise value
        return value

    def pids(self) -> list[int]:
        """Process ids of the live workers (for tests and monitoring)."""
        with self._lock:
            return [w.process.pid for w in [*self._idle, *self._busy] if w.process.pid is not None]

    def close(self) -> None:
        """Stop every worker (busy ones are killed)."""
        with self._lock:
            self._closed = True
            idle, busy = list(self._idle), list(self._busy)
            self._idle.clear()
            self._busy.clear()
        for w in idle:
            w.stop()
        for w in busy:
            w.kill()
