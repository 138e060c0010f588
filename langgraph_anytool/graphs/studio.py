"""Graph factory for LangGraph Studio / `langgraph dev` (see langgraph.json).

Compiled without a checkpointer (the server brings its own). Configured from the environment:
`ANYTOOL_MODEL` ("provider:model", e.g. "openai:gpt-4o-mini"; OPENAI_BASE_URL etc. are honoured),
`ANYTOOL_CATALOG` (a ToolBench-layout directory; default: the built-in offline catalog) and
`ANYTOOL_EXECUTION` (auto | local | template | http | virtual).
"""

from __future__ import annotations

import os
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from ..catalog import Catalog
from ..config import AnyToolConfig
from .anytool import create_anytool_graph


def make_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    """The AnyTool graph as configured by the environment."""
    catalog = Catalog.load(os.environ.get("ANYTOOL_CATALOG") or None)
    config = AnyToolConfig(execution=os.environ.get("ANYTOOL_EXECUTION", "auto"))  # type: ignore[arg-type]
    return create_anytool_graph(catalog=catalog, model=os.environ.get("ANYTOOL_MODEL"), config=config)
