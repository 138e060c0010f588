"""Framework overhead of the AnyTool graph, and the speedup of parallel agents, with scripted models.

    python benchmarks/graph_overhead.py [--runs 20] [--agents 6] [--latency 0.2]

1. Overhead: full runs (meta-agent → tool agent → pool check → DFSDT solver with one local API call → judge) on the
   built-in catalog with a zero-latency scripted model. Overhead per model call = (wall time − time inside model
   calls − time inside API executions) / model calls; the median over runs is printed.
2. Parallel speedup: the meta-agent starts N category agents (small categories: one tool agent each), every model
   call sleeps `latency`; speedup = (sum of all model-call time, i.e. what a sequential run would take) / wall time,
   for max_concurrency = N + 1 (the meta-agent continues beside its children) and = 1.
3. Child start delay: the meta-agent starts a slow category agent (it browses for 7 model calls) and a quick one
   that creates a tool agent in its first call; the delay is the time from the end of the model call that created
   the tool agent to the start of the tool agent's first model call (ideal: about one model-call latency, the
   sibling's step running beside it).
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langgraph_anytool import AnyToolConfig, Catalog, create_anytool_graph
from langgraph_anytool.models.testing import ScriptedChatModel, ai, call
from langgraph_anytool.tools.pipeline import ApiExecutor


class Clock:
    """Accumulates time spent inside a wrapped callable, and each call's (start, end, tools) (thread-safe)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seconds = 0.0
        self.calls = 0
        self.spans: list[tuple[float, float, bool]] = []  # start, end, is an agent call

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(messages: Any, tools: Any, meta: Any) -> Any:
            a = (messages, tools, meta)
            start = time.perf_counter()
            try:
                return fn(*a)
            finally:
                end = time.perf_counter()
                tools = a[1] if len(a) > 1 else []
                agent = any(t in tools for t in ("create_agent_category_level", "add_apis_into_api_pool"))
                with self.lock:
                    self.seconds += end - start
                    self.calls += 1
                    self.spans.append((start, end, agent))
        return timed


def turns(messages: list[BaseMessage]) -> int:
    return sum(isinstance(m, AIMessage) for m in messages)


def script(catalog: Catalog, categories: list[str], fn_name: str, args: dict[str, Any], latency: float) -> Any:
    def reply(messages: list[BaseMessage], tools: list[str], meta: dict[str, Any]) -> AIMessage:
        if latency:
            time.sleep(latency)
        n = turns(messages)
        if "create_agent_category_level" in tools:
            return ai("", *(call("create_agent_category_level", category_name=c) for c in categories)) if n == 0 \
                else ai("", call("finish_search"))
        if "add_apis_into_api_pool" in tools:
            tool = catalog.tool(meta["inputs"]["category"], meta["inputs"]["tools"][0])
            api = tool.apis[0]
            return ai("", call("add_apis_into_api_pool", apis=[{"tool_name": tool.name, "api_name": api.name}])) \
                if n == 0 else ai("", call("finish_search"))
        if "Finish" in tools:
            if not any(isinstance(m, ToolMessage) for m in messages):
                return ai("", call(fn_name, **args))
            return ai("", call("Finish", return_type="give_answer", final_answer="done"))
        return ai('{"label": "Solved", "reason": "ok"}')
    return reply


def overhead(runs: int) -> list[float]:
    catalog = Catalog.builtin()
    api = catalog.find_api("Universal Unit Converter", "Convert Units")
    fn_name = catalog.function_name(api.id)
    args = {p.name: p.default for p in api.params if p.required}
    per_call = []
    for _ in range(runs):
        model_clock, api_clock = Clock(), Clock()
        model = ScriptedChatModel(responder=model_clock.wrap(script(catalog, [api.category], fn_name, args, 0.0)))
        executor = ApiExecutor.for_catalog(catalog, kind="local")
        executor.call = api_clock.wrap(executor.call)  # type: ignore[method-assign]
        graph = create_anytool_graph(catalog, model, config=AnyToolConfig(seed_with_search=False), executor=executor)
        start = time.perf_counter()
        out = graph.invoke({"query": "convert 5 miles to km"})
        wall = time.perf_counter() - start
        assert out["status"] == "solved", out["status"]
        per_call.append((wall - model_clock.seconds - api_clock.seconds) / model_clock.calls * 1000)
        executor.close()
    return per_call


