"""ToolEval's two-stage answer check (ToolBench / StableToolBench), reusable by the in-loop judge and the evaluator.

Procedure (ToolBench `tooleval/evaluators/registered_cls/rtl.py`, kept by StableToolBench; the AnyTool paper's
pass rate, §3 Eq. 2, is computed from its Solved / Unsolved labels):
1. rule: an empty final answer (or one that is only a `give_up_and_restart`) is Unsolved without a model call;
2. `check_answer_status` on the query and the final answer → Solved / Unsolved / Unsure;
3. on Unsure only, `parse_answer_status` on the whole answer process → Solved / Unsolved / Unsure.
`check_task_solvable` (→ Solvable / Unsolvable / Unsure) is ToolEval's separate solvability check used by
ToolLLM's pass rate (AnyTool Eq. 1).

Every model call goes through `call_role(model, "judge", ...)` with inputs {"query", "answer", "stage"}. A reply that
cannot be parsed gives Unsure with the reply in the reason; provider errors propagate (the caller decides).

With the authors' prompts (`book`: a ToolEval evaluator read from a checkout, `paper_prompts`), each check is sent
as ToolEval sends it (`registered_cls/tooleval.py OpenAINormalizedEvaluator.function_call`): the template section
filled with `.format(...)` as the only (user) message, and the check's function from the evaluator's
`config.yaml`, with the `reason` property added, bound and forced (`tool_choice`). The values are the ones
`registered_cls/rtl.py` passes: the query and the final answer; for the second stage `json.dumps(answer)` of the
answer as a whole (`{"final_answer", "answer_details"}`); for the solvability check `json.dumps({"query",
"available_tools"})`.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig

from ...models.llm import ModelCallError, RoleUsage, call_role
from ...paper_prompts import PromptBook
from ...text import shorten
from .tooleval_prompts import (
    ANSWER_STATUS_SYSTEM,
    ANSWER_STATUS_USER,
    PROCESS_STATUS_SYSTEM,
    PROCESS_STATUS_USER,
    TASK_SOLVABLE_SYSTEM,
    TASK_SOLVABLE_USER,
)
from .tooleval_request import CallForm, ToolEvalRequest, refuses_functions, speaks_functions

AnswerLabel = Literal["Solved", "Unsolved", "Unsure"]
TaskLabel = Literal["Solvable", "Unsolvable", "Unsure"]
Stage = Literal["rule", "answer", "process", "task"]
Meter = Callable[[RoleUsage], Any]  # a call's usage as it is made (`Deps.meter`)

ANSWER_LABELS: tuple[str, ...] = ("Solved", "Unsolved", "Unsure")
TASK_LABELS: tuple[str, ...] = ("Solvable", "Unsolvable", "Unsure")
JUDGE_ROLE = "judge"
MAX_PROCESS_CHARS = 24_000  # the process text shown to stage 2 (head and tail kept)
MAX_ANSWER_CHARS = 8_000

ModelLike = BaseChatModel | Runnable[Any, Any]


@dataclass(frozen=True)
class JudgeResult:
    """One verdict: the label, the judge's reason, the stage that decided, and the usage of its model calls."""

    label: str
    reason: str
    stage: Stage
    usage: RoleUsage = field(default_factory=lambda: RoleUsage())

    @property
    def solved(self) -> bool:
        """Only Solved counts as solved (an Unsure never does)."""
        return self.label == "Solved"

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "reason": self.reason, "stage": self.stage, "usage": dict(self.usage)}


def add_usage(a: Mapping[str, Any], b: Mapping[str, Any]) -> RoleUsage:
    """Counter-wise sum of two usage dicts."""
    out: dict[str, int | float] = {k: v if isinstance(v, float) else int(v) for k, v in a.items()}
    for k, v in b.items():
        out[k] = out.get(k, 0) + (v if isinstance(v, float) else int(v))  # cost_usd stays a float
    return RoleUsage(**out)  # type: ignore[typeddict-item]


# ------------------------------------------------------------------------------------------------ reply parsing
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_LABEL_KEYS = ("label", "answer_status", "task_status", "status", "verdict")


