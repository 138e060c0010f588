"""A recording loopback proxy in front of OpenAI-compatible servers (llama-server, vLLM, Ollama, any).

The client talks to the proxy as to one server; each request goes to the upstream that serves the model it names
(the JSON body's `model`, or a `?model=` query; else the first upstream), so two llama-servers behind one proxy
look like one multi-model server (as Ollama, or llama-server's router mode). Streamed replies pass through as they
come. Every chat completion is recorded with what the SERVER said about it: its `usage` (prompt and completion
tokens), llama.cpp's `timings` (tokens per second), the request's `max_tokens`, the status and any error text.

    with RecordingProxy({"smollm2": "http://127.0.0.1:8081"}) as proxy:
        ...  # OPENAI_BASE_URL=proxy.base_url; then proxy.chats(), proxy.over_window(2048)
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.servers import LoopbackServer, Request, Response

CHAT_PATH = "/chat/completions"
HOP_HEADERS = frozenset({"host", "content-length", "connection", "transfer-encoding", "keep-alive",
                         "accept-encoding", "content-encoding"})


@dataclass
class Exchange:
    """One proxied chat completion, as the server answered it."""

    model: str
    upstream: str
    started: float  # time.monotonic() when it arrived
    seconds: float = 0.0  # until the server's last byte
    status: int = 0
    stream: bool = False
    max_tokens: int | None = None  # max_tokens / max_completion_tokens of the request (None: none sent)
    messages: int = 0
    tools: int = 0
    prompt_tokens: int | None = None  # the server's usage
    completion_tokens: int | None = None
    tokens_per_second: float | None = None  # llama.cpp `timings.predicted_per_second`
    prompt_per_second: float | None = None  # llama.cpp `timings.prompt_per_second`
    finish_reason: str | None = None
    called: bool = False  # the reply called a function (native `tool_calls`)
    text: str = ""  # the request's message contents, joined (which query a request served)
    error: str = ""  # the body of a reply that was not 200 (cut), or the transport error
    # the functions the request offered: name → parameters schema (native `tools`, or the branches of a constrained
    # request's `response_format` JSON schema), and whether the reply was constrained to a call
    offered: dict[str, Any] = field(default_factory=dict)
    constrained: bool = False
    grammar: bool = False  # the request carried a GBNF `grammar` of a call (a text-mode call on llama.cpp)
    decision: bool = False  # the request carried a GBNF `grammar` of no call (α-UMi's planner: a `Next:` decision)
    reply_text: str = ""  # the reply's content (streamed deltas joined)
    native_calls: dict[int, list[str]] = field(default_factory=dict)  # index → [name, arguments text]

    def function_calls(self) -> list[tuple[str, Any]]:
        """The calls the reply made: (name, arguments; None when they are no JSON object). A constrained reply's
        content is its call (`{"name": ..., "arguments": ...}`); a reply that is no such object made none."""
        out: list[tuple[str, Any]] = []
        for name, args in self.native_calls.values():
            try:
                value = json.loads(args or "{}")
            except ValueError:
                value = None
            out.append((name, value if isinstance(value, dict) else None))
        if self.grammar and not out:
            from langgraph_anytool.protocol import parse_action

            parsed = parse_action(self.reply_text)
            if parsed is not None:
                out.append((parsed.name, parsed.args))
        if self.constrained and not out:
            try:
                value = json.loads(self.reply_text)
            except ValueError:
                value = None
            if isinstance(value, dict) and isinstance(value.get("name"), str):
                args = value.get("arguments")
                out.append((value["name"], args if isinstance(args, dict) else None))
        return out

    def valid_calls(self) -> int:
        """The reply's calls whose name is an offered function and whose arguments pass its parameters' schema."""
        return sum(valid_call(self.offered, name, args) for name, args in self.function_calls())

    @property
    def ok(self) -> bool:
        return self.status == 200 and not self.error

    @property
    def cut(self) -> bool:
        """A streamed reply the client stopped reading before its end (e.g. at its run's time limit)."""
        return self.status == 200 and self.error.startswith("stream cut")

    def bound(self) -> int | None:
        """What the request could take of the window: its prompt (the server's count) plus its `max_tokens`."""
        if self.prompt_tokens is None or self.max_tokens is None:
            return None
        return self.prompt_tokens + self.max_tokens


def valid_call(offered: Mapping[str, Any], name: str, args: Any) -> bool:
    """`name` is offered and `args` a JSON object its parameters' schema accepts (a schema jsonschema cannot read
    checks the name only)."""
    import jsonschema

    if name not in offered or not isinstance(args, dict):
        return False
    schema = offered[name]
    if not isinstance(schema, Mapping) or not schema:
        return True
    try:
        jsonschema.validate(args, dict(schema))
    except jsonschema.ValidationError:
        return False
    except jsonschema.SchemaError:
        return True
    return True


CALL_RULE = re.compile(r'^call\d+ ::= ("(?:[^"\\]|\\.)*")', re.MULTILINE)


def text_functions(grammar: str) -> dict[str, Any]:
    """The names a text-mode grammar's `callN` rules offer (their arguments: checked as any object)."""
    return {str(json.loads(m.group(1))): {} for m in CALL_RULE.finditer(grammar)}


def offered_functions(body: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """(name → parameters, constrained) of a chat request: a `response_format` JSON schema's branches
    (`{"name": {"const": ...}, "arguments": ...}`), else its native `tools`."""
    fmt = body.get("response_format")
    schema = (fmt.get("json_schema") or {}).get("schema") if isinstance(fmt, Mapping) else None
    if isinstance(schema, Mapping):
        out: dict[str, Any] = {}
        for branch in schema.get("oneOf") or [schema]:
            props = branch.get("properties") if isinstance(branch, Mapping) else None
            name = (props.get("name") or {}).get("const") if isinstance(props, Mapping) else None
            if isinstance(name, str):
                out[name] = props.get("arguments") or {}
        return out, True
    tools = body.get("tools") or []
    return {str(t["function"].get("name")): t["function"].get("parameters") or {} for t in tools
            if isinstance(t, Mapping) and isinstance(t.get("function"), Mapping)}, False


class RecordingProxy(LoopbackServer):
    """A loopback proxy to `upstreams` (model name → server root URL, e.g. "http://127.0.0.1:8081")."""

    def __init__(self, upstreams: Mapping[str, str], *, lifetime: float = 7200.0) -> None:
        super().__init__(lifetime=lifetime, max_body=64 * 1024 * 1024)
        if not upstreams:
            raise ValueError("RecordingProxy needs at least one upstream")
        self.upstreams = {name: url.rstrip("/") for name, url in upstreams.items()}
        self._exchanges: list[Exchange] = []
        self._record_lock = threading.Lock()
        self.paths: list[str] = []  # every request's method and path, in order (discovery, tokenize, ...)

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def chats(self, model: str | None = None) -> list[Exchange]:
        """The chat completions so far (of `model`, or all)."""
        with self._record_lock:
            return [e for e in self._exchanges if model is None or e.model == model]

    def clear(self) -> None:
        with self._record_lock:
            self._exchanges.clear()
            self.paths.clear()

    def over_window(self, window: int, model: str | None = None) -> list[Exchange]:
        """The chat requests that did not keep within `window` tokens: no `max_tokens`, no usage from the server, or
        the server's prompt count plus `max_tokens` over it (a reply the client cut short has no count: left out)."""
        return [e for e in self.chats(model) if not e.cut and (e.bound() is None or e.bound() > window)]  # type: ignore[operator]

    def server_usage(self, model: str | None = None) -> tuple[int, int]:
        """(prompt, completion) tokens the server counted over the answered chat requests."""
        chats = [e for e in self.chats(model) if e.ok]
        return sum(e.prompt_tokens or 0 for e in chats), sum(e.completion_tokens or 0 for e in chats)

    def _upstream(self, request: Request, body: Any) -> tuple[str, str]:
        name = body.get("model") if isinstance(body, dict) else None
        name = name or (request.query.get("model") or [""])[0]
        if name in self.upstreams:
            return name, self.upstreams[name]
        first = next(iter(self.upstreams))
        return str(name or first), self.upstreams[first]

    async def handle(self, request: Request) -> Response:
        try:
            body = json.loads(request.body) if request.body else None
        except ValueError:
            body = None
        model, upstream = self._upstream(request, body)
        with self._record_lock:
            self.paths.append(f"{request.method} {request.path}")
        headers = {k: v for k, v in request.headers.items() if k not in HOP_HEADERS}
        is_chat = request.method == "POST" and request.path.endswith(CHAT_PATH) and isinstance(body, dict)
        client = httpx.AsyncClient(timeout=httpx.Timeout(None, connect=10.0))
        upstream_request = client.build_request(request.method, upstream + request.target, headers=headers,
                                                content=request.body)
        exchange = None
        if is_chat:
            cap = body.get("max_completion_tokens", body.get("max_tokens"))
            exchange = Exchange(model=model, upstream=upstream, started=request.received_at,
                                stream=bool(body.get("stream")), max_tokens=cap if isinstance(cap, int) else None,
                                messages=len(body.get("messages") or []), tools=len(body.get("tools") or []),
                                text="\n".join(str(m.get("content")) for m in body.get("messages") or []
                                               if isinstance(m, dict)))
            exchange.offered, exchange.constrained = offered_functions(body)
            grammar = str(body.get("grammar") or "")
            exchange.grammar = bool(text_functions(grammar))
            exchange.decision = bool(grammar) and not exchange.grammar  # α-UMi's planner, held to its `Next:` line
            if exchange.grammar:  # a text call: `Action: <name>` / `Action Input: <JSON>`
                exchange.offered = text_functions(grammar)
        try:
            reply = await client.send(upstream_request, stream=True)
        except httpx.HTTPError as exc:
            await client.aclose()
            if exchange is not None:
                exchange.error, exchange.status = f"upstream: {exc!r}", 502
                self._record(exchange)
            return Response.text(f"proxy: upstream {upstream} failed: {exc!r}", 502)
        out_headers = [(k, v) for k, v in reply.headers.items() if k.lower() not in HOP_HEADERS | {"content-type"}]
        content_type = reply.headers.get("content-type", "application/json")
        if exchange is not None and exchange.stream and reply.status_code == 200:
            return Response(200, b"", out_headers, content_type=content_type,
                            stream=self._relay(reply, client, exchange))
        try:
            data = await reply.aread()
        finally:
            await reply.aclose()
            await client.aclose()
        if exchange is not None:
            exchange.status = reply.status_code
            if reply.status_code == 200:
                try:
                    self._note(exchange, json.loads(data))
                except ValueError:
                    exchange.error = f"not JSON: {data[:200]!r}"
            else:
                exchange.error = data.decode("utf-8", "replace")[:2000]
            self._record(exchange)
        return Response(reply.status_code, data, out_headers, content_type=content_type)

    async def _relay(self, reply: httpx.Response, client: httpx.AsyncClient,
                     exchange: Exchange) -> AsyncIterator[bytes]:
        """Pass a streamed reply on as it comes, reading its events for the usage and timings."""
        exchange.status = reply.status_code
        pending = b""
        try:
            async for piece in reply.aiter_raw():
                pending += piece
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    self._note_event(exchange, line)
                yield piece
            self._note_event(exchange, pending)
        except BaseException as exc:  # the client went away (GeneratorExit) or the upstream broke
            exchange.error = exchange.error or f"stream cut: {type(exc).__name__}"
            raise
        finally:
            await reply.aclose()
            await client.aclose()
            self._record(exchange)

    def _note_event(self, exchange: Exchange, line: bytes) -> None:
        text = line.strip()
        if not text.startswith(b"data:") or text[5:].strip() == b"[DONE]":
            return
        try:
            event = json.loads(text[5:])
        except ValueError:
            return
        if isinstance(event, dict):
            if "error" in event:
                exchange.error = json.dumps(event["error"])[:2000]
            self._note(exchange, event)

    @staticmethod
    def _note(exchange: Exchange, data: Mapping[str, Any]) -> None:
        usage = data.get("usage")
        if isinstance(usage, Mapping):
            exchange.prompt_tokens = usage.get("prompt_tokens")
            exchange.completion_tokens = usage.get("completion_tokens")
        timings = data.get("timings")
        if isinstance(timings, Mapping):
            exchange.tokens_per_second = timings.get("predicted_per_second")
            exchange.prompt_per_second = timings.get("prompt_per_second")
        for choice in data.get("choices") or ():
            if not isinstance(choice, Mapping):
                continue
            if choice.get("finish_reason"):
                exchange.finish_reason = choice["finish_reason"]
            said = choice.get("message") or choice.get("delta") or {}
            if not isinstance(said, Mapping):
                continue
            if isinstance(said.get("content"), str):
                exchange.reply_text += said["content"]
            for i, call in enumerate(said.get("tool_calls") or ()):
                fn = call.get("function") if isinstance(call, Mapping) else None
                if not isinstance(fn, Mapping):
                    continue
                slot = exchange.native_calls.setdefault(int(call.get("index", i)), ["", ""])
                slot[0] += str(fn.get("name") or "")
                slot[1] += str(fn.get("arguments") or "")
            if said.get("tool_calls") or ((exchange.constrained or exchange.grammar) and choice.get("finish_reason")
                                          and exchange.function_calls()):
                exchange.called = True

    def _record(self, exchange: Exchange) -> None:
        exchange.seconds = time.monotonic() - exchange.started
        with self._record_lock:
            self._exchanges.append(exchange)
