"""The model-call guard for transport faults: which provider errors are worth a retry, how long to wait, and who
may still spend one.

`llm.call_role` sends every model call through a `CallGuard`. A failed call is classified provider-agnostically
(`classify`): langchain-core's typed errors first (`ModelRateLimitError`, `ModelAPIError`, `ModelConnectionError`,
`ModelTimeoutError`, `ContextOverflowError`, ...), then an HTTP status code the exception carries (`status_code`,
`response.status_code`), then transport exception types by name (httpx / aiohttp / builtin timeouts and
connection errors), then a few provider messages (Ollama's "does not support tools", vLLM's
"--enable-auto-tool-choice", context-length wordings). An exception none of these recognise is not a provider
error: it propagates unchanged.

Transport kinds (`rate_limited`, `server_error`, `connection`, `timeout`) are retried with exponential backoff and
full jitter (a uniform wait in [0, min(retry_max_wait, 1 s · 2^n)] before retry n+1), or exactly the wait the
server asks for in `Retry-After` / `retry-after-ms` (seconds or an HTTP date), capped at `retry_max_wait`. A
loopback server that refuses the connection (`refused`: it is not running) is retried `REFUSED_RETRIES` times only,
after at most `REFUSED_MAX_WAIT` seconds each: a dead local server is given up in seconds (a run that ends so
resumes from its checkpoint, see graphs/retry_point.py).

Settings (`AnyToolConfig`): `model_retries` (retries of one call, default 6), `retry_max_wait` (seconds, 60),
`max_retries_per_run` (retries over all calls of one run, across parallel branches, 50), `request_timeout` (seconds
a request may take, 120: applied to the clients of models made from "provider:model" strings, whose own retries
are switched off so that ours are the ones counted). A batch may share one `RetryBudget` over all its runs
(`create_anytool_graph(..., retry_budget=RetryBudget(500))`). When the retries or a cap are spent, the call fails
for good with `llm.ModelCallError(kind, ...)` naming the cap that stopped it.
"""

from __future__ import annotations

import errno
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langchain_core import exceptions as lc_errors

from ..config import AnyToolConfig
from ..text import shorten
from ..tools.executors.http import parse_retry_after
from ..tools.executors.secret_masking import mask_values
from .endpoint import Endpoint, Endpoints
from .profiles import unwrap

BASE_DELAY = 1.0  # seconds: the first backoff window (doubled per retry, capped at `retry_max_wait`)
# A loopback server that refuses the connection is not running (a crash, a kill, not started yet): not a transient
# fault worth minutes of backoff. It gets this many retries (a server restarting), each after at most
# `REFUSED_MAX_WAIT` seconds, so that the call is given up in seconds.
REFUSED_RETRIES = 2
REFUSED_MAX_WAIT = 1.0

# Kinds named by the exception's type (langchain-core's provider-agnostic errors); order matters (subclasses).
_TYPED_KINDS: tuple[tuple[type[BaseException], str], ...] = (
    (lc_errors.ContextOverflowError, "context_length"),
    (lc_errors.ModelRateLimitError, "rate_limited"),
    (lc_errors.ModelTimeoutError, "timeout"),
    (lc_errors.ModelConnectionError, "connection"),
    (lc_errors.ModelAPIError, "server_error"),
    (lc_errors.ModelAuthenticationError, "auth"),
    (lc_errors.ModelPermissionDeniedError, "auth"),
    (lc_errors.ModelNotFoundError, "not_found"),
    (lc_errors.ModelRefusalError, "refused"),
)
# Transport exception class names (anywhere in the MRO) of the HTTP stacks providers use (httpx, aiohttp, openai,
# anthropic, requests), so that no import of them is needed here.
_TIMEOUT_NAMES = frozenset({"TimeoutError", "TimeoutException", "ReadTimeout", "ConnectTimeout", "WriteTimeout",
                            "PoolTimeout", "APITimeoutError", "Timeout", "ServerTimeoutError"})
_CONNECTION_NAMES = frozenset({"ConnectionError", "ConnectError", "RemoteProtocolError", "ReadError", "WriteError",
                               "NetworkError", "APIConnectionError", "ServerDisconnectedError", "ClientConnectionError",
                               "IncompleteRead", "ProtocolError"})
