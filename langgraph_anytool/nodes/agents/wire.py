"""The authors' wire form of a retriever agent's request under `paper(prompts_from=...)`.

dyabel/AnyTool scripts/main.py sends every agent turn through `call_gpt(messages=self.messages,
functions=self.functions)` (main.py lines 148-151, 264-267, 583-586, 770-773), and openai_utils.py `call_gpt`
(lines 41-61) turns the history into the legacy form before `client.chat.completions.create(seed=123,
messages=..., functions=...)`: an assistant turn's `tool_calls` becomes `function_call` = its first call's
`function` (name, raw arguments string), a tool result (`tool_call_id`) becomes `role: function` (keeping `name`).
A reply's `function_call` is read back as one call (lines 80-83).

The functions offered are the authors' dicts, read from the checkout (`PromptBook.data`): main.py
`finish_function` ("Finish", line 885), `create_agent_category_level_function` (855), `create_agent_tool_level_function`
(867); anytool/api_database_function.py `get_tools_in_category_function` (204), `get_tools_descriptions_function`
(217), `check_if_request_solvable_function` (245), `add_apis_into_api_pool_function` (254). Their calls are read
into our functions (`finish_search` for Finish; argument names as ours, keys ours lack dropped), so the graph's
messages stay `AIMessage.tool_calls` + `ToolMessage`: only the request on the wire changes. The raw legacy call is
kept in the reply's `additional_kwargs` and sent back as it came.

Where the provider refuses `functions=` (a 400 naming it, `judge.tooleval_request.refuses_functions`), the same
functions are sent with `tools=` and the history in the tools form, and so is every later call of the role in the
run (`RunSignals.functions_refusal`; usage `functions_refused` counts the refusal once). A client that is
not OpenAI-compatible (`speaks_functions`), a text-mode or constrained role keeps today's request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, FunctionMessage, ToolMessage

# our function name → (the book's literal key, the authors' function name)
AUTHORS_FUNCTIONS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "finish_search": ("agent_finish", "Finish"),
    "get_tools_in_category": ("agent_get_tools_in_category", "get_tools_in_category"),
    "get_tools_descriptions": ("agent_get_tools_descriptions", "get_tools_descriptions"),
    "create_agent_category_level": ("agent_create_agent_category_level", "create_agent_category_level"),
    "create_agent_tool_level": ("agent_create_agent_tool_level", "create_agent_tool_level"),
    "check_if_request_solvable": ("agent_check_if_request_solvable", "check_if_request_solvable"),
    "add_apis_into_api_pool": ("agent_add_apis_into_api_pool", "add_apis_into_api_pool"),
})
# the authors' argument names → ours (api_database_function.py / main.py schemas vs tools/agent_functions.py)
_ARG_NAMES: Mapping[str, Mapping[str, str]] = MappingProxyType({
    "get_tools_descriptions": {"tool_list": "tool_names"},
    "create_agent_category_level": {"category": "category_name"},
    "create_agent_tool_level": {"tools": "tool_names"},
    "add_apis_into_api_pool": {"api_list": "apis"},
})
_OURS = {authors: ours for ours, (_, authors) in AUTHORS_FUNCTIONS.items()}

WireForm = Literal["functions", "tools"]


def authors_functions(data: Mapping[str, Any], offered: Sequence[str]) -> list[dict[str, Any]] | None:
    """The authors' function dicts for our `offered` names, in order; None when the book lacks one."""
    keys = [AUTHORS_FUNCTIONS[n][0] for n in offered if n in AUTHORS_FUNCTIONS]
    if len(keys) != len(offered) or any(k not in data for k in keys):
        return None
    return [dict(data[k]) for k in keys]


def _authors_name(ours: str) -> str:
    return AUTHORS_FUNCTIONS[ours][1] if ours in AUTHORS_FUNCTIONS else ours


