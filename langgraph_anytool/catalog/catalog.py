"""The `Catalog`: an immutable index of categories → tools → APIs, with navigation and search."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import logging
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..sanitize.files import first_fields, replace_surrogates
from .errors import CatalogError, UnknownNameError
from .models import Api, Binding, Category, Param, Tool
from .naming import FunctionNamer, kept_names, slugify

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_core.tools import BaseTool

    from .models import Executor
    from .search import CatalogSearcher, CategoryHit, SearchHit, ToolHit


log = logging.getLogger(__name__)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _norm(name: str) -> str:
    return " ".join(name.strip().lower().split())


class Catalog:
    """Categories → tools → APIs. Immutable after construction; safe to share between threads."""

    def __init__(
        self,
        categories: Iterable[Category],
        *,
        name: str = "catalog",
        embeddings: Embeddings | str | None = None,
        index_dir: str | Path | None = None,
        executors: Mapping[str, Executor] | None = None,
    ) -> None:
        self.name = name
        self._categories: dict[str, Category] = {}
        self._tools: dict[str, dict[str, Tool]] = {}  # category -> tool key -> tool
        self._tool_names: dict[str, dict[str, Tool]] = {}  # category -> normalised name/key -> tool
        self._apis: dict[str, Api] = {}
        self._namer = FunctionNamer()
        categories = list(map(_repaired_category, categories))
        preferred = {a.id: a.preferred_name for c in categories for t in c.tools for a in t.apis if a.preferred_name}
        for api_id, kept in kept_names(preferred).items():  # names loaders prefer (a LangChain tool's own name)
            self._namer.reserve(api_id, kept)
        for given in categories:
            if given.name in self._categories:
                raise CatalogError(f"duplicate category {given.name!r}", field="category")
            cat = self._named(given)
            self._categories[cat.name] = cat
            tools = self._tools.setdefault(cat.name, {})
            names = self._tool_names.setdefault(cat.name, {})
            for tool in cat.tools:
                if tool.key in tools:
                    raise CatalogError(f"duplicate tool {tool.key!r} in category {cat.name!r}", source=tool.source)
                tools[tool.key] = tool
                names.setdefault(_norm(tool.name), tool)
                names.setdefault(tool.key, tool)
                for api in tool.apis:
                    if api.id in self._apis:
                        raise CatalogError(f"duplicate API id {api.id!r}", source=tool.source)
                    self._apis[api.id] = api
        self._executors: dict[str, Executor] = {}
        for key, ex in (executors or {}).items():
            if key not in self._apis and not self._is_tool_or_category(key):
                raise CatalogError(f"executor bound to {key!r}, which is no API id, tool id or category of this catalog",
                                   field="executors")
            self._executors[key] = ex
        self._embeddings = embeddings
        self._index_dir = Path(index_dir) if index_dir else None
        self._searcher: CatalogSearcher | None = None
        self._lock = threading.Lock()
        self._fingerprint: str | None = None

    def _named(self, cat: Category) -> Category:
        """`cat` with every API's `function_name` set to the name this catalog gives it: an API named otherwise (or
        not yet) is copied, never changed in place, since other catalogs may hold the same object."""
        tools = []
        for tool in cat.tools:
            apis = []
            for api in tool.apis:
                name = self._namer.add(api.id, api.id.rsplit("/", 1)[1], tool.key, cat.name)
                apis.append(api if api.function_name == name else replace(api, function_name=name))
            tools.append(tool if all(a is b for a, b in zip(apis, tool.apis, strict=True))
                         else replace(tool, apis=tuple(apis)))
        return cat if all(a is b for a, b in zip(tools, cat.tools, strict=True)) else replace(cat, tools=tuple(tools))

    def _is_tool_or_category(self, key: str) -> bool:
        if key in self._categories:
            return True
        cat, _, tool = key.rpartition("/")
        return tool in self._tools.get(cat, {})

    # -------------------------------------------------------------- executors
    @property
    def executors(self) -> dict[str, Executor]:
        """Executors bound by the loader (API id, tool id or category → executor), e.g. the LangChain tools an
        API wraps. `ApiExecutor(kind="auto")` and the graphs' default executor run those APIs with them."""
        return dict(self._executors)

    def executor_for(self, api: Api) -> Executor | None:
        """The executor bound to the API (by id, then tool id, then category), or None."""
        for key in (api.id, f"{api.category}/{api.tool_key}", api.category):
            ex = self._executors.get(key)
            if ex is not None:
                return ex
        return None

    def unbound_apis(self) -> list[Api]:
        """APIs no executor is bound to (those an HTTP default would have to call)."""
        return [a for a in self._apis.values() if self.executor_for(a) is None]

    @classmethod
    def merge(cls, *catalogs: Catalog, name: str | None = None, **kwargs: Any) -> Catalog:
        """One catalog holding every category of `catalogs`; each API keeps the executor its catalog bound
        (the builtin catalog's APIs keep the local one). Category names must not repeat."""
        if not catalogs:
            raise CatalogError("Catalog.merge needs at least one catalog")
        categories: list[Category] = []
        executors: dict[str, Executor] = {}
        for cat in catalogs:
            seen = set(c.name for c in categories)
            for c in cat._categories.values():
                if c.name in seen:
                    raise CatalogError(f"category {c.name!r} is in two merged catalogs; rename one (category=...)",
                                       field="category")
                categories.append(c)
            executors.update(cat._executors)
            if cat.name == "builtin" and not cat._executors:
                local = Binding("local")  # tools/ makes the executor (catalog/ never imports tools/)
                executors.update(dict.fromkeys(cat._categories, local))
        return cls(categories, name=name or "+".join(c.name for c in catalogs), executors=executors, **kwargs)

    # ----------------------------------------------------------------- loaders
    @classmethod
    def builtin(cls, **kwargs: Any) -> Catalog:
        """The offline toolset that ships with the package (its APIs execute locally)."""
        from .builtin import builtin_categories

        return cls(builtin_categories(), name="builtin", **kwargs)

    @classmethod
    def from_toolbench(cls, path: str | Path, **kwargs: Any) -> Catalog:
        """Load ToolBench's `tools/<Category>/<tool>.json` layout."""
        from .loaders import load_toolbench_dir

        return cls(load_toolbench_dir(path), name=Path(path).name, **kwargs)

    @classmethod
    def from_query_files(cls, files: Iterable[str | Path], **kwargs: Any) -> Catalog:
        """Build a catalog from the `api_list` of StableToolBench query files."""
        from .loaders import load_query_api_lists

        return cls(load_query_api_lists(files), name="queries", **kwargs)

    @classmethod
    def from_openapi(cls, specs: Iterable[str | Path | dict[str, Any]], *, category: str = "OpenAPI", **kwargs: Any) -> Catalog:
        """One tool per OpenAPI 3 spec (file path or dict); one API per operation."""
        from .openapi import load_openapi_specs

        return cls(load_openapi_specs(specs, category=category), name="openapi", **kwargs)

    @classmethod
    def from_langchain_tools(cls, tools: Sequence[BaseTool | Callable[..., Any]], *, category: str = "LangChain",
                             tool_name: str = "langchain_tools", timeout: float | None = 60.0,
                             **kwargs: Any) -> Catalog:
        """Wrap LangChain tools (`@tool` functions, `StructuredTool`s, plain functions, sync or async): one catalog
        tool holding one API per LangChain tool. The APIs run those tools (no executor to wire)."""
        from .lc_tools import bind_langchain_tools

        categories, executors = bind_langchain_tools(tools, category=category, tool_name=tool_name, timeout=timeout)
        return cls(categories, name="langchain", executors=executors, **kwargs)

    @classmethod
    def from_mcp(cls, connections: Mapping[str, Mapping[str, Any]], *, category: str = "MCP",
                 timeout: float = 60.0, **kwargs: Any) -> Catalog:
        """Load the tools of MCP servers (`langchain-mcp-adapters` connections: `{"server": {"transport": "stdio",
        "command": ..., "args": [...]}}`): one catalog tool per server, one API per MCP tool, run on that server.
        `timeout` (seconds, required to be finite) bounds each step: starting, initialising and listing a server at
        load time, and each call. Needs the `mcp` extra. From async code, use `await Catalog.afrom_mcp(...)`."""
        from .mcp import load_mcp_catalog

        return load_mcp_catalog(cls, connections, category=category, timeout=timeout, **kwargs)

    @classmethod
    async def afrom_mcp(cls, connections: Mapping[str, Mapping[str, Any]], *, category: str = "MCP",
                        timeout: float = 60.0, **kwargs: Any) -> Catalog:
        """Async `from_mcp`."""
        from .mcp import aload_mcp_catalog

        return await aload_mcp_catalog(cls, connections, category=category, timeout=timeout, **kwargs)

    @classmethod
    def load(cls, path: str | Path | None, **kwargs: Any) -> Catalog:
        """`None` → builtin; an OPPO `toolset/` folder → `oppo_toolset.oppo_catalog`; a directory → ToolBench
        layout; a JSON list of queries with `api_list`s (StableToolBench query file) → `from_query_files`; a JSON or
        YAML document with an `openapi` field → `from_openapi`. Anything else is a `CatalogError` saying the path is
        not a catalog and listing these formats."""
        if path is None:
            return cls.builtin(**kwargs)
        p = Path(path)
        if not p.exists():
            raise CatalogError(f"catalog path does not exist: {p}", source=str(p))
        if p.is_dir():
            from .oppo_toolset import is_oppo_toolset

            if is_oppo_toolset(p):  # OPPO's toolset/ folder (config.yml + {rapidapi,dev_tools}/docs)
                return oppo_catalog(p, **kwargs)
            return cls.from_toolbench(p, **kwargs)
        from .loaders import check_spec_file, is_query_file

        if is_query_file(p):
            return cls.from_query_files([p], **kwargs)
        check_spec_file(p)  # any other file (a README, a config) is "not a catalog", naming the formats accepted
        return cls.from_openapi([p], **kwargs)

    def with_search(self, *, embeddings: Embeddings | str | None = None,
                    index_dir: str | Path | None = None) -> Catalog:
        """The same catalog with another search configuration (data is shared, not copied)."""
        clone = object.__new__(Catalog)
        clone.__dict__.update(self.__dict__)
        clone._embeddings = embeddings
        clone._index_dir = Path(index_dir) if index_dir else None
        clone._searcher = None
        clone._lock = threading.Lock()
        return clone

    # -------------------------------------------------------------- navigation
    def __len__(self) -> int:
        return len(self._apis)

    def __iter__(self) -> Iterator[Api]:
        return iter(self._apis.values())

    def __contains__(self, api_id: object) -> bool:
        return api_id in self._apis

    def __repr__(self) -> str:
        return f"Catalog({self.name!r}: {len(self._categories)} categories, {self.num_tools} tools, {len(self)} APIs)"

    @property
    def categories(self) -> list[str]:
        return list(self._categories)

    @property
    def num_tools(self) -> int:
        return sum(len(t) for t in self._tools.values())

    def category(self, name: str) -> Category:
        cat = self._categories.get(name) or self._match_category(name)
        if cat is None:
            raise UnknownNameError(f"unknown category {name!r}; known: {', '.join(sorted(self._categories))}")
        return cat

    def _match_category(self, name: str) -> Category | None:
        n = _norm(name)
        for cname, cat in self._categories.items():
            if _norm(cname) == n or slugify(cname) == slugify(name):
                return cat
        return None

    def tools(self, category: str | None = None) -> list[Tool]:
        if category is None:
            return [t for ts in self._tools.values() for t in ts.values()]
        return list(self.category(category).tools)

    def tool(self, category: str, tool: str) -> Tool:
        """A tool by display name or key within a category."""
        cat = self.category(category)
        found = self._tool_names[cat.name].get(_norm(tool)) or self._tool_names[cat.name].get(slugify(tool))
        if found is None:
            raise UnknownNameError(f"no tool {tool!r} in category {cat.name!r}")
        return found

    def find_tools(self, tool: str) -> list[Tool]:
        """Every tool, in any category, whose display name or key is `tool`."""
        n, s = _norm(tool), slugify(tool)
        return [t for names in self._tool_names.values() for t in {id(x): x for x in (names.get(n), names.get(s)) if x}.values()]

    def api(self, api_id: str) -> Api:
        try:
            return self._apis[api_id]
        except KeyError:
            raise UnknownNameError(f"unknown API id {api_id!r}") from None

    def find_api(self, tool: str, api: str, category: str | None = None) -> Api:
        """An API by tool and API display names (or keys), optionally within a category."""
        tools = [self.tool(category, tool)] if category else self.find_tools(tool)
        if not tools:
            raise UnknownNameError(f"unknown tool {tool!r}")
        n, s = _norm(api), slugify(api)
        # an exact display name wins over a key match: "Get User" and "get-user" share the slug get_user
        for t in tools:
            for a in t.apis:
                if _norm(a.name) == n:
                    return a
        for t in tools:
            for a in t.apis:
                if a.id.rsplit("/", 1)[1] == s:
                    return a
        raise UnknownNameError(f"tool {tools[0].name!r} has no API {api!r}")

    # ---------------------------------------------------------------- naming
    def function_name(self, api_id: str) -> str:
        """The model-facing function name of an API (unique, ≤ 64 chars, `[a-zA-Z0-9_-]`)."""
        self.api(api_id)
        return self._namer.name_of(api_id)

    def api_for_function(self, name: str) -> Api:
        api_id = self._namer.id_of(name)
        if api_id is None:
            raise UnknownNameError(f"unknown function {name!r}")
        return self._apis[api_id]

    # ------------------------------------------------------------ identity
    def fingerprint(self) -> str:
        """A content hash: changes whenever any searchable text or id changes."""
        if self._fingerprint is None:
            h = hashlib.sha256()
            for api in self._apis.values():
                # surrogatepass: never fails (the constructor repairs lone surrogates; this is the last guard)
                h.update(json.dumps([api.id, api.name, api.tool_name, api.description,
                                     [(p.name, p.description) for p in api.params]],
                                    ensure_ascii=False).encode("utf-8", "surrogatepass"))
            for cat in self._categories.values():
                for tool in cat.tools:
                    h.update(f"{tool.id}\x00{tool.description}".encode("utf-8", "surrogatepass"))
            self._fingerprint = h.hexdigest()[:16]
        return self._fingerprint

    # ---------------------------------------------------------------- search
    def searcher(self) -> CatalogSearcher:
        """The (lazily built) hybrid search index of this catalog."""
        with self._lock:
            if self._searcher is None:
                from .search import CatalogSearcher

                self._searcher = CatalogSearcher(self, embeddings=self._embeddings, index_dir=self._index_dir)
            return self._searcher

    def search(self, query: str, k: int = 10) -> list[SearchHit]:
        """Rank APIs for a query (hybrid BM25 + dense when embeddings are configured)."""
        return self.searcher().search_apis(query, k)

    def search_tools(self, query: str, k: int = 10, category: str | None = None) -> list[ToolHit]:
        return self.searcher().search_tools(query, k, category=category)

    def search_categories(self, query: str, k: int = 10) -> list[CategoryHit]:
        return self.searcher().search_categories(query, k)


