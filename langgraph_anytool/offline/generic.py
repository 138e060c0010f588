"""The fall-back policy of a call without role metadata (someone invoked the model directly): a generic
tool-calling assistant for the last human message over the bound tools. Catalog functions keep their catalog
documentation; other tools are read from their JSON schema. With no tool bound it can only say what it is."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage

from ..catalog import Api, Param
from ..catalog.errors import UnknownNameError
from ..nodes.solver.finish import FINISH_NAME
from .call import RoleCall
from .relevance import Heuristics
from .solving import Answer, CallApi, decide, finish_call
from .trajectory import steps_from_messages, tool_calls

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
    return Api(id=f"bound-tool/{name}", name=name, tool_key=name, tool_name=name, category="bound tools",
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


def generic_reply(h: Heuristics, call: RoleCall, schemas: Sequence[Mapping[str, Any]], label: str) -> AIMessage:
    """Call the bound tool that fits the next unanswered part of the last human message; once every part is
    answered (or none can be), answer in text — through `Finish` when that tool is bound."""
    query = call.query
    if not schemas:
        return AIMessage(content=f"[{label}] I play the AnyTool graph's roles (given as call metadata) or call "
                                 "bound tools; this call has neither, so I have nothing to do for: " + repr(query[:200]))
    apis = bound_apis(h, schemas)
    decision = decide(h, query, apis, steps_from_messages(call.messages, plain_ok=True), relative_to_given=True)
    if isinstance(decision, CallApi):
        return tool_calls(f"For {decision.clause!r} I call {decision.function}.", (decision.function, decision.args))
    if FINISH_NAME in call.tools:
        return finish_call(decision)
    return AIMessage(content=decision.text if isinstance(decision, Answer) else decision.reason)
