"""langgraph-anytool: AnyTool (hierarchical API retrieval, DFSDT, self-reflection) on LangGraph."""

from .catalog import Catalog

__all__ = ["Catalog"]
