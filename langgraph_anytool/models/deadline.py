"""Deadlines no server can stretch: every network read of a model call, a discovery request or a token count is
bounded by the time its call has left, whatever the server sends meanwhile.

An HTTP client's timeouts are per read: a server that sends a byte (an SSE `: keepalive` comment, a blank line, one
byte of a `/props` body) before each read times out keeps a request alive for ever. Here the limits of the call in
flight (`ReadLimits`: an absolute deadline, and for a streamed call `stall` seconds without a *token*) live in a
context variable set by the caller (`bounded`); `install` puts a network backend into an httpx client's connection
pools whose every connect, read and write is cut to what those limits leave, and fails with httpcore's own timeout
error once nothing is left. The client's exception mapping then raises the ordinary `httpx.ReadTimeout` (openai's
`APITimeoutError`), which `call_role` tells apart by the time the run has left. Outside `bounded` the backend
changes nothing, so a client shared with other code keeps its own behaviour.

httpx is the HTTP stack of the OpenAI, Groq, Anthropic and Ollama clients; `clients_of` finds a chat model's
synchronous clients (its `root_client`, `client`, `http_client` and their inner `_client`), and with
`asynchronous=True` its asynchronous ones (`root_async_client`, `async_client`, ...): what `ainvoke` / `astream`
read through, e.g. an LLM-simulated API call (tools/executors/llm_sim.py) or an application's own async calls.
`install` bounds both kinds of pool alike (`BoundedBackend`, `AsyncBoundedBackend`); the limits are context
variables, so they hold in a task or a thread started from the bounded context (asyncio copies the context into
a task, `run_coroutine_threadsafe` and `to_thread` included).
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import time
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, cast

import httpcore
import httpx

from .profiles import unwrap


@dataclass
class ReadLimits:
    """The limits of one call's reads: `deadline` (epoch seconds, None: none) and `stall` (seconds a streamed reply
    may go without a token, counted from `progress`: the call's start, then its last token)."""

    deadline: float | None = None
    stall: float | None = None
    progress: float = field(default_factory=time.time)

    def left(self) -> tuple[float, str] | None:
        """Seconds the next read may wait and which limit sets it (None: no limit)."""
        now = time.time()
        bounds: list[tuple[float, str]] = []
        if self.deadline is not None:
            bounds.append((self.deadline - now, "the run's time limit"))
        if self.stall is not None:
            bounds.append((self.progress + self.stall - now, f"no reply token for {self.stall:g} s"))
        return min(bounds) if bounds else None

    def token(self) -> None:
        """A reply token came: the stall is counted from now."""
        self.progress = time.time()


HTTPX_FAMILIES = ("httpx", "httpx2")  # httpx, and the fork recent openai clients use
HTTPCORE_FAMILIES = ("httpcore", "httpcore2")
_LIMITS: ContextVar[ReadLimits | None] = ContextVar("anytool_read_limits", default=None)


def current() -> ReadLimits | None:
    """The limits of the call in flight in this context (None: unbounded)."""
    return _LIMITS.get()


@contextlib.contextmanager
def bounded(deadline: float | None = None, stall: float | None = None, *,
            within: float | None = None) -> Iterator[ReadLimits]:
    """Bound every read made in this context by `deadline` (epoch seconds), by `within` seconds from now, and for
    a stream by `stall` seconds without a token; an outer bound's deadline still holds (the earliest wins)."""
    outer = _LIMITS.get()
    ends = [d for d in (deadline, None if within is None else time.time() + within,
                        None if outer is None else outer.deadline) if d is not None]
    limits = ReadLimits(min(ends) if ends else None, stall)
    token = _LIMITS.set(limits)
    try:
        yield limits
    finally:
        _LIMITS.reset(token)


def _cut(timeout: float | None, error: type[Exception]) -> float | None:
    """`timeout` cut to what the current limits leave; `error` once nothing is left."""
    limits = _LIMITS.get()
    if limits is None:
        return timeout
    left = limits.left()
    if left is None:
        return timeout
    seconds, why = left
    if seconds <= 0:
        raise error(f"read cut: {why}")
    return seconds if timeout is None else min(timeout, seconds)


def _errors(backend: Any) -> tuple[type[Exception], type[Exception], type[Exception]]:
    """The (read, write, connect) timeout errors of the httpcore family a backend belongs to: `httpcore`, or the
    `httpcore2` fork that recent openai clients run on (its httpx maps only its own)."""
    family = type(backend).__module__.split(".")[0]
    module = sys.modules.get(family) if family in HTTPCORE_FAMILIES else None
    module = module if module is not None else httpcore
    return module.ReadTimeout, module.WriteTimeout, module.ConnectTimeout


