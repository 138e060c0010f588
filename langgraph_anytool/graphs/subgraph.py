"""`NodeOutputGraph`: a compiled graph that, run as another graph's node, hands back its output schema, streamed or not.

LangGraph runs a subgraph node with `invoke` unless a callback handler streams (`astream_events`, `astream_log`,
LangSmith's streaming): then the node's sequence runs the subgraph with `stream` / `astream` and writes the last
chunk it yields into the parent. `invoke` yields the subgraph's *output* channels (its `output_schema`), `stream`
the *stream* channels, i.e. its whole state. So under `astream_events` every agent step wrote its input keys back
(`query`, `run_key`, `round`, …), and the parallel steps of one superstep (`Send`) wrote `query` several times:
`InvalidUpdateError: At key 'query': Can receive only one value per step`. The same graph used as a node of a
user's graph would write its internal keys into theirs.

Here a call that runs as a node of another graph (its `checkpoint_ns` is set) and does not choose its own
`output_keys` streams the output channels, as `invoke` does, so a node's writes are the same whichever way the
parent runs it. Called on its own (top level), the graph streams as any LangGraph graph does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing
from typing import Any

from langchain_core.runnables import RunnableConfig, ensure_config
from langgraph.graph.state import CompiledStateGraph


def runs_as_node(config: RunnableConfig | None) -> bool:
    """Whether a call runs as a node of another graph (LangGraph gives a subgraph's call a checkpoint namespace)."""
    configurable = ensure_config(config).get("configurable") or {}
    return bool(configurable.get("checkpoint_ns"))


class NodeOutputGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """A compiled graph whose writes as another graph's node are its output schema, however the parent runs it."""

    def _node_kwargs(self, config: RunnableConfig | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        if kwargs.get("output_keys") is None and kwargs.get("stream_mode") in (None, "values") \
                and runs_as_node(config):
            kwargs["output_keys"] = self.output_channels
        return kwargs

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[Any]:
        return super().stream(input, config, **self._node_kwargs(config, kwargs))

    async def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        inner: Any = super().astream(input, config, **self._node_kwargs(config, kwargs))
        async with aclosing(inner):
            async for chunk in inner:
                yield chunk


def node_output(compiled: CompiledStateGraph[Any, Any, Any, Any]) -> NodeOutputGraph:
    """The same compiled graph, as a `NodeOutputGraph` (the class of a plain compiled graph is swapped)."""
    if not isinstance(compiled, NodeOutputGraph):
        compiled.__class__ = NodeOutputGraph
    return compiled  # type: ignore[return-value]
