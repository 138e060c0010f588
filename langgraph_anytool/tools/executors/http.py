"""HTTP executor: RapidAPI-style and OpenAPI endpoints over httpx.

Retries 429/5xx/connection failures with exponential backoff and jitter (honouring `Retry-After`), limits concurrent
requests per host, refuses non-public addresses unless `allow_private=True` (resolving each name once and
connecting to the approved address: see `netguard.PinnedBackend`), caps how many DECODED bytes of a response are
kept (`bounded_read`: compression bombs stop at the cap, stacked encodings are refused), and maps every outcome to
an `Observation`. Secret header values (given directly or read from the environment) and the values of configured
credential headers are sent but never stored: they are scrubbed from observations, error strings and every log
record of the process (`log_redaction`), and hidden from `repr`.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import os
import random
import re
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urljoin, urlsplit

import httpcore
import httpx

from ...catalog.models import Api
from ..netguard import AddressRefused, PinnedBackend, approved_addresses, loopback_allowed_for_tests
from ..observation import Observation, Status
from .base import PerLoop
from .bounded_read import DEFAULT_MAX_RESPONSE_BYTES, EncodingRefused, accept_encoding, read_capped
from .log_redaction import attach_log_redaction
from .secret_masking import MASK, mask_for

if TYPE_CHECKING:
    from ...catalog.catalog import Catalog

logger = logging.getLogger(__name__)

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
_PLACEHOLDER = re.compile(r"\{([^{}/]+)\}")


# --------------------------------------------------------------------------- helpers shared with other executors
class Redactor:
    """Replaces secret values, in every spelling `secret_masking` knows (upper-cased, URL-encoded, hex, base64,
    split), with `***` in text and in JSON-like structures. Its repr shows no secret."""

    MASK = MASK

    def __init__(self, secrets: list[str] | tuple[str, ...] = ()) -> None:
        self._secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
        self._mask = mask_for(tuple(sorted(self._secrets)), 1)  # values given as secrets: masked at any length

    def __repr__(self) -> str:
        return f"Redactor({len(self._secrets)} secrets)"

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def text(self, value: str) -> str:
        return self._mask.text(value)

    def cut_text(self, value: str, min_prefix: int = 4) -> str:
        """`text`, for a string that was cut short: also masks a secret's beginning left at the very end."""
        value = self.text(value)
        for s in self._secrets:
            for n in range(min(len(s) - 1, len(value)), min_prefix - 1, -1):
                if value.endswith(s[:n]):
                    return value[:-n] + self.MASK
        return value

    def scrub(self, obj: Any) -> Any:
        """A copy of `obj` (str/list/dict/scalars) with every secret occurrence masked."""
        if not self._secrets:
            return obj
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {self.scrub(k) if isinstance(k, str) else k: self.scrub(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [self.scrub(v) for v in obj]
        return obj


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` value (delta seconds or an HTTP date); None when absent or unparsable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random) -> float:
    """Exponential backoff with jitter: half of `min(cap, base·2^(attempt-1))` plus up to the other half at random."""
    ceiling = min(cap, base * (2 ** max(0, attempt - 1)))
    return ceiling / 2 + rng.uniform(0, ceiling / 2)


def status_for_http(code: int, message: str = "") -> Status:
    """The `Status` for an HTTP status code (and RapidAPI's "not subscribed" message)."""
    low = message.lower()
    if "not subscribed" in low or "unsubscribed" in low:
        return Status.UNAUTHORIZED
    if 200 <= code < 300:
        return Status.OK
    if code in (400, 422):  # the API received the call and refused a value
        return Status.REJECTED
    if code in (401, 403, 407):
        return Status.UNAUTHORIZED
    if code in (404, 410):
        return Status.NOT_FOUND
    if code == 408:
        return Status.TIMEOUT
    if code == 429:
        return Status.RATE_LIMITED
    if code >= 500:
        return Status.SERVER_ERROR
    return Status.ERROR


def error_message(content: Any, limit: int = 300) -> str:
    """A short human message from an error body (`message`/`error`/`detail` fields, else the text)."""
    if isinstance(content, dict):
        for key in ("message", "error", "detail", "msg", "error_message"):
            v = content.get(key)
            if isinstance(v, dict):
                v = v.get("message", v)
            if v:
                text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
                return text[:limit]
        return ""
    if isinstance(content, str):
        return " ".join(content.split())[:limit]
    return ""


_DEFAULT_PORTS = {"http": 80, "https": 443}
_CREDENTIAL_HEADER = re.compile(r"authorization|cookie|key|token|secret|password|credential|signature", re.I)


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port filled in."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = -1
    return scheme, (parts.hostname or "").lower(), port if port is not None else _DEFAULT_PORTS.get(scheme)


def is_credential_header(name: str) -> bool:
    """Whether a header name looks like it carries a credential (Authorization, Cookie, X-Api-Key, ...)."""
    return bool(_CREDENTIAL_HEADER.search(name))


# configured headers that carry no credential: the only ones that follow a redirect to another origin
FORWARDABLE_HEADERS = frozenset({"accept", "accept-language", "cache-control", "content-type", "user-agent"})
_MIN_MASKED_VALUE = 4  # shorter configured header values are not masked in text (they would mask common words)


def _str_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def _query_value(value: Any) -> str | list[str]:
    if isinstance(value, (list, tuple)):
        return [_str_value(v) for v in value]
    return _str_value(value)


# --------------------------------------------------------------------------- request / reply records
@dataclass
class _Prepared:
    method: str
    url: str
    params: dict[str, str | list[str]] = field(default_factory=dict)
    body: Any = None
    has_body: bool = False
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class _Reply:
    code: int
    reason: str
    headers: httpx.Headers
    body: bytes
    truncated: bool
    total: int | None
    encoding: str


@dataclass
class _Failure:
    kind: str  # timeout | connect | protocol | encoding
    message: str


@dataclass
class _HostPool:
    """Requests in flight to one host: a semaphore, and several small httpx clients.

    httpcore's pool rescans all its connections on every request event, so one client with many connections
    spends more CPU per request as the limit grows; small clients picked by least load keep that cost flat.
    """

    semaphore: asyncio.Semaphore
    clients: list[httpx.AsyncClient]
    load: list[int]

    def pick(self) -> int:
        return min(range(len(self.clients)), key=self.load.__getitem__)


@dataclass
class _LoopState:
    hosts: dict[str, _HostPool] = field(default_factory=dict)
    ssl_context: ssl.SSLContext | None = None  # shared by the clients (loading CA certificates is slow)
    backend: PinnedBackend | None = None  # connects only to addresses the guard approved (None: guard off)


class _PinnedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with its connection pool on a `PinnedBackend` (HTTP/1.1, no proxy)."""

    def __init__(self, *, ssl_context: ssl.SSLContext, limits: httpx.Limits, backend: PinnedBackend) -> None:
        super().__init__(verify=ssl_context, limits=limits, trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context, max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
            http1=True, http2=False, network_backend=backend)


class _RequestProblem(Exception):
    """A request that cannot be built (missing path parameter, no URL)."""

    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = status


# --------------------------------------------------------------------------- the executor
class HttpExecutor:
    """Calls RapidAPI-style / OpenAPI endpoints. Never raises for call failures.

    Base URL of an API: `base_urls["Category/tool_key"]`, else `base_urls["*"]`, else the catalog tool's `base_url`.
    An `Api.path` that is a full URL is used as is (with its scheme and host replaced by an explicit base URL).
    `{name}` placeholders in the path take path arguments; other arguments go to the query string (GET, DELETE, ...)
    or to a JSON body (POST, PUT, PATCH; explicit `query` locations stay in the query when the API declares any
    `body` parameter), and `header` parameters become headers.

    Each host gets a semaphore of `per_host_limit` and `ceil(per_host_limit / connections_per_client)` small httpx
    clients (state is per event loop, so one executor works under several loops). Redirects are followed by hand
    (each hop re-checked by the address guard). A hop to another origin carries none of the configured headers
    (`headers`, `secrets`, `headers_from_env`) except `FORWARDABLE_HEADERS`, and no credential-looking header
    argument. Proxy environment variables are ignored unless `trust_env=True` (then the proxy resolves names, so
    the guard checks the name but cannot pin the address). `allow_loopback` (default: `ANYTOOL_TEST_ALLOW_LOOPBACK=1`
    in `environ`) keeps the guard on but lets loopback addresses through, for tests against local servers.
    """

    name = "http"

    def __init__(
        self,
        *,
        base_urls: Mapping[str, str] | None = None,
        catalog: Catalog | None = None,
        headers: Mapping[str, str] | None = None,
        headers_from_env: Mapping[str, str] | None = None,
        secrets: Mapping[str, str] | None = None,
        rapidapi_host: bool = False,
        timeout: float = 15.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 10.0,
        max_retry_after: float = 30.0,
        per_host_limit: int = 8,
        connections_per_client: int = 8,
        allow_private: bool = False,
        allow_loopback: bool | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_redirects: int = 3,
        trust_env: bool = False,
        environ: Mapping[str, str] | None = None,
        seed: int | None = None,
    ) -> None:
        if per_host_limit < 1 or retries < 0 or timeout <= 0 or max_response_bytes < 1:
            raise ValueError("per_host_limit ≥ 1, retries ≥ 0, timeout > 0 and max_response_bytes ≥ 1 are required")
        self._base_urls = dict(base_urls or {})
        self._catalog = catalog
        self._headers = dict(headers or {})
        self._headers_from_env = dict(headers_from_env or {})
        self._secrets = dict(secrets or {})
        self._environ: Mapping[str, str] = environ if environ is not None else os.environ
        self.rapidapi_host = rapidapi_host
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.per_host_limit = per_host_limit
        self.connections_per_client = max(1, connections_per_client)
        self.allow_private = allow_private
        self.allow_loopback = loopback_allowed_for_tests(self._environ) if allow_loopback is None else allow_loopback
        self.max_response_bytes = max_response_bytes
        self.max_redirects = max_redirects
        self.trust_env = trust_env
        self._rng = random.Random(seed)
        self._states: PerLoop[_LoopState] = PerLoop(_LoopState)
        if self._secrets or self._headers_from_env or self._redactor():  # env values may be set later
            attach_log_redaction(self._redactor)  # httpx/httpcore log reason phrases and headers a server echoes

    def __repr__(self) -> str:
        secret_names = sorted({*self._secrets, *self._headers_from_env})
        return (f"HttpExecutor(base_urls={sorted(self._base_urls)}, secret_headers={secret_names}, "
                f"allow_private={self.allow_private}, per_host_limit={self.per_host_limit}, retries={self.retries})")

    # ----------------------------------------------------------------- secrets
    def _secret_headers(self) -> tuple[dict[str, str], list[str]]:
        """Configured secret headers, and notes about environment variables that are not set."""
        out: dict[str, str] = {}
        notes: list[str] = []
        for header, var in self._headers_from_env.items():
            value = self._environ.get(var)
            if value:
                out[header] = value
            else:
                notes.append(f"header {header} was not sent: environment variable {var} is not set")
        out.update({k: v for k, v in self._secrets.items() if v})
        return out, notes

    def _redactor(self) -> Redactor:
        """Masks every value the auth configuration sends: secrets, environment keys, and configured headers
        other than `FORWARDABLE_HEADERS` (values shorter than 4 characters are left alone)."""
        values = [v for v in self._secrets.values() if v]
        values += [self._environ.get(var, "") for var in self._headers_from_env.values()]
        values += [v for k, v in self._headers.items()
                   if k.lower() not in FORWARDABLE_HEADERS and len(v.strip()) >= _MIN_MASKED_VALUE]
        return Redactor(values)

    # ----------------------------------------------------------------- loop-bound state
    def _state(self) -> _LoopState:
        return self._states.get()

    def _host_pool(self, state: _LoopState, host_key: str) -> _HostPool:
        pool = state.hosts.get(host_key)
        if pool is None:
            size = min(self.connections_per_client, self.per_host_limit)
            n = -(-self.per_host_limit // size)
            if state.ssl_context is None:
                state.ssl_context = httpx.create_ssl_context(trust_env=self.trust_env)
            limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
            if state.backend is None and not self.allow_private and not self.trust_env:
                state.backend = PinnedBackend(allow_loopback=self.allow_loopback)
            clients = [httpx.AsyncClient(
                verify=state.ssl_context,
                timeout=httpx.Timeout(self.timeout, pool=None),
                limits=limits,
                follow_redirects=False,
                trust_env=self.trust_env,
                headers={"User-Agent": "langgraph-anytool", "Accept-Encoding": accept_encoding()},
                transport=None if state.backend is None else _PinnedTransport(
                    ssl_context=state.ssl_context, limits=limits, backend=state.backend),
            ) for _ in range(n)]
            pool = state.hosts[host_key] = _HostPool(asyncio.Semaphore(self.per_host_limit), clients, [0] * n)
        return pool

    async def aclose(self) -> None:
        """Close the HTTP client of the running loop (clients of other, finished loops are dropped)."""
        state = self._states.take()
        if state is not None:
            for pool in state.hosts.values():
                for client in pool.clients:
                    await client.aclose()

    # ----------------------------------------------------------------- request building
    def _base_url(self, api: Api) -> str:
        for key in (f"{api.category}/{api.tool_key}", "*"):
            if self._base_urls.get(key):
                return self._base_urls[key]
        if self._catalog is not None:
            try:
                return self._catalog.tool(api.category, api.tool_key).base_url
            except Exception:  # unknown tool: no base URL from the catalog
                return ""
        return ""

    def _prepare(self, api: Api, arguments: Mapping[str, Any]) -> _Prepared:
        method = (api.method or "GET").upper()
        base, path = self._base_url(api), api.path or ""
        if not path and not base:
            raise _RequestProblem(Status.ERROR, f"no URL for API {api.id}: the catalog has neither a path nor a base "
                                                f"URL; pass base_urls={{'{api.category}/{api.tool_key}': 'https://...'}}")
        if not path:
            raise _RequestProblem(Status.ERROR, f"API {api.id} has no endpoint path in the catalog")
        used: set[str] = set()

        def fill(match: re.Match[str]) -> str:
            name = match.group(1)
            value = arguments.get(name)
            if value is None:
                p = api.param(name)
                value = p.default if p is not None else None
            if value is None:
                raise _RequestProblem(Status.INVALID_ARGUMENTS, f"missing path parameter {name!r}")
            used.add(name)
            return quote(_str_value(value), safe="")

        path = _PLACEHOLDER.sub(fill, path)
        if path.startswith(("http://", "https://")):
            if base:
                parts = urlsplit(path)
                url = base.rstrip("/") + "/" + parts.path.lstrip("/") + (f"?{parts.query}" if parts.query else "")
            else:
                url = path
        else:
            url = base.rstrip("/") + "/" + path.lstrip("/")
        prepared = _Prepared(method, url)
        declares_body = any(p.location == "body" for p in api.params)
        body: dict[str, Any] = {}
        for name, value in arguments.items():
            if name in used or value is None:
                continue
            p = api.param(name)
            location = p.location if p is not None else "query"
            if location == "path":
                continue  # a path parameter without a placeholder has nowhere to go
            if location == "header":
                prepared.headers[name] = _str_value(value)
            elif method in BODY_METHODS and (location == "body" or not declares_body):
                body[name] = value
            else:
                prepared.params[name] = _query_value(value)
        if method in BODY_METHODS and body:
            whole = api.param("body")  # one `body` parameter stands for the whole JSON body
            wrapped = list(body) == ["body"] and whole is not None and whole.location == "body"
            prepared.body, prepared.has_body = (body["body"] if wrapped else body), True
        return prepared

    # ----------------------------------------------------------------- one attempt
    async def _attempt(self, state: _LoopState, req: _Prepared) -> _Reply | _Failure:
        parts = urlsplit(req.url)
        host_key = f"{parts.scheme}://{parts.netloc}"
        pool = self._host_pool(state, host_key)
        async with pool.semaphore:
            slot = pool.pick()
            pool.load[slot] += 1
            client = pool.clients[slot]
            try:
                async with asyncio.timeout(self.timeout):
                    kwargs: dict[str, Any] = {"params": req.params or None, "headers": req.headers}
                    if req.has_body:
                        kwargs["json"] = req.body
                    async with client.stream(req.method, req.url, **kwargs) as resp:
                        body, truncated = await read_capped(resp, self.max_response_bytes)
                        total = resp.headers.get("content-length")
                        return _Reply(resp.status_code, resp.reason_phrase, resp.headers, body, truncated,
                                      int(total) if total and total.isdigit() else None, resp.charset_encoding or "utf-8")
            except (TimeoutError, httpx.TimeoutException) as exc:
                if isinstance(exc, (httpx.ConnectTimeout, httpx.PoolTimeout)):
                    return _Failure("connect", f"connection to {parts.netloc} timed out")
                return _Failure("timeout", f"no complete response within {self.timeout:g} s")
            except httpx.ConnectError as exc:
                return _Failure("connect", f"could not connect to {parts.netloc}: {exc.__class__.__name__}")
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
                return _Failure("protocol", f"connection to {parts.netloc} failed: {exc.__class__.__name__}")
            except EncodingRefused as exc:
                return _Failure("encoding", f"{parts.netloc}: {exc}")
            except Exception as exc:  # a corrupt compressed stream (zlib.error, zstandard.ZstdError)
                if exc.__class__.__module__.split(".")[0] not in ("zlib", "zstd", "zstandard", "brotli", "_brotli"):
                    raise
                return _Failure("protocol", f"{parts.netloc} sent a corrupt compressed body: {exc.__class__.__name__}")
            finally:
                pool.load[slot] -= 1

    def _retry_delay(self, outcome: _Reply | _Failure, attempt: int) -> float | None:
        """Seconds to wait before the next attempt, or None when this outcome is final."""
        if attempt > self.retries:
            return None
        if isinstance(outcome, _Failure):
            retryable = outcome.kind not in ("timeout", "encoding")
            return backoff_delay(attempt, self.backoff, self.max_backoff, self._rng) if retryable else None
        if outcome.code == 429 or outcome.code >= 500:
            hinted = parse_retry_after(outcome.headers.get("retry-after"))
            if hinted is not None:
                return min(hinted, self.max_retry_after)
            return backoff_delay(attempt, self.backoff, self.max_backoff, self._rng)
        return None

    # ----------------------------------------------------------------- the call
    async def aexecute(self, api: Api, arguments: dict[str, Any]) -> Observation:
        """One call with already-validated arguments → an Observation (never raises for call failures)."""
        start = time.perf_counter()
        redact = self._redactor()
        try:
            obs = await self._execute(api, arguments, redact)
        except _RequestProblem as exc:
            obs = Observation(api.id, exc.status, error=redact.text(str(exc)))
        except Exception as exc:  # anything unexpected still becomes an observation
            message = redact.text(f"HTTP call failed: {exc.__class__.__name__}: {exc}")
            logger.warning("%s: %s", api.id, message)
            obs = Observation(api.id, Status.ERROR, error=message)
        latency = (time.perf_counter() - start) * 1000
        return Observation(obs.api_id, obs.status, content=obs.content, error=obs.error, simulated=False,
                           latency_ms=latency, meta=obs.meta)

    async def _execute(self, api: Api, arguments: dict[str, Any], redact: Redactor) -> Observation:
        req = self._prepare(api, arguments)
        secret_headers, env_notes = self._secret_headers()
        state = self._state()
        attempts, hops = 0, 0
        cross_origin = False  # once a redirect left the first origin, no credential is sent again
        while True:
            parts = urlsplit(req.url)
            host = parts.hostname or ""
            if parts.scheme not in ("http", "https"):
                return Observation(api.id, Status.ERROR, error=redact.text(f"unsupported URL scheme in {req.url}"))
            if not self.allow_private:
                try:  # the one lookup: the connection goes to these addresses (state.backend pins them)
                    addresses = await approved_addresses(host, parts.port, allow_loopback=self.allow_loopback)
                except AddressRefused as exc:
                    message = (f"refused to call {host}: {exc.reason}; pass allow_private=True to HttpExecutor to "
                               "allow it")
                    logger.warning("%s: %s", api.id, message)
                    return Observation(api.id, Status.ERROR, error=message, meta={"refused": True, "host": host})
                except OSError as exc:
                    return Observation(api.id, Status.ERROR, error=f"cannot resolve host {host}: {exc.__class__.__name__}",
                                       meta={"url": redact.text(req.url)})
                self._host_pool(state, f"{parts.scheme}://{parts.netloc}")  # creates state.backend
                if state.backend is not None:
                    state.backend.pin(host, addresses)
            headers = httpx.Headers(req.headers)
            configured = self._headers if not cross_origin else {
                k: v for k, v in self._headers.items() if k.lower() in FORWARDABLE_HEADERS}
            for k, v in {**configured, **secret_headers}.items():
                headers[k] = v  # configured headers win over same-named header arguments
            if self.rapidapi_host and host:
                headers["X-RapidAPI-Host"] = parts.netloc
            sendable = _Prepared(req.method, req.url, req.params, req.body, req.has_body, dict(headers.items()))
            while True:
                attempts += 1
                outcome = await self._attempt(state, sendable)
                delay = self._retry_delay(outcome, attempts)
                code = outcome.code if isinstance(outcome, _Reply) else outcome.kind
                logger.debug("%s %s -> %s (attempt %d)", req.method, redact.text(req.url), code, attempts)
                if delay is None:
                    break
                logger.info("retrying %s %s after %s in %.2f s", req.method, redact.text(req.url), code, delay)
                await asyncio.sleep(delay)
            location = outcome.headers.get("location") if isinstance(outcome, _Reply) else None
            if not (isinstance(outcome, _Reply) and outcome.code in REDIRECT_CODES and location
                    and hops < self.max_redirects):
                break
            hops += 1
            new_url = urljoin(req.url, location)
            forwarded = req.headers
            if origin(new_url) != origin(req.url):
                # another scheme, host or port: credentials stay behind (https → http would send them in clear)
                cross_origin, secret_headers = True, {}
                auth_names = {k.lower() for k in (*self._headers, *self._secrets, *self._headers_from_env)}
                forwarded = {k: v for k, v in req.headers.items()
                             if not is_credential_header(k) and k.lower() not in auth_names}
            method, has_body = req.method, req.has_body
            if outcome.code == 303 or (outcome.code in (301, 302) and method in BODY_METHODS):
                method, has_body = "GET", False
            req = _Prepared(method, new_url, {}, req.body if has_body else None, has_body, forwarded)
        meta: dict[str, Any] = {"method": req.method, "url": redact.text(req.url), "attempts": attempts}
        if hops:
            meta["redirects"] = hops
        if isinstance(outcome, _Failure):
            status = {"timeout": Status.TIMEOUT, "encoding": Status.ERROR}.get(outcome.kind, Status.SERVER_ERROR)
            suffix = f" after {attempts} attempts" if attempts > 1 else ""
            return Observation(api.id, status, error=redact.text(outcome.message + suffix), meta=meta)
        return self._observation(api, outcome, meta, redact, env_notes)

    def _observation(self, api: Api, reply: _Reply, meta: dict[str, Any], redact: Redactor,
                     env_notes: list[str]) -> Observation:
        meta["http_status"] = reply.code
        ctype = reply.headers.get("content-type", "").lower()
        text = reply.body.decode(reply.encoding, "replace") if reply.body else ""
        content: Any
        malformed = ""
        if reply.truncated:
            text = redact.cut_text(text)  # before anything is cut further: a cut secret leaves no prefix
            of = f" of {reply.total:,}" if reply.total else ""
            content = f"{text}... [response truncated: kept the first {len(reply.body):,} bytes{of}]"
            meta["truncated"] = True
        elif not text.strip():
            content = None
        else:
            try:
                content = json.loads(text)
            except ValueError as exc:
                content = text
                if "json" in ctype:
                    malformed = f"malformed JSON in the response (content type {ctype}): {exc}"
                else:
                    meta["note"] = f"the response is not JSON (content type {ctype or 'unknown'})"
        content = redact.scrub(content)
        if 200 <= reply.code < 300:
            if malformed:
                return Observation(api.id, Status.ERROR, content=content, error=redact.text(malformed), meta=meta)
            return Observation(api.id, Status.OK, content=content, meta=meta)
        message = error_message(content)
        status = status_for_http(reply.code, message)
        error = f"HTTP {reply.code} {reply.reason}".rstrip() + (f": {message}" if message else "")
        if status is Status.UNAUTHORIZED and env_notes:
            error += " (" + "; ".join(env_notes) + ")"
        if reply.code == 429 or reply.code >= 500:
            error += f" after {meta['attempts']} attempt{'s' if meta['attempts'] > 1 else ''}"
            hinted = reply.headers.get("retry-after")
            if hinted:
                meta["retry_after"] = hinted
        return Observation(api.id, status, content=content, error=redact.text(error), meta=meta)
