"""Loopback fakes of the model servers a local user runs (issue 26): llama.cpp's `llama-server`, replaying the
replies recorded from the real one (`tests/data/llama_cpp/`, hand-trimmed), and vLLM and Ollama with their
discovery and tokenize shapes.

Each has a deterministic stand-in tokenizer (`chars_per_token` characters a token, 2 by default: SmolLM2 counted
about 3.3 characters a token on AnyTool's prompts, the JSON-heavy ones fewer) that every count it reports uses —
`/tokenize`, `usage.prompt_tokens`, its overflow check —, as the real server's tokenizer does for all of them. A
chat prompt is the messages rendered with SmolLM2's ChatML template, as llama-server renders it (its template drops
`tools`); vLLM's count adds the tools' JSON. Each chat request is logged in `chats` (`ChatLog`: the prompt's tokens
as the server counted them, the `max_tokens` it carried, whether it was streamed, its status).

Replies come from a script (text, `ChatReply`) and then `policy(body)`, as `OpenAIChatServer`'s do. Timing:
`first_token_seconds` (reading the prompt) and `token_seconds` (per generated token) pace a streamed reply chunk
by chunk (llama.cpp pings `:` every `ping_every` seconds while it reads the prompt); a non-streamed reply comes
after the whole time. `silent_seconds` holds every reply back that long without sending a byte.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.servers import ChatReply, LoopbackServer, Request, Response

DATA = Path(__file__).parent / "data" / "llama_cpp"
SMOLLM_DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


def recorded(name: str) -> Any:
    """A recorded llama-server reply (JSON) from tests/data/llama_cpp/."""
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def recorded_stream() -> list[dict[str, Any]]:
    """The recorded streamed reply's `data:` events (the `[DONE]` marker and the `:` pings left out)."""
    lines = (DATA / "stream.txt").read_text(encoding="utf-8").splitlines()
    return [json.loads(line[6:]) for line in lines if line.startswith("data: {")]


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    return ""


def chatml(messages: Iterable[Mapping[str, Any]]) -> str:
    """The messages as SmolLM2's chat template renders them in llama-server (tools are not rendered), with the
    generation prompt."""
    out, first = [], True
    for m in messages:
        if first and m.get("role") != "system":
            out.append(f"<|im_start|>system\n{SMOLLM_DEFAULT_SYSTEM}<|im_end|>\n")
        first = False
        out.append(f"<|im_start|>{m.get('role')}\n{text_of(m.get('content'))}<|im_end|>\n")
    return "".join(out) + "<|im_start|>assistant\n"


@dataclass(frozen=True)
class ChatLog:
    """One chat request as the server saw it."""

    prompt_tokens: int
    max_tokens: int | None
    stream: bool
    status: int
    n_ctx: int
    tools: int = 0  # tool schemas sent

    @property
    def within_window(self) -> bool:
        """The prompt and the reply's `max_tokens` fit the window (a request without max_tokens: the prompt)."""
        return self.prompt_tokens + (self.max_tokens or 0) <= self.n_ctx


Reply = str | ChatReply


