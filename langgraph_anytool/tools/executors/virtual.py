"""Client for a StableToolBench-compatible virtual API server (a cache of real responses plus an LLM simulator).

Protocol: `POST <url>` with JSON `{"category", "tool_name", "api_name", "tool_input", "strip", "toolbench_key"}`;
the reply is `{"error": "...", "response": ...}` where `response` is often a JSON string. Tool and API names are
sent in ToolBench's standardized form. The server URL is operator configuration, so no address guard applies.
The reply is read under the same decoded-byte cap as the HTTP executor's (`max_response_bytes`, 1,000,000 by
default; `bounded_read`): a larger reply is cut there and reported as an error with the kept text.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from ...catalog.models import Api
from ..observation import Observation, Status
from .base import PerLoop
from .bounded_read import DEFAULT_MAX_RESPONSE_BYTES, EncodingRefused, accept_encoding, read_capped
from .http import Redactor, backoff_delay, error_message, parse_retry_after, status_for_http
from .log_redaction import attach_log_redaction

logger = logging.getLogger(__name__)

# ToolBench's character class kept `^` by accident ("[^\u4e00-\u9fa5^a-z^A-Z^0-9^_]"); kept for identical names.
_NON_NAME = re.compile(r"[^\u4e00-\u9fa5^a-zA-Z0-9_]")
_RESERVED = frozenset({"from", "class", "return", "false", "true", "id", "and"})

_MESSAGE_RULES: tuple[tuple[Status, tuple[str, ...]], ...] = (
    (Status.RATE_LIMITED, ("rate limit", "too many requests", "quota")),
    (Status.UNAUTHORIZED, ("unauthorized", "not subscribed", "unsubscribed", "forbidden", "invalid api key",
                           "authentication")),
    (Status.TIMEOUT, ("timeout", "timed out")),
    (Status.NOT_FOUND, ("not found", "does not exist", "no such")),
    # the server received the call and refused a value (not our schema check's INVALID_ARGUMENTS)
    (Status.REJECTED, ("invalid parameter", "invalid argument", "missing required", "invalid input")),
)


def toolbench_standardize(name: str) -> str:
    """ToolBench's `standardize` (+ `change_name` for reserved words): the names the virtual server expects."""
    s = re.sub(r"_+", "_", _NON_NAME.sub("_", name)).lower().strip("_")
    if s and s[0].isdigit():
        s = "get_" + s
    return f"is_{s}" if s in _RESERVED else s


def status_for_message(message: str) -> Status:
    """Classify an error message from a server or simulator ("rate limit", "not subscribed", ...)."""
    low = message.lower()
    for status, needles in _MESSAGE_RULES:
        if any(n in low for n in needles):
            return status
    return Status.ERROR


