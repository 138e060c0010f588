"""The model under test in the OPPO tasks (seed 001, §3.3): small, named entry points, one per ability.

Each takes a chat model, binds the functions the task offers (real schemas from the catalog) and calls it through
`llm.call_role`. The graph will gain the abilities some of them stand for (answering without tools, `ask_user`,
prior messages, plan-only mode); these entry points are where a runner switches to the graph.
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
    convert_to_messages,
)
from langchain_core.runnables import RunnableConfig

from ..catalog import Catalog
from ..catalog.errors import UnknownNameError
from ..llm import call_role
from ..tools.lc import api_json_schema
from ..tools.pipeline import ApiExecutor
from . import oppo_prompts as P

ASK_USER = "ask_user"
ASK_USER_SCHEMA: dict[str, Any] = {
    "name": ASK_USER, "description": P.ASK_USER_DESCRIPTION,
    "parameters": {"type": "object", "properties": {"question": {"type": "string",
                                                                 "description": "the question for the user"}},
                   "required": ["question"]},
}


def _text(msg: BaseMessage) -> str:
    if isinstance(msg.content, str):
        return msg.content
    return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in msg.content if isinstance(b, str | dict))


def _schemas(catalog: Catalog, api_ids: Sequence[str]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": api_json_schema(catalog, a)} for a in api_ids]


def _call(model: Any, role: str, prompt: list[BaseMessage], config: RunnableConfig | None, **inputs: Any) -> AIMessage:
    ai, _ = call_role(model, role, prompt, config, inputs=inputs)
    return ai


@dataclass(frozen=True)
class RawCall:
    """A function call exactly as the model wrote it (arguments not validated or converted)."""

    function: str
    args: Any
    api_id: str | None  # None: not a function of the catalog


def _raw_calls(catalog: Catalog, ai: AIMessage) -> list[RawCall]:
    out = []
    for tc in [*ai.tool_calls, *ai.invalid_tool_calls]:
        name = str(tc.get("name") or "")
        try:
            api_id: str | None = catalog.api_for_function(name).id
        except UnknownNameError:
            api_id = None
        out.append(RawCall(name, tc.get("args"), api_id))
    return out


# --------------------------------------------------------------------------------------------- task 1
@dataclass(frozen=True)
class ToolDecision:
    use_tool: bool
    reply: AIMessage


def decide_tool_use(model: BaseChatModel, catalog: Catalog, instruction: str, api_ids: Sequence[str],
                    config: RunnableConfig | None = None) -> ToolDecision:
    """Task 1: given the API(s), does the model call one (tool needed) or answer directly?"""
    ai = _call(model.bind_tools(_schemas(catalog, api_ids)), "oppo_decide",
               [SystemMessage(content=P.DECIDE_SYSTEM), HumanMessage(content=instruction)], config,
               query=instruction, functions=[catalog.function_name(a) for a in api_ids])
    return ToolDecision(use_tool=bool(ai.tool_calls or ai.invalid_tool_calls), reply=ai)


# --------------------------------------------------------------------------------------------- task 2
@dataclass(frozen=True)
class Selection:
    api_id: str | None  # the API the model called first (None: no call, or not a candidate)
    function: str | None
    reply: AIMessage


def select_api(model: BaseChatModel, catalog: Catalog, instruction: str, candidates: Sequence[str],
               config: RunnableConfig | None = None) -> Selection:
    """Task 2: the right API among similar ones (the first call's function)."""
    ai = _call(model.bind_tools(_schemas(catalog, candidates)), "oppo_select",
               [SystemMessage(content=P.SELECT_SYSTEM), HumanMessage(content=instruction)], config,
               query=instruction, functions=[catalog.function_name(a) for a in candidates])
    calls = _raw_calls(catalog, ai)
    if not calls:
        return Selection(None, None, ai)
    first = calls[0]
    return Selection(first.api_id if first.api_id in candidates else None, first.function, ai)


# --------------------------------------------------------------------------------------------- task 3
@dataclass(frozen=True)
class AskOrCall:
    kind: str  # "ask" (ask_user call), "ask_text" (a question in plain text), "call" (an API call), "answer"
    question: str = ""
    calls: list[RawCall] = field(default_factory=list)
    reply: AIMessage | None = None

    @property
    def asked(self) -> bool:
        return self.kind in ("ask", "ask_text")


def ask_or_call(model: BaseChatModel, catalog: Catalog, instruction: str, api_ids: Sequence[str],
                config: RunnableConfig | None = None) -> AskOrCall:
    """Task 3: with information missing, does the model ask the user (the `ask_user` function or a question) or
    call the API anyway?"""
    tools = [*_schemas(catalog, api_ids), {"type": "function", "function": ASK_USER_SCHEMA}]
    ai = _call(model.bind_tools(tools), "oppo_ask",
               [SystemMessage(content=P.AGENT_SYSTEM), HumanMessage(content=instruction)], config,
               query=instruction, functions=[catalog.function_name(a) for a in api_ids] + [ASK_USER])
    asks = [tc for tc in ai.tool_calls if tc["name"] == ASK_USER]
    if asks:
        return AskOrCall("ask", question=str((asks[0].get("args") or {}).get("question", "")), reply=ai)
    calls = [c for c in _raw_calls(catalog, ai) if c.function != ASK_USER]
    if calls:
        return AskOrCall("call", calls=calls, reply=ai)
    text = _text(ai).strip()
    return AskOrCall("ask_text" if "?" in text else "answer", question=text if "?" in text else "", reply=ai)


# --------------------------------------------------------------------------------------------- task 4
def fill_parameters(model: BaseChatModel, catalog: Catalog, instruction: str, api_id: str,
                    config: RunnableConfig | None = None) -> RawCall | None:
    """Task 4: the raw call the model makes to the API (None: it made none)."""
    ai = _call(model.bind_tools(_schemas(catalog, [api_id])), "oppo_fill",
               [SystemMessage(content=P.FILL_SYSTEM), HumanMessage(content=instruction)], config,
               query=instruction, functions=[catalog.function_name(api_id)])
    calls = _raw_calls(catalog, ai)
    return calls[0] if calls else None


# --------------------------------------------------------------------------------------------- task 5
def answer_directly(model: BaseChatModel, instruction: str, config: RunnableConfig | None = None) -> str:
    """Task 5: an answer from the model's own knowledge (no tool offered)."""
    ai = _call(model, "oppo_answer", [SystemMessage(content=P.ANSWER_SYSTEM), HumanMessage(content=instruction)],
               config, query=instruction)
    return _text(ai).strip()


# --------------------------------------------------------------------------------------------- task 6
def conversation_messages(conv: Sequence[Mapping[str, Any]]) -> list[BaseMessage]:
    """OpenAI-format messages as LangChain messages (tool calls and tool results kept)."""
    return list(convert_to_messages([dict(m) for m in conv]))


def answer_from_conversation(model: BaseChatModel, catalog: Catalog, conv: Sequence[Mapping[str, Any]],
                             config: RunnableConfig | None = None) -> str:
    """Task 6: the assistant's next reply to a conversation that ends with a tool result."""
    messages = conversation_messages(conv)
    names = [str(tc["name"]) for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls]
    ids = []
    for n in names:
        try:
            ids.append(catalog.api_for_function(n).id)
        except UnknownNameError:
            continue
    bound: Any = model.bind_tools(_schemas(catalog, ids)) if ids else model
    query = next((_text(m) for m in messages if isinstance(m, HumanMessage)), "")
    ai = _call(bound, "oppo_respond", [SystemMessage(content=P.CONVERSATION_SYSTEM), *messages], config,
               query=query, functions=names)
    return _text(ai).strip()


# --------------------------------------------------------------------------------------------- task 8
def plan_outline(model: BaseChatModel, catalog: Catalog, instruction: str, api_ids: Sequence[str],
                 config: RunnableConfig | None = None) -> str:
    """Task 8: a plan outline for a high-level request (nothing is executed)."""
    apis = "\n".join(f"- {catalog.api(a).tool_name} / {catalog.api(a).name}: {catalog.api(a).description}"
                     for a in api_ids)
    ai = _call(model, "oppo_plan", [SystemMessage(content=P.PLAN_SYSTEM.format(apis=apis)),
                                    HumanMessage(content=instruction)], config, query=instruction,
               functions=[catalog.function_name(a) for a in api_ids])
    return _text(ai).strip()


# --------------------------------------------------------------------------------------------- task 7
@dataclass(frozen=True)
class ChainStep:
    function: str
    api_id: str | None
    args: Any
    ok: bool


@dataclass(frozen=True)
class ChainResult:
    steps: list[ChainStep]
    answer: str
    stopped: str = ""  # why the loop ended early ("" when the model answered)


def solve_chain(model: BaseChatModel, catalog: Catalog, executor: ApiExecutor, instruction: str,
                api_ids: Sequence[str], *, max_steps: int = 8, config: RunnableConfig | None = None) -> ChainResult:
    """Task 7: a function-calling loop over APIs with dependencies; every call is executed."""
    runnable = model.bind_tools(_schemas(catalog, api_ids))
    messages: list[BaseMessage] = [SystemMessage(content=P.CHAIN_SYSTEM), HumanMessage(content=instruction)]
    steps: list[ChainStep] = []
    for turn in range(max_steps):
        ai = _call(runnable, "oppo_chain", messages, config, query=instruction,
                   functions=[catalog.function_name(a) for a in api_ids], turn=turn)
        calls = list(ai.tool_calls)
        if not calls and not ai.invalid_tool_calls:
            return ChainResult(steps, _text(ai).strip())
        ai = ai.model_copy(update={"tool_calls": [{**tc, "id": tc.get("id") or f"c{turn}_{i}"}
                                                  for i, tc in enumerate(calls)], "invalid_tool_calls": []})
        messages.append(ai)
        for tc in ai.tool_calls:
            name = tc["name"]
            try:
                api_id: str | None = catalog.api_for_function(name).id
            except UnknownNameError:
                api_id = None
            if api_id is None or api_id not in api_ids:
                content, ok = json.dumps({"error": f"function {name!r} is not available"}), False
            else:
                obs = executor.call(api_id, tc["args"])
                content, ok = executor.render(obs), obs.ok
            steps.append(ChainStep(name, api_id, tc["args"], ok))
            messages.append(ToolMessage(content=content, tool_call_id=str(tc["id"]), name=name))
    return ChainResult(steps, "", stopped=f"no answer after {max_steps} model turns")