# how servers say a request does not fit the model's window: OpenAI (`context_length_exceeded`, "maximum context
# length is N tokens. However, your messages resulted in M tokens"), llama.cpp's llama-server (HTTP 400,
# `exceed_context_size_error`: "request (M tokens) exceeds the available context size (N tokens)", or "input (M
# tokens) is larger than the max context size (N tokens)"), vLLM ("This model's maximum context length is N
# tokens. However, you requested ... (M in the messages, K in the completion)" or "... your prompt contains at
# least M input tokens", "... your request has M input tokens", "The decoder prompt (length M) is longer than the
# maximum model length of N"), Anthropic ("prompt is too long"), and others. Ollama has none: it cuts an
# over-long prompt silently (its window is learned from /api/show instead, see endpoint.py).
_CONTEXT_PHRASES = ("context_length_exceeded", "maximum context length", "context length exceeded",
                    "exceeds the context window", "prompt is too long", "input is too long",
                    "reduce the length of the messages", "exceed context window", "context window exceeded",
                    "exceeds the available context size", "exceed_context_size_error", "larger than the max context",
                    "longer than the maximum model length", "maximum model length", "context size exceeded")
# (pattern, group of the prompt's tokens, group of the window) of the wordings above that state counts
_OVERFLOW_COUNTS = (
    (re.compile(r"(?:request|input) \((\d+) tokens\) (?:exceeds the available|is larger than the max) context size "
                r"\((\d+) tokens\)"), 1, 2),
    (re.compile(r"maximum context length is (\d+) tokens.*?(?:resulted in|\()\s*(\d+) (?:tokens|in the messages)",
                re.DOTALL), 2, 1),
    (re.compile(r"maximum context length is (\d+) tokens.*?(?:contains at least|request has) (\d+) input tokens",
                re.DOTALL), 2, 1),
    (re.compile(r"prompt \(length (\d+)\) is longer than the maximum model length of (\d+)"), 1, 2),
    (re.compile(r"maximum context length is (\d+) tokens"), 0, 1),
)
# how endpoints refuse a request carrying `tools` for a model without function calling: Ollama ("... does not
# support tools"), vLLM without `--enable-auto-tool-choice` ("\"auto\" tool choice requires --enable-auto-tool-choice
# and --tool-call-parser to be set"), and the wordings of other OpenAI-compatible servers
_NO_TOOLS = re.compile(
    r"does not support (?:tools|tool[ _]?(?:use|calling|calls)|function[ _]?calling)"
    r"|tool choice requires|enable-auto-tool-choice"
    r"|(?:tools?|tool[ _]calling|function[ _]calling) (?:is |are )?not supported",
    re.IGNORECASE,
)
_SECRET_PATTERNS = (re.compile(r"\b(sk|gsk|pk|rk)-[A-Za-z0-9_\-]{6,}"), re.compile(r"(?i)(bearer\s+)\S+"),
                    re.compile(r"(?i)(api[_-]?key[\"'=:\s]+)[A-Za-z0-9_\-\.]{8,}"))


def status_code_of(exc: BaseException) -> int | None:
    """The HTTP status an exception carries (`status_code`, `status`, `response.status_code`), if any."""
    for holder in (exc, getattr(exc, "response", None)):
        for attr in ("status_code", "status"):
            value = getattr(holder, attr, None)
            if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
                return value
    return None


# llama-server's cache of all its slots is full (its slots share `-c` tokens: another request's cache took the room
# this one needed): nothing to do with this prompt's size, and gone once the other requests end
_SERVER_CACHE_FULL = "context size has been exceeded"


def capacity_fault(exc: BaseException) -> bool:
    """Whether a failed call met llama-server's full shared cache ("Context size has been exceeded", an HTTP 500
    or an error event inside a 200 stream): room the other requests in flight hold, not this prompt's size."""
    return _SERVER_CACHE_FULL in str(exc).lower()


def _message_kind(text: str) -> str | None:
    low = text.lower()
    if _SERVER_CACHE_FULL in low:
        return "server_error"
    if any(p in low for p in _CONTEXT_PHRASES):
        return "context_length"
    if _NO_TOOLS.search(text):
        return "no_tool_calling"
    return None


