"""`anytool eval run` against real models, killed mid-batch and resumed (issue 26).

Gemma 3 270M plays every role but the judge, SmolLM2 judges (test_run.py has it the other way round). The batch is
killed with SIGKILL once its first record is written, then the same command resumes it: the records on disk stay
as they were, every query ends with exactly one record, and a third run asks the server nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.real_model.checks import documented_status, role_totals, settings, usage_matches_server, within_window
from tests.real_model.harness import ANYTOOL, GEMMA, MAX_TOKENS, SMOLLM2, WINDOW, anytool, client_env
from tests.real_model.recorder import RecordingProxy
from tests.real_model.workload import MODES, QUERIES, profiles, write_queries

pytestmark = pytest.mark.slow

N_QUERIES = 3
MAX_SECONDS = 180.0


def test_eval_run_killed_and_resumed(proxy: Callable[..., RecordingProxy], tmp_path: Path) -> None:
    p = proxy(GEMMA, SMOLLM2)
    queries = write_queries(tmp_path / "builtin.json", N_QUERIES)
    out, db = tmp_path / "results.jsonl", tmp_path / "runs.sqlite"
    options, native = MODES["dfsdt-text"]
    args = ["eval", "run", "--queries", str(queries), "--model", f"openai:{GEMMA}", *options,
            "--concurrency", "1", "--out", str(out), "--db", str(db), "--no-progress", "--quiet",
            "--max-tokens-per-query", "20000",
            *settings(f"max_run_seconds={MAX_SECONDS:g}", f"model_profiles={profiles([SMOLLM2, GEMMA], WINDOW, native, MAX_TOKENS)}",
                      f'models={{"judge": "openai:{SMOLLM2}"}}')]
    env = client_env(p, tmp_path)

    batch = subprocess.Popen([str(ANYTOOL), *args], env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + MAX_SECONDS * 2 * N_QUERIES
    while time.monotonic() < deadline and batch.poll() is None and not (out.exists() and out.read_text().strip()):
        time.sleep(0.2)
    if batch.poll() is None:
        os.killpg(batch.pid, signal.SIGKILL)
    killed_at = time.monotonic()
    batch.wait()
    assert batch.stderr is not None
    first_err = batch.stderr.read().decode("utf-8", "replace")
    batch.stderr.close()
    assert "Traceback (most recent call last)" not in first_err, first_err[-3000:]
    before = out.read_text().splitlines() if out.exists() else []
    assert 1 <= len(before) < N_QUERIES, f"the kill came too late (or nothing was recorded): {before}"

    done = anytool(args, env, timeout=MAX_SECONDS * 3 * N_QUERIES, cwd=tmp_path)
    assert "Traceback (most recent call last)" not in done.out + done.err, done.err[-3000:]
    assert done.code == 0, done.err[-3000:]
    after = out.read_text().splitlines()
    assert after[: len(before)] == before, "the resumed batch changed records written before the kill"
    records = [json.loads(line) for line in after]
    assert sorted(r["query_id"] for r in records) == [str(i) for i in range(N_QUERIES)]
    assert f"{N_QUERIES - len(before)} queries run now, {len(before)} already" in done.out
    for record in records:
        documented_status(record)
    within_window(p)

    # usage per query, as the server counted it: exact for a query run whole in one process; the query the kill
    # cut keeps what was checkpointed (the calls after its last checkpoint were lost with the process)
    for record in records:
        asked = [e for e in p.chats() if record["query"] in e.text]
        cut = any(e.started < killed_at for e in asked) and any(e.started > killed_at for e in asked)
        usage = record["usage"]["roles"]
        if not cut:
            usage_matches_server(usage, asked, f"query {record['query_id']}")
            judged = [e for e in asked if e.model == SMOLLM2]
            assert role_totals(usage, ["judge"])[0] == len(judged), "a judge call went to the wrong model"
        else:
            calls, tokens_in, tokens_out, _ = role_totals(usage)
            answered = [e for e in asked if e.ok]
            assert calls <= len(answered)
            assert tokens_in <= sum(e.prompt_tokens or 0 for e in answered)
            assert tokens_out <= sum(e.completion_tokens or 0 for e in answered)

    # a third run finds every query done: no request, the file as it was
    asked_before = len(p.chats())
    again = anytool(args, env, timeout=120, cwd=tmp_path)
    assert again.code == 0, again.err[-3000:]
    assert out.read_text().splitlines() == after
    assert len(p.chats()) == asked_before, "a finished batch asked the server again"
    assert f"0 queries run now, {N_QUERIES} already" in again.out
    assert QUERIES[0][0] in records[0]["query"]
