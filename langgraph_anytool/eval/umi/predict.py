"""Teacher-forced prediction of one reference step (α-UMi Appendix C, Eq. 5: r̂_t, â_t = Agent(τ*_<t)).

Two agents, both built from the solver's own prompt builders (`nodes/solver`):
- single-model mode: our DFSDT solver's prompt (`solver_system`, `prompts.QUERY`) and function calling with
  the step's functions plus `Finish`; a function call is a `call`, `Finish(give_answer)` a `conclusion`,
  `Finish(give_up_and_restart | give_up)` a `give_up`;
- multi-model mode: α-UMi's planner (`Next:` decision via `parse_next`), then the caller (one function call) or
  the summarizer (the answer), each its own model role, with the prompts `nodes/solver/umi.py` uses.

The step's functions become a small catalog (one tool per `_for_` suffix) so the builders describe them exactly
as the solver would; a function whose recorded name the catalog cannot reproduce is shown under the catalog's
name and mapped back when scoring. Every model call goes through `llm.call_role`.

What is scored is read from the replies as the authors' scorers read text (X-PLUG/Multi-LLM-Agent
`GLPFT/inference_utils/toolbench/evaluate-backbone.py` and `evaluate-multi_agent.py`, `parse_output`), after the
output clean-up of their inference scripts (`step_metrics.authors_candidate`):
- a native function call is taken as it is (name; arguments as parsed, or the raw text of unusable ones);
- a call written as text (text mode) is read from the raw reply (`parse_call_text`): the action after the last
  `Action:`, the input after the last `Action Input:` as written — an empty `Action Input:` is "", which the
  scorer cannot parse (Arg. F1 0), and a Python-literal dict is not JSON either;
- single mode, a call written as text or a reply without any call: the raw reply read as `evaluate-backbone.py`
  reads it (`parse_backbone_reply`): "conclusion: give up" → give up, "conclusion: <answer>" → a conclusion (both
  before any `Action:` line), anything else → a call of the `Action:` it names, or of "none";
- multi mode: the planner's decision as `infer_pipeline.py` reads it with the `alpha_umi` prompt profile (the
  authors' format; `authors_planner_decision`), as our solver reads it with our own prompts (`parse_next`); then
  the string `infer_pipeline.py` writes ("asssitant: <planner prediction></s>caller: <caller output>" or
  "...</s>conclusion: <summarizer output>") read whole by `evaluate-multi_agent.py` `parse_output`: a "Next: give
  up" / "Next: conclusion" anywhere in it decides the plan, else the caller's text is the call (a reply without a
  call → a call of "none"); a native function call of the caller is taken as it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig

from ...catalog import Catalog
from ...catalog.models import Api, Category, Param, Tool, normalize_param_type
from ...catalog.naming import slugify
from ...config import AnyToolConfig
from ...models.llm import ModelNotConfiguredError, ModelSet, call_role
from ...nodes.solver import prompts
from ...nodes.solver.dfsdt import describe_functions, solver_system, text_of, tool_schemas
from ...nodes.solver.finish import finish_schema
from ...nodes.solver.textmode import TextToolRunnable, bind_role_tools, format_inputs, umi_template
from ...nodes.solver.tree import message_to_dict
from ...nodes.solver.umi import parse_next, render_history, umi_inputs
from ...paper_prompts import PromptBook
from ...protocol import FINISH_NAME, render_action
from ...runtime import Deps
from .data import UMI_TEXT, FunctionSpec, StepCase
from .metrics import NO_ACTION, Plan, authors_candidate, parse_backbone_reply, parse_multi_agent_reply

Mode = Literal["single", "multi"]
ModelsFor = Callable[[Catalog], ModelSet]  # the models for a step's catalog (the offline stand-in needs it)

_NAME_OK = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_CATEGORY = "steps"


@dataclass(frozen=True)
class Prediction:
    """What the model predicted for a step (names as recorded in the step file)."""

    plan: Plan | None
    thought: str = ""
    action: str | None = None
    args: Any = None
    answer: str | None = None
    error: str = ""


@dataclass(frozen=True)
class StepTools:
    """The step's functions as a catalog, with the shown ↔ recorded name maps."""

    catalog: Catalog
    functions: dict[str, str]  # shown function name -> API id (the solver's `functions` mapping)
    to_recorded: dict[str, str]
    to_shown: dict[str, str]


