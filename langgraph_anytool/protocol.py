"""Names and formats the models see: the function names (`Finish`, `ask_user`, `submit_plan`,
`use_tools` / `answer_directly`), the Action / Action Input text format, the diversity prompt's message name.

A bottom module: `nodes/` and `offline/` both import it; it imports nothing of the package.
"""

from __future__ import annotations

import ast
import json
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from .sanitize import NestingTooDeep, check_nesting

FINISH_NAME = "Finish"
ASK_USER_NAME = "ask_user"
NO_USER_ANSWER = (
    "No user is available to answer questions in this run. Go on with what you have: make a reasonable assumption "
    "and say so in the answer, or give up if the task cannot be done without the information."
)


SUBMIT_PLAN = "submit_plan"
USE_TOOLS = "use_tools"
ANSWER_DIRECTLY = "answer_directly"
_ACTION = re.compile(r"^\s*\**\s*Action\s*\**\s*:\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_INPUT = re.compile(r"^\s*\**\s*Action\s+Input\s*\**\s*:\s*", re.IGNORECASE | re.MULTILINE)
_END_MARKERS = re.compile(r"\n\s*(?:Observation|Thought|Action|Next)\s*:", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedAction:
    """A text-mode call: the function name, its arguments (a JSON object) or the reason they are unusable."""

    name: str
    args: dict[str, Any] | None
    raw_args: str
    error: str = ""


def _first_json_object(text: str) -> tuple[Any, str]:
    """The leading JSON value of `text` (trailing chatter ignored) and its source text."""
    text = text.strip()
    if text.startswith("```"):
        text = re.sub(r"^```(?:json)?\s*", "", text)
        text = text.split("```", 1)[0]
    decoder = json.JSONDecoder()
    try:
        value, end = decoder.raw_decode(text)
        return check_nesting(value), text[:end]
    except (NestingTooDeep, RecursionError):  # deeper than any arguments (`sanitize.MAX_NESTING`): not arguments
        return None, text
    except ValueError:
        pass
    cut = _END_MARKERS.search(text)
    body = (text[: cut.start()] if cut else text).strip()
    try:  # a Python-literal dict ({'a': 1}); never eval
        return ast.literal_eval(body), body
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None, body


def parse_action(text: str) -> ParsedAction | None:
    """The last `Action:` / `Action Input:` pair of a reply, or None when it holds no `Action:` line.

    A missing `Action Input:` means no arguments (`{}`); arguments that are not a JSON object give a
    `ParsedAction` with `args=None` and the reason in `error`.
    """
    matches = list(_ACTION.finditer(text or ""))
    matches = [m for m in matches if not m.group(0).lstrip(" *").lower().startswith("action input")]
    if not matches:
        return None
    last = matches[-1]
    name = last.group(1).strip().strip("`*\"' ")
    name = name.split()[0] if name else ""
    rest = text[last.end():]
    found = _INPUT.search(rest)
    if found is None:
        return ParsedAction(name=name, args={}, raw_args="")
    value, raw = _first_json_object(rest[found.end():])
    if value is None and not raw:
        return ParsedAction(name=name, args={}, raw_args="")
    if not isinstance(value, dict):
        return ParsedAction(name=name, args=None, raw_args=raw, error="Action Input is not a JSON object")
    return ParsedAction(name=name, args=value, raw_args=raw)


def render_action(name: str, args: Any) -> str:
    """`Action: name\\nAction Input: {json}`."""
    body = args if isinstance(args, str) else json.dumps(args if args is not None else {}, ensure_ascii=False)
    return f"Action: {name}\nAction Input: {body}"


def thought_of(text: str) -> str:
    """The text before the first `Action:` line (the model's thought), stripped."""
    m = _ACTION.search(text or "")
    return (text[: m.start()] if m else text or "").strip()


def action_message(text: str, *, id_prefix: str = "text") -> AIMessage:
    """A text reply as an `AIMessage`: its thought as content and the parsed action as a tool call (or an invalid
    tool call when the arguments are unusable)."""
    parsed = parse_action(text)
    if parsed is None:
        return AIMessage(content=text.strip())
    call_id = f"{id_prefix}_{uuid.uuid5(uuid.NAMESPACE_OID, text).hex[:12]}"
    if parsed.args is None:
        return AIMessage(content=thought_of(text), invalid_tool_calls=[{
            "name": parsed.name, "args": parsed.raw_args, "id": call_id, "error": parsed.error,
            "type": "invalid_tool_call"}])
    return AIMessage(content=thought_of(text), tool_calls=[{"name": parsed.name, "args": parsed.args, "id": call_id,
                                                            "type": "tool_call"}])


def text_of(msg: Any) -> str:
    """The text of a message (content blocks joined)."""
    content = getattr(msg, "content", "")
    if isinstance(content, str):
        return content
    return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content if isinstance(b, str | dict))


def calls_as_text(messages: Sequence[BaseMessage], appendix: str,
                  render: Callable[[str, Any], str]) -> list[BaseMessage]:
    """A conversation for a model that reads its functions from the prompt: the system messages joined, with
    `appendix` (the function list and reply format) after them; each earlier call written into its AI message by
    `render(name, args)`; each function result as an `Observation (name): ...` user message. No tool-call structure
    is left."""
    system_text = "\n\n".join(text_of(m) for m in messages if isinstance(m, SystemMessage))
    out: list[BaseMessage] = [SystemMessage(content=f"{system_text}\n\n{appendix}".strip())]
    for m in messages:
        if isinstance(m, SystemMessage):
            continue
        if isinstance(m, AIMessage):
            parts = [text_of(m).strip()]
            parts += [render(tc["name"], tc["args"]) for tc in m.tool_calls]
            parts += [render(str(tc.get("name")), tc.get("args") or "") for tc in m.invalid_tool_calls]
            out.append(AIMessage(content="\n".join(p for p in parts if p)))
        elif isinstance(m, ToolMessage):
            out.append(HumanMessage(content=f"Observation ({m.name or 'function'}): {text_of(m)}"))
        else:
            out.append(m)
    return out


# `name` of the human messages the solver itself adds (they are not part of the task).
DIVERSITY = "diversity_prompt"
