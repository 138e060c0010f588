"""The category agent: finds the tools of its category relevant to the query and hands them to tool agents."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...state import AgentRecord
from .handlers import authors_tools
from .prompts import BOOTSTRAP_PROMPT, FIRST_MESSAGE, REACTIVATE_PROMPT

if TYPE_CHECKING:
    from ...runtime import Deps

__all__ = ["REACTIVATE_PROMPT", "first_message", "system_prompt"]


def system_prompt(record: AgentRecord, deps: Deps) -> str:
    book = deps.paper_prompts
    if book is not None:  # main.py Category_Agent.category_search; `{leaf_tool_number}` replaced in prompt_template.py
        return book.fill("category_system", category=record["category"], max_tools=deps.config.max_tools_per_agent)
    return BOOTSTRAP_PROMPT.format(category=record["category"], max_tools=deps.config.max_tools_per_agent)


def first_message(query: str, record: AgentRecord, deps: Deps) -> str:
    tools = deps.catalog.tools(record["category"] or "")
    book = deps.paper_prompts
    if book is not None:  # main.py: `self.tools = get_tools_in_category(category)`, the tool names as a list
        names = [t.name for t in authors_tools(deps, deps.catalog.category(record["category"] or ""))]
        return book.fill("category_first", query=query, tools=str(names))
    return FIRST_MESSAGE.format(query=query, category=record["category"], n_tools=len(tools))
