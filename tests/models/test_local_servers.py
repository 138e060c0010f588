"""Issue 26: what a real model served on loopback did to a run, replayed by a loopback llama-server that answers
as the real one did (tests/model_servers.py, tests/data/llama_cpp/): the same `anytool run` command the issue
ran, against it.

1. A text-mode run overflowed the declared 8,192-token window (12,249 tokens: our estimate was characters / 4,
   SmolLM2 counts about 3.3 characters a token) and ended `error: bad_request` on llama.cpp's overflow reply.
2. A slow server was retried into the ground: every call cut by the client's timeout was sent again and computed
   again from scratch, and no call carried `max_tokens`.
3. A model that never calls a function cost 20 agent turns before `no_apis`.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from langgraph_anytool.cli.app import main
from langgraph_anytool.models.profiles import profile_for
from tests.model_servers import LlamaCppServer, ModelServer, OllamaServer, VllmServer, recorded

QUERY = "Convert 26.2 miles to kilometers."
SMOLLM = "openai:smollm2-135m"
TEXT_MODE = 'model_profiles={"smollm2": {"tool_calling": false, "context_window": 8192}}'
TEXT_MODE_UNDECLARED = 'model_profiles={"smollm2": {"tool_calling": false}}'
# SmolLM2's first reply to the meta-agent (its chat template had dropped the functions), as recorded
RAMBLING = recorded("chat_completion.json")["choices"][0]["message"]["content"]
FINISH = ('Thought: 26.2 miles are 42.16 kilometers.\nAction: Finish\nAction Input: {"return_type": "give_answer", '
          '"final_answer": "26.2 miles are about 42.16 kilometers."}')


def text_solver(body: dict[str, Any]) -> str:
    """The text-mode solver finishes at once; every other role gets SmolLM2's rambling."""
    system = str(body["messages"][0].get("content") or "")
    return FINISH if "Action Input:" in system and "Finish" in system else RAMBLING


def anytool_run(server: ModelServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                *settings: str) -> dict[str, Any]:
    """`anytool run QUERY --model openai:smollm2-135m` with OPENAI_BASE_URL at `server`, as the issue ran it."""
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    args = ["run", QUERY, "--model", SMOLLM, "--json", "--quiet", "--no-cache"]
    for s in settings:
        args += ["--set", s]
    main(args)
    return dict(json.loads(capsys.readouterr().out))


def model_calls(out: dict[str, Any]) -> int:
    return sum(int(v.get("model_calls", 0)) for v in out["usage"].values() if isinstance(v, dict))


