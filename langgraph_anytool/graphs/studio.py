"""Graph factory for LangGraph Studio / `langgraph dev` (see langgraph.json), built once per process.

Compiled without a checkpointer (the server brings its own) and without needing a model or its key: Studio lists
and draws the graph and shows its input, output and context schemas; a run without a model ends with the one-line
"configure a model" error, a run whose model lacks its key with the one-line "set OPENAI_API_KEY" error. Configured from the environment (`AnyToolConfig.from_env`): `ANYTOOL_MODEL`
("provider:model", e.g. "openai:gpt-4o-mini" with OPENAI_BASE_URL etc. honoured; "offline" for the heuristic
stand-in, NOT an LLM), `ANYTOOL_CATALOG` (a ToolBench-layout directory; default: the built-in offline catalog),
`ANYTOOL_PROFILE` (default | paper) and `ANYTOOL_<FIELD>` for any `AnyToolConfig` field (e.g.
ANYTOOL_EXECUTION=template). Each run can override settings and models in Studio's context panel. API responses are cached on
disk (`ANYTOOL_CACHE_DIR`, default ~/.cache/langgraph-anytool/responses; `ANYTOOL_CACHE=off` to turn off).

The server calls the factory on every request; the first call builds the graph, its catalog and the catalog's search
index, later calls return the same graph at once. `studio_app.app` (langgraph.json's "http" app) makes that first
call when the server starts, so no request waits for the build.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Callable
from typing import Any

from langgraph.graph.state import CompiledStateGraph

# absolute imports: `langgraph dev` loads this file by path, outside its package
from langgraph_anytool.catalog import Catalog
from langgraph_anytool.config import AnyToolConfig
from langgraph_anytool.graphs.anytool import create_anytool_graph, default_executor

Graph = CompiledStateGraph[Any, Any, Any, Any]
Settings = tuple[tuple[str, str], ...]


async def make_graph() -> Graph:
    """Studio's factory. `langgraph dev` calls it on every request (listing, drawing, schemas, each run), so the
    graph is built once per process and setting, and later calls return it at once. The first build opens the
    on-disk cache and probes the code sandbox (blocking I/O), so it runs in a thread: `langgraph dev` rejects
    blocking calls on its event loop."""
    once = graph_once(studio_settings())
    return once.value if once.value is not None else await asyncio.to_thread(once.get)


def studio_settings(environ: dict[str, str] | None = None) -> Settings:
    """The `ANYTOOL_*` variables the graph is built from, as a hashable key."""
    env = os.environ if environ is None else environ
    return tuple(sorted((k, v) for k, v in env.items() if k.startswith("ANYTOOL_")))


class Once:
    """A graph built on the first `get`, by one thread (concurrent first requests wait for it), then kept."""

    def __init__(self, build: Callable[[], Graph]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self.value: Graph | None = None

    def get(self) -> Graph:
        with self._lock:
            if self.value is None:
                self.value = self._build()
            return self.value


# One graph per process and setting, rather than a module-level variable: the holder of each `ANYTOOL_*` setting is
# cached by this pure function, and the holder builds the graph (catalog, executor; the catalog's search index
# follows on the first search) once. One compiled graph serves every request: the server copies it for each run
# with its own checkpointer and store, and per-run settings come from the run's context.
@functools.lru_cache(maxsize=4)
def graph_once(settings: Settings) -> Once:
    """The holder of the AnyTool graph for these `ANYTOOL_*` settings (see `build_graph`; the search index too)."""
    return Once(functools.partial(build_graph, dict(settings), build_index=True))


def build_graph(environ: dict[str, str] | None = None, *, build_index: bool = False) -> Graph:
    """The AnyTool graph as configured by the environment (`environ`, default: `os.environ`); a new one per call.

    `build_index`: build (or load from disk) the catalog's search index now rather than on the first search."""
    env = os.environ if environ is None else environ
    catalog = Catalog.load(env.get("ANYTOOL_CATALOG") or None)
    if build_index:
        catalog.searcher().build()
    config = AnyToolConfig.from_env(env)
    executor = default_executor(catalog, config, persistent_cache=True)  # ANYTOOL_CACHE=off turns it off
    # no key needed to build: Studio draws the graph and its schemas; a run reports a missing key in one line
    return create_anytool_graph(catalog=catalog, model=env.get("ANYTOOL_MODEL") or None, config=config,
                                executor=executor, defer_model_errors=True)


MODEL_ROUTE = "/anytool/model"  # the HTTP app's route that says which model the served graph runs (studio_app.py)


def served_models(environ: dict[str, str] | None = None) -> dict[str, Any]:
    """Which model the graph built from `environ` runs: `{"model": ANYTOOL_MODEL or None, "models": {role: spec}}`
    (per-role models from ANYTOOL_MODELS; instances named by their class). A client that sends batches to the
    server (`anytool eval run --server`) labels its records with it, the offline stand-in as NOT an LLM."""
    env = os.environ if environ is None else environ
    roles = AnyToolConfig.from_env(env).models
    return {"model": (env.get("ANYTOOL_MODEL") or "").strip() or None,
            "models": {role: spec if isinstance(spec, str) else type(spec).__name__ for role, spec in roles.items()}}
