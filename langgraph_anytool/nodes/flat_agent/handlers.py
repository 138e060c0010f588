"""Flat-agent functions: the meta-agent's catalog browsing, and the tool agent's API functions on any tool
(each call names the tool's category). The API functions run the tool agent's handlers in a view scoped to the
named tool, so both retrievers add, refuse and report APIs the same way."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...catalog import Tool, UnknownNameError
from ...tools.agent_functions import (
    AddApisArgs,
    ApiDetailArgs,
    ApiRef,
    CategoryApiDetailArgs,
    CategoryToolArgs,
    FlatAddApisArgs,
    NoArgs,
    ToolArgs,
)
from ..agents.context import CallContext, FunctionResult, to_json
from ..category_agent.handlers import resolve_category, unknown_tools_message
from ..meta_agent.handlers import get_tools_descriptions, get_tools_in_category
from ..tool_agent import handlers as tool

__all__ = ["add_apis_into_api_pool", "check_if_request_solvable", "get_api_details", "get_apis_in_tool",
           "get_tools_descriptions", "get_tools_in_category"]


def _tool(ctx: CallContext, category_name: str, tool_name: str) -> Tool | str:
    cat = resolve_category(ctx.deps.catalog, category_name)
    if isinstance(cat, str):
        return cat
    try:
        return ctx.deps.catalog.tool(cat.name, tool_name)
    except UnknownNameError:
        return unknown_tools_message(ctx.deps.catalog, cat.name, [tool_name])


def _scoped(ctx: CallContext, found: Tool) -> CallContext:
    """This step's context seen as a tool agent of `found` (same pool additions and signals)."""
    return replace(ctx, record={**ctx.record, "category": found.category, "tools": [found.name]})


def get_apis_in_tool(ctx: CallContext, args: CategoryToolArgs) -> str:
    found = _tool(ctx, args.category_name, args.tool_name)
    return found if isinstance(found, str) else tool.get_apis_in_tool(_scoped(ctx, found), ToolArgs(tool_name=found.name))


def get_api_details(ctx: CallContext, args: CategoryApiDetailArgs) -> str:
    found = _tool(ctx, args.category_name, args.tool_name)
    if isinstance(found, str):
        return found
    return tool.get_api_details(_scoped(ctx, found), ApiDetailArgs(tool_name=found.name, api_names=args.api_names))


def add_apis_into_api_pool(ctx: CallContext, args: FlatAddApisArgs) -> FunctionResult | str:
    """Add APIs of any tools; the tool agent's report per tool, merged (then, with `solvable_check="after_add"`,
    one solvability check, as the tool agent does)."""
    if not args.apis:
        return 'Error: give at least one API, e.g. apis=[{"category_name": "...", "tool_name": "...", "api_name": "..."}].'
    merged: dict[str, Any] = {"added": []}
    for ref in args.apis:
        found = _tool(ctx, ref.category_name, ref.tool_name)
        if isinstance(found, str):
            merged.setdefault("refused", []).append({"api": f"{ref.tool_name}: {ref.api_name}",
                                                     "reason": found.removeprefix("Error: ")})
            continue
        report = tool.add_to_pool(_scoped(ctx, found),
                                  AddApisArgs(apis=[ApiRef(tool_name=found.name, api_name=ref.api_name)]))
        assert not isinstance(report, str)  # one API given
        for key in ("added", "already_in_pool", "refused"):
            merged.setdefault(key, []).extend(report.get(key, []))
        merged["pool_size"] = report["pool_size"]
    merged["pool_size"] = len(ctx.pool_ids())
    return tool.after_add_check(ctx, to_json(merged))


def check_if_request_solvable(ctx: CallContext, args: NoArgs) -> FunctionResult | str:
    return tool.check_if_request_solvable(ctx, args)
