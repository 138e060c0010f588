"""`PoolSelection`: AnyTool's hierarchical retriever (§4.1) as a tool selector, run once per request and cached.

`AnyToolSelectorMiddleware(mode="hierarchical")` asks this object for the candidate pool of a request: the
retriever graph (meta-agent → category agents → tool agents adding APIs to the pool) runs on the request once, its
result (`PoolRetrieval`: the pool's API ids in order of arrival, the model usage per role, the agents that failed)
is cached under the request's key, so the following model calls of the same request reuse it. Concurrent calls for
one key wait for the single run (a per-key lock). The retriever's agent steps call their models synchronously;
the middleware's async hook runs the selection in a worker thread, as it does the search. A failed run (an exception, or agents whose model
call failed) is recorded with its errors and logged once as a warning; the middleware then falls back to search.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from langgraph.errors import GraphBubbleUp

from ..catalog import Catalog
from ..config import AnyToolConfig
from ..models.llm import ModelNotConfiguredError, ModelSpec, total_tokens
from ..runtime import Deps, RunSignals, resolve_models
from ..state import merge_usage
from ..text import shorten

log = logging.getLogger(__name__)

RETRIEVER_ROLES = ("meta", "category", "tool", "solvable")
# agent step limits and the token budget bound a retrieval; this only catches a runaway graph
RECURSION_SAFETY_NET = 10_000
CACHE_SIZE = 128  # distinct requests whose pool is kept
HISTORY = 256  # retrieval records kept for inspection

RequestKey = tuple[str, str]  # (id of the last human message, its text)


@dataclass(frozen=True)
class PoolRetrieval:
    """One run of the hierarchical retriever for one request."""

    query: str
    api_ids: tuple[str, ...]  # the candidate pool, in order of arrival
    function_names: tuple[str, ...]
    usage: Mapping[str, Any]  # role → {model_calls, input_tokens, output_tokens[, estimated_tokens]}
    errors: tuple[str, ...] = ()  # "agent id: reason" of failed agents, or the exception that ended the run
    seconds: float = 0.0
    agents: int = 0  # agents the run created (meta, category, tool)

    @property
    def failed(self) -> bool:
        return bool(self.errors)

    @property
    def model_calls(self) -> int:
        return sum(int(v.get("model_calls", 0)) for v in self.usage.values() if isinstance(v, Mapping))

    @property
    def tokens(self) -> int:
        return total_tokens(self.usage)


@dataclass
class _Cache:
    entries: OrderedDict[RequestKey, PoolRetrieval] = field(default_factory=OrderedDict)
    locks: dict[RequestKey, threading.Lock] = field(default_factory=dict)


class PoolSelection:
    """Runs the hierarchical retriever over `catalog` with `model` (a chat model, an `init_chat_model` string or
    "offline", the heuristic stand-in) and `config` (its limits; per-role models in `config.models`).

    `usage`: the model usage of every run so far, per role; `retrievals`: the latest runs (`PoolRetrieval`).
    """

    def __init__(self, catalog: Catalog, model: ModelSpec | None = None, config: AnyToolConfig | None = None) -> None:
        cfg = config or AnyToolConfig()
        if cfg.retriever != "hierarchical":
            raise ValueError(f"AnyToolSelectorMiddleware(mode='hierarchical'): config.retriever is "
                             f"{cfg.retriever!r}; this mode runs the hierarchical retriever (use mode='search' "
                             "for the search selection)")
        models = resolve_models(model, None, cfg, catalog)
        for role in RETRIEVER_ROLES:
            try:
                models.for_role(role)
            except ModelNotConfiguredError as exc:
                raise ModelNotConfiguredError(f"AnyToolSelectorMiddleware(mode='hierarchical') needs model=: {exc}"
                                              ) from None
        from ..graphs.retriever import create_retriever_graph

        self.catalog = catalog
        self.config = cfg
        deps = Deps(catalog=catalog, models=models, executor=cast(Any, None), config=cfg, signals=RunSignals())
        # checkpointer=False: run inside an agent's model call, the retrieval is not part of the agent's checkpoints
        self.graph = create_retriever_graph(catalog, deps=deps, checkpointer=False, name="anytool_tool_selection")
        self._lock = threading.Lock()
        self._cache = _Cache()
        self.usage: dict[str, Any] = {}
        self.retrievals: deque[PoolRetrieval] = deque(maxlen=HISTORY)

    # ------------------------------------------------------------ cache
    def cached(self, key: RequestKey) -> PoolRetrieval | None:
        with self._lock:
            hit = self._cache.entries.get(key)
            if hit is not None:
                self._cache.entries.move_to_end(key)
            return hit

    def _store(self, key: RequestKey, result: PoolRetrieval) -> None:
        with self._lock:
            self._cache.entries[key] = result
            while len(self._cache.entries) > CACHE_SIZE:
                self._cache.entries.popitem(last=False)
            self.usage = merge_usage(self.usage, result.usage)
            self.retrievals.append(result)
        if result.failed:
            log.warning("AnyToolSelectorMiddleware: the hierarchical retriever failed for %r (%s); the search "
                        "selection stands in for what it did not provide", result.query[:120], "; ".join(result.errors))

    def retrieve(self, key: RequestKey, query: str) -> PoolRetrieval:
        """The pool for a request: cached, or one retriever run (one at a time per key)."""
        hit = self.cached(key)
        if hit is not None:
            return hit
        with self._lock:
            gate = self._cache.locks.setdefault(key, threading.Lock())
        try:
            with gate:
                hit = self.cached(key)
                if hit is not None:
                    return hit
                start = time.perf_counter()
                try:
                    out = self.graph.invoke({"query": query}, {"recursion_limit": RECURSION_SAFETY_NET})
                except GraphBubbleUp:
                    raise
                except Exception as exc:  # a failed selection must not crash the agent: the search stands in
                    result = self._failure(query, exc, start)
                else:
                    result = self._result(query, out, start)
                self._store(key, result)
                return result
        finally:
            with self._lock:
                self._cache.locks.pop(key, None)

    # ------------------------------------------------------------ results
    def _result(self, query: str, out: Mapping[str, Any], start: float) -> PoolRetrieval:
        pool = list(out.get("api_pool") or [])
        agents = dict(out.get("agents") or {})
        errors = tuple(f"{a['id']}: {a['end_reason']}" for a in agents.values()
                       if str(a.get("end_reason") or "").startswith("error"))
        return PoolRetrieval(query=query, api_ids=tuple(e["api_id"] for e in pool),
                             function_names=tuple(e["function_name"] for e in pool),
                             usage=dict(out.get("usage") or {}), errors=errors,
                             seconds=round(time.perf_counter() - start, 3), agents=len(agents))

    @staticmethod
    def _failure(query: str, exc: Exception, start: float) -> PoolRetrieval:
        return PoolRetrieval(query=query, api_ids=(), function_names=(), usage={},
                             errors=(shorten(f"{type(exc).__name__}: {exc}", 500),),
                             seconds=round(time.perf_counter() - start, 3))
