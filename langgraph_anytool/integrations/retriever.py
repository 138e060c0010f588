"""`AnyToolRetriever`: the catalog's hybrid API search as a LangChain `BaseRetriever`.

One `Document` per API, best first: `page_content` is what the API does (tool, API name, description, parameters);
`metadata` holds `api_id`, `category`, `tool`, `tool_key`, `api`, `function_name`, `parameters` (name, type,
description, required, default, enum), `rank`, `relevance` (0–1, 1.0 = first for every retriever; see `relevance`) and the raw fused `score`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from ..catalog import Catalog
from ..catalog.search import max_api_score, relevance

if TYPE_CHECKING:
    from ..catalog.search import CatalogSearcher, SearchHit

__all__ = ["AnyToolRetriever", "api_document", "max_api_score", "relevance"]


def api_document(catalog: Catalog, hit: SearchHit, rank: int, searcher: CatalogSearcher) -> Document:
    """One search hit as a `Document`."""
    api = catalog.api(hit.api_id)
    params = [{"name": p.name, "type": p.type, "description": p.description, "required": p.required,
               **({"default": p.default} if p.default is not None else {}),
               **({"enum": list(p.enum)} if p.enum else {})} for p in api.params]
    signature = ", ".join(f"{p['name']}{'' if p['required'] else '?'}: {p['type']}" for p in params)
    text = f"{api.tool_name} / {api.name}({signature}): {' '.join(api.description.split())}".rstrip(": ")
    return Document(page_content=text, id=api.id, metadata={
        "api_id": api.id, "category": api.category, "tool": api.tool_name, "tool_key": api.tool_key,
        "api": api.name, "function_name": hit.function_name, "method": api.method, "parameters": params,
        "rank": rank, "relevance": relevance(hit.score, searcher), "score": hit.score,
    })


class AnyToolRetriever(BaseRetriever):
    """Retrieve a catalog's APIs for a query with its hybrid search (BM25 + dense, fused).

    ```python
    retriever = AnyToolRetriever(catalog=Catalog.builtin(), k=5)
    docs = retriever.invoke("convert 10 miles to kilometres")
    docs[0].metadata["function_name"], docs[0].metadata["parameters"]
    ```
    `min_relevance` drops hits below a 0–1 relevance. Async calls run the search in a worker thread. An empty or
    blank query raises `ValueError`, as `Catalog.search` does (a search needs some text: nothing is ranked by it).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    catalog: Catalog
    k: int = Field(default=10, ge=1)
    min_relevance: float = Field(default=0.0, ge=0.0, le=1.0)

    def _search(self, query: str) -> list[Document]:
        searcher = self.catalog.searcher()  # a blank query raises ValueError, as `Catalog.search` does
        docs = [api_document(self.catalog, hit, rank, searcher)
                for rank, hit in enumerate(searcher.search_apis(query, self.k), 1)]
        return [d for d in docs if d.metadata["relevance"] >= self.min_relevance]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                **kwargs: Any) -> list[Document]:
        return self._search(query)

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
                                       **kwargs: Any) -> list[Document]:
        return await asyncio.to_thread(self._search, query)
