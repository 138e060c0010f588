"""Deadline attack classes of the bomb-and-fault benchmark (issue 34 §1), for `benchmarks/hardening.py`: a loopback
model server (`tests/hostile_model_servers.py`) that keeps every read alive with bytes that are no reply.

- "stretched model calls": one model call (`call_role`) per hostile mode, keep-alive form and pace; held when it
  ends by its limit plus 2.5 s with the documented kind: `time_limit` when the run's deadline binds, `timeout`
  when `stall_timeout` (time without a token) does;
- "stretched discovery": each discovery and counting endpoint dripping one byte at a time, and an endless `/props`
  body; held when the probe or count ends within its time (plus 2.5 s), says nothing, and reads no more than its
  size cap;
- "stretched runs": `anytool run ... --set max_run_seconds=6` against each hostile mode (in this process); held when
  it prints status `time_limit` within 6 + 5 s of the server's first request.

Run one class alone: `python benchmarks/hardening_attacks/deadlines.py [CLASS ...]`.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.hostile_model_servers import DRIP_MODES, ENDLESS, HOSTILE_MODES, STREAM_MODES, HostileModelServer  # noqa: E402

SLACK = 2.5


@contextlib.contextmanager
def _env(server: HostileModelServer) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
    os.environ.update(OPENAI_BASE_URL=server.url + "/v1", OPENAI_API_KEY="x")
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _call(server: HostileModelServer, stall: float, limit: float) -> tuple[str, float]:
    from langchain_core.messages import HumanMessage

    from langgraph_anytool.models.endpoint import Endpoints
    from langgraph_anytool.models.guard import CallGuard
    from langgraph_anytool.models.llm import ModelCallError, call_role, init_model

    with _env(server):
        model = init_model("openai:m")
        started = time.time()
        guard = CallGuard(endpoints=Endpoints(probe=False), stall_timeout=stall, deadline=lambda: started + limit)
        try:
            call_role(model, "solver", [HumanMessage("convert 3 miles to km")], guard=guard)
            kind = "answered"
        except ModelCallError as exc:
            kind = exc.kind
        return kind, time.time() - started


def stretched_model_calls() -> tuple[int, int]:
    attempts = held = 0
    for mode in (*STREAM_MODES, ENDLESS):
        for every in (0.25, 1.0):
            with HostileModelServer(mode, every=every) as server:
                kind, took = _call(server, stall=60, limit=2.0)  # the deadline binds
            attempts += 1
            held += kind == "time_limit" and took < 2.0 + SLACK
            if mode == ENDLESS:
                continue  # its tokens never let a stall happen
            with HostileModelServer(mode, every=every) as server:
                kind, took = _call(server, stall=1.5, limit=60)  # the stall binds: no token, however many bytes
            attempts += 1
            held += kind == "timeout" and took < 1.5 + SLACK
    return attempts, held


def stretched_discovery() -> tuple[int, int]:
    from langgraph_anytool.models.endpoint import MAX_REPLY_BYTES, NOTHING, Endpoint, Endpoints

    attempts = held = 0
    for mode in (*DRIP_MODES, "props_flood"):
        for drip in (0.2, 1.0):
            with HostileModelServer(mode, drip_every=drip) as server:
                endpoint = Endpoint(server.url + "/v1", "m")
                endpoints = Endpoints(timeout=1.5)
                started = time.monotonic()
                facts = endpoints.facts(endpoint)
                ok = True
                if mode in ("apply_template", "tokenize"):
                    ok = facts.tokenizer and endpoints.count(endpoint, facts, [{"role": "user", "content": "hi"}],
                                                             None) is None
                else:
                    ok = facts == NOTHING
                took = time.monotonic() - started
                sent = server.sent
            attempts += 1
            held += ok and took < 1.5 + SLACK and sent < 20 * MAX_REPLY_BYTES
    return attempts, held


def stretched_runs() -> tuple[int, int]:
    from langgraph_anytool.cli.app import main

    attempts = held = 0
    for mode in HOSTILE_MODES:
        with HostileModelServer(mode) as server, _env(server):
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                main(["run", "convert 3 miles to km", "--model", "openai:m", "--no-cache", "--set",
                      "max_run_seconds=6", "--set", "stall_timeout=60"])
            ended = time.monotonic()
            first = min((r.received_at for r in server.requests), default=ended)
        status = next((line for line in out.getvalue().splitlines() if line.startswith("status:")), "")
        attempts += 1
        held += status.startswith("status: time_limit") and ended - first < 6 + 5
    return attempts, held


ATTACKS: list[tuple[str, Callable[[], tuple[int, int]]]] = [
    ("stretched model calls", stretched_model_calls),
    ("stretched discovery", stretched_discovery),
    ("stretched runs", stretched_runs),
]


def _main(argv: list[str]) -> int:
    for name, fn in ATTACKS:
        if not argv or name in argv:
            attempts, held = fn()
            print(f"{name}: {held}/{attempts} held")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

