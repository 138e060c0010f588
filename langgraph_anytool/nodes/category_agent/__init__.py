"""The category agent: finds the tools of its category relevant to the query and hands them to tool agents."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...state import AgentRecord
from .prompts import BOOTSTRAP_PROMPT, FIRST_MESSAGE, REACTIVATE_PROMPT

if TYPE_CHECKING:
    from ...runtime import Deps

__all__ = ["REACTIVATE_PROMPT", "first_message", "system_prompt"]


def system_prompt(record: AgentRecord, deps: Deps) -> str:
    return BOOTSTRAP_PROMPT.format(category=record["category"], max_tools=deps.config.max_tools_per_agent)


def first_message(query: str, record: AgentRecord, deps: Deps) -> str:
    n_tools = len(deps.catalog.tools(record["category"] or ""))
    return FIRST_MESSAGE.format(query=query, category=record["category"], n_tools=n_tools)
