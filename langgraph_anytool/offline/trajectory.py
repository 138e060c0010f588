"""What was done so far, read from structured data only: the tool calls of AI messages, the tool messages that
answer them (or their JSON dict form, as α-UMi's roles receive their history), never the wording of a prompt."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from ..protocol import FINISH_NAME
from ..text import shorten
from ..tools.observation import reported_error
from .text import message_text


@dataclass(frozen=True)
class Step:
    """One API call of a trajectory and its outcome."""

    function: str
    args: Any
    ok: bool
    response: Any = None
    error: str = ""


_RAW_CHARS = 300  # of a response that is not valid JSON (e.g. truncated), quoted in an answer


def parse_observation(text: str) -> tuple[bool, Any, str]:
    """(ok, response, error) of an observation text (`{"status": ..., "response": ..., "error": ...}`); a response
    that reports a failure of its own (`tools.observation.reported_error`: a script's traceback, `ok: false`) is
    not ok."""
    ok, response, error = _parse_observation(text)
    failure = reported_error(response) if ok else ""
    return (False, response, failure) if failure else (ok, response, error)


def _parse_observation(text: str) -> tuple[bool, Any, str]:
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        status = str(data.get("status", "")).lower()
        if "error" in data and status in ("", "error") and "response" not in data:
            return False, None, str(data["error"])
        ok = status == "ok" or (not status and "error" not in data)
        return ok, data.get("response", data if not status else None), str(data.get("error", ""))
    ok = bool(re.search(r'"status"\s*:\s*"ok"', text))
    if not ok:
        return False, None, shorten(text, 300)
    body = re.sub(r'^\{"status"\s*:\s*"ok"\s*,\s*"response"\s*:\s*', "", text.strip())  # truncated JSON
    body = re.sub(r"\.\.\. \[truncated \d+ of \d+ characters\]$", "", body)
    return True, shorten(body, _RAW_CHARS), ""


def _plain_result(text: str) -> tuple[bool, Any, str] | None:
    """A tool result that is not an observation object (`{"status"|"error": ...}`): ok, its JSON value or text."""
    try:
        data = json.loads(text)
    except ValueError:
        return True, text, ""
    if isinstance(data, dict) and ("status" in data or "error" in data):
        return None
    return True, data, ""


def steps_from_messages(messages: Sequence[BaseMessage], *, plain_ok: bool = False) -> list[Step]:
    """API calls (not Finish) and their observations, from AIMessage tool calls + ToolMessages. With `plain_ok`
    a successful ToolMessage whose text is not an observation object (any tool's plain result) counts as ok."""
    calls: dict[str, tuple[str, Any]] = {}
    steps: list[Step] = []
    for m in messages:
        if isinstance(m, AIMessage):
            for tc in m.tool_calls:
                calls[str(tc.get("id"))] = (tc["name"], tc.get("args"))
        elif isinstance(m, ToolMessage):
            name, args = calls.get(str(m.tool_call_id), (m.name or "", None))
            if name == FINISH_NAME:
                continue
            text = message_text(m)
            ok, response, error = parse_observation(text)
            if plain_ok and not ok and m.status != "error":
                ok, response, error = _plain_result(text) or (ok, response, error)
            steps.append(Step(name, args, ok and m.status != "error", response, error))
    return steps


def steps_from_dicts(history: Sequence[Mapping[str, Any]]) -> list[Step]:
    """API calls (not Finish) and their observations from a history of message dicts (`{role, content,
    tool_calls: [{name, args, id}], tool_call_id, name}`, as `nodes/solver/tree.py: message_to_dict` writes)."""
    calls: dict[str, tuple[str, Any]] = {}
    steps: list[Step] = []
    for d in history:
        if not isinstance(d, Mapping):
            continue
        role = d.get("role")
        if role == "assistant":
            for tc in d.get("tool_calls") or []:
                if isinstance(tc, Mapping):
                    calls[str(tc.get("id"))] = (str(tc.get("name") or ""), tc.get("args"))
        elif role == "tool":
            name, args = calls.get(str(d.get("tool_call_id")), (str(d.get("name") or ""), None))
            if name == FINISH_NAME:
                continue
            ok, response, error = parse_observation(str(d.get("content") or ""))
            steps.append(Step(name, args, ok and d.get("status") != "error", response, error))
    return steps


# ------------------------------------------------------------------------------------------ agent conversations
def tool_calls(text: str, *calls: tuple[str, dict[str, Any]]) -> AIMessage:
    """A reply with `text` and these (name, args) calls (ids are filled in by the model)."""
    return AIMessage(content=text, tool_calls=[{"name": n, "args": a, "id": "", "type": "tool_call"}
                                               for n, a in calls])


def called_args(messages: Sequence[BaseMessage], function: str, arg: str, *, succeeded: bool = False) -> list[Any]:
    """The value of `arg` in every earlier call of `function` (with `succeeded`: only calls whose answer is not
    an error)."""
    failed = {m.tool_call_id for m in messages if isinstance(m, ToolMessage) and m.status == "error"}
    return [tc.get("args", {}).get(arg) for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls
            if tc["name"] == function and not (succeeded and tc.get("id") in failed)]


def refused_args(messages: Sequence[BaseMessage], function: str, arg: str) -> list[Any]:
    """The value of `arg` in the calls of `function` answered with an error status (refused by the handler)."""
    failed = {m.tool_call_id for m in messages if isinstance(m, ToolMessage) and m.status == "error"}
    return [tc.get("args", {}).get(arg) for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls
            if tc["name"] == function and tc.get("id") in failed]


def last_call(messages: Sequence[BaseMessage]) -> str | None:
    """The function name of the last tool call made, if the conversation ended on its answer."""
    for m in reversed(messages):
        if isinstance(m, AIMessage):
            return m.tool_calls[-1]["name"] if m.tool_calls else None
        if isinstance(m, HumanMessage):
            return None
    return None


def pending_reactivation(messages: Sequence[BaseMessage]) -> bool:
    """Whether the agent was re-activated (a user message after its earlier moves) and has not acted since."""
    if not messages or not isinstance(messages[-1], HumanMessage):
        return False
    return any(isinstance(m, AIMessage) for m in messages[:-1])
