"""Mask an executor's secrets in the log records of httpx and httpcore.

Those libraries log reason phrases, response headers and URLs (httpx at INFO, httpcore at DEBUG); a server that
echoes a key back (in its reason phrase, a header, a redirect URL) would put the key into the application's logs.
Our own log lines are redacted where they are written; for the libraries' records, each executor holding secrets
attaches a filter to their loggers that rewrites any record containing one of its secrets. The filter holds the
executor weakly and detaches itself when the executor is garbage-collected.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from typing import Protocol

HTTP_LIBRARY_LOGGERS: tuple[str, ...] = (
    "httpx", "httpcore", "httpcore.connection", "httpcore.http11", "httpcore.http2", "httpcore.proxy",
    "httpcore.socks",
)


class _Masks(Protocol):
    def __bool__(self) -> bool: ...

    def text(self, value: str) -> str: ...


class RedactingFilter(logging.Filter):
    """Rewrites a record's message with the secrets of `source()` masked (records are never dropped)."""

    def __init__(self, source: Callable[[], _Masks | None]) -> None:
        super().__init__()
        self._source = source

    def filter(self, record: logging.LogRecord) -> bool:
        redactor = self._source()
        if not redactor:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not format: leave it to the handler
            return True
        masked = redactor.text(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


def _detach(flt: logging.Filter, names: tuple[str, ...]) -> None:
    for name in names:
        logging.getLogger(name).removeFilter(flt)


def attach_log_redaction(redactor: Callable[[], _Masks], names: tuple[str, ...] = HTTP_LIBRARY_LOGGERS) -> RedactingFilter:
    """Attach a filter masking `redactor()`'s secrets to the HTTP libraries' loggers, for as long as the object
    owning the bound method `redactor` lives."""
    method = weakref.WeakMethod(redactor)

    def source() -> _Masks | None:
        fn = method()
        return fn() if fn is not None else None

    flt = RedactingFilter(source)
    for name in names:
        logging.getLogger(name).addFilter(flt)
    owner = getattr(redactor, "__self__", None)
    if owner is not None:
        weakref.finalize(owner, _detach, flt, names)
    return flt
