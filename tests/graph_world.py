"""A small world for whole-graph tests: a catalog with local implementations and a role-dispatching script."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langgraph_anytool.catalog import Catalog, Category
from langgraph_anytool.catalog.parse import parse_tool
from langgraph_anytool.tools.executors.local import LocalExecutor
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.fakes import ai, call

# category -> tool -> api -> (parameter names, implementation)
Impl = Callable[..., Any]
WORLD: dict[str, dict[str, dict[str, tuple[list[str], Impl]]]] = {}


def _broken(**_: Any) -> Any:
    raise RuntimeError("upstream quote service is down")


def world_plan() -> dict[str, dict[str, dict[str, tuple[list[str], Impl]]]]:
    return {
        "Weather": {"Weather Now": {"Current": (["city"], lambda city: {"city": city, "temp_c": 21})}},
        "Finance": {
            "Stocks API": {"Quote": (["symbol"], _broken)},
            "Backup Quotes": {"Quote": (["symbol"], lambda symbol: {"symbol": symbol, "price": 187.5})},
        },
        "Fun": {"Jokes": {"Random Joke": ([], lambda: {"joke": "knock knock"})}},
        "Markets": {"Exchange Board": {"Last Price": (["ticker"], lambda ticker: {"ticker": ticker, "last": 190.0})}},
    }


def make_world() -> tuple[Catalog, ApiExecutor]:
    """The catalog and an executor that runs its APIs locally."""
    cats, impls = [], {}
    for cat, tools in world_plan().items():
        parsed = []
        for tool, apis in tools.items():
            t = parse_tool({"tool_name": tool, "tool_description": f"{tool}: {cat.lower()} data",
                            "api_list": [{"name": a, "description": f"{a} of {tool}",
                                          "required_parameters": [{"name": p, "type": "STRING", "description": p}
                                                                  for p in params]}
                                         for a, (params, _) in apis.items()]},
                           category=cat, source=f"test:{cat}/{tool}")
            parsed.append(t)
            for api in t.apis:
                impls[api.id] = apis[api.name][1]
        cats.append(Category(name=cat, tools=tuple(parsed)))
    catalog = Catalog(cats, name="world")
    return catalog, ApiExecutor(catalog, default=LocalExecutor(impls))


def turns(messages: list[BaseMessage]) -> int:
    return sum(isinstance(m, AIMessage) for m in messages)


def last_human(messages: list[BaseMessage]) -> str:
    for m in reversed(messages):
        if isinstance(m, HumanMessage):
            return str(m.content)
    return ""


def observations(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    """The JSON bodies of the solver's ToolMessages (Finish replies excluded)."""
    out = []
    for m in messages:
        if isinstance(m, ToolMessage):
            try:
                body = json.loads(str(m.content))
            except ValueError:
                continue
            if isinstance(body, dict) and "status" in body:
                out.append(body)
    return out


def scope_of(messages: list[BaseMessage], tools: list[str], meta: Mapping[str, Any] | None = None) -> str:
    """Which model call this is, from the role and inputs the graph tagged it with: `meta`, `category:<name>`,
    `tool:<tools>`, `solvable`, `solver`, `judge`, ..."""
    role = (meta or {}).get("role") or ""
    inputs = (meta or {}).get("inputs") or {}
    if role == "category":
        return f"category:{inputs.get('category', '?')}"
    if role == "tool":
        return f"tool:{', '.join(inputs.get('tools') or ['?'])}"
    return role or "?"


def role_of(messages: list[BaseMessage], tools: list[str], meta: Mapping[str, Any] | None = None) -> str:
    """`scope_of` (kept for the tests that name it so)."""
    return scope_of(messages, tools, meta)


Script = Mapping[str, Callable[[list[BaseMessage]], AIMessage]]


class World:
    """Responder dispatching on the caller's role; records which roles were called, in order."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.roles: list[str] = []

    def __call__(self, messages: list[BaseMessage], tools: list[str], meta: Mapping[str, Any]) -> AIMessage:
        role = role_of(messages, tools, meta)
        self.roles.append(role)
        handler = self.script.get(role) or self.script.get(role.split(":", 1)[0])
        if handler is None:
            return ai("nothing to do", call("finish_search"))
        return handler(messages)


def adds(tool: str, api: str) -> AIMessage:
    return ai("", call("add_apis_into_api_pool", apis=[{"tool_name": tool, "api_name": api}]))


def solved_judge(_: list[BaseMessage]) -> AIMessage:
    return ai('{"label": "Solved", "reason": "the answer gives the requested value"}')