def reply_text(reply: AIMessage) -> str:
    """The text of a reply (string content or text blocks)."""
    content = reply.content
    if isinstance(content, str):
        return content
    parts = [c if isinstance(c, str) else str(c.get("text", "")) for c in content if isinstance(c, (str, dict))]
    return "".join(parts)


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object found in `text` (fenced blocks first, then bare objects), in order."""
    found: list[dict[str, Any]] = []
    decoder = json.JSONDecoder()
    for chunk in [*_FENCE.findall(text), text]:
        i = chunk.find("{")
        while i != -1:
            try:
                obj, end = decoder.raw_decode(chunk, i)
            except json.JSONDecodeError:
                i = chunk.find("{", i + 1)
                continue
            if isinstance(obj, dict):
                found.append(obj)
            i = chunk.find("{", end)
    return found


def _canonical(value: Any, labels: Sequence[str]) -> str | None:
    if not isinstance(value, str):
        return None
    cleaned = re.sub(r"[^A-Za-z]", "", value).lower()
    for label in labels:
        if cleaned == label.lower():
            return label
    return None


def _legacy_call(reply: AIMessage) -> list[dict[str, Any]]:
    """The legacy `function_call` of a reply to `functions=` (LangChain keeps it raw in `additional_kwargs`), as a
    tool call's {"name", "args"} when its arguments are a JSON object (ToolEval: `json.loads(...arguments)`)."""
    legacy = reply.additional_kwargs.get("function_call")
    if not isinstance(legacy, Mapping):
        return []
    try:
        args = json.loads(str(legacy.get("arguments") or ""))
    except json.JSONDecodeError:
        return []
    return [{"name": str(legacy.get("name") or ""), "args": args}] if isinstance(args, dict) else []


def parse_label(reply: AIMessage | str, labels: Sequence[str] = ANSWER_LABELS) -> tuple[str | None, str]:
    """(label, reason) from a judge reply: a tool call's arguments, a JSON object (fenced or bare), a bare label,
    `label: X`, or a text naming exactly one label (not negated). The label is None when nothing parses."""
    if isinstance(reply, AIMessage):
        for tc in [*(reply.tool_calls or []), *_legacy_call(reply)]:
            args = tc.get("args") or {}
            for key in _LABEL_KEYS:
                label = _canonical(args.get(key), labels)
                if label:
                    return label, str(args.get("reason") or args.get("content") or "").strip()
        text = reply_text(reply)
    else:
        text = reply
    for obj in _json_objects(text):
        for key in _LABEL_KEYS:
            label = _canonical(obj.get(key), labels)
            if label:
                return label, str(obj.get("reason") or obj.get("content") or "").strip()
    stripped = text.strip()
    label = _canonical(stripped, labels) if len(stripped) <= 30 else None
    if label:
        return label, ""
    alternation = "|".join(re.escape(x) for x in labels)
    keyed = re.search(rf"(?:{'|'.join(_LABEL_KEYS)})\W{{0,4}}({alternation})\b", text, re.IGNORECASE)
    if keyed:
        return _canonical(keyed.group(1), labels), shorten(stripped, 500)
    hits = {m.group(1).lower(): m for m in re.finditer(rf"\b({alternation})\b", text, re.IGNORECASE)}
    if len(hits) == 1:
        (m,) = hits.values()
        if not re.search(r"\bnot\s+$", text[max(0, m.start() - 8):m.start()], re.IGNORECASE):
            return _canonical(m.group(1), labels), shorten(stripped, 500)
    return None, stripped


# ------------------------------------------------------------------------------------------------ rendering
def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… [{len(text) - limit} characters cut] …\n{text[-half:]}"


def render_process(process: Any, limit: int = MAX_PROCESS_CHARS) -> str:
    """The answer process as text: a string as is, anything else as JSON; clipped to `limit` characters."""
    text = process if isinstance(process, str) else json.dumps(process, ensure_ascii=False, default=str, indent=1)
    return _clip(text.strip() or "(no API calls)", limit)


def is_empty_answer(final_answer: str | None) -> bool:
    """ToolEval's rule: an empty final answer, or one that is a give_up_and_restart, is Unsolved."""
    text = (final_answer or "").strip()
    return not text or "give_up_and_restart" in text


# ------------------------------------------------------------------------------------------------ the checks
def _ask(model: ModelLike, system: str, user: str, config: RunnableConfig | None, inputs: dict[str, Any],
         labels: Sequence[str], stage: Stage, on_usage: Meter | None = None) -> JudgeResult:
    reply, used = call_role(model, JUDGE_ROLE, [SystemMessage(system), HumanMessage(user)], config, inputs=inputs,
                            on_usage=on_usage)
    label, reason = parse_label(reply, labels)
    if label is None:
        return JudgeResult("Unsure", f"unparseable judge reply: {shorten(reason, 300)!r}", stage, used)
    return JudgeResult(label, reason, stage, used)


