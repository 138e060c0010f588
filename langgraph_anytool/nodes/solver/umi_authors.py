"""The α-UMi solver's requests as the authors' run-time pipeline sends them (`AnyToolConfig.umi_prompts_from`: a
clone of X-PLUG/Multi-LLM-Agent; ToolBench-multiLLM `toolbench/inference/LLM/collab_agent_model.py` `CollbaAgentV3`,
driven by `toolbench/inference/Algorithms/DFS.py` `DFS_tree_search`).

Each role's whole input is one text, its prompt read from the checkout (`paper_prompts.umi_run_book`) and filled as
`CollbaAgentV3.prediction` fills it, sent as one user message with the authors' sampling settings; the caller gets
no tools (its call is read from its text, as `toolbench/inference/utils.py` `collab_agent_parser` reads it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable

from ...paper_prompts import umi_run_book
from ...protocol import DIVERSITY, render_action
from ...protocol import text_of as _text_of
from .dfsdt import invoke_model

if TYPE_CHECKING:
    from ...catalog.models import Api
    from ...paper_prompts import PromptBook
    from ...runtime import Deps
    from .tree import SolverState

# collab_agent_model.py `CollbaAgentV3.prediction`: `gen_params` of the planner, the caller and the summarizer
# ("temperature": 0.5, "max_new_tokens": 512, "stop": "</s>"), as OpenAI-compatible request settings
SETTINGS: Mapping[str, Any] = {"temperature": 0.5, "max_tokens": 512, "stop": ["</s>"]}
# the cue each role's input ends with (`prediction`: `prompt + " assistant: "`, `' caller: '`, `' conclusion: '`)
CUES: Mapping[str, str] = {"planner": " assistant: ", "caller": " caller: ", "summarizer": " conclusion: "}
# the raw caller text of a step, kept on the caller's message for the next steps' history (`parse`: the assistant
# turn's `value` is the whole prediction, `planner</s>caller: <caller text>`)
CALLER_TEXT = "umi_caller_text"
Choice = Literal["caller", "summarizer", "give_up"]
# rapidapi.py `api_json_to_openai_json`: `map_type` ({"NUMBER": "integer", "STRING": "string", "BOOLEAN":
# "boolean"}, anything else "string") over our catalog's types: ToolBench's NUMBER / STRING / BOOLEAN are loaded as
# "number" / "string" / "boolean" (catalog/models.py `normalize_param_type`); the document's own spelling is not kept,
# so a FLOAT or DOUBLE (our "number" too) is written "integer" where the authors write "string" (docs/evaluation.md)
_MAP_TYPE = {"number": "integer", "string": "string", "boolean": "boolean"}
_DESCRIPTION_CHARS = 256


def _param_type(kind: str) -> str:
    """`map_type[arg['type']]`, else "string" (see `_MAP_TYPE`)."""
    return _MAP_TYPE.get(kind, "string")


def tool_for_input(api: Api, function_name: str) -> dict[str, Any]:
    """rapidapi.py `api_json_to_openai_json`'s `template_for_input`: `Name` (the function name), `function` (the
    stripped description with the API's name replaced by the function name, its first 256 characters; "" when
    blank), `input` (when the API has a required parameter: every required then optional parameter, "type, " and
    the last 256 characters of its description, or the type alone when that is blank)."""
    out: dict[str, Any] = {"Name": function_name, "function": "", "input": {}}
    description = api.as_written
    if description.strip() != "":
        out["function"] = description.strip().replace(api.name, function_name)[:_DESCRIPTION_CHARS]
    if api.required_params:
        for p in (*api.required_params, *api.optional_params):
            kind = _param_type(p.type)
            out["input"][p.name] = f"{kind}, {p.description[-_DESCRIPTION_CHARS:]}" if p.description.strip() else kind
    return out


def tool_docs(deps: Deps, functions: Mapping[str, str]) -> tuple[str, str]:
    """(`{doc}`, `{tool_names}`) as `prediction` builds them: one `json.dumps(t) + '\\n'` per tool, the names joined
    by ", " (`functions_for_input` in pool order; rapidapi.py appends Finish to `functions` only, not to these)."""
    tools = [tool_for_input(deps.catalog.api(api_id), name) for name, api_id in functions.items()]
    return "".join(json.dumps(t) + "\n" for t in tools), ", ".join(t["Name"] for t in tools)


def history(query: str, messages: Sequence[BaseMessage]) -> str:
    """`{history}` as `CollbaAgentV3.parse` writes `conv_history`: "user: <value></s>" (the query, DFS.py `start`,
    and a diversity prompt, DFS.py `DFS`), "assistant: <value></s>" (a whole earlier prediction: the planner's text
    and "</s>caller: <caller text>" or "</s>conclusion: ..."), "observation: <value>" (no "</s>")."""
    out = f"user: {query}</s>"
    turn: str | None = None
    for m in messages:
        if isinstance(m, AIMessage) and m.name == "planner":
            if turn is not None:
                out += f"assistant: {turn}</s>"
            turn = _text_of(m)
        elif isinstance(m, AIMessage) and m.name in ("caller", "summarizer"):
            turn = (turn or "") + f"</s>{'caller' if m.name == 'caller' else 'conclusion'}: {caller_text(m)}"
        else:
            if turn is not None:
                out += f"assistant: {turn}</s>"
                turn = None
            if isinstance(m, ToolMessage):
                out += f"observation: {_text_of(m)}"
            elif isinstance(m, HumanMessage) and m.name == DIVERSITY:
                out += f"user: {_text_of(m)}</s>"
    if turn is not None:
        out += f"assistant: {turn}</s>"
    return out


def caller_text(m: AIMessage) -> str:
    """A caller's (summarizer's) text as the model wrote it (kept under `CALLER_TEXT`), else its call written as
    `Action: <name>\\nAction Input: <json>`."""
    kept = m.additional_kwargs.get(CALLER_TEXT)
    if isinstance(kept, str):
        return kept
    calls = "".join(render_action(tc["name"], tc["args"]) for tc in m.tool_calls)
    return calls or _text_of(m).strip()


def fill(book: PromptBook, slot: str, values: Mapping[str, str], order: Sequence[str]) -> str:
    """The slot's text with `.replace('{name}', value)` applied in the authors' `order` (one after the other, as
    `prediction` does: a value holding a later placeholder is replaced too)."""
    template = book.templates[slot]
    text = "".join(p if isinstance(p, str) else "{" + p.name + "}" for p in template.parts)
    for name in order:
        text = text.replace("{" + name + "}", values[name])
    return text


def planner_input(book: PromptBook, doc: str, names: str, hist: str) -> str:
    """`prediction`: `planner_prompt_temp.replace('{doc}').replace('{tool_names}').replace('{history}')` + cue."""
    return fill(book, "planner", {"doc": doc, "tool_names": names, "history": hist},
                ("doc", "tool_names", "history")) + CUES["planner"]


def next_caller(prediction: str) -> str:
    """The planner's prediction as `prediction` passes it to the caller: cut after "Next: caller.", else
    " Next: caller." appended (with its leading space)."""
    marker = "Next: caller."
    if marker in prediction:
        return prediction[: prediction.index(marker) + len(marker)]
    return prediction + " " + marker


def planner_prediction(text: str) -> str:
    """The planner's output as `prediction` keeps it: stripped, a leading ": " dropped, cut after "Next: give up."
    or "Next: conclusion." (the caller's cut: `next_caller`)."""
    out = text.strip()
    if out.startswith(": "):
        out = out[2:]
    for marker in ("Next: give up.", "Next: conclusion."):
        if marker in out:
            return out[: out.index(marker) + len(marker)]
    return out


def role_input(book: PromptBook, role: str, doc: str, names: str, hist: str, thought: str) -> str:
    """The caller's or the summarizer's input (`prediction`): the prompt with `{doc}`, `{tool_names}`, `{thought}`,
    then `{history}` ← the history and "assistant: <planner prediction></s>", then the cue."""
    dispatch = hist + "assistant: " + thought + "</s>"
    values = {"doc": doc, "tool_names": names, "thought": thought, "history": dispatch}
    return fill(book, role, values, ("doc", "tool_names", "thought", "history")) + CUES[role]


def read_call(text: str) -> tuple[str, str]:
    """(name, arguments string) of a caller text as `collab_agent_parser` reads the part after "</s>caller: ": the
    arguments after the last "Action Input:" (else "{}"), the name after the last "Action:" up to an "Action
    Input:" (else "none")."""
    args = text[text.rindex("Action Input:") + len("Action Input:"):].strip() if "Action Input:" in text else "{}"
    if "Action:" not in text:
        return "none", args
    name = text[text.rindex("Action:") + len("Action:"):].strip()
    if "Action Input:" in name:
        name = name[: name.index("Action Input:")].strip()
    return name, args


def decision(text: str) -> Choice:
    """`prediction`'s routing: "Next: give up." anywhere → "give_up", else "Next: conclusion." → "summarizer",
    else "caller"."""
    if "Next: give up." in text:
        return "give_up"
    return "summarizer" if "Next: conclusion." in text else "caller"


def caller_message(text: str) -> AIMessage:
    """The caller's reply as a message: its call read from the text (`read_call`; arguments that are not a JSON
    object make an invalid call, as the environment's `json.loads` refuses them), the raw text kept for the
    history."""
    name, raw = read_call(text)
    kept: dict[str, Any] = {CALLER_TEXT: text}
    try:
        args = json.loads(raw)
    except ValueError:
        args = None
    if isinstance(args, dict):
        return AIMessage(content="", name="caller", additional_kwargs=kept,
                         tool_calls=[{"name": name, "args": args, "id": "umi_call", "type": "tool_call"}])
    return AIMessage(content="", name="caller", additional_kwargs=kept,
                     invalid_tool_calls=[{"name": name, "args": raw, "id": "umi_call", "error": "not a JSON object",
                                          "type": "invalid_tool_call"}])


def with_settings(model: Runnable[Any, BaseMessage]) -> Runnable[Any, BaseMessage]:
    """`model` sending the authors' sampling settings (`SETTINGS`)."""
    return model.bind(**SETTINGS)


def book_of(deps: Deps) -> PromptBook | None:
    """The run-time prompts of `config.umi_prompts_from`, or None (our prompts)."""
    path = deps.config.umi_prompts_from
    return umi_run_book(path) if path else None


def prompt(text: str) -> list[BaseMessage]:
    """The request's messages: the whole input as one user message (the authors complete `prompt` as it is)."""
    return [HumanMessage(content=text)]


# ------------------------------------------------------------------------------------------- the roles' calls
Call = Callable[[dict[str, str], "SolverState"], tuple[AIMessage | None, dict[str, Any]]]


def planner_call(deps: Deps, book: PromptBook, messages: Sequence[BaseMessage]) -> Call:
    """The planner's call over the offered functions (for `with_fewer_functions`): `messages` are the path so far
    and the step's diversity prompt (DFS.py `DFS` appends it to the node's messages before `parse`)."""

    def call(offered: dict[str, str], state: SolverState) -> tuple[AIMessage | None, dict[str, Any]]:
        doc, names = tool_docs(deps, offered)
        text = planner_input(book, doc, names, history(state["query"], messages))
        return invoke_model(deps, state, "planner", with_settings(deps.models.for_role("planner")), prompt(text),
                            {"functions": list(offered), "authors_input": True})

    return call


def read_plan(text: str) -> tuple[str, Choice]:
    """(the planner prediction the next role and the history get, decision) from the planner's reply."""
    pred = planner_prediction(text)
    choice = decision(pred)
    return (next_caller(pred) if choice == "caller" else pred), choice


def role_call(deps: Deps, book: PromptBook, role: str, messages: Sequence[BaseMessage]) -> Call:
    """The caller's or the summarizer's call: `messages` are the path before the step (the step's planner
    prediction is `state["thought"]`); no tools are bound (the caller's call is read from its text)."""

    def call(offered: dict[str, str], state: SolverState) -> tuple[AIMessage | None, dict[str, Any]]:
        doc, names = tool_docs(deps, offered)
        text = role_input(book, role, doc, names, history(state["query"], messages), state["thought"] or "")
        return invoke_model(deps, state, role, with_settings(deps.models.for_role(role)), prompt(text),
                            {"functions": list(offered), "authors_input": True})

    return call
