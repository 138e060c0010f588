"""A given conversation: the input's `messages` (LangChain messages or OpenAI-style dicts), of which the last human
message is the request and the turns before it are context for the router, the solver and the outline."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import convert_to_messages

from ...config import ConfigError
from ...text import shorten_counted
from . import prompts

TOOL_RESULT_CHARS = 2000  # per tool result shown as context
PRIOR_NAME = "prior_conversation"  # `name` of the human message holding the conversation


def to_messages(raw: Sequence[Any] | None) -> list[BaseMessage]:
    """The input's `messages` as LangChain messages; a bad item is one error naming its index."""
    if raw is None:
        return []
    if isinstance(raw, str | bytes) or not isinstance(raw, Sequence):
        raise ConfigError(f"input 'messages' must be a list of messages, got {type(raw).__name__}")
    out: list[BaseMessage] = []
    for i, item in enumerate(raw):
        try:
            out.extend(convert_to_messages([item]))
        except Exception as exc:  # langchain raises ValueError / NotImplementedError / KeyError on bad items
            raise ConfigError(f"input 'messages'[{i}]: not a message ({type(exc).__name__}: {exc})") from None
    return out


def _text(msg: BaseMessage) -> str:
    if isinstance(msg.content, str):
        return msg.content
    return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in msg.content
                   if isinstance(b, str | dict))


def split_request(state: Mapping[str, Any]) -> tuple[str, list[BaseMessage]]:
    """(the request, the conversation before it) from the state's `query`, `messages` and `request_message_id`.

    After `init` (see `chat.resolve_request`) the request is `query` and the context is every message before the
    request's own message (`request_message_id`). Before it: `messages` ending in a human message give the request
    and the turns before it; otherwise a non-empty `query` is the request and all of `messages` is context.
    """
    msgs = to_messages(state.get("messages"))
    request_id = state.get("request_message_id")
    query = state.get("query")
    if request_id and isinstance(query, str) and query.strip():
        pos = next((i for i, m in enumerate(msgs) if m.id == request_id), len(msgs))
        return query.strip(), msgs[:pos]
    if msgs and isinstance(msgs[-1], HumanMessage) and _text(msgs[-1]).strip():
        return _text(msgs[-1]).strip(), msgs[:-1]
    if isinstance(query, str) and query.strip():
        return query.strip(), msgs
    last = next((i for i in range(len(msgs) - 1, -1, -1) if isinstance(msgs[i], HumanMessage)), None)
    if last is None:
        return "", msgs
    return _text(msgs[last]).strip(), msgs[:last]


def request_of(state: Mapping[str, Any]) -> str:
    """The request ("" when there is none; see `split_request`)."""
    return split_request(state)[0]


def prior_turns(state: Mapping[str, Any]) -> list[BaseMessage]:
    """The conversation before the request (see `split_request`)."""
    return split_request(state)[1]


def render_conversation(messages: Sequence[BaseMessage], max_tool_chars: int = TOOL_RESULT_CHARS) -> str:
    """The conversation as text, one turn per line: who spoke, the tool calls made and the tool results."""
    lines: list[str] = []
    for m in messages:
        text = _text(m).strip()
        if isinstance(m, SystemMessage):
            lines.append(f"System: {text}")
        elif isinstance(m, HumanMessage):
            lines.append(f"User: {text}")
        elif isinstance(m, AIMessage):
            if text:
                lines.append(f"Assistant: {text}")
            for tc in m.tool_calls:
                lines.append(f"Assistant called {tc['name']}({json.dumps(tc['args'], ensure_ascii=False)})")
        elif isinstance(m, ToolMessage):
            if len(text) > max_tool_chars:
                text = shorten_counted(text, max_tool_chars)
            lines.append(f"Tool result{f' of {m.name}' if m.name else ''}: {text}")
        else:
            lines.append(f"{m.type.capitalize()}: {text}")
    return "\n".join(lines)


def conversation_messages(prior: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The prompt part that carries the conversation: one human message holding it as text (no message at all
    when there is none). Text, not the original messages: their tool calls name functions the model is not given
    and their ids answer nothing in this prompt, which providers reject."""
    if not prior:
        return []
    return [HumanMessage(content=prompts.CONVERSATION.format(conversation=render_conversation(prior)),
                         name=PRIOR_NAME)]
