"""docs/integration.md's FastAPI endpoint, as written, under uvicorn on loopback, read by an HTTP client.

The page's block is saved as `app.py` and served by `python -m uvicorn app:app` on a free loopback port; the test
reads `/run?query=...` as server-sent events with httpx, as a browser's `EventSource` would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.docs.test_docs_blocks import blocks_of
from tests.servers import free_port

PAGE = Path(__file__).resolve().parents[2] / "docs" / "integration.md"

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")


def endpoint_block() -> str:
    """The page's python block that defines the FastAPI `app` (there is exactly one)."""
    found = [b.code for b in blocks_of(PAGE) if b.lang == "python" and "FastAPI()" in b.code]
    assert len(found) == 1, found
    return found[0]


def parse_sse(lines: list[str]) -> list[tuple[str, dict[str, Any]]]:
    events, kind = [], "message"
    for line in lines:
        if line.startswith("event:"):
            kind = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            events.append((kind, json.loads(line.split(":", 1)[1])))
            kind = "message"
    return events


def test_the_documented_endpoint_streams_a_run_as_server_sent_events(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(endpoint_block(), encoding="utf-8")
    port = free_port()
    env = {**os.environ, "LANGSMITH_TRACING": "false", "ANYTOOL_CACHE": "off"}
    log = (tmp_path / "uvicorn.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "app:app", "--host", "127.0.0.1", "--port", str(port)],
                            cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "uvicorn.log").read_text()[-3000:]
            try:
                httpx.get(f"{base}/docs", timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.3)
        lines: list[str] = []
        arrivals: list[float] = []
        with httpx.stream("GET", f"{base}/run", params={"query": "Convert 26.2 miles to kilometers."},
                          timeout=120) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            for line in response.iter_lines():
                lines.append(line)
                if line.startswith("data:"):
                    arrivals.append(time.monotonic())
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        log.close()
    events = parse_sse(lines)
    nodes = [d["node"] for k, d in events if k == "node"]
    assert nodes[0] == "init" and {"dispatch", "meta_agent", "solver", "judge", "finalize"} <= set(nodes), nodes
    kind, done = events[-1]
    assert kind == "done" and done["status"] == "solved" and "42.16" in done["answer"], done
    assert len(arrivals) == len(events) > 10
