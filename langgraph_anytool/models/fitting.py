"""Fitting a prompt into the model's context window before a model call.

`llm.call_role` fits every prompt into the model profile's `context_window` (see `profiles.py`) minus a reserve
for the reply (the model's `max_tokens` when set, else 1/8 of the window, at most 4096 tokens), and of what is left
only 90% (`SAFETY`): token counts are estimates (characters / 4, plus a few tokens per message and tool call), not a
tokenizer's. When the prompt and the bound tools' schemas are over the limit, it is cut in this order, each step
only as far as needed:

1. long tool observations (`ToolMessage` contents): head and tail kept, a marker saying how much was cut;
2. the middle of the history: the system messages, the first human message and the latest turn stay; older turns
   go first (tool-call turns before user messages), an `AIMessage` always together with its `ToolMessage`s;
3. the bound tools' descriptions (`bind_tools` → `RunnableBinding.kwargs["tools"]`): shortened to their first
   sentence, parameter descriptions dropped;
4. any other long text (e.g. a history rendered into a system prompt): head and tail kept.

The caller's messages are never changed (cut messages are copies). When the provider still answers
`context_length_exceeded`, `call_role` fits once more to half the estimate that failed, then gives up.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from ..render import shorten
from .profiles import unwrap

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4  # tokens per message (role and separators), as OpenAI's chat format spends them
TOOL_CALL_OVERHEAD = 40  # characters per tool call besides its name and arguments (id, type, JSON framing)
SAFETY = 0.9  # a prompt is fitted to this share of the room left: the estimate is no tokenizer
MIN_OBSERVATION_CHARS = 400  # a cut observation keeps at least this much (head + tail)
MIN_TEXT_CHARS = 600  # a cut text (step 4) keeps at least this much
MAX_REPLY_RESERVE = 4096
MAX_TOOL_DESCRIPTION = 120
# The longest query a run accepts (refused before any model call): about 12,500 tokens, which every model call of
# the run carries; ToolBench's and AnyToolBench's queries are a few hundred characters.
MAX_QUERY_CHARS = 50_000
REPLY_ALLOWANCE = 0  # a reply's tokens as the budget counts them before the call when the model sets no max_tokens
# (and its class takes no per-call `max_tokens`, see `cap_kwarg`: a reply of a class that does is capped instead)
MIN_REPLY_TOKENS = 32  # a call whose reply the token budget would cap below this is not sent (no tool call fits)


def _text_len(content: Any) -> int:
    return len(content) if isinstance(content, str) else len(json.dumps(content, ensure_ascii=False, default=str))


def message_tokens(msg: BaseMessage) -> int:
    """Estimated tokens of one message: its content, its tool calls' names and arguments, and an overhead."""
    chars = _text_len(msg.content) + len(str(getattr(msg, "tool_call_id", "") or ""))
    for tc in getattr(msg, "tool_calls", None) or []:
        chars += len(str(tc.get("name", ""))) + len(json.dumps(tc.get("args", {}), ensure_ascii=False, default=str))
        chars += len(str(tc.get("id") or "")) + TOOL_CALL_OVERHEAD
    return chars // CHARS_PER_TOKEN + MESSAGE_OVERHEAD


def estimate_tokens(messages: Sequence[BaseMessage], tools: Sequence[Any] | None = None) -> int:
    """Estimated tokens of a prompt and the tool schemas sent with it (characters / 4: an estimate)."""
    tool_chars = len(json.dumps(list(tools), ensure_ascii=False, default=str)) if tools else 0
    return sum(message_tokens(m) for m in messages) + tool_chars // CHARS_PER_TOKEN


def bound_tools(runnable: Any) -> list[Any] | None:
    """The tool schemas sent with a model's calls: a `bind_tools` binding holds them in `kwargs["tools"]`; a
    text-mode runnable (`TextToolRunnable`) lists them in its prompt, from `.tools`."""
    kwargs = getattr(runnable, "kwargs", None)
    tools = kwargs.get("tools") if isinstance(kwargs, dict) else getattr(runnable, "tools", None)
    return list(tools) if isinstance(tools, list) else None


def with_tools(runnable: Any, tools: list[Any]) -> Any:
    """`runnable` sending `tools` instead of the ones it holds (see `bound_tools`)."""
    if isinstance(getattr(runnable, "kwargs", None), dict):
        return runnable.model_copy(update={"kwargs": {**runnable.kwargs, "tools": tools}})
    return type(runnable)(runnable.bound, tools)  # TextToolRunnable(model, tools)


