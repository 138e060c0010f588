"""Loopback HTTP servers for tests and benchmarks: RapidAPI-style endpoints, a virtual API server, an OpenAI chat API.

Each server runs its own asyncio loop in a daemon thread, listens on 127.0.0.1 with an ephemeral port, speaks a
minimal HTTP/1.1 (keep-alive, Content-Length and chunked request bodies) and stops on context exit, on `stop()`, or
by itself after `lifetime` seconds. Requests are recorded (bounded) and the number of requests being handled at once
is tracked, so tests can assert on headers sent and on client-side concurrency limits.

    with RapidApiServer(api_key="k", latency=0.05) as srv:
        ...  # srv.url, srv.requests, srv.max_in_flight, srv.fail_next("/x", 429, times=2, retry_after="1")
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any, Literal, Self
from urllib.parse import parse_qs, urlsplit

_REASONS = {
    200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
    404: "Not Found", 422: "Unprocessable Entity", 429: "Too Many Requests", 500: "Internal Server Error",
    502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
}
AUTH_HEADERS = frozenset({"x-rapidapi-key", "authorization", "x-api-key", "x-toolbench-key"})


@dataclass(frozen=True)
class Request:
    """One received request. Header names are lower-case."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    received_at: float

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.target).query, keep_blank_values=True)

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8")) if self.body else None


@dataclass
class Response:
    """What a handler returns. `delay` sleeps before replying (hangs when large)."""

    status: int = 200
    body: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)
    content_type: str = "application/json"
    delay: float = 0.0
    reason: str | None = None  # the status line's reason phrase (default: the standard one)
    drop: bool = False  # close the connection without answering (after `delay`)
    # a paced body: (seconds to wait, bytes) parts sent as they come (chunked transfer encoding), as a streaming
    # server sends; `body` is then unused. A client that hangs up meanwhile is counted in `disconnects`.
    parts: list[tuple[float, bytes]] | None = None
    stream: AsyncIterator[bytes] | None = None  # a body relayed as it comes (chunked, after `parts`), e.g. a proxy's

    @classmethod
    def json(cls, obj: Any, status: int = 200, headers: Iterable[tuple[str, str]] = (), delay: float = 0.0) -> Response:
        return cls(status, json.dumps(obj).encode("utf-8"), list(headers), delay=delay)

    @classmethod
    def text(cls, text: str, status: int = 200, content_type: str = "text/plain; charset=utf-8") -> Response:
        return cls(status, text.encode("utf-8"), content_type=content_type)


@dataclass
class _Fault:
    status: int
    times: int
    retry_after: str | None
    body: Any
    extra_headers: list[tuple[str, str]]


