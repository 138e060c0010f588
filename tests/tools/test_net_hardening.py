"""Issue 21, network side: YAML alias bombs (1), compression bombs and one response cap for every executor (2),
DNS rebinding (2b), the CLI calling an OpenAPI catalog over HTTP (2c), secrets in any logger's records (7), and
configured credential headers on cross-origin redirects (8). Real loopback servers; no non-loopback address is
ever contacted (connections to any other address are refused by a stub before a socket is opened)."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import resource
import socket
import subprocess
import sys
import textwrap
import time
import tracemalloc
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpcore
import pytest

from langgraph_anytool.catalog.errors import CatalogError
from langgraph_anytool.catalog.models import Api, Category, Tool
from langgraph_anytool.tools.executors.http import HttpExecutor
from langgraph_anytool.tools.executors.virtual import VirtualServerExecutor
from langgraph_anytool.tools.netguard import parse_ip_literal
from langgraph_anytool.tools.observation import Status
from tests.servers import FunctionServer, Request, Response

KEY = "sk-test-1b2c3d4e5f60718293a4b5c6d7e8f901"
AUTH = "auth-7d41f0c29e5b4a68"
SESSION = "sess-0c9b8a7f6e5d4c3b"
ROOT = Path(__file__).resolve().parents[2]


def make_api(path: str = "/x") -> Api:
    return Api(id="Cat/tool/a", name="a", tool_key="tool", tool_name="Tool", category="Cat", path=path)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


# --------------------------------------------------------------------------- 1: YAML alias bombs
def _alias_bomb(levels: int = 10, width: int = 9) -> str:
    lines = ["openapi: 3.0.0", 'info: {title: bomb, version: "1"}', "a0: &a0 [" + ",".join(['"lol"'] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join([*lines, "paths: {}"]) + "\n"


def _limit_memory() -> None:  # today's code would expand the bomb to many gigabytes: fail fast instead
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def test_cli_refuses_a_yaml_alias_bomb_in_one_line(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_alias_bomb())
    assert bomb.stat().st_size < 700  # a few hundred bytes that expand to 9**10 strings
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "langgraph_anytool.cli", "catalog", "--catalog", str(bomb)],
                          capture_output=True, text=True, timeout=90, env=_env(), preexec_fn=_limit_memory)
    elapsed = time.monotonic() - start
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode != 0 and len(lines) == 1, proc.stderr[-2000:]
    assert str(bomb) in lines[0] and "expands to more than" in lines[0]
    assert elapsed < 30


def test_too_many_aliases_and_an_oversized_file_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from langgraph_anytool.catalog import openapi

    many = tmp_path / "many.yaml"
    many.write_text("openapi: 3.0.0\nx: &x [1]\ny: [" + ",".join(["*x"] * 150) + "]\n")
    with pytest.raises(CatalogError, match="more than 100 YAML aliases") as info:
        openapi.read_spec_file(many)
    assert str(many) in str(info.value)
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"openapi": "3.0.0", "pad": "x" * 5000}))
    monkeypatch.setattr(openapi, "MAX_SPEC_BYTES", 4096)
    with pytest.raises(CatalogError, match="at most 4,096") as info:
        openapi.read_spec_file(big)
    assert str(big) in str(info.value)


def test_a_few_aliases_still_load(tmp_path: Path) -> None:
    from langgraph_anytool.catalog.openapi import load_openapi_specs

    spec = tmp_path / "pets.yaml"
    spec.write_text(textwrap.dedent("""\
        openapi: 3.0.0
        info: {title: Pets, version: "1"}
        servers: [{url: "https://pets.example"}]
        components:
          parameters:
            limit: &limit {name: limit, in: query, schema: {type: integer}}
        paths:
          /pets:
            get: {operationId: listPets, parameters: [*limit], responses: {"200": {description: ok}}}
          /cats:
            get: {operationId: listCats, parameters: [*limit], responses: {"200": {description: ok}}}
        """))
    (category,) = load_openapi_specs([spec], category="OpenAPI")
    apis = category.tools[0].apis
    assert [a.name for a in apis] == ["listPets", "listCats"] and all(a.param("limit") for a in apis)


# --------------------------------------------------------------------------- 2: compression bombs, one cap
def _zeros(n: int) -> bytes:
    return bytes(n)


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, 9)


def _encoded_server(body: bytes, encoding: str) -> FunctionServer:
    async def handler(req: Request) -> Response:
        return Response(200, body, headers=[("Content-Encoding", encoding)], content_type="text/plain")

    return FunctionServer(handler)


async def _call_traced(ex: Any, api: Api | None = None) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        obs = await ex.aexecute(api or make_api(), {})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        await ex.aclose()
    return obs, peak


async def test_stacked_encodings_are_refused_within_the_timeout() -> None:
    inner = _gzip(_zeros(40_000_000))
    with _encoded_server(_gzip(inner), "gzip, gzip") as srv:
        ex = HttpExecutor(base_urls={"*": srv.url}, allow_private=True, timeout=5.0, retries=0)
        start = time.monotonic()
        obs, peak = await _call_traced(ex)
    assert time.monotonic() - start < 5.0
    assert obs.status is Status.ERROR and "stacked content encodings" in obs.error, obs
    assert peak < 8_000_000


@pytest.mark.parametrize("encoding", ["gzip", "zstd", "deflate"])
async def test_a_compression_bomb_stops_at_the_decoded_cap(encoding: str) -> None:
    import zstandard

    plain = _zeros(40_000_000)
    body = {"gzip": _gzip, "zstd": lambda d: zstandard.ZstdCompressor(level=19).compress(d),
            "deflate": lambda d: zlib.compress(d, 9)}[encoding](plain)
    assert len(body) < 100_000
    with _encoded_server(body, encoding) as srv:
        ex = HttpExecutor(base_urls={"*": srv.url}, allow_private=True, timeout=5.0, retries=0)
        obs, peak = await _call_traced(ex)
    assert obs.ok and obs.meta.get("truncated") is True, obs.error
    assert obs.content.startswith("\x00" * 1000) and "kept the first 1,000,000 bytes" in obs.content
    assert peak < 12_000_000, f"peak {peak:,} bytes while decoding a {len(body):,}-byte {encoding} body"


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "zstd", "identity", ""])
async def test_small_encoded_bodies_decode_whole(encoding: str) -> None:
    import zstandard

    doc = {"answer": 42, "text": "héllo " * 100}
    raw = json.dumps(doc).encode()
    body = {"gzip": _gzip, "deflate": zlib.compress, "zstd": zstandard.ZstdCompressor().compress,
            "identity": bytes, "": bytes}[encoding](raw)
    with _encoded_server(body, encoding) as srv:
        ex = HttpExecutor(base_urls={"*": srv.url}, allow_private=True)
        obs = await ex.aexecute(make_api(), {})
        await ex.aclose()
        sent = srv.requests[0].headers.get("accept-encoding", "")
    assert obs.ok and obs.content == doc and "truncated" not in obs.meta
    assert "zstd" in sent and "gzip" in sent and "br" not in sent  # br only when it can be decoded under the cap


async def test_an_unknown_encoding_is_refused() -> None:
    with _encoded_server(b"\x1f\x9d\x90", "compress") as srv:
        ex = HttpExecutor(base_urls={"*": srv.url}, allow_private=True, retries=2, backoff=0.01)
        obs = await ex.aexecute(make_api(), {})
        await ex.aclose()
        assert srv.request_count == 1  # not retried
    assert obs.status is Status.ERROR and "content encoding 'compress'" in obs.error


async def test_virtual_server_reply_is_capped() -> None:
    body = json.dumps({"error": "", "response": "y" * 5_000_000}).encode()

    async def handler(req: Request) -> Response:
        return Response(200, body)

    with FunctionServer(handler) as srv:
        ex = VirtualServerExecutor(srv.url, toolbench_key=KEY, retries=0)
        obs, peak = await _call_traced(ex)
    assert obs.status is Status.ERROR and "1,000,000-byte response cap" in obs.error
    assert obs.meta["truncated"] is True and len(obs.content) < 1_000_100
    del peak  # the in-process server's own copies of the 5 MB body dominate it (see the gzip test below)


async def test_virtual_server_gzip_bomb_is_capped() -> None:
    body = _gzip(json.dumps({"error": "", "response": "z" * 30_000_000}).encode())

    async def handler(req: Request) -> Response:
        return Response(200, body, headers=[("Content-Encoding", "gzip")])

    with FunctionServer(handler) as srv:
        ex = VirtualServerExecutor(srv.url, toolbench_key=KEY, retries=0)
        obs, peak = await _call_traced(ex)
    assert obs.status is Status.ERROR and obs.meta["truncated"] is True
    assert peak < 12_000_000


async def test_every_executor_is_under_the_same_cap() -> None:
    from langgraph_anytool.catalog import Catalog
    from langgraph_anytool.tools.executors.local import LocalExecutor
    from langgraph_anytool.tools.pipeline import ApiExecutor

    apis = (make_api("/big"),)
    cat = Catalog([Category("Cat", tools=(Tool("tool", "Tool", "Cat", apis=apis),))])

    def big() -> dict[str, Any]:
        return {"rows": ["r" * 1000] * 3000}  # 3 MB of JSON

    pipe = ApiExecutor(cat, default=LocalExecutor({"Cat/tool/a": big}))
    obs = await pipe.acall("Cat/tool/a", {})
    await pipe.aclose()
    assert obs.ok and obs.meta.get("truncated") is True
    assert isinstance(obs.content, str) and len(obs.content.encode()) < 1_000_100
    assert obs.content.startswith('{"rows":["rrr') and "kept the first 1,000,000 bytes" in obs.content


# --------------------------------------------------------------------------- 2b: DNS rebinding
@pytest.fixture
def no_outside_connections(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every host httpcore is asked to connect to; an IP literal that is not loopback is refused before any socket."""
    seen: list[str] = []
    real = httpcore.AnyIOBackend.connect_tcp

    async def connect_tcp(self: Any, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        seen.append(host)
        ip = parse_ip_literal(host)
        if ip is not None and not ip.is_loopback:
            raise httpcore.ConnectError(f"test stub: no connection to {host}")
        return await real(self, host, port, *args, **kwargs)

    monkeypatch.setattr(httpcore.AnyIOBackend, "connect_tcp", connect_tcp)
    yield seen


def _stub_dns(monkeypatch: pytest.MonkeyPatch, name: str, answers: list[str]) -> list[str]:
    """`name` resolves to answers[0] first, then answers[1], ... (the last one repeats); other names as usual."""
    loop = asyncio.get_running_loop()
    real = loop.getaddrinfo
    given: list[str] = []

    async def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if (host.decode() if isinstance(host, bytes) else host) != name:  # anyio passes the name as IDNA bytes
            return await real(host, port, *args, **kwargs)
        address = answers[min(len(given), len(answers) - 1)]
        given.append(address)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port or 0))]

    monkeypatch.setattr(loop, "getaddrinfo", getaddrinfo)
    return given


