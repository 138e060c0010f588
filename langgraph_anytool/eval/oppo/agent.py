"""The model under test in the OPPO tasks (the OPPO paper's §3.3): one small entry point per ability.

`paper=True` (the default protocol) sends what the authors' `eval_scripts/agent_interface.py` sends (`perform_task1`
… `perform_task8`), through `wire` (a ChatOpenAI-family model gets the exact message dicts, and its replies are read
raw): the user's instruction is the only message (no system prompt); the functions offered are the API documents
as the authors convert them (`convert_doc_to_openai_format`), under the API's own name, duplicates and all; tasks
1-3 offer them through the legacy `functions=` parameter (`functions_api`), task 4 and 7 through `tools=`, task 7
with `parallel_tool_calls=False`; a tool result is shown as `str()` of the toolset's dict.

`paper=False` (`--protocol ours`) adds our system prompts and names the functions as the rest of the project does
(`<api>_for_<tool>`); task 3 may then also offer `ask_user`.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig

from ...catalog import Catalog
from ...catalog.models import Api
from ...catalog.naming import is_valid_function_name
from ...models.llm import ModelCallError, call_role
from ...nodes.judge.tooleval_request import refuses_functions
from ...paper_prompts import PromptBook
from ...tools.lc import api_json_schema
from ...tools.pipeline import ApiExecutor
from . import prompts as P
from . import wire

ASK_USER = "ask_user"
ASK_USER_SCHEMA: dict[str, Any] = {
    "name": ASK_USER, "description": P.ASK_USER_DESCRIPTION,
    "parameters": {"type": "object", "properties": {"question": {"type": "string",
                                                                 "description": "the question for the user"}},
                   "required": ["question"]},
}
FUNCTIONS_APIS = ("auto", "functions", "tools")  # how tasks 1-3 offer functions in the paper protocol
_JSON_TYPE = {"date": "string", "time": "string", "binary": "string", "enum": "string"}
# `convert_doc_to_openai_format`: the types kept as they are (lower-cased); "int" → integer, the rest → string
_AUTHORS_TYPES = ("string", "number", "integer", "object", "array", "boolean", "null")


def _text(msg: BaseMessage) -> str:
    if isinstance(msg.content, str):
        return msg.content
    return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in msg.content if isinstance(b, str | dict))


# --------------------------------------------------------------------------------------------- the offer
def authors_schema(api: Api, name: str) -> dict[str, Any]:
    """An API as the authors offer it (`agent_interface.py` `convert_doc_to_openai_format`), rebuilt from the
    catalog: name, description and parameters with JSON-schema types (the OPPO toolset loader already converted the
    upper-case spellings). `authors_doc` gives the release's own document instead, when there is one."""
    props: dict[str, Any] = {}
    for p in api.params:
        spec: dict[str, Any] = {"type": _JSON_TYPE.get(p.type, p.type), "description": p.description}
        if p.enum:
            spec["enum"] = list(p.enum)
        props[p.name] = spec
    return {"name": name, "description": api.description,
            "parameters": {"type": "object", "properties": props, "required": [p.name for p in api.required_params]}}


@functools.lru_cache(maxsize=128)
def _doc_file(path: str, stamp: tuple[int, int]) -> dict[str, dict[str, Any]]:
    """The function objects of one OPPO doc file by name (`get_docs`: `api_docs[tool][api["function"]["name"]]`);
    `stamp` (mtime, size) makes an edited file read again."""
    from ...catalog.oppo_toolset import MAX_DOC_BYTES
    from ...sanitize.files import load_json_file, repair_surrogates

    # bounded like the loader's read (the file may have changed since): a fault is a DataFileError (a ValueError)
    doc = repair_surrogates(load_json_file(path, max_bytes=MAX_DOC_BYTES, what="OPPO tool document"), source=path)
    apis = doc.get("APIs") if isinstance(doc, Mapping) else None
    return {str(a["function"]["name"]): a["function"] for a in (apis if isinstance(apis, list) else [])
            if isinstance(a, Mapping) and isinstance(a.get("function"), Mapping) and "name" in a["function"]}


