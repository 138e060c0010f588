"""The AnyTool graph: [route →] hierarchical retriever → gate → solver → judge → (reflect → …) → finalize.

Abilities (off by default): `route` answers without tools (→ judge), `outline` plans without calling (gate →
outline → finalize); see `nodes/abilities`.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from ..catalog import Catalog
from ..config import AnyToolConfig
from ..context import AnyToolContext
from ..models.guard import RetryBudget
from ..models.llm import ModelSpec
from ..nodes.abilities import make_outline, make_route, make_route_after_init
from ..nodes.judge import make_judge
from ..nodes.lifecycle import make_finalize, make_gate, make_init
from ..nodes.reflection import make_reflect
from ..runtime import Deps, RunSignals, per_run, resolve_models
from ..state import AnyToolInput, AnyToolOutput, AnyToolState
from ..tools.pipeline import ApiExecutor
from ..viz import offline_display
from .compiled import AnyToolGraph
from .retriever import add_retriever
from .solver import build_solver_graph


def default_executor(catalog: Catalog, config: AnyToolConfig, *, persistent_cache: bool = False) -> ApiExecutor:
    """The executor a graph uses when none is given: `config.execution` ("auto": the catalog's bound executors
    (LangChain / MCP tools), else local for the builtin catalog and HTTP otherwise).

    `persistent_cache`: an on-disk response cache in the user cache dir (CLI, demo, Studio; `ANYTOOL_CACHE=off`
    turns it off; see tools/cache_defaults.py)."""
    from ..tools.cache_defaults import default_cache_path

    cache_path = default_cache_path(config.execution, catalog.fingerprint(), enabled=persistent_cache)
    return ApiExecutor.for_catalog(catalog, kind=config.execution, max_observation_chars=config.max_observation_chars,
                                   cache_path=cache_path)


def create_anytool_graph(
    catalog: Catalog | None = None,
    model: ModelSpec | None = None,
    *,
    models: Mapping[str, ModelSpec] | None = None,
    config: AnyToolConfig | None = None,
    checkpointer: Checkpointer = None,
    executor: ApiExecutor | None = None,
    name: str = "anytool",
    retry_budget: RetryBudget | None = None,
    defer_model_errors: bool = False,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build (and compile) the AnyTool graph.

    Build time: the catalog, the executor (made from `config.execution` when not given) and the default models:
    `model` is a "provider:model" string (via `init_chat_model`), "offline" (the heuristic stand-in, NOT an LLM)
    or a `BaseChatModel`; `models` overrides it per role (meta, category, tool, solvable, solver, planner, caller,
    summarizer, judge); without either, `ANYTOOL_MODEL`. A graph without any model still builds (Studio draws it);
    its runs fail with `ModelNotConfiguredError` saying how to configure one.

    Run time: `graph.invoke(input, config, context={...})` overrides any setting for one run (`AnyToolContext`:
    every `AnyToolConfig` field but `execution`, plus `model`, `models` and `profile`); the run keeps that context
    when it is resumed without one (`Command(resume=...)`: see `graphs/compiled.py`).

    An executor made here belongs to the graph: it is closed when the graph is garbage-collected.
    Pass your own (`with ApiExecutor.for_catalog(...) as ex:`) to close it at a moment of your choosing.

    Model calls retry transport faults (guard.py: `model_retries`, `retry_max_wait`, `max_retries_per_run`);
    `retry_budget` (a `RetryBudget`) caps the retries of all runs of this graph together, e.g. one batch.

    A model that cannot be made (a missing API key, a provider package not installed) fails the build with one
    line; with `defer_model_errors=True` the graph builds and each run that needs that model fails with the same
    line, unless its context names another model (Studio and the Agent Server build their graph so).
    """
    cfg = config or AnyToolConfig()
    cat = catalog if catalog is not None else Catalog.builtin()
    model_set = resolve_models(model, models, cfg, cat, defer=defer_model_errors)
    owned = executor is None
    api_executor = executor if executor is not None else default_executor(cat, cfg)
    deps = Deps(catalog=cat, models=model_set, executor=api_executor, config=cfg, signals=RunSignals(),
                retry_budget=retry_budget)

    builder = StateGraph(AnyToolState, context_schema=AnyToolContext, input_schema=AnyToolInput,
                         output_schema=AnyToolOutput)
    builder.add_node("init", make_init(deps))
    builder.add_node("route", make_route(deps), destinations=("dispatch", "judge"))  # route_tools: tool / no tool
    add_retriever(builder, deps, done="gate")
    builder.add_node("gate", make_gate(deps), destinations=("solver", "outline", "reflect", "finalize"))
    builder.add_node("solver", build_solver_graph(deps))
    builder.add_node("outline", make_outline(deps))  # plan_only: a plan over the pool, no API call
    builder.add_node("judge", make_judge(deps), destinations=("reflect", "dispatch", "finalize"))
    builder.add_node("reflect", make_reflect(deps), destinations=("dispatch", "gate", "finalize"))
    builder.add_node("finalize", make_finalize(deps))

    builder.add_edge(START, "init")
    builder.add_conditional_edges("init", per_run(make_route_after_init, deps), ["route", "dispatch"])
    builder.add_edge("solver", "judge")
    builder.add_edge("outline", "finalize")
    builder.add_edge("finalize", END)
    # LangGraph's thread pool defaults to min(32, cores + 4) workers: size it to the agent steps per superstep, plus
    # one: a streamed run (`stream(subgraphs=True)`, as the CLI and LangGraph's server stream) runs a subgraph's
    # tasks in the same pool while its node holds a worker, so a pool of max_concurrency=1 would wait for ever
    compiled = builder.compile(checkpointer=checkpointer, name=name)
    compiled.__class__ = AnyToolGraph  # a run keeps its context on resume (graphs/compiled.py)
    graph = offline_display(compiled.with_config(
        max_concurrency=max(cfg.max_concurrency, 1) + 1))  # displays in a notebook without a web service
    if owned:  # closed with the graph; at interpreter exit the process takes its sockets and threads with it
        weakref.finalize(graph, api_executor.close).atexit = False
    return graph
