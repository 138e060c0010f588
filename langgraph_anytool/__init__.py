"""langgraph-anytool: AnyTool (hierarchical API retrieval, DFSDT, self-reflection) on LangGraph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .catalog import Catalog
from .config import AnyToolConfig

if TYPE_CHECKING:
    from .graphs.anytool import create_anytool_graph

__all__ = ["AnyToolConfig", "Catalog", "create_anytool_graph"]


def __getattr__(name: str) -> Any:
    """`create_anytool_graph` imports LangGraph on first use, so `anytool search` and friends start fast."""
    if name == "create_anytool_graph":
        from .graphs.anytool import create_anytool_graph

        return create_anytool_graph
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
