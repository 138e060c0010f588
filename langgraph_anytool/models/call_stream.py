"""A constrained call streams as a native call does (issue 35 §1, left over): as `tool_call_chunks`.

A constrained reply is a call written as JSON text, `{"name": ..., "arguments": {...}}` (`constrained.py`). Streamed
as it is, a LangChain app reading `AIMessageChunk.tool_call_chunks` from `astream_events` or `stream_mode="messages"`
sees none, only raw JSON as text. Where the run streams (a streaming handler is among its callbacks: the handlers of
`astream_events` and of `stream_mode="messages"`, which LangChain's chat models also look for), `streamed_call` gives
those handlers a chat-model run of its own whose chunks are the call's pieces, as an OpenAI-compatible server streams
a native call: the function's name with the call's id and index 0 first, then the arguments' JSON text in pieces as
the tokens arrive, and no text content. The wrapped model runs beside it with every other callback (the run's
tracers, `call_role`'s stall watch) and a relay that turns its tokens into those chunks; the final message ends the
run with the parsed call, under the chunks' message id and call id (so `stream_mode="messages"` does not send it
twice, and the chunks add up to it).

A text-mode call (`Action:` / `Action Input:` text, `nodes/solver/textmode.py`) streams through the same run
(`streamed_text_call`): its text as content as the tokens arrive (the model's thought and its `Action:` lines; the
call is the reply's last `Action:`, unknowable while the reply streams), then, once the reply is parsed, one chunk
with no text whose `tool_call_chunks` are the parsed call (name, the arguments' JSON, the final message's call id,
index 0), so a reader's chunks add up to the reply's text and the final message's call.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import ToolCallChunk, tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, GenerationChunk, LLMResult
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import get_callback_manager_for_config

from ..protocol import text_of

R = TypeVar("R", bound="StreamRelay")


class CallPieces:
    """The pieces of a call's JSON text as it grows (fed in deltas, scanned once): the function's name once its string
    has closed, then the text of the `arguments` value as it arrives. Keys are read at the object's top level only (an
    argument called "name" is no function name); the order of the two keys does not matter."""

    def __init__(self, call_id: str) -> None:
        self.call_id = call_id
        self.text = ""
        self._pos = 0  # scanned up to here
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._string_start = 0
        self._last_string: tuple[int, int] | None = None  # the last top-level string: a key, if ":" follows
        self._key: str | None = None  # the top-level key whose value is being read
        self.name: str | None = None
        self._args_start: int | None = None
        self._args_end: int | None = None
        self._sent_name = False
        self._sent_args = 0

    def feed(self, delta: str) -> list[ToolCallChunk]:
        """The chunks `delta` completes: the name with the call's id (once), then new text of the arguments."""
        self.text += delta
        self._scan()
        if self.name is None:
            return []
        args = ""
        if self._args_start is not None:
            args = self.text[self._args_start:self._args_end if self._args_end is not None else len(self.text)]
        if not self._sent_name:
            self._sent_name, self._sent_args = True, len(args)
            return [tool_call_chunk(name=self.name, args=args, id=self.call_id, index=0)]
        if len(args) > self._sent_args:
            piece, self._sent_args = args[self._sent_args:], len(args)
            return [tool_call_chunk(name=None, args=piece, id=None, index=0)]
        return []

    def _scan(self) -> None:
        text = self.text
        for i in range(self._pos, len(text)):
            ch = text[i]
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif ch == "\\":
                    self._escaped = True
                elif ch == '"':
                    self._in_string = False
                    if self._depth == 1:
                        self._closed_string(self._string_start, i + 1)
                continue
            if ch == '"':
                self._in_string, self._string_start = True, i
            elif ch == ":" and self._depth == 1 and self._last_string is not None:
                self._key = _string(text[slice(*self._last_string)])
                self._last_string = None
            elif ch in "{[":
                self._depth += 1
                if self._depth == 2 and self._key == "arguments" and self._args_start is None:
                    self._args_start = i
            elif ch in "}]":
                self._depth -= 1
                if self._depth == 1 and self._key == "arguments" and self._args_end is None:
                    self._args_end, self._key = i + 1, None
            elif ch == "," and self._depth == 1:
                self._key, self._last_string = None, None
        self._pos = len(text)

    def _closed_string(self, start: int, end: int) -> None:
        if self._key == "name" and self.name is None:
            value = _string(self.text[start:end])
            self.name, self._key = value, None
        elif self._key is None:
            self._last_string = (start, end)


def _string(literal: str) -> str | None:
    with contextlib.suppress(ValueError):
        value = json.loads(literal)
        return value if isinstance(value, str) else None
    return None


def _streams(handler: Any) -> bool:
    """A streaming handler (LangChain's `_StreamingCallbackHandler` protocol, which chat models check the same way)."""
    return callable(getattr(handler, "tap_output_iter", None)) and callable(getattr(handler, "tap_output_aiter", None))


