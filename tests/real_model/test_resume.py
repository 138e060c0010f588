"""Issue 38 §3 on a real server: llama-server killed (`kill -9`) in the middle of `anytool run`, the run ends in
`error: connection` within seconds (not after minutes of retries), and once the server is back on its port the same
command resumes the run from its last checkpoint, the first attempt's usage kept."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from langgraph_anytool.integrations.local_models import LlamaServer, LocalModelError, free_port, gguf_path
from tests.real_model.checks import ended_cleanly, settings
from tests.real_model.harness import (
    ANYTOOL,
    MAX_TOKENS,
    SERVER_CTX,
    SMOLLM2,
    THREADS,
    WINDOW,
    Done,
    anytool,
    unavailable,
)
from tests.real_model.workload import MODES, QUERIES, profiles

pytestmark = pytest.mark.slow

MAX_SECONDS = 300.0
STARTED = re.compile(r"launch_slot|processing task|new prompt")  # llama-server's log: a request is taken up


def started_requests(log: Path) -> int:
    if not log.is_file():
        return 0
    return sum(1 for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if STARTED.search(line))


def test_a_server_killed_mid_run_then_resumed_keeps_the_usage(llama_binary: Path, tmp_path: Path) -> None:
    try:
        model = gguf_path(SMOLLM2)
    except LocalModelError as exc:
        unavailable(str(exc))
    port, log = free_port(), tmp_path / "server.log"

    def server() -> LlamaServer:  # not started: `with` (or `start()`) starts it
        return LlamaServer(model, ctx=SERVER_CTX, alias=SMOLLM2, binary=llama_binary, threads=THREADS, port=port,
                           log_path=log, extra=("--temp", "0", "--seed", "1"))

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANYTOOL_MODEL"))}
    env.update(OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", OPENAI_API_KEY="sk-local-unused",
               ANYTOOL_CACHE_DIR=str(tmp_path / "responses"))
    options, native = MODES["dfsdt"]
    args = ["run", QUERIES[0][0], "--model", f"openai:{SMOLLM2}", *options, "--json", "--quiet",
            "--db", str(tmp_path / "runs.sqlite"), "--thread", "killed",
            *settings(f"max_run_seconds={MAX_SECONDS:g}",
                      f"model_profiles={profiles([SMOLLM2], WINDOW, native, MAX_TOKENS)}")]
    first_server = server().start()
    try:
        child = subprocess.Popen([str(ANYTOOL), *args], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        deadline = time.monotonic() + MAX_SECONDS
        while started_requests(log) < 2 and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)  # the second model request is being served: one call's usage is checkpointed
        process = first_server._process
        assert process is not None and child.poll() is None, "the run ended before its second model request"
        process.kill()  # kill -9
        killed = time.monotonic()
        out, err = child.communicate(timeout=MAX_SECONDS)
        given_up = time.monotonic() - killed
    finally:
        first_server.stop()
    first = ended_cleanly(Done(child.returncode, out, err, 0.0))
    assert (first["status"], first["error_kind"]) == ("error", "connection"), first["reason"]
    assert given_up < 30, f"a dead local server took {given_up:.0f} s to give up"
    assert "resume it from its last checkpoint" in err
    spent = {r: u for r, u in first["usage"].items() if isinstance(u, dict) and u.get("model_calls")}
    assert spent, first["usage"]

    with server():
        again = anytool(args, env, timeout=MAX_SECONDS * 2, cwd=tmp_path)
    resumed = ended_cleanly(again)
    assert "resuming the run on thread killed, which ended in error (connection)" in again.err, again.err[-2000:]
    assert resumed["status"] != "error", resumed["reason"]
    for role, used in spent.items():  # what the first attempt spent is still counted
        now = resumed["usage"][role]
        assert now["model_calls"] >= used["model_calls"] and now["input_tokens"] >= used["input_tokens"], role
