"""Content faults: what a real model writes that is malformed, how it is counted, and the bound on it.

Every fault is answered back to the model in-band (ToolBench's convention: a malformed call gets an error
observation the model can correct); this module only names, counts and bounds them. Kinds:

- `bad_json`: a call whose arguments are not a JSON object (an `invalid_tool_call`);
- `bad_arguments`: arguments that fail the function's schema (missing required fields, wrong types);
- `unknown_function`: a call to a function that was not offered (α-UMi's "hallucination"; also counted as
  `hallucinated`);
- `extra_calls`: more calls in one turn than a role that takes one call per turn accepts (the extras are not run);
- `empty`: a turn with neither text nor a call;
- `refusal`: a turn that declined (OpenAI's `refusal` field), treated as a turn without a call, its text recorded.

Not faults: text plus a call (the call runs, the text is its thought), and a natively tool-calling model writing
`Action:` / `Action Input:` in plain text (parsed and run as a call, counted as `text_actions`).

A reply without any call is no fault (it is answered with a reminder of the functions), but `max_turns_without_call`
such replies in a row end the solver's attempt (finish type "no_calls") or a retriever agent's activation (status
"finished", end reason "no_calls: ...").

A turn is *malformed* when it has a fault and none of its calls was accepted. `max_malformed_turns` malformed turns
in a row (text-only turns neither count nor break the run; an accepted call resets it) end the solver's attempt
(finish type "malformed") or a retriever agent's activation (status "stopped", end reason "malformed: ...").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from langchain_core.messages import AIMessage

from ..protocol import action_message, parse_action, text_of

FAULT_TEXT = {
    "bad_json": "arguments that are not a JSON object",
    "bad_arguments": "arguments that do not match the function's parameters",
    "unknown_function": "a call to a function that was not offered",
    "extra_calls": "several function calls in one turn",
    "empty": "an empty reply without a function call",
    "refusal": "a refusal",
}

# usage keys (per role) of this module's counters, as prefixes: malformed, malformed_<kind>, hallucinated,
# text_actions, and text_fallbacks (the endpoint refused `tools`, the role went on in text mode)
USAGE_KEYS = ("malformed", "hallucinated", "text_actions", "text_fallbacks")
MALFORMED_END = "malformed"  # the solver's finish type, and the prefix of an agent's end reason
# `max_turns_without_call` replies in a row without a function call (text only: no fault, but a model that never
# calls would spend every turn so): the solver's finish type, and the head of an agent's end reason
NO_CALLS_END = "no_calls"
EXTRA_CALL = "one call per turn: not run. Make exactly one function call per step."


def refusal_of(ai: AIMessage) -> str:
    """The refusal text a reply carries (OpenAI's `refusal` field; `ChatOpenAI` keeps it in `additional_kwargs`)."""
    value = (ai.additional_kwargs or {}).get("refusal")
    return value.strip() if isinstance(value, str) else ""


def review_reply(ai: AIMessage, *, id_prefix: str = "text") -> tuple[AIMessage, dict[str, int]]:
    """A reply made usable before its calls are answered, and what was done (usage counters):

    - no call, but `Action:` / `Action Input:` in the text → the action becomes a call (`text_actions`);
      unusable arguments become an invalid call (answered as `bad_json`);
    - a refusal without text → its text becomes the content (recorded in the tree and shown to the model).
    """
    if ai.tool_calls or ai.invalid_tool_calls:
        return ai, {}
    text = text_of(ai)
    if text.strip():
        if parse_action(text) is not None:
            parsed = action_message(text, id_prefix=id_prefix)
            return ai.model_copy(update={"content": parsed.content, "tool_calls": parsed.tool_calls,
                                         "invalid_tool_calls": parsed.invalid_tool_calls}), {"text_actions": 1}
        return ai, {}
    refusal = refusal_of(ai)
    if refusal:
        return ai.model_copy(update={"content": refusal}), {}
    return ai, {}


def turn_fault(ai: AIMessage | None) -> str | None:
    """The turn-level fault of a reply without any call: "refusal", "empty", or None (a thought, or calls)."""
    if ai is None:
        return "empty"
    if ai.tool_calls or ai.invalid_tool_calls:
        return None
    if refusal_of(ai):
        return "refusal"
    return None if text_of(ai).strip() else "empty"


def fault_usage(faults: Iterable[str]) -> dict[str, int]:
    """Usage counters of a turn's faults: `malformed` (all), `malformed_<kind>` and `hallucinated`."""
    counts = Counter(faults)
    if not counts:
        return {}
    out = {"malformed": sum(counts.values()), **{f"malformed_{k}": n for k, n in counts.items()}}
    if counts.get("unknown_function"):
        out["hallucinated"] = counts["unknown_function"]
    return out


def next_streak(streak: int, faults: Iterable[str], accepted: bool) -> int:
    """Malformed turns in a row after this turn: reset by an accepted call, +1 for a malformed turn, else kept."""
    if accepted:
        return 0
    return streak + 1 if any(True for _ in faults) else streak


def bound_reason(streak: int, limit: int, last: str, detail: str = "") -> str:
    """Why the bound ended an attempt / activation, naming the last fault."""
    what = FAULT_TEXT.get(last, last)
    return (f"{streak} malformed model turns in a row (max_malformed_turns={limit}); last: {what}"
            + (f" ({detail[:200]})" if detail else ""))


def no_calls_reason(streak: int, limit: int) -> str:
    """Why `max_turns_without_call` ended an attempt or an activation."""
    return (f"{streak} replies in a row without a function call (max_turns_without_call={limit}): the model does "
            "not call the functions offered")


def next_no_call_streak(streak: int, ai: AIMessage | None) -> int:
    """Replies without any function call in a row after this reply (a call, even a malformed one, resets it)."""
    return 0 if ai is not None and (ai.tool_calls or ai.invalid_tool_calls) else streak + 1


def with_call_ids(ai: AIMessage, prefix: str) -> AIMessage:
    """The reply with an id on every tool call (ToolMessages must point at one)."""
    if all(tc.get("id") for tc in ai.tool_calls) and all(tc.get("id") for tc in ai.invalid_tool_calls):
        return ai
    calls = [{**tc, "id": tc.get("id") or f"{prefix}_{i}"} for i, tc in enumerate(ai.tool_calls)]
    invalid = [{**tc, "id": tc.get("id") or f"{prefix}_bad_{i}"} for i, tc in enumerate(ai.invalid_tool_calls)]
    return ai.model_copy(update={"tool_calls": calls, "invalid_tool_calls": invalid})
