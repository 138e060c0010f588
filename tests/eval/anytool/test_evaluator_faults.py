"""An evaluator that fails (issue 34 §2): `eval passrate` (each protocol) and `eval compare` end with one line naming
the evaluator and the fault and exit 4, print no pass rate from queries never scored, and with --failed-as-zero
print the figures with the count of queries scored as failed. The evaluator is a real loopback OpenAI-compatible
server answering HTTP 500 (with `Retry-After: 0`, so the call's retries are quick) or 401."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.cli.app import main
from langgraph_anytool.cli.exits import EXIT_EVALUATOR
from tests.servers import ChatFault, ChatReply, OpenAIChatServer

KEY = "sk-evaluator-0123456789abcdefghijklmnop"


def record(qid: str, answer: str) -> dict[str, Any]:
    node = {"calls": [{"tool_call_id": "c0", "function": "f", "arguments": {}, "status": "ok"}],
            "messages": [{"role": "tool", "tool_call_id": "c0", "content": "21"}]}
    return {"group": "G", "query_id": qid, "query": f"question {qid}", "answer": answer, "status": "solved",
            "pool": ["C/t/a"], "trajectory": [{"attempt": 1, "finish_type": "give_answer", "tree": [node]}],
            "model": "m"}


def results(path: Path, n: int = 3) -> Path:
    path.write_text("".join(json.dumps(record(f"q{i}", f"It is {20 + i} degrees.")) + "\n" for i in range(n)))
    return path


def failing(status: int = 500) -> Any:
    return lambda body: ChatFault("status", status, retry_after="0")


def solved(body: dict[str, Any]) -> ChatReply:
    return ChatReply(content=json.dumps({"reason": "scripted", "label": "Solved"}))


def passrate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["eval", "passrate", *args, "--evaluator", "openai:gpt-test", "--no-cache", "--concurrency", "1"])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    def point(server: OpenAIChatServer) -> None:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    return point


@pytest.mark.parametrize("protocol", ["anytool", "toolllm", "sopr"])
def test_an_evaluator_answering_500_ends_in_one_line_and_exit_4(protocol: str, tmp_path: Path, endpoint: Any,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Was: three chained tracebacks and exit 1."""
    res = results(tmp_path / "r.jsonl")
    with OpenAIChatServer(policy=failing(500)) as server:
        endpoint(server)
        code, out, err = passrate(capsys, str(res), "--protocol", protocol, "--samples", "2")
        asked = len(server.chat_requests)
    assert code == EXIT_EVALUATOR and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("anytool: evaluator openai:gpt-test failed on query G/q0")
    assert "server_error" in lines[0] and "500" in lines[0] and "3 of 3 queries not scored" in lines[0]
    assert "pass rate" not in out and "%" not in out  # no figure from queries never scored
    assert asked == 1 + 6  # the first query's call and its retries; no other query was sent


def test_failed_as_zero_prints_the_figures_with_the_count(tmp_path: Path, endpoint: Any,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """q1's evaluator calls fail (500), q0 and q2 are Solved: 2 of 3 with q1 counted as failed, exit 4 still."""
    res = results(tmp_path / "r.jsonl")

    def judge(body: dict[str, Any]) -> Any:
        return failing(500)(body) if "question q1" in body["messages"][-1]["content"] else solved(body)

    with OpenAIChatServer(policy=judge) as server:
        endpoint(server)
        code, out, err = passrate(capsys, str(res), "--samples", "1", "--failed-as-zero", "--json")
    data = json.loads(out)
    assert code == EXIT_EVALUATOR and data["evaluator_faults"] == 1
    assert data["overall"]["passed"] == 2 and data["overall"]["rate"] == pytest.approx(200 / 3)
    assert "1 of 3 queries were not scored by the evaluator" in err and "Traceback" not in err


def test_a_key_the_evaluator_refuses_is_one_line_without_the_key(tmp_path: Path, endpoint: Any,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    res = results(tmp_path / "r.jsonl", 2)
    with OpenAIChatServer(policy=failing(401)) as server:
        endpoint(server)
        code, out, err = passrate(capsys, str(res))
        asked = len(server.chat_requests)
    assert code == EXIT_EVALUATOR and "auth" in err and KEY not in err + out and asked == 1


def test_a_healthy_evaluator_still_exits_0(tmp_path: Path, endpoint: Any, capsys: pytest.CaptureFixture[str]) -> None:
    res = results(tmp_path / "r.jsonl", 2)
    with OpenAIChatServer(policy=solved) as server:
        endpoint(server)
        code, out, err = passrate(capsys, str(res), "--samples", "1")
    assert code == 0 and "100.0" in out and "evaluator" not in err


def test_compare_with_a_failing_evaluator(tmp_path: Path, endpoint: Any, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = results(tmp_path / "a.jsonl", 2), results(tmp_path / "b.jsonl", 2)
    with OpenAIChatServer(policy=failing(500)) as server:
        endpoint(server)
        code = main(["eval", "compare", str(a), str(b), "--evaluator", "openai:gpt-test", "--no-cache",
                     "--samples", "1", "--concurrency", "1"])
    out, err = capsys.readouterr()
    assert code == EXIT_EVALUATOR and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"queries of {a} not scored, so no comparison is printed" in err and "McNemar" not in out
