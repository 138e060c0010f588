"""The time from `anytool run`'s start to its first model request (issue 38 §4), on the builtin catalog.

    python benchmarks/first_request.py [--runs 5] [--query TEXT] [-- EXTRA anytool run OPTIONS...]

A loopback OpenAI-compatible stand-in (in this process) takes the first chat request of each `anytool run` child
and notes when it came and how much CPU time (user + sys, from /proc/PID/stat) the child had spent by then; it
answers that request with HTTP 401, so the run ends at once (`error: auth`) and the next one starts. The discovery
requests a local client makes first (`/props`, `/v1/models`, ...) are answered 404, as a plain OpenAI-compatible
server does. Printed per run and as the median: wall seconds and CPU seconds from the command's start to the
first request. Goal: under 2 s of CPU. The machine may be shared: the CPU figure is the one a loaded machine
stretches least.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float | None:
    """User + sys CPU seconds of process `pid` so far (None when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14 and 15 of stat)


class StandIn(ThreadingHTTPServer):
    """Records the first chat request's arrival (monotonic seconds) and the child's CPU seconds then."""

    pid = 0
    first: tuple[float, float | None] | None = None
    paths: list[str]


class Handler(BaseHTTPRequestHandler):
    server: StandIn

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # discovery: a plain OpenAI-compatible server knows none of it
        self.server.paths.append(f"GET {self.path}")
        self._reply(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.server.paths.append(f"POST {self.path}")
        if self.path.endswith("/chat/completions") and self.server.first is None:
            self.server.first = (time.monotonic(), cpu_seconds(self.server.pid))
        if self.path.endswith("/chat/completions"):
            self._reply(401, {"error": {"message": "benchmark: stop here", "type": "invalid_request_error",
                                        "code": "invalid_api_key"}})
        else:
            self._reply(404, {"error": {"message": "not found"}})

    def log_message(self, *args: Any) -> None:
        pass


def one_run(query: str, extra: list[str], home: Path) -> tuple[float, float, list[str]]:
    server = StandIn(("127.0.0.1", 0), Handler)
    server.paths = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    env = {**os.environ, "OPENAI_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1",
           "OPENAI_API_KEY": "sk-benchmark", "ANYTOOL_CACHE": "off", "ANYTOOL_MODEL": ""}
    try:
        start = time.monotonic()
        child = subprocess.Popen([str(BIN / "anytool"), "run", query, "--model", "openai:bench-model", "--quiet",
                                  *extra], env=env, cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        server.pid = child.pid
        _, err = child.communicate(timeout=600)
        if server.first is None:
            raise SystemExit(f"no chat request reached the stand-in (exit {child.returncode}):\n"
                             f"{err.decode(errors='replace')[-2000:]}")
        at, cpu = server.first
        return at - start, cpu if cpu is not None else float("nan"), server.paths
    finally:
        server.shutdown()
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--query", default="Convert 26.2 miles to kilometers.")
    parser.add_argument("extra", nargs="*", help="more `anytool run` options (after --)")
    args = parser.parse_args(argv)
    print(f"$ python benchmarks/first_request.py --runs {args.runs}" + (" -- " + " ".join(args.extra) if args.extra
                                                                         else ""))
    print(f"anytool run {args.query!r} --model openai:bench-model --quiet {' '.join(args.extra)} (builtin catalog)")
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as home:
        for i in range(args.runs):
            wall, cpu, paths = one_run(args.query, args.extra, Path(home))
            walls.append(wall)
            cpus.append(cpu)
            print(f"  run {i + 1}: first model request after {wall:.2f} s wall, {cpu:.2f} s CPU"
                  + (f"  (requests before it: {', '.join(paths[:-1])})" if i == 0 and len(paths) > 1 else ""))
    print(f"median: {statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} s CPU "
          f"(goal: under 2 s of CPU); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