async def test_a_rebound_name_never_reaches_loopback(monkeypatch: pytest.MonkeyPatch,
                                                    no_outside_connections: list[str]) -> None:
    given = _stub_dns(monkeypatch, "rebind.test", ["8.8.8.8", "127.0.0.1"])
    with FunctionServer(lambda req: _json({"internal": "data"})) as srv:
        ex = HttpExecutor(base_urls={"*": f"http://rebind.test:{srv.port}"}, secrets={"X-RapidAPI-Key": KEY},
                          retries=1, backoff=0.01, timeout=3.0)
        obs = await ex.aexecute(make_api(), {})
        await ex.aclose()
        assert srv.request_count == 0, "the request reached the loopback server"
    assert not obs.ok and "internal" not in json.dumps(obs.to_dict())
    assert given == ["8.8.8.8"]  # resolved once: the guard's answer is the address connected to
    assert no_outside_connections and set(no_outside_connections) == {"8.8.8.8"}


async def _json(obj: Any) -> Response:
    return Response.json(obj)


async def test_the_pinned_connection_keeps_the_name_in_the_host_header(monkeypatch: pytest.MonkeyPatch,
                                                                       no_outside_connections: list[str]) -> None:
    given = _stub_dns(monkeypatch, "api.test", ["127.0.0.1"])
    with FunctionServer(lambda req: _json({"host": req.headers.get("host")})) as srv:
        ex = HttpExecutor(base_urls={"*": f"http://api.test:{srv.port}"}, allow_loopback=True)
        obs = await ex.aexecute(make_api(), {})
        again = await ex.aexecute(make_api(), {})
        await ex.aclose()
    assert obs.ok and obs.content == {"host": f"api.test:{srv.port}"} and again.ok
    assert no_outside_connections == ["127.0.0.1"]  # connected to the approved address, not to the name
    assert given == ["127.0.0.1", "127.0.0.1"]  # one lookup per call (the second call reuses the connection)


