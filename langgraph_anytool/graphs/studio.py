"""Graph factory for LangGraph Studio / `langgraph dev` (see langgraph.json).

Compiled without a checkpointer (the server brings its own) and without needing a model: Studio lists and draws
the graph and shows its input, output and context schemas; a run without a model ends with the one-line
"configure a model" error. Configured from the environment (`AnyToolConfig.from_env`): `ANYTOOL_MODEL`
("provider:model", e.g. "openai:gpt-4o-mini" with OPENAI_BASE_URL etc. honoured; "offline" for the heuristic
stand-in, NOT an LLM), `ANYTOOL_CATALOG` (a ToolBench-layout directory; default: the built-in offline catalog),
`ANYTOOL_PROFILE` (default | paper) and `ANYTOOL_<FIELD>` for any `AnyToolConfig` field (e.g.
ANYTOOL_EXECUTION=template). Each run can override settings and models in Studio's context panel. API responses are cached on
disk (`ANYTOOL_CACHE_DIR`, default ~/.cache/langgraph-anytool/responses; `ANYTOOL_CACHE=off` to turn off).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from langgraph.graph.state import CompiledStateGraph

# absolute imports: `langgraph dev` loads this file by path, outside its package
from langgraph_anytool.catalog import Catalog
from langgraph_anytool.config import AnyToolConfig
from langgraph_anytool.graphs.anytool import create_anytool_graph, default_executor


async def make_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    """Studio's factory. Building opens the on-disk cache and probes the code sandbox (blocking I/O), so it runs in
    a thread: `langgraph dev` rejects blocking calls on its event loop."""
    return await asyncio.to_thread(build_graph)


def build_graph() -> CompiledStateGraph[Any, Any, Any, Any]:
    """The AnyTool graph as configured by the environment."""
    catalog = Catalog.load(os.environ.get("ANYTOOL_CATALOG") or None)
    config = AnyToolConfig.from_env()
    executor = default_executor(catalog, config, persistent_cache=True)  # ANYTOOL_CACHE=off turns it off
    return create_anytool_graph(catalog=catalog, model=os.environ.get("ANYTOOL_MODEL") or None, config=config,
                                executor=executor)