def _strings(value: Any) -> Iterator[str]:
    """Every string in `value` (nested lists, tuples and dicts, keys included), depth first, without recursion."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, Mapping):
            stack.extend(k for k in v if isinstance(k, str))
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)


def _tool_texts(tool: Tool) -> Iterator[str]:
    yield from (tool.key, tool.name, tool.category, tool.description, tool.base_url, tool.source)
    data: list[Any] = []
    for api in tool.apis:
        yield from (api.id, api.name, api.tool_key, api.tool_name, api.category, api.description, api.method, api.path)
        for p in api.params:
            yield from (p.name, p.type, p.description, p.location)
            data.append((p.default, p.enum))
        data.append(api.template_response)
    try:  # one C-speed pass over the data fields (json keeps lone surrogates with ensure_ascii=False)
        yield json.dumps(data, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):  # keys json cannot write, a cycle, deep data
        yield from _strings(data)


def _repaired(obj: Any, where: str, fixed: list[str]) -> Any:
    """A copy of the dataclass `obj` whose string fields (and strings nested in its data fields) have lone
    surrogates replaced with U+FFFD; `fixed` gains the names of the fields changed."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, tuple) and value and isinstance(value[0], (Tool, Api, Param)):
            continue  # the caller repairs the parts
        cleaned, paths = replace_surrogates(value, f"{where}.{f.name}")
        if paths:
            changes[f.name] = tuple(cleaned) if isinstance(value, tuple) else cleaned
            fixed.extend(paths)
    return dataclasses.replace(obj, **changes) if changes else obj