class _BoundedStream:
    """A connection whose every read and write waits at most what the current limits leave."""

    def __init__(self, inner: Any, errors: tuple[type[Exception], type[Exception], type[Exception]]) -> None:
        self._inner = inner
        self._errors = errors

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return cast(bytes, self._inner.read(max_bytes, _cut(timeout, self._errors[0])))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _cut(timeout, self._errors[1]))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
        return _BoundedStream(self._inner.start_tls(ssl_context, server_hostname, _cut(timeout, self._errors[2])),
                              self._errors)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _AsyncBoundedStream:
    """An async connection whose every read and write waits at most what the current limits leave."""

    def __init__(self, inner: Any, errors: tuple[type[Exception], type[Exception], type[Exception]]) -> None:
        self._inner = inner
        self._errors = errors

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return cast(bytes, await self._inner.read(max_bytes, _cut(timeout, self._errors[0])))

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, _cut(timeout, self._errors[1]))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                        timeout: float | None = None) -> Any:
        inner = await self._inner.start_tls(ssl_context, server_hostname, _cut(timeout, self._errors[2]))
        return _AsyncBoundedStream(inner, self._errors)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class AsyncBoundedBackend:
    """An async httpcore (or httpcore2) network backend with every connection bounded by the current limits."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._errors = _errors(inner)

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> _AsyncBoundedStream:
        inner = await self._inner.connect_tcp(host, port, _cut(timeout, self._errors[2]), local_address,
                                              socket_options)
        return _AsyncBoundedStream(inner, self._errors)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> _AsyncBoundedStream:
        inner = await self._inner.connect_unix_socket(path, _cut(timeout, self._errors[2]), socket_options)
        return _AsyncBoundedStream(inner, self._errors)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class BoundedBackend:
    """An httpcore (or httpcore2) network backend with every connection bounded by the current limits."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._errors = _errors(inner)

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> _BoundedStream:
        return _BoundedStream(self._inner.connect_tcp(host, port, _cut(timeout, self._errors[2]), local_address,
                                                      socket_options), self._errors)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> _BoundedStream:
        return _BoundedStream(self._inner.connect_unix_socket(path, _cut(timeout, self._errors[2]), socket_options),
                              self._errors)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def is_sync_client(obj: Any) -> bool:
    """Whether `obj` is a synchronous httpx (or httpx2) client."""
    return _is_client(obj, "Client")


def is_async_client(obj: Any) -> bool:
    """Whether `obj` is an asynchronous httpx (or httpx2) client."""
    return _is_client(obj, "AsyncClient")


def _is_client(obj: Any, name: str) -> bool:
    return any(cls.__name__ == name and cls.__module__.split(".")[0] in HTTPX_FAMILIES for cls in type(obj).__mro__)


def install(client: Any) -> bool:
    """Put a `BoundedBackend` (an `AsyncBoundedBackend` for an async client) under each connection pool of an
    httpx client (its transport and its proxy mounts; once). Returns whether every pool is bounded (False: a
    transport we cannot reach, e.g. a custom one)."""
    transports = [getattr(client, "_transport", None), *(getattr(client, "_mounts", None) or {}).values()]
    done = True
    for transport in transports:
        if transport is None:
            continue
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if isinstance(backend, (BoundedBackend, AsyncBoundedBackend)):
            continue
        if backend is not None and callable(getattr(backend, "connect_tcp", None)):
            wrap = AsyncBoundedBackend if inspect.iscoroutinefunction(backend.connect_tcp) else BoundedBackend
            pool._network_backend = wrap(backend)  # type: ignore[union-attr]
        else:
            done = False
    return done


SYNC_HOLDERS = ("root_client", "client", "http_client", "_client")
ASYNC_HOLDERS = ("root_async_client", "async_client", "http_async_client", "_async_client", "_client")


def clients_of(model: Any, *, asynchronous: bool = False) -> list[Any]:
    """The synchronous httpx clients of a chat model (or of the model a binding wraps); its asynchronous ones with
    `asynchronous`."""
    kind = is_async_client if asynchronous else is_sync_client
    found: list[Any] = []
    for layer in unwrap(model):
        for name in ASYNC_HOLDERS if asynchronous else SYNC_HOLDERS:
            try:
                held = getattr(layer, name, None)
            except Exception:  # a lazy property that fails (no key, ...): nothing to bound
                continue
            for candidate in (held, getattr(held, "_client", None)):
                if kind(candidate) and all(candidate is not c for c in found):
                    found.append(candidate)
    return found


def bounded_client(timeout: float) -> httpx.Client:
    """An httpx client (per-read `timeout`) whose reads keep to the current limits."""
    client = httpx.Client(timeout=timeout)
    install(client)
    return client
