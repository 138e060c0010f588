"""`anytool eval compare`: a hand-made pair of results files (tests/data/compare) scored by a scripted evaluator
behind a loopback OpenAI-compatible server; every expected rate, interval and p-value is derived by hand in the
comments, the seeded bootstrap is checked against a straightforward numpy one, and each refusal has its test."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from langgraph_anytool.cli.app import main
from langgraph_anytool.sanitize.paths import query_page_name
from tests.servers import ChatReply, OpenAIChatServer

DATA = Path(__file__).resolve().parents[2] / "data" / "compare"

# The pair (a.jsonl, b.jsonl): ten queries, G1 = 101..106, G2 = 201..204. A failed query has an empty answer (no
# Finish answer: Unsolved without an evaluator call); the scripted evaluator calls every answer it sees Solved.
#            101 102 103 104 105 106 | 201 202 203 204
#   A pass:   1   1   0   0   0   1  |  1   0   0   1     G1 3/6 = 50.0 %, G2 2/4 = 50.0 %, all 5/10 = 50.0 %
#   B pass:   1   0   1   1   1   1  |  1   1   0   1     G1 5/6 = 83.3 %, G2 3/4 = 75.0 %, all 8/10 = 80.0 %
# Usage: A 1000 tokens, 10 model calls, $0.01 per query; B 1100 tokens, 12 calls in G1 and 10 in G2, $0.012.


def judge(body: dict[str, Any]) -> ChatReply:
    """Stage 1: "(unsure)" in the answer → Unsure, else Solved; stage 2 (the whole working) → Unsure."""
    system = body["messages"][0]["content"]
    user = body["messages"][-1]["content"]
    if "whole" in system:
        return ChatReply(content=json.dumps({"reason": "scripted", "label": "Unsure"}))
    label = "Unsure" if "(unsure)" in user else "Solved"
    return ChatReply(content=json.dumps({"reason": "scripted", "label": label}))


@pytest.fixture
def evaluator(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIChatServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    with OpenAIChatServer(policy=judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        yield server


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def compare_json(capsys: pytest.CaptureFixture[str], a: Path, b: Path, *extra: str) -> dict[str, Any]:
    code, out, err = run(capsys, "eval", "compare", str(a), str(b), "--evaluator", "openai:gpt-test", "--samples",
                         "1", "--no-cache", "--json", *extra)
    assert code == 0, err
    return json.loads(out)


def by_group(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {g["group"]: g for g in [*data["groups"], data["overall"]]}


def test_compare_by_hand(evaluator: OpenAIChatServer, capsys: pytest.CaptureFixture[str]) -> None:
    data = compare_json(capsys, DATA / "a.jsonl", DATA / "b.jsonl")
    # 5 answers in A and 8 in B reach the evaluator, one sample each; the empty answers cost no call
    assert len(evaluator.chat_requests) == 13
    g = by_group(data)
    assert data["matched"] == 10 and (data["only_a"], data["only_b"]) == (0, 0) and data["test"] == "McNemar exact"
    assert [v for x in g.values() for v in (x["rate_a"], x["rate_b"], x["diff"])] == pytest.approx(
        [50.0, 250 / 3, 100 / 3, 50.0, 75.0, 25.0, 50.0, 80.0, 30.0])
    # discordant pairs: G1: 102 passed in A only (b = 1); 103, 104, 105 in B only (c = 3); G2: 202 (c = 1)
    assert [(x["a_only"], x["b_only"]) for x in g.values()] == [(1, 3), (0, 1), (1, 4)]
    # exact McNemar, X ~ Binomial(b + c, 1/2), p = min(1, 2 P(X <= min(b, c))):
    #   G1: n = 4, P(X <= 1) = (1 + 4)/16 → p = 10/16 = 0.625
    #   G2: n = 1, P(X <= 0) = 1/2 → p = 2 · 1/2 = 1
    #   overall: n = 5, P(X <= 1) = (1 + 5)/32 → p = 12/32 = 0.375
    assert [x["p_value"] for x in g.values()] == [0.625, 1.0, 0.375]
    # Paired bootstrap of the mean difference d = B − A. A resample of n pairs holds M "−1", P "+1", the rest 0,
    # (M, P, Z) ~ Multinomial(n; m/n, p/n, z/n), and its mean is (P − M)/n: the exact law (`exact_law` below)
    # gives these 2.5 % / 97.5 % quantiles, each atom boundary more than 0.007 away from 0.025 / 0.975 (the
    # Monte Carlo error of 10,000 resamples there is about 0.0016):
    #   G1 (m, p, z) = (1, 3, 2): CDF(−1/2) = 0.0092, CDF(−1/3) = 0.0327; CDF(2/3) = 0.9219, CDF(5/6) = 0.9844
    #      → [−1/3, 5/6] = [−33.3, +83.3] pp
    #   G2 (0, 1, 3): the mean is K/4, K ~ Bin(4, 1/4): P(K = 0) = 0.316; P(K = 4) = 0.004, P(K >= 3) = 0.051
    #      → [0, 3/4] = [+0.0, +75.0] pp
    #   overall (1, 4, 5): CDF(−0.2) = 0.0144, CDF(−0.1) = 0.0438; CDF(0.6) = 0.9634, CDF(0.7) = 0.9909
    #      → [−0.1, 0.7] = [−10.0, +70.0] pp
    expected = {"G1": (-100 / 3, 250 / 3), "G2": (0.0, 75.0), "overall": (-10.0, 70.0)}
    for name, (low, high) in expected.items():
        assert (g[name]["interval"]["low"], g[name]["interval"]["high"]) == pytest.approx((low, high), abs=1e-9)
    assert exact_law(6, 1, 3) == (Fraction(-1, 3), Fraction(5, 6))
    assert exact_law(4, 0, 1) == (Fraction(0), Fraction(3, 4))
    assert exact_law(10, 1, 4) == (Fraction(-1, 10), Fraction(7, 10))
    # usage: every token difference is +100 and every cost difference +$0.002 → a zero-width interval there;
    # model calls: G1 all +2, G2 all 0; overall six +2 and four 0: a resample's median (mean of its 5th and 6th
    # values) is 0 when K <= 4 of its 10 are +2, 1 when K = 5, 2 when K >= 6, K ~ Bin(10, 0.6): P(K <= 4) = 0.166,
    # P(K >= 6) = 0.633 → both tails land on the end atoms → [0, 2]; the median difference is 2
    metrics = {(name, m["metric"]): m for name, x in g.items() for m in x["metrics"]}
    assert metrics[("overall", "tokens")]["median_diff"] == 100.0
    assert metrics[("overall", "tokens")]["interval"]["low"] == metrics[("overall", "tokens")]["interval"]["high"] == 100
    assert (metrics[("overall", "tokens")]["median_a"], metrics[("overall", "tokens")]["median_b"]) == (1000, 1100)
    calls = metrics[("overall", "model calls")]
    assert (calls["median_diff"], calls["interval"]["low"], calls["interval"]["high"]) == (2.0, 0.0, 2.0)
    assert metrics[("G1", "model calls")]["interval"]["low"] == metrics[("G1", "model calls")]["interval"]["high"] == 2
    assert metrics[("G2", "model calls")]["median_diff"] == 0.0
    assert metrics[("overall", "cost (USD)")]["median_diff"] == pytest.approx(0.002)
    # the flipped queries, each direction
    assert [(f["group"], f["query_id"]) for f in data["lost"]] == [("G1", "102")]
    assert [(f["group"], f["query_id"]) for f in data["gained"]] == [("G1", "103"), ("G1", "104"), ("G1", "105"),
                                                                     ("G2", "202")]


def exact_law(n: int, minus: int, plus: int) -> tuple[Fraction, Fraction]:
    """The exact percentile interval of the bootstrap mean of n paired differences (`minus` of −1, `plus` of +1):
    the multinomial law of (M, P, Z), summed in exact rationals, and its 2.5 % / 97.5 % quantiles."""
    from math import factorial

    law: dict[Fraction, Fraction] = {}
    pm, pp = Fraction(minus, n), Fraction(plus, n)
    for m in range(n + 1):
        for p in range(n + 1 - m):
            z = n - m - p
            pr = Fraction(factorial(n), factorial(m) * factorial(p) * factorial(z)) * pm ** m * pp ** p * (1 - pm - pp) ** z
            law[Fraction(p - m, n)] = law.get(Fraction(p - m, n), Fraction(0)) + pr
    cdf, total, out = {}, Fraction(0), []
    for x in sorted(law):
        total += law[x]
        cdf[x] = total
    for q in (Fraction(1, 40), Fraction(39, 40)):
        assert all(abs(c - q) > Fraction(7, 1000) for c in cdf.values())
        out.append(next(x for x in sorted(cdf) if cdf[x] >= q))
    return out[0], out[1]


def test_seeded_interval_equals_a_straightforward_numpy_bootstrap(evaluator: OpenAIChatServer,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    data = compare_json(capsys, DATA / "a.jsonl", DATA / "b.jsonl", "--seed", "11", "--resamples", "5000")
    # B − A per query, in key order (G1/101 … G2/204): the hand-made table above
    d = np.array([0, -1, 1, 1, 1, 0, 0, 1, 0, 0], dtype=float)
    idx = np.random.default_rng(11).integers(0, 10, size=(5000, 10))
    low, high = np.percentile(d[idx].mean(axis=1), [2.5, 97.5])
    ci = data["overall"]["interval"]
    assert (ci["low"], ci["high"]) == pytest.approx((100 * low, 100 * high), abs=1e-9)
    assert (ci["seed"], ci["resamples"], ci["method"]) == (11, 5000, "percentile bootstrap")


@pytest.mark.parametrize("protocol", ["anytool", "toolllm", "sopr"])
def test_pass_rates_equal_what_eval_passrate_prints(protocol: str, tmp_path: Path, evaluator: OpenAIChatServer,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The same rules decide a query in both commands: per group, compare's A and B rates are passrate's rates of
    each file (three samples; a few answers Unsure, so toolllm flips its seeded coins and SoPR scores 0.5)."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for src, dst in ((DATA / "a.jsonl", a), (DATA / "b.jsonl", b)):
        lines = [json.loads(x) for x in src.read_text().splitlines()]
        for r in lines:
            if r["query_id"] in ("104", "201") and r["answer"]:
                r["answer"] += " (unsure)"
        dst.write_text("".join(json.dumps(r) + "\n" for r in lines))
    cache = str(tmp_path / "cache.sqlite")
    rates = {}
    for side, path in (("a", a), ("b", b)):
        code, out, err = run(capsys, "eval", "passrate", str(path), "--evaluator", "openai:gpt-test", "--protocol",
                             protocol, "--cache", cache, "--json")
        assert code == 0, err
        rates[side] = {g["group"]: g["rate"] for g in [*json.loads(out)["groups"], json.loads(out)["overall"]]}
    asked = len(evaluator.chat_requests)
    code, out, err = run(capsys, "eval", "compare", str(a), str(b), "--evaluator", "openai:gpt-test", "--protocol",
                         protocol, "--cache", cache, "--json")
    assert code == 0, err
    assert len(evaluator.chat_requests) == asked  # every verdict came from passrate's cache
    g = by_group(json.loads(out))
    for name in ("G1", "G2", "overall"):
        assert (g[name]["rate_a"], g[name]["rate_b"]) == pytest.approx((rates["a"][name], rates["b"][name]))
    if protocol == "sopr":  # 104 in B: Unsure × 3 → 0.5; 201 in A and B → 0.5
        assert rates["b"]["G1"] == pytest.approx(100 * 4.5 / 6) and rates["a"]["G2"] == pytest.approx(100 * 1.5 / 4)


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def rec(qid: str, answer: str, group: str = "S") -> dict[str, Any]:
    return {"group": group, "query_id": qid, "query": f"question {qid}", "answer": answer,
            "status": "solved" if answer else "gave_up", "trajectory": []}


def test_sopr_is_compared_by_mean_score_and_the_sign_test(tmp_path: Path, evaluator: OpenAIChatServer,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Per-query SoPR scores (Solved 1, Unsure 0.5, Unsolved 0, mean over samples): A = [1, 0.5, 0, 1],
    B = [1, 1, 0.5, 1]. Means 2.5/4 = 62.5 % and 3.5/4 = 87.5 %, +25.0 pp. Scores rose for s2, s3 and fell for
    none: the exact sign test on 2 changed queries, p = 2 · P(X <= 0) = 2 · 1/4 = 0.5 (McNemar's test needs
    pass/fail; on 0/1 outcomes it is this same test). Differences [0, .5, .5, 0]: a resample's mean is 0.5 · K/4,
    K ~ Bin(4, 1/2), P(K = 0) = P(K = 4) = 1/16 = 0.0625 > 0.025 → [0, 0.5] = [+0.0, +50.0] pp."""
    a = write(tmp_path / "a.jsonl", [rec("s1", "x"), rec("s2", "x (unsure)"), rec("s3", ""), rec("s4", "x")])
    b = write(tmp_path / "b.jsonl", [rec("s1", "x"), rec("s2", "x"), rec("s3", "x (unsure)"), rec("s4", "x")])
    data = compare_json(capsys, a, b, "--protocol", "sopr")
    o = data["overall"]
    assert (o["rate_a"], o["rate_b"], o["diff"]) == (62.5, 87.5, 25.0)
    assert (o["a_only"], o["b_only"], o["p_value"]) == (0, 2, 0.5) and data["test"] == "sign test (exact)"
    assert (o["interval"]["low"], o["interval"]["high"]) == (0.0, 50.0)
    assert [(f["query_id"], f["a"], f["b"]) for f in data["gained"]] == [("s2", 0.5, 1.0), ("s3", 0.0, 0.5)]
    code, out, _ = run(capsys, "eval", "compare", str(a), str(b), "--evaluator", "openai:gpt-test", "--samples", "1",
                       "--no-cache", "--protocol", "sopr")
    assert code == 0 and "sign-test p" in out and "McNemar does not apply" in out and "score rose (B > A): 2" in out


