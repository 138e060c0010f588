"""`anytool eval run`: settings, results file, resume, timeout, kill -9, reference mode."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.config import ConfigError
from langgraph_anytool.eval.anytool.results import ResultsWriter, read_results
from langgraph_anytool.eval.anytool.runner import BatchOptions, parse_settings, run_batch
from langgraph_anytool.eval.datasets import load_queries
from langgraph_anytool.models.testing import ScriptedChatModel

ROOT = Path(__file__).resolve().parents[3]

QUERIES = [
    ("Convert 26.2 miles to kilometers.", [["Universal Unit Converter", "Convert Units"]]),
    ("What day of the week was 2024-02-29?", [["Date Calculator", "Day of Week"]]),
    ("What is the geographic midpoint between Paris and Berlin?", [["Geo Distance Calculator", "Geographic Midpoint"]]),
    ("Convert 100 degrees Fahrenheit to Celsius.", [["Universal Unit Converter", "Convert Units"]]),
    ("What day of the week is 2030-01-01?", [["Date Calculator", "Day of Week"]]),
    ("Convert 5 kilograms to pounds.", [["Universal Unit Converter", "Convert Units"]]),
]


def write_group(path: Path, n: int = len(QUERIES)) -> Path:
    items = [{"query": q, "query_id": 100 + i, "api_list": [{"tool_name": t, "api_name": a} for t, a in rel],
              "relevant APIs": rel} for i, (q, rel) in enumerate(QUERIES[:n])]
    path.write_text(json.dumps(items))
    return path


@pytest.fixture(scope="module")
def builtin() -> Catalog:
    return Catalog.builtin()


def test_parse_settings_validates_against_the_config() -> None:
    assert parse_settings(["max_api_pool=16", "solver=cot", "seed_with_search=false", "max-reflections=0"]) == {
        "max_api_pool": 16, "solver": "cot", "seed_with_search": False, "max_reflections": 0}
    with pytest.raises(ConfigError, match=r"no field 'max_pool'.*max_api_pool"):
        parse_settings(["max_pool=3"])
    with pytest.raises(ConfigError, match="expected key=value"):
        parse_settings(["max_api_pool"])
    with pytest.raises(ConfigError, match="max_api_pool"):
        parse_settings(["max_api_pool=-2"])
    with pytest.raises(ConfigError, match="solver"):
        parse_settings(["solver=magic"])


def test_results_writer_drops_a_half_written_line(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text('{"group": "g", "query_id": "1", "status": "solved"}\n{"group": "g", "query_id": "2", "sta')
    assert [r["query_id"] for r in read_results(out)] == ["1"]
    with ResultsWriter(out) as w:
        assert w.is_finished("g", "1") and not w.is_finished("g", "2")
        w.append({"group": "g", "query_id": "2", "status": "unsolved"})
    lines = out.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["query_id"] == "2"


def test_batch_writes_one_record_per_query_and_resumes(tmp_path: Path, builtin: Catalog) -> None:
    from langgraph_anytool.offline import OfflinePolicyModel

    queries = load_queries(write_group(tmp_path / "mini.json", 3))
    model = OfflinePolicyModel(catalog=builtin)
    out = tmp_path / "r.jsonl"
    with ResultsWriter(out) as w:
        tally = asyncio.run(run_batch(queries[:2], builtin, model, w, BatchOptions(concurrency=2)))
    assert (tally.done, tally.skipped) == (2, 0)
    with ResultsWriter(out) as w:
        tally = asyncio.run(run_batch(queries, builtin, model, w, BatchOptions(concurrency=2)))
    assert (tally.done, tally.skipped) == (1, 2)
    recs = read_results(out)
    assert sorted(r["query_id"] for r in recs) == ["100", "101", "102"]
    assert len(out.read_text().splitlines()) == 3
    r = next(r for r in recs if r["query_id"] == "100")
    assert r["group"] == "mini" and r["relevant"] == ["Units_Conversion/universal_unit_converter/convert_units"]
    assert r["status"] in ("solved", "unsolved", "gave_up") and r["error"] is None
    assert r["usage"]["model_calls"] > 0 and r["usage"]["input_tokens"] > 0 and r["trajectory"]
    assert r["pool_recall"] == (1.0 if r["relevant"][0] in r["pool"] else 0.0)
    assert r["config"]["max_api_pool"] == 64 and r["mode"] == "whole"


def test_a_slow_query_times_out_and_the_batch_goes_on(tmp_path: Path, builtin: Catalog) -> None:
    queries = load_queries(write_group(tmp_path / "slow.json", 2))
    model = ScriptedChatModel(responder=lambda msgs, tools: (_ for _ in ()).throw(AssertionError("unused")),
                              latency=3.0)
    out = tmp_path / "r.jsonl"
    t0 = time.monotonic()
    with ResultsWriter(out) as w:
        tally = asyncio.run(run_batch(queries, builtin, model, w, BatchOptions(concurrency=2, timeout=0.5)))
    assert time.monotonic() - t0 < 10
    recs = read_results(out)
    assert [r["status"] for r in recs] == ["timeout", "timeout"] and tally.count("timeout") == 2
    assert "timed out after 0.5 s" in recs[0]["error"]


def test_reference_mode_solves_with_each_querys_api_list(tmp_path: Path, builtin: Catalog) -> None:
    """ToolBench's setting: no retrieval, the solver gets the query's api_list (mapped to catalog API ids)."""
    from langgraph_anytool.offline import OfflinePolicyModel

    queries = load_queries(write_group(tmp_path / "ref.json", 2))
    out = tmp_path / "r.jsonl"
    with ResultsWriter(out) as w:
        asyncio.run(run_batch(queries, builtin, OfflinePolicyModel(catalog=builtin), w,
                              BatchOptions(mode="reference", concurrency=2)))
    recs = read_results(out)
    assert [r["mode"] for r in recs] == ["reference", "reference"]
    for r in recs:
        assert r["pool"] == r["relevant"] and r["pool_recall"] == 1.0  # exactly the query's own APIs
        assert r["error"] is None and r["usage"]["model_calls"] > 0
        assert r["config"]["retriever"] == "reference"

def test_cli_set_error_is_one_line(tmp_path: Path) -> None:
    from langgraph_anytool.cli.app import main

    q = write_group(tmp_path / "g.json", 1)
    assert main(["eval", "run", "--queries", str(q), "--offline", "--set", "nope=1", "--out",
                 str(tmp_path / "r.jsonl")]) == 2


@pytest.mark.slow
def test_kill_9_mid_batch_then_resume_redoes_nothing_finished(tmp_path: Path) -> None:
    q = write_group(tmp_path / "k.json")
    out = tmp_path / "r.jsonl"
    cmd = [sys.executable, "-m", "langgraph_anytool.cli", "eval", "run", "--queries", str(q), "--offline",
           "--concurrency", "1", "--out", str(out), "--no-progress"]
    env = {**os.environ, "ANYTOOL_EMBEDDINGS": "none"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not out.exists() or len(out.read_text().splitlines()) < 2):
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = out.read_text().splitlines()
    assert 2 <= len(before) < len(QUERIES), "kill -9 came too late to test a resume"
    with out.open("a") as f:  # as if the kill had cut a line in half
        f.write('{"group": "k", "query_id": "105", "status": "sol')
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    after = out.read_text().splitlines()
    assert after[: len(before)] == before  # finished records untouched
    ids = [json.loads(line)["query_id"] for line in after]
    assert sorted(ids) == [str(100 + i) for i in range(len(QUERIES))]  # each query exactly once
    assert f"{len(QUERIES) - len(before)} queries run now, {len(before)} already" in done.stdout


def test_cli_virtual_execution_needs_a_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from langgraph_anytool.cli.app import main

    monkeypatch.delenv("ANYTOOL_VIRTUAL_URL", raising=False)
    q = write_group(tmp_path / "g.json", 1)
    assert main(["eval", "run", "--queries", str(q), "--offline", "--execution", "virtual", "--out",
                 str(tmp_path / "r.jsonl"), "--no-progress"]) == 2
    assert "--virtual-url" in capsys.readouterr().err


def test_db_returns_a_finished_thread_without_running_it_again(tmp_path: Path, builtin: Catalog) -> None:
    """The record of a finished query was lost (crash between the end of the run and the write): with --db the
    re-run takes the finished state from the checkpoint and makes no model call."""
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from langgraph_anytool.offline import OfflinePolicyModel

    queries = load_queries(write_group(tmp_path / "db.json", 1))

    async def go(model: object, out: Path) -> None:
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "ck.sqlite")) as saver:
            with ResultsWriter(out) as w:
                await run_batch(queries, builtin, model, w, BatchOptions(model_label="m"), checkpointer=saver)

    asyncio.run(go(OfflinePolicyModel(catalog=builtin), tmp_path / "a.jsonl"))
    silent = ScriptedChatModel(replies=[])  # any call would fail the query
    asyncio.run(go(silent, tmp_path / "b.jsonl"))
    (a,), (b,) = read_results(tmp_path / "a.jsonl"), read_results(tmp_path / "b.jsonl")
    assert b["error"] is None and b["answer"] == a["answer"] and b["status"] == a["status"]
    assert silent.calls == []


# ------------------------------------------------------------------------------------------------ errors and retries
class FlakyEndpoint:
    """A scripted model for reference-mode runs: the solver answers at once and the judge accepts, except that the
    solver's call fails with `ModelCallError(kind)` for the queries in `failing`; records (role, query) per call."""

    def __init__(self, failing: dict[str, str]) -> None:
        self.failing = failing
        self.seen: list[tuple[str, str]] = []
        self.model = ScriptedChatModel(responder=self.reply)

    def reply(self, messages: list[Any], tools: list[str], meta: dict[str, Any]) -> Any:
        from langgraph_anytool.models.llm import ModelCallError
        from langgraph_anytool.models.testing import ai, call

        query = str(meta["inputs"].get("query", ""))
        self.seen.append((str(meta["role"]), query))
        if meta["role"] == "judge":
            return ai('{"label": "Solved", "reason": "answers the question"}')
        if query in self.failing:
            raise ModelCallError(self.failing[query], f"injected for {query[:20]!r}")
        return ai("", call("Finish", return_type="give_answer", final_answer=f"the answer to: {query}"))

    def queries(self) -> set[str]:
        return {q for _, q in self.seen}