def _our_args(ours: str, args: Any, fields: Mapping[str, Sequence[str]]) -> Any:
    """The authors' arguments under our names; keys our model lacks dropped (e.g. `category` of
    create_agent_tool_level: a category agent's tools are its own category's)."""
    if not isinstance(args, dict):
        return args
    renamed = {_ARG_NAMES.get(ours, {}).get(k, k): v for k, v in args.items()}
    known = fields.get(ours)
    if known is None:
        return renamed
    kept = {k: v for k, v in renamed.items() if k in known}
    if ours == "add_apis_into_api_pool" and isinstance(kept.get("apis"), list):  # items: tool_name, api_name
        kept["apis"] = [{k: v for k, v in a.items() if k != "category_name"} if isinstance(a, dict) else a
                        for a in kept["apis"]]
    return kept


def read_reply(reply: AIMessage, fields: Mapping[str, Sequence[str]]) -> AIMessage:
    """A reply to the authors' functions as our calls: the legacy `function_call` (call_gpt lines 80-83) or tool
    calls with the authors' names, renamed to ours; the raw call stays in `additional_kwargs`."""
    raw = reply.additional_kwargs.get("function_call")
    calls: list[dict[str, Any]] = []
    if isinstance(raw, dict) and not reply.tool_calls:
        try:
            args = json.loads(str(raw.get("arguments") or "{}"))
        except ValueError:
            return reply.model_copy(update={"invalid_tool_calls": [
                {"type": "invalid_tool_call", "name": str(raw.get("name") or ""), "args": str(raw.get("arguments")),
                 "id": None, "error": "the function call's arguments are not JSON"}]})
        calls = [{"type": "tool_call", "name": str(raw.get("name") or ""), "args": args, "id": None}]
    else:
        calls = [dict(tc) for tc in reply.tool_calls]
    if not calls:
        return reply
    for tc in calls:
        ours = _OURS.get(str(tc.get("name")), str(tc.get("name")))
        tc["args"] = _our_args(ours, tc.get("args"), fields)
        tc["name"] = ours
    return reply.model_copy(update={"tool_calls": calls})


def wire_prompt(messages: Sequence[BaseMessage], form: WireForm) -> list[BaseMessage]:
    """`messages` as call_gpt sends them: `functions` — an assistant turn's first call as `function_call` (its raw
    legacy call when it came so), a tool result as `role: function` with the call's authors' name; `tools` — the
    calls and results kept, under the authors' names."""
    names: dict[str, str] = {}
    out: list[BaseMessage] = []
    for m in messages:
        if isinstance(m, AIMessage) and (m.tool_calls or m.invalid_tool_calls):
            for tc in [*m.tool_calls, *m.invalid_tool_calls]:
                names[str(tc.get("id"))] = _authors_name(str(tc.get("name") or ""))
            raw = m.additional_kwargs.get("function_call")
            if form == "functions":
                if isinstance(raw, dict):
                    fc = dict(raw)
                elif m.tool_calls:
                    fc = {"name": _authors_name(m.tool_calls[0]["name"]), "arguments": json.dumps(m.tool_calls[0]["args"])}
                else:
                    bad = m.invalid_tool_calls[0]
                    fc = {"name": _authors_name(str(bad.get("name") or "")), "arguments": str(bad.get("args") or "")}
                out.append(AIMessage(content=m.content, additional_kwargs={"function_call": fc}))
            else:
                out.append(m.model_copy(update={
                    "additional_kwargs": {k: v for k, v in m.additional_kwargs.items() if k != "function_call"},
                    "tool_calls": [{**tc, "name": _authors_name(tc["name"])} for tc in m.tool_calls],
                    "invalid_tool_calls": [{**tc, "name": _authors_name(str(tc.get("name") or ""))}
                                           for tc in m.invalid_tool_calls]}))
        elif isinstance(m, ToolMessage):
            name = names.get(str(m.tool_call_id), str(m.name or ""))
            out.append(FunctionMessage(content=m.content, name=name) if form == "functions" else
                       m.model_copy(update={"name": name}))
        else:
            out.append(m)
    return out