def _params(schema: Mapping[str, Any]) -> tuple[Param, ...]:
    props = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
    required = set(schema.get("required") or [])
    out = []
    for name, spec in (props or {}).items():
        spec = spec if isinstance(spec, Mapping) else {}
        out.append(Param(name=str(name), type=normalize_param_type(spec.get("type")) or "string",
                         description=str(spec.get("description") or ""), required=name in required,
                         default=spec.get("example_value", spec.get("default"))))
    return tuple(out)


def step_tools(functions: Sequence[FunctionSpec]) -> StepTools:
    """A catalog holding the step's functions (ToolBench names `<api>_for_<tool>` are kept as they are)."""
    by_tool: dict[str, list[Api]] = {}
    ids: dict[str, str] = {}  # recorded name -> api id
    for fn in functions:
        if fn.name in ids:
            continue
        if _NAME_OK.match(fn.name) and "_for_" in fn.name.strip("_"):
            api_key, tool_key = fn.name.split("_for_", 1)
            if not api_key or not tool_key:
                api_key, tool_key = slugify(fn.name), "functions"
        else:
            api_key, tool_key = slugify(fn.name), "functions"
        api_id = f"{_CATEGORY}/{tool_key}/{api_key}"
        n = 2
        while api_id in ids.values():
            api_id = f"{_CATEGORY}/{tool_key}/{api_key}_{n}"
            n += 1
        ids[fn.name] = api_id
        by_tool.setdefault(tool_key, []).append(Api(
            id=api_id, name=fn.name, tool_key=tool_key, tool_name=tool_key, category=_CATEGORY,
            description=fn.description, params=_params(fn.parameters)))
    tools = tuple(Tool(key=k, name=k, category=_CATEGORY, apis=tuple(v)) for k, v in by_tool.items())
    catalog = Catalog([Category(name=_CATEGORY, tools=tools)], name="step-functions")
    to_shown = {rec: catalog.function_name(api_id) for rec, api_id in ids.items()}
    return StepTools(catalog=catalog, functions={to_shown[rec]: ids[rec] for rec in ids},
                     to_recorded={v: k for k, v in to_shown.items()}, to_shown=to_shown)


def _renamed(history: Sequence[BaseMessage], to_shown: Mapping[str, str]) -> list[BaseMessage]:
    """The history with recorded function names replaced by the names the model is shown."""
    out: list[BaseMessage] = []
    for m in history:
        if isinstance(m, AIMessage) and (m.tool_calls or m.invalid_tool_calls):
            calls = [{**tc, "name": to_shown.get(tc["name"], tc["name"])} for tc in m.tool_calls]
            bad = [{**tc, "name": to_shown.get(str(tc.get("name")), tc.get("name"))} for tc in m.invalid_tool_calls]
            out.append(m.model_copy(update={"tool_calls": calls, "invalid_tool_calls": bad}))
        elif isinstance(m, ToolMessage) and m.name:
            out.append(m.model_copy(update={"name": to_shown.get(m.name, m.name)}))
        else:
            out.append(m)
    return out


def _deps(tools: StepTools, models: ModelSet, config: AnyToolConfig) -> Deps:
    # The prompt builders read the catalog and the config only; no API is executed here.
    return Deps(catalog=tools.catalog, models=models, executor=cast(Any, None), config=config)


class _RawReply(Runnable[Any, BaseMessage]):
    """A chat model that remembers its last reply's text (text mode parses replies; the scorer reads the raw text)."""

    def __init__(self, model: Runnable[Any, BaseMessage]) -> None:
        self.model = model
        self.text: str | None = None

    @property
    def bound(self) -> Runnable[Any, BaseMessage]:
        return self.model

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> BaseMessage:
        reply = self.model.invoke(input, config, **kwargs)
        self.text = text_of(reply)
        return reply


def _keep_raw(runnable: Runnable[Any, BaseMessage]) -> tuple[Runnable[Any, BaseMessage], _RawReply | None]:
    """`runnable`, with a text-mode model wrapped so that its raw reply text stays readable."""
    if isinstance(runnable, TextToolRunnable):
        raw = _RawReply(runnable.model)
        return TextToolRunnable(raw, runnable.tools), raw
    return runnable, None


