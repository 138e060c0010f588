"""The meta-agent: picks the categories relevant to the query and creates a category agent for each."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from ...graphs.agent_loop import Role, finish_search
from ...state import AgentRecord
from ...tools.agent_functions import META_FUNCTIONS
from .handlers import create_agent_category_level, get_tools_descriptions, get_tools_in_category, seed_categories
from .prompts import BOOTSTRAP_PROMPT, FIRST_MESSAGE, REACTIVATE_PROMPT, SEARCH_HINT

if TYPE_CHECKING:
    from ...runtime import Deps

__all__ = ["REACTIVATE_PROMPT", "meta_role", "seed_categories"]


def system_prompt(record: AgentRecord, deps: Deps) -> str:
    return BOOTSTRAP_PROMPT.format(categories=", ".join(deps.catalog.categories))


def first_message(query: str, record: AgentRecord, deps: Deps) -> str:
    text = FIRST_MESSAGE.format(query=query)
    if deps.config.seed_with_search:
        hints = seed_categories(deps, query)
        if hints:
            text += "\n" + SEARCH_HINT.format(categories=", ".join(hints))
    return text


def meta_role() -> Role:
    """The meta-agent's role for `build_agent_loop`."""
    return Role(
        level="meta",
        system_prompt=system_prompt,
        first_message=first_message,
        functions=META_FUNCTIONS,
        handlers=MappingProxyType({
            "get_tools_in_category": get_tools_in_category,
            "get_tools_descriptions": get_tools_descriptions,
            "create_agent_category_level": create_agent_category_level,
            "finish_search": finish_search,
        }),
    )
