"""Scripted chat models for testing graphs offline: exact tool-call sequences, recorded tools, real usage metadata."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import itertools
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, SystemMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig, ensure_config
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr

from .llm import INPUTS_KEY, ROLE_KEY

# A responder sees the prompt messages and the names of the bound tools and returns the reply. A responder with a
# third parameter also gets the call's metadata: `{"role": ..., "inputs": {...}}` as the graph tagged the call.
Responder = Callable[..., AIMessage]

_ids = itertools.count(1)


def call(name: str, **args: Any) -> dict[str, Any]:
    """A tool call dict for `ai(...)`."""
    return {"name": name, "args": args, "id": f"call_{next(_ids)}", "type": "tool_call"}


def ai(text: str = "", *calls: dict[str, Any]) -> AIMessage:
    """An assistant message with optional tool calls."""
    return AIMessage(content=text, tool_calls=list(calls))


class ScriptedChatModel(BaseChatModel):
    """Replies from a responder function (or a fixed list, in order); records every call.

    `bind_tools` records the tool schemas it is given; each reply carries `usage_metadata`
    (input = prompt characters / 4, output = 10 + 5 per tool call) so token accounting is exercised.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    responder: Any = None  # Responder | None
    replies: list[AIMessage] = Field(default_factory=list)
    latency: float = 0.0
    name_: str = "scripted"

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _pos: int = PrivateAttr(default=0)
    _calls: list[dict[str, Any]] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> list[dict[str, Any]]:
        """One entry per model call: {"messages", "tools" (names), "tool_schemas", "role", "inputs"}."""
        return self._calls

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None,
                   **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        schemas = [t if isinstance(t, dict) and "function" in t else convert_to_openai_tool(t) for t in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=schemas, **kwargs)

    def _reply(self, messages: list[BaseMessage], tools: list[dict[str, Any]] | None,
               metadata: dict[str, Any] | None = None) -> AIMessage:
        names = [t["function"]["name"] for t in tools or []]
        meta = {"role": (metadata or {}).get(ROLE_KEY), "inputs": dict((metadata or {}).get(INPUTS_KEY) or {})}
        with self._lock:
            self._calls.append({"messages": list(messages), "tools": names, "tool_schemas": tools or [], **meta})
            if self.responder is None:
                if self._pos >= len(self.replies):
                    raise AssertionError(f"scripted model ran out of replies after {self._pos} calls")
                reply = self.replies[self._pos]
                self._pos += 1
        if self.responder is not None:  # outside the lock: parallel branches may call (and sleep) concurrently
            wants_meta = len(inspect.signature(self.responder).parameters) >= 3
            reply = self.responder(list(messages), names, meta) if wants_meta else self.responder(list(messages), names)
        chars = sum(len(str(m.content)) for m in messages)
        reply = reply.model_copy(deep=True)
        reply.usage_metadata = {
            "input_tokens": chars // 4,
            "output_tokens": 10 + 5 * len(reply.tool_calls),
            "total_tokens": chars // 4 + 10 + 5 * len(reply.tool_calls),
        }
        return reply

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        if self.latency:
            time.sleep(self.latency)
        metadata = run_manager.metadata if run_manager is not None else None
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages, kwargs.get("tools"), metadata))])

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        if self.latency:
            await asyncio.sleep(self.latency)
        metadata = run_manager.metadata if run_manager is not None else None
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages, kwargs.get("tools"), metadata))])


def _metadata_var() -> contextvars.ContextVar[dict[str, Any] | None]:
    return contextvars.ContextVar("scripted_call_metadata", default=None)


class StreamingScriptedChatModel(ScriptedChatModel):
    """A `ScriptedChatModel` that streams: when LangChain streams the call (`astream_events`, `stream_mode="messages"`,
    `model.stream`), the reply's text arrives word by word, then one chunk with its tool calls and usage. The chunks
    add up to the same reply `invoke` gives. (LangChain calls `_stream` without the run's callback manager, so the
    call's metadata, which a responder may read, is kept from `invoke` for the duration of the call.)"""

    _metadata: contextvars.ContextVar[dict[str, Any] | None] = PrivateAttr(default_factory=_metadata_var)

    def invoke(self, input: LanguageModelInput, config: RunnableConfig | None = None, *, stop: list[str] | None = None,
               **kwargs: Any) -> AIMessage:
        token = self._metadata.set(dict(ensure_config(config).get("metadata") or {}))
        try:
            return super().invoke(input, config, stop=stop, **kwargs)
        finally:
            self._metadata.reset(token)

    async def ainvoke(self, input: LanguageModelInput, config: RunnableConfig | None = None, *,
                      stop: list[str] | None = None, **kwargs: Any) -> AIMessage:
        token = self._metadata.set(dict(ensure_config(config).get("metadata") or {}))
        try:
            return await super().ainvoke(input, config, stop=stop, **kwargs)
        finally:
            self._metadata.reset(token)

    def _call_metadata(self, run_manager: Any) -> dict[str, Any] | None:
        return run_manager.metadata if run_manager is not None else self._metadata.get()

    def _chunks(self, reply: AIMessage) -> Iterator[ChatGenerationChunk]:
        text = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
        for piece in re.findall(r"\S+\s*|\s+", text):
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece))
        calls = [tool_call_chunk(name=c["name"], args=json.dumps(c["args"]), id=c["id"], index=i)
                 for i, c in enumerate(reply.tool_calls)]
        yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=calls,
                                                         usage_metadata=reply.usage_metadata))

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        if self.latency:
            time.sleep(self.latency)
        metadata = self._call_metadata(run_manager)
        yield from self._chunks(self._reply(messages, kwargs.get("tools"), metadata))

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                       run_manager: AsyncCallbackManagerForLLMRun | None = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        if self.latency:
            await asyncio.sleep(self.latency)
        metadata = self._call_metadata(run_manager)
        for chunk in self._chunks(self._reply(messages, kwargs.get("tools"), metadata)):
            yield chunk


def system_text(messages: list[BaseMessage]) -> str:
    """The system prompt of a call (for responders that dispatch on the agent's role)."""
    return "\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage))
