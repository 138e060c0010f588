"""Soak: many AnyTool runs in one process, 16 at a time, with a scripted model; does anything grow?

    python benchmarks/soak.py [--runs 500] [--concurrency 16]

Each run: meta-agent → tool agent → pool check → DFSDT solver with one local API call → judge, on the built-in
catalog (a scripted model, zero latency; APIs run locally). Prints runs/s, p50/p95 latency per run over the first
and the last 100 runs, and at start and end: RSS, open file descriptors, threads, and the run-scoped entries the
graph's signals still hold (entries of finished runs must be gone).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langgraph_anytool import AnyToolConfig, Catalog, create_anytool_graph
from langgraph_anytool.models.testing import ScriptedChatModel, ai, call
from langgraph_anytool.runtime import RunSignals
from langgraph_anytool.tools.pipeline import ApiExecutor


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def signal_entries() -> int:
    """Run-scoped entries held by every RunSignals alive (one per compiled graph)."""
    return sum(o.tracked_runs() for o in gc.get_objects() if isinstance(o, RunSignals))


def responder(catalog: Catalog, fn_name: str, args: dict[str, Any]) -> Any:
    api = catalog.api_for_function(fn_name)

    def reply(messages: list[BaseMessage], tools: list[str], meta: dict[str, Any]) -> AIMessage:
        role, n = meta["role"], sum(isinstance(m, AIMessage) for m in messages)
        if role == "meta":
            return ai("", call("create_agent_category_level", category_name=api.category)) if n == 0 else ai(
                "", call("finish_search"))
        if role == "category":
            return ai("", call("create_agent_tool_level", tool_names=[api.tool_name])) if n == 0 else ai(
                "", call("finish_search"))
        if role == "tool":
            if n == 0:
                return ai("", call("add_apis_into_api_pool", apis=[{"tool_name": api.tool_name, "api_name": api.name}]))
            return ai("", call("check_if_request_solvable"))
        if role == "solvable":
            return ai("Solvable")
        if role == "solver":
            if not any(isinstance(m, ToolMessage) for m in messages):
                return ai("", call(fn_name, **args))
            return ai("", call("Finish", return_type="give_answer", final_answer="5 miles are 8.05 km."))
        return ai('{"label": "Solved", "reason": "ok"}')

    return reply


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--concurrency", type=int, default=16)
    a = ap.parse_args()
    catalog = Catalog.builtin()
    api = catalog.find_api("Universal Unit Converter", "Convert Units")
    fn_name = catalog.function_name(api.id)
    args = {p.name: p.default for p in api.params if p.required}
    model = ScriptedChatModel(responder=responder(catalog, fn_name, args))
    with ApiExecutor.for_catalog(catalog, kind="local") as executor:
        graph = create_anytool_graph(catalog, model, executor=executor,
                                     config=AnyToolConfig(seed_with_search=False, small_category_shortcut=False))
        graph.invoke({"query": "warm-up"})
        gc.collect()
        start_stats = (rss_mb(), open_fds(), threading.active_count(), signal_entries())
        latencies: list[float] = [0.0] * a.runs
        statuses: list[str] = [""] * a.runs

        def one(i: int) -> None:
            t0 = time.perf_counter()
            out = graph.invoke({"query": f"convert {i} miles to km"})
            latencies[i] = time.perf_counter() - t0
            statuses[i] = out["status"]
            model.calls.clear()  # the scripted model records every call (a test aid): not the graph's memory

        t0 = time.perf_counter()
        with ThreadPoolExecutor(a.concurrency) as pool:
            list(pool.map(one, range(a.runs)))
        wall = time.perf_counter() - t0
        gc.collect()
        end_stats = (rss_mb(), open_fds(), threading.active_count(), signal_entries())
    solved = statuses.count("solved")
    print(f"{a.runs} runs, {a.concurrency} at a time: {wall:.1f} s, {a.runs / wall:.1f} runs/s, {solved} solved")
    for label, part in (("first 100", latencies[:100]), ("last 100", latencies[-100:])):
        q = statistics.quantiles(part, n=20)
        print(f"  latency per run, {label}: p50 {statistics.median(part) * 1000:.0f} ms, p95 {q[18] * 1000:.0f} ms")
    names = ("RSS MB", "open fds", "threads", "run-scoped entries")
    for name, before, after in zip(names, start_stats, end_stats, strict=True):
        print(f"  {name}: start {before:.0f}, end {after:.0f}")


if __name__ == "__main__":
    main()
