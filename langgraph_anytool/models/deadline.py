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
synchronous clients (its `root_client`, `client`, `http_client` and their inner `_client`).
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
    return any(cls.__name__ == "Client" and cls.__module__.split(".")[0] in HTTPX_FAMILIES
               for cls in type(obj).__mro__)


def install(client: Any) -> bool:
    """Put a `BoundedBackend` under each connection pool of a synchronous httpx client (its transport and its proxy
    mounts; once). Returns whether every pool is bounded (False: a transport we cannot reach, e.g. a custom one)."""
    transports = [getattr(client, "_transport", None), *(getattr(client, "_mounts", None) or {}).values()]
    done = True
    for transport in transports:
        if transport is None:
            continue
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if isinstance(backend, BoundedBackend):
            continue
        if backend is not None and callable(getattr(backend, "connect_tcp", None)) \
                and not inspect.iscoroutinefunction(backend.connect_tcp):
            pool._network_backend = BoundedBackend(backend)  # type: ignore[union-attr]
        else:
            done = False
    return done


def clients_of(model: Any) -> list[Any]:
    """The synchronous httpx clients of a chat model (or of the model a binding wraps)."""
    found: list[Any] = []
    for layer in unwrap(model):
        for name in ("root_client", "client", "http_client", "_client"):
            try:
                held = getattr(layer, name, None)
            except Exception:  # a lazy property that fails (no key, ...): nothing to bound
                continue
            for candidate in (held, getattr(held, "_client", None)):
                if is_sync_client(candidate) and all(candidate is not c for c in found):
                    found.append(candidate)
    return found


def bounded_client(timeout: float) -> httpx.Client:
    """An httpx client (per-read `timeout`) whose reads keep to the current limits."""
    client = httpx.Client(timeout=timeout)
    install(client)
    return client