class LoopbackServer:
    """Base class: subclasses implement `handle(request) -> Response`."""

    def __init__(self, *, lifetime: float = 300.0, max_body: int = 16 * 1024 * 1024, record_limit: int = 20_000,
                 port: int = 0) -> None:
        self.lifetime = lifetime
        self.bind_port = port  # 0: a free port; else this one (a server restarted where a stopped one listened)
        self.max_body = max_body
        self.record_limit = record_limit
        self._lock = threading.Lock()
        self._requests: list[Request] = []
        self._in_flight = 0
        self._max_in_flight = 0
        self._count = 0
        self._faults: dict[str, list[_Fault]] = {}
        self._port = 0
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.disconnects = 0  # paced replies the client hung up on before their end (a server logs 499)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Self:
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._run, name=type(self).__name__, daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError(f"{type(self).__name__} did not start")
        if self._error is not None:
            raise RuntimeError(f"{type(self).__name__} failed to start") from self._error
        return self

    def stop(self) -> None:
        loop, ev, thread = self._loop, self._stop_event, self._thread
        if loop is not None and ev is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(ev.set)
        if thread is not None:
            thread.join(10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    # ------------------------------------------------------------------ observation and control
    @property
    def requests(self) -> list[Request]:
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        with self._lock:
            return self._count

    @property
    def max_in_flight(self) -> int:
        with self._lock:
            return self._max_in_flight

    def reset(self) -> None:
        """Forget recorded requests, counters and pending faults."""
        with self._lock:
            self._requests.clear()
            self._count = 0
            self._max_in_flight = self._in_flight
            self._faults.clear()

    def fail_next(self, path: str, status: int, times: int = 1, *, retry_after: str | None = None, body: Any = None,
                  headers: Iterable[tuple[str, str]] = ()) -> None:
        """The next `times` requests to `path` ("*" for any) get `status` (optionally with Retry-After)."""
        with self._lock:
            self._faults.setdefault(path, []).append(_Fault(status, times, retry_after, body, list(headers)))

    def _take_fault(self, path: str) -> _Fault | None:
        with self._lock:
            for key in (path, "*"):
                queue = self._faults.get(key)
                while queue:
                    fault = queue[0]
                    if fault.times <= 0:
                        queue.pop(0)
                        continue
                    fault.times -= 1
                    return fault
        return None

    @staticmethod
    def _fault_response(fault: _Fault) -> Response:
        body = fault.body if fault.body is not None else {"message": f"injected {fault.status}"}
        headers = list(fault.extra_headers)
        if fault.retry_after is not None:
            headers.append(("Retry-After", fault.retry_after))
        return Response.json(body, fault.status, headers)

    async def handle(self, request: Request) -> Response:
        raise NotImplementedError

    # ------------------------------------------------------------------ the server loop
    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        except BaseException as exc:
            self._error = exc
            self._ready.set()
        finally:
            loop.close()

    async def _main(self) -> None:
        self._stop_event = asyncio.Event()
        tasks: set[asyncio.Task[None]] = set()

        async def on_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            if task is not None:
                tasks.add(task)
            try:
                await self._serve_connection(reader, writer)
            except asyncio.CancelledError:  # shutting down: end quietly instead of as a cancelled task
                with contextlib.suppress(Exception):
                    writer.close()
            finally:
                if task is not None:
                    tasks.discard(task)

        server = await asyncio.start_server(on_client, "127.0.0.1", self.bind_port, backlog=4096, limit=256 * 1024)
        self._port = server.sockets[0].getsockname()[1]
        self._ready.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop_event.wait(), self.lifetime)
        server.close()
        for t in list(tasks):
            t.cancel()
        if tasks:
            await asyncio.wait(list(tasks), timeout=5)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 5)

    async def _read_request(self, reader: asyncio.StreamReader) -> tuple[Request, bool] | None:
        line = await reader.readline()
        if not line:
            return None
        parts = line.decode("latin-1").strip().split(" ")
        if len(parts) != 3:
            return None
        method, target, version = parts
        headers: dict[str, str] = {}
        while True:
            h = await reader.readline()
            if h in (b"\r\n", b"\n", b""):
                break
            name, _, value = h.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        body = b""
        if headers.get("transfer-encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    await reader.readline()
                    break
                chunks.append(await reader.readexactly(size))
                await reader.readline()
                if sum(map(len, chunks)) > self.max_body:
                    return None
            body = b"".join(chunks)
        elif "content-length" in headers:
            n = int(headers["content-length"])
            if n > self.max_body:
                return None
            body = await reader.readexactly(n)
        keep_alive = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        return Request(method.upper(), target, headers, body, time.monotonic()), keep_alive

    async def _send_parts(self, writer: asyncio.StreamWriter, response: Response, keep_alive: bool) -> bool:
        """Send a paced response (chunked); False when the client hung up before its end (counted)."""
        reason = response.reason if response.reason is not None else _REASONS.get(response.status, "Status")
        head = [f"HTTP/1.1 {response.status} {reason}", f"Content-Type: {response.content_type}",
                "Transfer-Encoding: chunked", f"Connection: {'keep-alive' if keep_alive else 'close'}"]
        head += [f"{k}: {v}" for k, v in response.headers]
        try:
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            await writer.drain()
            async for data in self._pieces(response):
                if writer.is_closing() or (writer.transport.get_extra_info("socket") is None):
                    raise ConnectionResetError
                if data:
                    writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                    await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return keep_alive
        except (ConnectionError, RuntimeError):
            with self._lock:
                self.disconnects += 1
            if response.stream is not None and hasattr(response.stream, "aclose"):
                await response.stream.aclose()  # the relayed stream's source learns that nobody reads it
            return False

    @staticmethod
    async def _pieces(response: Response) -> AsyncIterator[bytes]:
        for delay, data in response.parts or []:
            if delay > 0:
                await asyncio.sleep(delay)
            yield data
        if response.stream is not None:
            async for data in response.stream:
                yield data

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                parsed = await self._read_request(reader)
                if parsed is None:
                    break
                request, keep_alive = parsed
                with self._lock:
                    self._count += 1
                    if len(self._requests) < self.record_limit:
                        self._requests.append(request)
                    self._in_flight += 1
                    self._max_in_flight = max(self._max_in_flight, self._in_flight)
                try:
                    try:
                        response = await self.handle(request)
                    except Exception as exc:  # a bug in a handler must not kill the server
                        response = Response.text(f"handler error: {exc!r}", 500)
                    if response.delay > 0:
                        await asyncio.sleep(response.delay)
                finally:
                    with self._lock:
                        self._in_flight -= 1
                if response.drop:
                    break
                if response.parts is not None or response.stream is not None:
                    if not await self._send_parts(writer, response, keep_alive):
                        break
                    continue
                reason = response.reason if response.reason is not None else _REASONS.get(response.status, "Status")
                head = [f"HTTP/1.1 {response.status} {reason}",
                        f"Content-Type: {response.content_type}", f"Content-Length: {len(response.body)}",
                        f"Connection: {'keep-alive' if keep_alive else 'close'}"]
                head += [f"{k}: {v}" for k, v in response.headers]
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + response.body)
                await writer.drain()
                if not keep_alive:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()