def test_errors_are_recorded_by_kind_and_a_resume_reruns_exactly_the_transport_ones(
        tmp_path: Path, builtin: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from langgraph_anytool.cli.app import main
    from langgraph_anytool.eval.anytool.runner import summary_table

    queries = load_queries(write_group(tmp_path / "g.json", 4))
    limited, refused = queries[1].query, queries[2].query
    out = tmp_path / "r.jsonl"

    async def batch(endpoint: FlakyEndpoint, **options: Any) -> Any:  # a persistent checkpointer, as with --db
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "ck.sqlite")) as saver:
            with ResultsWriter(out) as w:
                return await run_batch(queries, builtin, endpoint.model, w,
                                       BatchOptions(mode="reference", concurrency=2, **options), checkpointer=saver)

    first = FlakyEndpoint({limited: "rate_limited", refused: "auth"})
    tally = asyncio.run(batch(first))
    assert (tally.done, tally.skipped) == (4, 0)  # the batch finished despite the failures
    recs = {r["query"]: r for r in read_results(out)}
    assert (recs[limited]["status"], recs[limited]["error_kind"]) == ("error", "rate_limited")
    assert "rate_limited: injected" in recs[limited]["reason"]
    assert (recs[refused]["status"], recs[refused]["error_kind"]) == ("error", "auth")
    assert {recs[q.query]["status"] for q in (queries[0], queries[3])} == {"solved"}
    assert recs[queries[0].query]["error_kind"] is None and recs[queries[0].query]["attempt"] == 1
    assert tally.errors_text() == "2 errors (auth 1, rate_limited 1)"
    assert "errors: 2 errors (auth 1, rate_limited 1)" in summary_table(tally)

    # the endpoint recovers: resuming runs the rate-limited and the refused query again, and nothing else
    second = FlakyEndpoint({refused: "auth"})
    tally = asyncio.run(batch(second))
    assert (tally.done, tally.skipped, tally.rerun) == (2, 2, 2)
    assert second.queries() == {limited, refused}  # model calls only for those queries
    recs = {r["query"]: r for r in read_results(out)}
    assert len(recs) == 4 and len(out.read_text().splitlines()) == 6  # the newer record supersedes the older
    assert (recs[limited]["status"], recs[limited]["error_kind"], recs[limited]["attempt"]) == ("solved", None, 2)
    assert recs[refused]["status"] == "error"  # the key is still refused: kept (no query caused it)

    # every reader takes the newer record
    capsys.readouterr()
    assert main(["eval", "stats", str(out), "--json", "--quiet"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["overall"]["queries"] == 4 and stats["overall"]["statuses"] == {"solved": 3, "error": 1}
    assert main(["eval", "passrate", str(out), "--offline", "--no-cache", "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["overall"]["queries"] == 4
    conv = tmp_path / "conv"
    assert main(["eval", "convert", str(out), "--to", "tooleval", "--out", str(conv), "--quiet"]) == 0
    assert len(json.loads((conv / "g.json").read_text())) == 4

    # a refused key is no finished query either: once the key is taken, the default policy runs it again
    third = FlakyEndpoint({})
    tally = asyncio.run(batch(third, retry_errors="none"))
    assert tally.done == 0 and third.seen == []
    tally = asyncio.run(batch(third))
    assert tally.done == 1 and third.queries() == {refused}
    assert {r["status"] for r in read_results(out)} == {"solved"}


class FlakyRemote:
    """A stand-in for `RemoteSolver` whose runs raise for chosen queries (as a model error escaping `solve`)."""

    def __init__(self, raising: dict[str, Exception]) -> None:
        self.raising = raising
        self.calls: list[str] = []

    async def solve(self, query: str, *, api_ids: list[str] | None, thread_key: str,
                    settings: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(query)
        if query in self.raising:
            raise self.raising[query]
        return {"query": query, "status": "solved", "answer": "ok", "reason": "accepted"}


def test_exceptions_escaping_a_run_are_classified_and_transport_ones_retried(tmp_path: Path,
                                                                            builtin: Catalog) -> None:
    from langgraph_anytool.models.llm import ModelCallError

    queries = load_queries(write_group(tmp_path / "g.json", 3))
    out = tmp_path / "r.jsonl"
    flaky = FlakyRemote({queries[0].query: ModelCallError("server_error", "502 Bad Gateway", retries=3),
                         queries[1].query: RuntimeError("server run failed: boom")})
    with ResultsWriter(out) as w:
        tally = asyncio.run(run_batch(queries, builtin, None, w, BatchOptions(), remote=flaky))
    recs = {r["query_id"]: r for r in read_results(out)}
    assert (recs["100"]["status"], recs["100"]["error_kind"], recs["100"]["retries"]) == ("error", "server_error", 3)
    assert recs["100"]["reason"] == "server_error: 502 Bad Gateway"
    assert (recs["101"]["error_kind"], recs["101"]["reason"]) == ("other", "RuntimeError: server run failed: boom")
    assert recs["102"]["status"] == "solved" and tally.retries == 3
    again = FlakyRemote({})
    with ResultsWriter(out) as w:
        asyncio.run(run_batch(queries, builtin, None, w, BatchOptions(), remote=again))
    assert again.calls == [queries[0].query]


def test_quiet_silences_the_package_warnings_while_the_command_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """A warning the package logs during an eval command (e.g. a failed model call the run survives) is dropped
    under --quiet and shown without it."""
    import langgraph_anytool.cli.app as cli

    def warns(args: Any) -> int:
        logging.getLogger("langgraph_anytool.nodes.agents.step").warning("agent meta: model call failed")
        return 0

    monkeypatch.setattr(cli, "_eval_command", warns)
    out = tmp_path / "r.jsonl"
    out.write_text("")
    with caplog.at_level(logging.WARNING):
        assert cli.main(["eval", "stats", str(out), "--quiet"]) == 0
        assert not [r for r in caplog.records if r.name.startswith("langgraph_anytool")]
        assert cli.main(["eval", "stats", str(out)]) == 0
        assert [r.getMessage() for r in caplog.records] == ["agent meta: model call failed"]


def test_a_timeout_error_without_a_batch_timeout_is_recorded_as_an_error(tmp_path: Path, builtin: Catalog) -> None:
    """Only the batch's own --timeout makes a `timeout` record; any other TimeoutError (a socket's, say) escaping a
    run is that query's error, and the batch goes on."""
    queries = load_queries(write_group(tmp_path / "g.json", 2))
    out = tmp_path / "r.jsonl"
    flaky = FlakyRemote({queries[0].query: TimeoutError("the socket timed out")})
    with ResultsWriter(out) as w:
        asyncio.run(run_batch(queries, builtin, None, w, BatchOptions(), remote=flaky))
    recs = {r["query_id"]: r for r in read_results(out)}
    assert (recs["100"]["status"], recs["100"]["error_kind"]) == ("error", "other")
    assert recs["100"]["reason"] == "TimeoutError: the socket timed out" and recs["101"]["status"] == "solved"


def test_a_run_ending_in_a_budget_records_its_stop_reason(tmp_path: Path, builtin: Catalog) -> None:
    queries = load_queries(write_group(tmp_path / "g.json", 1))
    endpoint = FlakyEndpoint({})
    out = tmp_path / "r.jsonl"
    with ResultsWriter(out) as w:
        asyncio.run(run_batch(queries, builtin, endpoint.model, w,
                              BatchOptions(mode="reference", settings={"token_budget": 1})))
    (rec,) = read_results(out)
    assert (rec["status"], rec["stop_reason"]) == ("budget_exhausted", "tokens")
    assert "token budget of 1 tokens reached" in rec["reason"]  # issue 21: the call about to be made counts


def test_a_rate_limited_endpoint_with_a_batch_retry_cap_then_a_resume(tmp_path: Path, builtin: Catalog) -> None:
    """The real ChatOpenAI client (its own retries off) against a loopback server answering 429: one RetryBudget
    of 2 retries for the whole batch (--max-retries-per-batch 2), so the first query spends them and the others
    fail at once; every query is recorded as error / rate_limited and the batch finishes. Once the endpoint
    recovers, a resume runs exactly those queries again."""
    from langchain_openai import ChatOpenAI

    from langgraph_anytool.cli.eval_commands import _retry_budget
    from tests.servers import ChatFault, ChatReply, OpenAIChatServer, tool_call

    def healthy(body: dict[str, Any]) -> Any:
        if "Finish" in [t["function"]["name"] for t in body.get("tools") or []]:
            return tool_call("Finish", return_type="give_answer", final_answer="the answer")
        return ChatReply(content=json.dumps({"label": "Solved", "reason": "answers it"}))

    limited = {"on": True}
    queries = load_queries(write_group(tmp_path / "g.json", 3))
    out = tmp_path / "r.jsonl"
    options = BatchOptions(mode="reference", concurrency=1, settings={"model_retries": 3, "retry_max_wait": 0.01})
    with OpenAIChatServer(policy=healthy,
                          fault_hook=lambda n, body: ChatFault.rate_limited("0") if limited["on"] else None) as server:
        model = ChatOpenAI(model="gpt-4o-mini", base_url=server.base_url, api_key="sk-test", max_retries=0,
                           timeout=10)
        budget = _retry_budget(2)
        with ResultsWriter(out) as w:
            tally = asyncio.run(run_batch(queries, builtin, model, w, options, retry_budget=budget))
        first = len(server.chat_requests)
        limited["on"] = False
        with ResultsWriter(out) as w:
            again = asyncio.run(run_batch(queries, builtin, model, w, options, retry_budget=_retry_budget(2)))
        rerun = server.chat_requests[first:]

    assert first == 3 + 2  # one request per query, plus the two retries the batch allowed
    assert budget is not None and budget.used == 2
    assert tally.done == 3 and tally.errors_text() == "3 errors (rate_limited 3)"
    assert tally.retries == 2  # the records count the retries their runs spent
    solver_queries = {q.query for q in queries for r in rerun
                      if "Finish" in str(r.get("tools")) and q.query in json.dumps(r["messages"])}
    assert (again.done, again.rerun, again.skipped) == (3, 3, 0)
    assert solver_queries == {q.query for q in queries}
    recs = read_results(out)
    assert [r["status"] for r in recs] == ["solved"] * 3 and {r["attempt"] for r in recs} == {2}
    assert len(out.read_text().splitlines()) == 6


def test_quiet_eval_commands_print_nothing_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from langgraph_anytool.cli.app import build_parser, main

    eval_parser = build_parser()._subparsers._group_actions[0].choices["eval"]  # type: ignore[union-attr]
    subcommands = eval_parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(subcommands) == {"retrieval", "run", "passrate", "compare", "stats", "convert", "steps", "tasks"}
    for name, p in subcommands.items():
        assert any("--quiet" in a.option_strings for a in p._actions), name

    q = write_group(tmp_path / "g.json", 2)
    out = tmp_path / "r.jsonl"
    args = ["eval", "run", "--queries", str(q), "--offline", "--mode", "reference", "--limit", "1", "--out"]
    assert main([*args, str(tmp_path / "loud.jsonl")]) == 0
    assert "queries | catalog" in capsys.readouterr().err  # without --quiet: the header (and progress)
    assert main([*args, str(out), "--quiet"]) == 0
    got = capsys.readouterr()
    assert got.err == "" and "1 queries run now" in got.out and "overall" in got.out  # results still printed
    # each record names its catalog by fingerprint (what `eval compare` checks)
    assert read_results(out)[0]["catalog_fingerprint"] == Catalog.load(None).fingerprint()
    assert main(["eval", "stats", str(out), "--quiet"]) == 0
    assert main(["eval", "retrieval", "--queries", str(q), "--quiet"]) == 0
    got = capsys.readouterr()
    assert got.err == "" and "Recall" in got.out
    # the package's warnings are quiet only while the command runs: the process's logging is left as it was
    assert logging.getLogger("langgraph_anytool").level == logging.NOTSET


def test_a_batch_with_max_cost_refuses_an_unpriced_model_before_any_query(tmp_path: Path, builtin: Catalog) -> None:
    queries = load_queries(write_group(tmp_path / "g.json", 2))
    endpoint = FlakyEndpoint({})
    out = tmp_path / "r.jsonl"
    with ResultsWriter(out) as w, pytest.raises(ConfigError, match=r"max_cost.*model_profiles"):
        asyncio.run(run_batch(queries, builtin, endpoint.model, w,
                              BatchOptions(mode="reference", settings={"max_cost": 0.5})))
    assert endpoint.seen == [] and out.read_text() == ""
    # a model with a known price (gpt-4o-mini's, from the profile table) runs, and its records carry the cost

    class Priced(ScriptedChatModel):
        model_name: str = "gpt-4o-mini"

    priced = Priced(responder=endpoint.reply)
    with ResultsWriter(out) as w:
        asyncio.run(run_batch(queries, builtin, priced, w, BatchOptions(mode="reference", settings={"max_cost": 0.5})))
    rec = read_results(out)[0]
    assert rec["status"] == "solved" and rec["usage"]["cost_usd"] > 0
    assert rec["usage"]["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in rec["usage"]["roles"].values()))