# ------------------------------------------------------------------------------------------ 1. context that fits
@pytest.mark.parametrize("profile", [TEXT_MODE, TEXT_MODE_UNDECLARED], ids=["declared", "from-props"])
def test_a_text_mode_run_keeps_every_request_within_the_window(profile: str, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the solver's first request held 12,249 tokens (15,899 without a declared window) against 8,192, and
    the run ended `error`. Now the server counts each prompt, the solver offers fewer of its 64 functions, and
    every request with its `max_tokens` fits the window the profile declares or /props states."""
    with LlamaCppServer(policy=text_solver, n_ctx=8192, chars_per_token=3.3) as server:
        out = anytool_run(server, monkeypatch, capsys, "retriever=search", profile)
        chats = list(server.chats)
    assert out["status"] != "error", out["reason"]
    assert chats and all(c.status == 200 and c.within_window for c in chats), chats
    assert all(c.max_tokens for c in chats)  # every call carries its max_tokens
    solver = out["usage"]["solver"]
    assert solver["fit_counted"] == solver["model_calls"] and solver["functions_dropped"] > 0
    assert out["solver_attempts"][0]["finish_type"] == "give_answer"


def test_llama_cpps_overflow_reply_is_met_by_shrinking_to_its_counts(monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A llama-server without /apply-template and /tokenize: the prompt is estimated, the server refuses it with
    its own words (HTTP 400 `exceed_context_size_error`, "request (N tokens) exceeds the available context size
    (8192 tokens)"), and the call is fitted again to the counts the reply states — not ended `bad_request`."""
    with LlamaCppServer(policy=text_solver, n_ctx=8192, chars_per_token=1.8, counts=False) as server:
        out = anytool_run(server, monkeypatch, capsys, "retriever=search", TEXT_MODE)
        chats = list(server.chats)
    assert out["status"] != "error", out["reason"]
    assert chats[0].status == 400 and chats[-1].status == 200
    solver = out["usage"]["solver"]
    assert solver["overflows"] >= 1 and solver["fit_estimated"] == solver["model_calls"]
    assert out["solver_attempts"][0]["finish_type"] == "give_answer"


def test_vllm_states_its_window_and_counts_each_request(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM: `max_model_len` from /v1/models (4,096, under the profile's unknown-model 32k) and its /tokenize count
    (tools included) keep prompt + max_tokens within the window, which vLLM would refuse."""
    with VllmServer(policy=text_solver, model="smollm2-135m", n_ctx=4096, chars_per_token=3.0) as server:
        out = anytool_run(server, monkeypatch, capsys, "retriever=search", TEXT_MODE_UNDECLARED)
        chats = list(server.chats)
        tokenized = server.paths().count("/tokenize")
    assert out["status"] != "error", out["reason"]
    assert chats and all(c.status == 200 and c.within_window for c in chats), chats
    assert tokenized >= len(chats) and out["usage"]["solver"]["fit_counted"] >= 1


def test_ollamas_num_ctx_is_asked_for_because_it_cuts_silently(monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Ollama says its window only in /api/show (here num_ctx 4096, under the 32k the profile assumes) and cuts an
    over-long prompt without a word: no request may pass it. It has no tokenizer endpoint, so the prompt is an
    estimate (labelled so)."""
    with OllamaServer(policy=text_solver, n_ctx=4096, num_ctx=4096, chars_per_token=3.3) as server:
        out = anytool_run(server, monkeypatch, capsys, "retriever=search", TEXT_MODE_UNDECLARED)
        chats = list(server.chats)
    assert chats and server.truncated == 0 and all(c.within_window for c in chats), chats
    assert out["usage"]["solver"]["fit_estimated"] >= 1 and "fit_counted" not in out["usage"]["solver"]


# ------------------------------------------------------------------------------------------ 2. slow servers
def test_a_slow_local_server_is_waited_for_and_never_asked_twice(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The server takes 1.6 s to read each prompt (pinging meanwhile, as llama-server does) and then writes its
    tokens, against a 1-second request timeout. Before: each call was cut at 1 s, sent again and computed again
    from the start (6 times), and the run ended `error`. Now a local server's calls are streamed, so the client
    waits as long as the server sends; each request is sent once and carries the role's max_tokens."""
    with LlamaCppServer(policy=text_solver, chars_per_token=3.3, first_token_seconds=1.6, ping_every=0.4,
                        token_seconds=0.002) as server:
        out = anytool_run(server, monkeypatch, capsys, "retriever=search", "search_k=3", TEXT_MODE,
                          "request_timeout=1")
        chats = list(server.chats)
        hung_up = server.disconnects
    assert out["status"] != "error", out["reason"]
    assert len(chats) == model_calls(out) and hung_up == 0  # no request cut, none sent twice
    assert all(c.stream and c.max_tokens == profile_for(server.model).max_tokens == 256 for c in chats)  # a tiny
    # model's profile: every role's replies capped at 256 tokens


def test_a_silent_local_server_is_not_sent_the_same_request_again(monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A server that sends nothing for `stall_timeout`: the call fails as a timeout saying what the silence was,
    and is not sent again (the server would start the same computation over)."""
    started = time.monotonic()
    with LlamaCppServer(policy=text_solver, chars_per_token=3.3, silent_seconds=20) as server:
        out = anytool_run(server, monkeypatch, capsys, "retriever=search", "search_k=3", TEXT_MODE, "stall_timeout=1")
        chats = list(server.chats)
    assert time.monotonic() - started < 15
    assert len(chats) == 1 and out["status"] == "error" and out["error_kind"] == "timeout"
    assert "not sent again" in out["reason"] and "no reply token within 1 s" in out["reason"]


def test_a_run_past_its_time_limit_ends_with_its_own_status(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """`max_run_seconds` is a hard limit: the call in flight is cut at it and the run ends `time_limit`."""
    started = time.monotonic()
    with LlamaCppServer(policy=text_solver, chars_per_token=3.3, first_token_seconds=1.0, ping_every=0.3,
                        token_seconds=0.2) as server:
        out = anytool_run(server, monkeypatch, capsys, "retriever=search", "search_k=3", TEXT_MODE,
                          "max_run_seconds=2.5")
    took = time.monotonic() - started
    assert out["status"] == "time_limit" and "time limit of 2.5 s reached" in out["reason"], out["reason"]
    assert took < 8, took


# ------------------------------------------------------------------------------------------ 3. no function calls
def test_agents_that_never_call_a_function_finish_after_three_replies(monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """SmolLM2 through --jinja never called a function (its chat template drops them): the meta-agent used to
    spend all 20 of its turns before `no_apis`. Now it finishes after `max_turns_without_call` (3) replies in a row
    without a call, with a reason the run records. (Native calls, as the profile asks: on llama.cpp the default is
    constrained calls, tests/models/test_constrained_calls.py.)"""
    with LlamaCppServer(policy=lambda body: RAMBLING, chars_per_token=3.3) as server:
        out = anytool_run(server, monkeypatch, capsys, 'model_profiles={"smollm2": {"call_mode": "native"}}')
        chats = list(server.chats)
    meta = out["agents"]["meta"]
    assert out["status"] == "no_apis" and meta["status"] == "finished" and meta["steps"] == 3
    assert meta["end_reason"].startswith("no_calls: 3 replies in a row without a function call")
    assert out["usage"]["meta"]["no_call_ends"] == 1 and len(chats) == 3
