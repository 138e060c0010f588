"""The model under test in the OPPO tasks (seed 001, §3.3): one small entry point per ability.

`paper=True` (the default protocol) follows the authors' `eval_scripts/agent_interface.py` (`perform_task1` …
`perform_task8`): the user's instruction is the only message (no system prompt) and the functions offered are the
API documents as the authors convert them (`convert_doc_to_openai_format`: the API's own name, its description,
its parameters with JSON-schema types). `paper=False` (`--protocol ours`) adds our system prompts and names the
functions as the rest of the project does (`<api>_for_<tool>`); task 3 may then also offer `ask_user`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig

from ...catalog import Catalog
from ...catalog.models import Api
from ...catalog.naming import is_valid_function_name
from ...models.llm import call_role
from ...paper_prompts import PromptBook
from ...tools.lc import api_json_schema
from ...tools.pipeline import ApiExecutor
from . import prompts as P

ASK_USER = "ask_user"
ASK_USER_SCHEMA: dict[str, Any] = {
    "name": ASK_USER, "description": P.ASK_USER_DESCRIPTION,
    "parameters": {"type": "object", "properties": {"question": {"type": "string",
                                                                 "description": "the question for the user"}},
                   "required": ["question"]},
}
_JSON_TYPE = {"date": "string", "time": "string", "binary": "string", "enum": "string"}


def _text(msg: BaseMessage) -> str:
    if isinstance(msg.content, str):
        return msg.content
    return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in msg.content if isinstance(b, str | dict))


def authors_schema(api: Api, name: str) -> dict[str, Any]:
    """An API as the authors offer it (`agent_interface.py` `convert_doc_to_openai_format`): name, description and
    parameters with JSON-schema types (the OPPO toolset loader already converted the upper-case spellings)."""
    props: dict[str, Any] = {}
    for p in api.params:
        spec: dict[str, Any] = {"type": _JSON_TYPE.get(p.type, p.type), "description": p.description}
        if p.enum:
            spec["enum"] = list(p.enum)
        props[p.name] = spec
    return {"name": name, "description": api.description,
            "parameters": {"type": "object", "properties": props, "required": [p.name for p in api.required_params]}}


@dataclass(frozen=True)
class Offer:
    """The functions offered for one item: function name → API id, and the OpenAI tool objects."""

    names: dict[str, str]
    schemas: list[dict[str, Any]]

    def name_of(self, api_id: str) -> str:
        return next(n for n, a in self.names.items() if a == api_id)

    def api_of(self, name: str) -> str | None:
        return self.names.get(name)


def make_offer(catalog: Catalog, api_ids: Sequence[str], *, paper: bool) -> Offer:
    """Paper: each API under its own name (the OPPO docs' function name) when that is a valid, not yet used function
    name, else under the catalog's function name; ours: the catalog's function names and descriptions."""
    names: dict[str, str] = {}
    schemas: list[dict[str, Any]] = []
    for api_id in dict.fromkeys(api_ids):
        api = catalog.api(api_id)
        if paper:
            name = api.name if is_valid_function_name(api.name) and api.name not in names else \
                catalog.function_name(api_id)
            schema = authors_schema(api, name)
        else:
            schema = api_json_schema(catalog, api_id)
            name = schema["name"]
        names[name] = api_id
        schemas.append({"type": "function", "function": schema})
    return Offer(names, schemas)


def _call(model: Any, role: str, prompt: list[BaseMessage], config: RunnableConfig | None, **inputs: Any) -> AIMessage:
    ai, _ = call_role(model, role, prompt, config, inputs=inputs)
    return ai


def _prompt(task: int, paper: bool, *messages: BaseMessage) -> list[BaseMessage]:
    return list(messages) if paper else [SystemMessage(content=P.SYSTEMS[task]), *messages]


@dataclass(frozen=True)
class RawCall:
    """A function call exactly as the model wrote it: `parsed` is False when its arguments were not valid JSON
    (the authors' `json.loads` fails; `args` is then the raw text)."""

    function: str
    args: Any
    api_id: str | None  # None: not a function offered
    parsed: bool = True
    call_id: str = ""


def _authors_call(offer: Offer, fn: Mapping[str, Any], call_id: str) -> RawCall:
    """A raw call read as the authors read it (`eval_func.py` `_extract_func_calls`): an arguments string goes through
    Python's `json.loads`, so "" or a raw control character inside a string is not JSON."""
    name = str(fn.get("name") or "")
    text = fn.get("arguments")
    if isinstance(text, str):
        try:
            args, parsed = json.loads(text), True
        except ValueError:
            args, parsed = text, False
    else:
        args, parsed = text, True
    return RawCall(name, args, offer.api_of(name), parsed, call_id)


def raw_calls(offer: Offer, ai: AIMessage) -> list[RawCall]:
    """The reply's calls, as `_extract_func_calls` collects them: a legacy `function_call` first (LangChain keeps it
    in `additional_kwargs` and does not turn it into a tool call), then the tool calls — the provider's raw ones
    when the message kept them, else LangChain's parsed and invalid calls. (LangChain reads an empty arguments string
    as {}, which the authors' `json.loads("")` would refuse; a client that drops the raw text cannot tell them apart.)"""
    out: list[RawCall] = []
    legacy = ai.additional_kwargs.get("function_call")
    if isinstance(legacy, Mapping):
        out.append(_authors_call(offer, legacy, "function_call"))
    provider = [tc for tc in ai.additional_kwargs.get("tool_calls") or []
                if isinstance(tc, Mapping) and isinstance(tc.get("function"), Mapping)]
    if provider:
        return out + [_authors_call(offer, tc["function"], str(tc.get("id") or "")) for tc in provider]
    out += [RawCall(str(tc.get("name") or ""), tc.get("args"), offer.api_of(str(tc.get("name") or "")), True,
                    str(tc.get("id") or "")) for tc in ai.tool_calls]
    out += [RawCall(str(tc.get("name") or ""), tc.get("args"), offer.api_of(str(tc.get("name") or "")), False,
                    str(tc.get("id") or "")) for tc in ai.invalid_tool_calls]
    return out


def openai_message(msg: BaseMessage) -> dict[str, Any]:
    """A LangChain message as an OpenAI chat message (what the evaluator of task 7 reads)."""
    if isinstance(msg, AIMessage):
        out: dict[str, Any] = {"role": "assistant", "content": _text(msg) or None}
        calls: list[dict[str, Any]] = [{"id": tc.get("id"), "type": "function",
                  "function": {"name": tc["name"], "arguments": json.dumps(tc["args"], ensure_ascii=False)}}
                 for tc in msg.tool_calls]
        calls += [{"id": tc.get("id"), "type": "function",
                   "function": {"name": tc.get("name"), "arguments": tc.get("args")}} for tc in msg.invalid_tool_calls]
        if calls:
            out["tool_calls"] = calls
        return out
    if isinstance(msg, ToolMessage):
        return {"role": "tool", "name": msg.name, "content": _text(msg), "tool_call_id": msg.tool_call_id}
    role = {"human": "user", "system": "system"}.get(msg.type, msg.type)
    return {"role": role, "content": _text(msg)}


def openai_to_messages(conv: Sequence[Mapping[str, Any]]) -> list[BaseMessage]:
    """OpenAI chat messages (as in the release's task 6 `conv`, with `function_call`, `refusal`, `index` keys and
    null contents) as LangChain messages, tool calls and tool results kept."""
    out: list[BaseMessage] = []
    for i, m in enumerate(conv):
        role = m.get("role")
        content = m.get("content")
        text = content if isinstance(content, str) else ("" if content is None else json.dumps(content))
        if role == "system":
            out.append(SystemMessage(content=text))
        elif role == "user":
            out.append(HumanMessage(content=text))
        elif role == "assistant":
            calls, invalid = [], []
            raw = list(m.get("tool_calls") or [])
            if isinstance(m.get("function_call"), Mapping):
                raw.append({"id": f"fc_{i}", "function": m["function_call"]})
            for j, tc in enumerate(raw):
                fn = tc.get("function") or {}
                args = fn.get("arguments")
                try:
                    parsed = json.loads(args) if isinstance(args, str) else (args or {})
                except ValueError:
                    parsed = None
                call_id = str(tc.get("id") or f"call_{i}_{j}")
                if isinstance(parsed, dict):
                    calls.append({"name": str(fn.get("name") or ""), "args": parsed, "id": call_id,
                                  "type": "tool_call"})
                else:
                    invalid.append({"name": fn.get("name"), "args": args if isinstance(args, str) else None,
                                    "id": call_id, "error": "arguments are not a JSON object",
                                    "type": "invalid_tool_call"})
            out.append(AIMessage(content=text, tool_calls=calls, invalid_tool_calls=invalid))
        elif role in ("tool", "function"):
            out.append(ToolMessage(content=text, tool_call_id=str(m.get("tool_call_id") or ""),
                                   name=m.get("name")))
        else:
            raise ValueError(f"message {i}: unknown role {role!r}")
    return out


# --------------------------------------------------------------------------------------------- tasks 1-3
@dataclass(frozen=True)
class FirstReply:
    """The model's first reply to an instruction with some functions offered."""

    offer: Offer
    reply: AIMessage
    calls: list[RawCall]

    @property
    def called(self) -> bool:
        """The authors' `_check_tool_use_decision`: the reply carries a function call."""
        return bool(self.calls)

    @property
    def text(self) -> str:
        return _text(self.reply).strip()


def first_reply(model: BaseChatModel, catalog: Catalog, task: int, instruction: str, api_ids: Sequence[str], *,
                paper: bool = True, ask_user: bool = False, config: RunnableConfig | None = None) -> FirstReply:
    """Tasks 1-3 (`perform_task1`, `perform_task2`, `perform_task3`): one reply with the functions offered, in the
    given order; `ask_user` (ours, task 3) also offers the `ask_user` function."""
    offer = make_offer(catalog, api_ids, paper=paper)
    tools = [*offer.schemas, *([{"type": "function", "function": ASK_USER_SCHEMA}] if ask_user else [])]
    ai = _call(model.bind_tools(tools), f"oppo_task{task}", _prompt(task, paper, HumanMessage(content=instruction)),
               config, query=instruction, functions=[t["function"]["name"] for t in tools])
    return FirstReply(offer, ai, raw_calls(offer, ai))


# --------------------------------------------------------------------------------------------- task 4
@dataclass(frozen=True)
class FillResult:
    offer: Offer
    call: RawCall | None  # the first call (None: no call)
    tool_result: str | None  # what the API returned for it (None: not executed)


def fill_parameters(model: BaseChatModel, catalog: Catalog, instruction: str, api_id: str,
                    executor: ApiExecutor | None, *, paper: bool = True,
                    config: RunnableConfig | None = None) -> FillResult:
    """Task 4 (`perform_task4`): the model's first call to the one API offered, executed with the row's API when its
    arguments parsed (the authors' rule check reads the API's result)."""
    first = first_reply(model, catalog, 4, instruction, [api_id], paper=paper, config=config)
    if not first.calls:
        return FillResult(first.offer, None, None)
    call = first.calls[0]
    result = None
    if call.parsed and executor is not None:
        result = executor.render(executor.call(api_id, call.args if isinstance(call.args, dict) else {}))
    return FillResult(first.offer, call, result)


# --------------------------------------------------------------------------------------------- task 5
def answer_directly(model: BaseChatModel, instruction: str, *, paper: bool = True,
                    config: RunnableConfig | None = None) -> str:
    """Task 5 (`perform_task5`): an answer from the model's own knowledge (no function offered)."""
    ai = _call(model, "oppo_task5", _prompt(5, paper, HumanMessage(content=instruction)), config, query=instruction)
    return _text(ai).strip()


# --------------------------------------------------------------------------------------------- task 6
def answer_from_conversation(model: BaseChatModel, catalog: Catalog, conv: Sequence[Mapping[str, Any]], *,
                             paper: bool = True, config: RunnableConfig | None = None) -> str:
    """Task 6 (`perform_task6`): the assistant's next reply to the conversation (which ends with a tool result).
    Paper: the conversation alone, no function offered; ours: our system prompt and the called functions."""
    messages = openai_to_messages(conv)
    query = next((_text(m) for m in messages if isinstance(m, HumanMessage)), "")
    names = [str(tc["name"]) for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls]
    bound: Any = model
    if not paper:
        ids = [a.id for a in catalog if catalog.function_name(a.id) in names or a.name in names]
        if ids:
            bound = model.bind_tools(make_offer(catalog, ids, paper=False).schemas)
    ai = _call(bound, "oppo_task6", _prompt(6, paper, *messages), config, query=query, functions=names)
    return _text(ai).strip()


# --------------------------------------------------------------------------------------------- task 8
@dataclass(frozen=True)
class PlanResult:
    task_text: str  # the request as the model saw it (the evaluator's "Task")
    outline: str


def plan_outline(model: BaseChatModel, catalog: Catalog, instruction: str, api_ids: Sequence[str], *,
                 paper: bool = True, config: RunnableConfig | None = None,
                 book: PromptBook | None = None) -> PlanResult:
    """Task 8 (`perform_task8`): a plan for a high-level request with the tools' documents in the message; nothing
    is called."""
    offer = make_offer(catalog, api_ids, paper=paper)
    text = P.plan_request(instruction, [s["function"] for s in offer.schemas], book)
    ai = _call(model, "oppo_task8", _prompt(8, paper, HumanMessage(content=text)), config, query=instruction,
               functions=list(offer.names))
    return PlanResult(text, _text(ai).strip())


# --------------------------------------------------------------------------------------------- task 7
@dataclass(frozen=True)
class ChainStep:
    function: str
    api_id: str | None
    args: Any
    ok: bool
    api_name: str = ""  # the API's own name (what the reference steps use); the function name when unknown


@dataclass(frozen=True)
class ChainResult:
    steps: list[ChainStep]
    answer: str
    messages: list[dict[str, Any]] = field(default_factory=list)  # the conversation, OpenAI format
    stopped: str = ""  # why the loop ended without an answer
    aborted: str = ""  # paper: the item failed as the authors' run does (unknown function, arguments not JSON)


def solve_chain(model: BaseChatModel, catalog: Catalog, executor: ApiExecutor, instruction: str,
                api_ids: Sequence[str], *, paper: bool = True, max_rounds: int = 10,
                config: RunnableConfig | None = None) -> ChainResult:
    """Task 7 (`perform_task7`): a function-calling loop over the main API and its dependencies (in that order), at
    most `max_rounds` model replies (the authors' 10); every call is executed. Paper: a call to a function not
    offered, or with arguments that are not JSON, ends the item (the authors' loop raises and the row scores 0);
    ours: the model is told and may go on."""
    offer = make_offer(catalog, api_ids, paper=paper)
    runnable = model.bind_tools(offer.schemas)
    messages: list[BaseMessage] = _prompt(7, paper, HumanMessage(content=instruction))
    steps: list[ChainStep] = []
    for turn in range(max_rounds):
        ai = _call(runnable, "oppo_task7", messages, config, query=instruction, functions=list(offer.names), turn=turn)
        if not ai.tool_calls and not ai.invalid_tool_calls:
            messages.append(ai)
            return ChainResult(steps, _text(ai).strip(), [openai_message(m) for m in messages])
        ai = ai.model_copy(update={
            "tool_calls": [{**tc, "id": tc.get("id") or f"c{turn}_{i}"} for i, tc in enumerate(ai.tool_calls)],
            "invalid_tool_calls": [{**tc, "id": tc.get("id") or f"b{turn}_{i}"}
                                   for i, tc in enumerate(ai.invalid_tool_calls)]})
        messages.append(ai)
        for call in raw_calls(offer, ai):
            if call.call_id == "function_call":  # perform_task7 reads msg.tool_calls only
                continue
            if paper and call.api_id is None:
                return ChainResult(steps, "", [openai_message(m) for m in messages],
                                   aborted=f"invalid function name {call.function!r}")
            if paper and not call.parsed:
                return ChainResult(steps, "", [openai_message(m) for m in messages],
                                   aborted=f"arguments of {call.function!r} are not JSON")
            if call.api_id is None:
                content, ok, name = json.dumps({"error": f"function {call.function!r} is not available"}), False, \
                    call.function
            elif not call.parsed:
                content, ok, name = json.dumps({"error": "the arguments are not a JSON object"}), False, \
                    catalog.api(call.api_id).name
            else:
                obs = executor.call(call.api_id, call.args)
                content, ok, name = executor.render(obs), obs.ok, catalog.api(call.api_id).name
            steps.append(ChainStep(call.function, call.api_id, call.args, ok, name))
            messages.append(ToolMessage(content=content, tool_call_id=call.call_id, name=call.function))
    return ChainResult(steps, "", [openai_message(m) for m in messages],
                       stopped=f"no answer after {max_rounds} model replies")
