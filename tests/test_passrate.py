"""Pass-rate protocols on hand-made verdicts (expected scores computed by hand), the evaluator cache, and the
ToolEval two-stage flow over the real ChatOpenAI against a loopback OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from langgraph_anytool.eval.passrate import (
    EvaluatorCache,
    QueryVerdicts,
    evaluate_records,
    sample_pass,
    score,
)
from tests.servers import ChatReply, OpenAIChatServer

# Five queries, three samples each. Per-sample answer labels and (for Eq. 1) solvability labels.
HAND = [
    ("q1", ["Solved", "Solved", "Unsolved"], ["Solvable", "Solvable", "Solvable"]),
    ("q2", ["Unsolved", "Unsolved", "Solved"], ["Unsolvable", "Unsolvable", "Solvable"]),
    ("q3", ["Solved", "Solved", "Solved"], ["Solvable", "Solvable", "Solvable"]),
    ("q4", ["Unsolved", "Unsolved", "Unsolved"], ["Solvable", "Solvable", "Solvable"]),
    ("q5", ["Unsure", "Solved", "Solved"], ["Unsolvable", "Solvable", "Solvable"]),
]


def verdicts(with_tasks: bool) -> list[QueryVerdicts]:
    return [QueryVerdicts("G", qid, list(a), list(t) if with_tasks else []) for qid, a, t in HAND]


def test_anytool_eq2_by_hand() -> None:
    # passes per sample: q1 T,T,F → pass; q2 F,F,T → fail; q3 pass; q4 fail; q5 coin,T,T → pass (2 of 3 at least)
    # → 3 passed / 5 = 60.0 %, one coin flip (q5's Unsure sample)
    groups, overall = score(verdicts(False), "anytool", 3)
    assert (overall.passed, overall.failed, overall.coin_flips) == (3, 2, 1)
    assert overall.rate == pytest.approx(60.0)
    assert (overall.solved, overall.unsolved, overall.unsure) == (3, 2, 0)
    assert groups[0].rate == overall.rate


def test_toolllm_eq1_counts_non_solvable_as_passed() -> None:
    # q2's two Unsolved samples are Unsolvable → passed (T,T,T); q5's Unsure + Unsolvable → passed; q4 stays failed
    # → 4 / 5 = 80.0 %: the inflation AnyTool §3 describes (Eq. 2 gives 60.0 % on the same answers)
    _, overall = score(verdicts(True), "toolllm", 3)
    assert (overall.passed, overall.failed, overall.coin_flips, overall.non_solvable) == (4, 1, 0, 1)
    assert overall.rate == pytest.approx(80.0)


def test_sopr_by_hand() -> None:
    # sample 0: 1+0+1+0+0.5 = 2.5/5 = 50 %; sample 1: 1+0+1+0+1 = 60 %; sample 2: 0+1+1+0+1 = 60 %
    # mean 56.67 %, population std sqrt(((50-56.67)^2 + 2*(60-56.67)^2)/3) = 4.714 %
    _, overall = score(verdicts(False), "sopr", 3)
    assert overall.per_sample == pytest.approx([50.0, 60.0, 60.0])
    assert overall.rate == pytest.approx(56.6667, abs=1e-3)
    assert overall.std == pytest.approx(4.7140, abs=1e-3)


def test_toolevals_is_passed_table() -> None:
    assert sample_pass("Solved", None) is True and sample_pass("Unsolved", None) is False
    assert sample_pass("Unsure", None) is None
    assert sample_pass("Unsolved", "Unsolvable") is True and sample_pass("Unsolved", "Solvable") is False
    assert sample_pass("Unsolved", "Unsure") is None and sample_pass("Unsure", "Solvable") is None
    assert sample_pass("Unsure", "Unsolvable") is True


def test_a_tie_is_settled_reproducibly() -> None:
    v = [QueryVerdicts("G", "t", ["Solved", "Unsolved"])]
    a, b = score(v, "anytool", 2)[1], score(v, "anytool", 2)[1]
    assert a.coin_flips == 1 and a.passed + a.failed == 1 and (a.passed, a.failed) == (b.passed, b.failed)


def record(qid: str, answer: str, calls: list[tuple[str, str, str]]) -> dict[str, Any]:
    msgs = [{"role": "tool", "tool_call_id": f"c{i}", "content": content} for i, (_, _, content) in enumerate(calls)]
    node = {"calls": [{"tool_call_id": f"c{i}", "function": fn, "arguments": {}, "status": st}
                      for i, (fn, st, _) in enumerate(calls)], "messages": msgs}
    return {"group": "G", "query_id": qid, "query": f"question {qid}", "answer": answer, "status": "solved",
            "pool": ["C/t/a"], "trajectory": [{"attempt": 1, "tree": [node]}]}


def test_two_stage_flow_over_chatopenai_and_the_cache(tmp_path: Path) -> None:
    """q1: stage 1 Solved. q2: stage 1 Unsure → stage 2 (sees the API result) Unsolved. q3: empty answer, no call."""

    def judge(body: dict[str, Any]) -> ChatReply:
        system = body["messages"][0]["content"]
        user = body["messages"][-1]["content"]
        if "whole working" in system:  # stage 2
            assert "HTTP 500 upstream" in user
            return ChatReply(content='```json\n{"reason": "the only call failed", "label": "Unsolved"}\n```')
        if "question q1" in user:
            return ChatReply(content=json.dumps({"reason": "complete", "label": "Solved"}))
        return ChatReply(content="Unsure")

    records = [record("q1", "The answer is 42.", [("f", "ok", "42")]),
               record("q2", "It is probably fine.", [("g", "error", "HTTP 500 upstream")]),
               record("q3", "", [])]
    with OpenAIChatServer([judge] * 9) as server:
        model = ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key="sk-loopback", max_retries=0)
        cache = EvaluatorCache(tmp_path / "cache.sqlite")
        out = evaluate_records(records, model, "openai:gpt-test", samples=2, cache=cache, concurrency=2)
        # q1: 1 call per sample; q2: 2 calls per sample; q3: none → 6 calls
        assert len(server.chat_requests) == 6 and cache.misses == 6
        assert [v.answer_labels for v in out] == [["Solved"] * 2, ["Unsolved"] * 2, ["Unsolved"] * 2]
        _, overall = score(out, "anytool", 2)
        assert overall.rate == pytest.approx(100 / 3)
        cache.close()
        again = EvaluatorCache(tmp_path / "cache.sqlite")
        out2 = evaluate_records(records, model, "openai:gpt-test", samples=2, cache=again)
        assert len(server.chat_requests) == 6 and again.hits == 6  # re-scoring is free
        assert [v.answer_labels for v in out2] == [v.answer_labels for v in out]
        more = evaluate_records(records[:1], model, "openai:gpt-test", samples=3, cache=again)
        assert len(server.chat_requests) == 7 and more[0].answer_labels == ["Solved"] * 3  # only sample 3 is new
        again.close()


def test_passrate_cli_states_the_evaluator_and_unsure_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from langgraph_anytool.cli import main

    res = tmp_path / "r.jsonl"
    res.write_text(json.dumps({**record("q1", "", []), "model": "x"}) + "\n")  # empty answer: no evaluator call
    cache = str(tmp_path / "c.sqlite")
    assert main(["eval", "passrate", str(res), "--offline", "--cache", cache]) == 0
    out = capsys.readouterr().out
    assert "NOT an LLM" in out and "separate from the in-loop judge" in out and "coin flip" in out
    assert main(["eval", "passrate", str(res), "--offline", "--cache", cache, "--json", "--protocol", "sopr"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["protocol"] == "sopr" and data["overall"]["rate"] == 0.0 and "0.5" in data["unsure_rule"]
    assert main(["eval", "passrate", str(res)]) == 2  # no evaluator configured: one-line error
