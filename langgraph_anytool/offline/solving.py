"""The solver's roles: one decision rule (`decide`: call an API for the first unanswered request part, answer,
or give up) played as the DFSDT / CoT solver (function calls, then `Finish`) and as α-UMi's planner, caller and
summarizer. Functions come from the call's inputs, progress from the trajectory's tool calls and observations.
When `ask_user` is offered and the chosen API lacks a required value, the solver (α-UMi: the planner routes to the
caller, which) asks the user once. Replies take the format the inputs name: native tool calls or text mode
(`text_mode`: `Action:` / `Action Input:` lines), and the planner's decision in the prompt profile's words
(`umi_prompts`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from ..catalog import Api
from ..catalog.errors import UnknownNameError
from ..protocol import ASK_USER_NAME, DIVERSITY, FINISH_NAME, render_action
from ..text import shorten
from .abilities import catalog_functions, missing_params, question_for, user_answers, user_answers_in, with_answers
from .arguments import extract_arguments
from .call import RoleCall
from .clauses import split_clauses
from .relevance import Heuristics
from .responses import describe_response
from .text import message_text
from .trajectory import Step, steps_from_dicts, steps_from_messages, tool_calls


@dataclass(frozen=True)
class CallApi:
    function: str
    args: dict[str, Any]
    clause: str


@dataclass(frozen=True)
class Answer:
    text: str
    failed: list[str]


@dataclass(frozen=True)
class GiveUp:
    reason: str
    failed: list[str]


Decision = CallApi | Answer | GiveUp


def decide(h: Heuristics, query: str, apis: Mapping[str, Api], steps: Sequence[Step], avoid: Iterable[str] = (),
           *, relative_to_given: bool = False) -> Decision:
    """The next solver move over `apis` (function name → API): call an API for the first unanswered request part,
    answer from the successful calls, or give up."""
    avoided = set(avoid)
    by_id = {a.id: fn for fn, a in apis.items()}
    answered: list[tuple[str, Step]] = []
    unanswered: list[tuple[str, list[str]]] = []
    used_ok: set[int] = set()
    for clause in split_clauses(query) or [query]:
        ratio = h.relevance_ratio * h.solver_ratio
        candidates = [by_id[a.id] for a in h.relevant(clause, apis.values(), ratio,
                                                      relative_to_given=relative_to_given)]
        ok = next((i for i, s in enumerate(steps) if s.ok and i not in used_ok and s.function in candidates), None)
        if ok is not None:
            used_ok.add(ok)
            answered.append((clause, steps[ok]))
            continue
        tried = list(dict.fromkeys(s.function for s in steps if not s.ok and s.function in candidates))
        left = [c for c in candidates if c not in tried and c not in avoided]
        if left and len(tried) < h.max_failures:
            return CallApi(left[0], extract_arguments(apis[left[0]], clause), clause)
        unanswered.append((clause, tried))
    failed = list(dict.fromkeys(s.function for s in steps if not s.ok))
    if not answered:
        detail = "; ".join(f"{s.function}: {shorten(s.error, 120) or 'failed'}" for s in steps if not s.ok)
        why = f"No API call succeeded ({detail})." if detail else "None of the available functions fits the query."
        return GiveUp(why, failed)
    parts = [_sentence(apis.get(s.function), s) for _, s in answered]
    text = " ".join(p if p.endswith((".", "!", "?")) else p + "." for p in parts)
    if unanswered:
        text += " I could not answer: " + "; ".join(
            repr(c) + (f" (failed: {', '.join(t)})" if t else " (no suitable API)") for c, t in unanswered) + "."
    return Answer(text, failed)


def _sentence(api: Api | None, step: Step) -> str:
    """"<API>: <response>", naming the call's arguments when the response repeats none of them ("lookup_capital
    (country: France): Paris."): an answer says what it is about, as the judge checks it does."""
    body = describe_response(step.response) or "done"
    label = api.name if api else step.function
    given = {k: v for k, v in step.args.items() if isinstance(v, str | int | float) and str(v).strip()} if isinstance(
        step.args, dict) else {}
    if given and not any(str(v).lower() in body.lower() for v in given.values()):
        label += " (" + "; ".join(f"{k}: {v}" for k, v in list(given.items())[:4]) + ")"
    return f"{label}: {body}"


