"""The hierarchical API retriever (AnyTool §4.1) as reusable graph parts and as a standalone graph.

`add_retriever(builder, deps, done=...)` adds `dispatch` and the three agents' step subgraphs to any graph whose
state has the retriever's keys (`AnyToolState` does). Flow, one agent step per superstep:

    init → dispatch ⇉ (Send) meta_agent | category_agent | tool_agent → dispatch … → done

Retrieval is over when no agent is pending, the pool is judged solvable or full, or the token budget is spent.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Annotated, Any, NotRequired, cast

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer, Overwrite
from typing_extensions import TypedDict

from ..catalog import Catalog
from ..config import AnyToolConfig
from ..context import AnyToolContext
from ..models.llm import ModelSpec
from ..nodes.agents.records import NODE_FOR_LEVEL, new_agent_record
from ..nodes.dispatch import make_dispatch
from ..nodes.lifecycle import META_AGENT_ID
from ..runtime import Deps, RunSignals, resolve_models
from ..state import AgentRecord, PoolEntry, RunEvent, extend, latest_round, merge_agents, merge_usage, update_pool
from .agent_step import build_agent_step
from .subgraph import node_output


class RetrieverInput(TypedDict):
    query: str


class RetrieverState(TypedDict):
    """The retriever's keys (a subset of `AnyToolState`)."""

    query: str
    run_key: NotRequired[str]
    started_at: NotRequired[float]  # epoch seconds: the run's start, for the wall-time budget
    round: NotRequired[int]
    tick: NotRequired[int]
    agents: Annotated[dict[str, AgentRecord], merge_agents]
    api_pool: Annotated[list[PoolEntry], update_pool]
    solvable_round: Annotated[int, latest_round]
    usage: Annotated[dict[str, Any], merge_usage]
    events: Annotated[list[RunEvent], extend]  # the agent steps' entries of the run's event log


class RetrieverOutput(TypedDict):
    query: str
    api_pool: list[PoolEntry]
    agents: dict[str, AgentRecord]
    solvable_round: int
    usage: dict[str, Any]


def add_retriever(builder: StateGraph[Any, Any, Any, Any], deps: Deps, *, done: str) -> None:
    """Add `dispatch`, `meta_agent`, `category_agent`, `tool_agent` and their edges; `done` follows retrieval."""
    builder.add_node("dispatch", make_dispatch(deps, done), destinations=(*NODE_FOR_LEVEL.values(), done))
    for level, node in NODE_FOR_LEVEL.items():
        builder.add_node(node, build_agent_step(level, deps))
        builder.add_edge(node, "dispatch")


def create_retriever_graph(
    catalog: Catalog,
    model: ModelSpec | None = None,
    config: AnyToolConfig | None = None,
    executor: Any = None,
    checkpointer: Checkpointer = None,
    *,
    models: Mapping[str, ModelSpec] | None = None,
    deps: Deps | None = None,
    name: str = "retriever",
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The retriever alone: `{"query"}` → `{"api_pool", "agents", "solvable_round", "usage"}`.

    `model` / `models` as in `create_anytool_graph` (roles meta, category, tool, solvable); per-run settings
    through `context=` as there. The retriever executes no API, so `executor` may be None. `deps` (a
    `runtime.Deps`) replaces all of these.
    """
    if deps is None:
        cfg = config or AnyToolConfig()
        deps = Deps(catalog=catalog, models=resolve_models(model, models, cfg, catalog), executor=cast(Any, executor),
                    config=cfg, signals=RunSignals())
    run_deps = deps

    def init(state: RetrieverInput) -> dict[str, Any]:
        run_key, started_at = uuid.uuid4().hex, time.time()  # the start counts for `max_seconds`
        run_deps.signals.seed_start(run_key, started_at)
        return {"run_key": run_key, "started_at": started_at, "round": 0, "tick": 0,
                "agents": Overwrite({META_AGENT_ID: new_agent_record(META_AGENT_ID, "meta")}),
                "api_pool": Overwrite([]), "solvable_round": Overwrite(-1), "usage": Overwrite({}),
                "events": Overwrite([])}

    def finish(state: RetrieverState, runtime: Runtime[Any]) -> dict[str, Any]:
        run_deps.signals.forget(state.get("run_key", ""))  # the run's tallies
        return {}

    builder = StateGraph(RetrieverState, context_schema=AnyToolContext, input_schema=RetrieverInput,
                         output_schema=RetrieverOutput)
    builder.add_node("init", init)
    add_retriever(builder, deps, done="finish")
    builder.add_node("finish", finish)
    builder.add_edge(START, "init")
    builder.add_edge("init", "dispatch")
    builder.add_edge("finish", END)
    from ..viz import offline_display

    return offline_display(node_output(builder.compile(checkpointer=checkpointer, name=name)))