def _call_prediction(plan: Plan, thought: str, tools: StepTools, name: str, args: Any) -> Prediction:
    return Prediction(plan=plan, thought=thought, action=tools.to_recorded.get(name, name), args=args)


def _first_call(ai: AIMessage) -> tuple[str, Any] | None:
    if ai.tool_calls:
        return ai.tool_calls[0]["name"], ai.tool_calls[0]["args"]
    if ai.invalid_tool_calls:
        return str(ai.invalid_tool_calls[0].get("name") or ""), ai.invalid_tool_calls[0].get("args")
    return None


def predict_single(case: StepCase, tools: StepTools, models: ModelSet, config: AnyToolConfig) -> Prediction:
    """Single-model mode: one DFSDT solver call from the reference history."""
    deps = _deps(tools, models, config)
    history = _renamed(case.history, tools.to_shown)
    prompt: list[BaseMessage] = [
        SystemMessage(content=solver_system(deps, tools.functions)),
        HumanMessage(content=prompts.QUERY.format(query=case.query)),
        *history,
    ]
    schemas = [*tool_schemas(deps, tools.functions), finish_schema(allow_restart=True)]
    runnable, raw = _keep_raw(bind_role_tools(models.for_role("solver"), config, "solver", schemas))
    inputs: dict[str, Any] = {"query": case.query, "functions": list(tools.functions), "step": case.step,
                              **format_inputs(config, "solver", text=isinstance(runnable, TextToolRunnable))}
    if inputs["text_mode"]:  # the prompt holds the history as text only: give it as structured data too
        inputs["history"] = [message_to_dict(m) for m in history]
    ai, _ = call_role(runnable, "solver", prompt, None, inputs=inputs)
    thought = text_of(ai).strip()
    call = _first_call(ai)
    if call is not None and call[0] == FINISH_NAME:
        fin = call[1] if isinstance(call[1], Mapping) else {}
        if str(fin.get("return_type", "")).strip().lower() == "give_answer":
            return Prediction(plan="conclusion", thought=thought, answer=str(fin.get("final_answer") or ""))
        return Prediction(plan="give_up", thought=thought)
    if call is not None and raw is None:  # a native function call
        return _call_prediction("call", thought, tools, *call)
    text = authors_candidate((raw.text or "") if raw is not None else text_of(ai))
    # a call written as text, or no call at all: the raw reply as evaluate-backbone.py parse_output reads it —
    # "conclusion: give up" / "conclusion: " anywhere come before any `Action:` line
    parsed = parse_backbone_reply(text)
    if parsed.plan != "call":
        return Prediction(plan=parsed.plan, thought=thought, answer=parsed.answer)
    pred = _call_prediction("call", thought, tools, _action(parsed.action), parsed.action_input)
    return pred if call is not None else replace(pred, error="no function call (read as evaluate-backbone.py reads "
                                                               "a reply)")


def _action(name: str | None) -> str:
    # the scorer's action string: "" (an `Action:` line with nothing after it) stays "", not "none"
    return NO_ACTION if name is None else name


def authors_planner_decision(text: str) -> tuple[str, str]:
    """(decision, planner prediction) as `infer_pipeline.py` splits a planner output: "Next: give up." anywhere →
    give up, else "Next: conclusion." → the summarizer, else the caller; the text is cut after the first such
    marker ("Next: caller." is appended when there is none), and that cut text is the thought the next role gets."""
    for marker, decision in (("Next: give up.", "give_up"), ("Next: conclusion.", "summarizer"),
                             ("Next: caller.", "caller")):
        if marker in text:
            return decision, text[: text.index(marker) + len(marker)]
    return "caller", text + "Next: caller."


# ------------------------------------------------------------------------------------------ the authors' prompts
def authors_doc(case: StepCase) -> str:
    """`{doc}` as infer_pipeline.py builds it: one `json.dumps(tool)` line per tool (α-UMi test files: the tool as
    recorded; ToolBench answer files: name, description and parameters)."""
    return "".join(json.dumps(f.raw if f.raw is not None else
                              {"name": f.name, "description": f.description, "parameters": f.parameters}) + "\n"
                   for f in case.functions)