def authors_doc(catalog: Catalog, api_id: str) -> dict[str, Any] | None:
    """The release's own function object of an API of an OPPO toolset (the tool's doc file, as `toolset`'s
    `get_docs` reads it), converted as `convert_doc_to_openai_format` converts it: every parameter type lower-cased,
    kept when a JSON-schema type, "int" → integer, else string; key order and every other field as in the file.
    None when the API's tool was not loaded from such a file (or the file has no such function)."""
    api = catalog.api(api_id)
    try:
        source = catalog.tool(api.category, api.tool_key).source
        stat = Path(source).stat() if source.endswith(".json") else None
        fn = _doc_file(source, (stat.st_mtime_ns, stat.st_size)).get(api.name) if stat else None
    except (OSError, ValueError, LookupError, TypeError, AttributeError):
        return None
    if fn is None:
        return None
    doc = deepcopy(fn)
    props = (doc.get("parameters") or {}).get("properties") if isinstance(doc.get("parameters"), Mapping) else None
    for spec in (props or {}).values():
        if isinstance(spec, dict) and isinstance(spec.get("type"), str):
            low = spec["type"].lower()
            spec["type"] = low if low in _AUTHORS_TYPES else ("integer" if low == "int" else "string")
    return doc


@dataclass(frozen=True)
class Offer:
    """The functions offered for one item, in order: (function name, API id) pairs — a name may occur twice when
    two APIs share it, as the authors offer them — and the OpenAI tool objects."""

    entries: list[tuple[str, str]]
    schemas: list[dict[str, Any]]

    @property
    def names(self) -> list[str]:
        return [n for n, _ in self.entries]

    @property
    def functions(self) -> list[dict[str, Any]]:
        """The function objects (`functions=`: the documents, not wrapped in `{"type": "function", ...}`)."""
        return [s["function"] for s in self.schemas]

    def name_of(self, api_id: str) -> str:
        return next(n for n, a in self.entries if a == api_id)

    def api_of(self, name: str, *, last: bool = False) -> str | None:
        """The API offered under `name`: the first one (the last with `last`, as a name → API dict built in offer
        order keeps it: `perform_task7`'s `api_name_to_tool_name_map`)."""
        found = [a for n, a in self.entries if n == name]
        return (found[-1] if last else found[0]) if found else None


def make_offer(catalog: Catalog, api_ids: Sequence[str], *, paper: bool, rename_duplicates: bool = False) -> Offer:
    """Paper: each API, in the order given (`perform_task2`: the right one, then the similar ones), under its own
    name as the release's document gives it (`authors_doc`) — the catalog's function name only when the name is not a
    valid function name — and under that name even when another API offered has it too (`rename_duplicates`, ours,
    renames the later one to its catalog function name). Ours: each API once, under the catalog's function names."""
    entries: list[tuple[str, str]] = []
    schemas: list[dict[str, Any]] = []
    for api_id in (api_ids if paper else list(dict.fromkeys(api_ids))):
        api = catalog.api(api_id)
        if paper:
            taken = {n for n, _ in entries}
            name = api.name if is_valid_function_name(api.name) and not (rename_duplicates and api.name in taken) \
                else catalog.function_name(api_id)
            schema = authors_doc(catalog, api_id) or authors_schema(api, name)
            schema["name"] = name
        else:
            schema = api_json_schema(catalog, api_id)
            name = schema["name"]
        entries.append((name, api_id))
        schemas.append({"type": "function", "function": schema})
    return Offer(entries, schemas)


# --------------------------------------------------------------------------------------------- calls
def _call(model: Any, role: str, prompt: list[BaseMessage], config: RunnableConfig | None, **inputs: Any) -> AIMessage:
    ai, _ = call_role(model, role, prompt, config, inputs=inputs)
    return ai


