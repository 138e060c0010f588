"""Mask the executors' secrets in every log record the process creates, whichever logger emits it.

httpx logs reason phrases and URLs at INFO, httpcore response headers at DEBUG, hpack decoded headers, and any
other library may log what a server sent back; a server that echoes a key would put it into the application's
logs. Filters on chosen loggers miss records of other loggers (and filters on handlers miss handlers added
later), so redaction happens where every record is made: `attach_log_redaction` installs (once) a log-record
factory that wraps the current one (`logging.setLogRecordFactory`) and rewrites each new record's message, its
exception text and its stack text with every live secret masked, in every spelling `secret_masking` knows
(upper-cased, URL-encoded, hex, base64, split). Handlers and formatters added at any time only
ever see masked records. Each registered source is held weakly (a bound method of its executor) and drops out
when the executor is garbage-collected; with no live secret the factory only calls the one it wraps.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from .secret_masking import mask_values, secret_values

# the loggers of the HTTP libraries (kept for callers that set their levels in tests)
HTTP_LIBRARY_LOGGERS: tuple[str, ...] = (
    "httpx", "httpcore", "httpcore.connection", "httpcore.http11", "httpcore.http2", "httpcore.proxy",
    "httpcore.socks",
)


class _Masks(Protocol):
    def __bool__(self) -> bool: ...

    def text(self, value: str) -> str: ...


Source = Callable[[], "_Masks | None"]


class RedactingRecordFactory:
    """A log-record factory: the wrapped factory's record, with the secrets of every live source masked."""

    def __init__(self, wrapped: Callable[..., logging.LogRecord]) -> None:
        self.wrapped = wrapped
        self._sources: list[Source] = []
        self._lock = threading.RLock()  # a source that logs must not deadlock
        self._fixed = _FixedSecrets()  # secrets known for the life of the process (chat-model API keys)
        self._sources.append(lambda: self._fixed)

    def add_secrets(self, secrets: Iterable[str]) -> None:
        """Mask these values from now on, for the life of the process (each value once, however often given)."""
        with self._lock:
            self._fixed.add(secrets)

    def add(self, source: Source) -> None:
        """Mask `source()`'s secrets from now on (a source returning None is dropped)."""
        with self._lock:
            self._sources.append(source)

    def masks(self) -> list[_Masks]:
        """The live sources' redactors (dead sources are pruned)."""
        out: list[_Masks] = []
        with self._lock:
            alive: list[Source] = []
            for source in self._sources:
                masks = source()
                if masks is None:
                    continue
                alive.append(source)
                if masks:
                    out.append(masks)
            self._sources[:] = alive
        return out

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.wrapped(*args, **kwargs)
        masks = self.masks() if self._sources else []
        if masks:
            mask_record(record, masks)
        return record


class _FixedSecrets:
    """A set of secret values, each masked as `***` wherever it occurs."""

    def __init__(self) -> None:
        self.values: tuple[str, ...] = ()

    def add(self, secrets: Iterable[str]) -> None:
        self.values = secret_values((*self.values, *secrets))

    def __bool__(self) -> bool:
        return bool(self.values)

    def text(self, value: str) -> str:
        return mask_values(value, self.values)


def _mask(text: str, masks: list[_Masks]) -> str:
    for m in masks:
        text = m.text(text)
    return text


def mask_record(record: logging.LogRecord, masks: list[_Masks]) -> None:
    """Rewrite `record` in place: message (formatted with its arguments), exception text and stack text masked."""
    try:
        message = record.getMessage()
    except Exception:  # arguments that do not format: the handler reports that; mask the raw parts instead
        record.msg = _mask(str(record.msg), masks)
        record.args = None
        return
    masked = _mask(message, masks)
    if masked != message:
        record.msg, record.args = masked, None
    if record.exc_info and not record.exc_text:
        text = logging.Formatter().formatException(record.exc_info)
        masked = _mask(text, masks)
        if masked != text:
            record.exc_text = masked  # formatters use exc_text when it is set
    elif record.exc_text:
        record.exc_text = _mask(record.exc_text, masks)
    if record.stack_info:
        record.stack_info = _mask(record.stack_info, masks)


def install_record_factory() -> RedactingRecordFactory:
    """The process's redacting record factory, installed around the current factory if it is not there yet."""
    current = logging.getLogRecordFactory()
    if isinstance(current, RedactingRecordFactory):
        return current
    factory = RedactingRecordFactory(current)
    logging.setLogRecordFactory(factory)
    return factory


def attach_log_redaction(redactor: Callable[[], _Masks]) -> RedactingRecordFactory:
    """Mask `redactor()`'s secrets in every log record created from now on, for as long as the object owning the
    bound method `redactor` lives (a plain function is held for the life of the process)."""
    if getattr(redactor, "__self__", None) is not None:
        method = weakref.WeakMethod(redactor)

        def source() -> _Masks | None:
            fn = method()
            return fn() if fn is not None else None
    else:
        def source() -> _Masks | None:
            return redactor()

    factory = install_record_factory()
    factory.add(source)
    return factory


def redact_secrets_in_logs(secrets: Iterable[str]) -> None:
    """Mask these values (e.g. a chat model's API key, which an endpoint may echo) in every log record created
    from now on, whichever logger emits it."""
    values = [s for s in secrets if s]
    if values:
        install_record_factory().add_secrets(values)
