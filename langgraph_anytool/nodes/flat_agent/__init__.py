"""The flat agent: one agent that browses categories, tools and APIs itself and fills the pool (no hierarchy)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...state import AgentRecord
from .prompts import BOOTSTRAP_PROMPT, FIRST_MESSAGE, REACTIVATE_PROMPT

if TYPE_CHECKING:
    from ...runtime import Deps

__all__ = ["REACTIVATE_PROMPT", "first_message", "system_prompt"]


def system_prompt(record: AgentRecord, deps: Deps) -> str:
    book = deps.paper_prompts
    if book is not None:  # the authors' no-hierarchy prompt (prompt_template.py FIND_API_NO_HIER_PROMPT)
        return book.fill("flat_system", categories=str(list(deps.catalog.categories)))
    return BOOTSTRAP_PROMPT.format(categories=", ".join(deps.catalog.categories))


def first_message(query: str, record: AgentRecord, deps: Deps) -> str:
    return FIRST_MESSAGE.format(query=query)
