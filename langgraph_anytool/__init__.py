"""langgraph-anytool: AnyTool (hierarchical API retrieval, DFSDT, self-reflection) on LangGraph."""

from .agent_tool import create_anytool_tool
from .catalog import Catalog
from .config import AnyToolConfig
from .graphs.anytool import create_anytool_graph

__all__ = ["AnyToolConfig", "Catalog", "create_anytool_graph", "create_anytool_tool"]
