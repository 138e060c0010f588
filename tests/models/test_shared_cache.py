"""Issue 38 §2: llama-server started without `--parallel` runs 4 slots over one unified cache of `-c` tokens, and
`/props` reports all of it as each slot's `n_ctx`. Requests run at once then fail inside an HTTP 200 stream with
"Context size has been exceeded." (verified on the tier's llama-server: `total_slots` 4, each slot's `n_ctx` the
whole `-c`, `kv_unified = 'true'` in its log); an idle slot keeps its last prompt's cache for reuse, so requests
are also sent to one slot (`id_slot`). The loopback server here keeps such a cache: a request holds its prompt and
its `max_tokens` while it runs, and one that does not fit beside the others gets that error event.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from langgraph_anytool.models.endpoint import Endpoints
from langgraph_anytool.models.guard import CallGuard
from langgraph_anytool.models.llm import ModelCallError, call_role, init_model
from tests.servers import LoopbackServer, Request, Response

FULL = {"error": {"code": 500, "message": "Context size has been exceeded.", "type": "server_error"}}


class SharedCacheServer(LoopbackServer):
    """A llama-server whose `slots` slots share one cache of `n_ctx` tokens (a token: 4 characters of content);
    `outside` tokens of it are held by another program's requests."""

    def __init__(self, n_ctx: int, *, slots: int = 4, outside: int = 0, seconds: float = 0.6) -> None:
        super().__init__()
        self.n_ctx, self.slots, self.outside, self.seconds = n_ctx, slots, outside, seconds
        self.load = 0
        self.peak = 0
        self.full = 0  # requests answered "Context size has been exceeded."
        self.chats: list[dict[str, Any]] = []

    async def handle(self, request: Request) -> Response:
        if request.path == "/props":
            return Response.json({"default_generation_settings": {"n_ctx": self.n_ctx}, "total_slots": self.slots})
        if not request.path.endswith("/chat/completions"):
            return Response.json({"error": {"code": 404, "message": "File Not Found"}}, 404)
        body = request.json()
        self.chats.append(body)
        prompt = sum(len(str(m.get("content") or "")) for m in body["messages"]) // 4 + 8
        need = prompt + int(body.get("max_tokens") or 0)
        return Response(200, content_type="text/event-stream", stream=self._reply(need, prompt))

    async def _reply(self, need: int, prompt: int) -> AsyncIterator[bytes]:
        if self.load + self.outside + need > self.n_ctx:
            self.full += 1
            yield b"data: " + json.dumps(FULL).encode() + b"\n\n"
            return
        self.load += need
        self.peak = max(self.peak, self.load)
        try:
            await asyncio.sleep(self.seconds)
            for piece in ({"role": "assistant", "content": "done"}, {}):
                chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m",
                         "choices": [{"index": 0, "delta": piece, "finish_reason": None if piece else "stop"}]}
                yield b"data: " + json.dumps(chunk).encode() + b"\n\n"
            usage = {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [],
                     "usage": {"prompt_tokens": prompt, "completion_tokens": 1, "total_tokens": prompt + 1}}
            yield b"data: " + json.dumps(usage).encode() + b"\n\ndata: [DONE]\n\n"
        finally:
            self.load -= need


PROMPT = "word " * 1200  # ~1,500 tokens: one request fits a 4,096-token cache with its reply, two do not


@pytest.mark.parametrize("callers", [2, 4])
def test_requests_to_one_shared_cache_run_so_that_they_fit(callers: int, monkeypatch: pytest.MonkeyPatch) -> None:
    with SharedCacheServer(4096) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "x")
        model = init_model("openai:m")
        endpoints = Endpoints()  # one per graph: every run of a batch and every parallel agent shares it
        results: list[Any] = []

        def call(i: int) -> None:
            try:
                results.append(call_role(model, "solver", [HumanMessage(f"{i} {PROMPT}")],
                                         profiles={"m": {"max_tokens": 512}},
                                         guard=CallGuard(endpoints=endpoints))[0].content)
            except Exception as exc:  # handed to the assertion
                results.append(exc)

        threads = [threading.Thread(target=call, args=(i,)) for i in range(callers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert results == ["done"] * callers, results
    assert server.full == 0 and server.peak <= server.n_ctx  # no capacity fault: their windows fitted the cache
    assert len(server.chats) == callers  # each sent once
    # all in one slot: an idle slot keeps its prompt's cache, which would hold room the next request needs
    assert all(c.get("id_slot") == 0 for c in server.chats)
    assert endpoints.slot_waits >= 1


def test_a_full_cache_is_never_asked_the_same_request_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another program holds most of the cache: the request (alone among ours) is fitted smaller, not sent as it
    was; with nothing it can shrink, it ends as a context fault instead of six blind retries."""
    with SharedCacheServer(4096, outside=3000) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "x")
        model = init_model("openai:m")
        try:
            outcome: Any = call_role(model, "solver", [HumanMessage(PROMPT[:2000])],
                                     profiles={"m": {"max_tokens": 1024}}, guard=CallGuard(endpoints=Endpoints()))
        except ModelCallError as exc:
            outcome = exc
    sent = [(len(json.dumps(c["messages"])), c.get("max_tokens")) for c in server.chats]
    assert len(sent) == len(set(sent)), sent  # never the same request twice
    assert server.full <= 3, server.full
    assert not isinstance(outcome, ModelCallError) or outcome.kind == "context_length", outcome
