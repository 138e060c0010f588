"""The category agent: finds the tools of its category relevant to the query and hands them to tool agents."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from ...graphs.agent_loop import Role, finish_search
from ...state import AgentRecord
from ...tools.agent_functions import CATEGORY_FUNCTIONS
from .handlers import create_agent_tool_level, get_tools_descriptions, get_tools_in_category
from .prompts import BOOTSTRAP_PROMPT, FIRST_MESSAGE, REACTIVATE_PROMPT

if TYPE_CHECKING:
    from ...runtime import Deps

__all__ = ["REACTIVATE_PROMPT", "category_role"]


def system_prompt(record: AgentRecord, deps: Deps) -> str:
    return BOOTSTRAP_PROMPT.format(category=record["category"], max_tools=deps.config.max_tools_per_agent)


def first_message(query: str, record: AgentRecord, deps: Deps) -> str:
    n_tools = len(deps.catalog.tools(record["category"] or ""))
    return FIRST_MESSAGE.format(query=query, category=record["category"], n_tools=n_tools)


def category_role() -> Role:
    """The category agent's role for `build_agent_loop`."""
    return Role(
        level="category",
        system_prompt=system_prompt,
        first_message=first_message,
        functions=CATEGORY_FUNCTIONS,
        handlers=MappingProxyType({
            "get_tools_in_category": get_tools_in_category,
            "get_tools_descriptions": get_tools_descriptions,
            "create_agent_tool_level": create_agent_tool_level,
            "finish_search": finish_search,
        }),
    )