def _bound(model: ModelLike, schema: dict[str, Any], function: str, form: CallForm, seed: int | None = None) -> Any:
    """`model` with ToolEval's one function forced, in the call form of the authors' copy (tooleval_request.py):
    `functions=[f]` + `function_call={"name": f}` (AnyTool's), or `tools=[...]` + a forced `tool_choice`
    (StableToolBench's; LangChain sends `tool_choice=function` as {"type": "function", "function": {"name": f}});
    `seed` (AnyTool's copy: call_gpt's) sent when given."""
    extra = {"seed": seed} if seed is not None else {}
    if form == "functions" and callable(getattr(model, "bind", None)):
        return model.bind(functions=[schema], function_call={"name": function}, **extra)
    bind = getattr(model, "bind_tools", None)
    return bind([{"type": "function", "function": schema}], tool_choice=function, **extra) if callable(bind) \
        else model


def _ask_authors(model: ModelLike, book: PromptBook, slot: str, function: str, values: Mapping[str, Any],
                 config: RunnableConfig | None, inputs: dict[str, Any], labels: Sequence[str], stage: Stage,
                 on_usage: Meter | None = None, request: ToolEvalRequest | None = None) -> JudgeResult:
    """One check as ToolEval's `function_call(func_name, func_args, return_reason=True)` makes it (module docstring):
    the function's schema with the `reason` property appended (`required` gets "reason" last), the filled template
    as the only user message, in `request`'s call form (default: StableToolBench's `tools=`)."""
    schema = copy.deepcopy(dict(book.data[f"function:{function}"]))
    params = schema.setdefault("parameters", {"type": "object", "properties": {}})
    params.setdefault("properties", {})["reason"] = dict(book.data["reason_property"])
    params["required"] = [*params.get("required", []), "reason"]
    prompt: list[BaseMessage] = [HumanMessage(book.fill(slot, **values))]
    form: CallForm = request.sent_form if request is not None else "tools"
    seed = request.seed if request is not None and speaks_functions(model) else None
    if form == "functions" and request is not None and not speaks_functions(model):
        request.refused("not an OpenAI-compatible client: the check is sent with tools=")
        form = "tools"
    try:
        reply, used = call_role(_bound(model, schema, function, form, seed), JUDGE_ROLE, prompt, config,
                                inputs=inputs, on_usage=on_usage)
    except ModelCallError as exc:
        if form != "functions" or request is None or not refuses_functions(exc):
            raise
        request.refused(shorten(str(exc), 200))  # as the OPPO tasks do: tools= from now on, and recorded
        reply, used = call_role(_bound(model, schema, function, "tools", seed), JUDGE_ROLE, prompt, config,
                                inputs=inputs, on_usage=on_usage)
    label, reason = parse_label(reply, labels)
    if label is None:
        return JudgeResult("Unsure", f"unparseable judge reply: {reason[:300]!r}", stage, used)
    return JudgeResult(label, reason, stage, used)


def answer_json(final_answer: str, process: Any) -> str:
    """`json.dumps(answer)` of ToolEval's second stage: the answer as a whole. A `process` in ToolEval's converted
    form (a mapping with `answer_details`: `eval/anytool/passrate.py tooleval_inputs`) is dumped as it is, uncut
    (`rtl.py check_is_solved`: `'answer': json.dumps(answer)`); otherwise {final answer, its details}."""
    if isinstance(process, Mapping) and "answer_details" in process:
        return json.dumps(process)
    details = process if not isinstance(process, str) else process.strip()
    return _clip(json.dumps({"final_answer": final_answer, "answer_details": details}, default=str),
                 MAX_PROCESS_CHARS)


def check_answer_status(model: ModelLike, query: str, final_answer: str, *,
                        config: RunnableConfig | None = None, inputs: Mapping[str, Any] | None = None,
                        on_usage: Meter | None = None, book: PromptBook | None = None,
                        request: ToolEvalRequest | None = None) -> JudgeResult:
    """Stage 1 (ToolEval `check_answer_status`): Solved / Unsolved / Unsure from the query and final answer."""
    answer = _clip(final_answer.strip(), MAX_ANSWER_CHARS)
    meta = {**(inputs or {}), "query": query, "answer": final_answer, "stage": "answer"}
    if book is not None:  # rtl.py check_is_solved: 'answer': answer['final_answer'], as it is
        return _ask_authors(model, book, "judge_answer", "check_answer_status", {"query": query, "answer": final_answer},
                            config, meta, ANSWER_LABELS, "answer", on_usage, request)
    return _ask(model, ANSWER_STATUS_SYSTEM, ANSWER_STATUS_USER.format(query=query, answer=answer), config,
                meta, ANSWER_LABELS, "answer", on_usage)


