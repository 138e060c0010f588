"""The roles of the graph's abilities (issue 9): the router (tool / no tool) and the outline (plan only), plus
when the solver asks the user (used by `solving.solver_reply`).

- router: a tool is needed when some part of the request has an on-topic API in the catalog's top search hits;
  otherwise it "answers directly" — but the stand-in has no knowledge of its own, so its direct answer says so
  (the judge then rules it Unsolved and the run retrieves tools after all);
- outline: per request part, the most relevant pooled function not yet planned, with the arguments the part gives;
- ask_user: when the chosen API has a required parameter the request gives no value for (a default would be a
  guess) and the user has not been asked yet; the user's answers are appended to the request for extraction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from ..catalog import Api
from ..catalog.errors import UnknownNameError
from ..protocol import ANSWER_DIRECTLY, ASK_USER_NAME, NO_USER_ANSWER, SUBMIT_PLAN, USE_TOOLS
from .arguments import extract, extract_arguments
from .call import RoleCall
from .clauses import split_clauses
from .relevance import Heuristics
from .text import message_text
from .trajectory import tool_calls


def catalog_functions(h: Heuristics, functions: Iterable[str]) -> dict[str, Api]:
    """function name → API, for the names the catalog knows."""
    apis: dict[str, Api] = {}
    for fn in functions:
        try:
            apis[fn] = h.catalog.api_for_function(fn)
        except UnknownNameError:
            continue
    return apis


NO_KNOWLEDGE = ("(offline stand-in, not an LLM) This request seems to need no tool, but I could not answer it: the "
                "rule-based stand-in has no knowledge of its own.")


def needs_tools(h: Heuristics, query: str) -> list[str]:
    """The request parts that have an on-topic API among the catalog's top search hits."""
    return [c for c in split_clauses(query) or [query] if h.best_relevance(c) > 0]


def router_reply(h: Heuristics, call: RoleCall) -> AIMessage:
    """use_tools when some request part has an on-topic API, else answer_directly (saying it cannot answer)."""
    parts = needs_tools(h, call.query)
    if parts:
        return tool_calls("", (USE_TOOLS, {"reason": "an API of the catalog fits " + "; ".join(
            repr(p) for p in parts[:3])}))
    return tool_calls("", (ANSWER_DIRECTLY, {"answer": NO_KNOWLEDGE}))


def outline_reply(h: Heuristics, call: RoleCall) -> AIMessage:
    """A plan: per request part, the most relevant pooled function not planned yet."""

    apis = catalog_functions(h, call.strings("functions"))
    by_id = {a.id: fn for fn, a in apis.items()}
    steps: list[dict[str, Any]] = []
    used: set[str] = set()
    for clause in split_clauses(call.query) or [call.query]:
        fits = [a for a in h.relevant(clause, apis.values(), h.relevance_ratio * h.solver_ratio)
                if by_id[a.id] not in used]
        if fits:
            fn = by_id[fits[0].id]
            used.add(fn)
            steps.append({"function": fn, "purpose": f"answer {clause!r}",
                          "arguments": extract_arguments(fits[0], clause)})
    return tool_calls("", (SUBMIT_PLAN, {"steps": steps}))


def user_answers(messages: Sequence[BaseMessage]) -> list[str]:
    """The user's answers to earlier `ask_user` calls ("no user" answers included)."""
    return [a for m in messages if isinstance(m, ToolMessage) and m.name == ASK_USER_NAME
            for a in _answer(message_text(m))]


def user_answers_in(history: Sequence[Mapping[str, Any]]) -> list[str]:
    """`user_answers` from a history of message dicts (`nodes/solver/tree.py: message_to_dict`)."""
    return [a for d in history if d.get("role") == "tool" and d.get("name") == ASK_USER_NAME
            for a in _answer(str(d.get("content") or ""))]


def _answer(content: str) -> list[str]:
    """The user's answer in an `ask_user` result (`{"user_answer": ...}`), as a list of at most one."""
    try:
        body = json.loads(content)
    except ValueError:
        return []
    return [body["user_answer"]] if isinstance(body, dict) and isinstance(body.get("user_answer"), str) else []


def with_answers(query: str, answers: Sequence[str]) -> str:
    """The request with the user's (real) answers appended, so argument extraction sees them."""
    real = [a for a in answers if a != NO_USER_ANSWER]
    return f"{query.rstrip(' ?.!')} {' '.join(real)}" if real else query


def missing_params(api: Api, clause: str) -> list[str]:
    """Required parameters of `api` that `clause` gives no value for (a documented default or the first of the
    choices would be a guess: the user is asked instead)."""
    given = extract(api, clause).given
    return [p.name for p in api.required_params if p.name not in given]


def question_for(api: Api, clause: str, missing: Sequence[str]) -> AIMessage:
    names = " and ".join(repr(m) for m in missing)
    return tool_calls(f"{api.name} needs {names}, which the request does not give.", (ASK_USER_NAME, {
        "question": f"To answer {clause!r} I need the {names} for {api.name}: what should I use?"}))
