"""The API execution pipeline: resolve → validate → cache → execute (bounded) → measure → store.

Every outcome is an `Observation`; nothing raises into the caller (unknown API → NOT_FOUND, bad
arguments → INVALID_ARGUMENTS with what to fix, nothing sent; an API's own refusal of a value → REJECTED; other
executor failures → their status, anything unexpected → ERROR). Executors are chosen per API id, then per tool id ("Category/tool_key"), then
per category among the `overrides`, then among the executors the catalog's loader bound (LangChain and MCP
tools, merged builtin APIs; unless `use_catalog_executors=False`), then the required `default`.

Use `acall` from async code. `call` is the blocking form: it resolves, validates and looks up the
cache in the calling thread, and runs executors on a private event loop in a background thread (one
per pipeline, so loop-bound executor resources stay valid between calls). It works with or without a
running loop in the calling thread, but inside a running loop it blocks that loop for the whole
call: there, use `acall`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import weakref
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..catalog.errors import UnknownNameError
from ..catalog.models import Api
from .binding import BoundExecutors
from .cache import ResponseCache
from .executors import make_executor
from .executors.base import Executor, cap_observation
from .executors.bounded_read import DEFAULT_MAX_RESPONSE_BYTES
from .observation import Observation, Status
from .validation import invalid_arguments_observation, validate_arguments

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from ..catalog.catalog import Catalog

T = TypeVar("T")


async def _cancel_pending() -> None:
    current = asyncio.current_task()
    pending = [t for t in asyncio.all_tasks() if t is not current]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=2)


class _LoopThread:
    """A private event loop in a daemon thread, for the blocking API."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="anytool-api-executor", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        fut: Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return fut.result()

    def stop(self) -> None:
        """Cancel what still runs on the loop (a caller blocked in `run` then gets CancelledError instead of
        waiting forever on a stopped loop: a batch stopped by a storage fault must end), then stop it."""
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(_cancel_pending(), self.loop).result(timeout=5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        if not self.thread.is_alive():
            self.loop.close()


class ApiExecutor:
    """Runs API calls for a catalog through validation, an optional cache and the chosen executors.

    `max_concurrency` bounds executor calls per event loop (the blocking `call` uses the pipeline's
    own loop, so it has its own bound); cache hits and rejected calls do not count against it.
    """

    def __init__(
        self,
        catalog: Catalog,
        *,
        default: Executor,
        overrides: Mapping[str, Executor] | None = None,
        cache: ResponseCache | None = None,
        max_concurrency: int = 16,
        max_observation_chars: int = 2048,
        use_catalog_executors: bool = True,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.catalog = catalog
        self.default = default
        self.overrides: dict[str, Executor] = dict(overrides or {})
        self.cache = cache
        self.max_concurrency = max_concurrency
        self.max_observation_chars = max_observation_chars
        self.max_response_bytes = max_response_bytes  # every executor's content is cut there (cap_observation)
        self.use_catalog_executors = use_catalog_executors
        self._bindings = BoundExecutors()  # the catalog's bindings as executors (made once each)
        self._owns_cache = False
        self._lock = threading.Lock()
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary())
        self._runner: _LoopThread | None = None
        self._counts: Counter[str] = Counter()
        self._statuses: Counter[str] = Counter()
        self._last_cache_failure = ""

    @classmethod
    def for_catalog(
        cls,
        catalog: Catalog,
        *,
        kind: str,
        cache_path: str | Path | None = None,
        cache_errors: bool = False,
        max_concurrency: int = 16,
        max_observation_chars: int = 2048,
        **executor_options: Any,
    ) -> ApiExecutor:
        """A pipeline whose default executor is `make_executor(kind, **executor_options)`.

        `kind="auto"`: each API runs on the executor its catalog bound (LangChain / MCP tools), the rest locally
        for the builtin catalog and over HTTP otherwise. Any other kind runs every API that way (e.g. "template"
        simulates even bound tools). `cache_path` = a SQLite file (or ":memory:"); None = no cache. The pipeline
        owns that cache.
        """
        auto = kind.strip().lower() == "auto"
        if auto:
            kind = "local" if catalog.name == "builtin" else "http"
        if kind.strip().lower() == "http":
            executor_options.setdefault("catalog", catalog)  # tool base URLs (an OpenAPI spec's `servers`)
        cache = ResponseCache(cache_path, cache_errors=cache_errors) if cache_path is not None else None
        pipe = cls(catalog, default=make_executor(kind, **executor_options), cache=cache,
                   max_concurrency=max_concurrency, max_observation_chars=max_observation_chars,
                   use_catalog_executors=auto)
        pipe._owns_cache = cache is not None
        return pipe

    def __repr__(self) -> str:
        return (f"ApiExecutor({self.catalog!r}, default={self.default.name}, overrides={len(self.overrides)}, "
                f"cache={self.cache!r})")

    # ------------------------------------------------------------ routing
    def executor_for(self, api: Api) -> Executor:
        """The override for the API id, else for its tool id, else for its category, else the executor the
        catalog bound to the API, else the default."""
        for key in (api.id, f"{api.category}/{api.tool_key}", api.category):
            ex = self.overrides.get(key)
            if ex is not None:
                return ex
        if self.use_catalog_executors:
            bound = self.catalog.executor_for(api)
            if bound is not None:
                return self._bindings.executor(bound)
        return self.default

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        with self._lock:
            sem = self._semaphores.get(loop)
            if sem is None:
                sem = self._semaphores[loop] = asyncio.Semaphore(self.max_concurrency)
            return sem

    # ------------------------------------------------------------ calls
    async def acall(self, api_id: str, arguments: Any = None) -> Observation:
        """Call one API; always returns an Observation."""
        start = time.perf_counter()
        try:
            prepared = self._prepare(api_id, arguments)
            if isinstance(prepared, Observation):
                obs = prepared
            else:
                api, args = prepared
                obs = await self._acached(api, args) or await self._execute(api, args)
        except Exception as e:  # the pipeline never raises into the graph
            obs = self._internal_error(api_id, e)
        return self._finish(obs, start)

    def call(self, api_id: str, arguments: Any = None) -> Observation:
        """Blocking `acall` (see the module docstring about running loops).

        Resolution, validation and the cache lookup run in the calling thread; only a miss is handed
        to the pipeline's loop thread for execution.
        """
        start = time.perf_counter()
        try:
            prepared = self._prepare(api_id, arguments)
            if isinstance(prepared, Observation):
                obs = prepared
            else:
                api, args = prepared
                obs = self._cached(api, args) or self._run_blocking(self._execute(api, args))
        except Exception as e:
            obs = self._internal_error(api_id, e)
        return self._finish(obs, start)

    def _prepare(self, api_id: str, arguments: Any) -> Observation | tuple[Api, dict[str, Any]]:
        """The API and validated arguments, or the NOT_FOUND / INVALID_ARGUMENTS observation."""
        try:
            api = self.catalog.api(api_id)
        except UnknownNameError:
            return Observation(api_id=str(api_id), status=Status.NOT_FOUND,
                               error=f"unknown API {api_id!r}: it is not in the catalog")
        checked = validate_arguments(api, arguments)
        if not checked.ok:
            return invalid_arguments_observation(api, checked)
        return api, checked.arguments

    def _cached(self, api: Api, args: dict[str, Any]) -> Observation | None:
        if self.cache is None or not api.deterministic:  # clock, randomness, sandboxed code: always fresh
            return None
        try:
            return self.cache.get(api.id, args)
        except Exception as e:  # a broken cache must not fail the call: treat as a miss
            self._note_cache_failure(e)
            return None

    async def _acached(self, api: Api, args: dict[str, Any]) -> Observation | None:
        if self.cache is None or not api.deterministic:
            return None
        try:
            return await self.cache.aget(api.id, args)
        except Exception as e:
            self._note_cache_failure(e)
            return None

    async def _execute(self, api: Api, args: dict[str, Any]) -> Observation:
        """Run the executor under the concurrency bound, then store the result in the cache."""
        executor = self.executor_for(api)
        async with self._semaphore():
            with self._lock:
                self._counts["executed"] += 1
            try:
                obs = await executor.aexecute(api, args)
            except Exception as e:  # an executor broke its contract: report, do not raise
                obs = Observation(api_id=api.id, status=Status.ERROR,
                                  error=f"{type(e).__name__}: {e}", meta={"executor": executor.name})
        if not isinstance(obs, Observation):
            obs = Observation(api_id=api.id, status=Status.ERROR,
                              error=f"executor {executor.name!r} returned {type(obs).__name__}, not an Observation")
        obs = cap_observation(replace(obs, api_id=api.id, cached=False), self.max_response_bytes)
        if self.cache is not None and api.deterministic:  # non-deterministic answers are never stored
            try:
                await self.cache.aput(api.id, args, obs)
            except Exception as e:
                self._note_cache_failure(e)
        return obs

    @staticmethod
    def _internal_error(api_id: str, exc: Exception) -> Observation:
        return Observation(api_id=str(api_id), status=Status.ERROR,
                           error=f"internal error while calling the API: {type(exc).__name__}: {exc}")

    def _finish(self, obs: Observation, start: float) -> Observation:
        obs = replace(obs, latency_ms=(time.perf_counter() - start) * 1000.0)
        self._record(obs)
        return obs

    def _note_cache_failure(self, exc: Exception) -> None:
        with self._lock:
            self._counts["cache_failures"] += 1
            self._last_cache_failure = f"{type(exc).__name__}: {exc}"

    async def acall_function(self, function_name: str, arguments: Any = None) -> Observation:
        """Call by the model-facing function name (`catalog.function_name(api_id)`)."""
        try:
            api = self.catalog.api_for_function(function_name)
        except UnknownNameError:
            return self._unknown_function(function_name)
        return await self.acall(api.id, arguments)

    def call_function(self, function_name: str, arguments: Any = None) -> Observation:
        """Blocking `acall_function`."""
        try:
            api = self.catalog.api_for_function(function_name)
        except UnknownNameError:
            return self._unknown_function(function_name)
        return self.call(api.id, arguments)

    def _unknown_function(self, function_name: str) -> Observation:
        obs = Observation(api_id=str(function_name), status=Status.NOT_FOUND,
                          error=f"unknown function {function_name!r}: call one of the functions you were given")
        self._record(obs)
        return obs

    def _run_blocking(self, coro: Coroutine[Any, Any, Observation]) -> Observation:
        with self._lock:
            if self._runner is None:
                self._runner = _LoopThread()
            runner = self._runner
        if threading.current_thread() is runner.thread:
            coro.close()
            raise RuntimeError("ApiExecutor.call() was used on the pipeline's own loop thread; await acall() instead")
        return runner.run(coro)

    def render(self, obs: Observation) -> str:
        """The observation as the model sees it (compact JSON, truncated with a marker)."""
        return obs.for_model(self.max_observation_chars)

    # ------------------------------------------------------------ statistics
    def _record(self, obs: Observation) -> None:
        with self._lock:
            self._counts["calls"] += 1
            if obs.cached:
                self._counts["cache_hits"] += 1
            if obs.simulated:
                self._counts["simulated"] += 1
            self._statuses[obs.status.value] += 1

    @property
    def stats(self) -> dict[str, Any]:
        """calls, cache_hits, executed (reached an executor), simulated, and counts by status."""
        with self._lock:
            statuses = dict(self._statuses)
            return {
                "calls": self._counts["calls"],
                "cache_hits": self._counts["cache_hits"],
                "executed": self._counts["executed"],
                "simulated": self._counts["simulated"],
                "cache_failures": self._counts["cache_failures"],
                "by_status": statuses,
                "errors": {k: v for k, v in statuses.items() if k != Status.OK.value},
            }

    def reset_stats(self) -> None:
        with self._lock:
            self._counts.clear()
            self._statuses.clear()

    # ------------------------------------------------------------ lifecycle
    async def aclose(self) -> None:
        """Close every executor (once each) and a cache created by `for_catalog`."""
        seen: set[int] = set()
        for ex in (self.default, *self.overrides.values(), *self._bindings.made()):
            if id(ex) not in seen:
                seen.add(id(ex))
                await ex.aclose()
        if self._owns_cache and self.cache is not None:
            self.cache.close()

    def __enter__(self) -> ApiExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Blocking `aclose`, then stop the private loop thread."""
        with self._lock:
            runner, self._runner = self._runner, None
        runner = runner or _LoopThread()  # works whether or not this thread runs a loop
        try:
            runner.run(self.aclose())
        finally:
            runner.stop()
