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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from ..catalog import Catalog
from ..catalog.models import Api, Category, Param, Tool, normalize_param_type
from ..catalog.naming import slugify
from ..config import AnyToolConfig
from ..llm import ModelNotConfiguredError, ModelSet, call_role
from ..nodes.solver import prompts
from ..nodes.solver.dfsdt import describe_functions, solver_system, text_of, tool_schemas
from ..nodes.solver.finish import FINISH_NAME, finish_schema
from ..nodes.solver.textmode import TextToolRunnable, bind_role_tools, format_inputs, umi_template
from ..nodes.solver.tree import message_to_dict
from ..nodes.solver.umi import parse_next, render_history, umi_inputs
from ..runtime import Deps
from .step_data import FunctionSpec, StepCase
from .step_metrics import Plan

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
    runnable = bind_role_tools(models.for_role("solver"), config, "solver", schemas)
    inputs: dict[str, Any] = {"query": case.query, "functions": list(tools.functions), "step": case.step,
                              **format_inputs(config, "solver", text=isinstance(runnable, TextToolRunnable))}
    if inputs["text_mode"]:  # the prompt holds the history as text only: give it as structured data too
        inputs["history"] = [message_to_dict(m) for m in history]
    ai, _ = call_role(runnable, "solver", prompt, None, inputs=inputs)
    thought = text_of(ai).strip()
    call = _first_call(ai)
    if call is None:
        return Prediction(plan=None, thought=thought, error="no function call")
    name, args = call
    if name == FINISH_NAME:
        fin = args if isinstance(args, Mapping) else {}
        if str(fin.get("return_type", "")).strip().lower() == "give_answer":
            return Prediction(plan="conclusion", thought=thought, answer=str(fin.get("final_answer") or ""))
        return Prediction(plan="give_up", thought=thought)
    return Prediction(plan="call", thought=thought, action=tools.to_recorded.get(name, name), args=args)


def predict_multi(case: StepCase, tools: StepTools, models: ModelSet, config: AnyToolConfig) -> Prediction:
    """Multi-model mode: the planner decides; the caller or the summarizer completes the step."""
    deps = _deps(tools, models, config)
    history = _renamed(case.history, tools.to_shown)
    doc = describe_functions(deps, tools.functions, with_params=True)
    planner_system = umi_template(config, "planner").format(doc=doc, history=render_history(history), diversity="")
    ai, _ = call_role(models.for_role("planner"), "planner",
                      [SystemMessage(content=planner_system), HumanMessage(content=case.query)], None,
                      inputs={**umi_inputs(history, tools.functions), **format_inputs(config, "planner")})
    thought = text_of(ai).strip()
    decision, _ = parse_next(thought)
    if decision == "give_up":
        return Prediction(plan="give_up", thought=thought)
    if decision == "summarizer":
        system = umi_template(config, "summarizer").format(history=render_history(history), thought=thought)
        reply, _ = call_role(models.for_role("summarizer"), "summarizer",
                             [SystemMessage(content=system), HumanMessage(content=case.query)], None,
                             inputs={**umi_inputs(history, tools.functions, thought),
                                     **format_inputs(config, "summarizer")})
        return Prediction(plan="conclusion", thought=thought, answer=text_of(reply).strip())
    system = umi_template(config, "caller").format(doc=doc, history=render_history(history), thought=thought,
                                                   tool_names=", ".join(tools.functions))
    runnable = bind_role_tools(models.for_role("caller"), config, "caller", tool_schemas(deps, tools.functions))
    reply, _ = call_role(runnable, "caller", [SystemMessage(content=system), HumanMessage(content=case.query)], None,
                         inputs={**umi_inputs(history, tools.functions, thought),
                                 **format_inputs(config, "caller", text=isinstance(runnable, TextToolRunnable))})
    call = _first_call(reply)
    if call is None:
        return Prediction(plan="call", thought=thought, error="the caller made no function call")
    name, args = call
    return Prediction(plan="call", thought=thought, action=tools.to_recorded.get(name, name), args=args)


def predict_step(case: StepCase, tools: StepTools, models: ModelSet, config: AnyToolConfig, mode: Mode) -> Prediction:
    """A prediction, or one carrying the error when a model call fails (the step then counts as missed)."""
    try:
        if mode == "single":
            return predict_single(case, tools, models, config)
        return predict_multi(case, tools, models, config)
    except ModelNotConfiguredError:
        raise
    except Exception as exc:  # a provider error costs this step, not the run
        return Prediction(plan=None, error=f"{type(exc).__name__}: {exc}")