def _prompt(task: int, paper: bool, text: str) -> list[BaseMessage]:
    """The paper's one user message (`conv = [{"role": "user", "content": instruction}]`), or ours after our
    system prompt."""
    if paper:
        return [wire.user_message(text)]
    return [SystemMessage(content=P.SYSTEMS[task]), HumanMessage(content=text)]


def _model(model: Any, paper: bool) -> Any:
    return wire.for_paper(model) if paper else model


@dataclass(frozen=True)
class RawCall:
    """A function call exactly as the model wrote it: `parsed` is False when its arguments were not valid JSON
    (the authors' `json.loads` fails; `args` is then the raw text)."""

    function: str
    args: Any
    api_id: str | None  # None: not a function offered
    parsed: bool = True
    call_id: str = ""


def _authors_call(offer: Offer, fn: Mapping[str, Any], call_id: str, last: bool = False) -> RawCall:
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
    return RawCall(name, args, offer.api_of(name, last=last), parsed, call_id)


def raw_calls(offer: Offer, ai: AIMessage, *, last: bool = False) -> list[RawCall]:
    """The reply's calls, as `_extract_func_calls` collects them: a legacy `function_call` first, then the tool
    calls, with the arguments as the provider wrote them when the reply carries the provider's message (`wire`),
    else as the client kept them (LangChain keeps a legacy call raw in `additional_kwargs`, but reads a tool call's
    empty arguments string as {}: such a client cannot tell them apart)."""
    provider = wire.raw_function_calls(ai)
    if provider is not None:
        return [_authors_call(offer, fn, call_id, last) for call_id, fn in provider]
    out: list[RawCall] = []
    legacy = ai.additional_kwargs.get("function_call")
    if isinstance(legacy, Mapping):
        out.append(_authors_call(offer, legacy, "function_call", last))
    kept = [tc for tc in ai.additional_kwargs.get("tool_calls") or []
            if isinstance(tc, Mapping) and isinstance(tc.get("function"), Mapping)]
    if kept:
        return out + [_authors_call(offer, tc["function"], str(tc.get("id") or ""), last) for tc in kept]
    out += [RawCall(str(tc.get("name") or ""), tc.get("args"), offer.api_of(str(tc.get("name") or ""), last=last),
                    True, str(tc.get("id") or "")) for tc in ai.tool_calls]
    out += [RawCall(str(tc.get("name") or ""), tc.get("args"), offer.api_of(str(tc.get("name") or ""), last=last),
                    False, str(tc.get("id") or "")) for tc in ai.invalid_tool_calls]
    return out


def tool_result_text(executor: ApiExecutor, api_id: str, args: Any, paper: bool) -> tuple[str, bool]:
    """Run a call: (what the tool message shows, whether the API succeeded). Paper: `str()` of the toolset's dict
    (`wire.authors_result`: Python's repr, `perform_task4` / `perform_task7`); ours: the executor's JSON."""
    obs = executor.call(api_id, args if isinstance(args, dict) else {})
    if paper:
        return str(wire.authors_result(obs.ok, obs.content, obs.error)), obs.ok
    return executor.render(obs), obs.ok


# --------------------------------------------------------------------------------------------- tasks 1-3
class FunctionsRefused(RuntimeError):
    """The provider refused the legacy `functions=` parameter (a 400 naming it)."""


_refuses_functions = refuses_functions  # a 400 naming the legacy `functions` parameter (nodes/judge)


@dataclass(frozen=True)
class FirstReply:
    """The model's first reply to an instruction with some functions offered. `calls`: the calls read (with
    `tools=` in the paper protocol, only the first, as the legacy API returns at most one)."""

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

    @property
    def content(self) -> str:
        """The reply's content as the authors' evaluator prompt shows it (`examine_msg["content"]`)."""
        return wire.reply_content(self.reply)


