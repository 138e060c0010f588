"""Issue 21, point 9: the token budget holds counting the call about to be made (its prompt, estimated), a query
over the documented size limit is refused before any model call, and `--timeout nan` is refused by argparse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langgraph_anytool.cli.app import main
from langgraph_anytool.cli.exits import EXIT_ALL_ERRORS


def _group(path: Path, query: str) -> Path:
    path.write_text(json.dumps([{"query_id": 1, "query": query}]), encoding="utf-8")
    return path


def test_a_1mb_query_is_refused_before_any_model_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Today: 381,262 tokens spent against a 200,000 budget (the query rides along in every call)."""
    big = "Convert 5 kilograms to pounds. " + "lorem ipsum dolor sit amet " * 38_000  # about 1 MB
    out = tmp_path / "r.jsonl"
    assert main(["eval", "run", "--queries", str(_group(tmp_path / "big.json", big)), "--offline", "--out", str(out),
                 "--no-progress"]) == EXIT_ALL_ERRORS  # the batch's only query failed
    rec = json.loads(out.read_text().splitlines()[0])
    assert rec["status"] == "error" and "the limit is 50,000 characters" in rec["reason"]
    assert rec["usage"].get("model_calls", 0) == 0
    capsys.readouterr()
    rc = main(["run", big, "--offline", "--no-cache"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err[-1].startswith("anytool: error: the query is") and "Traceback" not in "\n".join(err)


@pytest.mark.parametrize("budget", [6_000, 15_000, 30_000, 60_000])
def test_the_token_budget_holds_counting_the_next_call(tmp_path: Path, budget: int) -> None:
    """A long (but allowed) query whose every call carries ~3,000 tokens: today the check looked only at what was
    spent, so the call that crossed the budget was sent anyway (e.g. 33,056 spent of 30,000)."""
    query = "Convert 5 kilograms to pounds. " + "Please be precise about the conversion factor. " * 250
    out = tmp_path / "r.jsonl"
    assert main(["eval", "run", "--queries", str(_group(tmp_path / "q.json", query)), "--offline", "--out", str(out),
                 "--no-progress", "--max-tokens-per-query", str(budget), "--set", "solver=cot"]) == 0
    rec = json.loads(out.read_text().splitlines()[0])
    u = rec["usage"]
    # input tokens are counted before each call; a reply's own tokens only after it (no max_tokens here)
    largest_reply = max((r.get("output_tokens", 0) for r in u["roles"].values()), default=0)
    assert u["input_tokens"] <= budget and u["input_tokens"] + u["output_tokens"] <= budget + largest_reply, u
    if rec["status"] == "budget_exhausted":
        assert rec["stop_reason"] == "tokens" and "token budget" in rec["reason"]


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "-inf", "0"])
def test_timeout_nan_inf_and_negative_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  value: str) -> None:
    q = _group(tmp_path / "q.json", "Convert 5 kilograms to pounds.")
    rc = main(["eval", "run", "--queries", str(q), "--offline", "--out", str(tmp_path / "r.jsonl"), f"--timeout={value}"])
    err = capsys.readouterr().err
    assert rc == 2 and "--timeout" in err and ("finite" in err or "positive" in err), err
    assert not (tmp_path / "r.jsonl").exists()
