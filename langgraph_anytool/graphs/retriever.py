"""The hierarchical API retriever (AnyTool §4.1) as reusable graph parts and as a standalone graph.

`add_retriever(builder, deps, done=...)` adds `dispatch` and the three agent-loop nodes to any graph whose state
has the retriever's keys (`AnyToolState` does); `init_retrieval(state)` creates the meta-agent record. Flow:

    init → dispatch ⇉ (Send) meta_agent | category_agent | tool_agent → dispatch … → done

Each superstep, `dispatch` starts the pending agents (children recorded by the previous superstep's agents), so
siblings run in parallel; retrieval is over when no agent is pending, the pool is judged solvable or full, or
the token budget is spent.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, NotRequired, TypedDict, cast

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from ..catalog import Catalog
from ..config import AnyToolConfig
from ..llm import ModelSpec, merge_usage
from ..nodes.dispatch import make_dispatch, make_route_dispatch
from ..state import RESET, AgentRecord, PoolEntry, latest_round, merge_agents, update_pool
from .agent_loop import NODE_FOR_LEVEL, build_agent_loop, new_agent_record

if TYPE_CHECKING:
    from ..runtime import Deps

META_AGENT_ID = "meta"


class RetrieverInput(TypedDict):
    query: str


class RetrieverState(TypedDict):
    """The retriever's keys (a subset of `AnyToolState`)."""

    query: str
    run_key: NotRequired[str]
    round: NotRequired[int]
    agents: Annotated[dict[str, AgentRecord], merge_agents]
    to_start: NotRequired[list[str]]
    api_pool: Annotated[list[PoolEntry], update_pool]
    solvable_round: Annotated[int, latest_round]
    usage: Annotated[dict[str, Any], merge_usage]


class RetrieverOutput(TypedDict):
    query: str
    api_pool: list[PoolEntry]
    agents: dict[str, AgentRecord]
    solvable_round: int
    usage: dict[str, Any]


def init_retrieval(state: Mapping[str, Any]) -> dict[str, Any]:
    """The state update that starts retrieval: a pending meta-agent record."""
    return {"agents": {META_AGENT_ID: new_agent_record(META_AGENT_ID, "meta")}}


def add_retriever(builder: StateGraph[Any, Any, Any, Any], deps: Deps, *, done: str) -> None:
    """Add `dispatch`, `meta_agent`, `category_agent`, `tool_agent` and their edges; `done` follows retrieval."""
    builder.add_node("dispatch", cast(Any, make_dispatch(deps)))
    for level, node in NODE_FOR_LEVEL.items():
        builder.add_node(node, build_agent_loop(level, deps))
        builder.add_edge(node, "dispatch")
    builder.add_conditional_edges("dispatch", make_route_dispatch(done), [*NODE_FOR_LEVEL.values(), done])


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

    `model` / `models` as in `create_anytool_graph` (roles meta, category, tool, solvable). The retriever
    executes no API, so `executor` may be None. `deps` (a `runtime.Deps`) overrides all of these.
    """
    from ..llm import ModelSet
    from ..runtime import Deps, RunSignals

    if deps is None:
        cfg = config or AnyToolConfig()
        model_set = ModelSet.resolve(model, {**cfg.models, **dict(models or {})})
        deps = Deps(catalog=catalog, models=model_set, executor=cast(Any, executor), config=cfg, signals=RunSignals())

    def init(state: RetrieverInput) -> dict[str, Any]:
        retrieval = init_retrieval(state)
        return {"run_key": uuid.uuid4().hex, "round": 0, "agents": {RESET: True, **retrieval["agents"]},
                "api_pool": {"reset": True}, "solvable_round": -1, "usage": {RESET: True}}

    run_deps = deps

    def finish(state: RetrieverState) -> dict[str, Any]:
        run_deps.signals.forget(state.get("run_key", ""))  # the run's stop signal and token tally
        return {}

    builder = StateGraph(RetrieverState, input_schema=RetrieverInput, output_schema=RetrieverOutput)
    builder.add_node("init", init)
    add_retriever(builder, deps, done="finish")
    builder.add_node("finish", finish)
    builder.add_edge(START, "init")
    builder.add_edge("init", "dispatch")
    builder.add_edge("finish", END)
    from ..viz import offline_display

    return offline_display(builder.compile(checkpointer=checkpointer, name=name))