def first_reply(model: BaseChatModel, catalog: Catalog, task: int, instruction: str, api_ids: Sequence[str], *,
                paper: bool = True, ask_user: bool = False, functions_api: str = "tools",
                rename_duplicates: bool = False, config: RunnableConfig | None = None) -> FirstReply:
    """Tasks 1-3 (`perform_task1`, `perform_task2`, `perform_task3`): one reply with the functions offered, in the
    given order. Paper: `functions_api="functions"` sends them as the authors do, `functions=[docs]` (the legacy
    API: at most one call, `function_call`); "tools" sends `tools=` and reads only the first call. A provider that
    refuses `functions=` raises `FunctionsRefused`. Ours: `tools=`, every call read. `ask_user` (ours, task 3) also
    offers the `ask_user` function."""
    if functions_api not in ("functions", "tools"):
        raise ValueError(f"functions_api must be 'functions' or 'tools' here, got {functions_api!r}")
    offer = make_offer(catalog, api_ids, paper=paper, rename_duplicates=rename_duplicates)
    tools = [*offer.schemas, *([{"type": "function", "function": ASK_USER_SCHEMA}] if ask_user else [])]
    legacy = paper and functions_api == "functions"
    base = _model(model, paper)
    runnable = base.bind(functions=[t["function"] for t in tools]) if legacy else base.bind_tools(tools)
    try:
        ai = _call(runnable, f"oppo_task{task}", _prompt(task, paper, instruction), config, query=instruction,
                   functions=[t["function"]["name"] for t in tools])
    except ModelCallError as exc:
        if legacy and _refuses_functions(exc):
            raise FunctionsRefused(str(exc)) from exc
        raise
    calls = raw_calls(offer, ai)
    return FirstReply(offer, ai, calls[:1] if paper and not legacy else calls)


# --------------------------------------------------------------------------------------------- task 4
@dataclass(frozen=True)
class FillResult:
    offer: Offer
    call: RawCall | None  # the first call (None: no call)
    tool_result: str | None  # what the API returned for it, as the tool message shows it (None: not executed)
    tool_message: dict[str, Any] | None = None  # paper: the tool message as the authors build it
    second_turn: str | None = None  # paper: the reply to the result (scored by nothing); None: not sent or failed
    # paper: the conversation perform_task4 returns, as message dicts (the instruction, the reply as
    # `msg.model_dump()`, the tool message, the second turn's reply when it came); what evaluate_task4 reads
    conversation: tuple[dict[str, Any], ...] = ()


def fill_parameters(model: BaseChatModel, catalog: Catalog, instruction: str, api_id: str,
                    executor: ApiExecutor | None, *, paper: bool = True,
                    config: RunnableConfig | None = None) -> FillResult:
    """Task 4 (`perform_task4`): the one API offered with `tools=`; the model's first call, executed with the row's
    API when its arguments parse (the authors' `json.loads` raises otherwise), its result shown as the authors'
    tool message `{"role": "tool", "name": <api>, "content": str(result), "tool_call_id": ...}` (read by
    `_check_params_with_rule`). Paper: then the authors' second turn (`# second turn`: the conversation so far —
    the instruction, the reply, the tool message — sent again without `tools`; a failure of it is swallowed,
    `except Exception: return conv`); its reply is scored by nothing. Ours: not sent."""
    offer = make_offer(catalog, [api_id], paper=paper)
    prompt = _prompt(4, paper, instruction)
    ai = _call(_model(model, paper).bind_tools(offer.schemas), "oppo_task4", prompt, config,
               query=instruction, functions=offer.names)
    calls = [c for c in raw_calls(offer, ai) if c.call_id != "function_call"]  # perform_task4 reads msg.tool_calls
    if not calls:
        return FillResult(offer, None, None)
    call = calls[0]
    if not call.parsed or executor is None:
        return FillResult(offer, call, None)
    text, _ = tool_result_text(executor, api_id, call.args, paper)
    if not paper:
        return FillResult(offer, call, text)
    name = catalog.api(api_id).name
    message = {"role": "tool", "name": name, "content": text, "tool_call_id": call.call_id}
    conv = [*prompt, ai, wire.tool_message(name, text, call.call_id)]
    returned = [wire.wire_dict(m) for m in conv]
    try:  # perform_task4's second turn (a failure returns the conversation as it is)
        reply = _call(_model(model, paper), "oppo_task4", conv, config, query=instruction, functions=[], turn=1)
        second: str | None = reply_text(reply, paper)
        returned.append(wire.wire_dict(reply))
    except Exception:  # the authors' `except Exception as e: return conv`: nothing of the item depends on it
        second = None
    return FillResult(offer, call, text, message, second, tuple(returned))


