"""`AnyToolSelectorMiddleware`: narrow a large tool list per model call with AnyTool's hybrid search (default) or
its hierarchical retriever (`mode="hierarchical"`).

A drop-in alternative to LangChain's `LLMToolSelectorMiddleware` for `langchain.agents.create_agent`: same
`max_tools` / `always_include` contract, but the selection is a search over the tools' names, descriptions and
parameters (BM25 + dense embeddings when configured, fused), so it spends no model call and no token (the default
`mode="search"`).

Per model call: the query is the last human message; the tools the model already called since that message are
kept (so a multi-step answer does not lose its tools), then the best search hits fill up to `max_tools`; the
`always_include` tools are added on top (they do not count against `max_tools`, as in LangChain's middleware).
Provider tool dicts pass through untouched. The search index over the agent's tools is built once per distinct
tool set and reused.

Given `catalog=` (the catalog the tools came from, e.g. `api_tools(catalog, executor)`), the search runs over that
catalog, whose tool and category levels add signal a flat list of functions lacks; a tool is matched to its API by
`tool.metadata["api_id"]` or by its function name. Tools not in the catalog are ranked by the flat search.

`mode="hierarchical"` (with `catalog=`, `model=` and optionally `config=`) makes the selection with AnyTool's
hierarchical retriever instead (§4.1: a meta-agent delegates to category agents, which delegate to tool agents,
which fill an API-candidate pool; `pool_selection.py`). The retriever runs once per request (the last human
message) and its pool is cached for the following model calls of that request; the pool's APIs, mapped back to
the agent's tools as above, fill up to `max_tools` after the tools already called, in the order they entered the
pool. Its model usage per role is in `middleware.usage` (all runs) and `middleware.retrievals` (the latest runs,
`PoolRetrieval`: pool, usage, model calls, tokens, errors). When the retriever fails (a model error, an exception)
or its pool holds none of the agent's tools, a warning is logged and the search selection fills the remaining
slots: a failed selection never stops the agent.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from langchain.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

from ..catalog import Catalog

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_core.tools import BaseTool

    from ..config import AnyToolConfig
    from ..models.llm import ModelSpec
    from .pool_selection import PoolRetrieval, PoolSelection, RequestKey

log = logging.getLogger(__name__)

SelectorMode = Literal["search", "hierarchical"]


def message_text(message: AnyMessage) -> str:
    """The text of a message (string content or the text blocks of a content list)."""
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in content)


class AnyToolSelectorMiddleware(AgentMiddleware):
    """Select the `max_tools` tools most relevant to the user's request before each model call.

    ```python
    from langchain.agents import create_agent
    agent = create_agent(model, tools=many_tools, middleware=[AnyToolSelectorMiddleware(max_tools=5)])
    ```
    `embeddings`: "minilm" | "openai:<model>" | "none" | an `Embeddings` (default: as `Catalog.search`, i.e.
    `$ANYTOOL_EMBEDDINGS`, else MiniLM when installed; ignored with `catalog=`, which searches as configured).
    `keep_called_tools=False` selects from the request alone. `catalog`: see the module docstring.
    `mode="hierarchical"`: AnyTool's hierarchical retriever selects (needs `catalog=`); `model` is its chat model
    (a `BaseChatModel`, an `init_chat_model` string, "offline" for the heuristic stand-in; default
    `$ANYTOOL_MODEL`), `config` its `AnyToolConfig` (pool size, agent step limit, token budget, per-role models).
    """

    def __init__(
        self,
        *,
        max_tools: int = 5,
        always_include: Sequence[str] | None = None,
        embeddings: Embeddings | str | None = None,
        keep_called_tools: bool = True,
        catalog: Catalog | None = None,
        mode: SelectorMode = "search",
        model: ModelSpec | None = None,
        config: AnyToolConfig | None = None,
    ) -> None:
        super().__init__()
        if max_tools < 1:
            raise ValueError("AnyToolSelectorMiddleware: max_tools must be at least 1")
        if mode not in ("search", "hierarchical"):
            raise ValueError(f"AnyToolSelectorMiddleware: mode must be 'search' or 'hierarchical', got {mode!r}")
        self.max_tools = max_tools
        self.always_include = list(always_include or [])
        self.embeddings = embeddings
        self.keep_called_tools = keep_called_tools
        self.catalog = catalog
        self.mode = mode
        self._pools: PoolSelection | None = None
        if mode == "hierarchical":
            if catalog is None:
                raise ValueError("AnyToolSelectorMiddleware(mode='hierarchical') needs catalog=: the catalog the "
                                 "agent's tools came from (e.g. tools = api_tools(catalog, executor)); its "
                                 "retriever picks APIs of that catalog")
            from .pool_selection import PoolSelection

            self._pools = PoolSelection(catalog, model, config)
        elif model is not None or config is not None:
            raise ValueError("AnyToolSelectorMiddleware: model= and config= are for mode='hierarchical'; the "
                             "'search' mode makes no model call")
        self._lock = threading.Lock()
        self._catalogs: dict[tuple[tuple[str, str], ...], Catalog] = {}
        # tool names chosen per model call (latest last, the last 256 kept), for inspection
        self.selections: deque[list[str]] = deque(maxlen=256)

    # ------------------------------------------------------------ what the hierarchical mode spent
    @property
    def usage(self) -> dict[str, Any]:
        """The hierarchical retriever's model usage over all its runs, per role (empty in the search mode)."""
        return dict(self._pools.usage) if self._pools is not None else {}

    @property
    def retrievals(self) -> list[PoolRetrieval]:
        """The hierarchical retriever's latest runs, oldest first (one per distinct request)."""
        return list(self._pools.retrievals) if self._pools is not None else []

    # ------------------------------------------------------------ selection
    def _catalog(self, tools: Sequence[BaseTool]) -> Catalog:
        key = tuple((t.name, t.description or "") for t in tools)
        with self._lock:
            cat = self._catalogs.get(key)
            if cat is None:
                cat = Catalog.from_langchain_tools(tools, category="Agent", tool_name="agent_tools",
                                                   embeddings=self.embeddings)
                self._catalogs = {key: cat}  # one tool set per agent in practice: keep only the latest
            return cat

    def _request(self, tools: Sequence[BaseTool], messages: Sequence[AnyMessage]
                 ) -> tuple[str, RequestKey, list[str]]:
        """The request (the last human message's text and key) and the tools called since it, capped."""
        query, key = "", ("", "")
        called: list[str] = []
        for m in reversed(messages):
            if isinstance(m, HumanMessage):
                query = message_text(m)
                key = (m.id or "", query)
                break
            if isinstance(m, AIMessage):
                called[:0] = [tc["name"] for tc in m.tool_calls]
        names = {t.name for t in tools}
        chosen = [n for n in dict.fromkeys(called) if n in names] if self.keep_called_tools else []
        return query, key, chosen[: self.max_tools]

    def select(self, tools: Sequence[BaseTool], messages: Sequence[AnyMessage]) -> list[str]:
        """The names of the selected tools (without `always_include`), most relevant first."""
        query, key, chosen = self._request(tools, messages)
        if not query.strip() or len(chosen) >= self.max_tools:
            return chosen
        if self._pools is not None:
            pooled = self._from_pool(tools, self._pools.retrieve(key, query), chosen)
            if pooled is not None:
                return pooled
        return self._search(tools, query, chosen)

    def _from_pool(self, tools: Sequence[BaseTool], retrieval: PoolRetrieval, chosen: list[str]) -> list[str] | None:
        """`chosen` plus the pool's tools up to `max_tools`; None when the search must fill (a failed run, or a
        pool without any of these tools), then with the pool's tools already in `chosen`."""
        by_api = self._catalog_names(tools)
        found = False
        for api_id in retrieval.api_ids:
            name = by_api.get(api_id)
            found = found or name is not None
            if name is not None and name not in chosen and len(chosen) < self.max_tools:
                chosen.append(name)
        if retrieval.failed:
            return None  # the retriever's warning is logged once, by `PoolSelection`
        if not found:
            log.warning("AnyToolSelectorMiddleware: the hierarchical retriever's pool for %r holds none of the "
                        "agent's tools (pool: %s); the search selection stands in", retrieval.query[:120],
                        list(retrieval.function_names) or "empty")
            return None
        return chosen

    def _search(self, tools: Sequence[BaseTool], query: str, chosen: list[str]) -> list[str]:
        """`chosen` filled up to `max_tools` with the search's best hits."""
        if len(chosen) >= self.max_tools:
            return chosen
        rest = list(tools)
        if self.catalog is not None:
            by_api = self._catalog_names(tools)
            if by_api:
                depth = min(len(self.catalog), max(4 * self.max_tools, 50))
                for hit in self.catalog.search(query, k=depth):
                    name = by_api.get(hit.api_id)
                    if name is not None and name not in chosen:
                        chosen.append(name)
                    if len(chosen) >= self.max_tools:
                        return chosen
                rest = [t for t in tools if t.name not in set(by_api.values())]
        if rest:
            for hit in self._catalog(rest).search(query, k=self.max_tools + len(chosen)):
                if hit.api not in chosen:
                    chosen.append(hit.api)
                if len(chosen) >= self.max_tools:
                    break
        return chosen

    def _catalog_names(self, tools: Sequence[BaseTool]) -> dict[str, str]:
        """API id → tool name, for the tools that are APIs of `self.catalog`."""
        assert self.catalog is not None
        out: dict[str, str] = {}
        for t in tools:
            api_id = (t.metadata or {}).get("api_id")
            if not (isinstance(api_id, str) and api_id in self.catalog):
                try:
                    api_id = self.catalog.api_for_function(t.name).id
                except KeyError:
                    continue
            out[api_id] = t.name
        return out

    def _candidates(self, request: ModelRequest) -> tuple[list[BaseTool], list[Any]]:
        """The tools to select from and the rest (always-included tools, provider dicts), checked."""
        base = [t for t in request.tools if not isinstance(t, dict)]
        names = {t.name for t in base}
        missing = [n for n in self.always_include if n not in names]
        if missing:
            raise ValueError(f"AnyToolSelectorMiddleware: always_include names tools the agent does not have: "
                             f"{missing}; available: {sorted(names)}")
        candidates = [t for t in base if t.name not in self.always_include]
        always = [t for t in base if t.name in self.always_include]
        return candidates, [*always, *(t for t in request.tools if isinstance(t, dict))]

    def _narrow(self, request: ModelRequest) -> ModelRequest:
        if not request.tools:
            return request
        candidates, others = self._candidates(request)
        if len(candidates) <= self.max_tools:
            with self._lock:
                self.selections.append([t.name for t in candidates])
            return request
        chosen = self.select(candidates, request.messages)
        with self._lock:
            self.selections.append(list(chosen))
        order = {n: i for i, n in enumerate(chosen)}
        selected = sorted((t for t in candidates if t.name in order), key=lambda t: order[t.name])
        return request.override(tools=[*selected, *others])

    # ------------------------------------------------------------ hooks
    def wrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], ModelResponse],
    ) -> ModelResponse | AIMessage:
        return handler(self._narrow(request))

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse | AIMessage:
        import asyncio

        narrowed = await asyncio.to_thread(self._narrow, request)
        return await handler(narrowed)
