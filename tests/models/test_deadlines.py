"""Issue 34 §1: deadlines no server can stretch. A loopback server (tests/hostile_model_servers.py) keeps each kind
of read alive with bytes that are no reply: SSE comments, blank lines, token-less `data:` chunks, a reply whose
tokens never end, each discovery and counting endpoint dripping one byte every 2 s, an endless `/props` body.
Every read must keep to the run's deadline (and, for a stream, `stall_timeout` counts time without a token, not
without a byte); discovery replies are read within their own time and size caps.

Each call runs in a worker thread joined with a timeout, so that a read the server stretches fails the test
instead of hanging it.
"""

from __future__ import annotations

import contextvars
import os
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from langgraph_anytool.config import MAX_SECONDS, SECONDS_FIELDS, AnyToolConfig, ConfigError
from langgraph_anytool.models.deadline import bounded
from langgraph_anytool.models.endpoint import MAX_REPLY_BYTES, NOTHING, Endpoint, Endpoints, ollama_window
from langgraph_anytool.models.guard import CallGuard
from langgraph_anytool.models.llm import ModelCallError, call_role, init_model
from tests.cli_support import cli_error
from tests.hostile_model_servers import (
    DRIP_MODES,
    ENDLESS,
    HOSTILE_MODES,
    STREAM_MODES,
    USAGE,
    USAGE_MODES,
    HostileModelServer,
)

ROOT = Path(__file__).resolve().parents[2]
SLACK = 2.5  # seconds a cut may come after its limit on a busy machine


def within(seconds: float, work: Callable[[], Any]) -> tuple[Any, float]:
    """`work()`'s result (or exception) and its wall time; fails when it is still running after `seconds`."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = work()
        except BaseException as exc:  # handed back to the test
            out["value"] = exc

    started = time.monotonic()
    context = contextvars.copy_context()  # the caller's read limits hold in the worker
    worker = threading.Thread(target=context.run, args=(run,), daemon=True)
    worker.start()
    worker.join(seconds)
    took = time.monotonic() - started
    assert not worker.is_alive(), f"still running after {seconds} s: the server stretched the read"
    return out["value"], took


def endpoint(server: HostileModelServer) -> Endpoint:
    return Endpoint(server.url + "/v1", "m")


# ------------------------------------------------------------------------------------ discovery and counting
@pytest.mark.parametrize("mode", ["props", "v1_models", "api_show"])
def test_a_dripping_discovery_reply_is_cut_at_the_probes_time(mode: str) -> None:
    """Each discovery endpoint, answering one byte every 2 s: the probe gives up after its time in all (not per
    read) and the server is taken as saying nothing."""
    with HostileModelServer(mode, drip_every=0.3) as server:
        facts, took = within(20, lambda: Endpoints(timeout=1.5).facts(endpoint(server)))
        asked = [r.path for r in server.requests]
    assert facts == NOTHING
    assert DRIP_MODES[mode][1] in asked
    assert took < 1.5 + SLACK, took


@pytest.mark.parametrize("mode", ["apply_template", "tokenize"])
def test_a_dripping_count_is_cut_and_the_server_is_not_asked_to_count_again(mode: str) -> None:
    with HostileModelServer(mode, drip_every=0.3) as server:
        endpoints = Endpoints(timeout=1.5)
        facts = endpoints.facts(endpoint(server))
        assert facts.tokenizer, facts
        tokens, took = within(20, lambda: endpoints.count(endpoint(server), facts, [{"role": "user", "content": "hi"}],
                                                          None))
        assert tokens is None and took < 1.5 + SLACK, (tokens, took)
        asked = server.request_count
        again = endpoints.count(endpoint(server), endpoints.facts(endpoint(server)),
                                [{"role": "user", "content": "ho"}], None)
        assert again is None and server.request_count == asked  # estimates from now on


@pytest.mark.parametrize("mode", sorted(DRIP_MODES))
def test_every_discovery_and_count_keeps_to_the_runs_deadline(mode: str) -> None:
    """A probe or count running when the run's deadline comes is cut at it, even with its own time left."""
    with HostileModelServer(mode, drip_every=0.3) as server:
        endpoints = Endpoints(timeout=30)

        def work() -> Any:
            facts = endpoints.facts(endpoint(server))
            with bounded(time.time() + 1.0):
                endpoints.facts(Endpoint(server.url + "/v1", "other"))  # a second model: probed again
                return endpoints.count(endpoint(server), facts, [{"role": "user", "content": "hi"}], None)

        with bounded(time.time() + 2.0):  # the first probe: cut by the outer deadline
            _, took = within(20, work)
    assert took < 3.0 + SLACK, took


def test_an_endless_props_body_is_read_up_to_its_cap() -> None:
    tracemalloc.start()
    try:
        with HostileModelServer("props_flood") as server:
            facts, _ = within(30, lambda: Endpoints(timeout=20).facts(endpoint(server)))
            sent = server.sent
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert facts == NOTHING
    assert peak < 4 * MAX_REPLY_BYTES, peak  # the body read stops at the cap (today's reads grew without end)
    assert sent < 20 * MAX_REPLY_BYTES, sent


# ------------------------------------------------------------------------------------ the model stream
def solver_call(server: HostileModelServer, monkeypatch: pytest.MonkeyPatch, *, stall: float,
                run_seconds: float) -> tuple[Any, float]:
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    model = init_model("openai:m")
    started = time.time()
    guard = CallGuard(endpoints=Endpoints(probe=False), stall_timeout=stall, deadline=lambda: started + run_seconds)
    return within(run_seconds + stall + 20,
                  lambda: call_role(model, "solver", [HumanMessage("convert 3 miles to km")], guard=guard))


