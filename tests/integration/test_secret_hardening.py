"""Secrets (issue 11, section 2): credentials stay behind on cross-origin redirects, httpx/httpcore log records
never show an echoed key, and a cut text never keeps a key's beginning. Real loopback servers throughout."""

from __future__ import annotations

import json
import logging

import pytest

from langgraph_anytool.catalog.models import Api
from langgraph_anytool.tools.executors.http import HttpExecutor, Redactor, is_credential_header, origin
from langgraph_anytool.tools.executors.log_redaction import HTTP_LIBRARY_LOGGERS
from langgraph_anytool.tools.executors.virtual import VirtualServerExecutor
from langgraph_anytool.tools.observation import Status
from tests.servers import FunctionServer, Request, Response

KEY = "sk-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
BEARER = "Bearer tok-51e2a7c9d0b84f36"


def make_api(path: str) -> Api:
    return Api(id="Cat/tool/a", name="a", tool_key="tool", tool_name="Tool", category="Cat", path=path)


def test_origin_compares_scheme_host_and_port() -> None:
    assert origin("https://api.example.com/a") != origin("http://api.example.com/a")  # the reported downgrade
    assert origin("http://h.example/a") != origin("http://h.example:8080/a")
    assert origin("http://h.example/a") != origin("http://other.example/a")
    assert origin("http://H.example:80/x") == origin("http://h.example/y")
    assert origin("https://h.example:443/") == origin("https://h.example/z")
    assert all(is_credential_header(h) for h in ("Authorization", "X-RapidAPI-Key", "Cookie", "X-Auth-Token"))
    assert not is_credential_header("Accept")


async def test_cross_origin_redirect_sends_no_credential() -> None:
    async def target(req: Request) -> Response:
        return Response.json({"path": req.path})

    with FunctionServer(target) as other:
        async def first(req: Request) -> Response:
            if req.path == "/old":
                return Response(302, headers=[("Location", f"http://127.0.0.1:{other.port}/new")])
            return Response.json({"path": req.path})

        with FunctionServer(first) as srv:
            ex = HttpExecutor(base_urls={"*": srv.url}, secrets={"X-RapidAPI-Key": KEY},
                              headers={"Authorization": BEARER, "Accept": "application/json"}, allow_private=True)
            obs = await ex.aexecute(make_api("/old"), {})
            await ex.aclose()
            assert obs.ok and obs.content == {"path": "/new"}, obs
            sent_first = srv.requests[0].headers
            assert sent_first.get("x-rapidapi-key") == KEY and sent_first.get("authorization") == BEARER
        moved = other.requests[0].headers
        assert "x-rapidapi-key" not in moved and "authorization" not in moved
        assert moved.get("accept") == "application/json"  # ordinary headers still go


async def test_same_origin_redirect_keeps_credentials() -> None:
    async def handler(req: Request) -> Response:
        if req.path == "/old":
            return Response(301, headers=[("Location", "/new")])
        return Response.json({"path": req.path})

    with FunctionServer(handler) as srv:
        ex = HttpExecutor(base_urls={"*": srv.url}, secrets={"X-RapidAPI-Key": KEY}, allow_private=True)
        obs = await ex.aexecute(make_api("/old"), {})
        await ex.aclose()
        assert obs.ok
        assert [r.headers.get("x-rapidapi-key") for r in srv.requests] == [KEY, KEY]


async def test_http_library_logs_never_show_a_key_the_server_echoes(caplog: pytest.LogCaptureFixture) -> None:
    async def echo(req: Request) -> Response:
        sent = req.headers.get("x-rapidapi-key", "")
        return Response(401, b"{}", headers=[("X-Echo", sent)], reason=f"bad key {sent}")

    caplog.set_level(logging.DEBUG)
    for name in HTTP_LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG)
    try:
        with FunctionServer(echo) as srv:
            ex = HttpExecutor(base_urls={"*": srv.url}, secrets={"X-RapidAPI-Key": KEY}, allow_private=True)
            obs = await ex.aexecute(make_api("/e"), {})
            await ex.aclose()
    finally:
        for name in HTTP_LIBRARY_LOGGERS:
            logging.getLogger(name).setLevel(logging.NOTSET)
    assert obs.status is Status.UNAUTHORIZED and KEY not in obs.error
    library = [r for r in caplog.records if r.name.split(".")[0] in ("httpx", "httpcore")]
    assert any("bad key" in r.getMessage() for r in library), "httpx logged no response line"
    text = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    assert KEY not in text and KEY[:12] not in text
    assert "bad key ***" in text


async def test_a_truncated_response_keeps_no_key_prefix() -> None:
    limit = 200

    async def long_body(req: Request) -> Response:
        return Response.text("x" * (limit - 12) + req.headers.get("x-rapidapi-key", "") + " and more")

    with FunctionServer(long_body) as srv:
        ex = HttpExecutor(base_urls={"*": srv.url}, secrets={"X-RapidAPI-Key": KEY}, allow_private=True,
                          max_response_bytes=limit)
        obs = await ex.aexecute(make_api("/t"), {})
        await ex.aclose()
    assert obs.ok and obs.meta.get("truncated") is True
    blob = json.dumps(obs.to_dict()) + obs.for_model(120) + obs.for_model()
    assert KEY[:6] not in blob and "***" in blob


async def test_a_cut_error_message_keeps_no_key_prefix() -> None:
    """The virtual server's error text is cut to 300 characters; the key straddling the cut must not leak."""

    async def failing(req: Request) -> Response:
        key = req.json().get("toolbench_key", "")
        return Response.json({"message": "y" * 290 + key}, 400)

    with FunctionServer(failing) as srv:
        ex = VirtualServerExecutor(srv.url, toolbench_key=KEY, retries=0)
        obs = await ex.aexecute(make_api("/v"), {})
        await ex.aclose()
    assert obs.status is Status.REJECTED  # the server received the call and answered 400
    assert KEY[:6] not in obs.error and KEY[:6] not in json.dumps(obs.to_dict())


def test_redactor_masks_a_secret_cut_at_the_end() -> None:
    r = Redactor([KEY])
    assert r.cut_text("abc " + KEY[:9]) == "abc ***"
    assert r.cut_text("abc " + KEY + " x") == "abc *** x"
    assert r.cut_text("plain text") == "plain text"
    assert r.cut_text("ends with sk") == "ends with sk"  # below the minimal prefix length: no false positive
