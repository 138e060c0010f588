"""langgraph-anytool: AnyTool (hierarchical API retrieval, DFSDT, self-reflection) on LangGraph.

The graph-side names load on first use, so `anytool search` and other catalog-only commands start fast."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._compat import install_aliases as _install_aliases
from .catalog import Catalog
from .config import AnyToolConfig

if TYPE_CHECKING:
    from . import viz
    from .eval.report import render_run
    from .graphs.anytool import create_anytool_graph
    from .graphs.retriever import create_retriever_graph
    from .integrations.agent_tool import create_anytool_tool
    from .integrations.retriever import AnyToolRetriever
    from .integrations.selector import AnyToolSelectorMiddleware
    from .tools.lc import api_tools
    from .tools.pipeline import ApiExecutor

# public name → the module that defines it (imported when the name is first used)
_LAZY = {
    "create_anytool_tool": ".integrations.agent_tool",
    "create_anytool_graph": ".graphs.anytool",
    "create_retriever_graph": ".graphs.retriever",
    "AnyToolRetriever": ".integrations.retriever",
    "AnyToolSelectorMiddleware": ".integrations.selector",
    "api_tools": ".tools.lc",
    "ApiExecutor": ".tools.pipeline",
    "render_run": ".eval.report",
}

__all__ = [
    "AnyToolConfig",
    "AnyToolRetriever",
    "AnyToolSelectorMiddleware",
    "ApiExecutor",
    "Catalog",
    "api_tools",
    "create_anytool_graph",
    "create_anytool_tool",
    "create_retriever_graph",
    "render_run",
    "viz",
]


def __getattr__(name: str) -> Any:
    if name == "viz":
        return import_module(".viz", __name__)
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_install_aliases()  # old module paths (DeprecationWarning), one release
