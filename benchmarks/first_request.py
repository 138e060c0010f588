"""The time from `anytool run`'s start to its first model request (issue 38 §4), on the builtin catalog.

    python benchmarks/first_request.py [--runs 5] [--floor] [--no-bytecode] [--query TEXT] [-- EXTRA OPTIONS...]

A loopback OpenAI-compatible stand-in (in this process) takes the first chat request of each `anytool run` child
and notes when it came and how much CPU time (user + sys, from /proc/PID/stat) the child had spent by then; it
answers that request with HTTP 401, so the run ends at once (`error: auth`) and the next one starts. The discovery
requests a local client makes first (`/props`, `/v1/models`, ...) are answered 404, as a plain OpenAI-compatible
server does. Printed per run and as the median: wall seconds and CPU seconds from the command's start to the
first request. Goal: under 2 s of CPU. The machine may be shared: the CPU figure is the one a loaded machine
stretches least.

Bytecode: an installed package has its modules compiled (pip writes the .pyc files), and Python caches them
otherwise, unless PYTHONDONTWRITEBYTECODE is set (as in some sandboxes and containers), when every run compiles
the ~160 modules of this package it imports (0.4-0.9 s of CPU). The children therefore run with a bytecode cache
of their own (PYTHONPYCACHEPREFIX in a temporary folder, filled by one uncounted warm-up run, which also leaves
what a first run leaves in the user's cache); `--no-bytecode` measures with the environment as it is.

`--floor`: also runs, interleaved with the runs above, the least any LangGraph run with a ChatOpenAI model pays
before its first request: a graph of one node that makes one request (`FLOOR` below), against the same stand-in.
What `anytool run` spends above it is this project's.
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


# one LangGraph node making one ChatOpenAI request: the imports and set-up every LangGraph + langchain-openai run pays
FLOOR = """
from typing import TypedDict
from langchain_openai import ChatOpenAI
from langgraph.graph import StateGraph

class State(TypedDict):
    query: str

def ask(state: State) -> dict:
    try:
        ChatOpenAI(model="bench-model", max_retries=0).invoke(state["query"])
    except Exception:  # the stand-in answers 401
        pass
    return {}

graph = StateGraph(State)
graph.add_node("ask", ask)
graph.set_entry_point("ask")
graph.set_finish_point("ask")
graph.compile().invoke({"query": "hello"})
"""


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


def one_run(command: list[str], env: dict[str, str], home: Path) -> tuple[float, float, list[str]]:
    server = StandIn(("127.0.0.1", 0), Handler)
    server.paths = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    env = {**env, "OPENAI_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1",
           "OPENAI_API_KEY": "sk-benchmark", "ANYTOOL_CACHE": "off", "ANYTOOL_MODEL": ""}
    try:
        start = time.monotonic()
        child = subprocess.Popen(command, env=env, cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
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


def child_env(home: Path, bytecode: bool) -> dict[str, str]:
    """The children's environment: with a bytecode cache of their own (`bytecode`), else as it is."""
    if not bytecode:
        return dict(os.environ)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": str(home / "pycache")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--query", default="Convert 26.2 miles to kilometers.")
    parser.add_argument("--floor", action="store_true", help="also measure a one-node LangGraph + ChatOpenAI run")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="no bytecode cache of the children's own (the environment's PYTHONDONTWRITEBYTECODE holds)")
    parser.add_argument("extra", nargs="*", help="more `anytool run` options (after --)")
    args = parser.parse_args(argv)
    flags = " --floor" * args.floor + " --no-bytecode" * args.no_bytecode
    print(f"$ python benchmarks/first_request.py --runs {args.runs}{flags}"
          + (" -- " + " ".join(args.extra) if args.extra else ""))
    print(f"anytool run {args.query!r} --model openai:bench-model --quiet {' '.join(args.extra)} (builtin catalog)")
    commands = {"anytool run": [str(BIN / "anytool"), "run", args.query, "--model", "openai:bench-model", "--quiet",
                                *args.extra]}
    if args.floor:
        commands["floor"] = [sys.executable, "-c", FLOOR]
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        env = child_env(home, not args.no_bytecode)
        if not args.no_bytecode:  # fills the bytecode cache (and what a first run leaves in the user's cache)
            for command in commands.values():
                one_run(command, env, home)
        for i in range(args.runs):
            for name, command in commands.items():
                wall, cpu, paths = one_run(command, env, home)
                results[name].append((wall, cpu))
                print(f"  {name} {i + 1}: first model request after {wall:.2f} s wall, {cpu:.2f} s CPU"
                      + (f"  (requests before it: {', '.join(paths[:-1])})" if i == 0 and len(paths) > 1 else ""))
    for name, runs in results.items():
        print(f"{name} median: {statistics.median(w for w, _ in runs):.2f} s wall, "
              f"{statistics.median(c for _, c in runs):.2f} s CPU")
    print(f"goal: under 2 s of CPU; bytecode {'as the environment has it' if args.no_bytecode else 'cached'}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
