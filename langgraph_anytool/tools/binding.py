"""Binding executors to a catalog: a catalog carries `Binding`s (data); this module makes their executors.

The catalog (`catalog/`) never imports executors: loaders that know how their APIs run (LangChain / MCP tools,
OPPO's dev tools, the builtin toolset in a merged catalog) record a `catalog.models.Binding`, and the API
pipeline asks `BoundExecutors.executor(binding)` for the executor, made once per binding.
"""

from __future__ import annotations

import threading
from typing import Any

from langgraph_anytool.catalog.models import Binding
from langgraph_anytool.tools.executors import make_executor
from langgraph_anytool.tools.executors.base import Executor


def executor_of(binding: Binding) -> Executor:
    """A new executor running the APIs of `binding`."""
    if binding.kind == "langchain":
        from langgraph_anytool.tools.executors.langchain import LangChainToolExecutor

        return LangChainToolExecutor(dict(binding.target or {}), **dict(binding.options))
    options: dict[str, Any] = dict(binding.options)
    if binding.target is not None:
        options["implementations"] = dict(binding.target)
    return make_executor(binding.kind, **options)


class BoundExecutors:
    """The executors of a catalog's bindings, made on first use (one per binding object)."""

    def __init__(self) -> None:
        self._made: dict[int, tuple[Binding, Executor]] = {}
        self._lock = threading.Lock()

    def executor(self, bound: Any) -> Executor:
        """The executor for a catalog binding; an object that already is an executor is used as it is."""
        if not isinstance(bound, Binding):
            return bound
        with self._lock:
            entry = self._made.get(id(bound))
            if entry is None:
                entry = self._made[id(bound)] = (bound, executor_of(bound))
            return entry[1]

    def made(self) -> list[Executor]:
        """Every executor made so far (the pipeline closes them)."""
        with self._lock:
            return [ex for _, ex in self._made.values()]
