"""HttpExecutor against loopback servers: placement, retries, limits, timeouts, mapping, address guard, secrets."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.catalog.models import Api, Category, Param, Tool
from langgraph_anytool.tools.executors.base import Executor
from langgraph_anytool.tools.executors.http import HttpExecutor, Redactor, parse_retry_after, status_for_http
from langgraph_anytool.tools.observation import Observation, Status
from tests.servers import FunctionServer, RapidApiServer, Request, Response

KEY = "rk-7f3a9c1e5b2d4068a1b2c3d4e5f60718"


def make_api(path: str, method: str = "GET", params: tuple[Param, ...] = (), api_key: str = "a") -> Api:
    return Api(id=f"Cat/tool/{api_key}", name=api_key, tool_key="tool", tool_name="Tool", category="Cat",
               method=method, path=path, params=params)


@pytest.fixture
def server() -> Iterator[RapidApiServer]:
    with RapidApiServer(api_key=KEY, hang_seconds=10) as srv:
        yield srv


def executor(srv: RapidApiServer | FunctionServer, **kw: Any) -> HttpExecutor:
    opts: dict[str, Any] = {"base_urls": {"*": srv.url}, "secrets": {"X-RapidAPI-Key": KEY}, "allow_private": True,
                            "backoff": 0.01, "max_backoff": 0.05, "timeout": 3.0}
    return HttpExecutor(**{**opts, **kw})


def test_satisfies_executor_protocol() -> None:
    assert isinstance(HttpExecutor(), Executor)


async def test_get_places_path_query_and_header_params(server: RapidApiServer) -> None:
    api = make_api("/items/{item_id}", params=(
        Param("item_id", required=True, location="path"), Param("q"), Param("flag", "boolean"),
        Param("tags", "array"), Param("X-Trace", location="header")))
    ex = executor(server, rapidapi_host=True)
    obs = await ex.aexecute(api, {"item_id": "a/b c", "q": "x y", "flag": True, "tags": ["u", "v"], "X-Trace": "t1"})
    await ex.aclose()
    assert obs.status is Status.OK, obs
    assert obs.content["path"] == "/items/a%2Fb%20c"  # the slash cannot escape the path segment
    assert obs.content["query"] == {"q": "x y", "flag": "true", "tags": ["u", "v"]}
    assert obs.content["json"] is None
    sent = server.requests[-1]
    assert sent.headers["x-trace"] == "t1"
    assert sent.headers["x-rapidapi-key"] == KEY
    assert sent.headers["x-rapidapi-host"] == f"127.0.0.1:{server.port}"
    assert obs.meta["http_status"] == 200 and obs.meta["attempts"] == 1
    assert obs.simulated is False


async def test_post_sends_json_body(server: RapidApiServer) -> None:
    api = make_api("/orders", "POST", (Param("name"), Param("count", "integer"), Param("opts", "object")))
    ex = executor(server)
    obs = await ex.aexecute(api, {"name": "n", "count": 2, "opts": {"a": [1]}})
    await ex.aclose()
    assert obs.ok
    assert obs.content["method"] == "POST"
    assert obs.content["json"] == {"name": "n", "count": 2, "opts": {"a": [1]}}
    assert obs.content["query"] == {}


async def test_post_keeps_declared_query_params_in_query(server: RapidApiServer) -> None:
    api = make_api("/orders", "PUT", (Param("dry_run", "boolean", location="query"), Param("name", location="body")))
    ex = executor(server)
    obs = await ex.aexecute(api, {"dry_run": False, "name": "n"})
    await ex.aclose()
    assert obs.content["query"] == {"dry_run": "false"}
    assert obs.content["json"] == {"name": "n"}


async def test_missing_path_parameter_is_invalid_arguments(server: RapidApiServer) -> None:
    ex = executor(server)
    obs = await ex.aexecute(make_api("/items/{item_id}"), {})
    assert obs.status is Status.INVALID_ARGUMENTS and "item_id" in obs.error
    assert server.request_count == 0


async def test_no_url_is_an_error_naming_the_option() -> None:
    obs = await HttpExecutor().aexecute(make_api(""), {})
    assert obs.status is Status.ERROR and "base_urls" in obs.error


async def test_base_url_from_catalog(server: RapidApiServer) -> None:
    api = make_api("/from-catalog")
    cat = Catalog([Category("Cat", tools=(Tool("tool", "Tool", "Cat", base_url=server.url, apis=(api,)),))])
    ex = HttpExecutor(catalog=cat, secrets={"X-RapidAPI-Key": KEY}, allow_private=True)
    obs = await ex.aexecute(api, {})
    await ex.aclose()
    assert obs.ok and obs.content["path"] == "/from-catalog"


async def test_retry_after_is_honoured(server: RapidApiServer) -> None:
    server.fail_next("/r", 429, times=1, retry_after="1")
    ex = executor(server)
    t0 = time.perf_counter()
    obs = await ex.aexecute(make_api("/r"), {})
    elapsed = time.perf_counter() - t0
    await ex.aclose()
    assert obs.ok and obs.meta["attempts"] == 2
    assert elapsed >= 1.0
    assert server.request_count == 2


async def test_retry_after_is_capped(server: RapidApiServer) -> None:
    server.fail_next("/r", 503, times=1, retry_after="120")
    ex = executor(server, max_retry_after=0.2)
    t0 = time.perf_counter()
    obs = await ex.aexecute(make_api("/r"), {})
    assert obs.ok and time.perf_counter() - t0 < 5


def test_parse_retry_after_seconds_and_http_date() -> None:
    now = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("2.5") == 2.5
    assert parse_retry_after(format_datetime(now + timedelta(seconds=7), usegmt=True), now=now) == 7
    assert parse_retry_after(format_datetime(now - timedelta(seconds=7), usegmt=True), now=now) == 0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


async def test_server_errors_then_ok(server: RapidApiServer) -> None:
    server.fail_next("/flaky", 500, times=2)
    ex = executor(server)
    obs = await ex.aexecute(make_api("/flaky"), {})
    await ex.aclose()
    assert obs.ok and obs.meta["attempts"] == 3


@pytest.mark.parametrize(("code", "status"), [(500, Status.SERVER_ERROR), (502, Status.SERVER_ERROR),
                                              (429, Status.RATE_LIMITED)])
async def test_retries_exhausted(server: RapidApiServer, code: int, status: Status) -> None:
    server.fail_next("/down", code, times=100)
    ex = executor(server, retries=2)
    obs = await ex.aexecute(make_api("/down"), {})
    await ex.aclose()
    assert obs.status is status
    assert server.request_count == 3 and obs.meta["attempts"] == 3
    assert f"HTTP {code}" in obs.error and "3 attempts" in obs.error


async def test_timeout_is_quick_and_not_retried(server: RapidApiServer) -> None:
    ex = executor(server, timeout=0.3, retries=3)
    t0 = time.perf_counter()
    obs = await ex.aexecute(make_api("/hang"), {})
    elapsed = time.perf_counter() - t0
    await ex.aclose()
    assert obs.status is Status.TIMEOUT
    assert 0.25 <= elapsed < 2.0
    assert server.request_count == 1


async def test_connection_refused_is_retried_then_server_error() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ex = HttpExecutor(base_urls={"*": f"http://127.0.0.1:{port}"}, allow_private=True, retries=2, backoff=0.01)
    obs = await ex.aexecute(make_api("/x"), {})
    await ex.aclose()
    assert obs.status is Status.SERVER_ERROR and "could not connect" in obs.error
    assert obs.meta["attempts"] == 3


async def test_invalid_json_is_an_error(server: RapidApiServer) -> None:
    obs = await executor(server).aexecute(make_api("/invalid-json"), {})
    assert obs.status is Status.ERROR and "malformed JSON" in obs.error
    assert obs.content == '{"broken": tru'


async def test_plain_text_is_ok_with_a_note(server: RapidApiServer) -> None:
    obs = await executor(server).aexecute(make_api("/text"), {})
    assert obs.ok and obs.content == "plain text reply" and "not JSON" in obs.meta["note"]


async def test_huge_body_is_cut_and_says_so(server: RapidApiServer) -> None:
    ex = executor(server, max_response_bytes=100_000)
    obs = await ex.aexecute(make_api("/huge"), {})
    await ex.aclose()
    assert obs.ok and obs.meta["truncated"] is True
    assert isinstance(obs.content, str) and len(obs.content) < 100_200
    assert "truncated" in obs.content and f"{server.huge_bytes:,}" in obs.content


@pytest.mark.parametrize(("path", "status"), [
    ("/not-subscribed", Status.UNAUTHORIZED), ("/status/403", Status.UNAUTHORIZED),
    ("/status/404", Status.NOT_FOUND), ("/status/400", Status.REJECTED),
    ("/status/422", Status.REJECTED), ("/status/418", Status.ERROR)])
async def test_status_mapping(server: RapidApiServer, path: str, status: Status) -> None:
    obs = await executor(server).aexecute(make_api(path), {})
    assert obs.status is status
    assert obs.meta["http_status"] == int(path.rsplit("/", 1)[1]) if path.startswith("/status/") else 403


async def test_missing_key_is_unauthorized_and_names_the_env_var(server: RapidApiServer) -> None:
    env = {"OTHER": "x"}
    ex = HttpExecutor(base_urls={"*": server.url}, headers_from_env={"X-RapidAPI-Key": "RAPIDAPI_KEY"}, environ=env,
                      allow_private=True)
    obs = await ex.aexecute(make_api("/e"), {})
    assert obs.status is Status.UNAUTHORIZED and "RAPIDAPI_KEY" in obs.error
    env["RAPIDAPI_KEY"] = KEY  # read at call time
    obs = await ex.aexecute(make_api("/e"), {})
    await ex.aclose()
    assert obs.ok


def test_rapidapi_not_subscribed_message_maps_to_unauthorized() -> None:
    assert status_for_http(403, "You are not subscribed to this API.") is Status.UNAUTHORIZED
    assert status_for_http(429) is Status.RATE_LIMITED and status_for_http(503) is Status.SERVER_ERROR


async def test_per_host_limit_bounds_in_flight_requests(server: RapidApiServer) -> None:
    server.set_latency(0.1)
    ex = executor(server, per_host_limit=3)
    results = await asyncio.gather(*[ex.aexecute(make_api("/slow"), {}) for _ in range(12)])
    await ex.aclose()
    assert all(r.ok for r in results)
    assert server.max_in_flight == 3


async def test_redirect_is_followed_without_credentials_to_another_host() -> None:
    async def handler(req: Request) -> Response:
        if req.path == "/old":
            return Response(302, headers=[("Location", f"http://localhost:{srv.port}/new")])
        return Response.json({"path": req.path})

    with FunctionServer(handler) as srv:
        obs = await executor(srv).aexecute(make_api("/old"), {})
        assert obs.ok and obs.content == {"path": "/new"} and obs.meta["redirects"] == 1
        first, second = srv.requests
        assert first.headers.get("x-rapidapi-key") == KEY
        assert "x-rapidapi-key" not in second.headers


@pytest.mark.parametrize("host", ["127.0.0.1", "10.0.0.1", "169.254.169.254", "[::1]", "localhost", "0.0.0.0",
                                  "[::ffff:10.0.0.1]", "192.168.1.20"])
async def test_private_addresses_are_refused_before_connecting(server: RapidApiServer, host: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    ex = HttpExecutor(base_urls={"*": f"http://{host}:{server.port}"}, secrets={"X-RapidAPI-Key": KEY})

    async def must_not_send(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a refused call reached the network layer")

    monkeypatch.setattr(ex, "_attempt", must_not_send)
    obs = await ex.aexecute(make_api("/e"), {})
    assert obs.status is Status.ERROR and obs.meta["refused"] is True
    assert host.strip("[]") in obs.error and "allow_private=True" in obs.error
    assert server.request_count == 0


async def test_redirect_to_a_private_host_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    async def handler(req: Request) -> Response:
        return Response(307, headers=[("Location", "http://169.254.169.254/latest/meta-data/")])

    with FunctionServer(handler) as srv:
        # the guard is on, with the test-only exception for loopback (the test server itself, the first hop)
        ex = executor(srv, allow_private=False, allow_loopback=True)
        real_attempt = ex._attempt
        contacted: list[str] = []

        async def recorded(state: Any, req: Any) -> Any:
            contacted.append(req.url)
            assert req.url.startswith(srv.url), "tried to contact the redirect target"
            return await real_attempt(state, req)

        monkeypatch.setattr(ex, "_attempt", recorded)
        obs = await ex.aexecute(make_api("/go"), {})
        await ex.aclose()
        assert obs.status is Status.ERROR and obs.meta["refused"] is True and "169.254.169.254" in obs.error
        assert contacted == [srv.url + "/go"]


async def test_works_across_event_loops(server: RapidApiServer) -> None:
    ex = executor(server)
    first = await ex.aexecute(make_api("/one"), {})

    def in_other_loop() -> bool:
        return asyncio.run(ex.aexecute(make_api("/two"), {})).ok

    assert first.ok and await asyncio.to_thread(in_other_loop)
    await ex.aclose()


async def test_secrets_never_stored(caplog: pytest.LogCaptureFixture, tmp_path: Any) -> None:
    """The key is sent, but no observation, error, log record or repr contains it — even when servers echo it."""

    async def leaky(req: Request) -> Response:
        sent = req.headers.get("x-rapidapi-key", "")
        last = "/" + req.path.rsplit("/", 1)[-1]
        if last == "/echo":
            return Response.json({"you_sent": sent, "nested": [{"k": f"key={sent}"}], sent: "as a key"})
        if last == "/err":
            return Response.json({"message": f"key {sent} is not subscribed"}, 403)
        if last == "/text":
            return Response.text(f"token {sent}")
        if last == "/bad":
            return Response(200, f'{{"k": "{sent}"'.encode(), content_type="application/json")
        return Response.json({"message": f"overloaded for {sent}"}, 503, [("Retry-After", "0")])

    caplog.set_level(logging.DEBUG)
    records: list[str] = []
    with FunctionServer(leaky) as srv:
        ex = HttpExecutor(base_urls={"*": srv.url + "/v1"}, headers_from_env={"X-RapidAPI-Key": "RK"},
                          environ={"RK": KEY}, allow_private=True, retries=1, backoff=0.01)
        statuses = []
        for path in ("/echo", "/err", "/text", "/bad", "/down", "/items/{x}"):
            obs = await ex.aexecute(make_api(path), {"q": KEY[:5]})
            statuses.append(obs.status)
            records.append(json.dumps(obs.to_dict()))
            records.append(obs.for_model())
        await ex.aclose()
        assert all(r.headers.get("x-rapidapi-key") == KEY for r in srv.requests)  # it was sent
        assert {r.path for r in srv.requests} == {f"/v1/{p}" for p in ("echo", "err", "text", "bad", "down")}
    assert statuses == [Status.OK, Status.UNAUTHORIZED, Status.OK, Status.ERROR, Status.SERVER_ERROR,
                        Status.INVALID_ARGUMENTS]
    records += [repr(ex), caplog.text, *(r.getMessage() for r in caplog.records)]
    blob = "\n".join(records)
    assert "***" in blob  # scrubbing happened
    assert KEY not in blob
    from langgraph_anytool.tools.cache import ResponseCache

    cache = ResponseCache(tmp_path / "cache.sqlite", cache_errors=True)
    for i, rec in enumerate(records[0:12:2]):
        d = json.loads(rec)
        cache.put(d["api_id"], {"i": i}, Observation.from_dict(d))
    assert len(cache) >= 5
    cache.close()
    for f in tmp_path.iterdir():
        assert KEY.encode() not in f.read_bytes(), f


def test_redactor_scrubs_nested_structures_and_hides_itself() -> None:
    r = Redactor([KEY])
    out = r.scrub({"a": [KEY, {"b": f"x{KEY}y"}], KEY: 1, "n": 3})
    assert KEY not in json.dumps(out) and out["n"] == 3
    assert KEY not in repr(r)


async def test_secrets_never_stored_through_the_pipeline(tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    """Whole pipeline (validation, SQLite cache, HttpExecutor): every stored byte is free of the key."""
    from langgraph_anytool.tools.pipeline import ApiExecutor

    async def leaky(req: Request) -> Response:
        sent = req.headers.get("x-rapidapi-key", "")
        if req.path.endswith("/forbidden"):
            return Response.json({"message": f"key {sent} is not subscribed"}, 403)
        return Response.json({"echo": sent, "q": req.query.get("q")})

    caplog.set_level(logging.DEBUG)
    apis = tuple(make_api(f"/{name}", params=(Param("q"),), api_key=name) for name in ("echo", "forbidden"))
    cat = Catalog([Category("Cat", tools=(Tool("tool", "Tool", "Cat", apis=apis),))])
    with FunctionServer(leaky) as srv:
        pipe = ApiExecutor.for_catalog(cat, kind="http", cache_path=tmp_path / "calls.sqlite", cache_errors=True,
                                       base_urls={"Cat/tool": srv.url}, headers_from_env={"X-RapidAPI-Key": "RK"},
                                       environ={"RK": KEY}, allow_private=True)
        outputs = []
        for api in apis:
            for _ in range(2):  # the second call is served from the cache
                obs = await pipe.acall(api.id, {"q": "hello"})
                outputs += [json.dumps(obs.to_dict()), pipe.render(obs), repr(obs)]
        assert [json.loads(o)["cached"] for o in outputs[::3]] == [False, True, False, True]
        outputs.append(repr(pipe))
        await pipe.aclose()
        assert len(srv.requests) == 2 and all(r.headers["x-rapidapi-key"] == KEY for r in srv.requests)
    blob = "\n".join([*outputs, caplog.text])
    assert KEY not in blob and "***" in blob
    files = list(tmp_path.iterdir())
    assert files
    for f in files:
        assert KEY.encode() not in f.read_bytes(), f


@pytest.mark.parametrize(("address", "verdict"), [
    ("8.8.8.8", None), ("2001:4860:4860::8888", None), ("100.64.0.1", "non-global"), ("224.0.0.251", "multicast"),
    ("fe80::1", "link-local"), ("::", "unspecified"), ("::ffff:8.8.8.8", "IPv4-mapped"),
    ("::ffff:127.0.0.1", "IPv4-mapped loopback"), ("2002:a00:1::1", "embeds private IPv4 address 10.0.0.1")])
def test_classify_address(address: str, verdict: str | None) -> None:
    from langgraph_anytool.tools.netguard import classify_address, parse_ip_literal

    ip = parse_ip_literal(address)
    assert ip is not None and classify_address(ip) == verdict