def finish_call(decision: Answer | GiveUp, text: str = "") -> AIMessage:
    """The `Finish` call of an answer or a give-up."""
    if isinstance(decision, Answer):
        return tool_calls(text or "I have the results.", (FINISH_NAME, {
            "return_type": "give_answer", "final_answer": decision.text, "reason": "",
            "failed_functions": decision.failed}))
    return tool_calls(text or decision.reason, (FINISH_NAME, {
        "return_type": "give_up", "final_answer": "", "reason": decision.reason, "failed_functions": decision.failed}))


# ------------------------------------------------------------------------------------------ reply formats
def text_mode(call: RoleCall) -> bool:
    """Whether the call expects its function call written as text (`inputs["text_mode"]`, α-UMi's caller format)."""
    return call.inputs.get("text_mode") is True


def offers_ask_user(call: RoleCall) -> bool:
    """Whether `ask_user` is offered: bound natively, or `inputs["ask_user"]` (text mode; the planner: the caller
    may ask)."""
    return ASK_USER_NAME in call.tools or call.inputs.get("ask_user") is True


def as_text(reply: AIMessage) -> AIMessage:
    """The reply as a model without function calling writes it: its thought, then `Action:` / `Action Input:`."""
    if not reply.tool_calls:
        return reply
    tc = reply.tool_calls[0]
    thought = message_text(reply).strip()
    return AIMessage(content="\n".join(p for p in (thought, render_action(tc["name"], tc["args"])) if p))


def in_format(call: RoleCall, reply: AIMessage) -> AIMessage:
    """The reply in the format the call expects (native tool calls, or text mode)."""
    return as_text(reply) if text_mode(call) else reply


def ask_for(call: RoleCall, apis: Mapping[str, Api], decision: Decision, answers: Sequence[str]) -> list[str]:
    """The required values the chosen API lacks when `ask_user` is offered and the user was not asked yet."""
    if not isinstance(decision, CallApi) or not offers_ask_user(call) or answers:
        return []
    return missing_params(apis[decision.function], decision.clause)


# ------------------------------------------------------------------------------------------ DFSDT / CoT solver
def solver_reply(h: Heuristics, call: RoleCall) -> AIMessage:
    """A function call for the next unanswered part, else `Finish`. At a node with tried children (DFSDT's
    diversity message, recognised by its message name), the functions those children called are avoided. In text
    mode the trajectory comes from `inputs["history"]` (message dicts) and the reply is written as text."""
    functions = call.strings("functions") or [t for t in call.tools if t not in (FINISH_NAME, ASK_USER_NAME)]
    if text_mode(call):
        history = call.records("history")
        notes = [str(d.get("content") or "") for d in history if d.get("role") == "user" and d.get("name") == DIVERSITY]
        answers, steps = user_answers_in(history), steps_from_dicts(history)
    else:
        notes = [message_text(m) for m in call.messages if isinstance(m, HumanMessage) and m.name == DIVERSITY]
        answers, steps = user_answers(call.messages), steps_from_messages(call.messages)
    avoid = {fn for note in notes for fn in functions if fn in note}
    apis = catalog_functions(h, functions)
    decision = decide(h, with_answers(call.query, answers), apis, steps, avoid)
    missing = ask_for(call, apis, decision, answers)
    if isinstance(decision, CallApi) and missing:  # a value only the user can give: ask once
        return in_format(call, question_for(apis[decision.function], decision.clause, missing))
    if isinstance(decision, CallApi):
        return in_format(call, tool_calls(f"For {decision.clause!r} I call {decision.function}.",
                                          (decision.function, decision.args)))
    return in_format(call, finish_call(decision))