class RapidApiServer(LoopbackServer):
    """RapidAPI-style endpoints. Every path echoes what it received, except these:

    `/hang` (sleeps `hang_seconds`), `/invalid-json` (broken JSON, JSON content type), `/huge` (`huge_bytes` of JSON),
    `/text` (text/plain), `/not-subscribed` (RapidAPI's 403), `/status/<code>` (that status).
    With `api_key` set, a request without that `X-RapidAPI-Key` gets 401. `latency` delays every reply (also
    settable per path with `set_latency`). The echo omits auth headers unless `echo_auth=True` (for scrubbing tests).
    """

    def __init__(self, *, api_key: str | None = None, latency: float = 0.0, echo_auth: bool = False,
                 hang_seconds: float = 30.0, huge_bytes: int = 5 * 1024 * 1024, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.api_key = api_key
        self.latency = latency
        self.echo_auth = echo_auth
        self.hang_seconds = hang_seconds
        self.huge_bytes = huge_bytes
        self._path_latency: dict[str, float] = {}

    def set_latency(self, seconds: float, path: str | None = None) -> None:
        with self._lock:
            if path is None:
                self.latency = seconds
            else:
                self._path_latency[path] = seconds

    async def handle(self, request: Request) -> Response:
        path = request.path
        with self._lock:
            delay = self._path_latency.get(path, self.latency)
        if delay > 0:
            await asyncio.sleep(delay)
        if self.api_key is not None and request.headers.get("x-rapidapi-key") != self.api_key:
            return Response.json({"message": "Invalid API key. Go to https://docs.rapidapi.com/docs/keys for more info."}, 401)
        fault = self._take_fault(path)
        if fault is not None:
            return self._fault_response(fault)
        if path == "/hang":
            return Response.json({"message": "finally"}, delay=self.hang_seconds)
        if path == "/invalid-json":
            return Response(200, b'{"broken": tru', content_type="application/json")
        if path == "/huge":
            filler = b"x" * max(0, self.huge_bytes - 12)
            return Response(200, b'{"data": "' + filler + b'"}', content_type="application/json")
        if path == "/text":
            return Response.text("plain text reply")
        if path == "/not-subscribed":
            return Response.json({"message": "You are not subscribed to this API."}, 403)
        if path.startswith("/status/"):
            code = int(path.rsplit("/", 1)[1])
            return Response.json({"message": f"status {code} as asked"}, code)
        return Response.json(self._echo(request))

    def _echo(self, request: Request) -> dict[str, Any]:
        headers = {k: v for k, v in request.headers.items() if self.echo_auth or k not in AUTH_HEADERS}
        try:
            body: Any = request.json()
        except (ValueError, UnicodeDecodeError):
            body = request.body.decode("utf-8", "replace")
        query = {k: v[0] if len(v) == 1 else v for k, v in request.query.items()}
        return {"method": request.method, "path": request.path, "query": query, "headers": headers, "json": body}


VirtualKey = tuple[str, str, str]  # (category, tool_name, api_name)


class VirtualApiServer(LoopbackServer):
    """A StableToolBench-compatible virtual API server backed by canned responses.

    POST any path with `{"category", "tool_name", "api_name", "tool_input", "strip", "toolbench_key"}`; replies
    `{"error": "...", "response": ...}`. `responses` values may be callables of `tool_input`; they are sent as a JSON
    string (as StableToolBench does) unless `response_as_string=False`. `errors` map a key to an error message.
    """

    def __init__(self, responses: Mapping[VirtualKey, Any] | None = None, *, errors: Mapping[VirtualKey, str] | None = None,
                 toolbench_key: str | None = None, response_as_string: bool = True, latency: float = 0.0,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.responses = dict(responses or {})
        self.errors = dict(errors or {})
        self.toolbench_key = toolbench_key
        self.response_as_string = response_as_string
        self.latency = latency

    async def handle(self, request: Request) -> Response:
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        fault = self._take_fault(request.path)
        if fault is not None:
            return self._fault_response(fault)
        if request.method != "POST":
            return Response.json({"detail": "Method Not Allowed"}, 405)
        try:
            info = request.json()
        except ValueError:
            return Response.json({"detail": "invalid JSON body"}, 422)
        missing = [f for f in ("category", "tool_name", "api_name", "tool_input") if not isinstance(info, dict) or f not in info]
        if missing:
            return Response.json({"detail": [{"loc": ["body", f], "msg": "field required"} for f in missing]}, 422)
        if self.toolbench_key is not None and info.get("toolbench_key") != self.toolbench_key:
            return Response.json({"error": "Unauthorized: the toolbench key is invalid", "response": ""})
        key = (info["category"], info["tool_name"], info["api_name"])
        if key in self.errors:
            return Response.json({"error": self.errors[key], "response": ""})
        if key not in self.responses:
            return Response.json({"error": f"API not found: {'/'.join(key)}", "response": ""})
        value = self.responses[key]
        tool_input = info["tool_input"]
        if isinstance(tool_input, str):
            tool_input = json.loads(tool_input) if tool_input.strip() else {}
        if callable(value):
            value = value(tool_input)
        response = json.dumps(value) if self.response_as_string and not isinstance(value, str) else value
        return Response.json({"error": "", "response": response})


@dataclass
class ChatReply:
    """A scripted assistant turn: text and/or tool calls `(name, arguments)`; `usage` overrides token counts.

    Content faults: `raw_tool_calls` are `(name, arguments text)` sent as they are (not JSON, missing fields, ...);
    `refusal` fills OpenAI's `refusal` field (content stays empty). `function_call` `(name, arguments text)` is a
    legacy reply to a request with `functions` (non-streaming only): `message.function_call`, finish reason
    "function_call"."""

    content: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    usage: tuple[int, int] | None = None
    raw_tool_calls: list[tuple[str, str]] = field(default_factory=list)
    refusal: str | None = None
    function_call: tuple[str, str] | None = None


@dataclass(frozen=True)
class ChatFault:
    """A transport fault answered instead of a reply (it consumes no scripted reply unless it is a script item).

    kinds: "status" (an HTTP error in OpenAI's error shape, with optional Retry-After), "drop" (the connection is
    closed without an answer), "slow" (the reply comes after `delay` seconds: longer than the client's timeout),
    "context_length" (400 `context_length_exceeded`, OpenAI's body)."""

    kind: Literal["status", "drop", "slow", "context_length"] = "status"
    status: int = 500
    retry_after: str | None = None
    delay: float = 0.0

    @classmethod
    def rate_limited(cls, retry_after: str | None = None) -> ChatFault:
        return cls("status", 429, retry_after)

    @classmethod
    def server_error(cls, status: int = 500) -> ChatFault:
        return cls("status", status)

    @classmethod
    def dropped(cls) -> ChatFault:
        return cls("drop")

    @classmethod
    def slow(cls, seconds: float) -> ChatFault:
        return cls("slow", delay=seconds)

    @classmethod
    def context_length(cls) -> ChatFault:
        return cls("context_length", 400)

    @property
    def transport(self) -> bool:
        """Whether the fault is one a retry of the same request overcomes (not a context-length refusal)."""
        return self.kind != "context_length"


ScriptItem = str | ChatReply | ChatFault | Callable[[dict[str, Any]], "str | ChatReply | ChatFault"]
FaultHook = Callable[[int, dict[str, Any]], "ChatFault | None"]


def tool_call(name: str, **arguments: Any) -> ChatReply:
    """A reply with one tool call."""
    return ChatReply(tool_calls=[(name, arguments)])


def context_length_body(limit: int, used: int) -> dict[str, Any]:
    """OpenAI's error body for a prompt over the model's context window."""
    return {"error": {"message": f"This model's maximum context length is {limit} tokens. However, your messages "
                                 f"resulted in {used} tokens. Please reduce the length of the messages.",
                      "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}


def prompt_tokens_of(body: Mapping[str, Any]) -> int:
    """The server's token count of a request: characters of messages and tools / 4 (an estimate, like ours)."""
    return max(1, (len(json.dumps(body.get("messages", []))) + len(json.dumps(body.get("tools") or []))) // 4)


class OpenAIChatServer(LoopbackServer):
    """An OpenAI-compatible `/v1/chat/completions` (non-streaming and SSE streaming) replying from a script.

    Script items are consumed in order: text, `ChatReply`, `ChatFault`, or a callable of the request body. When the
    script is exhausted, `policy(body)` answers if given, else the server answers 400 (not retried by clients) saying
    so. Faults: `fail_chat(429, retry_after="0.05")`, `ChatFault` script items, or `fault_hook(n, body)` (called per
    request, n counting from 1: return a fault or None, e.g. seeded random faults). `context_window=N` refuses
    prompts over N tokens with `context_length_exceeded`; `tools_supported=False` refuses requests with `tools`
    as a model without function calling does (Ollama's wording); `functions_supported=False` refuses requests with
    the legacy `functions` parameter as a server that does not know it does (OpenAI's wording for an unknown one). A reply longer than the request's
    `max_completion_tokens` (or `max_tokens`) is cut as a server cuts it: its text to 4 characters a token, no tool
    calls, `completion_tokens` the cap, `finish_reason` "length". `chat_requests` are the received request bodies.
    """

    PATH = "/v1/chat/completions"

    def __init__(self, script: Iterable[ScriptItem] = (), *, model: str = "gpt-test", latency: float = 0.0,
                 policy: Callable[[dict[str, Any]], str | ChatReply] | None = None, fault_hook: FaultHook | None = None,
                 context_window: int | None = None, tools_supported: bool = True, functions_supported: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._script: list[ScriptItem] = list(script)
        self.model = model
        self.latency = latency
        self.policy = policy
        self.fault_hook = fault_hook
        self.context_window = context_window
        self.tools_supported = tools_supported
        self.functions_supported = functions_supported
        self._ids = itertools.count(1)
        self._chat_count = itertools.count(1)
        self.faults_sent: list[ChatFault] = []

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def add(self, *items: ScriptItem) -> None:
        with self._lock:
            self._script.extend(items)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._script)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r.json() for r in self.requests if r.path == self.PATH and r.method == "POST"]

    def fail_chat(self, status: int, times: int = 1, *, retry_after: str | None = None,
                  retry_after_ms: int | None = None) -> None:
        """The next `times` chat requests fail with `status` in OpenAI's error shape."""
        headers = [("retry-after-ms", str(retry_after_ms))] if retry_after_ms is not None else []
        kind = "rate_limit_exceeded" if status == 429 else "server_error"
        self.fail_next(self.PATH, status, times, retry_after=retry_after, headers=headers,
                       body={"error": {"message": f"injected {status}", "type": kind, "code": kind}})

    def _fault(self, fault: ChatFault, body: Mapping[str, Any]) -> Response:
        with self._lock:
            self.faults_sent.append(fault)
        if fault.kind == "drop":
            return Response(drop=True)
        if fault.kind == "context_length":
            return Response.json(context_length_body(self.context_window or 4096, prompt_tokens_of(body)), 400)
        if fault.kind == "slow":
            return Response.json({"error": {"message": "too late", "type": "server_error"}}, 500, delay=fault.delay)
        code = "rate_limit_exceeded" if fault.status == 429 else "server_error"
        headers = [("Retry-After", fault.retry_after)] if fault.retry_after is not None else []
        return Response.json({"error": {"message": f"injected {fault.status}", "type": code, "code": code}},
                             fault.status, headers)

    async def handle(self, request: Request) -> Response:
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        if request.path != self.PATH or request.method != "POST":
            return Response.json({"error": {"message": f"no route {request.method} {request.path}"}}, 404)
        fault = self._take_fault(request.path)
        if fault is not None:
            return self._fault_response(fault)
        body = request.json()
        n = next(self._chat_count)
        hooked = self.fault_hook(n, body) if self.fault_hook is not None else None
        if hooked is not None:
            return self._fault(hooked, body)
        if not self.tools_supported and body.get("tools"):
            return Response.json({"error": {"message": f"registry.ollama.ai/library/{body.get('model', self.model)} "
                                                       "does not support tools", "type": "api_error"}}, 400)
        if not self.functions_supported and "functions" in body:
            return Response.json({"error": {"message": "Unrecognized request argument supplied: functions",
                                            "type": "invalid_request_error", "param": None, "code": None}}, 400)
        if self.context_window is not None and prompt_tokens_of(body) > self.context_window:
            return Response.json(context_length_body(self.context_window, prompt_tokens_of(body)), 400)
        with self._lock:
            item = self._script.pop(0) if self._script else None
        if item is None and self.policy is not None:
            item = self.policy
        if item is None:
            return Response.json({"error": {"message": "OpenAIChatServer: no scripted response left",
                                            "type": "invalid_request_error"}}, 400)
        reply = item(body) if callable(item) else item
        if isinstance(reply, ChatFault):
            return self._fault(reply, body)
        if isinstance(reply, str):
            reply = ChatReply(content=reply)
        return self._reply(reply, body)

    def _reply(self, reply: ChatReply, body: Mapping[str, Any]) -> Response:
        n = next(self._ids)
        encoded = [(name, json.dumps(args)) for name, args in reply.tool_calls] + list(reply.raw_tool_calls)
        calls: list[dict[str, Any]] = [{"id": f"call_{n}_{i}", "type": "function",
                                        "function": {"name": name, "arguments": args}}
                                       for i, (name, args) in enumerate(encoded)]
        prompt_tokens, completion_tokens = reply.usage or (
            prompt_tokens_of(body),
            max(1, (len(reply.content) + sum(len(args) for _, args in encoded)) // 4))
        finish = "function_call" if reply.function_call else "tool_calls" if calls else "stop"
        cap = body.get("max_completion_tokens", body.get("max_tokens"))
        if isinstance(cap, int) and completion_tokens > cap:  # as a server stops at max_tokens: the text cut
            reply, calls, completion_tokens, finish = replace(reply, content=reply.content[: cap * 4]), [], cap, "length"
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens}
        base = {"id": f"chatcmpl-{n}", "created": int(time.time()), "model": body.get("model", self.model)}
        if body.get("stream"):
            return self._stream(base, reply.content, calls, finish, usage,
                                bool((body.get("stream_options") or {}).get("include_usage")), reply.refusal,
                                reply.function_call)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
        if reply.refusal is not None:
            message["refusal"] = reply.refusal
        if calls:
            message["tool_calls"] = calls
        if reply.function_call is not None:
            message["function_call"] = {"name": reply.function_call[0], "arguments": reply.function_call[1]}
        return Response.json({**base, "object": "chat.completion", "usage": usage,
                              "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}]})

    @staticmethod
    def _stream(base: dict[str, Any], content: str, calls: list[dict[str, Any]], finish: str,
                usage: dict[str, int], include_usage: bool, refusal: str | None = None,
                function_call: tuple[str, str] | None = None) -> Response:
        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            return {**base, "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}]}

        events = [chunk({"role": "assistant", "content": ""})]
        events += [chunk({"content": content[i:i + 16]}) for i in range(0, len(content), 16)]
        if refusal is not None:
            events.append(chunk({"refusal": refusal}))
        if function_call is not None:  # a legacy call streams as OpenAI streams it: the name, then the arguments
            events.append(chunk({"function_call": {"name": function_call[0], "arguments": ""}}))
            events.append(chunk({"function_call": {"arguments": function_call[1]}}))
        for i, c in enumerate(calls):
            events.append(chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                                 "function": {"name": c["function"]["name"], "arguments": ""}}]}))
            events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": c["function"]["arguments"]}}]}))
        events.append(chunk({}, finish))
        if include_usage:
            events.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        return Response(200, text.encode("utf-8"), content_type="text/event-stream")


Handler = Callable[[Request], Awaitable[Response]]


class FunctionServer(LoopbackServer):
    """A loopback server whose behaviour is one async function (for one-off tests)."""

    def __init__(self, handler: Handler, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._handler = handler

    async def handle(self, request: Request) -> Response:
        return await self._handler(request)


def main(argv: list[str] | None = None) -> None:
    """Run one server in this process until stdin closes (for benchmarks that keep it off the client's GIL).

    `python -m tests.servers rapidapi --latency 0.05` prints `URL http://127.0.0.1:<port>` once it listens.
    """
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m tests.servers")
    parser.add_argument("kind", choices=["rapidapi", "virtual", "openai"])
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--lifetime", type=float, default=600.0)
    parser.add_argument("--api-key", default=None)
    args = parser.parse_args(argv)
    server: LoopbackServer
    if args.kind == "rapidapi":
        server = RapidApiServer(api_key=args.api_key, latency=args.latency, lifetime=args.lifetime)
    elif args.kind == "virtual":
        server = VirtualApiServer(latency=args.latency, lifetime=args.lifetime)
    else:
        server = OpenAIChatServer(latency=args.latency, lifetime=args.lifetime)
    with server:
        print(f"URL {server.url}", flush=True)
        watcher = threading.Thread(target=sys.stdin.read, daemon=True)
        watcher.start()
        watcher.join(args.lifetime)


if __name__ == "__main__":
    main()


@contextlib.contextmanager
def loopback_listener(timeout: float = 4.0) -> Iterator[tuple[int, list[bool]]]:
    """A TCP listener on 127.0.0.1 that records any accepted connection: yields (port, accepted)."""
    import socket

    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(timeout)
    accepted: list[bool] = []

    def accept() -> None:
        try:
            conn, _ = server.accept()
            accepted.append(True)
            conn.close()
        except OSError:
            pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], accepted
    finally:
        thread.join(timeout + 1)
        server.close()


def free_port() -> int:
    """A free TCP port on the loopback interface (the package's own helper)."""
    from langgraph_anytool.integrations.local_models import free_port as package_free_port

    return package_free_port()


@contextlib.contextmanager
def langgraph_dev(config: Any, log_dir: Any, env: Mapping[str, str] | None = None) -> Iterator[str]:
    """`langgraph dev` (the in-memory LangGraph server) for `config` (a langgraph.json) on a free loopback port, in
    `env` (default: this process's environment): yields its base URL once it answers, stops its process group on
    exit. Skips the test without langgraph-cli."""
    import os
    import shutil
    import signal
    import subprocess
    import sys
    import urllib.request
    from pathlib import Path

    import pytest

    cli = Path(sys.executable).with_name("langgraph")
    if not cli.exists() and shutil.which("langgraph") is None:
        pytest.skip("langgraph-cli[inmem] is not installed")
    port = free_port()
    env = {**(os.environ if env is None else env), "LANGSMITH_TRACING": "false", "LANGGRAPH_CLI_NO_ANALYTICS": "1"}
    log_path = Path(log_dir) / "dev.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen([str(cli if cli.exists() else "langgraph"), "dev", "--port", str(port), "--host",
                                 "127.0.0.1", "--no-browser", "--no-reload", "--config", str(config)],
                                cwd=Path(config).parent, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 180  # the Studio server builds its graph and index before it answers
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    with urllib.request.urlopen(urllib.request.Request(
                            f"{base}/assistants/search", data=b"{}", headers={"content-type": "application/json"}),
                            timeout=60):
                        break
                except OSError:
                    time.sleep(0.5)
            else:
                raise AssertionError(f"server did not start: {log_path.read_text()[-2000:]}")
            yield base
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
