"""The tool agent: searches its tools' APIs, fills the API-candidate pool, checks whether the pool suffices."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...catalog import UnknownNameError
from ...state import AgentRecord
from ...text import shorten
from .handlers import parse_solvable
from .prompts import BOOTSTRAP_PROMPT, FIRST_MESSAGE, REACTIVATE_PROMPT

if TYPE_CHECKING:
    from ...runtime import Deps

__all__ = ["REACTIVATE_PROMPT", "first_message", "parse_solvable", "system_prompt"]

TOOL_DESCRIPTION_CHARS = 300


def system_prompt(record: AgentRecord, deps: Deps) -> str:
    book = deps.paper_prompts
    if book is not None:  # main.py Tool_Agent.__init__: `str(category)`, `str(tools)` (a list of the tool names)
        return book.fill("tool_system", category=str(record["category"]), tools=str(list(record["tools"])))
    lines = []
    for name in record["tools"]:
        try:
            desc = deps.catalog.tool(record["category"] or "", name).description or "(no description)"
        except UnknownNameError:
            desc = "(not in the catalog)"
        desc = shorten(desc, TOOL_DESCRIPTION_CHARS)
        lines.append(f"- {name}: {desc}")
    return BOOTSTRAP_PROMPT.format(tools=", ".join(record["tools"]), category=record["category"],
                                   descriptions="\n".join(lines))


def first_message(query: str, record: AgentRecord, deps: Deps) -> str:
    book = deps.paper_prompts
    if book is not None:
        return book.fill("tool_first", query=query, tools_info=str(tools_info(record, deps)))
    return FIRST_MESSAGE.format(query=query)


AUTHORS_API_DESCRIPTION_CHARS = 100  # AnyTool preprocess/extract_api_details.py: `description[:100]`


def tools_info(record: AgentRecord, deps: Deps) -> dict[str, Any]:
    """The tools as main.py's `query_all_tool_info(category, tools)` gives them to a tool agent: per tool name its
    `api_list` (name, description cut at 100 characters, required and optional parameter names, as
    `preprocess/extract_api_details.py` stores them) and its `description` (`category_tool_details.json`), each
    description as the tool document writes it (a description of ' ' stays ' ')."""
    out: dict[str, Any] = {}
    for name in record["tools"]:
        try:
            tool = deps.catalog.tool(record["category"] or "", name)
        except UnknownNameError:
            continue
        apis = [{"name": a.name, "description": a.as_written[:AUTHORS_API_DESCRIPTION_CHARS],
                 "required_parameters": [p.name for p in a.required_params],
                 "optional_parameters": [p.name for p in a.optional_params]} for a in tool.apis]
        out[name] = {"api_list": apis, "description": tool.as_written}
    return out
