"""Chat I/O of the AnyTool graph: the request from `{"messages": [...]}` (or `{"query"}`), the outcome as an AIMessage.

The graph's `messages` key follows LangGraph's `add_messages` (as in `MessagesState`), so LangGraph Studio's chat
view and `create_agent`-style callers can drive it: the last human message of a run's input is the request, the
earlier turns are the conversation so far, and `finalize` appends the outcome as an `AIMessage`. On a thread the
messages accumulate turn after turn. A `{"query": "..."}` input still works; it is recorded as a human message so a
thread's conversation stays readable whichever form each turn used.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage

NO_REQUEST_HELP = ("the input has no request: give 'query' (a non-empty string) or 'messages' with a human message "
                   "(e.g. {\"messages\": [{\"role\": \"user\", \"content\": \"...\"}]})")


class InputError(ValueError):
    """The graph's input does not say what to do (no query, no human message)."""


def message_text(message: BaseMessage) -> str:
    """The text of a message whose content is a string or a list of content blocks (text blocks joined)."""
    content = message.content
    if isinstance(content, str):
        return content.strip()
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "\n".join(p for p in parts if p.strip()).strip()


def last_human(messages: Sequence[AnyMessage]) -> tuple[int, HumanMessage] | None:
    """The position and the last human message, or None."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, HumanMessage):
            return i, message
    return None


def resolve_request(state: Mapping[str, Any]) -> dict[str, Any]:
    """The state update that fixes a run's request: `query`, `request_message_id` and, for a `{"query"}` input, the
    query as a new human message.

    The request is the last human message when it is new (not the one an earlier run on the thread served) and
    either ends the conversation or no `query` is given; otherwise `query`. Raises `InputError` when neither exists.
    """
    messages: Sequence[AnyMessage] = state.get("messages") or []
    query = state.get("query")
    if query is not None and not isinstance(query, str):
        raise InputError(f"input 'query' must be a string, not {type(query).__name__}")
    found = last_human(messages)
    if found is not None:
        pos, human = found
        fresh = bool(human.id) and human.id != state.get("request_message_id")
        if fresh and (pos == len(messages) - 1 or not (query or "").strip()):
            text = message_text(human)
            if not text:
                raise InputError(f"input 'messages'[{pos}]: the last human message has no text")
            return {"query": text, "request_message_id": human.id or ""}
    if query and query.strip():
        asked = HumanMessage(content=query.strip(), id=f"query-{uuid.uuid4().hex}")
        return {"query": query.strip(), "request_message_id": asked.id, "messages": [asked]}
    if messages:
        raise InputError(f"input 'messages' has no human message to answer; {NO_REQUEST_HELP}")
    raise InputError(NO_REQUEST_HELP)


# The roles whose model writes a run's answer: DFSDT/CoT solver, α-UMi summarizer, the router's direct answer, the
# plan_only outline.
ANSWER_ROLES: tuple[str, ...] = ("solver", "summarizer", "router", "outline")


def stand_in_label(models: Any, roles: Sequence[str] = ANSWER_ROLES) -> str:
    """The label of the offline stand-in when it plays one of `roles` in `models` (a `ModelSet`), else "".

    Read from the model's `STAND_IN_LABEL` class attribute (through `bind_tools` wrappers), so the graph never
    imports the offline package."""
    from .models.profiles import unwrap

    for role in roles:
        try:
            model = models.for_role(role)
        except Exception:  # no model configured: the run fails before it answers
            continue
        for layer in unwrap(model):
            label = getattr(type(layer), "STAND_IN_LABEL", "")
            if isinstance(label, str) and label:
                return label
    return ""


def outcome_message(status: str, answer: str, reason: str, stand_in: str = "") -> AIMessage:
    """The AIMessage a run appends: the answer when solved; otherwise the status and reason (and any answer).
    `stand_in`: the offline stand-in's label when it wrote the answer: the message says so in its text (a chat
    view such as Studio's shows only the text), and in `response_metadata["anytool_model"]`."""
    if status == "solved" and answer:
        text = answer
    elif answer:
        text = f"{answer}\n\n(Not confirmed — status {status}: {reason})" if reason else f"{answer}\n\n(status {status})"
    else:
        text = f"I could not answer this request (status {status}): {reason}" if reason else \
            f"I could not answer this request (status {status})."
    meta: dict[str, Any] = {"anytool_status": status}
    if stand_in:
        text += f"\n\n[Answered by {stand_in}.]"
        meta["anytool_model"] = stand_in
    return AIMessage(content=text, response_metadata=meta)
