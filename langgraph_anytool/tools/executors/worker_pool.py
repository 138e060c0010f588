"""Worker processes for local calls that can run long: a timeout kills the worker, so no CPU keeps burning.

A thread cannot be stopped from outside: `asyncio.wait_for` on a thread returns at the timeout while the thread
computes on. `WorkerPool.call` runs a picklable callable in a long-lived worker process (warm caches, no start-up
cost per call); when the call overruns its timeout the worker is killed and a fresh one is started for the next
call. The workers also carry an RLIMIT_CPU backstop. Processes come from the `forkserver` start method (never a
`fork` of a threaded process), falling back to `spawn`.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any


class WorkerDied(RuntimeError):
    """The worker process ended without answering (killed by a resource limit, crashed)."""


def _serve(conn: Connection, cpu_seconds: int) -> None:
    """Worker main loop: a callable in (its module is imported: not timed), "ready" out, then kwargs in and
    ("ok", value) or ("error", exception) out; None ends it."""
    import resource

    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
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
        try:
            reply: tuple[str, Any] = ("ok", fn(**kwargs))
        except Exception as exc:
            reply = ("error", exc)
        try:
            conn.send(reply)
        except Exception as exc:  # an unpicklable value or exception: say what it was
            conn.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))


@contextlib.contextmanager
def _importable_main() -> Iterator[None]:
    """While a worker starts: hide a `__main__.__file__` that is no file (`python -` reads '<stdin>'), which the
    child would otherwise try to re-run and fail on; workers never need the parent's main module."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not isinstance(path, str) or os.path.exists(path):
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


class _Worker:
    def __init__(self, ctx: Any, cpu_seconds: int) -> None:
        self.conn, child = ctx.Pipe(duplex=True)
        self.process = ctx.Process(target=_serve, args=(child, cpu_seconds), daemon=True)
        with _importable_main():
            self.process.start()
        child.close()

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.process.kill()
        self.process.join(5)
        self.conn.close()

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.send(None)
        self.process.join(1)
        if self.process.is_alive():
            self.kill()
        self.conn.close()


class WorkerPool:
    """Up to `max_workers` worker processes, started on demand and reused; `call` blocks (use a thread)."""

    def __init__(self, max_workers: int = 2, *, cpu_seconds: int = 600, startup_timeout: float = 120.0) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        methods = multiprocessing.get_all_start_methods()
        self._ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        self._cpu_seconds = cpu_seconds
        self._startup_timeout = startup_timeout  # starting a worker and importing the callable's module
        self._slots = threading.BoundedSemaphore(max_workers)
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._closed = False

    def _take(self) -> _Worker:
        with self._lock:
            if self._closed:
                raise RuntimeError("the worker pool is closed")
            while self._idle:
                worker = self._idle.pop()
                if worker.process.is_alive():
                    self._busy.add(worker)
                    return worker
                worker.kill()
        worker = _Worker(self._ctx, self._cpu_seconds)
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
                    code = worker.process.exitcode
                    raise WorkerDied(f"the worker process ended without an answer (exit code {code})") from None
                healthy = True
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
            idle, busy = self._idle, list(self._busy)
            self._idle, self._busy = [], set()
        for w in idle:
            w.stop()
        for w in busy:
            w.kill()
