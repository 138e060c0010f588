"""Issue 34 §2: a server that answers a streamed request with a plain JSON completion (some proxies ignore
`stream: true`) is read as that completion, not failed with "No generations found in stream"."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from langgraph_anytool.models.endpoint import Endpoints
from langgraph_anytool.models.guard import CallGuard
from langgraph_anytool.models.llm import call_role, init_model
from tests.servers import LoopbackServer, Request, Response

TEXT = {"role": "assistant", "content": "3 miles are 4.83 km."}
CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "convert", "arguments": '{"miles": 3}'}},
    {"id": "call_2", "type": "function", "function": {"name": "Finish", "arguments": '{"answer": "4.83"}'}}]}


class PlainServer(LoopbackServer):
    """Answers every chat request with a plain JSON completion, streamed or not (optionally gzipped)."""

    def __init__(self, message: dict[str, Any], *, gzipped: bool = False) -> None:
        super().__init__()
        self.message = message
        self.gzipped = gzipped

    async def handle(self, request: Request) -> Response:
        if not request.path.endswith("/chat/completions"):
            return Response.json({"error": "not found"}, 404)
        reason = "tool_calls" if self.message.get("tool_calls") else "stop"
        body = json.dumps({"id": "x", "object": "chat.completion", "created": 1, "model": "m",
                           "choices": [{"index": 0, "message": self.message, "finish_reason": reason}],
                           "usage": {"prompt_tokens": 17, "completion_tokens": 9, "total_tokens": 26}}).encode()
        if self.gzipped:
            return Response(200, gzip.compress(body), [("Content-Encoding", "gzip")])
        return Response(200, body)


@pytest.mark.parametrize("gzipped", [False, True], ids=["identity", "gzip"])
@pytest.mark.parametrize("message", [TEXT, CALL], ids=["text", "tool_calls"])
def test_a_plain_completion_to_a_streamed_request_is_read_as_it(message: dict[str, Any], gzipped: bool,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    with PlainServer(message, gzipped=gzipped) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "x")
        model = init_model("openai:m")
        reply, used = call_role(model, "solver", [HumanMessage("convert 3 miles to km")],
                                guard=CallGuard(endpoints=Endpoints(probe=False)))
        sent = [r.json() for r in server.requests if r.path.endswith("/chat/completions")]
    assert len(sent) == 1 and sent[0]["stream"] is True  # asked streamed, answered plain, read once
    if message is TEXT:
        assert reply.content == TEXT["content"]
    else:
        assert [(c["name"], c["args"]) for c in reply.tool_calls] == [("convert", {"miles": 3}),
                                                                      ("Finish", {"answer": "4.83"})]
    assert used["input_tokens"] == 17 and used["output_tokens"] == 9 and "estimated_tokens" not in used
