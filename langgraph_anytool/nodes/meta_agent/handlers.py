"""Meta-agent functions: browse any category, create one category agent per relevant category."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ...tools.agent_functions import CategoryArgs, ToolsDescriptionArgs
from ..agents.context import CallContext, to_json
from ..agents.records import new_agent_record
from ..category_agent.handlers import (
    authors_describe_tools,
    authors_list_tools,
    authors_tools,
    describe_tools,
    list_tools,
    resolve_category,
)

if TYPE_CHECKING:
    from ...runtime import Deps

log = logging.getLogger(__name__)


def get_tools_in_category(ctx: CallContext, args: CategoryArgs) -> str:
    return authors_list_tools(ctx.deps, args.category_name) or list_tools(ctx.deps.catalog, args.category_name)


def get_tools_descriptions(ctx: CallContext, args: ToolsDescriptionArgs) -> str:
    return authors_describe_tools(ctx.deps, args.category_name, args.tool_names) or \
        describe_tools(ctx.deps.catalog, args.category_name, args.tool_names)


def category_agent_id(parent_id: str, category: str) -> str:
    """A readable, deterministic child id, e.g. `meta/Finance`."""
    return f"{parent_id}/{category.replace('/', '_')}"


def create_agent_category_level(ctx: CallContext, args: CategoryArgs) -> str:
    """Create a category agent (each category at most once per run).

    With `small_category_shortcut` on, a category with at most `max_tools_per_agent` tools gets no model call: its
    agent is recorded with one pending tool agent holding all its tools, as the authors' code does (dyabel/AnyTool
    `scripts/main.py` `Category_Agent.category_search`: `len(self.tools) <= leaf_tool_number` → its own
    `create_agent_tool_level(category, all tools)`). The agent is `finished` (`small_category`); with
    `small_category_finished=False` (`AnyToolConfig.paper()`) it is `stopped` instead, as `category_search`
    returns there without setting `finish_search`: a re-activation then finishes it without a model call
    (`Category_Agent.resume_search`).
    """
    rec, catalog, cfg = ctx.record, ctx.deps.catalog, ctx.deps.config
    cat = resolve_category(catalog, args.category_name)
    if isinstance(cat, str):
        return cat + " No agent was created."
    child_id = category_agent_id(rec["id"], cat.name)
    if child_id in rec["children"]:
        return (f"Error: an agent for the category {cat.name!r} already exists. Assign other, unexplored "
                "categories, or call finish_search if none is left.")
    # with the authors' prompts the shortcut's tool agent gets the tools in their order (category_search:
    # `create_agent_tool_level(self.category, self.tools)`, `self.tools = get_tools_in_category(...)`)
    tools = [t.name for t in (authors_tools(ctx.deps, cat) if ctx.deps.paper_prompts is not None else cat.tools)]
    if not tools:
        return f"The category {cat.name!r} has no tools; no agent was created."
    child = new_agent_record(child_id, "category", parent=rec["id"], category=cat.name, ready=ctx.tick + 1)
    rec["children"].append(child_id)
    ctx.children[child_id] = child
    book = ctx.deps.paper_prompts
    # main.py Main_Search_Agent.create_agent_category_level: f'category: {category} assigned.' (the name given)
    done = book.fill("agent_category_assigned", category=args.category_name) if book is not None else ""
    if not cfg.small_category_shortcut or len(tools) > cfg.max_tools_per_agent:
        return done or f"Created category agent {child_id} for the category {cat.name!r} ({len(tools)} tools)."
    tool_id = f"{child_id}/t1"
    ctx.children[tool_id] = new_agent_record(tool_id, "tool", parent=child_id, category=cat.name, tools=tools,
                                             ready=ctx.tick + 1)
    child["status"] = "finished" if cfg.small_category_finished else "stopped"
    child["end_reason"], child["small_category"] = "small_category", True
    child["children"], child["tools"] = [tool_id], list(tools)
    if done:  # the same answer: category_search's shortcut runs inside the call (its return is not read)
        return done
    return (f"Created category agent {child_id} for the category {cat.name!r}. It has only {len(tools)} tools, "
            f"so they were all assigned to tool agent {tool_id}: {to_json(tools)}.")


def _hit_name(hit: Any) -> str | None:
    if isinstance(hit, str):
        return hit
    if isinstance(hit, tuple) and hit and isinstance(hit[0], str):
        return hit[0]
    name = getattr(hit, "category", None) or getattr(hit, "name", None)
    return name if isinstance(name, str) else None


def seed_categories(deps: Deps, query: str, k: int = 5) -> list[str]:
    """The categories the catalog search ranks highest for `query` ([] when search is unavailable)."""
    try:
        hits = deps.catalog.search_categories(query, k)
    except ImportError:
        return []
    except Exception as exc:  # a search failure must not stop retrieval
        log.warning("category search failed; the meta-agent gets no hints: %s", exc)
        return []
    names = [n for n in (_hit_name(h) for h in hits) if n and n in deps.catalog.categories]
    return list(dict.fromkeys(names))[:k]
