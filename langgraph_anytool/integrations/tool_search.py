"""Our retriever as the client-side search of a provider's native tool search (deferred tools loaded on demand).

Anthropic's Messages API and OpenAI's Responses API let a request carry tools marked `defer_loading: true`: the
model sees little or nothing of them until a search loads them. Their own search is a BM25 or regex over names and
descriptions; both also let the application run the search. `RetrieverToolSearch` is that search, over a catalog of
any size, ranked by `Catalog.search` (hybrid BM25 + dense; a trained encoder through the catalog's `embeddings`):

- Anthropic: `anthropic_tools()` gives the request's tools (the search tool, then every deferred tool);
  `anthropic_result(tool_use)` answers the model's `tool_use` of the search tool with a `tool_result` whose content
  is `tool_reference` blocks, one per tool found (the API then loads those definitions).
- OpenAI: `openai_tools()` gives a `tool_search` tool with `execution: "client"` and every deferred function;
  `openai_output(tool_search_call)` answers the model's `tool_search_call` item with a `tool_search_output` item
  holding the definitions of the tools found.

The shapes follow the providers' public documentation; docs/integration.md ("Provider-native tool search") says
which parts it confirms and which it does not. Nothing here sends a request: use the provider's SDK or HTTP client.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from ..catalog import Catalog
from ..text import shorten

SEARCH_TOOL_NAME = "search_tools"
SEARCH_DESCRIPTION = ("Search the catalog of available tools by what they do. Give a short description of the task "
                      "(e.g. 'convert miles to kilometers'); the best-matching tools are loaded for you to call.")
MAX_QUERY_CHARS = 2000


class ToolSearchError(ValueError):
    """A search call this helper cannot answer (no query, not the search tool): the message names the field."""


class RetrieverToolSearch:
    """Client-side tool search over `tools` (LangChain tools: the deferred catalog), ranked by our retriever.

    `k`: tools loaded per search; `always_loaded`: names of tools sent in full (never deferred); `embeddings`: the
    catalog's dense search (`None` = the package default; e.g. `"trained:MODEL_DIR"` for a trained encoder)."""

    def __init__(self, tools: Sequence[BaseTool], *, k: int = 5, always_loaded: Sequence[str] = (),
                 embeddings: Any = None, search_tool_name: str = SEARCH_TOOL_NAME) -> None:
        if not tools:
            raise ValueError("RetrieverToolSearch needs at least one tool")
        names = [t.name for t in tools]
        if len(set(names)) != len(names):
            raise ValueError(f"two tools share a name: {sorted({n for n in names if names.count(n) > 1})}")
        unknown = sorted(set(always_loaded) - set(names))
        if unknown:
            raise ValueError(f"always_loaded names no tool: {unknown}")
        if search_tool_name in names:
            raise ValueError(f"a tool is already named {search_tool_name!r}: pass another search_tool_name")
        self.tools = list(tools)
        self.k = k
        self.always_loaded = tuple(always_loaded)
        self.search_tool_name = search_tool_name
        kwargs = {} if embeddings is None else {"embeddings": embeddings}
        self.catalog = Catalog.from_langchain_tools(self.tools, category="Deferred", tool_name="deferred_tools",
                                                    **kwargs)
        # each tool is one API whose name is the tool's (catalog/lc_tools.py binds them by that name)
        self._names = {api.id: api.name for tool in self.catalog.tools() for api in tool.apis}

    # ------------------------------------------------------------------ search
    def search(self, query: str, k: int | None = None) -> list[str]:
        """The names of the `k` tools that best fit `query`, best first."""
        want = self.k if k is None else k
        hits = self.catalog.search(shorten(query, MAX_QUERY_CHARS), k=min(len(self.tools), max(want, 1) * 4))
        found = [self._names[h.api_id] for h in hits if h.api_id in self._names]
        return list(dict.fromkeys(found))[:want]

    def _definition(self, name: str) -> dict[str, Any]:
        """The tool's function definition: {"name", "description", "parameters"}."""
        tool = next(t for t in self.tools if t.name == name)
        return dict(convert_to_openai_tool(tool)["function"])

    # --------------------------------------------------------------- Anthropic
    def anthropic_tools(self) -> list[dict[str, Any]]:
        """The `tools` of a Messages API request: the search tool, then each tool (deferred unless
        `always_loaded`)."""
        search = {"name": self.search_tool_name, "description": SEARCH_DESCRIPTION,
                  "input_schema": {"type": "object", "properties": {"query": {"type": "string"}},
                                   "required": ["query"]}}
        out: list[dict[str, Any]] = [search]
        for tool in self.tools:
            fn = self._definition(tool.name)
            entry = {"name": fn["name"], "description": fn.get("description", ""),
                     "input_schema": fn.get("parameters") or {"type": "object", "properties": {}}}
            if tool.name not in self.always_loaded:
                entry["defer_loading"] = True
            out.append(entry)
        return out

    def anthropic_result(self, tool_use: Mapping[str, Any]) -> dict[str, Any]:
        """The `tool_result` block answering a `tool_use` block of the search tool: `tool_reference` blocks."""
        if tool_use.get("type") != "tool_use" or tool_use.get("name") != self.search_tool_name:
            raise ToolSearchError(f"not a tool_use of {self.search_tool_name!r}: type {tool_use.get('type')!r}, "
                                  f"name {tool_use.get('name')!r}")
        query = _query(tool_use.get("input"), "tool_use.input.query")
        names = self.search(query)
        return {"type": "tool_result", "tool_use_id": str(tool_use.get("id", "")),
                "content": [{"type": "tool_reference", "tool_name": n} for n in names]}

    # ------------------------------------------------------------------ OpenAI
    def openai_tools(self) -> list[dict[str, Any]]:
        """The `tools` of a Responses API request: a client-executed `tool_search`, then each function (deferred
        unless `always_loaded`)."""
        out: list[dict[str, Any]] = [{
            "type": "tool_search", "execution": "client", "description": SEARCH_DESCRIPTION,
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}]
        for tool in self.tools:
            entry = {"type": "function", **self._definition(tool.name)}
            if tool.name not in self.always_loaded:
                entry["defer_loading"] = True
            out.append(entry)
        return out

    def openai_output(self, call: Mapping[str, Any]) -> dict[str, Any]:
        """The `tool_search_output` input item answering a client-executed `tool_search_call` output item."""
        if call.get("type") != "tool_search_call":
            raise ToolSearchError(f"not a tool_search_call item: type {call.get('type')!r}")
        arguments = call.get("arguments")
        if isinstance(arguments, str):  # arguments as a JSON string, like a function call's
            try:
                arguments = json.loads(arguments)
            except ValueError:
                raise ToolSearchError("tool_search_call.arguments: not a JSON object") from None
        query = _query(arguments, "tool_search_call.arguments.query")
        names = self.search(query)
        return {"type": "tool_search_output", "call_id": str(call.get("call_id", "")), "execution": "client",
                "status": "completed", "tools": [{"type": "function", **self._definition(n)} for n in names]}


def _query(arguments: Any, where: str) -> str:
    query = arguments.get("query") if isinstance(arguments, Mapping) else None
    if not isinstance(query, str) or not query.strip():
        raise ToolSearchError(f"{where}: a non-empty string is required")
    return query
