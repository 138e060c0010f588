"""The role table: each retriever level's prompts, functions (AnyTool Table 8) and handlers."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType, ModuleType

from ...tools.agent_functions import (
    CATEGORY_FUNCTIONS,
    FLAT_FUNCTIONS,
    META_FUNCTIONS,
    TOOL_FUNCTIONS,
    AgentFunction,
)
from .. import category_agent, flat_agent, meta_agent, tool_agent
from ..category_agent import handlers as category_handlers
from ..flat_agent import handlers as flat_handlers
from ..meta_agent import handlers as meta_handlers
from ..tool_agent import handlers as tool_handlers
from .context import Handler, Role, finish_search


def _handlers(module: ModuleType, functions: tuple[AgentFunction, ...]) -> Mapping[str, Handler]:
    """Each function's handler: the module's function of the same name (`finish_search` is shared)."""
    return MappingProxyType({f.name: finish_search if f.name == "finish_search" else getattr(module, f.name)
                             for f in functions})


# What dyabel/AnyTool scripts/main.py offers each agent (`self.functions`, Finish being our `finish_search`):
# Main_Search_Agent.__init__: get_tools_in_category, get_tools_descriptions, create_agent_category_level, then
# `self.functions.append(finish_function)`; Category_Agent.__init__: get_tools_descriptions, Finish, and
# category_search appends create_agent_tool_level; Tool_Agent.__init__: Finish, then check_if_request_solvable and
# add_apis_into_api_pool (get_api_details, get_apis_in_tool, get_tool_details and remove_apis commented out)
AUTHORS_OFFER: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "meta": ("get_tools_in_category", "get_tools_descriptions", "create_agent_category_level", "finish_search"),
    "category": ("get_tools_descriptions", "finish_search", "create_agent_tool_level"),
    "tool": ("finish_search", "check_if_request_solvable", "add_apis_into_api_pool"),
})

ROLES: Mapping[str, Role] = MappingProxyType({
    "meta": Role("meta", meta_agent.system_prompt, meta_agent.first_message, META_FUNCTIONS,
                 _handlers(meta_handlers, META_FUNCTIONS), AUTHORS_OFFER["meta"]),
    "category": Role("category", category_agent.system_prompt, category_agent.first_message, CATEGORY_FUNCTIONS,
                     _handlers(category_handlers, CATEGORY_FUNCTIONS), AUTHORS_OFFER["category"]),
    "tool": Role("tool", tool_agent.system_prompt, tool_agent.first_message, TOOL_FUNCTIONS,
                 _handlers(tool_handlers, TOOL_FUNCTIONS), AUTHORS_OFFER["tool"]),
    "flat": Role("flat", flat_agent.system_prompt, flat_agent.first_message, FLAT_FUNCTIONS,
                 _handlers(flat_handlers, FLAT_FUNCTIONS)),
})


def role_for_level(level: str) -> Role:
    """The built-in role of a level."""
    try:
        return ROLES[level]
    except KeyError:
        raise ValueError(f"unknown agent level {level!r}; levels are {', '.join(ROLES)}") from None
