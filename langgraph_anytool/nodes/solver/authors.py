"""The DFSDT solver's request as dyabel/AnyTool sends it, under `AnyToolConfig.paper(prompts_from=...)`.

The functions (anytool/rapidapi.py `rapidapi_wrapper.__init__`, lines 96-173): one per pooled API, built by
`api_json_to_openai_json` (lines 249-322), then the checkout's own `Finish` (`finish_func`, the `else` of
`if args.use_original_prompt`: AnyTool's default). An API's function, as there:
- name: `change_name(standardize(api_name)) + "_for_" + standard_tool_name`, its last 64 characters;
- description: the checkout's `templete["description"]` text with the tool's name; when the API's own description
  is not blank, the checkout's second text adds it: stripped, the API's name in it replaced by the function's name,
  its first 256 characters;
- parameters: `{"type": "object", "properties", "required", "optional"}`, each parameter named
  `change_name(standardize(name))`, typed by `map_type` (NUMBER → integer, STRING → string, BOOLEAN → boolean,
  any other spelling → string), its description's first 256 characters, and `example_value` when
  `len(str(default)) != 0` (a parameter without a default here: none).

The call (toolbench/inference/LLM/chatgpt_function_model.py `chat_completion_request` → openai_utils.py `call_gpt`):
`functions=` (legacy) with `max_tokens` 1024 (the solver role's limit), `frequency_penalty` 0, `presence_penalty` 0
and `seed=123`; the history in call_gpt's form (an assistant turn's `function_call` as the model sent it, each
result as `role: function` named by the function the model called). A reply's `function_call` is read as one of our
calls: the authors' function name → ours, their parameter names → ours; the raw call stays in `additional_kwargs`
and goes back as it came. Where a provider refuses `functions=`, the same functions go with `tools=` (usage
`functions_refused`), as the agents do (nodes/agents/wire.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, FunctionMessage, ToolMessage

from ...catalog.models import Api
from ...paper_prompts import PromptBook
from ...protocol import DIVERSITY, FINISH_NAME
from ...tools.executors.virtual import toolbench_standardize
from .tree import QUERY_LIMIT_NOTE, SEED_NOTE, last_chain, message_from_dict

if TYPE_CHECKING:
    from ...runtime import Deps

DESCRIPTION_CHARS = 256  # rapidapi.py api_json_to_openai_json: `description_max_length=256`
NAME_CHARS = 64  # `templete["name"] = templete["name"][-64:]`
MAP_TYPE: Mapping[str, str] = {"NUMBER": "integer", "STRING": "string", "BOOLEAN": "boolean"}  # `map_type`
# a parameter read from another source than a ToolBench document (no written type): our type, mapped alike
_OUR_TYPE = {"number": "integer", "integer": "integer", "boolean": "boolean"}
# chat_completion_request's body besides messages and functions (max_tokens 1024 is the solver role's own limit)
SETTINGS: Mapping[str, int] = {"frequency_penalty": 0, "presence_penalty": 0}
AUTHORS_SEED = 123  # openai_utils.py call_gpt: `client.chat.completions.create(seed=123, ...)`


def authors_name(text: str) -> str:
    """`change_name(standardize(text))` (toolbench/utils.py), as rapidapi.py names functions and parameters."""
    return toolbench_standardize(text)


def _param_type(written: str | None, ours: str) -> str:
    if written is not None:
        return MAP_TYPE.get(written, "string")
    return _OUR_TYPE.get(ours, "string")


def api_function(book: PromptBook, api: Api) -> tuple[dict[str, Any], dict[str, str]]:
    """`api_json_to_openai_json` of one API → (its function dict, {the authors' parameter name: ours})."""
    tool = api.tool_key  # the tool document's file name (`standard_tool_name`)
    name = f"{authors_name(api.name)}_for_{tool}"[-NAME_CHARS:]
    description = book.fill("solver_function", tool=tool)
    written = api.as_written
    if written.strip() != "":
        own = written.strip().replace(api.name, name)[:DESCRIPTION_CHARS]
        description = book.fill("solver_function_described", head=description, description=own)
    properties: dict[str, Any] = {}
    required: list[str] = []
    optional: list[str] = []
    names: dict[str, str] = {}
    for p in (*api.required_params, *api.optional_params):
        key = authors_name(p.name)
        names.setdefault(key, p.name)
        prop: dict[str, Any] = {"type": _param_type(p.written_type, p.type),
                                "description": p.description[:DESCRIPTION_CHARS]}
        if p.default is not None and len(str(p.default)) != 0:
            prop["example_value"] = p.default
        properties[key] = prop
        (required if p.required else optional).append(key)
    return ({"name": name, "description": description,
             "parameters": {"type": "object", "properties": properties, "required": required, "optional": optional}},
            names)


@dataclass(frozen=True)
class SolverFunctions:
    """What the solver offers under the authors' form: the function dicts (the pooled APIs, then Finish), and how a
    call to one is read back (the authors' function name → ours; per function, their parameter names → ours)."""

    functions: list[dict[str, Any]]
    ours: dict[str, str] = field(default_factory=dict)
    params: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def theirs(self) -> dict[str, str]:
        """Our function name → the authors'."""
        return {o: t for t, o in self.ours.items()}


def solver_functions(deps: Deps, book: PromptBook, offered: Mapping[str, str], *, finish: bool = True
                     ) -> SolverFunctions:
    """rapidapi_wrapper's `self.functions` for the pooled APIs `offered` (our function name → API id), in pool
    order, then the checkout's Finish (rapidapi.py lines 107-173); `finish=False`: Finish alone is left out."""
    functions: list[dict[str, Any]] = []
    ours: dict[str, str] = {}
    params: dict[str, dict[str, str]] = {}
    for our_name, api_id in offered.items():
        function, names = api_function(book, deps.catalog.api(api_id))
        functions.append(function)
        ours.setdefault(function["name"], our_name)  # step(): the first function whose name fits is called
        params.setdefault(our_name, names)
    if finish:
        functions.append(dict(book.data["solver_finish"]))
        ours[FINISH_NAME] = FINISH_NAME
    return SolverFunctions(functions, ours, params)


def read_reply(reply: AIMessage, offer: SolverFunctions) -> AIMessage:
    """A reply to the authors' functions as our calls: the legacy `function_call` (call_gpt lines 80-83; a
    dotted name's last part, as `ChatGPTFunction.parse` does) or tool calls (a `tools=` reply) under the authors'
    names, renamed to ours with our parameter names; the raw call stays in `additional_kwargs`."""
    raw = reply.additional_kwargs.get("function_call")
    if isinstance(raw, dict) and not reply.tool_calls:
        name = str(raw.get("name") or "").split(".")[-1]
        try:
            args = json.loads(str(raw.get("arguments") or "{}"), strict=False)
        except ValueError:
            return reply.model_copy(update={"invalid_tool_calls": [
                {"type": "invalid_tool_call", "name": offer.ours.get(name, name), "args": str(raw.get("arguments")),
                 "id": None, "error": "the function call's arguments are not JSON"}]})
        calls: list[dict[str, Any]] = [{"type": "tool_call", "name": name, "args": args, "id": None}]
    else:
        calls = [dict(tc) for tc in reply.tool_calls]
    if not calls:
        return reply
    for tc in calls:
        ours = offer.ours.get(str(tc.get("name")), str(tc.get("name")))
        names = offer.params.get(ours, {})
        if isinstance(tc.get("args"), dict):
            tc["args"] = {names.get(k, k): v for k, v in tc["args"].items()}
        tc["name"] = ours
    return reply.model_copy(update={"tool_calls": calls})


def wire_prompt(messages: Sequence[BaseMessage], offer: SolverFunctions, form: str) -> list[BaseMessage]:
    """`messages` as chat_completion_request → call_gpt send them: `functions` — an assistant turn's first call as
    `function_call` (the raw call as the model sent it, else ours under the authors' names and parameter names),
    each result as `role: function` named by that call; `tools` — the calls kept, under the authors' names."""
    theirs = offer.theirs
    named: dict[str, str] = {}
    out: list[BaseMessage] = []
    for m in messages:
        if isinstance(m, AIMessage) and (m.tool_calls or m.invalid_tool_calls):
            raw = m.additional_kwargs.get("function_call")
            first = [*m.tool_calls, *m.invalid_tool_calls][0]
            if isinstance(raw, dict):
                fc = {"name": str(raw.get("name") or ""), "arguments": str(raw.get("arguments") or "")}
            elif m.tool_calls:
                call = m.tool_calls[0]
                back = {o: t for t, o in offer.params.get(call["name"], {}).items()}
                fc = {"name": theirs.get(call["name"], call["name"]),
                      "arguments": json.dumps({back.get(k, k): v for k, v in call["args"].items()})}
            else:
                fc = {"name": theirs.get(str(first.get("name")), str(first.get("name") or "")),
                      "arguments": str(first.get("args") or "")}
            for tc in [*m.tool_calls, *m.invalid_tool_calls]:
                named[str(tc.get("id"))] = fc["name"] if tc is first else theirs.get(str(tc.get("name")),
                                                                                    str(tc.get("name") or ""))
            if form == "functions":
                out.append(AIMessage(content=m.content, additional_kwargs={"function_call": fc}))
            else:
                out.append(m.model_copy(update={
                    "additional_kwargs": {k: v for k, v in m.additional_kwargs.items() if k != "function_call"},
                    "tool_calls": [{**tc, "name": theirs.get(tc["name"], tc["name"])} for tc in m.tool_calls]}))
        elif isinstance(m, ToolMessage):
            name = named.get(str(m.tool_call_id), theirs.get(str(m.name or ""), str(m.name or "")))
            out.append(FunctionMessage(content=m.content, name=name) if form == "functions" else
                       m.model_copy(update={"name": name}))
        elif m.name is not None:  # our own marks (the diversity prompt, the notes): the authors' messages have none
            out.append(m.model_copy(update={"name": None}))
        else:
            out.append(m)
    return out


def raw_call(ai: AIMessage | None) -> dict[str, str] | None:
    """The legacy call a reply came with (`{"name", "arguments"}` as the model sent them), or None."""
    raw = ai.additional_kwargs.get("function_call") if ai is not None else None
    return {"name": str(raw.get("name") or ""), "arguments": str(raw.get("arguments") or "")} \
        if isinstance(raw, dict) else None


def seed_chain(tree: Sequence[Mapping[str, Any]], keep_functions: Iterable[str]) -> list[AnyMessage]:
    """The messages a solve seeded from the previous attempt starts from, as AnyTool builds them: scripts/main.py
    passes the previous solve's `train_messages[-1]` (DFS.py `to_json` → Tree.py `get_train_messages_from_this_node`
    of the node the solve ended on) to the next solve's `DFS_tree_search.start(messages=...)`, which replaces the
    system message and keeps the query (our prompt builds both afresh). On the path root → the attempt's last node:
    - the messages after the last assistant message go (Tree.py: `while use_messages[-1]["role"] != "assistant"`),
      then that assistant message, the decisive Finish call (DFS.py `start`: `messages.pop()`); every other call
      stays, a rejected Finish call with its answer included;
    - a function's answer whose function is no longer offered (`keep_functions`: our names, Finish included) goes
      with the message before it, its call (DFS.py `start`: `messages.pop(i)`, `messages.pop(i-1)`);
    - the query-limit note goes (DFS.py `start`: a user message with 'maximum query count');
    - the diversity prompt is never sent (marked `valid: False`; chat_completion_request drops it), nor are our own
      seed notes; no note is added (DFS.py `start` adds none).
    The node the chain ends on (DFS.py `to_json`): the answer or give-up (`terminal_node`, Finish status 3), else a
    node that gave up and restarted (`give_up_node`, status 4: theirs one at random, ours the last); none: no seed
    (`train_messages` is missing, main.py's `except: messages = None`)."""
    ends = {k: [int(n["id"]) for n in tree if any(c.get("status") == f"finish:{k}" for c in n.get("calls") or [])]
            for k in ("give_answer", "give_up", "give_up_and_restart")}
    end = max(ends["give_answer"] + ends["give_up"], default=None)
    if end is None:
        end = max(ends["give_up_and_restart"], default=None)
    if end is None:
        return []
    dicts = [m for node in last_chain(tree, end) for m in node.get("messages") or []]
    while dicts and dicts[-1].get("role") != "assistant":
        dicts.pop()
    dicts = dicts[:-1]
    keep = set(keep_functions)
    called: dict[str, str] = {str(tc.get("id")): str(tc.get("name"))
                              for d in dicts for tc in [*(d.get("tool_calls") or []), *(d.get("invalid_tool_calls") or [])]}
    live = list(dicts)
    for i, d in reversed(list(enumerate(dicts))):  # as DFS.py `start`: the snapshot read from the end, the live
        if d.get("role") == "tool" and called.get(str(d.get("tool_call_id")), str(d.get("name"))) not in keep:
            del live[max(i - 1, 0):i + 1]  # list cut at the snapshot's index (the call is the message before)
        elif d.get("role") == "user" and d.get("name") in (DIVERSITY, SEED_NOTE, QUERY_LIMIT_NOTE):
            del live[i:i + 1]
    return [message_from_dict(d) for d in live]
