"""Throughput of HTTP execution: N concurrent calls against a loopback RapidAPI-style server with fixed latency.

For each concurrency limit L the ideal rate is L / latency (L requests in flight, each taking `latency`). Reported:
calls/s through `HttpExecutor` alone (per_host_limit = L), and through the whole pipeline (`ApiExecutor`:
validation, cache miss + store, executor; max_concurrency = L) with distinct arguments so nothing is a cache hit.

The server runs in a separate process (`python -m tests.servers`) so it does not share the client's GIL;
`--in-process` runs it in a thread instead.

    .venv/bin/python benchmarks/execution_throughput.py --calls 1000 --latency 0.05 --limits 16 64
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langgraph_anytool.catalog.catalog import Catalog  # noqa: E402
from langgraph_anytool.catalog.models import Api, Category, Param, Tool  # noqa: E402
from langgraph_anytool.tools.executors.http import HttpExecutor  # noqa: E402
from langgraph_anytool.tools.observation import Observation  # noqa: E402

KEY = "bench-key"


@contextmanager
def server_url(latency: float, in_process: bool) -> Iterator[str]:
    """A RapidApiServer URL, in a child process (default) or a thread."""
    if in_process:
        from tests.servers import RapidApiServer

        with RapidApiServer(api_key=KEY, latency=latency) as srv:
            yield srv.url
        return
    proc = subprocess.Popen([sys.executable, "-m", "tests.servers", "rapidapi", "--latency", str(latency),
                             "--api-key", KEY], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if not line.startswith("URL "):
            raise RuntimeError(f"server did not start: {line!r}")
        yield line[4:]
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()  # only the child this script started
            proc.wait(5)


API = Api(id="Bench/echo/get_item", name="Get Item", tool_key="echo", tool_name="Echo", category="Bench",
          path="/items/{item_id}", params=(Param("item_id", "integer", required=True, location="path"), Param("q")))


Result = tuple[float, float, Counter[str]]  # wall seconds, client CPU seconds, statuses


async def run_calls(n: int, call: Callable[[int], Awaitable[Observation]]) -> Result:
    t0, c0 = time.perf_counter(), time.process_time()
    results = await asyncio.gather(*[call(i) for i in range(n)])
    return time.perf_counter() - t0, time.process_time() - c0, Counter(r.status.value for r in results)


async def bench_executor(url: str, n: int, limit: int) -> Result:
    ex = HttpExecutor(base_urls={"*": url}, secrets={"X-RapidAPI-Key": KEY}, allow_private=True,
                      per_host_limit=limit, timeout=30)
    await run_calls(limit, lambda i: ex.aexecute(API, {"item_id": i}))  # warm-up: open the connections
    result = await run_calls(n, lambda i: ex.aexecute(API, {"item_id": i, "q": "x"}))
    await ex.aclose()
    return result


async def bench_pipeline(url: str, n: int, limit: int) -> Result | None:
    try:
        from langgraph_anytool.tools.cache import ResponseCache
        from langgraph_anytool.tools.pipeline import ApiExecutor
    except ImportError:
        return None
    catalog = Catalog([Category("Bench", tools=(Tool("echo", "Echo", "Bench", base_url=url, apis=(API,)),))])
    http = HttpExecutor(catalog=catalog, secrets={"X-RapidAPI-Key": KEY}, allow_private=True,
                        per_host_limit=limit, timeout=30)
    pipe = ApiExecutor(catalog, default=http, cache=ResponseCache.memory(), max_concurrency=limit)
    await run_calls(limit, lambda i: pipe.acall(API.id, {"item_id": -1 - i}))
    before = pipe.cache.stats["hits"] if pipe.cache is not None else 0
    result = await run_calls(n, lambda i: pipe.acall(API.id, {"item_id": i}))
    hits = (pipe.cache.stats["hits"] if pipe.cache is not None else 0) - before
    await pipe.aclose()
    if hits:
        raise RuntimeError(f"{hits} cache hits: the benchmark must not hit the cache")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--limits", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--in-process", action="store_true", help="run the server in a thread of this process")
    args = parser.parse_args()
    print(f"{args.calls} concurrent calls, server latency {args.latency * 1000:.0f} ms, "
          f"server {'in-process' if args.in_process else 'in a child process'}")
    print("ideal = limit / latency; CPU ms/call = this process's CPU time per call (the ceiling when the machine is busy)")
    print(f"{'path':<10} {'limit':>5} {'calls/s':>9} {'ideal':>7} {'% ideal':>8} {'wall s':>7} {'CPU ms/call':>12}  statuses")
    failed = False
    with server_url(args.latency, args.in_process) as url:
        for limit in args.limits:
            ideal = limit / args.latency if args.latency > 0 else float("inf")
            for label, bench in (("executor", bench_executor), ("pipeline", bench_pipeline)):
                out = asyncio.run(bench(url, args.calls, limit))
                if out is None:
                    print(f"{label:<10} {limit:>5}  (pipeline not available)")
                    continue
                elapsed, cpu, statuses = out
                rate = args.calls / elapsed
                failed |= set(statuses) != {"ok"}
                print(f"{label:<10} {limit:>5} {rate:>9.1f} {ideal:>7.0f} {100 * rate / ideal:>7.1f}% {elapsed:>7.2f} "
                      f"{1000 * cpu / args.calls:>12.2f}  {dict(statuses)}")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
