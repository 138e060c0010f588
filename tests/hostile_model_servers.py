"""A loopback model server that stretches every read it can (issue 34 §1), for the deadline tests and the hardening
benchmark: it keeps a request alive with bytes that are no reply.

Modes (`HOSTILE_MODES`, and `USAGE_MODES`):
- the chat stream's keep-alive forms (`STREAM_MODES`): SSE comment lines (`: keepalive`), blank lines, and `data:`
  chunks whose delta holds no token, one every `every` seconds, for ever, after the stream's headers;
- a discovery or counting endpoint that drips its reply one byte every `drip_every` seconds, for ever
  (`DRIP_MODES`: llama.cpp's `GET /props`, vLLM's `GET /v1/models`, Ollama's `POST /api/show`, llama.cpp's
  `POST /apply-template` and `POST /tokenize`); the other endpoints answer as the server they belong to would,
  so that the dripping one is asked, and the chat stream then keeps alive with comments;
- `endless_tokens`: a reply that streams tokens for ever;
- `usage_then_stall` / `usage_then_comments` (`USAGE_MODES`): a whole reply (its tokens, its finish reason, then the
  usage chunk with the server's counts `USAGE`), after which the stream's end (`data: [DONE]`) never comes: silence,
  or SSE comments every `every` seconds (a call that finishes at the deadline: the counts have come, the end has not);
- `props_flood`: an endless `/props` body sent as fast as the client reads it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from tests.servers import LoopbackServer, Request, Response

STREAM_MODES = ("comments", "blank_lines", "empty_deltas")
ENDLESS = "endless_tokens"  # a reply whose tokens never end (one every `every` / 4 seconds)
# mode -> (method, path) of the endpoint that drips
DRIP_MODES: dict[str, tuple[str, str]] = {
    "props": ("GET", "/props"),
    "v1_models": ("GET", "/v1/models"),
    "api_show": ("POST", "/api/show"),
    "apply_template": ("POST", "/apply-template"),
    "tokenize": ("POST", "/tokenize"),
}
USAGE_MODES = ("usage_then_stall", "usage_then_comments")
USAGE = {"prompt_tokens": 41, "completion_tokens": 3, "total_tokens": 44}  # what the USAGE_MODES' server counted
HOSTILE_MODES = (*STREAM_MODES, ENDLESS, *DRIP_MODES, "props_flood")
FLOOD_CHUNK = b'"' + b"x" * 65_534 + b'",'


class HostileModelServer(LoopbackServer):
    """An OpenAI-compatible server at `url + "/v1"` serving model "m" in one of `HOSTILE_MODES`."""

    def __init__(self, mode: str, *, every: float = 1.0, drip_every: float = 2.0, n_ctx: int = 8192,
                 **kwargs: Any) -> None:
        if mode not in (*HOSTILE_MODES, *USAGE_MODES):
            raise ValueError(f"unknown mode {mode!r}; modes are {', '.join((*HOSTILE_MODES, *USAGE_MODES))}")
        super().__init__(**kwargs)
        self.mode = mode
        self.every = every
        self.drip_every = drip_every
        self.n_ctx = n_ctx
        self.sent = 0  # bytes of the endless replies sent

    async def handle(self, request: Request) -> Response:
        path = request.path
        if DRIP_MODES.get(self.mode) == (request.method, path):
            return Response(200, content_type="application/json", stream=self._drip())
        if self.mode == "props_flood" and path == "/props":
            return Response(200, content_type="application/json", stream=self._flood())
        if path == "/props":
            if self.mode in ("v1_models", "api_show"):  # not llama.cpp: the probe asks on
                return Response.json({"error": "not found"}, 404)
            return Response.json({"default_generation_settings": {"n_ctx": self.n_ctx}, "total_slots": 1})
        if path == "/v1/models":  # no max_model_len: not vLLM, the probe asks on
            return Response.json({"object": "list", "data": [{"id": "m", "object": "model"}]})
        if path == "/api/show":
            return Response.json({"error": "not found"}, 404)
        if path == "/apply-template":
            body = request.json() or {}
            text = "".join(str(m.get("content", "")) for m in body.get("messages", []) if isinstance(m, dict))
            return Response.json({"prompt": text})
        if path == "/tokenize":
            body = request.json() or {}
            return Response.json({"tokens": list(range(max(1, len(str(body.get("content", ""))) // 4)))})
        if path == "/v1/chat/completions":
            if self.mode == ENDLESS:
                return Response(200, content_type="text/event-stream", stream=self._tokens())
            if self.mode in USAGE_MODES:
                return Response(200, content_type="text/event-stream", stream=self._usage_then_nothing())
            mode = self.mode if self.mode in STREAM_MODES else "comments"
            return Response(200, content_type="text/event-stream", stream=self._keep_alive(mode))
        return Response.json({"error": "not found"}, 404)

    async def _keep_alive(self, mode: str) -> AsyncIterator[bytes]:
        chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m",
                 "choices": [{"index": 0, "delta": {}, "finish_reason": None}]}
        piece = {"comments": b": keepalive\n\n", "blank_lines": b"\n",
                 "empty_deltas": b"data: " + json.dumps(chunk).encode() + b"\n\n"}[mode]
        if mode == "empty_deltas":  # the role first, as servers open a stream
            first = {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                           "finish_reason": None}]}
            yield b"data: " + json.dumps(first).encode() + b"\n\n"
        while True:
            self.sent += len(piece)
            yield piece
            await asyncio.sleep(self.every)

    async def _tokens(self) -> AsyncIterator[bytes]:
        while True:
            chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m",
                     "choices": [{"index": 0, "delta": {"content": "la "}, "finish_reason": None}]}
            piece = b"data: " + json.dumps(chunk).encode() + b"\n\n"
            self.sent += len(piece)
            yield piece
            await asyncio.sleep(self.every / 4)

    async def _usage_then_nothing(self) -> AsyncIterator[bytes]:
        head = {"id": "c", "object": "chat.completion.chunk", "model": "m"}
        for choice in ({"delta": {"role": "assistant", "content": "42 km"}, "finish_reason": None},
                       {"delta": {}, "finish_reason": "stop"}):
            yield b"data: " + json.dumps({**head, "choices": [{"index": 0, **choice}]}).encode() + b"\n\n"
        yield b"data: " + json.dumps({**head, "choices": [], "usage": USAGE}).encode() + b"\n\n"
        while True:  # no `data: [DONE]`, no end of the body
            await asyncio.sleep(self.every)
            if self.mode == "usage_then_comments":
                yield b": keepalive\n\n"

    async def _drip(self) -> AsyncIterator[bytes]:
        yield b'{"a": "'
        while True:
            await asyncio.sleep(self.drip_every)
            self.sent += 1
            yield b"x"

    async def _flood(self) -> AsyncIterator[bytes]:
        yield b'{"a": ['
        while True:
            self.sent += len(FLOOD_CHUNK)
            yield FLOOD_CHUNK
            await asyncio.sleep(0)