# --------------------------------------------------------------------------------------------- task 5
def answer_directly(model: BaseChatModel, instruction: str, *, paper: bool = True,
                    config: RunnableConfig | None = None) -> str:
    """Task 5 (`perform_task5`): an answer from the model's own knowledge (no function offered). Paper: the reply's
    content as the authors' evaluator reads it (`msgs[1]["content"]`, not stripped); ours: stripped."""
    ai = _call(_model(model, paper), "oppo_task5", _prompt(5, paper, instruction), config, query=instruction)
    return wire.reply_content(ai) if paper else _text(ai).strip()


# --------------------------------------------------------------------------------------------- task 6
def answer_from_conversation(model: BaseChatModel, catalog: Catalog, conv: Sequence[Mapping[str, Any]], *,
                             paper: bool = True, config: RunnableConfig | None = None) -> str:
    """Task 6 (`perform_task6`): the assistant's next reply to the conversation (which ends with a tool result).
    Paper: the release's messages sent as they are (`messages=conv_history`: raw argument strings, null fields, the
    tool message's name), no function offered, the reply's content unstripped; ours: our system prompt and the
    called functions, the reply stripped."""
    messages = wire.from_openai(conv)
    query = next((_text(m) for m in messages if isinstance(m, HumanMessage)), "")
    names = [str(tc["name"]) for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls]
    if paper:
        ai = _call(_model(model, True), "oppo_task6", messages, config, query=query, functions=names)
        return wire.reply_content(ai)
    bound: Any = model
    ids = [a.id for a in catalog if catalog.function_name(a.id) in names or a.name in names]
    if ids:
        bound = model.bind_tools(make_offer(catalog, ids, paper=False).schemas)
    ai = _call(bound, "oppo_task6", [SystemMessage(content=P.SYSTEMS[6]), *messages], config, query=query,
               functions=names)
    return _text(ai).strip()


# --------------------------------------------------------------------------------------------- task 8
@dataclass(frozen=True)
class PlanResult:
    task_text: str  # the request as the model saw it (the evaluator's "Task")
    outline: str


def plan_outline(model: BaseChatModel, catalog: Catalog, instruction: str, api_ids: Sequence[str], *,
                 paper: bool = True, config: RunnableConfig | None = None,
                 book: PromptBook | None = None) -> PlanResult:
    """Task 8 (`perform_task8`): a plan for a high-level request with the tools' documents in the message (paper:
    the release's documents as `convert_doc_to_openai_format` gives them, one numbered line of JSON each, in `comb`
    order); nothing is called. Paper: the plan as the authors' evaluator reads it (unstripped). `book`: the
    authors' message (`perform_task8`'s prompt, read from a clone of agent_eval)."""
    offer = make_offer(catalog, api_ids, paper=paper)
    text = P.plan_request(instruction, offer.functions, book)
    ai = _call(_model(model, paper), "oppo_task8", _prompt(8, paper, text), config, query=instruction,
               functions=offer.names)
    return PlanResult(text, wire.reply_content(ai) if paper else _text(ai).strip())


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


