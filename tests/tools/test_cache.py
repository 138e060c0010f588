"""ResponseCache: canonical keys, TTLs, error policy, export/import, concurrent writers."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.tools.cache import ResponseCache, cache_key, canonical_json
from langgraph_anytool.tools.observation import Observation, Status

API = "Finance/quotes/price"


def ok(content: object, api_id: str = API, **kw: Any) -> Observation:
    return Observation(api_id=api_id, status=Status.OK, content=content, **kw)


class FakeClock:
    def __init__(self, t: float = 1_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture(params=["sqlite", "memory"])
def cache(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ResponseCache]:
    c = ResponseCache(tmp_path / "c.sqlite") if request.param == "sqlite" else ResponseCache.memory()
    yield c
    c.close()


def test_canonical_key_ignores_order_whitespace_and_float_spelling() -> None:
    a = {"symbol": "AAPL", "days": 3, "opts": {"b": 1, "a": [1.0, 2]}}
    b = json.loads('{ "opts": {"a": [1, 2.0], "b": 1.0},\n "days": 3.0, "symbol": "AAPL" }')
    assert canonical_json(a) == canonical_json(b) == '{"days":3,"opts":{"a":[1,2],"b":1},"symbol":"AAPL"}'
    assert cache_key(API, a) == cache_key(API, b)
    assert cache_key(API, a) != cache_key("Finance/quotes/other", a)
    assert cache_key(API, {"days": 3}) != cache_key(API, {"days": "3"})  # validation coerces before keying
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def test_roundtrip_and_hit_miss_counters(cache: ResponseCache) -> None:
    assert cache.get(API, {"s": "A"}) is None
    assert cache.put(API, {"s": "A"}, ok({"price": 1.5, "tags": ["x"]}, simulated=True, latency_ms=9.0))
    hit = cache.get(API, {"s": "A"})
    assert hit is not None
    assert hit == Observation(api_id=API, status=Status.OK, content={"price": 1.5, "tags": ["x"]}, cached=True,
                              simulated=True)
    assert cache.stats == {"hits": 1, "misses": 1, "stores": 1, "expired": 0}
    assert len(cache) == 1


def test_equivalent_arguments_share_one_entry(cache: ResponseCache) -> None:
    cache.put(API, {"a": 1, "b": "x"}, ok("first"))
    cache.put(API, json.loads('{"b": "x",   "a": 1.0}'), ok("second"))
    assert len(cache) == 1
    hit = cache.get(API, {"b": "x", "a": 1})
    assert hit is not None and hit.content == "second"


def test_errors_are_not_cached_unless_asked(tmp_path: Path) -> None:
    plain = ResponseCache.memory()
    assert not plain.put(API, {}, Observation(api_id=API, status=Status.SERVER_ERROR, error="boom"))
    assert len(plain) == 0
    keeping = ResponseCache(tmp_path / "e.sqlite", cache_errors=True)
    assert keeping.put(API, {}, Observation(api_id=API, status=Status.SERVER_ERROR, error="boom"))
    assert not keeping.put(API, {"x": 1}, Observation(api_id=API, status=Status.INVALID_ARGUMENTS, error="bad"))
    hit = keeping.get(API, {})
    assert hit is not None and hit.status is Status.SERVER_ERROR and hit.error == "boom" and hit.content is None
    assert keeping.get(API, {"x": 1}) is None
    keeping.close()


def test_ttl_by_api_tool_and_default(tmp_path: Path) -> None:
    clock = FakeClock()
    c = ResponseCache(tmp_path / "ttl.sqlite", ttl={"Finance/quotes": 60, "Finance/quotes/history": None,
                                                   "Finance": 10}, default_ttl=5, clock=clock)
    assert c.ttl_for("Finance/quotes/price") == 60
    assert c.ttl_for("Finance/quotes/history") is None
    assert c.ttl_for("Finance/quotesextra/price") == 10  # prefixes match on "/" boundaries only
    assert c.ttl_for("Weather/x/y") == 5
    c.put("Finance/quotes/price", {}, ok(1, "Finance/quotes/price"))
    c.put("Finance/quotes/history", {}, ok(2, "Finance/quotes/history"))
    c.put("Weather/x/y", {}, ok(3, "Weather/x/y"))
    clock.t += 59
    assert c.get("Finance/quotes/price", {}) is not None
    assert c.get("Weather/x/y", {}) is None  # 5 s default passed
    clock.t += 1
    assert c.get("Finance/quotes/price", {}) is None  # exactly 60 s old: expired
    clock.t += 10**9
    assert c.get("Finance/quotes/history", {}) is not None  # forever
    assert c.stats["expired"] == 2
    assert len(c) == 1  # expired entries are removed when found
    c.set_ttl("Finance/quotes/history", 1)
    assert c.get("Finance/quotes/history", {}) is None
    c.close()


def test_export_import_roundtrip(tmp_path: Path) -> None:
    src = ResponseCache(tmp_path / "a.sqlite", cache_errors=True, clock=FakeClock(50.0))
    calls: list[tuple[str, dict[str, Any], Observation]] = [
        ("Cat/t/a", {"q": "ü ñ", "n": 2}, ok({"k": [1, 2.5, None, True]}, "Cat/t/a")),
        ("Cat/t/b", {}, ok("plain text", "Cat/t/b", simulated=True)),
        ("Cat/t/c", {"x": [1, {"y": "z"}]}, Observation(api_id="Cat/t/c", status=Status.RATE_LIMITED, error="slow")),
    ]
    for api_id, args, obs in calls:
        src.put(api_id, args, obs)
    out = tmp_path / "dump.jsonl"
    assert src.export_jsonl(out) == 3
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and all(json.loads(line)["created"] == 50.0 for line in lines)
    dst = ResponseCache.memory(cache_errors=True)
    assert dst.import_jsonl(out) == 3
    for api_id, args, obs in calls:
        assert dst.get(api_id, dict(reversed(list(args.items())))) == src.get(api_id, args)
        assert dst.get(api_id, args) == Observation(api_id=api_id, status=obs.status, content=obs.content,
                                                    error=obs.error, cached=True, simulated=obs.simulated)
    assert list(dst.records()) == list(src.records())
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"api_id": "a/b/c", "arguments": {}, "status": "ok"}\n{"nope": 1}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl, line 2, field 'api_id': is missing"):
        dst.import_jsonl(bad)
    src.close()


def test_sqlite_cache_persists_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite"
    with ResponseCache(path) as c:
        c.put(API, {"s": "A"}, ok([1, 2]))
    with ResponseCache(path) as again:
        hit = again.get(API, {"s": "A"})
        assert hit is not None and hit.content == [1, 2]


def test_nothing_but_the_handed_observation_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with ResponseCache(path) as c:
        c.put(API, {"s": "A"}, ok({"v": 1}, meta={"request_headers": {"X-RapidAPI-Key": "sk-SECRET"}}))
    raw = path.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("s.sqlite-*"))
    assert b"sk-SECRET" not in raw
    with sqlite3.connect(path) as conn:
        cols = [r[1] for r in conn.execute("PRAGMA table_info(responses)")]
    assert cols == ["key", "api_id", "arguments", "status", "content", "error", "simulated", "created"]


def test_many_threads_and_tasks_write_at_once(cache: ResponseCache) -> None:
    n_threads, per_thread, n_tasks = 16, 200, 200
    barrier = threading.Barrier(n_threads)
    failures: list[BaseException] = []

    def writer(t: int) -> None:
        try:
            barrier.wait()
            for i in range(per_thread):
                cache.put(f"Cat/tool/api{t}", {"i": i}, ok({"t": t, "i": i}, f"Cat/tool/api{t}"))
                if i % 10 == 0:
                    assert cache.get(f"Cat/tool/api{t}", {"i": i}) is not None
        except BaseException as e:  # surfaced below
            failures.append(e)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not failures

    async def tasks() -> None:
        async def one(i: int) -> None:
            await cache.aput("Cat/tool/async", {"i": i}, ok(i, "Cat/tool/async"))
            hit = await cache.aget("Cat/tool/async", {"i": i})
            assert hit is not None and hit.content == i

        await asyncio.gather(*(one(i) for i in range(n_tasks)))

    asyncio.run(tasks())
    assert len(cache) == n_threads * per_thread + n_tasks
    assert cache.integrity_check() == "ok"
    for t in range(n_threads):
        for i in range(0, per_thread, 37):
            hit = cache.get(f"Cat/tool/api{t}", {"i": i})
            assert hit is not None and hit.content == {"t": t, "i": i}
    assert cache.stats["stores"] == n_threads * per_thread + n_tasks


def test_two_caches_on_one_file_from_threads(tmp_path: Path) -> None:
    """Separate connections (as separate processes would have) share the file through WAL + busy timeout."""
    path = tmp_path / "shared.sqlite"
    caches = [ResponseCache(path) for _ in range(4)]

    def writer(k: int) -> None:
        for i in range(100):
            caches[k].put(API, {"k": k, "i": i}, ok(i))

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert all(len(c) == 400 for c in caches)
    assert caches[0].integrity_check() == "ok"
    for c in caches:
        c.close()