def authors_dispatch(case: StepCase) -> str:
    """`{history}` as infer_pipeline.py `build_infer_samples` builds `dispatch`: each turn as "<from>: <value>"
    followed by "</s>" (no "</s>" after an observation), the user's query first. A caller turn is the text the
    test file recorded (`Action: ...` / `Action Input: ...`), a ToolBench call written that way. The first line is
    the conversation's first turn as the α-UMi file records it (`u['value']`, not the `instruction`: a trailing
    newline stays), else the query."""
    out = case.opening if case.opening is not None else f"user: {case.query}</s>"
    for m in case.history:
        if isinstance(m, ToolMessage):
            out += f"observation: {text_of(m)}"
        elif isinstance(m, HumanMessage):
            out += f"user: {text_of(m)}</s>"
        elif isinstance(m, AIMessage):
            recorded = m.additional_kwargs.get(UMI_TEXT)
            if m.name == "caller" and isinstance(recorded, str):
                out += f"caller: {recorded}</s>"
                continue
            text = text_of(m)  # as written: a turn's trailing newline stays before "</s>" (`u['value']`)
            if text.strip():
                out += f"{'conclusion' if m.name == 'summarizer' else 'assistant'}: {text}</s>"
            for tc in m.tool_calls:
                out += f"caller: {render_action(tc['name'], tc['args'])}</s>"
            for bad in m.invalid_tool_calls:
                out += f"caller: Action: {bad.get('name')}\nAction Input: {bad.get('args') or ''}</s>"
    return out


def _authors_input(book: PromptBook, role: str, case: StepCase, thought: str = "") -> str:
    """A role's whole input as infer_pipeline.py makes it: the prompt filled by `.replace`, then the turn's cue
    (" assistant: ", " caller: ", " conclusion: "); the caller and the summarizer see the planner's prediction
    appended to the history ("planner: <prediction></s>")."""
    dispatch = authors_dispatch(case)
    if role == "planner":
        return book.fill("planner", doc=authors_doc(case), history=dispatch) + " assistant: "
    dispatch += f"planner: {thought}</s>"
    if role == "caller":
        return book.fill("caller", doc=authors_doc(case), history=dispatch, thought=thought,
                         tool_names=", ".join(case.function_names)) + " caller: "
    return book.fill("summarizer", history=dispatch) + " conclusion: "


