"""Wrap LangChain tools as catalog APIs, and give the local executor callables that run them.

One catalog tool (``tool_name``) holds one API per LangChain tool: API name = the LangChain tool's name,
description = its description, parameters = the top-level properties of its model-facing argument schema
(LangChain's own OpenAI-function conversion, so injected arguments are left out and `$defs` are inlined), with
the schema's ``required`` list honoured. Types, enums and defaults are mapped as for OpenAPI request bodies.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..sanitize.files import repair_surrogates
from .errors import CatalogError, UnknownNameError
from .models import Api, Binding, Category
from .openapi import SchemaResolver
from .parse import parse_tool

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool


SOURCE_PREFIX = "langchain:"
_SURROGATE = re.compile("[\ud800-\udfff]")


def _function_schema(tool: BaseTool) -> tuple[str, dict[str, Any]]:
    """`(description, parameters JSON schema)` of a LangChain tool as a model would see it."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    try:
        fn = convert_to_openai_tool(tool)["function"]
    except Exception as exc:  # a broken args_schema: report which tool
        raise CatalogError(f"cannot read the argument schema of LangChain tool {tool.name!r}: {exc}",
                           source=f"{SOURCE_PREFIX}{tool.name}", field="args_schema") from exc
    params = fn.get("parameters") or {}
    return str(fn.get("description") or tool.description or ""), params if isinstance(params, dict) else {}


def load_langchain_tools(tools: Sequence[BaseTool], *, category: str, tool_name: str) -> list[Category]:
    """One `Category` with one catalog tool named `tool_name` holding one API per LangChain tool."""
    source = f"{SOURCE_PREFIX}{tool_name}"
    if not tools:
        raise CatalogError("no LangChain tools given", source=source)
    seen: dict[str, int] = {}
    apis: list[dict[str, Any]] = []
    for i, lc_tool in enumerate(tools):
        name = getattr(lc_tool, "name", None)
        if not isinstance(name, str) or not name.strip():
            raise CatalogError("LangChain tool has no name", source=source, field=f"tools[{i}].name")
        if _SURROGATE.search(name):  # a name is matched exactly when the tool runs: refused, not repaired
            raise CatalogError(f"the name {name.encode('utf-8', 'backslashreplace').decode()!r} holds invalid code "
                               "points (lone surrogates)", source=source, field=f"tools[{i}].name")
        if name in seen:
            raise CatalogError(f"duplicate LangChain tool name {name!r} (also tools[{seen[name]}])",
                               source=source, field=f"tools[{i}].name")
        seen[name] = i
        description, schema = _function_schema(lc_tool)
        resolver = SchemaResolver(schema, f"{SOURCE_PREFIX}{name}")
        params = resolver.object_params(schema, "args_schema", location="body") or []
        apis.append({
            "name": name,
            "description": description,
            "required_parameters": [_strip(p) for p in params if p["required"]],
            "optional_parameters": [_strip(p) for p in params if not p["required"]],
        })
    # a short description: every API document repeats its tool's, so listing all tool names here would put every
    # name into every API's search text. Descriptions and schemas with lone surrogates are repaired (a warning names
    # the fields); they would make the catalog unusable (UTF-8 encoding fails in the fingerprint, the encoder)
    doc = repair_surrogates({"tool_name": tool_name, "tool_description": f"{len(seen)} LangChain tools",
                             "api_list": apis}, source=source)
    tool = parse_tool(doc, category=category, source=source)
    # each API prefers its LangChain tool's own name as its function name (`get_weather`, not
    # `get_weather_for_langchain_tools`); the catalog keeps it unless another API wants it too (catalog/naming.py)
    tool = replace(tool, apis=tuple(replace(api, preferred_name=api.name) for api in tool.apis))
    return [Category(name=category, tools=(tool,))]


def as_langchain_tools(tools: Sequence[BaseTool | Callable[..., Any]]) -> list[BaseTool]:
    """LangChain tools as given; plain (sync or async) functions are wrapped with `langchain_core.tools.tool`."""
    from langchain_core.tools import BaseTool, tool

    out: list[BaseTool] = []
    for i, t in enumerate(tools):
        if isinstance(t, BaseTool):
            out.append(t)
        elif callable(t):
            try:
                out.append(tool(t))
            except Exception as exc:
                raise CatalogError(f"cannot turn {getattr(t, '__name__', t)!r} into a LangChain tool: {exc}",
                                   source=SOURCE_PREFIX, field=f"tools[{i}]") from exc
        else:
            raise CatalogError(f"expected a LangChain tool or a function, got {type(t).__name__}",
                               source=SOURCE_PREFIX, field=f"tools[{i}]")
    return out


def bind_langchain_tools(
    tools: Sequence[BaseTool | Callable[..., Any]],
    *,
    category: str,
    tool_name: str,
    timeout: float | None = 60.0,
) -> tuple[list[Category], dict[str, Binding]]:
    """The categories of `load_langchain_tools` and one binding (kind "langchain") for every API;
    `tools/binding.py` makes the executor running its tool."""

    lc_tools = as_langchain_tools(tools)
    categories = load_langchain_tools(lc_tools, category=category, tool_name=tool_name)
    apis = categories[0].tools[0].apis
    by_name = {t.name: t for t in lc_tools}
    executor = Binding("langchain", {api.id: by_name[api.name] for api in apis}, {"timeout": timeout})
    return categories, dict.fromkeys((api.id for api in apis), executor)


def _strip(param: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in param.items() if k != "required"}


def _invoker(tool: BaseTool) -> Callable[..., Any]:
    def run(**kwargs: Any) -> Any:
        return tool.invoke(kwargs)

    run.__name__ = run.__qualname__ = f"invoke_{tool.name}"
    run.__doc__ = f"Run the LangChain tool {tool.name!r} with keyword arguments."
    return run


def langchain_tool_implementations(
    tools: Sequence[BaseTool],
    catalog: Any,  # a Catalog (not imported: catalog.py imports this module)
    *,
    category: str | None = None,
    tool_name: str | None = None,
) -> dict[str, Callable[..., Any]]:
    """Map each LangChain tool's API id in `catalog` to a callable `(**arguments) -> tool.invoke(arguments)`.

    The APIs are looked up among catalog tools built by `load_langchain_tools`; give `category` / `tool_name`
    when several such tools have an API with the same name.
    """
    candidates: dict[str, list[Api]] = {}
    for t in catalog.tools(category):
        if not t.source.startswith(SOURCE_PREFIX) or (tool_name is not None and tool_name not in (t.name, t.key)):
            continue
        for api in t.apis:
            candidates.setdefault(api.name, []).append(api)
    impls: dict[str, Callable[..., Any]] = {}
    for lc_tool in tools:
        found = candidates.get(lc_tool.name, [])
        if not found:
            raise UnknownNameError(f"LangChain tool {lc_tool.name!r} is not in catalog {catalog.name!r}")
        if len(found) > 1:
            raise CatalogError(f"LangChain tool {lc_tool.name!r} matches several APIs "
                               f"({', '.join(a.id for a in found)}); pass category= or tool_name=")
        impls[found[0].id] = _invoker(lc_tool)
    return impls