def classify(exc: BaseException) -> str | None:
    """The `ModelCallError` kind of a failed model call, or None when `exc` is no provider error we recognise."""
    text = str(exc)
    for typ, kind in _TYPED_KINDS:
        if isinstance(exc, typ):
            return kind
    if isinstance(exc, lc_errors.ModelInvalidRequestError):
        return _message_kind(text) or "bad_request"
    status = status_code_of(exc)
    if status is not None:
        if status == 429:
            return "rate_limited"
        if status == 408:
            return "timeout"
        if status >= 500:
            return "server_error"
        if status in (401, 403):
            return "auth"
        if status == 404:
            return "not_found"
        if status == 413:
            return "context_length"
        if status in (400, 422):
            return _message_kind(text) or "bad_request"
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & _TIMEOUT_NAMES:
        return "timeout"
    if names & _CONNECTION_NAMES:
        return "connection"
    return _message_kind(text)


def refused(exc: BaseException) -> bool:
    """Whether a failed call never reached a server: its connection was refused (nothing listens on the port), as
    the exception or one in its chain (`__cause__` / `__context__`: the client wraps the socket's error) says."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError) or getattr(current, "errno", None) == errno.ECONNREFUSED:
            return True
        current = current.__cause__ or current.__context__
    return False


def overflow_counts(exc: BaseException) -> tuple[int | None, int | None]:
    """What an overflow reply states: (the prompt's tokens, the window), each None when not said. llama.cpp puts
    them in its error body (`n_prompt_tokens`, `n_ctx`); other servers in the message (see `_OVERFLOW_COUNTS`)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        prompt, window = body.get("n_prompt_tokens"), body.get("n_ctx")
        if isinstance(prompt, int) and isinstance(window, int) and prompt > 0 and window > 0:
            return prompt, window
    text = " ".join(str(exc).split())
    for pattern, prompt_group, window_group in _OVERFLOW_COUNTS:
        found = pattern.search(text)
        if found:
            return (int(found.group(prompt_group)) if prompt_group else None), int(found.group(window_group))
    return None, None


def retry_after(exc: BaseException, now: float | None = None) -> float | None:
    """Seconds the server asked to wait (`retry-after-ms`, or `Retry-After` in seconds or as an HTTP date, read by
    the HTTP executor's `parse_retry_after`); `now` in epoch seconds."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or getattr(exc, "headers", None)
    if headers is not None and hasattr(headers, "get"):
        ms = headers.get("retry-after-ms")
        if ms is not None:
            try:
                return max(0.0, float(ms) / 1000)
            except (TypeError, ValueError, OverflowError):
                return None
        value = headers.get("retry-after")
        if value is not None:
            return parse_retry_after(str(value), now=None if now is None else datetime.fromtimestamp(now, UTC))
    value = getattr(exc, "retry_after", None)
    return max(0.0, float(value)) if isinstance(value, int | float) and not isinstance(value, bool) else None


def mask_secrets(text: str, secrets: tuple[str, ...] = ()) -> str:
    """`text` with the given secrets (in every spelling `secret_masking` knows) and anything shaped like an API key
    or bearer token replaced by `***`."""
    text = mask_values(text, secrets)
    text = _SECRET_PATTERNS[0].sub(lambda m: f"{m.group(1)}-***", text)
    for pattern in _SECRET_PATTERNS[1:]:
        text = pattern.sub(lambda m: f"{m.group(1)}***", text)
    return text


def model_secrets(model: Any) -> tuple[str, ...]:
    """The secret values (pydantic `SecretStr` fields) of a chat model, or of the model a binding wraps."""
    out: list[str] = []
    for layer in unwrap(model):
        for name in getattr(type(layer), "model_fields", {}) or {}:
            reveal = getattr(getattr(layer, name, None), "get_secret_value", None)
            secret = reveal() if callable(reveal) else None
            if isinstance(secret, str) and secret:
                out.append(secret)
    return tuple(out)


def describe_error(exc: BaseException, secrets: tuple[str, ...] = (), limit: int = 300) -> str:
    """A one-line description of a provider error (HTTP status first), secrets masked, at most `limit` chars."""
    status = status_code_of(exc)
    text = " ".join(str(exc).split()) or type(exc).__name__
    head = f"HTTP {status}: " if status is not None and str(status) not in text[:20] else ""
    line = mask_secrets(f"{head}{text}", secrets)
    return shorten(line, limit)


class RetryBudget:
    """Retries shared by every run of a batch (thread-safe): at most `max_retries` in all (None: unlimited).

    `used` counts the retries granted, `refused` the ones asked for after the budget was spent."""

    def __init__(self, max_retries: int | None) -> None:
        if max_retries is not None and (not isinstance(max_retries, int) or isinstance(max_retries, bool)
                                        or max_retries < 0):
            raise ValueError(f"RetryBudget.max_retries must be an integer ≥ 0 or None, got {max_retries!r}")
        self.max_retries = max_retries
        self._lock = threading.Lock()
        self._used = 0
        self._refused = 0

    @property
    def used(self) -> int:
        with self._lock:
            return self._used

    @property
    def refused(self) -> int:
        with self._lock:
            return self._refused

    def take(self) -> bool:
        """Grant one retry (True) unless the budget is spent."""
        with self._lock:
            if self.max_retries is not None and self._used >= self.max_retries:
                self._refused += 1
                return False
            self._used += 1
            return True

    def __repr__(self) -> str:
        return f"RetryBudget(max_retries={self.max_retries}, used={self.used})"


@dataclass(frozen=True)
class RetryPolicy:
    """How one call retries transport faults (see the module docstring)."""

    retries: int = AnyToolConfig.model_retries  # retries of one call
    max_wait: float = AnyToolConfig.retry_max_wait  # seconds, the longest single wait (also caps Retry-After)
    base_delay: float = BASE_DELAY

    def wait(self, retry: int, asked: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number `retry` (0-based): the server's `asked` wait, else full jitter."""
        if asked is not None:
            return min(self.max_wait, asked)
        return rng.uniform(0.0, min(self.max_wait, self.base_delay * (2 ** min(retry, 30))))


# Grants one retry of a run: None when granted, else the name of the cap that refused it ("run" / "batch").
RetryGate = Callable[[], "str | None"]


def _no_cap() -> str | None:
    return None


# Admits one model call by the tokens it will take (its estimated input plus the room kept for its reply): None
# when the run's token budget has room for it, else why not.
CallAdmission = Callable[[int], "str | None"]


def _admit_any(tokens: int) -> str | None:
    return None


# The tokens the run's token budget has left for the next model call (its prompt and its reply), or None when no
# token budget is in force; `call_role` caps the reply at this less the prompt's estimate (see llm.budget_cap).
BudgetRoom = Callable[[], "int | None"]


def _no_budget() -> int | None:
    return None


def _no_deadline() -> float | None:
    return None


@dataclass(frozen=True)
class CallGuard:
    """What `call_role` needs to retry one call: the policy, the run's (and batch's) retry gate, how to sleep; and
    for slow servers: whether a local server's calls are streamed, how long one may stay silent, the run's hard
    deadline, the run's cap on retries of timed-out calls; and the graph's `Endpoints` (windows, token counts)."""

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    gate: RetryGate = _no_cap
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random, compare=False)
    admit: CallAdmission = _admit_any  # the run's token budget, asked before each call is sent
    room: BudgetRoom = _no_budget  # what that budget has left for the next call (None: no budget)
    token_budget: int | None = None  # the run's token budget (for messages)
    endpoints: Endpoints | None = field(default=None, compare=False)  # None: no server is asked (estimates)
    stream_local: bool = AnyToolConfig.stream_local  # stream the calls to a loopback OpenAI-compatible server
    stall_timeout: float = AnyToolConfig.stall_timeout  # seconds a streamed call may receive nothing
    deadline: Callable[[], float | None] = _no_deadline  # epoch seconds the run must end by (None: no limit)
    timeout_gate: RetryGate = _no_cap  # grants one retry of a timed-out call (the run's `max_timeout_retries`)
    is_local: Callable[[Endpoint], bool] = field(default=lambda e: e.loopback, compare=False)
    reply_caps: str = AnyToolConfig.reply_caps  # "local": no reply limit on a hosted endpoint (`call_role`)


class UsageMeter:
    """The `on_usage` callback of a run's model calls (`Deps.meter`), carrying the run's `CallGuard` so that
    `call_role` retries under the run's settings and caps."""

    def __init__(self, add: Callable[[Any], None], guard: CallGuard) -> None:
        self._add = add
        self.guard = guard

    def __call__(self, used: Any) -> None:
        self._add(used)