def _repaired_category(cat: Category) -> Category:
    """`cat`, or a copy whose texts have lone surrogates (invalid code points: no UTF-8 encoding, so the fingerprint,
    the encoder and every JSON writer would fail on them) replaced with U+FFFD, with a warning naming the tool's
    source and the fields. Loaders repair their files already (naming the file's fields); this covers catalogs
    built in code."""
    texts = itertools.chain((cat.name, cat.description), *(_tool_texts(t) for t in cat.tools))
    if not _SURROGATE.search("\x00".join(texts)):
        return cat
    tools = []
    for tool in cat.tools:
        fixed: list[str] = []
        apis = []
        for i, api in enumerate(tool.apis):
            params = tuple(_repaired(p, f"apis[{i}].params[{j}]", fixed) for j, p in enumerate(api.params))
            apis.append(dataclasses.replace(_repaired(api, f"apis[{i}]", fixed), params=params))
        tool = dataclasses.replace(_repaired(tool, "tool", fixed), apis=tuple(apis))
        if fixed:
            log.warning("%s: invalid code points (lone surrogates) replaced with U+FFFD in %d field(s): %s",
                        tool.source or f"tool {tool.name!r}", len(fixed), first_fields(fixed))
        tools.append(tool)
    fixed = []
    repaired = _repaired(cat, "category", fixed)
    if fixed:
        log.warning("category %r: invalid code points (lone surrogates) replaced with U+FFFD in %s", repaired.name,
                    first_fields(fixed))
    return dataclasses.replace(repaired, tools=tuple(tools))


def oppo_catalog(root: str | Path, **kwargs: Any) -> Catalog:
    """`Catalog` of an OPPO toolset folder; its dev tools run locally (`dev_tool_implementations`, bound per API)."""
    from .oppo_toolset import dev_tool_implementations, load_oppo_toolset

    categories, config = load_oppo_toolset(root)
    impls = dev_tool_implementations(config)
    bound = {api.id: impls[(api.tool_name, api.name)] for cat in categories for tool in cat.tools
             for api in tool.apis if (api.tool_name, api.name) in impls}
    executors = dict(kwargs.pop("executors", None) or {})
    if bound:
        local = Binding("local", bound)  # tools/binding.py makes the LocalExecutor
        executors.update(dict.fromkeys(bound, local))
    return Catalog(categories, name=kwargs.pop("name", Path(root).name or "toolset"), executors=executors, **kwargs)
