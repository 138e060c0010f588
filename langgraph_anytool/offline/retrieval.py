"""The retriever's roles: meta agent (categories), category agent (tools), tool agent (APIs into the pool) and the
solvable check. Scope comes from the call's inputs, progress from the agent's own earlier function calls."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage

from ..catalog import Api
from ..catalog.errors import UnknownNameError
from .call import RoleCall
from .clauses import split_clauses
from .relevance import Heuristics
from .trajectory import called_args, last_call, pending_reactivation, refused_args, tool_calls

MAX_REFUSALS = 3  # refused tool assignments before a category agent gives up


# ------------------------------------------------------------------------------------------ meta agent
def rank_categories(h: Heuristics, query: str) -> list[str]:
    """Categories: that of each request part's best API first, then those of other fitting APIs, then the
    category search's ranking of the whole query."""
    clauses = split_clauses(query) or [query]
    out: list[str] = []
    per_clause = [[a.category for a in h.relevant(c, [a for _, a in h.ranked_apis(c)])] for c in clauses]
    for depth in range(max((len(p) for p in per_clause), default=0)):
        for cats in per_clause:
            if depth < len(cats) and cats[depth] not in out:
                out.append(cats[depth])
    for hit in h.catalog.search_categories(query, k=len(h.catalog.categories)):
        if hit.category not in out:
            out.append(hit.category)
    return out


def meta_reply(h: Heuristics, call: RoleCall) -> AIMessage:
    """One category agent per relevant category (more on re-activation), then `finish_search`."""
    query = call.query
    made = [str(c) for c in called_args(call.messages, "create_agent_category_level", "category_name")]
    reactivated = pending_reactivation(call.messages)
    if made and not reactivated:
        return tool_calls("The relevant categories have agents; the search is done.", ("finish_search", {}))
    want = 2 if reactivated else max(h.max_categories, min(5, len(split_clauses(query))))
    todo = [c for c in rank_categories(h, query) if c not in made][:want]
    if not todo:
        return tool_calls("No further category looks relevant.", ("finish_search", {}))
    return tool_calls(f"The categories {', '.join(todo)} match the query best; one agent each.",
                      *(("create_agent_category_level", {"category_name": c}) for c in todo))


# ------------------------------------------------------------------------------------------ category agent
def rank_tools(h: Heuristics, query: str, category: str, more: bool = False) -> list[str]:
    """Tool names of a category: the tools of its fitting APIs, then each part's best tools by tool search."""
    apis = [a for t in h.catalog.tools(category) for a in t.apis]
    ratio = h.relevance_ratio * (0.7 if more else 1.0)
    out: list[str] = []
    for clause in split_clauses(query) or [query]:
        for api in h.relevant(clause, apis, ratio):
            if api.tool_name not in out:
                out.append(api.tool_name)
    for clause in [query, *split_clauses(query)]:
        for hit in h.catalog.search_tools(clause, k=3 if more else 1, category=category):
            if hit.tool not in out:
                out.append(hit.tool)
    return out


