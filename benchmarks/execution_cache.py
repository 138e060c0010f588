"""Median µs per call through the whole execution pipeline on a cache hit (SQLite and memory caches).

Each call resolves the API, validates and coerces the arguments, computes the canonical cache key and
reads the cached Observation. The executor is replaced by one that fails after warm-up, so every
measured call is a hit. Also shown for reference: the same pipeline without a cache, with an executor
that answers instantly (validation + dispatch cost only).

    .venv/bin/python benchmarks/execution_cache.py [--calls 5000] [--apis 200]
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.catalog.models import Api, Category, Param, Tool
from langgraph_anytool.tools.cache import ResponseCache
from langgraph_anytool.tools.executors import TemplateSimulatedExecutor
from langgraph_anytool.tools.observation import Observation, Status
from langgraph_anytool.tools.pipeline import ApiExecutor
from langgraph_anytool.tools.validation import validate_arguments

TOOLBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "toolbench" / "tools"


class Fails:
    """Stands in for the executor once the cache is warm: any call reaching it is a benchmark bug."""

    name = "fails"

    async def aexecute(self, api: Api, arguments: dict[str, Any]) -> Observation:
        raise AssertionError(f"cache miss for {api.id}")

    async def aclose(self) -> None:
        return None


class Instant:
    name = "instant"

    async def aexecute(self, api: Api, arguments: dict[str, Any]) -> Observation:
        return Observation(api_id=api.id, status=Status.OK, content={"ok": True})

    async def aclose(self) -> None:
        return None


def synthetic_catalog(n: int) -> Catalog:
    apis = tuple(
        Api(id=f"Bench/tool/api{i}", name=f"api{i}", tool_key="tool", tool_name="Tool", category="Bench",
            params=(Param("q", "string", required=True), Param("limit", "integer"), Param("lang", "string")),
            template_response={"results": [{"id": "str", "title": "str", "score": "float", "_list_length": 5}]})
        for i in range(n))
    return Catalog([Category("Bench", tools=(Tool("tool", "Tool", "Bench", apis=apis),))])


def workload(catalog: Catalog, n_apis: int) -> list[tuple[str, dict[str, Any]]]:
    """Calls with the APIs' documented example arguments (as a model would send them: numbers as strings)."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for api in catalog:
        args = {p.name: str(p.default) if p.default not in (None, "") else "x" for p in api.required_params}
        if validate_arguments(api, args).ok:
            calls.append((api.id, args))
        if len(calls) >= n_apis:
            break
    return calls


def time_calls(n: int, calls: list[tuple[str, dict[str, Any]]], one: Callable[[str, dict[str, Any]], Any]) -> list[float]:
    out: list[float] = []
    for i in range(n):
        api_id, args = calls[i % len(calls)]
        t0 = time.perf_counter_ns()
        one(api_id, args)
        out.append((time.perf_counter_ns() - t0) / 1000)
    return out


async def time_async(pipe: ApiExecutor, n: int, calls: list[tuple[str, dict[str, Any]]]) -> list[float]:
    out: list[float] = []
    for i in range(n):
        api_id, args = calls[i % len(calls)]
        t0 = time.perf_counter_ns()
        obs = await pipe.acall(api_id, args)
        out.append((time.perf_counter_ns() - t0) / 1000)
        assert obs.cached or pipe.cache is None, obs
    return out


def summary(label: str, us: list[float]) -> str:
    us = sorted(us)
    p90 = us[int(0.9 * (len(us) - 1))]
    return f"{label:<42} median {statistics.median(us):8.1f} µs   p90 {p90:8.1f} µs   (n={len(us)})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=5000, help="measured calls per configuration")
    ap.add_argument("--apis", type=int, default=200, help="distinct APIs in the workload")
    opts = ap.parse_args()
    print("$ " + shlex.join([Path(sys.executable).name, *sys.argv]))

    if TOOLBENCH.is_dir():
        catalog = Catalog.from_toolbench(TOOLBENCH)
        source = f"ToolBench catalog ({len(catalog)} APIs)"
    else:
        catalog = synthetic_catalog(opts.apis)
        source = "synthetic catalog (../shared/toolbench absent)"
    calls = workload(catalog, opts.apis)
    print(f"{source}; workload: {len(calls)} APIs with example arguments, template-simulated responses")

    with tempfile.TemporaryDirectory() as tmp:
        caches = {"SQLite": ResponseCache(Path(tmp) / "bench.sqlite"), "memory": ResponseCache.memory()}
        for name, cache in caches.items():
            warm = ApiExecutor(catalog, default=TemplateSimulatedExecutor(), cache=cache)
            for api_id, args in calls:
                assert warm.call(api_id, args).ok
            warm.close()
            pipe = ApiExecutor(catalog, default=Fails(), cache=cache)
            time_calls(200, calls, pipe.call)  # warm-up (loop thread, page cache)
            print(summary(f"cache hit, {name}, async acall()", asyncio.run(time_async(pipe, opts.calls, calls))))
            print(summary(f"cache hit, {name}, blocking call()", time_calls(opts.calls, calls, pipe.call)))

            def lookup(api_id: str, args: dict[str, Any], c: ResponseCache = cache) -> Observation | None:
                return c.get(api_id, validate_arguments(catalog.api(api_id), args).arguments)

            print(summary(f"validate + ResponseCache.get, {name}", time_calls(opts.calls, calls, lookup)))
            assert pipe.stats["executed"] == 0
            pipe.close()
            cache.close()
        bare = ApiExecutor(catalog, default=Instant())
        print(summary("no cache, instant executor, async acall()", asyncio.run(time_async(bare, opts.calls, calls))))
        bare.close()


if __name__ == "__main__":
    main()
