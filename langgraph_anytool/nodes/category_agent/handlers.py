"""Category-agent functions, and the catalog browsing the meta-agent shares with it."""

from __future__ import annotations

import difflib
import os
from typing import TYPE_CHECKING

from ...catalog import Catalog, Category, Tool, UnknownNameError
from ...paper_prompts.anytool import tool_data_order
from ...text import shorten
from ...tools.agent_functions import CategoryArgs, ToolNamesArgs, ToolsDescriptionArgs
from ..agents.context import CallContext, FunctionResult, to_json
from ..agents.records import new_agent_record

DESCRIPTION_CHARS = 512  # per tool, in get_tools_descriptions
LIST_ALL_UP_TO = 100  # refusals list every valid name when there are at most this many

if TYPE_CHECKING:
    from ...runtime import Deps


def close_matches(name: str, options: list[str], n: int = 5) -> list[str]:
    """Options that look like `name` (fuzzy, case-insensitive, substrings), best first."""
    by_lower = {o.lower(): o for o in options}
    low = name.strip().lower()
    found = [by_lower[m] for m in difflib.get_close_matches(low, list(by_lower), n=n, cutoff=0.5)]
    if low:
        found += [o for o in options if low in o.lower() or o.lower() in low]
    return list(dict.fromkeys(found))[:n]


def resolve_category(catalog: Catalog, name: str) -> Category | str:
    """The category called `name`, or a message listing close matches."""
    try:
        return catalog.category(name)
    except UnknownNameError:
        near = close_matches(name, catalog.categories)
        hint = f" Did you mean: {', '.join(near)}?" if near else ""
        return f"Error: unknown category {name!r}.{hint} Use a category name exactly as listed in your instructions."


def unknown_tools_message(catalog: Catalog, category: str, names: list[str]) -> str:
    """A refusal naming the unknown tools and the valid names (or close matches in a big category)."""
    valid = [t.name for t in catalog.tools(category)]
    near = sorted({m for n in names for m in close_matches(n, valid, 3)})
    msg = f"Error: no tool named {', '.join(repr(n) for n in names)} in category {category!r}."
    if near:
        msg += f" Close matches: {', '.join(near)}."
    if len(valid) <= LIST_ALL_UP_TO:
        msg += f" Valid tool names: {to_json(valid)}."
    else:
        msg += f" Call get_tools_in_category({category!r}) for the {len(valid)} valid names."
    return msg


def resolve_tools(catalog: Catalog, category: str, names: list[str]) -> tuple[list[Tool], list[str]]:
    """The tools of `category` called `names` (deduplicated, in order) and the names not found."""
    found: dict[str, Tool] = {}
    missing: list[str] = []
    for name in names:
        try:
            tool = catalog.tool(category, name)
        except UnknownNameError:
            missing.append(name)
            continue
        found.setdefault(tool.key, tool)
    return list(found.values()), missing


def authors_tools(deps: Deps, category: Category) -> list[Tool]:
    """A category's tools in the order the authors' `get_tools_in_category` lists them
    (dyabel/AnyTool `anytool/api_database_function.py`: `list(database[category_name].keys())` of `tool_data.json`):
    the clone's `tool_data.json` when `prompts_from` has one; else the order `os.walk` meets the catalog's files
    (`preprocess/extract_tool_database.py` on this machine: the directory's listing, unsorted), when the category's
    tools are files of one folder; else the catalog's. Tools the order does not name keep the catalog's order, last."""
    tools = list(category.tools)
    root = deps.config.prompts_from
    names = (tool_data_order(root) or {}).get(category.name) if root else None
    if names is not None:
        rank = {n: i for i, n in enumerate(names)}
        return sorted(tools, key=lambda t: rank.get(t.name, len(rank)))
    folders = {os.path.dirname(t.source) for t in tools}
    if len(folders) != 1 or not all(os.path.isfile(t.source) for t in tools):
        return tools
    try:
        listing = {name: i for i, name in enumerate(os.listdir(folders.pop()))}
    except OSError:
        return tools
    return sorted(tools, key=lambda t: listing.get(os.path.basename(t.source), len(listing)))


def list_tools(catalog: Catalog, category_name: str) -> str:
    """`get_tools_in_category`: the tool names of a category."""
    cat = resolve_category(catalog, category_name)
    if isinstance(cat, str):
        return cat
    return to_json([t.name for t in cat.tools])