def parse_maybe_json(value: Any) -> Any:
    """A JSON string decoded; anything else (or a non-JSON string) unchanged."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


@dataclass
class _LoopState:
    client: httpx.AsyncClient
    semaphore: asyncio.Semaphore


@dataclass
class _Reply:
    status_code: int
    headers: httpx.Headers
    body: bytes
    truncated: bool
    encoding: str


class VirtualServerExecutor:
    """Calls a StableToolBench-style virtual server. Observations are `simulated=True` unless `real=True`.

    `toolbench_key` (or the environment variable named by `toolbench_key_env`) is sent in the body and never
    stored or logged. `names` maps an Api to the (tool_name, api_name) pair to send when the default
    (tool key, standardized API name) does not fit the server.
    """

    name = "virtual"

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 60.0,
        retries: int = 2,
        headers: Mapping[str, str] | None = None,
        toolbench_key: str | None = None,
        toolbench_key_env: str = "TOOLBENCH_KEY",
        real: bool = False,
        strip: str = "",
        backoff: float = 0.5,
        max_backoff: float = 10.0,
        max_retry_after: float = 30.0,
        max_concurrency: int = 16,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        names: Callable[[Api], tuple[str, str]] | None = None,
        environ: Mapping[str, str] | None = None,
        seed: int | None = None,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"virtual server URL must be http(s): {url!r}")
        self.url = url
        self.timeout = timeout
        self.retries = retries
        self._headers = dict(headers or {})
        self._key = toolbench_key
        self._key_env = toolbench_key_env
        self._environ: Mapping[str, str] = environ if environ is not None else os.environ
        self.real = real
        self.strip = strip
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.max_concurrency = max_concurrency
        if max_response_bytes < 1:
            raise ValueError("max_response_bytes ≥ 1 is required")
        self.max_response_bytes = max_response_bytes
        self._names = names
        self._rng = random.Random(seed)
        self._states: PerLoop[_LoopState] = PerLoop(self._new_state)
        attach_log_redaction(self._redactor)  # httpx/httpcore records never show the key

    def __repr__(self) -> str:
        return f"VirtualServerExecutor({self.url!r}, real={self.real}, retries={self.retries})"

    def _redactor(self) -> Redactor:
        return Redactor([self._toolbench_key(), *self._headers.values()])

    def _toolbench_key(self) -> str:
        return self._key if self._key is not None else self._environ.get(self._key_env, "")

    def _new_state(self) -> _LoopState:
        client = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout, pool=None), trust_env=False,
                                   limits=httpx.Limits(max_connections=self.max_concurrency),
                                   headers={"Accept-Encoding": accept_encoding()})
        return _LoopState(client, asyncio.Semaphore(self.max_concurrency))

    def _state(self) -> _LoopState:
        return self._states.get()

    async def aclose(self) -> None:
        state = self._states.take()
        if state is not None:
            await state.client.aclose()

    def payload(self, api: Api, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The request body for one call (with the key; never log it)."""
        tool_name, api_name = self._names(api) if self._names else (api.tool_key, toolbench_standardize(api.name))
        return {"category": api.category, "tool_name": tool_name, "api_name": api_name, "tool_input": dict(arguments),
                "strip": self.strip, "toolbench_key": self._toolbench_key()}

    async def aexecute(self, api: Api, arguments: dict[str, Any]) -> Observation:
        """One call through the virtual server → Observation (never raises for call failures)."""
        start = time.perf_counter()
        redact = self._redactor()
        try:
            obs = await self._execute(api, arguments, redact)
        except Exception as exc:
            message = redact.text(f"virtual server call failed: {exc.__class__.__name__}: {exc}")
            logger.warning("%s: %s", api.id, message)
            obs = Observation(api.id, Status.ERROR, error=message)
        return Observation(api.id, obs.status, content=redact.scrub(obs.content), error=redact.text(obs.error),
                           simulated=not self.real, latency_ms=(time.perf_counter() - start) * 1000, meta=obs.meta)

    async def _execute(self, api: Api, arguments: dict[str, Any], redact: Redactor) -> Observation:
        state = self._state()
        body = self.payload(api, arguments)
        attempt = 0
        while True:
            attempt += 1
            delay: float | None = None
            resp: _Reply | None
            async with state.semaphore:
                try:
                    async with asyncio.timeout(self.timeout):  # the whole call: connect, read and decode
                        async with state.client.stream("POST", self.url, json=body, headers=self._headers) as r:
                            data, cut = await read_capped(r, self.max_response_bytes)
                            resp = _Reply(r.status_code, r.headers, data, cut, r.charset_encoding or "utf-8")
                except EncodingRefused as exc:
                    return Observation(api.id, Status.ERROR, error=f"virtual server reply: {exc}",
                                       meta={"attempts": attempt})
                except (TimeoutError, httpx.TimeoutException) as exc:
                    if not isinstance(exc, httpx.ConnectTimeout):
                        return Observation(api.id, Status.TIMEOUT, error=f"virtual server gave no answer within "
                                                                          f"{self.timeout:g} s", meta={"attempts": attempt})
                    resp = None
                except (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
                    resp = None
            meta: dict[str, Any] = {"attempts": attempt}
            if resp is None:
                if attempt > self.retries:
                    return Observation(api.id, Status.SERVER_ERROR,
                                       error=f"could not reach the virtual server after {attempt} attempts", meta=meta)
                delay = backoff_delay(attempt, self.backoff, self.max_backoff, self._rng)
            elif (resp.status_code == 429 or resp.status_code >= 500) and attempt <= self.retries:
                hinted = parse_retry_after(resp.headers.get("retry-after"))
                delay = min(hinted, self.max_retry_after) if hinted is not None else \
                    backoff_delay(attempt, self.backoff, self.max_backoff, self._rng)
            else:
                return self._observation(api, resp, meta, redact)
            logger.info("retrying virtual server call for %s in %.2f s", api.id, delay)
            await asyncio.sleep(delay)

    def _observation(self, api: Api, resp: _Reply, meta: dict[str, Any], redact: Redactor) -> Observation:
        meta["http_status"] = resp.status_code
        text = resp.body.decode(resp.encoding, "replace")
        if resp.truncated:
            meta["truncated"] = True
            kept = redact.cut_text(text)
            return Observation(api.id, Status.ERROR, content=f"{kept}... [response truncated]",
                               error=f"the virtual server's reply is larger than the {self.max_response_bytes:,}-byte "
                                     "response cap; kept its beginning", meta=meta)
        try:
            data: Any = json.loads(text)
        except ValueError:
            data = text
        data = redact.scrub(data)  # before error messages are cut to length: a cut secret would leave its prefix
        if not 200 <= resp.status_code < 300:
            message = error_message(data)
            error = f"virtual server HTTP {resp.status_code}" + (f": {message}" if message else "")
            return Observation(api.id, status_for_http(resp.status_code, message), content=data or None, error=error,
                               meta=meta)
        if not isinstance(data, dict) or not ({"error", "response"} & data.keys()):
            return Observation(api.id, Status.ERROR, content=data,
                               error="virtual server reply is not {'error': ..., 'response': ...}", meta=meta)
        error = data.get("error") or ""
        error = error if isinstance(error, str) else json.dumps(error, default=str)
        content = parse_maybe_json(data.get("response"))
        if content == "":
            content = None
        if error.strip():
            return Observation(api.id, status_for_message(error), content=content, error=error, meta=meta)
        return Observation(api.id, Status.OK, content=content, meta=meta)
