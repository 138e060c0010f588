"""`RoleCall`: what one model call gives the policy — the role and structured inputs from the call's metadata
(`anytool_role`, `anytool_inputs`; see `langgraph_anytool.models.llm.role_config`), the bound tool names and the message
list (read for progress only: tool calls and their answers, never prompt wording)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from .text import message_text

# The roles the graph tags its model calls with, each with the inputs the policy reads (others are ignored):
#   meta {query}; category {query, category, tools?, max_tools?}; tool {query, category, tools};
#   solvable {query, api_ids}; solver {query, functions, text_mode?, ask_user?, history? (text mode)};
#   planner {query, history, functions, umi_prompts?, ask_user?};
#   caller {query, history, functions, thought, text_mode?, umi_prompts?, ask_user?};
#   summarizer {query, history, thought}; judge {query, answer, calls? (in-loop), apis? (offline evaluator)};
#   router {query, conversation}; outline {query, functions, conversation}
# `text_mode`: write the function call as `Action:` / `Action Input:` text; `umi_prompts`: the α-UMi prompt profile
# ("default" or "alpha_umi") whose words the planner's decision uses; `ask_user`: `ask_user(question)` is offered.
ROLES: tuple[str, ...] = ("meta", "category", "tool", "solvable", "solver", "planner", "caller", "summarizer", "judge",
                          "router", "outline")


@dataclass(frozen=True)
class RoleCall:
    """One call: `role` is None when the caller gave no role metadata (a direct, generic call)."""

    role: str | None
    inputs: Mapping[str, Any] = field(default_factory=dict)
    messages: Sequence[BaseMessage] = ()
    tools: Sequence[str] = ()  # names of the bound tools

    @property
    def query(self) -> str:
        """`inputs["query"]`, else the text of the last human message."""
        query = self.inputs.get("query")
        if isinstance(query, str) and query.strip():
            return query.strip()
        return last_human_text(self.messages)

    def text(self, key: str) -> str:
        """A string input ("" when absent)."""
        value = self.inputs.get(key)
        return value.strip() if isinstance(value, str) else ""

    def strings(self, key: str) -> list[str]:
        """A list-of-strings input (a single string counts as a one-item list; [] when absent)."""
        value = self.inputs.get(key)
        if isinstance(value, str):
            return [value]
        if isinstance(value, list | tuple):
            return [str(v) for v in value if isinstance(v, str | int | float)]
        return []

    def records(self, key: str) -> list[Mapping[str, Any]]:
        """A list-of-objects input (e.g. `history`: message dicts); non-objects are skipped."""
        value = self.inputs.get(key)
        return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list | tuple) else []


def last_human_text(messages: Sequence[BaseMessage]) -> str:
    """The text of the last human message ("" when there is none)."""
    return next((message_text(m).strip() for m in reversed(messages) if isinstance(m, HumanMessage)), "")