# ------------------------------------------------------------------------------------------ α-UMi
# The planner's decisions in each prompt profile (`inputs["umi_prompts"]`): α-UMi's own words, or ours.
NEXT_WORDS: Mapping[str, Mapping[str, str]] = {
    "default": {"caller": "Next: caller", "summarizer": "Next: summarizer", "give_up": "Next: give up"},
    "alpha_umi": {"caller": "Next: caller.", "summarizer": "Next: conclusion.", "give_up": "Next: give up."},
}


def _umi_state(h: Heuristics, call: RoleCall, functions: Sequence[str], avoid: Iterable[str] = ()
               ) -> tuple[dict[str, Api], list[str], Decision]:
    """(the functions' APIs, the user's answers, the next move) from the call's `history` input."""
    history = call.records("history")
    apis = catalog_functions(h, functions)
    answers = user_answers_in(history)
    return apis, answers, decide(h, with_answers(call.query, answers), apis, steps_from_dicts(history), avoid)


def planner_reply(h: Heuristics, call: RoleCall) -> AIMessage:
    """A rationale ending in α-UMi's decision, worded as the call's prompt profile has it (`Next: caller`,
    `Next: summarizer` / `Next: conclusion.`, `Next: give up`). When the caller may ask the user and the next API
    lacks a value the request does not give, the caller's turn is to ask."""
    nxt = NEXT_WORDS.get(call.text("umi_prompts"), NEXT_WORDS["default"])
    apis, answers, decision = _umi_state(h, call, call.strings("functions"))
    missing = ask_for(call, apis, decision, answers)
    if isinstance(decision, CallApi) and missing:
        names = " and ".join(repr(m) for m in missing)
        text = (f"For {decision.clause!r}, {decision.function} needs {names}, which the request does not give: the "
                f"caller should ask the user with {ASK_USER_NAME}. {nxt['caller']}")
    elif isinstance(decision, CallApi):
        text = (f"For {decision.clause!r} the caller should call {decision.function} with "
                f"{json.dumps(decision.args, ensure_ascii=False)}. {nxt['caller']}")
    elif isinstance(decision, Answer):
        text = f"The API results cover the query; time to write the answer. {nxt['summarizer']}"
    else:
        failed = f" Failed functions: {', '.join(decision.failed)}." if decision.failed else ""
        text = f"{decision.reason}{failed} {nxt['give_up']}"
    return AIMessage(content=text)


def caller_reply(h: Heuristics, call: RoleCall) -> AIMessage:
    """The one function call the planner's thought names (its arguments read from the request), or `ask_user`
    when the planner's move needs a value only the user can give; as text in text mode."""
    functions = [t for t in (list(call.tools) or call.strings("functions")) if t != ASK_USER_NAME]
    query, thought = call.query, call.text("thought")
    apis, answers, decision = _umi_state(h, call, functions)
    missing = ask_for(call, apis, decision, answers)
    if isinstance(decision, CallApi) and missing:
        return in_format(call, question_for(apis[decision.function], decision.clause, missing))
    named = next((t for t in sorted(functions, key=len, reverse=True) if t in thought), None)
    if isinstance(decision, CallApi) and (named is None or named == decision.function):
        return in_format(call, tool_calls("", (decision.function, decision.args)))
    if named is not None:
        try:
            api = h.catalog.api_for_function(named)
        except UnknownNameError:
            return AIMessage(content=f"{named} is not a function of the catalog.")
        clause = decision.clause if isinstance(decision, CallApi) else with_answers(query, answers)
        return in_format(call, tool_calls("", (named, extract_arguments(api, clause))))
    return AIMessage(content="No function fits the thought.")


def summarizer_reply(h: Heuristics, call: RoleCall) -> AIMessage:
    """The final answer from the trajectory's successful calls."""
    steps = steps_from_dicts(call.records("history"))
    functions = list(dict.fromkeys(s.function for s in steps))
    _, _, decision = _umi_state(h, call, functions, avoid=functions)
    if isinstance(decision, Answer):
        return AIMessage(content=decision.text)
    reason = decision.reason if isinstance(decision, GiveUp) else ""
    return AIMessage(content=f"I could not answer the query: {reason}".strip())
