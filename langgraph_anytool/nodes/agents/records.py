"""Agent records: creation, copying, and the graph node that runs each level's steps."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ...state import AgentLevel, AgentRecord

# The parent graph's node name of each level's step subgraph.
NODE_FOR_LEVEL: Mapping[str, str] = MappingProxyType(
    {"meta": "meta_agent", "category": "category_agent", "tool": "tool_agent", "flat": "flat_agent"})


def new_agent_record(
    agent_id: str,
    level: AgentLevel,
    *,
    parent: str | None = None,
    category: str | None = None,
    tools: list[str] | None = None,
    ready: int = 0,
) -> AgentRecord:
    """A fresh, pending agent record."""
    return {
        "id": agent_id, "level": level, "parent": parent, "category": category, "tools": list(tools or []),
        "status": "pending", "steps": 0, "activations": 0, "activation_calls": 0, "ready": ready, "messages": [],
        "children": [], "tokens": 0, "invalid_calls": 0, "end_reason": "",
        "malformed_streak": 0,
    }


def copy_record(record: AgentRecord) -> AgentRecord:
    """A copy whose lists can be changed without touching the (checkpointed) original."""
    return {**record, "messages": list(record["messages"]), "children": list(record["children"]),
            "tools": list(record["tools"])}
