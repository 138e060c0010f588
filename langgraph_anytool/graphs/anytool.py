"""The AnyTool graph: hierarchical retriever → gate → DFSDT solver → judge → (reflect → …) → finalize."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer, Send

from ..catalog import Catalog
from ..config import AnyToolConfig
from ..llm import ModelSet, ModelSpec, total_tokens
from ..nodes.judge import make_judge
from ..nodes.reflection import make_reflect, route_after_reflect
from ..runtime import Deps, RunSignals
from ..state import RESET, AnyToolInput, AnyToolOutput, AnyToolState, SolverInput
from ..tools.pipeline import ApiExecutor
from ..viz import offline_display
from .retriever import add_retriever, init_retrieval
from .solver import build_solver_graph


def default_executor(catalog: Catalog, config: AnyToolConfig) -> ApiExecutor:
    """The executor a graph uses when none is given: `config.execution` ("auto": the catalog's bound executors
    (LangChain / MCP tools), else local for the builtin catalog and HTTP otherwise)."""
    return ApiExecutor.for_catalog(catalog, kind=config.execution, max_observation_chars=config.max_observation_chars)


def make_init(deps: Deps) -> Any:
    """The `init` node: a fresh run (new run key, empty accumulators), then the meta-agent."""

    def init(state: AnyToolState) -> dict[str, Any]:
        run_key = uuid.uuid4().hex
        update: dict[str, Any] = {
            "run_key": run_key,
            "round": 0,
            "reflections": 0,
            "agents": {RESET: True},
            "api_pool": {"reset": True},
            "removed_apis": [RESET],
            "solvable_round": -1,
            "solver_attempts": [RESET],
            "pool_at_last_solve": [],
            "verdict": {},
            "answer": "",
            "status": "running",
            "reason": "",
            "usage": {RESET: True},
        }
        retrieval = init_retrieval({**state, "run_key": run_key, "round": 0})
        update["agents"] = {RESET: True, **retrieval.get("agents", {})}
        return update

    return init


def make_gate(deps: Deps) -> Any:
    """The `gate` node (reached when retrieval is over): records the pool the solver gets."""

    def gate(state: AnyToolState) -> dict[str, Any]:
        deps.signals.seed_tokens(state.get("run_key", ""), total_tokens(state.get("usage", {})))
        return {"pool_at_last_solve": sorted(e["api_id"] for e in state.get("api_pool", []))}

    return gate


def make_route_gate(deps: Deps) -> Any:
    def route_gate(state: AnyToolState) -> Send | Literal["finalize"]:
        if deps.over_budget(state.get("run_key", "")):
            return "finalize"
        payload: SolverInput = {
            "query": state["query"],
            "run_key": state.get("run_key", ""),
            "round": state.get("round", 0),
            "api_pool": list(state.get("api_pool", [])),
            "previous_attempts": list(state.get("solver_attempts", [])),
        }
        return Send("solver", payload)

    return route_gate


def make_route_judge(deps: Deps) -> Any:
    def route_judge(state: AnyToolState) -> Literal["reflect", "finalize"]:
        verdict = state.get("verdict") or {}
        if verdict.get("label") in ("Solved", "Unsure"):
            return "finalize"
        if deps.over_budget(state.get("run_key", "")):
            return "finalize"
        if state.get("reflections", 0) >= deps.config.max_reflections:
            return "finalize"
        return "reflect"

    return route_judge


def make_finalize(deps: Deps) -> Any:
    """The `finalize` node: the run's answer and status."""

    def finalize(state: AnyToolState) -> dict[str, Any]:
        attempts = state.get("solver_attempts", [])
        verdict = state.get("verdict") or {}
        last = attempts[-1] if attempts else None
        answers = [a["answer"] for a in attempts if a["finish_type"] == "give_answer" and a["answer"]]
        run_key = state.get("run_key", "")
        if last is not None and verdict.get("label") in ("Solved", "Unsure"):
            status, reason = "solved", verdict.get("reason", "")
        elif deps.over_budget(run_key) or (last is not None and last["finish_type"] == "budget"):
            status, reason = "budget_exhausted", f"token budget of {deps.config.token_budget} reached"
        elif not state.get("api_pool"):
            status, reason = "no_apis", "no API in the catalog was found relevant to the query"
        elif last is not None and last["finish_type"] != "give_answer":
            status, reason = "gave_up", last["reason"] or state.get("reason", "")
        else:
            status, reason = "unsolved", verdict.get("reason") or state.get("reason", "")
        deps.signals.forget(run_key)
        # usage was reset by init, so this is the run's total (input + output tokens over all roles)
        return {"answer": answers[-1] if answers else "", "status": status, "reason": reason,
                "usage": {"total_tokens": total_tokens(state.get("usage", {}))}}

    return finalize


def create_anytool_graph(
    catalog: Catalog | None = None,
    model: ModelSpec | None = None,
    *,
    models: Mapping[str, ModelSpec] | None = None,
    config: AnyToolConfig | None = None,
    checkpointer: Checkpointer = None,
    executor: ApiExecutor | None = None,
    name: str = "anytool",
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build (and compile) the AnyTool graph.

    `model` is a "provider:model" string (via `init_chat_model`) or a `BaseChatModel`; `models` overrides it per
    role (meta, category, tool, solvable, solver, planner, caller, summarizer, judge). Without any model
    (and no `ANYTOOL_MODEL`), raises `ModelNotConfiguredError` saying how to configure one.
    """
    cfg = config or AnyToolConfig()
    cat = catalog if catalog is not None else Catalog.builtin()
    model_set = ModelSet.resolve(model, {**cfg.models, **dict(models or {})})
    deps = Deps(catalog=cat, models=model_set, executor=executor or default_executor(cat, cfg), config=cfg,
                signals=RunSignals())

    builder = StateGraph(AnyToolState, input_schema=AnyToolInput, output_schema=AnyToolOutput)
    builder.add_node("init", make_init(deps))
    add_retriever(builder, deps, done="gate")
    builder.add_node("gate", make_gate(deps))
    builder.add_node("solver", build_solver_graph(deps))
    builder.add_node("judge", make_judge(deps))
    builder.add_node("reflect", make_reflect(deps))
    builder.add_node("finalize", make_finalize(deps))

    builder.add_edge(START, "init")
    builder.add_edge("init", "dispatch")
    builder.add_conditional_edges("gate", make_route_gate(deps), ["solver", "finalize"])
    builder.add_edge("solver", "judge")
    builder.add_conditional_edges("judge", make_route_judge(deps), ["reflect", "finalize"])
    builder.add_conditional_edges("reflect", route_after_reflect, ["dispatch", "gate", "finalize"])
    builder.add_edge("finalize", END)
    graph = builder.compile(checkpointer=checkpointer, name=name)
    # LangGraph's thread pool defaults to min(32, cores + 4) workers: size it to the agents started per superstep
    # displayed in Jupyter with our offline drawing (LangGraph's default display calls a web service)
    return offline_display(graph.with_config(max_concurrency=max(cfg.max_concurrency, 1)))