def parse_answer_status(model: ModelLike, query: str, final_answer: str, process: Any, *,
                        config: RunnableConfig | None = None, inputs: Mapping[str, Any] | None = None,
                        on_usage: Meter | None = None, book: PromptBook | None = None,
                        request: ToolEvalRequest | None = None) -> JudgeResult:
    """Stage 2 (ToolEval `parse_answer_status`): Solved / Unsolved / Unsure from the whole answer process
    (API calls with their results, as text or JSON-able data)."""
    answer = _clip(final_answer.strip(), MAX_ANSWER_CHARS)
    meta = {**(inputs or {}), "query": query, "answer": final_answer, "stage": "process"}
    if book is not None:
        return _ask_authors(model, book, "judge_process", "parse_answer_status",
                            {"query": query, "answer_json": answer_json(answer, process)}, config, meta,
                            ANSWER_LABELS, "process", on_usage, request)
    user = PROCESS_STATUS_USER.format(query=query, process=render_process(process), answer=answer)
    return _ask(model, PROCESS_STATUS_SYSTEM, user, config, meta, ANSWER_LABELS, "process", on_usage)


def check_is_solved(model: ModelLike, query: str, final_answer: str, process: Any, *,
                    config: RunnableConfig | None = None, inputs: Mapping[str, Any] | None = None,
                    on_usage: Meter | None = None, book: PromptBook | None = None,
                        request: ToolEvalRequest | None = None) -> JudgeResult:
    """ToolEval's two-stage check: the empty-answer rule, stage 1, and stage 2 on an Unsure of stage 1.

    The returned usage covers both stages; the reason and stage are those of the deciding check. `inputs` adds
    structured inputs to the calls' metadata (e.g. the in-loop judge's API call records). `on_usage` gets each
    call's usage as it is made (`Deps.meter`: the run's tallies and its retry guard), so a second stage that fails
    for good still leaves the first one counted."""
    if is_empty_answer(final_answer):
        return JudgeResult("Unsolved", "the final answer is empty (or a give_up_and_restart)", "rule", RoleUsage())
    first = check_answer_status(model, query, final_answer, config=config, inputs=inputs, on_usage=on_usage, book=book,
                                request=request)
    if first.label != "Unsure":
        return first
    second = parse_answer_status(model, query, final_answer, process, config=config, inputs=inputs, on_usage=on_usage,
                                 book=book, request=request)
    return JudgeResult(second.label, second.reason, "process", add_usage(first.usage, second.usage))


def _tools_text(tools: Any) -> str:
    if isinstance(tools, str):
        return tools
    return _clip(json.dumps(tools, ensure_ascii=False, default=str, indent=1), MAX_PROCESS_CHARS)


def check_task_solvable(model: ModelLike, query: str, tools: Any, *, config: RunnableConfig | None = None,
                        has_been_solved: bool = False, book: PromptBook | None = None,
                        request: ToolEvalRequest | None = None) -> JudgeResult:
    """ToolEval `check_task_solvable`: Solvable / Unsolvable / Unsure for the query with these tools (a list of
    tool or API descriptions, or text). As in ToolEval, a query already judged solved is Solvable without a call."""
    if has_been_solved:
        return JudgeResult("Solvable", "the task has been solved", "rule", RoleUsage())
    meta = {"query": query, "answer": "", "stage": "task"}
    if book is not None:  # rtl.py check_task_solvable: {'task': json.dumps(task_description)}, uncut
        task = json.dumps({"query": query, "available_tools": tools}, default=str)
        return _ask_authors(model, book, "judge_task", "check_task_solvable", {"task_json": task}, config, meta,
                            TASK_LABELS, "task", None, request)
    return _ask(model, TASK_SOLVABLE_SYSTEM, TASK_SOLVABLE_USER.format(query=query, tools=_tools_text(tools)), config,
                meta, TASK_LABELS, "task")
