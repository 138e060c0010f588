"""The tool agent: searches its tools' APIs, fills the API-candidate pool, checks whether the pool suffices."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...catalog import UnknownNameError
from ...render import shorten
from ...state import AgentRecord
from .handlers import parse_solvable
from .prompts import BOOTSTRAP_PROMPT, FIRST_MESSAGE, REACTIVATE_PROMPT

if TYPE_CHECKING:
    from ...runtime import Deps

__all__ = ["REACTIVATE_PROMPT", "first_message", "parse_solvable", "system_prompt"]

TOOL_DESCRIPTION_CHARS = 300


def system_prompt(record: AgentRecord, deps: Deps) -> str:
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
    return FIRST_MESSAGE.format(query=query)