def speedup(agents: int, latency: float, concurrency: int) -> tuple[float, float, int, float, float]:
    catalog = Catalog.builtin()
    categories = [c for c in catalog.categories if len(catalog.tools(c)) <= 5][:agents]
    api = catalog.find_api("Universal Unit Converter", "Convert Units")
    fn_name = catalog.function_name(api.id)
    args = {p.name: p.default for p in api.params if p.required}
    clock = Clock()
    model = ScriptedChatModel(responder=clock.wrap(script(catalog, categories, fn_name, args, latency)))
    cfg = AnyToolConfig(seed_with_search=False, max_concurrency=concurrency)
    graph = create_anytool_graph(catalog, model, config=cfg)
    start = time.perf_counter()
    graph.invoke({"query": "convert 5 miles to km"})
    wall = time.perf_counter() - start
    agent_spans = [(s, e) for s, e, agent in clock.spans if agent]
    agent_wall = max(e for _, e in agent_spans) - min(s for s, _ in agent_spans)
    agent_sum = sum(e - s for s, e in agent_spans)
    return wall, clock.seconds, clock.calls, agent_wall, agent_sum


def child_delay(latency: float) -> tuple[float, float]:
    """(seconds from the tool agent's creation to its first model call, the slow sibling's activation length)."""
    catalog = Catalog.builtin()
    big = max(catalog.categories, key=lambda c: len(catalog.tools(c)))
    small = next(c for c in catalog.categories if c != big and len(catalog.tools(c)) > 1)
    marks: dict[str, float] = {}
    lock = threading.Lock()

    def reply(messages: list[BaseMessage], tools: list[str], meta: dict[str, Any]) -> AIMessage:
        role, inputs, n = meta["role"], meta["inputs"], turns(messages)
        start = time.perf_counter()
        with lock:
            marks.setdefault(f"start:{role}:{inputs.get('category')}", start)
        time.sleep(latency)
        if role == "meta":
            return ai("", call("create_agent_category_level", category_name=big),
                      call("create_agent_category_level", category_name=small)) if n == 0 else ai("", call("finish_search"))
        if role == "category" and inputs["category"] == big:  # the slow sibling: 7 model calls
            return ai("", call("get_tools_in_category", category_name=big)) if n < 6 else ai("", call("finish_search"))
        if role == "category":
            if n == 0:
                with lock:
                    marks["created"] = time.perf_counter()
                return ai("", call("create_agent_tool_level", tool_names=[catalog.tools(small)[0].name]))
            return ai("", call("finish_search"))
        if role == "tool":
            return ai("", call("finish_search"))
        return ai('{"label": "Solved", "reason": "ok"}')

    cfg = AnyToolConfig(seed_with_search=False, small_category_shortcut=False, max_concurrency=8)
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=reply), config=cfg)
    graph.invoke({"query": "q"})
    slow = 7 * latency
    return marks[f"start:tool:{small}"] - marks["created"], slow


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--agents", type=int, default=6)
    ap.add_argument("--latency", type=float, default=0.2)
    a = ap.parse_args()
    overhead(2)  # warm-up: imports, first graph compile
    oh = overhead(a.runs)
    print(f"framework overhead per model call: median {statistics.median(oh):.2f} ms "
          f"(p10 {sorted(oh)[len(oh) // 10]:.2f}, max {max(oh):.2f}) over {a.runs} full runs")
    for conc in (a.agents + 1, 1):  # +1: the meta-agent continues beside the agents it started
        wall, busy, calls, agent_wall, agent_sum = speedup(a.agents, a.latency, conc)
        print(f"{a.agents} category agents, {a.latency * 1000:.0f} ms per model call, max_concurrency={conc}:\n"
              f"  retriever agents: sequential sum {agent_sum:.2f} s, wall {agent_wall:.2f} s, "
              f"speedup {agent_sum / agent_wall:.2f}x\n"
              f"  whole run ({calls} model calls, solver and judge included): sequential sum {busy:.2f} s, "
              f"wall {wall:.2f} s, speedup {busy / wall:.2f}x")
    delay, slow = child_delay(a.latency)
    print(f"child start delay: a tool agent starts {delay:.2f} s after the model call that created it ended "
          f"({a.latency * 1000:.0f} ms per model call; its slow sibling's activation takes {slow:.2f} s)")


if __name__ == "__main__":
    main()
