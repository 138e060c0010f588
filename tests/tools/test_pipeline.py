"""ApiExecutor: resolve → validate → cache → execute (bounded) → store; every outcome an Observation."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.catalog.models import Api, Category, Param, Tool
from langgraph_anytool.tools.cache import ResponseCache
from langgraph_anytool.tools.executors import LocalExecutor, TemplateSimulatedExecutor, make_executor
from langgraph_anytool.tools.observation import Observation, Status
from langgraph_anytool.tools.pipeline import ApiExecutor


def _api(tool: str, key: str, *params: Param, template: Any = None) -> Api:
    return Api(id=f"Math/{tool}/{key}", name=key.title(), tool_key=tool, tool_name=tool.title(), category="Math",
               description=f"{key} numbers", params=params, template_response=template)


ADD = _api("calc", "add", Param("a", "number", required=True), Param("b", "number", required=True))
DIV = _api("calc", "div", Param("a", "number", required=True), Param("b", "number", required=True))
SLOW = _api("calc", "slow", Param("ms", "integer", required=True))
BIG = _api("calc", "big", Param("n", "integer", required=True))
ECHO = _api("text", "echo", Param("text", "string", required=True), template={"text": "str", "n": "int"})
CATALOG = Catalog([Category("Math", tools=(
    Tool("calc", "Calc", "Math", apis=(ADD, DIV, SLOW, BIG)),
    Tool("text", "Text", "Math", apis=(ECHO,)),
))])


class Recorder:
    """An executor that records what reaches it and answers with a fixed structure."""

    name = "recorder"

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def aexecute(self, api: Api, arguments: dict[str, Any]) -> Observation:
        self.calls.append((api.id, dict(arguments)))
        return Observation(api_id=api.id, status=Status.OK, content={"api": api.name, "args": arguments})

    async def aclose(self) -> None:
        return None


class MustNotRun:
    name = "must-not-run"

    async def aexecute(self, api: Api, arguments: dict[str, Any]) -> Observation:
        pytest.fail(f"the executor was called for {api.id} {arguments}")

    async def aclose(self) -> None:
        return None


def div(a: float, b: float) -> float:
    if b == 0:
        raise ValueError("b must not be zero")
    return a / b


async def add(a: float, b: float) -> float:
    await asyncio.sleep(0)
    return a + b


def boom(n: int) -> None:
    raise RuntimeError(f"exploded at {n}")


def sleep_ms(ms: int) -> int:
    time.sleep(ms / 1000)
    return ms


def local_pipeline(**kw: Any) -> ApiExecutor:
    impls: dict[str, Callable[..., Any]] = {ADD.id: add, DIV.id: div, BIG.id: lambda n: "x" * n, SLOW.id: sleep_ms}
    return ApiExecutor(CATALOG, default=LocalExecutor(impls), **kw)


async def test_success_sync_and_async_callables() -> None:
    pipe = local_pipeline()
    obs = await pipe.acall(ADD.id, {"a": "2", "b": 3})
    assert obs == Observation(api_id=ADD.id, status=Status.OK, content=5, latency_ms=obs.latency_ms)
    assert obs.latency_ms > 0
    obs = await pipe.acall(DIV.id, '{"a": 7, "b": 2}')
    assert obs.ok and obs.content == 3.5 and not obs.simulated
    assert json.loads(pipe.render(obs)) == {"status": "ok", "response": 3.5}


async def test_failures_become_observations() -> None:
    pipe = ApiExecutor(CATALOG, default=LocalExecutor({DIV.id: div, BIG.id: boom}))
    bad_input = await pipe.acall(DIV.id, {"a": 1, "b": 0})
    assert bad_input.status is Status.REJECTED and bad_input.error == "ValueError: b must not be zero"
    crashed = await pipe.acall(BIG.id, {"n": 4})
    assert crashed.status is Status.ERROR and crashed.error == "RuntimeError: exploded at 4"
    missing = await pipe.acall(ADD.id, {"a": 1, "b": 2})
    assert missing.status is Status.NOT_FOUND and "no local implementation" in missing.error
    unknown = await pipe.acall("Math/calc/nope", {})
    assert unknown.status is Status.NOT_FOUND and unknown.api_id == "Math/calc/nope" and "not in the catalog" in unknown.error
    by_name = await pipe.acall_function("no_such_function", {})
    assert by_name.status is Status.NOT_FOUND and "unknown function" in by_name.error
    assert pipe.stats["errors"] == {"rejected": 1, "error": 1, "not_found": 3}
    assert pipe.stats["calls"] == 5


async def test_executor_that_breaks_its_contract_is_contained() -> None:
    class Raises:
        name = "raises"

        async def aexecute(self, api: Api, arguments: dict[str, Any]) -> Observation:
            raise KeyError("oops")

        async def aclose(self) -> None:
            return None

    class ReturnsJunk(Raises):
        async def aexecute(self, api: Api, arguments: dict[str, Any]) -> Any:
            return {"not": "an observation"}

    obs = await ApiExecutor(CATALOG, default=Raises()).acall(ADD.id, {"a": 1, "b": 2})
    assert obs.status is Status.ERROR and obs.error == "KeyError: 'oops'"
    obs = await ApiExecutor(CATALOG, default=ReturnsJunk()).acall(ADD.id, {"a": 1, "b": 2})
    assert obs.status is Status.ERROR and "returned dict, not an Observation" in obs.error


async def test_invalid_arguments_never_reach_the_executor() -> None:
    rec = Recorder()
    pipe = ApiExecutor(CATALOG, default=rec, cache=ResponseCache.memory(cache_errors=True))
    for bad in ({"a": 1}, {"a": 1, "b": "two"}, {"a": 1, "b": 2, "c": 3}, "[1, 2]", "{broken"):
        obs = await pipe.acall(ADD.id, bad)
        assert obs.status is Status.INVALID_ARGUMENTS and obs.error.startswith("Invalid arguments for Calc / Add")
    assert rec.calls == []
    assert pipe.cache is not None and len(pipe.cache) == 0
    assert pipe.stats["executed"] == 0


async def test_cache_hits_skip_the_executor_and_keys_are_canonical() -> None:
    rec = Recorder()
    pipe = ApiExecutor(CATALOG, default=rec, cache=ResponseCache.memory())
    first = await pipe.acall(ADD.id, {"a": 1, "b": 2})
    second = await pipe.acall(ADD.id, '{"b": "2",  "a": "1"}')
    third = await pipe.acall_function(CATALOG.function_name(ADD.id), {"b": 2.0, "a": 1})
    assert len(rec.calls) == 1
    assert not first.cached and second.cached and third.cached
    assert second.content == third.content == first.content
    assert pipe.stats["cache_hits"] == 2 and pipe.stats["executed"] == 1 and pipe.stats["calls"] == 3


async def test_errors_are_retried_not_cached() -> None:
    attempts: list[int] = []

    def flaky(n: int) -> int:
        attempts.append(n)
        if len(attempts) == 1:
            raise ConnectionError("transient")
        return n

    pipe = ApiExecutor(CATALOG, default=LocalExecutor({BIG.id: flaky}), cache=ResponseCache.memory())
    assert (await pipe.acall(BIG.id, {"n": 1})).status is Status.ERROR
    assert (await pipe.acall(BIG.id, {"n": 1})).content == 1
    assert (await pipe.acall(BIG.id, {"n": 1})).cached
    assert attempts == [1, 1]


def test_render_truncates_with_a_marker() -> None:
    pipe = local_pipeline(max_observation_chars=300)
    obs = pipe.call(BIG.id, {"n": 5000})
    assert obs.ok and len(obs.content) == 5000  # the observation keeps everything
    text = pipe.render(obs)
    assert len(text) <= 300
    assert re.search(r"\[truncated \d+ of \d+ characters\]$", text)
    short = pipe.call(BIG.id, {"n": 10})
    assert "truncated" not in pipe.render(short)
    flagged = Observation(api_id=BIG.id, status=Status.OK, content="y" * 1000, cached=True, simulated=True)
    assert pipe.render(flagged).startswith('{"status":"ok","cached":true,"simulated":true,"response":"yyy')


@pytest.mark.parametrize("limit", [1, 4])
async def test_concurrency_bound_is_honoured(limit: int) -> None:
    in_flight = peak = 0
    lock = threading.Lock()

    async def slow_async(ms: int) -> int:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        await asyncio.sleep(ms / 1000)
        with lock:
            in_flight -= 1
        return ms

    pipe = ApiExecutor(CATALOG, default=LocalExecutor({SLOW.id: slow_async}), max_concurrency=limit)
    results = await asyncio.gather(*(pipe.acall(SLOW.id, {"ms": 20}) for _ in range(12)))
    assert all(r.ok for r in results)
    assert peak == limit


async def test_concurrency_bound_with_threaded_sync_callables() -> None:
    in_flight = peak = 0
    lock = threading.Lock()

    def slow_sync(ms: int) -> int:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(ms / 1000)
        with lock:
            in_flight -= 1
        return ms

    pipe = ApiExecutor(CATALOG, default=LocalExecutor({SLOW.id: slow_sync}), max_concurrency=3)
    start = time.perf_counter()
    results = await asyncio.gather(*(pipe.acall(SLOW.id, {"ms": 30}) for _ in range(9)))
    assert all(r.ok for r in results)
    assert peak == 3
    assert time.perf_counter() - start >= 0.085  # 3 waves of 30 ms


def test_sync_call_from_threads_and_close() -> None:
    pipe = local_pipeline(max_concurrency=2)
    out: list[Observation] = []
    threads = [threading.Thread(target=lambda i=i: out.append(pipe.call(ADD.id, {"a": i, "b": 1}))) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(o.content for o in out) == [i + 1 for i in range(8)]
    assert pipe.call_function(CATALOG.function_name(DIV.id), {"a": 1, "b": 4}).content == 0.25
    pipe.close()


async def test_sync_call_inside_a_running_loop_still_answers() -> None:
    pipe = local_pipeline()
    assert pipe.call(ADD.id, {"a": 1, "b": 1}).content == 2  # blocks this loop briefly; acall is the async form
    pipe.close()


async def test_overrides_by_api_tool_and_category() -> None:
    default, by_tool, by_api = Recorder(), Recorder(), Recorder()
    pipe = ApiExecutor(CATALOG, default=default, overrides={"Math/calc": by_tool, DIV.id: by_api})
    await pipe.acall(ADD.id, {"a": 1, "b": 2})
    await pipe.acall(DIV.id, {"a": 1, "b": 2})
    await pipe.acall(ECHO.id, {"text": "hi"})
    assert [c[0] for c in by_tool.calls] == [ADD.id]
    assert [c[0] for c in by_api.calls] == [DIV.id]
    assert [c[0] for c in default.calls] == [ECHO.id]
    cat_pipe = ApiExecutor(CATALOG, default=MustNotRun(), overrides={"Math": default})
    assert (await cat_pipe.acall(ECHO.id, {"text": "x"})).ok


async def test_recorded_run_replays_exactly_without_the_executor(tmp_path: Path) -> None:
    """A run records to a cache file; on another machine, an import answers every call identically."""
    calls: list[tuple[str, Any]] = [(ECHO.id, {"text": f"t{i}"}) for i in range(20)]
    calls += [(ADD.id, {"a": i, "b": "1"}) for i in range(10)] + [(DIV.id, {"a": 1, "b": 3})]
    impls = {ADD.id: add, DIV.id: div}
    recording = ApiExecutor(CATALOG, default=LocalExecutor(impls), overrides={"Math/text": TemplateSimulatedExecutor()},
                            cache=ResponseCache(tmp_path / "run.sqlite"))
    first = await asyncio.gather(*(recording.acall(a, args) for a, args in calls))
    assert all(o.ok for o in first)
    assert recording.cache is not None
    recording.cache.export_jsonl(tmp_path / "run.jsonl")

    elsewhere = ResponseCache(tmp_path / "other.sqlite")
    elsewhere.import_jsonl(tmp_path / "run.jsonl")
    replay = ApiExecutor(CATALOG, default=MustNotRun(), cache=elsewhere)
    second = await asyncio.gather(*(replay.acall(a, json.dumps(args)) for a, args in reversed(calls)))
    second.reverse()
    for before, after in zip(first, second, strict=True):
        assert after.cached
        assert (after.api_id, after.status, after.content, after.error, after.simulated) == (
            before.api_id, before.status, before.content, before.error, before.simulated)
        assert json.loads(replay.render(after)) == {**json.loads(recording.render(before)), "cached": True}
    assert any(o.simulated for o in second) and any(not o.simulated for o in second)
    assert replay.stats["executed"] == 0 and replay.stats["cache_hits"] == len(calls)


def test_for_catalog_and_factory(tmp_path: Path) -> None:
    pipe = ApiExecutor.for_catalog(CATALOG, kind="template", cache_path=tmp_path / "c.sqlite", seed=3)
    assert isinstance(pipe.default, TemplateSimulatedExecutor) and pipe.default.seed == 3
    obs = pipe.call(ECHO.id, {"text": "hello"})
    assert obs.simulated and obs.content["text"] == "hello"
    assert pipe.call(ECHO.id, {"text": "hello"}).cached
    pipe.close()
    assert (tmp_path / "c.sqlite").exists()
    with pytest.raises(ValueError, match="unknown executor kind 'magic'"):
        make_executor("magic")
    local = make_executor("local", implementations={ADD.id: add})
    assert isinstance(local, LocalExecutor) and local.api_ids == [ADD.id]


def test_builtin_local_executor_covers_the_builtin_catalog() -> None:
    builtin = pytest.importorskip("langgraph_anytool.catalog.builtin")
    ex = make_executor("local")
    assert isinstance(ex, LocalExecutor)
    assert set(ex.api_ids) == set(builtin.builtin_implementations())


def test_remote_executors_are_imported_lazily() -> None:
    code = ("import sys, langgraph_anytool.tools.pipeline, langgraph_anytool.tools.executors; "
            "print(sorted(m for m in sys.modules if m.split('.')[-1] in ('http', 'virtual', 'llm_sim') "
            "and m.startswith('langgraph_anytool')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"
