"""Fitting a prompt into the model's context window before a model call.

`llm.call_role` fits every prompt so that the prompt plus the reply's `max_tokens` stay within the window
(`context_window` below), and every call carries that `max_tokens` (`reply_limit`: the model's own when it sets
one, else its profile's for the role, else `ROLE_REPLY_TOKENS[role]`; at most half the window).

**The window** is the smaller of the profile's (see `profiles.py`: a declared `context_window` is never exceeded)
and the one the model's server says it runs with (llama.cpp, vLLM, Ollama: see `endpoint.py`); for a model the
profile table does not know, the server's, else `profiles.UNKNOWN`'s 32,768.

**The count.** Where the server has a tokenizer endpoint (llama.cpp, vLLM) the prompt is counted by the server
itself, exactly as the request will be counted (chat template, tool schemas, the functions a text-mode prompt
lists). Otherwise the count is an *estimate* (characters / 4 plus a few tokens per message and tool call, times the
tokens-per-estimate ratio this endpoint's replies have shown so far, `Endpoints.ratio`), and only `SAFETY` (90%) of
the room is filled. `Fitted.counted` says which; the role's usage counts `fit_counted` / `fit_estimated` calls.

When the prompt and the bound tools' schemas are over the limit, it is cut in this order, each step only as far as
needed:

1. long tool observations (`ToolMessage` contents): head and tail kept, a marker saying how much was cut;
2. the middle of the history: the system messages, the first human message and the latest turn stay; older turns
   go first (tool-call turns before user messages), an `AIMessage` always together with its `ToolMessage`s; the
   first human message gets a one-line summary of what was left out (which functions were called, how often);
3. the bound tools' descriptions (`bind_tools` → `RunnableBinding.kwargs["tools"]`): shortened to their first
   sentence, parameter descriptions dropped;
4. any other long text (e.g. a history rendered into a system prompt): head and tail kept (`texts=False` skips
   this step: the solver offers fewer functions instead, see nodes/solver/dfsdt.py).

With a server count, the cuts aim at the estimate the count calls for (`fit_counted`: the count is taken again after
each fit, at most `MAX_FITS` times). The caller's messages are never changed (cut messages are copies). A prompt
counted over the room after every cut is not sent (`call_role` raises a `context_length` error); an overflow the
server answers (`guard.overflow_counts`) is met by fitting again to the counts it states.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from math import ceil
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from ..text import shorten
from .profiles import ModelProfile, unwrap

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4  # tokens per message (role and separators), as OpenAI's chat format spends them
TOOL_CALL_OVERHEAD = 40  # characters per tool call besides its name and arguments (id, type, JSON framing)
SAFETY = 0.9  # a prompt is fitted to this share of the room left: the estimate is no tokenizer
MIN_OBSERVATION_CHARS = 400  # a cut observation keeps at least this much (head + tail)
MIN_TEXT_CHARS = 600  # a cut text (step 4) keeps at least this much
MAX_FITS = 4  # fits with a server count (each followed by a count) before giving up
# the `max_tokens` of each role's calls unless the model or its profile sets one: enough for a thought and a
# function call (agents, the caller, the router), a final answer (solver, summarizer), a verdict with its reasons
# (judge, solvable check), a plan or a simulated API response
ROLE_REPLY_TOKENS: dict[str, int] = {
    "meta": 512, "category": 512, "tool": 512, "solvable": 512, "solver": 1024, "planner": 512, "caller": 512,
    "summarizer": 1024, "judge": 768, "simulator": 1024, "router": 512, "outline": 2048,
}
DEFAULT_REPLY_TOKENS = 1024  # a role the table does not name
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
    `max_completion_tokens` or `num_predict` (an attribute, or a `.bind(...)` argument), else None."""
    for layer in unwrap(model):
        bound = getattr(layer, "kwargs", None)
        for attr in ("max_tokens", "max_completion_tokens", "num_predict"):
            value = getattr(layer, attr, None)
            if value is None and isinstance(bound, dict):
                value = bound.get(attr)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


