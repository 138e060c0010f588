"""Network-side attack classes for `benchmarks/hardening.py` (issue 21, points 1, 2, 2b, 7, 8).

Every class returns `(attempts, held)`. Servers listen on 127.0.0.1 only; the DNS-rebinding class answers names
with a stub resolver and refuses, before any socket, every connection to an address that is not loopback.
An attempt holds when the guard refuses or contains it within its time bound (the executor's timeout plus 2 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-bench-5e4d3c2b1a09f8e7d6c5b4a3"
AUTH = "auth-bench-8c7b6a5f4e3d"
SESSION = "sess-bench-2f1e0d9c8b7a"

Chunks = Iterable[bytes]
Plan = tuple[int, str, list[tuple[str, str]], Chunks]


# --------------------------------------------------------------------------- a loopback server that streams
class StreamServer:
    """HTTP/1.1 on 127.0.0.1 whose replies are generated chunk by chunk (a 600 MB body never sits in memory)."""

    def __init__(self, plan: Callable[[str, dict[str, str]], Plan]) -> None:
        self.plan = plan
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> StreamServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        await self._stop.wait()
        server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1]
                headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
                if int(headers.get("content-length", "0") or 0):
                    await reader.readexactly(int(headers["content-length"]))
                self.requests.append((path, headers))
                status, reason, extra, chunks = self.plan(path, headers)
                out = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in extra)]
                writer.write(("\r\n".join(out) + "\r\n\r\n").encode("latin-1"))
                for chunk in chunks:
                    writer.write(chunk)
                    await writer.drain()
                await writer.drain()
        writer.close()


def body_of(data: bytes, encoding: str = "", ctype: str = "application/json") -> Plan:
    headers = [("Content-Type", ctype), ("Content-Length", str(len(data)))]
    if encoding:
        headers.append(("Content-Encoding", encoding))
    return 200, "OK", headers, [data]


def zeros_stream(total: int, chunk: int = 1 << 20) -> Iterator[bytes]:
    block = bytes(chunk)
    sent = 0
    while sent < total:
        n = min(chunk, total - sent)
        yield block if n == chunk else block[:n]
        sent += n


def compressed_zeros(total: int, kind: str) -> bytes:
    """`total` zero bytes compressed (gzip, deflate, zstd) without holding them in memory."""
    if kind == "zstd":
        import zstandard

        out = io.BytesIO()
        with zstandard.ZstdCompressor(level=3).stream_writer(out, closefd=False) as w:
            for piece in zeros_stream(total):
                w.write(piece)
        return out.getvalue()
    wbits = {"gzip": 31, "deflate": 15}[kind]
    comp = zlib.compressobj(9, zlib.DEFLATED, wbits)
    parts = [comp.compress(piece) for piece in zeros_stream(total)]
    parts.append(comp.flush())
    return b"".join(parts)


def gzip_bytes(data: bytes) -> bytes:
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    return comp.compress(data) + comp.flush()


def _api(path: str = "/x") -> Any:
    from langgraph_anytool.catalog.models import Api

    return Api(id="Cat/tool/a", name="a", tool_key="tool", tool_name="Tool", category="Cat", path=path)


# --------------------------------------------------------------------------- 1: YAML alias bombs and big specs
def yaml_bombs() -> tuple[int, int]:
    from langgraph_anytool.catalog.errors import CatalogError
    from langgraph_anytool.catalog.openapi import read_spec_file

    def nested(levels: int, width: int) -> str:
        lines = ["openapi: 3.0.0", "a0: &a0 [" + ",".join(['"lol"'] * width) + "]"]
        lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
        return "\n".join(lines) + "\n"

    def doubling(levels: int) -> str:  # two aliases per level: 2**levels values from 2*levels aliases
        lines = ["openapi: 3.0.0", "d0: &d0 [x, x]"]
        lines += [f"d{i}: &d{i} [*d{i - 1}, *d{i - 1}]" for i in range(1, levels)]
        return "\n".join(lines) + "\n"

    variants: dict[str, str] = {
        "bomb10x9.yaml": nested(10, 9),
        "bomb6x20.yaml": nested(6, 20),
        "doubling40.yaml": doubling(40),
        "aliases500.yaml": "openapi: 3.0.0\nx: &x [1]\ny: [" + ",".join(["*x"] * 500) + "]\n",
        "recursive.yaml": "openapi: 3.0.0\na: &a [*a]\n",
        "mapmerge.yaml": "openapi: 3.0.0\n" + "\n".join(
            f"m{i}: &m{i} {{<<: [{', '.join(f'*m{i - 1}' for _ in range(3))}], k{i}: v}}" if i else "m0: &m0 {k: v}"
            for i in range(25)) + "\n",
        "deep.json": "[" * 100_000 + "]" * 100_000,
        "big.json": "",  # written below: over the 10 MB limit
    }
    attempts = held = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in variants.items():
            path = Path(tmp) / name
            if name == "big.json":
                with path.open("w") as f:
                    f.write('{"openapi": "3.0.0", "pad": "')
                    for _ in range(11):
                        f.write("x" * 1_000_000)
                    f.write('"}')
            else:
                path.write_text(text)
            attempts += 1
            start = time.monotonic()
            try:
                read_spec_file(path)
                ok = name == "mapmerge.yaml"  # merge keys repeat keys, which collapse: it may load, quickly
            except CatalogError as exc:
                ok = str(path) in str(exc)
            except (RecursionError, MemoryError):
                ok = False
            held += ok and time.monotonic() - start < 10
        # the CLI: one line naming the file, exit ≠ 0, quickly
        path = Path(tmp) / "bomb10x9.yaml"
        attempts += 1
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "langgraph_anytool.cli", "catalog", "--catalog", str(path)],
                              capture_output=True, text=True, timeout=120, cwd=ROOT)
        lines = proc.stderr.strip().splitlines()
        held += proc.returncode != 0 and len(lines) == 1 and str(path) in lines[0] and time.monotonic() - start < 30
    return attempts, held


# --------------------------------------------------------------------------- 2: compression bombs and the cap
def compression_bombs() -> tuple[int, int]:
    from langgraph_anytool.tools.executors.http import HttpExecutor
    from langgraph_anytool.tools.observation import Status

    cap = 1_000_000
    gzip2g = compressed_zeros(2_000_000_000, "gzip")
    cases: list[tuple[str, bytes, str, Callable[[Any], bool]]] = [
        ("gzip 2 GB", gzip2g, "gzip", lambda o: o.ok and o.meta.get("truncated") is True),
        ("gzip, gzip 2 GB", gzip_bytes(gzip2g), "gzip, gzip", lambda o: o.status is Status.ERROR),
        ("gzip,gzip (no space)", gzip_bytes(gzip2g), "gzip,gzip", lambda o: o.status is Status.ERROR),
        ("zstd 2 GB", compressed_zeros(2_000_000_000, "zstd"), "zstd", lambda o: o.meta.get("truncated") is True),
        ("deflate 1 GB", compressed_zeros(1_000_000_000, "deflate"), "deflate",
         lambda o: o.meta.get("truncated") is True),
        ("zstd, gzip", gzip_bytes(compressed_zeros(200_000_000, "zstd")), "zstd, gzip",
         lambda o: o.status is Status.ERROR),
        ("br (undecodable here)", b"\x1b\xff\xff\x0f", "br", lambda o: o.status is Status.ERROR or len(o.content) <= cap),
        ("compress", b"\x1f\x9d\x90", "compress", lambda o: o.status is Status.ERROR),
        ("identity, gzip", gzip2g, "identity, gzip", lambda o: o.meta.get("truncated") is True),
        ("corrupt gzip", b"\x1f\x8b\x08\x00" + b"\xff" * 64, "gzip", lambda o: o.status is not Status.OK),
    ]
    attempts = held = 0
    timeout = 5.0
    for _label, body, encoding, verdict in cases:
        with StreamServer(lambda p, h, b=body, e=encoding: body_of(b, e, "text/plain")) as srv:
            ex = HttpExecutor(base_urls={"*": srv.url}, allow_private=True, timeout=timeout, retries=0)

            async def call(ex: HttpExecutor = ex) -> Any:
                try:
                    return await ex.aexecute(_api(), {})
                finally:
                    await ex.aclose()

            start = time.monotonic()
            obs = asyncio.run(call())
            elapsed = time.monotonic() - start
        attempts += 1
        size = len(obs.content) if isinstance(obs.content, str) else len(json.dumps(obs.content))
        held += bool(verdict(obs)) and size <= cap + 200 and elapsed < timeout + 2
    return attempts, held


def unbounded_bodies() -> tuple[int, int]:
    """600 MB bodies through the HTTP and virtual executors, and a 50 MB local result through the pipeline."""
    from langgraph_anytool.catalog import Catalog
    from langgraph_anytool.catalog.models import Category, Tool
    from langgraph_anytool.tools.executors.http import HttpExecutor
    from langgraph_anytool.tools.executors.local import LocalExecutor
    from langgraph_anytool.tools.executors.virtual import VirtualServerExecutor
    from langgraph_anytool.tools.pipeline import ApiExecutor

    cap, big = 1_000_000, 600_000_000

    def plan(path: str, headers: dict[str, str]) -> Plan:
        head = b'{"error": "", "response": "'
        return 200, "OK", [("Content-Type", "application/json"), ("Content-Length", str(big))], \
            [head, *zeros_stream(big - len(head))]

    attempts = held = 0
    with StreamServer(plan) as srv:
        for ex in (HttpExecutor(base_urls={"*": srv.url}, allow_private=True, timeout=20, retries=0),
                   VirtualServerExecutor(srv.url, toolbench_key=KEY, retries=0, timeout=20)):
            async def call(ex: Any = ex) -> Any:
                try:
                    return await ex.aexecute(_api(), {})
                finally:
                    await ex.aclose()

            start = time.monotonic()
            obs = asyncio.run(call())
            attempts += 1
            held += isinstance(obs.content, str) and len(obs.content) <= cap + 200 and time.monotonic() - start < 22
    apis = (_api(),)
    cat = Catalog([Category("Cat", tools=(Tool("tool", "Tool", "Cat", apis=apis),))])
    for result in ("x" * 50_000_000, {"rows": ["r" * 10_000] * 5_000}):
        pipe = ApiExecutor(cat, default=LocalExecutor({"Cat/tool/a": lambda r=result: r}))
        obs = pipe.call("Cat/tool/a", {})
        pipe.close()
        attempts += 1
        held += isinstance(obs.content, str) and len(obs.content.encode()) <= cap + 200
    return attempts, held


# --------------------------------------------------------------------------- 2b: DNS rebinding
def dns_rebinding() -> tuple[int, int]:
    import httpcore

    from langgraph_anytool.tools.executors.http import HttpExecutor
    from langgraph_anytool.tools.netguard import parse_ip_literal

    real_connect = httpcore.AnyIOBackend.connect_tcp

    async def only_loopback(self: Any, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        ip = parse_ip_literal(host)
        mapped = getattr(ip, "ipv4_mapped", None)
        if ip is not None and not (ip.is_loopback or (mapped is not None and mapped.is_loopback)):
            raise httpcore.ConnectError(f"benchmark: no connection to {host}")  # never leave the machine
        return await real_connect(self, host, port, *args, **kwargs)

    httpcore.AnyIOBackend.connect_tcp = only_loopback  # type: ignore[method-assign]
    sequences = [
        ["8.8.8.8", "127.0.0.1"],  # public at the check, loopback at the connection
        ["1.1.1.1", "1.1.1.1", "127.0.0.1"],  # rebinds on the third lookup
        ["8.8.8.8", "::ffff:127.0.0.1"],  # IPv4-mapped loopback
        ["93.184.216.34", "127.0.0.1", "93.184.216.34", "127.0.0.1"],  # alternating
        ["2606:4700:4700::1111", "127.0.0.1"],  # public IPv6 first
        ["8.8.8.8,127.0.0.1"],  # both at once (the guard sees the loopback one)
    ]
    attempts = held = 0
    for answers in sequences:
        with StreamServer(lambda p, h: body_of(b'{"internal": "secret data"}')) as srv:
            async def call(answers: list[str] = answers, srv: StreamServer = srv) -> Any:
                loop = asyncio.get_running_loop()
                real = loop.getaddrinfo
                count = [0]

                async def getaddrinfo(host: Any, port: Any, *a: Any, **kw: Any) -> Any:
                    if (host.decode() if isinstance(host, bytes) else host) != "rebind.bench":  # anyio: IDNA bytes
                        return await real(host, port, *a, **kw)
                    given = answers[min(count[0], len(answers) - 1)].split(",")
                    count[0] += 1
                    return [(socket.AF_INET6 if ":" in g else socket.AF_INET, socket.SOCK_STREAM, 6, "",
                             (g, port or 0)) for g in given]

                loop.getaddrinfo = getaddrinfo  # type: ignore[method-assign]
                ex = HttpExecutor(base_urls={"*": f"http://rebind.bench:{srv.port}"},
                                  secrets={"X-RapidAPI-Key": KEY}, retries=2, backoff=0.01, timeout=3)
                try:
                    return [await ex.aexecute(_api(), {}) for _ in range(3)]
                finally:
                    await ex.aclose()

            observations = asyncio.run(call())
            attempts += 1
            leaked = any(KEY in json.dumps(h) for _, h in srv.requests)
            held += not srv.requests and not leaked and not any(o.ok for o in observations)
    httpcore.AnyIOBackend.connect_tcp = real_connect  # type: ignore[method-assign]
    return attempts, held


# --------------------------------------------------------------------------- 7: secrets in log records
def secrets_in_logs() -> tuple[int, int]:
    from langgraph_anytool.tools.executors.http import HttpExecutor
    from langgraph_anytool.tools.executors.virtual import VirtualServerExecutor

    early = io.StringIO()
    logging.basicConfig(level=logging.DEBUG, stream=early, force=True)
    late = io.StringIO()
    secrets = (KEY, AUTH, SESSION)

    def echo(where: str) -> Callable[[str, dict[str, str]], Plan]:
        def plan(path: str, headers: dict[str, str]) -> Plan:
            got = " ".join(headers.get(h, "") for h in ("x-rapidapi-key", "x-auth", "x-custom-session")).strip()
            got = got or json.dumps(headers)
            body = json.dumps({"message": f"bad {got}"}).encode()
            extra = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
            if where == "reason":
                return 401, f"bad {got}", extra, [body]
            if where == "header":
                return 401, "Unauthorized", [*extra, ("X-Echo", got)], [body]
            if where == "location":
                return 302, "Found", [("Location", f"/next?k={got.replace(' ', '+')}"), ("Content-Length", "0")], []
            return 500, "Error", extra, [body]
        return plan

    attempts = held = 0
    for where in ("reason", "header", "location", "body"):
        with StreamServer(echo(where)) as srv:
            ex = HttpExecutor(base_urls={"*": srv.url}, secrets={"X-RapidAPI-Key": KEY}, allow_private=True,
                              headers={"X-Auth": AUTH, "X-Custom-Session": SESSION}, retries=0, max_redirects=1)
            handler = logging.StreamHandler(late)  # added after the executor exists
            logging.getLogger().addHandler(handler)

            async def call(ex: HttpExecutor = ex) -> Any:
                try:
                    return await ex.aexecute(_api(), {})
                finally:
                    await ex.aclose()

            obs = asyncio.run(call())
            logging.getLogger(f"bench.other.{where}").warning("observation: %s", obs.to_dict())
            logging.getLogger("bench.app").debug("sent %s / %s / %s", KEY, AUTH, SESSION)
            try:
                raise RuntimeError(f"failure quoting {KEY}")
            except RuntimeError:
                logging.getLogger("bench.app").exception("call failed")
            logging.getLogger().removeHandler(handler)
        attempts += 1
        text = early.getvalue() + late.getvalue() + json.dumps(obs.to_dict())
        held += not any(s in text for s in secrets) and "***" in text
    with StreamServer(lambda p, h: (400, f"bad {h.get('x-toolbench-key', '')}", [("Content-Length", "2")], [b"{}"])) \
            as srv:
        vex = VirtualServerExecutor(srv.url, toolbench_key=KEY, retries=0)

        async def vcall() -> Any:
            try:
                return await vex.aexecute(_api(), {})
            finally:
                await vex.aclose()

        asyncio.run(vcall())
        logging.getLogger("bench.virtual").info("key was %s", KEY)
    attempts += 1
    held += KEY not in early.getvalue() + late.getvalue()
    return attempts, held


# --------------------------------------------------------------------------- 8: credential headers and redirects
def cross_origin_headers() -> tuple[int, int]:
    from langgraph_anytool.tools.executors.http import HttpExecutor

    attempts = held = 0
    configured = {"X-Auth": AUTH, "X-Custom-Session": SESSION, "Authorization": "Bearer " + AUTH,
                  "Cookie": "sid=" + SESSION, "Accept": "application/json"}
    auth_names = {"x-auth", "x-custom-session", "authorization", "cookie", "x-rapidapi-key", "x-env-key"}
    with StreamServer(lambda p, h: body_of(b'{"landed": true}')) as other:
        for code in (301, 302, 303, 307, 308):
            for target in (f"http://127.0.0.1:{other.port}/new", f"http://localhost:{other.port}/new"):
                first_srv = StreamServer(lambda p, h, c=code, t=target: (c, "Moved", [("Location", t),
                                                                                       ("Content-Length", "0")], []))
                with first_srv as srv:
                    ex = HttpExecutor(base_urls={"*": srv.url}, secrets={"X-RapidAPI-Key": KEY}, headers=configured,
                                      headers_from_env={"X-Env-Key": "BENCH_KEY"}, environ={"BENCH_KEY": KEY},
                                      allow_private=True, retries=0)

                    async def call(ex: HttpExecutor = ex) -> Any:
                        try:
                            return await ex.aexecute(_api("/old"), {})
                        finally:
                            await ex.aclose()

                    before = len(other.requests)
                    asyncio.run(call())
                    moved = other.requests[before:]
                attempts += 1
                held += bool(moved) and not any(auth_names & set(h) for _, h in moved)
    return attempts, held


ATTACKS: list[tuple[str, Callable[[], tuple[int, int]]]] = [
    ("yaml alias bomb / big spec", yaml_bombs),
    ("compression bomb", compression_bombs),
    ("unbounded body, every executor", unbounded_bodies),
    ("dns rebinding", dns_rebinding),
    ("secret in log records", secrets_in_logs),
    ("credential header cross-origin", cross_origin_headers),
]
