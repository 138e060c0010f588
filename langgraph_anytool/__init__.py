"""langgraph-anytool: AnyTool (hierarchical API retrieval, DFSDT, self-reflection) on LangGraph."""

from . import viz
from .catalog import Catalog
from .config import AnyToolConfig
from .graphs.anytool import create_anytool_graph
from .graphs.retriever import create_retriever_graph
from .retriever import AnyToolRetriever
from .selector import AnyToolSelectorMiddleware
from .tools.lc import api_tools
from .tools.pipeline import ApiExecutor

__all__ = [
    "AnyToolConfig",
    "AnyToolRetriever",
    "AnyToolSelectorMiddleware",
    "ApiExecutor",
    "Catalog",
    "api_tools",
    "create_anytool_graph",
    "create_retriever_graph",
    "viz",
]