async def test_loopback_allowance_keeps_private_addresses_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANYTOOL_TEST_ALLOW_LOOPBACK", "1")
    ex = HttpExecutor(base_urls={"*": "http://169.254.169.254"})
    obs = await ex.aexecute(make_api("/latest/meta-data/"), {})
    await ex.aclose()
    assert ex.allow_loopback and obs.meta.get("refused") is True and "link-local" in obs.error
    assert not HttpExecutor(environ={}).allow_loopback


# --------------------------------------------------------------------------- 2c: the CLI over an OpenAPI catalog
def test_cli_runs_an_openapi_catalog_over_http(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from langgraph_anytool.cli.app import main

    async def handler(req: Request) -> Response:
        return Response.json({"count": 4217, "path": req.path})

    monkeypatch.setenv("ANYTOOL_TEST_ALLOW_LOOPBACK", "1")
    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")
    monkeypatch.setenv("ANYTOOL_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.delenv("ANYTOOL_MODEL", raising=False)
    with FunctionServer(handler) as srv:
        spec = tmp_path / "spec.json"
        spec.write_text(json.dumps({
            "openapi": "3.0.0", "servers": [{"url": srv.url}],
            "info": {"title": "Warehouse Inventory", "version": "1", "description": "Inventory of the warehouse"},
            "paths": {"/internal": {"get": {"operationId": "getInventoryCount",
                                            "summary": "Get the inventory count of the warehouse",
                                            "responses": {"200": {"description": "ok"}}}}}}))
        main(["run", "What is the inventory count of the warehouse?", "--offline", "--catalog", str(spec),
              "--execution", "http", "--json", "--no-cache"])
        paths = [r.path for r in srv.requests]
    result = json.loads(capsys.readouterr().out)
    assert paths and set(paths) == {"/internal"}
    assert result["status"] != "gave_up" and "unsupported URL scheme" not in json.dumps(result)
    assert "4217" in result["answer"]


# --------------------------------------------------------------------------- 7: secrets in every log record
_LOG_SCRIPT = """
import asyncio, logging, sys
logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format="%(name)s %(levelname)s %(message)s")
from langgraph_anytool.catalog.models import Api
from langgraph_anytool.tools.executors.http import HttpExecutor
from tests.servers import FunctionServer, Response

KEY, AUTH, SESSION = sys.argv[1:4]

async def echo(req):
    got = " ".join(req.headers.get(h, "") for h in ("x-rapidapi-key", "x-auth", "x-custom-session"))
    return Response(401, b"{}", headers=[("X-Echo", got)], reason="bad " + got)

async def main():
    with FunctionServer(echo) as srv:
        ex = HttpExecutor(base_urls={"*": srv.url}, secrets={"X-RapidAPI-Key": KEY},
                          headers={"X-Auth": AUTH, "X-Custom-Session": SESSION}, allow_private=True, retries=0)
        late = logging.StreamHandler(sys.stdout)  # a handler added after the executor exists
        late.setFormatter(logging.Formatter("late %(name)s %(message)s"))
        logging.getLogger().addHandler(late)
        obs = await ex.aexecute(Api(id="C/t/a", name="a", tool_key="t", tool_name="T", category="C", path="/e"), {})
        logging.getLogger("some.other.library").warning("server said %s", obs.meta)
        logging.getLogger("some.other.library").debug("echo of %s and %s", KEY, SESSION)
        try:
            raise RuntimeError("failed with " + AUTH)
        except RuntimeError:
            logging.getLogger("app").exception("call failed")
        await ex.aclose()
        print("status", obs.status.value)

asyncio.run(main())
"""


def test_no_logger_shows_a_secret_under_basic_config_debug(tmp_path: Path) -> None:
    script = tmp_path / "logs.py"
    script.write_text(_LOG_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), KEY, AUTH, SESSION], capture_output=True, text=True,
                          timeout=60, env=_env(), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = proc.stdout + proc.stderr
    assert "status unauthorized" in proc.stdout
    assert "httpx INFO" in proc.stderr and "httpcore.http11 DEBUG" in proc.stderr  # the libraries did log
    assert "late httpx" in proc.stdout and "late app call failed" in proc.stdout
    for secret in (KEY, AUTH, SESSION):
        assert secret not in text, f"{secret[:6]}... leaked:\n" + "\n".join(
            line for line in text.splitlines() if secret in line)
    assert "bad *** *** ***" in text and "failed with ***" in text


_MODEL_KEY_SCRIPT = """
import logging, sys
logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format="%(name)s %(message)s")
from langchain_openai import ChatOpenAI
from langgraph_anytool.models.llm import init_model

KEY, OTHER = sys.argv[1:3]
init_model("openai:gpt-4o-mini")  # the key from OPENAI_API_KEY
init_model(ChatOpenAI(model="gpt-4o-mini", api_key=OTHER, base_url="http://127.0.0.1:9/v1"))  # an instance
logging.getLogger("httpx").info("HTTP Request: 401 Unauthorized (%s)", KEY)
logging.getLogger("httpcore.http11").debug("receive_response_headers: echo %s", OTHER)
print("done")
"""


def test_a_chat_models_key_is_masked_in_every_log_record(tmp_path: Path) -> None:
    # an OpenAI-compatible endpoint that echoes the key puts it into httpx's reason-phrase / header log lines
    other = "gsk_" + "9" * 40
    script = tmp_path / "model_keys.py"
    script.write_text(_MODEL_KEY_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), KEY, other], capture_output=True, text=True, timeout=60,
                          env={**_env(), "OPENAI_API_KEY": KEY}, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "done" in proc.stdout and "401 Unauthorized (***)" in proc.stdout and "echo ***" in proc.stdout
    assert KEY not in proc.stdout + proc.stderr and other not in proc.stdout + proc.stderr