class StreamRelay(BaseCallbackHandler):
    """Handed to the wrapped model: its tokens become chunks on the streamed run (`_relay`, per kind of call). It has
    the streaming protocol's two methods, so the model streams when the run does, as it would for the run's
    handlers."""

    run_inline = True

    def __init__(self, run: CallbackManagerForLLMRun) -> None:
        self.run = run
        self.message_id: str | None = None
        self.sent = False  # whether a chunk went out (the final message then takes its message id)

    def on_llm_new_token(self, token: str | list[str | dict[str, Any]], *,
                         chunk: GenerationChunk | ChatGenerationChunk | None = None, run_id: UUID,
                         parent_run_id: UUID | None = None, tags: list[str] | None = None, **kwargs: Any) -> None:
        message = getattr(chunk, "message", None)
        if self.message_id is None and isinstance(message, BaseMessage) and message.id:
            self.message_id = message.id
        delta = text_of(message) if isinstance(message, BaseMessage) else token if isinstance(token, str) else ""
        self._relay(delta or "")

    def _relay(self, delta: str) -> None:
        raise NotImplementedError

    def _send(self, content: str, pieces: list[ToolCallChunk]) -> None:
        self.sent = True
        self.run.on_llm_new_token(content, chunk=ChatGenerationChunk(message=AIMessageChunk(
            content=content, id=self._id(), tool_call_chunks=pieces)))

    def _id(self) -> str:
        if self.message_id is None:
            self.message_id = f"lc_run--{self.run.run_id}"
        return self.message_id

    def end(self, message: AIMessage) -> None:
        """End the streamed run with the parsed message (under the chunks' message id)."""
        final = message.model_copy(update={"id": self._id()}) if self.sent else message
        self.run.on_llm_end(LLMResult(generations=[[ChatGeneration(message=final)]]))

    def tap_output_iter(self, run_id: UUID, output: Iterator[Any]) -> Iterator[Any]:
        return output

    def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[Any]) -> AsyncIterator[Any]:
        return output


class CallRelay(StreamRelay):
    """A constrained call's relay: each token becomes the call's chunks (`CallPieces`), with no text content."""

    def __init__(self, run: CallbackManagerForLLMRun, pieces: CallPieces) -> None:
        super().__init__(run)
        self.pieces = pieces

    def _relay(self, delta: str) -> None:
        for piece in self.pieces.feed(delta):
            self._send("", [piece])


class TextRelay(StreamRelay):
    """A text-mode call's relay: the reply's text streams as content as it arrives (the call is the last `Action:`,
    unknown until the reply ends); `end` sends one last chunk with the parsed call's `tool_call_chunks` (name, the
    arguments' JSON, the final message's call id, index 0), so the chunks add up to the final message's call. An
    invalid call gets no chunk: it is on the final message (`on_chat_model_end`) only."""

    def _relay(self, delta: str) -> None:
        if delta:
            self._send(delta, [])

    def end(self, message: AIMessage) -> None:
        # an invalid call (arguments cut or no JSON) sends no chunk: LangChain reads a chunk's arguments as partial
        # JSON, so a cut object would add up to a valid call the final message does not have
        if message.tool_calls:
            self._send("", [tool_call_chunk(name=c["name"], args=json.dumps(c["args"], ensure_ascii=False),
                                            id=c["id"], index=i) for i, c in enumerate(message.tool_calls)])
        super().end(message)


@contextlib.contextmanager
def streamed_call(model: Runnable[Any, BaseMessage], messages: list[BaseMessage], config: RunnableConfig,
                  ) -> Iterator[tuple[RunnableConfig, CallRelay | None]]:
    """The config to call `model` with, and the relay (None when the run does not stream: `config` as given). The
    caller ends the relay with the parsed call; an error ends the streamed run as failed."""
    with _streamed(model, messages, config, lambda run: CallRelay(run, CallPieces(f"json_{uuid.uuid4().hex[:12]}"))
                   ) as out:
        yield out


@contextlib.contextmanager
def streamed_text_call(model: Runnable[Any, BaseMessage], messages: list[BaseMessage], config: RunnableConfig,
                       ) -> Iterator[tuple[RunnableConfig, TextRelay | None]]:
    """`streamed_call` for a text-mode call (`TextRelay`): its text as content, then its parsed call's chunks."""
    with _streamed(model, messages, config, TextRelay) as out:
        yield out


@contextlib.contextmanager
def _streamed(model: Runnable[Any, BaseMessage], messages: list[BaseMessage], config: RunnableConfig,
              make: Callable[[CallbackManagerForLLMRun], R]) -> Iterator[tuple[RunnableConfig, R | None]]:
    manager = get_callback_manager_for_config(config)
    streaming = [h for h in manager.handlers if _streams(h)]
    if not streaming:
        yield config, None
        return
    outer = manager.copy()
    outer.set_handlers(streaming)
    name = model.get_name()
    run = outer.on_chat_model_start({"name": name}, [messages], name=name)[0]
    relay = make(run)
    inner = manager.copy()
    for handler in streaming:
        inner.remove_handler(handler)
    inner.add_handler(relay, inherit=True)
    try:
        yield RunnableConfig(**{**config, "callbacks": inner}), relay
    except BaseException as exc:
        run.on_llm_error(exc)
        raise