@pytest.mark.parametrize("mode", [*STREAM_MODES, ENDLESS])
def test_no_stream_outlives_the_runs_deadline(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with HostileModelServer(mode, every=0.5) as server:
        error, took = solver_call(server, monkeypatch, stall=60, run_seconds=2.0)
    assert isinstance(error, ModelCallError) and error.kind == "time_limit", error
    assert took < 2.0 + SLACK, took


@pytest.mark.parametrize("mode", STREAM_MODES)
def test_stall_timeout_counts_time_without_a_token_not_without_a_byte(mode: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    with HostileModelServer(mode, every=0.5) as server:
        error, took = solver_call(server, monkeypatch, stall=1.5, run_seconds=60)
        chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert isinstance(error, ModelCallError) and error.kind == "timeout", error
    assert "no reply token within 1.5 s" in str(error) and len(chats) == 1  # a local call is not sent again
    assert took < 1.5 + SLACK, took


def test_a_reply_that_keeps_sending_tokens_is_not_a_stall(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tokens reset the stall count: a long reply of tokens is cut by the deadline, not by `stall_timeout`."""
    with HostileModelServer(ENDLESS, every=0.4) as server:
        error, took = solver_call(server, monkeypatch, stall=1.0, run_seconds=3.0)
    assert isinstance(error, ModelCallError) and error.kind == "time_limit", error
    assert 2.5 < took < 3.0 + SLACK, took


# ------------------------------------------------------------------------------------ settings
@pytest.mark.parametrize("name", sorted(SECONDS_FIELDS))
@pytest.mark.parametrize("value", [1e308, MAX_SECONDS * 10])
def test_a_number_of_seconds_past_any_clock_is_refused_at_start(name: str, value: float) -> None:
    with pytest.raises(ConfigError, match=f"{name} is a number of seconds"):
        AnyToolConfig(**{name: value})
    AnyToolConfig(**{name: MAX_SECONDS})  # the largest accepted


def test_the_cli_refuses_stall_timeout_1e308_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    line = cli_error(capsys, "run", "convert 3 miles to km", "--offline", "--set", "stall_timeout=1e308")
    assert "stall_timeout" in line and "seconds" in line


def test_ollamas_num_ctx_0_is_unknown() -> None:
    window, source = ollama_window({"parameters": "num_ctx 0", "model_info": {"llama.context_length": 2048}}) or (0, "")
    assert window == 2048 and "default" in source
    assert ollama_window({"parameters": "num_ctx 0\nstop x"})[0] > 0  # type: ignore[index]


# ------------------------------------------------------------------------------------ the CLI, per hostile mode
LIMIT = 6.0


@pytest.mark.slow
@pytest.mark.parametrize("mode", HOSTILE_MODES)
def test_anytool_run_ends_with_time_limit_whatever_the_server_sends(mode: str, tmp_path: Path) -> None:
    """`anytool run ... --set max_run_seconds=6` against each hostile mode prints its status `time_limit` within
    its limit + 5 s (counted from the server's first request, which the command's start-up precedes), and no
    callback error on stderr (a time limit is a status)."""
    with HostileModelServer(mode) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "x", "HOME": str(tmp_path)}
        command = [sys.executable, "-m", "langgraph_anytool.cli.app", "run", "convert 3 miles to km", "--model",
                   "openai:m", "--no-cache", "--set", f"max_run_seconds={LIMIT:g}", "--set", "stall_timeout=60"]
        with (tmp_path / "stderr.txt").open("w") as err, subprocess.Popen(
                command, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=err, text=True) as process:
            assert process.stdout is not None
            status, printed = "", 0.0
            for line in process.stdout:
                if line.startswith("status:"):
                    status, printed = line, time.monotonic()
            process.wait(120)
        first = min(r.received_at for r in server.requests)
    stderr = (tmp_path / "stderr.txt").read_text()
    assert status.startswith("status: time_limit"), (status, stderr[-2000:])
    assert printed - first < LIMIT + 5, printed - first
    assert "callback" not in stderr and "Traceback" not in stderr, stderr[-2000:]


@pytest.mark.parametrize("mode", USAGE_MODES)
@pytest.mark.parametrize("cut", ["deadline", "stall"])
def test_a_call_cut_after_the_servers_usage_came_keeps_that_usage(mode: str, cut: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A call that finishes at the deadline: the whole reply and its usage chunk have come, the stream's end has
    not when the run's deadline (or `stall_timeout`) cuts the read. Before: the cut raised with no usage, so the run
    recorded one call fewer than the server answered (seen once: 7 of 8). Now the server's counts are recorded: in
    the failed call's usage (`ModelCallError.usage()`, what the nodes add to the run's usage) and in `on_usage`
    (the run's token tally)."""
    metered: list[dict[str, Any]] = []
    with HostileModelServer(mode, every=0.3) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "x")
        model = init_model("openai:m")
        started = time.time()
        run_seconds, stall = (2.0, 60.0) if cut == "deadline" else (60.0, 1.5)
        guard = CallGuard(endpoints=Endpoints(probe=False), stall_timeout=stall,
                          deadline=lambda: started + run_seconds)
        error, took = within(30, lambda: call_role(model, "solver", [HumanMessage("convert 26.2 miles to km")],
                                                   guard=guard, on_usage=metered.append))
    assert isinstance(error, ModelCallError), error
    assert error.kind == ("time_limit" if cut == "deadline" else "timeout"), error
    assert took < min(run_seconds, stall) + SLACK, took
    used = error.usage()["solver"]
    assert (used.get("model_calls"), used.get("input_tokens"), used.get("output_tokens")) == (
        1, USAGE["prompt_tokens"], USAGE["completion_tokens"]), used
    assert [(m["input_tokens"], m["output_tokens"]) for m in metered] == [
        (USAGE["prompt_tokens"], USAGE["completion_tokens"])], metered