# --------------------------------------------------------------------------- 8: auth headers on cross-origin redirects
async def test_configured_auth_headers_stay_behind_on_a_cross_origin_redirect() -> None:
    with FunctionServer(lambda req: _json({"path": req.path})) as other:
        async def first(req: Request) -> Response:
            return Response(302, headers=[("Location", f"http://127.0.0.1:{other.port}/new")])

        with FunctionServer(first) as srv:
            ex = HttpExecutor(base_urls={"*": srv.url}, secrets={"X-RapidAPI-Key": KEY}, allow_private=True,
                              headers={"X-Auth": AUTH, "X-Custom-Session": SESSION, "Accept": "application/json"})
            obs = await ex.aexecute(make_api("/old"), {})
            await ex.aclose()
            sent = srv.requests[0].headers
        moved = other.requests[0].headers
    assert obs.ok and obs.content == {"path": "/new"}
    assert sent.get("x-auth") == AUTH and sent.get("x-custom-session") == SESSION
    assert "x-auth" not in moved and "x-custom-session" not in moved and "x-rapidapi-key" not in moved
    assert moved.get("accept") == "application/json"


def _self_signed(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for `name` (also its own CA) and its key, as PEM files."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


async def test_tls_to_a_pinned_address_uses_the_name_for_sni_and_the_certificate(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_outside_connections: list[str]) -> None:
    import ssl
    import threading

    import httpx

    cert, key = _self_signed(tmp_path, "api.test")
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    seen: dict[str, Any] = {}

    def record_sni(sock: Any, server_name: str | None, ctx: Any) -> None:
        seen["sni"] = server_name

    server_ctx.sni_callback = record_sni
    ready, stop = threading.Event(), threading.Event()

    async def serve() -> None:
        async def on_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            seen["host"] = next(ln.split(":", 1)[1].strip() for ln in head.split("\r\n") if ln.lower().startswith("host:"))
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"tls\": 1}\n")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(on_client, "127.0.0.1", 0, ssl=server_ctx)
        seen["port"] = server.sockets[0].getsockname()[1]
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        server.close()

    thread = threading.Thread(target=lambda: asyncio.run(serve()), daemon=True)
    thread.start()
    assert ready.wait(10)
    client_ctx = ssl.create_default_context(cafile=str(cert))  # trusts only the test certificate
    monkeypatch.setattr(httpx, "create_ssl_context", lambda *a, **k: client_ctx)
    given = _stub_dns(monkeypatch, "api.test", ["127.0.0.1"])
    try:
        ex = HttpExecutor(base_urls={"*": f"https://api.test:{seen['port']}"}, allow_loopback=True, retries=0)
        obs = await ex.aexecute(make_api(), {})
        await ex.aclose()
    finally:
        stop.set()
        thread.join(5)
    assert obs.ok and obs.content == {"tls": 1}, obs.error  # the certificate was checked against the name
    assert seen["sni"] == "api.test" and seen["host"] == f"api.test:{seen['port']}"
    assert no_outside_connections == ["127.0.0.1"] and given == ["127.0.0.1"]
