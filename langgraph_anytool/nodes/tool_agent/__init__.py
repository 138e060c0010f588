"""The tool agent: searches its tools' APIs, fills the API-candidate pool, checks whether the pool suffices."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from ...catalog import UnknownNameError
from ...graphs.agent_loop import Role, finish_search
from ...state import AgentRecord
from ...tools.agent_functions import TOOL_FUNCTIONS
from .handlers import (
    add_apis_into_api_pool,
    check_if_request_solvable,
    get_api_details,
    get_apis_in_tool,
    parse_solvable,
)
from .prompts import BOOTSTRAP_PROMPT, FIRST_MESSAGE, REACTIVATE_PROMPT

if TYPE_CHECKING:
    from ...runtime import Deps

__all__ = ["REACTIVATE_PROMPT", "parse_solvable", "tool_role"]

TOOL_DESCRIPTION_CHARS = 300


def system_prompt(record: AgentRecord, deps: Deps) -> str:
    lines = []
    for name in record["tools"]:
        try:
            desc = deps.catalog.tool(record["category"] or "", name).description or "(no description)"
        except UnknownNameError:
            desc = "(not in the catalog)"
        if len(desc) > TOOL_DESCRIPTION_CHARS:
            desc = desc[: TOOL_DESCRIPTION_CHARS - 1] + "…"
        lines.append(f"- {name}: {desc}")
    return BOOTSTRAP_PROMPT.format(tools=", ".join(record["tools"]), category=record["category"],
                                   descriptions="\n".join(lines))


def first_message(query: str, record: AgentRecord, deps: Deps) -> str:
    return FIRST_MESSAGE.format(query=query)


def tool_role() -> Role:
    """The tool agent's role for `build_agent_loop`."""
    return Role(
        level="tool",
        system_prompt=system_prompt,
        first_message=first_message,
        functions=TOOL_FUNCTIONS,
        handlers=MappingProxyType({
            "get_apis_in_tool": get_apis_in_tool,
            "get_api_details": get_api_details,
            "add_apis_into_api_pool": add_apis_into_api_pool,
            "check_if_request_solvable": check_if_request_solvable,
            "finish_search": finish_search,
        }),
    )
