"""Pass-rate protocols on hand-made verdicts (expected scores computed by hand), the evaluator cache, and the
ToolEval two-stage flow over the real ChatOpenAI against a loopback OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI

from langgraph_anytool.eval.anytool.passrate import (
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
    # passes per sample (only Solved passes, AnyTool check_solved_toolbench with task_solvable='Solvable'):
    # q1 T,T,F → pass; q2 F,F,T → fail; q3 pass; q4 fail; q5 F(Unsure),T,T → 2 ≥ 1 → pass
    # → 3 passed / 5 = 60.0 %, no coin flip
    groups, overall = score(verdicts(False), "anytool", 3)
    assert (overall.passed, overall.failed, overall.coin_flips) == (3, 2, 0)
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
    assert sample_pass("Unsure", None) is False  # AnyTool's loop: is_passed(task_status='Solvable' as a str) → Failed
    assert sample_pass("Unsolved", "Unsolvable") is True and sample_pass("Unsolved", "Solvable") is False
    assert sample_pass("Unsolved", "Unsure") is None and sample_pass("Unsure", "Solvable") is None
    assert sample_pass("Unsure", "Unsolvable") is True


def test_a_tie_counts_as_passed_without_a_coin() -> None:
    # StableToolBench toolbench/tooleval/eval_pass_rate.py: `if failed <= passed: pass_rate += 1`;
    # AnyTool anytool/verifier.py check_solved_toolbench: `if passed >= failed: return 'Solved'`.
    # t1: T,F → 1-1 tie → passed; t2: T,F,F,T → 2-2 → passed; t3: F,F,T,F → 1-3 → failed; t4 (toolllm below)
    v = [QueryVerdicts("G", "t1", ["Solved", "Unsolved"]),
         QueryVerdicts("G", "t2", ["Solved", "Unsolved", "Unsolved", "Solved"]),
         QueryVerdicts("G", "t3", ["Unsolved", "Unsolved", "Solved", "Unsolved"])]
    _, overall = score(v, "anytool", 4)
    assert (overall.passed, overall.failed, overall.coin_flips) == (2, 1, 0)
    assert overall.rate == pytest.approx(200 / 3)
    # Eq. 1: Unsolved + Unsolvable passes, Unsolved + Solvable fails → 1-1 tie → passed
    t4 = [QueryVerdicts("G", "t4", ["Unsolved", "Unsolved"], ["Unsolvable", "Solvable"])]
    assert score(t4, "toolllm", 2)[1].passed == 1


def test_an_unsure_sample_is_still_a_seeded_coin_in_toolllm() -> None:
    # compute_pass_rate (eval_pass_rate.py): AnswerPass.Unsure → `random.random() < 0.5`. One Unsure sample of one
    # (task Solvable: is_passed → Unsure): the query's fate is the coin's, the same on every re-score, counted.
    v = [QueryVerdicts("G", f"u{i}", ["Unsure"], ["Solvable"]) for i in range(8)]
    a, b = score(v, "toolllm", 1)[1], score(v, "toolllm", 1)[1]
    assert a.coin_flips == 8 and (a.passed, a.failed) == (b.passed, b.failed) and 0 < a.passed < 8


def test_an_unsure_sample_fails_in_anytools_protocol() -> None:
    # dyabel/AnyTool scripts/main.py passes task_solvable='Solvable' (a str) to verifier.py check_solved_toolbench;
    # check_solved.py compute_pass_rate then calls rtl.py is_passed(task_status='Solvable'), where
    # 'Solvable' == TaskStatus.Solvable is False, so Unsure (like Unsolved) reaches `return AnswerPass.Failed`.
    # a1: Unsure,Unsure,Solved → F,F,T → 1 passed < 2 failed → failed; a2: Unsure,Solved,Solved → F,T,T → passed;
    # 8 × [Unsure] → all failed. 1 passed of 10 → 10.0 %, and never a coin.
    v = [QueryVerdicts("G", "a1", ["Unsure", "Unsure", "Solved"]),
         QueryVerdicts("G", "a2", ["Unsure", "Solved", "Solved"]),
         *[QueryVerdicts("G", f"u{i}", ["Unsure"] * 3) for i in range(8)]]
    _, overall = score(v, "anytool", 3)
    assert (overall.passed, overall.failed, overall.coin_flips) == (1, 9, 0)
    assert overall.rate == pytest.approx(10.0)


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
    from langgraph_anytool.cli.app import main

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


# ------------------------------------------------------------------------------------------------ exclusion words
def test_exclusion_words_are_the_authors_list_case_sensitive() -> None:
    from langgraph_anytool.nodes.judge.anytool import EXCLUSION_WORDS, excluded_word

    # dyabel/AnyTool anytool/api_database_function.py `exclusion_words`, in its order
    assert EXCLUSION_WORDS == ("sorry", "apologize", "apology", "unfortunately", "couldn't", "could not", "can't",
                               "cannot", "unable", "regret", "not successfully")
    # scripts/main.py: `any([word in final_answer for word in exclusion_words])` — a plain, case-sensitive substring
    assert excluded_word("I am sorry, the API failed.") == "sorry"
    assert excluded_word("Sorry, the API failed.") is None  # capital S: not in the list
    assert excluded_word("The booking was not successfully made.") == "not successfully"
    assert excluded_word("I can\u2019t find it.") is None  # typographic apostrophe: not the ASCII "can't"
    assert excluded_word("We were unable to; I regret it.") == "unable"  # the first of the list that occurs
    assert excluded_word("The capital of France is Paris.") is None


def _scripted_judge(label_for: dict[str, str], seen: list[str]) -> Any:
    def judge(body: dict[str, Any]) -> ChatReply:
        user = body["messages"][-1]["content"]
        seen.append(user)
        for key, label in label_for.items():
            if key in user:
                return ChatReply(content=json.dumps({"reason": "scripted", "label": label}))
        return ChatReply(content=json.dumps({"reason": "scripted", "label": "Solved"}))
    return judge


def test_exclusion_rule_in_anytool_protocol_only(tmp_path: Path) -> None:
    """Four answers, two samples each, a loopback evaluator that says Solved to every answer it sees.

    anytool (Eq. 2 with AnyTool's rule): e1 "...could not..." and e2 "...cannot..." are Unsolved with no call; e3
    ("Sorry", capital S) and e4 are asked → Solved. 2 passed / 4 = 50.0 %, 2 excluded, 4 evaluator calls.
    sopr (StableToolBench, no word rule): all four asked → every sample Solved → 100.0 %, 8 calls."""
    records = [record("e1", "I could not reach the API.", [("f", "ok", "x")]),
               record("e2", "The weather cannot be retrieved.", [("f", "ok", "x")]),
               record("e3", "Sorry for the wait: it is 21 degrees.", [("f", "ok", "x")]),
               record("e4", "It is 21 degrees.", [("f", "ok", "x")])]
    seen: list[str] = []
    with OpenAIChatServer([_scripted_judge({}, seen)] * 16) as server:
        model = ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key="sk-loopback", max_retries=0)
        out = evaluate_records(records, model, "k", samples=2, protocol="anytool", concurrency=1)
        assert len(server.chat_requests) == 4 and not any("could not" in u or "cannot" in u for u in seen)
        assert [v.excluded for v in out] == ["could not", "cannot", None, None]
        _, overall = score(out, "anytool", 2)
        assert (overall.passed, overall.excluded, overall.rate) == (2, 2, pytest.approx(50.0))
        sopr = evaluate_records(records, model, "k", samples=2, protocol="sopr", concurrency=1)
        assert len(server.chat_requests) == 4 + 8 and all(v.excluded is None for v in sopr)
        assert score(sopr, "sopr", 2)[1].rate == pytest.approx(100.0)
        off = evaluate_records(records[:1], model, "k", samples=1, protocol="anytool", exclusion=False)
        assert off[0].answer_labels == ["Solved"] and len(server.chat_requests) == 13  # our variant: asked


# ------------------------------------------------------------------------------------------------ evaluator identity
def test_cache_key_names_endpoint_and_sampling_never_the_key(tmp_path: Path) -> None:
    """Same model name on two loopback endpoints: A says Solved, B says Unsolved. With one cache file, scoring on B
    after A must ask B (not reuse A's verdicts); so must another temperature on A. Re-scoring on A is free."""
    from langgraph_anytool.eval.identity import evaluator_identity, evaluator_key

    rec = [record("c1", "It is 21 degrees.", [("f", "ok", "21")])]
    cache = EvaluatorCache(tmp_path / "cache.sqlite")
    with OpenAIChatServer([_scripted_judge({"c1": "Solved"}, [])] * 4) as a, \
            OpenAIChatServer([_scripted_judge({"c1": "Unsolved"}, [])] * 4) as b:
        on_a = ChatOpenAI(model="gpt-test", base_url=a.base_url, api_key="sk-secret-A", max_retries=0)
        on_b = ChatOpenAI(model="gpt-test", base_url=b.base_url, api_key="sk-secret-B", max_retries=0)
        hot_a = ChatOpenAI(model="gpt-test", base_url=a.base_url, api_key="sk-secret-A", max_retries=0,
                           temperature=0.9)
        first = evaluate_records(rec, on_a, evaluator_key(on_a), samples=1, cache=cache)
        second = evaluate_records(rec, on_b, evaluator_key(on_b), samples=1, cache=cache)
        assert first[0].answer_labels == ["Solved"] and second[0].answer_labels == ["Unsolved"]
        assert (len(a.chat_requests), len(b.chat_requests)) == (1, 1)
        evaluate_records(rec, hot_a, evaluator_key(hot_a), samples=1, cache=cache)
        assert len(a.chat_requests) == 2  # other sampling settings: asked again
        again = evaluate_records(rec, on_a, evaluator_key(on_a), samples=1, cache=cache)
        assert again[0].answer_labels == ["Solved"] and len(a.chat_requests) == 2 and cache.hits == 1
    ident = evaluator_identity(hot_a)
    assert ident["model"] == "gpt-test" and ident["base_url"] == a.base_url.rstrip("/")
    assert ident["sampling"] == {"temperature": 0.9}
    assert "sk-secret" not in evaluator_key(on_a) + evaluator_key(hot_a) + evaluator_key(on_b)
    cache.close()
    assert b"sk-secret" not in (tmp_path / "cache.sqlite").read_bytes()


def test_identity_drops_credentials_from_the_url() -> None:
    from langgraph_anytool.eval.identity import clean_url

    assert clean_url("https://user:pw@host.example:8443/v1/?api_key=abc#x") == "https://host.example:8443/v1"


def test_identity_reads_sampling_settings_only() -> None:
    from langgraph_anytool.eval.identity import evaluator_identity

    model = ChatOpenAI(model="m", base_url="http://127.0.0.1:9/v1", api_key="sk-secret", max_retries=0,
                       extra_body={"top_k": 20, "api_key": "sk-extra"}, reasoning_effort="low")
    ident = evaluator_identity(model.bind(temperature=0.3))  # a binding's kwargs count too
    assert ident["sampling"] == {"reasoning_effort": "low", "temperature": 0.3, "top_k": 20}
    assert "sk-" not in json.dumps(ident)


def test_passrate_cli_keys_the_cache_by_endpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`anytool eval passrate --evaluator openai:gpt-test` twice with one cache file, the endpoint moved between
    the runs (OPENAI_BASE_URL): the second run asks the second server and reports its verdict."""
    from langgraph_anytool.cli.app import main

    res = tmp_path / "r.jsonl"
    res.write_text(json.dumps({**record("q1", "It is 21 degrees.", [("f", "ok", "21")]), "model": "x"}) + "\n")
    cache = str(tmp_path / "c.sqlite")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    with OpenAIChatServer([_scripted_judge({"q1": "Solved"}, [])] * 2) as a, \
            OpenAIChatServer([_scripted_judge({"q1": "Unsolved"}, [])] * 2) as b:
        for server, rate in ((a, 100.0), (b, 0.0)):
            monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
            argv = ["eval", "passrate", str(res), "--evaluator", "openai:gpt-test", "--samples", "1", "--cache", cache]
            assert main([*argv, "--json"]) == 0
            data = json.loads(capsys.readouterr().out)
            assert data["overall"]["rate"] == rate and data["evaluator_identity"]["base_url"] == server.base_url.rstrip("/")
            assert data["cache"]["calls"] == 1 and len(server.chat_requests) == 1


def test_a_solve_without_finish_fails_eq1_without_a_solvability_check() -> None:
    """StableToolBench eval_pass_rate.py compute_pass_rate: `if "'name': 'Finish'" not in final_step: return ...
    TaskStatus.Solvable, AnswerStatus.Unsolved, "failed"` before any evaluator call. The evaluator here would call
    every task Unsolvable (which passes an Unsolved answer in Eq. 1), so only the rule keeps them failed:
    - n1: no solver attempt (a timeout): failed, no call;
    - n2: the last attempt ended on the call budget, no answer: failed, no call;
    - g1: Finish(give_up), empty answer: Unsolved by the empty-answer rule (no call), then check_task_solvable →
      Unsolvable → passed (1 evaluator call per sample).
    toolllm: 1 passed of 3 = 33.3 %; 2 samples → 2 evaluator calls in all."""
    from langgraph_anytool.models.testing import ScriptedChatModel

    model = ScriptedChatModel(replies=[AIMessage('{"task_status": "Unsolvable", "reason": "no such API"}')] * 2)
    timeout = {**record("n1", "", []), "status": "error", "trajectory": []}
    budget = record("n2", "", [("f", "ok", "{}")])
    budget["trajectory"][0]["finish_type"] = "call_budget"
    gave_up = record("g1", "", [("f", "ok", "{}")])
    gave_up["trajectory"][0]["finish_type"] = "give_up"
    out = evaluate_records([timeout, budget, gave_up], model, "scripted", samples=2, protocol="toolllm")
    assert [(v.answer_labels, v.task_labels) for v in out] == [
        (["Unsolved"] * 2, ["Solvable"] * 2), (["Unsolved"] * 2, ["Solvable"] * 2),
        (["Unsolved"] * 2, ["Unsolvable"] * 2)]
    assert len(model.calls) == 2
    _, overall = score(out, "toolllm", 2)
    assert (overall.passed, overall.failed) == (1, 2) and overall.rate == pytest.approx(100 / 3)


# ------------------------------------------------------------------------------------------------ the interval
def test_the_interval_over_queries_by_hand() -> None:
    """anytool on HAND: per query pass = [1, 0, 1, 0, 1]. A bootstrap resample's rate is K/5, K ~ Bin(5, 3/5):
    P(K = 0) = 0.4^5 = 0.0102 < 0.025 <= P(K <= 1) = 0.0870 → low 1/5; P(K = 5) = 0.6^5 = 0.0778 > 0.025 → high 1.
    So [20.0, 100.0] %. SoPR: per-query mean scores [2/3, 1/3, 1, 0, 5/6] (their mean is the 56.67 % above); its
    interval is that of a straightforward numpy bootstrap of those scores (seed 0, 10,000 resamples)."""
    import numpy as np

    groups, overall = score(verdicts(False), "anytool", 3)
    assert overall.interval is not None and (overall.interval.low, overall.interval.high) == (20.0, 100.0)
    assert groups[0].interval == overall.interval
    _, sopr = score(verdicts(False), "sopr", 3)
    scores = np.array([2 / 3, 1 / 3, 1.0, 0.0, 5 / 6])
    low, high = np.percentile(scores[np.random.default_rng(0).integers(0, 5, size=(10_000, 5))].mean(axis=1),
                              [2.5, 97.5])
    assert sopr.interval is not None
    assert (sopr.interval.low, sopr.interval.high) == pytest.approx((100 * low, 100 * high))
    assert sopr.std == pytest.approx(4.7140, abs=1e-3)  # beside the std over samples, unchanged
    assert score(verdicts(False), "anytool", 3, interval=False)[1].interval is None


def test_passrate_cli_prints_the_interval_and_lists_queries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from langgraph_anytool.cli.app import main

    res = tmp_path / "r.jsonl"
    res.write_text("".join(json.dumps({**record(q, "", []), "model": "x"}) + "\n" for q in ("q1", "q2")))
    args = ["eval", "passrate", str(res), "--offline", "--no-cache"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "95% CI" in out and "percentile bootstrap over the queries (10,000 resamples, seed 0)" in out
    assert "[0.0, 0.0]" in out  # both failed without an evaluator call: every resample's rate is 0
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["overall"]["interval"] == {"low": 0.0, "high": 0.0, "level": 0.95, "resamples": 10_000, "seed": 0,
                                           "method": "percentile bootstrap"}
    assert [(q["query_id"], q["value"]) for q in data["queries"]] == [("q1", 0.0), ("q2", 0.0)]