def category_reply(h: Heuristics, call: RoleCall) -> AIMessage:
    """One tool agent for the category's best tools (more on re-activation), then `finish_search`.

    The tools per agent: `inputs["max_tools"]` when given, else `max_tools_per_agent`; a refused assignment
    (an error answer) is retried with half as many tools, at most `MAX_REFUSALS` times."""
    try:
        category = h.catalog.category(call.text("category")).name
    except UnknownNameError:
        return tool_calls("I cannot tell which category is mine.", ("finish_search", {}))
    msgs = call.messages
    assigned = set(call.strings("tools")) | {
        str(n) for names in called_args(msgs, "create_agent_tool_level", "tool_names", succeeded=True)
        for n in (names if isinstance(names, list) else [names])}
    reactivated = pending_reactivation(msgs)
    if assigned and not reactivated:
        return tool_calls("The relevant tools have agents; the search is done.", ("finish_search", {}))
    refused = [[str(n) for n in names] for names in refused_args(msgs, "create_agent_tool_level", "tool_names")
               if isinstance(names, list) and names]
    if len(refused) >= MAX_REFUSALS:
        return tool_calls("My tool assignments were refused; I stop here.", ("finish_search", {}))
    given = call.inputs.get("max_tools")
    limit = given if isinstance(given, int) and given > 0 else h.max_tools_per_agent
    if refused:
        limit = min(limit, max(1, min(len(r) for r in refused) // 2))
    bad = {r[0] for r in refused if len(r) == 1}
    ranked = [t for t in rank_tools(h, call.query, category, more=reactivated)
              if t not in assigned and t not in bad][:limit]
    if not ranked:
        return tool_calls(f"No (further) tool of {category} looks relevant.", ("finish_search", {}))
    return tool_calls(f"These tools of {category} fit the query.", ("create_agent_tool_level", {"tool_names": ranked}))


# ------------------------------------------------------------------------------------------ tool agent
def own_apis(h: Heuristics, call: RoleCall) -> list[Api]:
    """The APIs of the agent's tools (`inputs["tools"]`, in `inputs["category"]` when given)."""
    names = set(call.strings("tools"))
    category = call.text("category")
    try:
        pool = h.catalog.tools(h.catalog.category(category).name) if category else h.catalog.tools()
    except UnknownNameError:
        pool = h.catalog.tools()
    return [a for t in pool if t.name in names or t.key in names for a in t.apis]


def pick_apis(h: Heuristics, query: str, apis: Sequence[Api], more: bool = False) -> list[Api]:
    """Own APIs that fit some request part (round-robin over the parts), at most `max_apis_per_agent`."""
    ratio = h.relevance_ratio * (0.7 if more else 1.0)
    per_clause = [h.relevant(c, apis, ratio) for c in split_clauses(query) or [query]]
    out: list[Api] = []
    for depth in range(max((len(p) for p in per_clause), default=0)):
        for found in per_clause:
            if depth < len(found) and found[depth] not in out:
                out.append(found[depth])
    return out[: h.max_apis_per_agent]


def tool_reply(h: Heuristics, call: RoleCall) -> AIMessage:
    """Add the fitting APIs of its tools, check solvability, then `finish_search`."""
    msgs = call.messages
    added = {(a.get("tool_name"), a.get("api_name")) for apis in called_args(msgs, "add_apis_into_api_pool", "apis")
             for a in (apis if isinstance(apis, list) else []) if isinstance(a, dict)}
    if last_call(msgs) == "add_apis_into_api_pool":
        return tool_calls("Check whether the pool now suffices.", ("check_if_request_solvable", {}))
    reactivated = pending_reactivation(msgs)
    if added and not reactivated:
        return tool_calls("My relevant APIs are in the pool.", ("finish_search", {}))
    picks = [a for a in pick_apis(h, call.query, own_apis(h, call), more=reactivated)
             if (a.tool_name, a.name) not in added]
    if not picks:
        return tool_calls("None of my tools has (further) APIs relevant to the query.", ("finish_search", {}))
    apis = [{"tool_name": a.tool_name, "api_name": a.name} for a in picks]
    return tool_calls(f"Adding {len(apis)} relevant API(s).", ("add_apis_into_api_pool", {"apis": apis}))


# ------------------------------------------------------------------------------------------ solvable check
def solvable_reply(h: Heuristics, call: RoleCall) -> AIMessage:
    """"Solvable" when every request part has a fitting API in the pool (`inputs["api_ids"]`), else
    "Unsolvable: <the parts without one>"."""
    pool = [h.catalog.api(i) for i in call.strings("api_ids") if i in h.catalog]
    if not pool:
        return AIMessage(content="Unsolvable: the pool lists no API of the catalog.")
    query = call.query
    missing = [c for c in split_clauses(query) or [query] if not h.relevant(c, pool)]
    if not missing:
        return AIMessage(content="Solvable")
    return AIMessage(content="Unsolvable: no API in the pool fits " + "; ".join(repr(c) for c in missing))
