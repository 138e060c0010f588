"""The retriever's parallel phase is bulk-synchronous: a run's result does not depend on which parallel reply
arrives first.

Sibling tool agents of one superstep see the pool, the stop signal and the budget tallies as of the superstep's
start plus their own step's effects (nodes/dispatch.py). The model here is a pure function of the messages it is
sent, and each call sleeps a random, seeded latency: the final state must be the same for every latency seed.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langgraph_anytool.graphs.retriever import create_retriever_graph
from langgraph_anytool.models.llm import total_tokens
from tests.fakes import ScriptedChatModel
from tests.graph_world import scope_of
from tests.nodes.test_agent_loop import make_catalog, make_deps

TOOLS = ("T1", "T2", "T3", "T4")
PLAN = {"C": {t: [f"{t} A", f"{t} B", f"{t} C"] for t in TOOLS}}
CAP = 5  # 4 agents adding 2 APIs each in one superstep: together they overshoot it


def reply(name_args: list[tuple[str, dict[str, Any]]], scope: str, turn: int) -> AIMessage:
    """A model turn whose tool-call ids are a function of the agent and the turn (not of a global counter)."""
    return AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": f"{scope}:{turn}:{i}", "type": "tool_call"}
                                             for i, (n, a) in enumerate(name_args)])


def add(tool: str, *apis: str) -> tuple[str, dict[str, Any]]:
    return "add_apis_into_api_pool", {"apis": [{"tool_name": tool, "api_name": f"{tool} {a}"} for a in apis]}


CHECK: tuple[str, dict[str, Any]] = ("check_if_request_solvable", {})


class Policy:
    """A model that is a pure function of the request (its scope and the number of turns so far), sleeping a
    seeded random latency per call so that the parallel replies arrive in a different order for each seed."""

    def __init__(self, seed: int, solvable_api: str | None) -> None:
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.solvable_api = solvable_api

    def __call__(self, messages: list[BaseMessage], tools: list[str], meta: Mapping[str, Any]) -> AIMessage:
        with self.lock:
            delay = self.rng.uniform(0.0, 0.04)
        time.sleep(delay)
        scope = scope_of(messages, tools, meta)
        turn = sum(isinstance(m, AIMessage) for m in messages)
        if scope == "solvable":
            prompt = str(messages[-1].content)
            listed = prompt.count('"api": ')
            ok = (self.solvable_api is not None and f'"api": "{self.solvable_api}"' in prompt) or listed >= 6
            return AIMessage(content="Solvable" if ok else f"Unsolvable: only {listed} APIs")
        if scope == "meta":  # one step each: the tool agents' superstep has no other agent in it
            script = [[("create_agent_category_level", {"category_name": "C"}), ("finish_search", {})]]
        elif scope == "category:C":
            script = [[*(("create_agent_tool_level", {"tool_names": [t]}) for t in TOOLS), ("finish_search", {})]]
        elif scope.startswith("tool:"):
            tool = scope.removeprefix("tool:")
            script = [[add(tool, "A", "B"), CHECK], [add(tool, "C"), CHECK], [CHECK]]
        else:
            raise AssertionError(f"unexpected model call: {scope}")
        if turn >= len(script):
            return reply([("finish_search", {})], scope, turn)
        return reply(script[turn], scope, turn)


def message_view(m: BaseMessage) -> tuple[Any, ...]:
    """A message without its generated id: type, content, tool calls, what a tool message answers."""
    calls = [(tc["name"], tc["args"], tc["id"]) for tc in getattr(m, "tool_calls", None) or []]
    answered = (m.tool_call_id, m.status) if isinstance(m, ToolMessage) else None
    return type(m).__name__, m.content, calls, answered


def final_view(out: Mapping[str, Any]) -> dict[str, Any]:
    """What must not depend on timing: every agent (status, end reason, counters, messages), the pool in order,
    the solvable round and the usage."""
    agents = {i: {k: (list(map(message_view, v)) if k == "messages" else v) for k, v in a.items()}
              for i, a in out["agents"].items()}
    return {"agents": agents, "pool": [(e["api_id"], e["added_by"]) for e in out["api_pool"]],
            "solvable_round": out.get("solvable_round"), "usage": out.get("usage")}


def run(seed: int, solvable_api: str | None, **cfg: Any) -> dict[str, Any]:
    catalog = make_catalog(PLAN)
    model = ScriptedChatModel(responder=Policy(seed, solvable_api))
    deps = make_deps(catalog, model, max_api_pool=CAP, small_category_shortcut=False, max_concurrency=8, **cfg)
    return dict(create_retriever_graph(catalog, deps=deps).invoke({"query": "q"}))


@pytest.mark.parametrize("solvable_api", ["T2 B", None], ids=["one-agent-finds-it-solvable", "pool-fills-up"])
def test_parallel_tool_agents_give_the_same_result_whatever_the_reply_order(solvable_api: str | None) -> None:
    runs = [run(seed, solvable_api) for seed in range(6)]
    first = final_view(runs[0])
    for seed, out in enumerate(runs[1:], start=1):
        view = final_view(out)
        for agent_id in first["agents"]:
            assert view["agents"][agent_id] == first["agents"][agent_id], f"seed {seed}: agent {agent_id} differs"
        assert view == first, f"seed {seed}: the final state differs"
    out = runs[0]
    tool_agents = {i: (a["status"], a["end_reason"]) for i, a in out["agents"].items() if a["level"] == "tool"}
    assert len(tool_agents) == len(TOOLS)
    # the four tool agents proposed 8 APIs in one superstep; the reducer kept the first CAP in dispatch order
    assert [e["added_by"] for e in out["api_pool"]] == ["meta/C/t1"] * 2 + ["meta/C/t2"] * 2 + ["meta/C/t3"]
    if solvable_api is not None:
        # T2's own step saw its own addition: its check said True and ended it at once; every sibling's check of
        # that superstep saw the pool at dispatch plus its own additions (False), and they were stopped before their
        # next step by the dispatcher (the state's solvable_round)
        assert out["solvable_round"] == 0
        assert tool_agents["meta/C/t2"] == ("stopped", "pool_solvable")
        assert {tool_agents[f"meta/C/t{i}"] for i in (1, 3, 4)} == {("stopped", "pool_solvable")}
        checks = [str(m.content) for a in out["agents"].values() for m in a["messages"]
                  if isinstance(m, ToolMessage) and m.name == "check_if_request_solvable"]
        assert sorted(c.split(":")[0] for c in checks) == ["False", "False", "False", "True"]
    else:
        assert out.get("solvable_round", -1) == -1
        assert set(tool_agents.values()) == {("stopped", "pool_full")}
    assert out["usage"]["tool"]["model_calls"] == len(TOOLS)


def test_budget_inside_a_superstep_is_the_tally_at_dispatch_plus_the_steps_own_usage() -> None:
    """A token budget that runs out in the middle of the tool agents' superstep: each sibling's solvable check
    counts the tally at dispatch plus its own step's usage, never the siblings' replies that came in first."""
    base = run(0, None)
    at_dispatch = total_tokens({role: base["usage"][role] for role in ("meta", "category")})  # steps before
    own = max(a["tokens"] for a in base["agents"].values() if a["level"] == "tool")  # a tool agent's whole step
    # room for two steps' calls but not for the four siblings' together: each sibling keeps to its share of what
    # was left at dispatch (issue 21: the budget holds counting the call about to be made), whatever the arrival
    # order; live tallies would let some siblings through, depending on which replies had arrived
    budget = at_dispatch + 2 * own
    outs = [run(seed, None, token_budget=budget) for seed in range(5)]
    views = [final_view(o) for o in outs]
    assert all(v == views[0] for v in views[1:])
    assert all(0 < total_tokens(o["usage"]) <= budget for o in outs)
    # room for every step's calls: every sibling checks its tool, the same way in every arrival order
    roomy = [final_view(run(seed, None, token_budget=at_dispatch + 12 * own)) for seed in range(3)]
    assert all(v == roomy[0] for v in roomy[1:])
    checks = [str(m[1]) for a in roomy[0]["agents"].values() for m in a["messages"]
              if m[0] == "ToolMessage" and str(m[1]).startswith(("False", "Not checked", "True"))]
    assert len(checks) == len(TOOLS), checks