def test_the_three_outputs(evaluator: OpenAIChatServer, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "compare", str(DATA / "a.jsonl"), str(DATA / "b.jsonl"), "--evaluator", "openai:gpt-test",
            "--samples", "1", "--no-cache"]
    code, table, _ = run(capsys, *args)
    assert code == 0
    rows: dict[str, list[str]] = {}
    for line in table.splitlines():  # the rates table comes first; the usage table repeats the group names
        if line.startswith(("G1 ", "G2 ", "overall")):
            rows.setdefault(line.split()[0], line.split())
    assert rows["overall"][:9] == ["overall", "10", "50.0", "80.0", "+30.0", "[-10.0,", "+70.0]", "1", "4"]
    assert rows["overall"][9] == "0.3750"
    assert "passed in A, failed in B: 1" in table and "failed in A, passed in B: 4" in table
    code, md, _ = run(capsys, *args, "--markdown")
    assert code == 0
    assert "| overall | 10 | 50.0 | 80.0 | +30.0 | [-10.0, +70.0] | 1 | 4 | 0.3750 |" in md
    assert "| --- | ---: |" in md and "- G2/202" in md
    assert run(capsys, *args, "--markdown", "--json")[0] == 2  # one format at a time


def test_flipped_queries_link_to_their_report_pages(tmp_path: Path, evaluator: OpenAIChatServer,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    ra, rb = tmp_path / "report-a", tmp_path / "report-b"
    for d in (ra, rb):
        d.mkdir()
        for qid in ("102", "103", "104", "105"):
            (d / query_page_name("G1", qid)).write_text("<html></html>")
    data = compare_json(capsys, DATA / "a.jsonl", DATA / "b.jsonl", "--report", str(ra), str(rb))
    assert data["lost"][0]["pages"] == {"a": str(ra / "G1+102.html"), "b": str(rb / "G1+102.html")}
    assert data["gained"][-1]["pages"] == {}  # G2/202 has no page in either folder
    assert any("1 of the 5 changed queries have no page" in n for n in data["notes"])
    code, md, _ = run(capsys, "eval", "compare", str(DATA / "a.jsonl"), str(DATA / "b.jsonl"), "--evaluator",
                      "openai:gpt-test", "--samples", "1", "--no-cache", "--markdown", "--report", str(ra))
    assert code == 0 and f"- G1/103: [A]({ra.as_posix()}/G1+103.html), [B]({ra.as_posix()}/G1+103.html)" in md


def test_passrate_reports_compare_without_an_evaluator(tmp_path: Path, evaluator: OpenAIChatServer,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """`eval passrate --json` lists every query's outcome and usage; two such reports compare offline, to the
    same figures as the results files."""
    reports = []
    for side in ("a", "b"):
        code, out, err = run(capsys, "eval", "passrate", str(DATA / f"{side}.jsonl"), "--evaluator",
                             "openai:gpt-test", "--samples", "1", "--no-cache", "--json")
        assert code == 0, err
        data = json.loads(out)
        assert len(data["queries"]) == 10 and data["catalogs"] == ["builtin (fingerprint hand0made0cat000)"]
        reports.append(tmp_path / f"{side}.json")
        reports[-1].write_text(out)
    asked = len(evaluator.chat_requests)
    code, out, err = run(capsys, "eval", "compare", *map(str, reports), "--json")
    assert code == 0, err
    assert len(evaluator.chat_requests) == asked
    from_reports = json.loads(out)
    from_results = compare_json(capsys, DATA / "a.jsonl", DATA / "b.jsonl")
    for key in ("groups", "overall", "lost", "gained"):
        assert from_reports[key] == from_results[key]


# ------------------------------------------------------------------------------------------------ refusals
def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code, out, err = run(capsys, "eval", "compare", *argv)
    assert code == 2 and out == ""
    line = err.strip()
    assert line.startswith("anytool: error: ") and "\n" not in line  # one line
    return line


def test_refused_when_no_query_id_matches(tmp_path: Path, evaluator: OpenAIChatServer,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    other = write(tmp_path / "other.jsonl", [rec("z1", "x", "G9"), rec("z2", "x", "G9")])
    line = refused(capsys, str(DATA / "a.jsonl"), str(other), "--evaluator", "openai:gpt-test")
    assert "no query ids match" in line and "10 unmatched in A, 2 unmatched in B" in line
    assert evaluator.chat_requests == []  # refused before any evaluator call


def test_unmatched_queries_are_left_out_and_counted(tmp_path: Path, evaluator: OpenAIChatServer,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    lines = (DATA / "b.jsonl").read_text().splitlines()
    b = tmp_path / "b.jsonl"
    b.write_text("\n".join(lines[1:]) + "\n" + json.dumps(rec("999", "x", "G2")) + "\n")  # no 101; a 999
    data = compare_json(capsys, DATA / "a.jsonl", b)
    assert (data["matched"], data["only_a"], data["only_b"]) == (9, 1, 1)
    assert any("1 queries only in A, 1 only in B" in n for n in data["notes"])
    assert len(evaluator.chat_requests) == 4 + 7  # 101 and 999 never reach the evaluator


def test_refused_when_the_catalogs_differ(tmp_path: Path, evaluator: OpenAIChatServer,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "b.jsonl"
    other.write_text((DATA / "b.jsonl").read_text().replace("hand0made0cat000", "another0catalog0"))
    args = [str(DATA / "a.jsonl"), str(other), "--evaluator", "openai:gpt-test", "--samples", "1", "--no-cache"]
    line = refused(capsys, *args)
    assert "catalog: builtin (fingerprint hand0made0cat000) vs builtin (fingerprint another0catalog0)" in line
    assert "--allow-mismatch" in line and evaluator.chat_requests == []
    code, out, _ = run(capsys, "eval", "compare", *args, "--allow-mismatch")
    assert code == 0 and "MISMATCH (allowed): catalog:" in out and "overall       10" in out
    # records written before the fingerprint was recorded: compared by catalog name and size
    old = [{k: v for k, v in json.loads(x).items() if k != "catalog_fingerprint"}
           for x in (DATA / "a.jsonl").read_text().splitlines()]
    a_old = write(tmp_path / "a_old.jsonl", old)
    b_old = write(tmp_path / "b_old.jsonl", [{**r, "catalog_apis": 41} for r in old])
    line = refused(capsys, str(a_old), str(b_old), "--evaluator", "openai:gpt-test")
    assert "catalog: builtin (40 APIs, no fingerprint recorded) vs builtin (41 APIs" in line


def passrate_report(capsys: pytest.CaptureFixture[str], path: Path, out: Path, *args: str) -> Path:
    code, text, err = run(capsys, "eval", "passrate", str(path), "--samples", "1", "--no-cache", "--json", *args)
    assert code == 0, err
    out.write_text(text)
    return out


def test_refused_when_the_evaluators_differ(tmp_path: Path, evaluator: OpenAIChatServer,
                                            capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # A scored by the offline stand-in (a passrate report), B to be scored by the loopback model
    a = passrate_report(capsys, DATA / "a.jsonl", tmp_path / "a.json", "--offline")
    line = refused(capsys, str(a), str(DATA / "b.jsonl"), "--evaluator", "openai:gpt-test", "--samples", "1")
    assert "evaluator: " in line and "offline-policy" in line and "gpt-test" in line
    assert evaluator.chat_requests == []
    # the same model name on another endpoint is another evaluator
    b = passrate_report(capsys, DATA / "b.jsonl", tmp_path / "b.json", "--evaluator", "openai:gpt-test")
    with OpenAIChatServer(policy=judge) as elsewhere:
        monkeypatch.setenv("OPENAI_BASE_URL", elsewhere.base_url)
        a2 = passrate_report(capsys, DATA / "a.jsonl", tmp_path / "a2.json", "--evaluator", "openai:gpt-test")
    line = refused(capsys, str(a2), str(b))
    assert "evaluator: " in line and elsewhere.base_url.rstrip("/") in line


def test_refused_when_the_protocols_differ(tmp_path: Path, evaluator: OpenAIChatServer,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    a = passrate_report(capsys, DATA / "a.jsonl", tmp_path / "a.json", "--evaluator", "openai:gpt-test")
    b = passrate_report(capsys, DATA / "b.jsonl", tmp_path / "b.json", "--evaluator", "openai:gpt-test",
                        "--protocol", "sopr")
    line = refused(capsys, str(a), str(b))
    assert "protocol: anytool, 1 samples, exclusion words vs sopr, 1 samples" in line
    # a report against a results file scored here with other samples
    line = refused(capsys, str(a), str(DATA / "b.jsonl"), "--evaluator", "openai:gpt-test", "--samples", "3")
    assert "scored with samples 1; --samples 3 cannot re-score it" in line
    # --allow-mismatch lets a deliberate comparison through, saying so
    code, out, _ = run(capsys, "eval", "compare", str(a), str(b), "--allow-mismatch")
    assert code == 0 and "MISMATCH (allowed): protocol:" in out


def test_refused_bad_report_folders_and_files(tmp_path: Path, evaluator: OpenAIChatServer,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(DATA / "a.jsonl"), str(DATA / "b.jsonl"), "--evaluator", "openai:gpt-test"]
    assert "not a folder" in refused(capsys, *args, "--report", str(tmp_path / "missing"))
    assert "one folder" in refused(capsys, *args, "--report", str(tmp_path), str(tmp_path), str(tmp_path))
    assert "does not exist" in refused(capsys, str(tmp_path / "nope.jsonl"), str(DATA / "b.jsonl"), "--offline")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert "no results records" in refused(capsys, str(empty), str(DATA / "b.jsonl"), "--offline")
    copy = shutil.copy(DATA / "a.jsonl", tmp_path / "a.jsonl")
    assert "no evaluator" in refused(capsys, str(copy), str(DATA / "b.jsonl"))
    assert evaluator.chat_requests == []


def test_refused_bad_passrate_reports(tmp_path: Path, evaluator: OpenAIChatServer,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A pass-rate report is read bounded and checked field by field: a bad one is one line naming file and field;
    a FIFO given as a side is refused, never waited on."""
    import os

    good = {"protocol": "anytool", "samples": 1, "overall": {}, "queries": [{"group": "G1", "query_id": "101", "value": 1.0}]}
    no_list = write_json(tmp_path / "old.json", {k: v for k, v in good.items() if k != "queries"})
    line = refused(capsys, str(no_list), str(DATA / "b.jsonl"), "--offline")
    assert "old.json" in line and "without its per-query list" in line
    bad_value = write_json(tmp_path / "bad.json", {**good, "queries": [{**good["queries"][0], "value": 7}]})
    line = refused(capsys, str(bad_value), str(DATA / "b.jsonl"), "--offline")
    assert "bad.json" in line and "queries[0].value" in line
    bad_protocol = write_json(tmp_path / "proto.json", {**good, "protocol": "winrate"})
    assert "protocol" in refused(capsys, str(bad_protocol), str(DATA / "b.jsonl"), "--offline")
    fifo = tmp_path / "a.fifo"
    os.mkfifo(fifo)
    assert "not a regular file" in refused(capsys, str(fifo), str(DATA / "b.jsonl"), "--offline")
    assert evaluator.chat_requests == []


def write_json(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data, indent=2))
    return path