def _bind_chain_tools(model: Any, schemas: list[dict[str, Any]], paper: bool) -> Any:
    """`tools=` for task 7; paper: with `parallel_tool_calls=False` (`perform_task7`) when the model's `bind_tools`
    takes it (ChatOpenAI's does; a class without the option gets the tools alone)."""
    client = wire.openai_family(model) or model  # the wrapper passes the option on to its ChatOpenAI
    if paper and "parallel_tool_calls" in inspect.signature(client.bind_tools).parameters:
        return model.bind_tools(schemas, parallel_tool_calls=False)
    return model.bind_tools(schemas)


def solve_chain(model: BaseChatModel, catalog: Catalog, executor: ApiExecutor, instruction: str,
                api_ids: Sequence[str], *, paper: bool = True, max_rounds: int = 10,
                config: RunnableConfig | None = None) -> ChainResult:
    """Task 7 (`perform_task7`): a function-calling loop over the main API and its dependencies (in that order), at
    most `max_rounds` model replies (the authors' 10); every call is executed. Paper: `parallel_tool_calls=False`,
    each reply sent back as the provider returned it, each result as `str()` of the toolset's dict in a tool message
    with the function's name; a call to a function not offered, or with arguments that are not JSON, ends the item
    (the authors' loop raises and the row scores 0). Ours: the model is told and may go on."""
    offer = make_offer(catalog, api_ids, paper=paper)
    runnable = _bind_chain_tools(_model(model, paper), offer.schemas, paper)
    messages: list[BaseMessage] = _prompt(7, paper, instruction)
    steps: list[ChainStep] = []

    def conversation() -> list[dict[str, Any]]:
        return [wire.wire_dict(m) for m in messages]

    for turn in range(max_rounds):
        ai = _call(runnable, "oppo_task7", messages, config, query=instruction, functions=offer.names, turn=turn)
        calls = [c for c in raw_calls(offer, ai, last=paper) if c.call_id != "function_call"]  # msg.tool_calls only
        if not calls:
            messages.append(ai)
            return ChainResult(steps, reply_text(ai, paper), conversation())
        ai = ai.model_copy(update={
            "tool_calls": [{**tc, "id": tc.get("id") or f"c{turn}_{i}"} for i, tc in enumerate(ai.tool_calls)],
            "invalid_tool_calls": [{**tc, "id": tc.get("id") or f"b{turn}_{i}"}
                                   for i, tc in enumerate(ai.invalid_tool_calls)]})
        messages.append(ai)
        lc_ids = [str(tc.get("id")) for tc in [*ai.tool_calls, *ai.invalid_tool_calls]]
        for i, call in enumerate(calls):
            call_id: Any = call.call_id or (lc_ids[i] if i < len(lc_ids) else f"c{turn}_{i}")
            if paper and call.api_id is None:
                return ChainResult(steps, "", conversation(), aborted=f"invalid function name {call.function!r}")
            if paper and not call.parsed:
                return ChainResult(steps, "", conversation(), aborted=f"arguments of {call.function!r} are not JSON")
            if call.api_id is None:
                content, ok, name = json.dumps({"error": f"function {call.function!r} is not available"}), False, \
                    call.function
            elif not call.parsed:
                content, ok, name = json.dumps({"error": "the arguments are not a JSON object"}), False, \
                    catalog.api(call.api_id).name
            else:
                content, ok = tool_result_text(executor, call.api_id, call.args, paper)
                name = catalog.api(call.api_id).name
            steps.append(ChainStep(call.function, call.api_id, call.args, ok, name))
            messages.append(wire.tool_message(call.function, content, call_id) if paper else
                            ToolMessage(content=content, tool_call_id=str(call_id), name=call.function))
    return ChainResult(steps, "", conversation(), stopped=f"no answer after {max_rounds} model replies")


def reply_text(ai: AIMessage, paper: bool) -> str:
    """A final reply's text: paper, its content as the authors keep it; ours, stripped."""
    return wire.reply_content(ai) if paper else _text(ai).strip()