def reply_limit(model: Any, role: str, profile: ModelProfile, window: int) -> int:
    """The `max_tokens` of `role`'s calls: the model's own `max_tokens` when it sets one (never more than half the
    window), else the profile's for the role, else `ROLE_REPLY_TOKENS` (either never more than a quarter of the
    window: the prompt needs the rest)."""
    own = own_reply_limit(model)
    if own is not None:
        return max(1, min(own, window // 2))
    chosen = profile.reply_tokens(role)
    if chosen is None:
        chosen = ROLE_REPLY_TOKENS.get(role, DEFAULT_REPLY_TOKENS)
    return max(1, min(chosen, window // 4))


def reply_allowance(model: Any) -> int:
    """The tokens a call's reply is counted as before it is sent, for a model class that takes no per-call
    `max_tokens` (`cap_kwarg` None): the model's own limit when set (a hard bound), else `REPLY_ALLOWANCE` (a longer
    reply passes the budget by the rest)."""
    own = own_reply_limit(model)
    return own if own is not None else REPLY_ALLOWANCE


def context_window(profile: ModelProfile, served: int | None) -> int:
    """The window a prompt is fitted into: the smaller of the profile's (a declared one is never exceeded) and the
    server's (`served`); the server's alone for a model the profile table does not know (`pattern` "")."""
    if served is None:
        return profile.context_window
    return served if not profile.pattern else min(profile.context_window, served)


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
    tokens: int = 0  # the prompt's tokens as `counted` says: the server's count, else the (calibrated) estimate
    counted: bool = False  # `tokens` is the server tokenizer's count (else an estimate)

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
        note = f"\n\n[{summary_of([rest[i] for i in sorted(dropped)])}]"
        head = [*head[:-1], head[-1].model_copy(update={"content": head[-1].content + note})]
    return [*head, *kept]


def summary_of(left_out: Sequence[BaseMessage]) -> str:
    """One line saying what older turns were left out to fit the window: how many messages, and the functions
    they called with how their calls ended (e.g. "convert_units ×2 (1 error)")."""
    calls: dict[str, list[int]] = {}
    status = {m.tool_call_id: m.status for m in left_out if isinstance(m, ToolMessage)}
    for m in left_out:
        for tc in getattr(m, "tool_calls", None) or []:
            seen = calls.setdefault(str(tc.get("name") or "?"), [0, 0])
            seen[0] += 1
            seen[1] += int(status.get(str(tc.get("id") or "")) == "error")
    called = ", ".join(f"{name} ×{n}" + (f" ({bad} error{'s' if bad > 1 else ''})" if bad else "")
                       for name, (n, bad) in calls.items())
    return (f"{len(left_out)} earlier messages of this conversation were left out to fit the context window"
            + (f"; they called {called}" if called else ""))


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


def fit_prompt(runnable: Any, messages: Sequence[BaseMessage], limit: int, *, texts: bool = True) -> Fitted:
    """`messages` (and the tools bound to `runnable`) cut to at most `limit` estimated tokens, where possible
    (see the module docstring for the order; `texts=False` skips step 4); unchanged when they already fit."""
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
    if over() > 0 and texts:
        cut = _clip_messages(msgs, lambda m: not isinstance(m, ToolMessage), over(), MIN_TEXT_CHARS)
        if cut is not msgs:
            msgs, steps = cut, [*steps, "texts"]
    after = estimate_tokens(msgs) + tool_tokens
    return Fitted(runnable, msgs, tuple(steps), before, after, tokens=after)


def sent_overhead(runnable: Any, messages: Sequence[BaseMessage]) -> int:
    """Estimated tokens a runnable adds to the prompt it is given when it sends it: a text-mode runnable (`as_sent`)
    writes the function list and the reply format into the system prompt and the calls and observations as text;
    0 for any other."""
    as_sent = getattr(runnable, "as_sent", None)
    if not callable(as_sent):
        return 0
    _, sent = as_sent(list(messages))
    return max(0, estimate_tokens(sent) - estimate_tokens(messages, bound_tools(runnable)))


# The server's token count of a prompt as `runnable` would send it (None: it cannot count), see endpoint.py.
Counter = Callable[[Any, list[BaseMessage]], "int | None"]


def fit_counted(runnable: Any, messages: Sequence[BaseMessage], room: int, count: Counter | None, *,
                ratio: float = 1.0, texts: bool = True) -> Fitted:
    """The prompt fitted into `room` tokens (the window less the reply's `max_tokens`).

    With a server `count`: the prompt as it is when the count says it fits; else fitted to the estimate the count
    calls for (the estimate scaled by count / estimate), counted again, at most `MAX_FITS` times; the result says
    its count (`counted`), over `room` when no cut could bring it down. Without one (or when counting fails): fitted
    to `SAFETY` of the room in estimated tokens divided by `ratio` (what this endpoint's counts have been per
    estimated token), `tokens` the calibrated estimate."""
    msgs = list(messages)
    counted = count(runnable, msgs) if count is not None else None
    if count is None or counted is None:
        extra = sent_overhead(runnable, msgs)  # what a text-mode runnable adds to the prompt it sends
        fitted = fit_prompt(runnable, msgs, int(room * SAFETY / max(ratio, 1.0)) - extra, texts=texts)
        sent = fitted.after + extra
        return replace(fitted, after=sent, tokens=ceil(sent * max(ratio, 1.0)))
    before = estimate_tokens(msgs, bound_tools(runnable))
    fitted = Fitted(runnable, msgs, (), before, before, tokens=counted, counted=True)
    steps: list[str] = []
    for _ in range(MAX_FITS):
        if fitted.tokens <= room:
            break
        target = int(fitted.after * room / fitted.tokens) - 1  # the estimate a fit to `room` calls for
        again = fit_prompt(fitted.runnable, fitted.messages, target, texts=texts)
        if not again.trimmed:
            break  # nothing left to cut
        tokens = count(again.runnable, again.messages)
        if tokens is None:  # the count failed meanwhile: the estimate, as without a count
            return replace(again, before=before, steps=tuple(steps + list(again.steps)),
                           tokens=ceil(again.after * max(ratio, 1.0)))
        steps += [s for s in again.steps if s not in steps]
        fitted = replace(again, before=before, steps=tuple(steps), tokens=tokens, counted=True)
    return fitted
