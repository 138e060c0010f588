"""The fall-back policy of a call without role metadata (someone invoked the model directly): a generic
tool-calling assistant for the last human message over the bound tools. Catalog functions keep their catalog
documentation; other tools are read from their JSON schema. With no tool bound it can only say what it is.

A bound tool whose one parameter is a whole request (`request`, `query`, `question`, `task`, `instruction`,
`prompt`: another agent, such as `create_anytool_tool`) is a delegate: when none of the other bound tools fits the
request, it gets the whole last human message, not the fragment that matches its description best, and its answer
is the reply; a request one of the other tools fits (the weather, given `get_weather`) goes to that tool."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from ..catalog import Api, Param
from ..catalog.errors import UnknownNameError
from ..protocol import FINISH_NAME
from ..text import shorten
from .call import RoleCall
from .relevance import Heuristics
from .solving import Answer, CallApi, decide, finish_call
from .text import message_text
from .trajectory import steps_from_messages, tool_calls

BOUND_PREFIX = "bound-tool/"  # the id prefix of an API read from a bound tool's schema (not in the catalog)
DELEGATE_PARAMS = frozenset({"request", "query", "question", "task", "instruction", "prompt"})
_JSON_TYPES = {"integer": "integer", "number": "number", "boolean": "boolean", "array": "array"}


def api_from_schema(schema: Mapping[str, Any]) -> Api:
    """An `Api` for a bound tool's OpenAI function schema (`{"name", "description", "parameters"}`)."""
    name = str(schema.get("name") or "tool")
    props = (schema.get("parameters") or {}).get("properties") or {}
    required = set((schema.get("parameters") or {}).get("required") or [])
    params = []
    for pname, spec in props.items():
        spec = spec if isinstance(spec, Mapping) else {}
        kind = _JSON_TYPES.get(str(spec.get("type")), "string")
        if spec.get("format") == "date":
            kind = "date"
        params.append(Param(str(pname), kind, str(spec.get("description") or ""), pname in required,
                            spec.get("default"), tuple(spec.get("enum") or ())))
    return Api(id=f"{BOUND_PREFIX}{name}", name=name, tool_key=name, tool_name=name, category="bound tools",
               description=str(schema.get("description") or ""), params=tuple(params))


def bound_apis(h: Heuristics, schemas: Sequence[Mapping[str, Any]]) -> dict[str, Api]:
    """function name → API for every bound tool but `Finish` (catalog functions as the catalog documents them)."""
    out: dict[str, Api] = {}
    for schema in schemas:
        name = str(schema.get("name") or "")
        if not name or name == FINISH_NAME:
            continue
        try:
            out[name] = h.catalog.api_for_function(name)
        except UnknownNameError:
            out[name] = api_from_schema(schema)
    return out


def delegate_tool(apis: Mapping[str, Api]) -> tuple[str, str] | None:
    """(function, parameter) of the one bound tool that takes a whole request: not a catalog API, and its only
    parameter is a string named in `DELEGATE_PARAMS`. None when no tool, or more than one, is like that."""
    found = [(fn, api.params[0].name) for fn, api in apis.items()
             if api.id.startswith(BOUND_PREFIX) and len(api.params) == 1 and api.params[0].type == "string"
             and api.params[0].name.lower() in DELEGATE_PARAMS]
    return found[0] if len(found) == 1 else None


def delegate_answer(messages: Sequence[BaseMessage], function: str) -> str | None:
    """The delegate's answer to the last human message: the text of its last tool message after that message
    (its `answer` field when the content is a JSON object holding one); None when it has not answered yet."""
    start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    replies = [m for m in messages[start + 1:] if isinstance(m, ToolMessage) and m.name == function]
    if not replies:
        return None
    text = message_text(replies[-1]).strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text
    answer = data.get("answer") if isinstance(data, dict) else None
    return answer.strip() if isinstance(answer, str) and answer.strip() else text


def generic_reply(h: Heuristics, call: RoleCall, schemas: Sequence[Mapping[str, Any]], label: str) -> AIMessage:
    """Call the bound tool that fits the next unanswered part of the last human message; once every part is
    answered (or none can be), answer in text — through `Finish` when that tool is bound."""
    query = call.query
    if not schemas:
        return AIMessage(content=f"[{label}] I play the AnyTool graph's roles (given as call metadata) or call "
                                 "bound tools; this call has neither, so I have nothing to do for: " + repr(shorten(query, 200)))
    apis = bound_apis(h, schemas)
    steps = steps_from_messages(call.messages, plain_ok=True)
    delegate = delegate_tool(apis)
    if delegate is not None and query:
        function, param = delegate
        answer = delegate_answer(call.messages, function)
        if answer is not None:
            if FINISH_NAME in call.tools:
                return finish_call(Answer(answer, []))
            return AIMessage(content=answer)
        # the delegate is one tool among the ones given: a tool of the caller's own that fits the request (or has
        # answered it) comes first; the delegate takes the requests none of them fits
        apis = {fn: api for fn, api in apis.items() if fn != function}
        decision = decide(h, query, apis, steps, relative_to_given=True) if apis else None
        if not isinstance(decision, CallApi | Answer):
            return tool_calls(f"I pass the whole request to {function}.", (function, {param: query}))
    else:
        decision = decide(h, query, apis, steps, relative_to_given=True)
    if isinstance(decision, CallApi):
        return tool_calls(f"For {decision.clause!r} I call {decision.function}.", (decision.function, decision.args))
    if FINISH_NAME in call.tools:
        return finish_call(decision)
    return AIMessage(content=decision.text if isinstance(decision, Answer) else decision.reason)