def predict_multi(case: StepCase, tools: StepTools, models: ModelSet, config: AnyToolConfig,
                  book: PromptBook | None = None) -> Prediction:
    """Multi-model mode: the planner decides; the caller or the summarizer completes the step. With α-UMi's own
    prompts (`book`, `paper_prompts.umi_book`), each role's whole input is one user message built as the authors'
    infer_pipeline.py builds it (`_authors_input`), and the replies are read in α-UMi's format (the prompt profile
    "alpha_umi", which the offline stand-in also writes)."""
    if book is not None:
        config = replace(config, umi_prompts="alpha_umi")
    deps = _deps(tools, models, config)
    history = _renamed(case.history, tools.to_shown)
    doc = describe_functions(deps, tools.functions, with_params=True)
    if book is not None:
        planner_prompt: list[BaseMessage] = [HumanMessage(content=_authors_input(book, "planner", case))]
    else:
        planner_system = umi_template(config, "planner").format(doc=doc, history=render_history(history),
                                                                diversity="")
        planner_prompt = [SystemMessage(content=planner_system), HumanMessage(content=case.query)]
    ai, _ = call_role(models.for_role("planner"), "planner", planner_prompt, None,
                      inputs={"query": case.query, **umi_inputs(history, tools.functions),
                              **format_inputs(config, "planner")})
    umi_format = config.umi_prompts == "alpha_umi"
    if umi_format:  # the planner writes the authors' format: read it their way
        decision, thought = authors_planner_decision(authors_candidate(text_of(ai)))
    else:  # our prompts ("Next: summarizer", ...): our solver's reading
        thought = text_of(ai).strip()
        decision, _ = parse_next(thought)
    if decision == "give_up":
        return Prediction(plan="give_up", thought=thought)
    if decision == "summarizer":
        if book is not None:
            prompt: list[BaseMessage] = [HumanMessage(content=_authors_input(book, "summarizer", case, thought))]
        else:
            system = umi_template(config, "summarizer").format(history=render_history(history), thought=thought)
            prompt = [SystemMessage(content=system), HumanMessage(content=case.query)]
        reply, _ = call_role(models.for_role("summarizer"), "summarizer", prompt, None,
                             inputs={"query": case.query, **umi_inputs(history, tools.functions, thought),
                                     **format_inputs(config, "summarizer")})
        # infer_pipeline.py writes "asssitant: <planner prediction></s>conclusion: <summarizer output>";
        # evaluate-multi_agent.py parse_output reads that whole string (usually the text after the last
        # "conclusion: ")
        return _authors_reading(f"{_planner_part(umi_format, thought, 'Next: conclusion.')}</s>conclusion: "
                                f"{authors_candidate(text_of(reply))}", thought, tools)
    if book is not None:
        caller_prompt: list[BaseMessage] = [HumanMessage(content=_authors_input(book, "caller", case, thought))]
    else:
        system = umi_template(config, "caller").format(doc=doc, history=render_history(history), thought=thought,
                                                       tool_names=", ".join(tools.functions))
        caller_prompt = [SystemMessage(content=system), HumanMessage(content=case.query)]
    if book is not None:  # the authors' caller completes their text alone: no tools bound, no tool list added
        # (infer_pipeline.py `infer`: `model_input_for_caller` is the model's whole input; the call is read from
        # the text by evaluate-multi_agent.py parse_output)
        plain = _RawReply(models.for_role("caller"))
        runnable: Runnable[Any, BaseMessage] = plain
        raw: _RawReply | None = plain
    else:
        runnable, raw = _keep_raw(bind_role_tools(models.for_role("caller"), config, "caller",
                                                  tool_schemas(deps, tools.functions)))
    reply, _ = call_role(runnable, "caller", caller_prompt, None,
                         inputs={"query": case.query, **umi_inputs(history, tools.functions, thought),
                                 **format_inputs(config, "caller", text=raw is not None)})
    call = _first_call(reply)
    head = f"{_planner_part(umi_format, thought, 'Next: caller.')}</s>caller: "
    if call is not None and raw is None:  # a native function call, unless the planner part decides otherwise
        planned = _authors_reading(head, thought, tools)
        return _call_prediction("call", thought, tools, *call) if planned.plan == "call" else planned
    # text: infer_pipeline.py's "asssitant: <planner prediction></s>caller: <caller output>", read whole by
    # evaluate-multi_agent.py parse_output (a "Next: give up" / "Next: conclusion" anywhere decides the plan; else
    # the call part after the first "</s>")
    pred = _authors_reading(head + authors_candidate((raw.text or "") if raw is not None else text_of(reply)),
                            thought, tools)
    return pred if call is not None or pred.plan != "call" or book is not None else \
        replace(pred, error="the caller made no function call")


def _planner_part(umi_format: bool, thought: str, marker: str) -> str:
    """The planner's part of infer_pipeline.py's prediction string: "asssitant: " (sic) and the planner
    prediction as cut by `authors_planner_decision` (alpha_umi prompts, or α-UMi's own); with our own prompts
    ("Next: summarizer", ...) the authors' marker of the decision our parser read stands in for it."""
    return f"asssitant: {thought}" if umi_format else marker


def _authors_reading(text: str, thought: str, tools: StepTools) -> Prediction:
    """A multi-model prediction string read by evaluate-multi_agent.py parse_output."""
    parsed = parse_multi_agent_reply(text)
    if parsed.plan != "call":
        return Prediction(plan=parsed.plan, thought=thought, answer=parsed.answer)
    return _call_prediction("call", thought, tools, _action(parsed.action), parsed.action_input)


def predict_step(case: StepCase, tools: StepTools, models: ModelSet, config: AnyToolConfig, mode: Mode,
                 book: PromptBook | None = None) -> Prediction:
    """A prediction, or one carrying the error when a model call fails (the step then counts as missed).
    `book`: α-UMi's own role prompts (multi mode)."""
    try:
        if mode == "single":
            return predict_single(case, tools, models, config)
        return predict_multi(case, tools, models, config, book)
    except ModelNotConfiguredError:
        raise
    except Exception as exc:  # a provider error costs this step, not the run
        return Prediction(plan=None, error=f"{type(exc).__name__}: {exc}")
