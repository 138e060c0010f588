"""Scripted chat models for testing graphs offline: exact tool-call sequences, recorded tools, real usage metadata."""

from __future__ import annotations

import asyncio
import inspect
import itertools
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
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


def system_text(messages: list[BaseMessage]) -> str:
    """The system prompt of a call (for responders that dispatch on the agent's role)."""
    return "\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage))