def own_reply_limit(model: Any) -> int | None:
    """The reply limit the model (or the chat model a binding wraps) sets itself: `max_tokens`,
    `max_completion_tokens` or `num_predict`, else None."""
    for layer in unwrap(model):
        for attr in ("max_tokens", "max_completion_tokens", "num_predict"):
            value = getattr(layer, attr, None)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


def reply_reserve(model: Any, window: int) -> int:
    """Tokens kept free for the reply: the model's `max_tokens` if set, else window / 8 (at most 4096)."""
    own = own_reply_limit(model)
    return min(own, window // 2) if own is not None else min(MAX_REPLY_RESERVE, window // 8)


def reply_allowance(model: Any) -> int:
    """The tokens a call's reply is counted as before it is sent (the token budget's look-ahead): the model's
    `max_tokens` when set (a hard bound), else `REPLY_ALLOWANCE` (a longer reply passes the budget by the rest)."""
    own = own_reply_limit(model)
    return own if own is not None else REPLY_ALLOWANCE


def cap_kwarg(model: Any) -> str | None:
    """The per-call keyword that caps a reply's tokens for `model` (or the chat model a binding or a text-mode
    runnable wraps): "max_tokens" when its class has that field (ChatOpenAI, which sends it as
    `max_completion_tokens`; ChatAnthropic, ChatGroq, the offline stand-in, ...), else None (e.g. ChatOllama's
    `num_predict` is a constructor option only): such a model's replies are not capped by the token budget."""
    for layer in unwrap(model):
        fields_ = getattr(type(layer), "model_fields", None)
        if isinstance(fields_, dict) and "max_tokens" in fields_ and hasattr(layer, "_generate"):
            return "max_tokens"
    return None


def output_ceiling(model: Any) -> int | None:
    """The most output tokens `model` can be asked for, when langchain's model profile knows it (e.g. 16,384 for
    gpt-4o-mini), else None."""
    for layer in unwrap(model):
        profile = getattr(layer, "profile", None)
        value = profile.get("max_output_tokens") if isinstance(profile, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


@dataclass(frozen=True)
class Fitted:
    """A prompt fitted to a limit: the runnable to call (tools maybe shortened), the messages, what was cut."""

    runnable: Any
    messages: list[BaseMessage]
    steps: tuple[str, ...]  # "observations", "history", "tools", "texts": the cuts made, in order
    before: int  # estimated tokens before fitting (messages + tools)
    after: int  # estimated tokens after

    @property
    def trimmed(self) -> bool:
        return bool(self.steps)


def clip_middle(text: str, keep: int) -> str:
    """`text` with its middle cut so that about `keep` characters (head and tail) remain, and a marker."""
    if len(text) <= keep:
        return text
    head = keep * 2 // 3
    tail = keep - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n... [{cut} characters cut to fit the model's context window] ...\n{text[len(text) - tail:]}"


def _cap_for(lengths: Sequence[int], excess: int, floor: int) -> int:
    """The largest per-item cap (≥ floor) whose cuts remove at least `excess` characters (floor if none does)."""
    lo, hi = floor, max(lengths, default=floor)
    if sum(max(0, n - lo) for n in lengths) < excess:
        return floor
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(max(0, n - mid) for n in lengths) >= excess:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _clip_messages(messages: list[BaseMessage], pick: Any, excess_tokens: int, floor: int) -> list[BaseMessage]:
    """Copies of the `pick`ed messages with string contents longer than `floor` cut to a common cap."""
    idx = [i for i, m in enumerate(messages) if pick(m) and isinstance(m.content, str) and len(m.content) > floor]
    if not idx:
        return messages
    lengths = [len(str(messages[i].content)) for i in idx]
    # each cut adds a marker of ~70 characters: ask for that much more
    cap = _cap_for(lengths, excess_tokens * CHARS_PER_TOKEN + 80 * len(idx), floor)
    out = list(messages)
    for i in idx:
        text = str(messages[i].content)
        if len(text) > cap:
            out[i] = messages[i].model_copy(update={"content": clip_middle(text, cap)})
    return out


def _units(messages: Sequence[BaseMessage]) -> list[list[int]]:
    """Indices grouped into turns that must stay or go together: an AIMessage with tool calls and the
    ToolMessages answering it form one unit; every other message is a unit of its own."""
    units: list[list[int]] = []
    open_ids: set[str] = set()
    for i, m in enumerate(messages):
        if isinstance(m, ToolMessage) and units and m.tool_call_id in open_ids:
            units[-1].append(i)
            continue
        units.append([i])
        open_ids = {str(tc.get("id")) for tc in m.tool_calls} if isinstance(m, AIMessage) and m.tool_calls else set()
    return units


def _drop_history(messages: list[BaseMessage], limit: int, tool_tokens: int) -> list[BaseMessage]:
    """Older turns dropped until the prompt fits: system messages, the first human message and the latest turn
    stay; tool-call turns go before user messages, the oldest first."""
    keep_head = 0
    while keep_head < len(messages) and isinstance(messages[keep_head], SystemMessage):
        keep_head += 1
    first_human = next((i for i in range(keep_head, len(messages)) if isinstance(messages[i], HumanMessage)), None)
    if first_human is not None:
        keep_head = first_human + 1
    head, rest = messages[:keep_head], messages[keep_head:]
    units = _units(rest)
    if len(units) <= 1:
        return messages
    candidates = units[:-1]  # the latest turn always stays
    order = ([u for u in candidates if not isinstance(rest[u[0]], HumanMessage)]
             + [u for u in candidates if isinstance(rest[u[0]], HumanMessage)])
    total = estimate_tokens(messages) + tool_tokens
    dropped: set[int] = set()
    for unit in order:
        if total <= limit:
            break
        dropped.update(unit)
        total -= sum(message_tokens(rest[i]) for i in unit)
    if not dropped:
        return messages
    kept = [m for i, m in enumerate(rest) if i not in dropped]
    if first_human is not None and isinstance(head[-1].content, str):
        note = f"\n\n[{len(dropped)} earlier messages of this conversation were left out to fit the context window]"
        head = [*head[:-1], head[-1].model_copy(update={"content": head[-1].content + note})]
    return [*head, *kept]


def shorten_tools(tools: Sequence[Any]) -> list[Any]:
    """Tool schemas (OpenAI format) with descriptions cut to their first sentence and parameter descriptions
    dropped; other schemas unchanged."""
    out: list[Any] = []
    for tool in tools:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict):
            out.append(tool)
            continue
        desc = str(fn.get("description") or "")
        first = desc.split(". ", 1)[0].strip()
        short = shorten(first, MAX_TOOL_DESCRIPTION)
        params = fn.get("parameters")
        if isinstance(params, dict) and isinstance(params.get("properties"), dict):
            props = {k: {kk: vv for kk, vv in v.items() if kk != "description"} if isinstance(v, dict) else v
                     for k, v in params["properties"].items()}
            params = {**params, "properties": props}
        out.append({**tool, "function": {**fn, "description": short, **({"parameters": params} if params else {})}})
    return out


def fit_prompt(runnable: Any, messages: Sequence[BaseMessage], limit: int) -> Fitted:
    """`messages` (and the tools bound to `runnable`) cut to at most `limit` estimated tokens, where possible
    (see the module docstring for the order); unchanged when they already fit."""
    msgs = list(messages)
    tools = bound_tools(runnable)
    tool_tokens = estimate_tokens([], tools)
    before = estimate_tokens(msgs) + tool_tokens
    steps: list[str] = []

    def over() -> int:
        return estimate_tokens(msgs) + tool_tokens - limit

    if over() > 0:
        cut = _clip_messages(msgs, lambda m: isinstance(m, ToolMessage), over(), MIN_OBSERVATION_CHARS)
        if cut is not msgs:
            msgs, steps = cut, [*steps, "observations"]
    if over() > 0:
        cut = _drop_history(msgs, limit, tool_tokens)
        if cut is not msgs:
            msgs, steps = cut, [*steps, "history"]
    if over() > 0 and tools:
        short = shorten_tools(tools)
        if estimate_tokens([], short) < tool_tokens:
            runnable = with_tools(runnable, short)
            tool_tokens = estimate_tokens([], short)
            steps.append("tools")
    if over() > 0:
        cut = _clip_messages(msgs, lambda m: not isinstance(m, ToolMessage), over(), MIN_TEXT_CHARS)
        if cut is not msgs:
            msgs, steps = cut, [*steps, "texts"]
    return Fitted(runnable, msgs, tuple(steps), before, estimate_tokens(msgs) + tool_tokens)
