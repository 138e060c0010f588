"""Run APIs implemented as Python callables (the builtin offline toolset, user functions).

A callable receives the validated arguments as keyword arguments. Sync callables run in a worker
thread (`asyncio.to_thread`); async ones are awaited. Outcome mapping:
- a return value → `OK` with it as content (an `Observation` returned by the callable is passed on);
- `ValueError` or `KeyError` (by default; see `invalid_input_errors`) → `REJECTED`: builtin
  implementations raise these for inputs that pass type checks but make no sense (an unknown
  currency code, an impossible date): the API received the call and refused the value, and the model may
  change its arguments (unlike `INVALID_ARGUMENTS`, our schema check's refusal before any call, this is not a
  malformed turn);
- any other exception → `ERROR` with "<ExcType>: message"; exceeding `timeout` → `TIMEOUT`;
- no implementation for the API id → `NOT_FOUND`.

APIs listed in `isolated` (those that can run long on some inputs) run in worker processes (`WorkerPool`): at the
timeout the worker is killed, so the call really stops, and a call that holds the GIL (a big-integer power) stops
nothing else; each worker has an address-space limit (`isolated_memory_bytes`, 1 GiB by default). Their callables
must be picklable (module-level). The builtin toolset runs every API this way but the code-running ones.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from typing import Any

from ...catalog.models import Api
from ..observation import Observation, Status
from .worker_pool import DEFAULT_MEMORY_BYTES, WorkerDied, WorkerPool


def exception_text(exc: BaseException) -> str:
    """"<ExcType>: message" (KeyError's repr-quoted message is unquoted)."""
    msg = exc.args[0] if isinstance(exc, KeyError) and len(exc.args) == 1 else str(exc)
    return f"{type(exc).__name__}: {msg}" if str(msg) else type(exc).__name__


class LocalExecutor:
    """Executes `implementations[api.id](**arguments)`."""

    name = "local"

    def __init__(
        self,
        implementations: Mapping[str, Callable[..., Any]],
        *,
        timeout: float | None = 60.0,
        invalid_input_errors: tuple[type[BaseException], ...] = (ValueError, KeyError),
        isolated: Collection[str] = (),
        isolated_timeout: float | None = None,
        isolated_memory_bytes: int = DEFAULT_MEMORY_BYTES,
        workers: int = 2,
    ) -> None:
        self._impls = dict(implementations)
        self.timeout = timeout
        self.invalid_input_errors = invalid_input_errors
        self.isolated = frozenset(isolated)
        self.isolated_timeout = isolated_timeout if isolated_timeout is not None else timeout
        self.isolated_memory_bytes = isolated_memory_bytes
        self._workers = workers
        self._pool: WorkerPool | None = None
        self._pool_lock = threading.Lock()

    def _worker_pool(self) -> WorkerPool:
        with self._pool_lock:
            if self._pool is None:
                cpu = int(self.isolated_timeout or 600) + 1
                self._pool = WorkerPool(self._workers, cpu_seconds=cpu, memory_bytes=self.isolated_memory_bytes)
            return self._pool

    def __contains__(self, api_id: object) -> bool:
        return api_id in self._impls

    @property
    def api_ids(self) -> list[str]:
        return list(self._impls)

    async def _run(self, fn: Callable[..., Any], arguments: dict[str, Any]) -> Any:
        if inspect.iscoroutinefunction(fn):
            return await fn(**arguments)
        result = await asyncio.to_thread(fn, **arguments)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def aexecute(self, api: Api, arguments: dict[str, Any]) -> Observation:
        fn = self._impls.get(api.id)
        if fn is None:
            return Observation(api_id=api.id, status=Status.NOT_FOUND,
                               error=f"no local implementation for API {api.id!r}")
        try:
            if api.id in self.isolated:
                result = await asyncio.to_thread(self._worker_pool().call, fn, dict(arguments), self.isolated_timeout)
            elif self.timeout is None:
                result = await self._run(fn, dict(arguments))
            else:
                result = await asyncio.wait_for(self._run(fn, dict(arguments)), self.timeout)
        except TimeoutError:
            limit = self.isolated_timeout if api.id in self.isolated else self.timeout
            stopped = " (its worker process was killed)" if api.id in self.isolated else ""
            return Observation(api_id=api.id, status=Status.TIMEOUT,
                               error=f"the call did not finish within {limit:g} s{stopped}")
        except WorkerDied as e:
            return Observation(api_id=api.id, status=Status.ERROR, error=str(e))
        except self.invalid_input_errors as e:
            return Observation(api_id=api.id, status=Status.REJECTED, error=exception_text(e))
        except Exception as e:
            return Observation(api_id=api.id, status=Status.ERROR, error=exception_text(e))
        if isinstance(result, Observation):
            return replace(result, api_id=api.id)
        return Observation(api_id=api.id, status=Status.OK, content=result)

    async def aclose(self) -> None:
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.close)
