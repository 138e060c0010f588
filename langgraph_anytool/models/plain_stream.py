"""A streamed chat request answered with a plain JSON completion (some proxies ignore `stream: true`): the reply is
read as that completion, re-framed as the one-chunk event stream the client expects, instead of failing with "No
generations found in stream".

`install` adds a response hook to a synchronous httpx (or httpx2) client: for a `POST .../chat/completions` whose
body asked `"stream": true` and whose 200 reply is `application/json` with `choices`, the body (read up to
`MAX_PLAIN_BYTES`, within the call's read limits: deadline.py) becomes `data:` events — one chunk carrying each
choice's message as its delta (tool calls indexed as streamed ones are), one carrying the usage, then `[DONE]`.
Anything else passes through untouched.
"""

from __future__ import annotations

import json
import logging
import sys
import zlib
from collections.abc import Mapping
from typing import Any

log = logging.getLogger(__name__)

MAX_PLAIN_BYTES = 8 * 1024 * 1024  # the most bytes of a plain reply re-framed (a larger one passes through)


def _asked_stream(request: Any) -> bool:
    if request.method != "POST" or not str(request.url.path).endswith("/chat/completions"):
        return False
    try:
        body = json.loads(request.content or b"{}")
    except (ValueError, TypeError, RecursionError):
        return False
    except Exception:  # a streamed request body (not read): not ours to read
        return False
    return isinstance(body, Mapping) and body.get("stream") is True


def as_events(completion: Mapping[str, Any]) -> bytes | None:
    """The event stream of a chat completion (None when it is no completion)."""
    choices = completion.get("choices")
    if not isinstance(choices, list) or not all(isinstance(c, Mapping) for c in choices):
        return None
    head = {k: completion[k] for k in ("id", "created", "model", "system_fingerprint") if k in completion}
    deltas = []
    for position, choice in enumerate(choices):
        message = choice.get("message") if isinstance(choice.get("message"), Mapping) else {}
        delta: dict[str, Any] = {"role": message.get("role") or "assistant", "content": message.get("content")}
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            delta["tool_calls"] = [{**call, "index": i} for i, call in enumerate(calls) if isinstance(call, Mapping)]
        if message.get("refusal"):
            delta["refusal"] = message["refusal"]
        deltas.append({"index": choice.get("index", position), "delta": delta,
                       "finish_reason": choice.get("finish_reason"), "logprobs": choice.get("logprobs")})
    events = [{**head, "object": "chat.completion.chunk", "choices": deltas}]
    if isinstance(completion.get("usage"), Mapping):
        events.append({**head, "object": "chat.completion.chunk", "choices": [], "usage": completion["usage"]})
    return b"".join(b"data: " + json.dumps(e).encode("utf-8") + b"\n\n" for e in events) + b"data: [DONE]\n\n"


CODINGS = ("", "identity", "gzip", "deflate")  # content codings read here (others pass through)


def _read(stream: Any, encoding: str) -> bytes | None:
    """The body of a raw response stream, decoded (identity, gzip, deflate); None past the cap."""
    decoder = zlib.decompressobj(zlib.MAX_WBITS | 32) if encoding in ("gzip", "deflate") else None
    data = bytearray()
    for chunk in stream:
        data += decoder.decompress(chunk, MAX_PLAIN_BYTES + 1 - len(data)) if decoder else chunk
        if len(data) > MAX_PLAIN_BYTES:
            return None
    return bytes(data)


def _hook(response: Any) -> None:
    if response.status_code != 200 or not _asked_stream(response.request):
        return
    if not response.headers.get("content-type", "").lower().startswith("application/json"):
        return
    encoding = response.headers.get("content-encoding", "").lower().strip()
    if encoding not in CODINGS:
        return
    family = sys.modules.get(type(response).__module__.split(".")[0])
    byte_stream = getattr(family, "ByteStream", None)
    if byte_stream is None:
        return
    raw = response.stream
    try:
        body = _read(raw, encoding)
    finally:
        raw.close()
    events = None
    if body is not None:
        try:
            completion = json.loads(body)
            events = as_events(completion) if isinstance(completion, Mapping) else None
        except (ValueError, RecursionError):
            events = None
    if events is None:  # not a completion: handed on as it came (the client reports what it is)
        events = body if body is not None else b""
    else:
        log.info("%s answered a streamed request with a plain JSON completion: read as that completion",
                 response.request.url.host)
        response.headers["content-type"] = "text/event-stream"
    response.headers.pop("content-encoding", None)
    response.headers.pop("content-length", None)
    response.stream = byte_stream(events)


def install(client: Any) -> None:
    """Add the hook to a synchronous httpx client's response hooks (once)."""
    hooks = getattr(client, "event_hooks", None)
    if not isinstance(hooks, Mapping):
        return
    response_hooks = list(hooks.get("response", []))
    if any(getattr(h, "__name__", "") == _hook.__name__ and getattr(h, "__module__", "") == __name__
           for h in response_hooks):
        return
    client.event_hooks = {**hooks, "response": [*response_hooks, _hook]}
