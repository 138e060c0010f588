"""Graph factory for LangGraph Studio / `langgraph dev` (see langgraph.json).

Compiled without a checkpointer (the server brings its own) and without needing a model: Studio lists and draws
the graph and shows its input, output and context schemas; a run without a model ends with the one-line
"configure a model" error. Configured from the environment (`AnyToolConfig.from_env`): `ANYTOOL_MODEL`
("provider:model", e.g. "openai:gpt-4o-mini" with OPENAI_BASE_URL etc. honoured; "offline" for the heuristic
stand-in, NOT an LLM), `ANYTOOL_CATALOG` (a ToolBench-layout directory; default: the built-in offline catalog),
`ANYTOOL_PROFILE` (default | paper) and `ANYTOOL_<FIELD>` for any `AnyToolConfig` field (e.g.
ANYTOOL_EXECUTION=template). Each run can override settings and models in Studio's context panel.
"""

from __future__ import annotations

import os
from typing import Any

from langgraph.graph.state import CompiledStateGraph

# absolute imports: `langgraph dev` loads this file by path, outside its package
from langgraph_anytool.catalog import Catalog
from langgraph_anytool.config import AnyToolConfig
from langgraph_anytool.graphs.anytool import create_anytool_graph


def make_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    """The AnyTool graph as configured by the environment."""
    catalog = Catalog.load(os.environ.get("ANYTOOL_CATALOG") or None)
    return create_anytool_graph(catalog=catalog, model=os.environ.get("ANYTOOL_MODEL") or None,
                                config=AnyToolConfig.from_env())