def describe_tools(catalog: Catalog, category_name: str, tool_names: list[str]) -> str:
    """`get_tools_descriptions`: each named tool's description (unknown names answered with matches)."""
    cat = resolve_category(catalog, category_name)
    if isinstance(cat, str):
        return cat
    if not tool_names:
        return "Error: give at least one tool name in tool_names."
    out: dict[str, str] = {}
    for name in tool_names:
        tools, missing = resolve_tools(catalog, cat.name, [name])
        if missing:
            near = close_matches(name, [t.name for t in cat.tools], 3)
            out[name] = f"Error: no such tool in {cat.name!r}" + (f"; close matches: {', '.join(near)}" if near else "")
        else:
            desc = tools[0].description or "(no description)"
            out[tools[0].name] = shorten(desc, DESCRIPTION_CHARS)
    return to_json(out)


def _own_category(ctx: CallContext, category_name: str) -> str | None:
    """None when `category_name` is this agent's category, else a refusal."""
    own = ctx.record["category"] or ""
    cat = resolve_category(ctx.deps.catalog, category_name)
    if isinstance(cat, str) or cat.name != own:
        return f"Error: you search the category {own!r} only; use category_name={own!r}."
    return None


def authors_list_tools(deps: Deps, category_name: str) -> str | None:
    """With the authors' prompts, `get_tools_in_category`'s answer as main.py sends it: `str()` of the tool names
    (`anytool/api_database_function.py get_tools_in_category`, in `authors_tools` order); None: ours."""
    if deps.paper_prompts is None:
        return None
    cat = resolve_category(deps.catalog, category_name)
    return cat if isinstance(cat, str) else str([t.name for t in authors_tools(deps, cat)])


def authors_describe_tools(deps: Deps, category_name: str, tool_names: list[str]) -> str | None:
    """With the authors' prompts, `get_tools_descriptions`'s answer as main.py sends it: `str()` of {tool name:
    its description as written} in the order asked (`api_database_function.py get_tools_descriptions`, from
    `category_tool_details.json`: the tool document's `tool_description`); an unknown tool: their
    f'tool name {tool_name} not found'; None: ours."""
    if deps.paper_prompts is None:
        return None
    cat = resolve_category(deps.catalog, category_name)
    if isinstance(cat, str):
        return cat
    out: dict[str, str] = {}
    for name in tool_names:
        tools, missing = resolve_tools(deps.catalog, cat.name, [name])
        if missing:
            return f"tool name {name} not found"
        out[name] = tools[0].as_written
    return str(out)


def get_tools_in_category(ctx: CallContext, args: CategoryArgs) -> str:
    return _own_category(ctx, args.category_name) or authors_list_tools(ctx.deps, args.category_name) or \
        list_tools(ctx.deps.catalog, args.category_name)


def get_tools_descriptions(ctx: CallContext, args: ToolsDescriptionArgs) -> str:
    refusal = _own_category(ctx, args.category_name)
    return refusal or authors_describe_tools(ctx.deps, args.category_name, args.tool_names) or \
        describe_tools(ctx.deps.catalog, args.category_name, args.tool_names)


def create_agent_tool_level(ctx: CallContext, args: ToolNamesArgs) -> FunctionResult | str:
    """Create a tool agent for up to `max_tools_per_agent` unassigned tools of this agent's category."""
    rec, catalog, limit = ctx.record, ctx.deps.catalog, ctx.deps.config.max_tools_per_agent
    category = rec["category"] or ""
    if not args.tool_names:
        return "Error: give at least one tool name in tool_names."
    tools, missing = resolve_tools(catalog, category, args.tool_names)
    if missing:
        return unknown_tools_message(catalog, category, missing) + " No agent was created."
    if len(tools) > limit:
        return (f"Error: at most {limit} tools per agent, got {len(tools)}. Split them over several agents "
                "(similar tools together). No agent was created.")
    taken = [t.name for t in tools if t.name in rec["tools"]]
    if taken:
        free = [t.name for t in catalog.tools(category) if t.name not in rec["tools"]]
        return (f"Error: already assigned to another tool agent: {', '.join(taken)}. Assign each tool once. "
                f"Tools not yet assigned: {to_json(free)}. No agent was created.")
    child_id = f"{rec['id']}/t{len(rec['children']) + 1}"
    names = [t.name for t in tools]
    ctx.children[child_id] = new_agent_record(child_id, "tool", parent=rec["id"], category=category, tools=names,
                                              ready=ctx.tick + 1)
    rec["children"].append(child_id)
    rec["tools"].extend(names)  # a category agent's `tools`: what it has assigned so far
    book = ctx.deps.paper_prompts
    if book is not None:  # main.py Category_Agent.create_agent_tool_level: f'tools {tools} assigned.' (the list given)
        return book.fill("agent_tools_assigned", tools=list(args.tool_names))
    return f"Created tool agent {child_id} for the tools {to_json(names)}."
