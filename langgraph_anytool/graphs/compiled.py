"""`AnyToolGraph`: the compiled AnyTool graph, whose runs keep the context they started with.

LangGraph hands a node the `context` of the call that runs it, so a resume (`graph.invoke(Command(resume=...),
config)`, or a run continued after a crash with `None`) would run without the settings the run started with:
`context={"ask_user": True}` gone, the resumed solver no longer offers `ask_user`. Here every call is checked
(`check_context`: an unknown field names the known ones) and, on a resume, completed from the run's state, where
`init` stores the context of each new run (`run_context`). In-process calls, `langgraph dev` and the LangGraph
server all go through `stream` / `astream`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import aclosing
from typing import Any

from langchain_core.runnables import RunnableConfig

from ..context import check_context, resume_context
from .subgraph import NodeOutputGraph

RUN_CONTEXT_KEY = "run_context"


def _continues(input: Any) -> bool:
    """Whether a call continues the thread's run (a `Command`, or `None`) rather than starting a new one."""
    return not isinstance(input, Mapping)


def _top_level(config: RunnableConfig | None) -> bool:
    """Whether the graph runs as itself (not as another graph's subgraph, whose checkpoints live in a namespace)."""
    configurable = (config or {}).get("configurable") or {}
    return bool(configurable.get("thread_id")) and not configurable.get("checkpoint_ns")


class AnyToolGraph(NodeOutputGraph):
    """A compiled AnyTool graph (`create_anytool_graph`): a run's context holds for the whole run, resumes
    included. A resume that passes a context overrides the fields it sets for that call only."""

    @staticmethod
    def _context_for(context: Any, stored: Mapping[str, Any] | None) -> Any:
        """The context of a call: the one given (checked), completed from the run's stored one on a resume."""
        given = check_context(context)
        return resume_context(stored, given) if stored else context

    def _stored(self, input: Any, config: RunnableConfig | None) -> Mapping[str, Any] | None:
        """The context the thread's run started with, when this call continues it."""
        if not _continues(input) or not _top_level(config):
            return None
        try:
            return _run_context(self.get_state(config or {}).values)
        except ValueError:  # no checkpointer: nothing to resume
            return None

    async def _astored(self, input: Any, config: RunnableConfig | None) -> Mapping[str, Any] | None:
        if not _continues(input) or not _top_level(config):
            return None
        try:
            return _run_context((await self.aget_state(config or {})).values)
        except ValueError:
            return None

    def stream(self, input: Any, config: RunnableConfig | None = None, *, context: Any = None,
               **kwargs: Any) -> Iterator[Any]:
        context = self._context_for(context, self._stored(input, config))
        return super().stream(input, config, context=context, **kwargs)

    async def astream(self, input: Any, config: RunnableConfig | None = None, *,
                      context: Any = None, **kwargs: Any) -> AsyncIterator[Any]:
        context = self._context_for(context, await self._astored(input, config))
        inner: Any = super().astream(input, config, context=context, **kwargs)
        async with aclosing(inner):
            async for chunk in inner:
                yield chunk


def _run_context(values: Mapping[str, Any]) -> Mapping[str, Any] | None:
    stored = values.get(RUN_CONTEXT_KEY)
    return stored if isinstance(stored, Mapping) and stored else None
