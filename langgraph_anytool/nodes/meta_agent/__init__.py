"""The meta-agent: picks the categories relevant to the query and creates a category agent for each."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...state import AgentRecord
from ..draws import seeded_sample
from .handlers import seed_categories
from .prompts import BOOTSTRAP_PROMPT, FIRST_MESSAGE, REACTIVATE_PROMPT, SEARCH_HINT

if TYPE_CHECKING:
    from ...runtime import Deps

__all__ = ["REACTIVATE_PROMPT", "first_message", "seed_categories", "system_prompt"]


def system_prompt(record: AgentRecord, deps: Deps) -> str:
    book = deps.paper_prompts
    if book is not None:  # main.py Main_Search_Agent: `str(query_all_categories())`, a list of the names
        return book.fill("meta_system", categories=str(authors_categories(record, deps)))
    return BOOTSTRAP_PROMPT.format(categories=", ".join(deps.catalog.categories))


def authors_categories(record: AgentRecord, deps: Deps) -> list[str]:
    """The category names as AnyTool's `query_all_categories` gives them to a meta-agent
    (`anytool/api_database_function.py`: `random.sample(list(database.keys()), len(database.keys()))`, a new order
    for each query), in an order drawn from the run's query (its first message) so a re-run repeats it."""
    opening = str(record["messages"][0].content) if record.get("messages") else ""
    return seeded_sample(list(deps.catalog.categories), "query_all_categories", opening)


def first_message(query: str, record: AgentRecord, deps: Deps) -> str:
    book = deps.paper_prompts
    text = book.fill("meta_first", query=query) if book is not None else FIRST_MESSAGE.format(query=query)
    if deps.config.seed_with_search:
        hints = seed_categories(deps, query)
        if hints:
            text += "\n" + SEARCH_HINT.format(categories=", ".join(hints))
    return text