class ModelServer(LoopbackServer):
    """The common part: the tokenizer, the chat endpoint, pacing; `flavour` is "llama.cpp", "vllm" or "ollama"."""

    flavour = ""

    def __init__(self, script: Iterable[Reply] = (), *, policy: Callable[[dict[str, Any]], Reply] | None = None,
                 model: str = "smollm2-135m", n_ctx: int = 8192, chars_per_token: float = 2.0,
                 first_token_seconds: float = 0.0, token_seconds: float = 0.0, ping_every: float | None = None,
                 silent_seconds: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._script: list[Reply] = list(script)
        self.policy = policy
        self.model = model
        self.n_ctx = n_ctx
        self.chars_per_token = chars_per_token
        self.first_token_seconds = first_token_seconds
        self.token_seconds = token_seconds
        self.ping_every = ping_every
        self.silent_seconds = silent_seconds
        self.chats: list[ChatLog] = []
        self._ids = itertools.count(1)

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def tokens(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token)

    def prompt_tokens(self, body: Mapping[str, Any]) -> int:
        return self.tokens(chatml(body.get("messages") or []))

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]

    # --------------------------------------------------------------------------------------------- routing
    async def route(self, request: Request) -> Response | None:
        """The flavour's own endpoints (None: not one of them)."""
        return None

    async def handle(self, request: Request) -> Response:
        own = await self.route(request)
        if own is not None:
            return own
        if request.method == "POST" and request.path == "/v1/chat/completions":
            return self.chat(request.json())
        return Response.json({"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}}, 404)

    def overflow(self, body: Mapping[str, Any], prompt: int, cap: int | None) -> Response | None:
        """The flavour's refusal of a request over its window (None: accepted)."""
        return None

    # --------------------------------------------------------------------------------------------- chat
    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            item = self._script.pop(0) if self._script else None
        if item is None and self.policy is not None:
            item = self.policy(body)
        return item if item is not None else "I am not sure what you mean."

    def chat(self, body: dict[str, Any]) -> Response:
        prompt = self.prompt_tokens(body)
        cap = body.get("max_completion_tokens", body.get("max_tokens"))
        cap = cap if isinstance(cap, int) else None
        stream = bool(body.get("stream"))
        refused = self.overflow(body, prompt, cap)
        log = ChatLog(prompt, cap, stream, refused.status if refused else 200, self.n_ctx, len(body.get("tools") or []))
        with self._lock:
            self.chats.append(log)
        if refused is not None:
            return refused
        reply = self._next_reply(body)
        reply = ChatReply(content=reply) if isinstance(reply, str) else reply
        content = reply.content
        calls = [{"id": f"call_{next(self._ids)}", "type": "function",
                  "function": {"name": name, "arguments": json.dumps(args)}} for name, args in reply.tool_calls]
        completion = max(1, self.tokens(content + "".join(c["function"]["arguments"] for c in calls)))
        room = self.n_ctx - prompt  # llama.cpp stops a reply at the window's end
        limit = min(x for x in (cap, room) if x is not None)
        finish = "tool_calls" if calls else "stop"
        if completion > limit:
            content, calls, completion, finish = content[: int(limit * self.chars_per_token)], [], limit, "length"
        usage = {"completion_tokens": completion, "prompt_tokens": prompt, "total_tokens": prompt + completion,
                 "prompt_tokens_details": {"cached_tokens": 0}}
        if stream:
            return self._streamed(content, calls, finish, usage, bool((body.get("stream_options") or {})
                                                                         .get("include_usage")))
        template = recorded("chat_completion.json")
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        if calls:
            message["tool_calls"] = calls
        template.update(choices=[{"finish_reason": finish, "index": 0, "message": message}], usage=usage,
                        model=self.model, created=int(time.time()), id=f"chatcmpl-{next(self._ids)}")
        delay = self.silent_seconds + self.first_token_seconds + completion * self.token_seconds
        return Response(200, json.dumps(template).encode("utf-8"), delay=delay)

    def _streamed(self, content: str, calls: list[dict[str, Any]], finish: str, usage: dict[str, Any],
                  include_usage: bool) -> Response:
        """The reply as llama-server streams it (the recorded chunks' shape), paced."""
        first, token_chunk, finish_chunk, usage_chunk = (recorded_stream()[i] for i in (0, 1, -2, -1))
        ident = f"chatcmpl-{next(self._ids)}"

        def event(chunk: dict[str, Any], **changes: Any) -> bytes:
            return f"data: {json.dumps({**chunk, 'id': ident, 'model': self.model, **changes})}\n\n".encode()

        def delta(d: dict[str, Any], finish_reason: str | None = None) -> bytes:
            return event(token_chunk, choices=[{"finish_reason": finish_reason, "index": 0, "delta": d}])

        parts: list[tuple[float, bytes]] = [(self.silent_seconds, event(first))]
        waited = 0.0
        while self.ping_every is not None and waited + self.ping_every < self.first_token_seconds:
            parts.append((self.ping_every, b":\n\n"))
            waited += self.ping_every
        lead = self.first_token_seconds - waited
        step = max(1, int(self.chars_per_token))
        pieces = [content[i:i + step] for i in range(0, len(content), step)]
        for i, piece in enumerate(pieces):
            parts.append((lead if i == 0 else self.token_seconds, delta({"content": piece})))
        for i, c in enumerate(calls):
            parts.append((lead if not pieces and i == 0 else self.token_seconds, delta({"tool_calls": [
                {"index": i, "id": c["id"], "type": "function",
                 "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}}]})))
        parts.append((0.0, event(finish_chunk, choices=[{"finish_reason": finish, "index": 0, "delta": {}}])))
        if include_usage:
            parts.append((0.0, event(usage_chunk, usage=usage)))
        parts.append((0.0, b"data: [DONE]\n\n"))
        return Response(200, parts=parts, content_type="text/event-stream")


class LlamaCppServer(ModelServer):
    """llama-server: `/props` (its window), `/v1/models`, `/apply-template` + `/tokenize` (its count of a chat
    request; `counts=False`: an older build without them, answering 404), and the recorded overflow reply (HTTP
    400, `exceed_context_size_error`) for a prompt of the window's size or more."""

    flavour = "llama.cpp"

    def __init__(self, *args: Any, counts: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.counts = counts

    async def route(self, request: Request) -> Response | None:
        if request.method == "GET" and request.path == "/props":
            props = recorded("props.json")
            props["default_generation_settings"]["n_ctx"] = self.n_ctx
            return Response.json(props)
        if request.method == "GET" and request.path == "/v1/models":
            models = recorded("models.json")
            models["data"][0].update(id=self.model, aliases=[self.model])
            models["data"][0]["meta"]["n_ctx"] = self.n_ctx
            return Response.json(models)
        if request.method == "POST" and request.path in ("/apply-template", "/tokenize") and self.counts:
            body = request.json()
            if request.path == "/apply-template":
                return Response.json({"prompt": chatml(body.get("messages") or [])})
            return Response.json({"tokens": list(range(self.tokens(str(body.get("content", "")))))})
        return None

    def overflow(self, body: Mapping[str, Any], prompt: int, cap: int | None) -> Response | None:
        if prompt < self.n_ctx:
            return None
        reply = recorded("overflow.json")
        reply["error"].update(message=f"request ({prompt} tokens) exceeds the available context size ({self.n_ctx} "
                                      "tokens), try increasing it", n_prompt_tokens=prompt, n_ctx=self.n_ctx)
        return Response.json(reply, 400)


class VllmServer(ModelServer):
    """vLLM: `/v1/models` with `max_model_len`, `POST /tokenize` with a chat request's messages and tools, and its
    refusal of a prompt plus `max_tokens` over the window."""

    flavour = "vllm"

    def prompt_tokens(self, body: Mapping[str, Any]) -> int:
        tools = body.get("tools")
        return self.tokens(chatml(body.get("messages") or []) + (json.dumps(tools) if tools else ""))

    async def route(self, request: Request) -> Response | None:
        if request.method == "GET" and request.path == "/v1/models":
            return Response.json({"object": "list", "data": [
                {"id": self.model, "object": "model", "created": 1795715027, "owned_by": "vllm", "root": self.model,
                 "parent": None, "max_model_len": self.n_ctx, "permission": []}]})
        if request.method == "POST" and request.path == "/tokenize":
            count = self.prompt_tokens(request.json())
            return Response.json({"count": count, "max_model_len": self.n_ctx, "tokens": list(range(count)),
                                  "token_strs": None})
        return None

    def overflow(self, body: Mapping[str, Any], prompt: int, cap: int | None) -> Response | None:
        if prompt + (cap or 0) <= self.n_ctx:
            return None
        return Response.json({"object": "error", "message": (
            f"This model's maximum context length is {self.n_ctx} tokens. However, you requested "
            f"{prompt + (cap or 0)} tokens ({prompt} in the messages, {cap or 0} in the completion). Please reduce "
            "the length of the messages or completion."), "type": "BadRequestError", "param": None, "code": 400}, 400)


class OllamaServer(ModelServer):
    """Ollama: `POST /api/show` (the model's `num_ctx` parameter, or none, and its trained `*.context_length`), no
    tokenizer endpoint, and no overflow reply: a prompt over the window is cut silently (logged as `truncated`)."""

    flavour = "ollama"

    def __init__(self, *args: Any, num_ctx: int | None = None, trained: int = 32768, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.num_ctx, self.trained = num_ctx, trained
        self.truncated = 0

    async def route(self, request: Request) -> Response | None:
        if request.method == "POST" and request.path == "/api/show":
            params = "stop \"<|im_end|>\"" + (f"\nnum_ctx {self.num_ctx}" if self.num_ctx else "")
            return Response.json({"modelfile": "FROM smollm2", "parameters": params, "template": "{{ .Prompt }}",
                                  "details": {"format": "gguf", "family": "llama", "parameter_size": "135M"},
                                  "model_info": {"general.architecture": "llama",
                                                 "llama.context_length": self.trained},
                                  "capabilities": ["completion"]})
        return None

    def overflow(self, body: Mapping[str, Any], prompt: int, cap: int | None) -> Response | None:
        if prompt > self.n_ctx:
            with self._lock:
                self.truncated += 1
        return None
