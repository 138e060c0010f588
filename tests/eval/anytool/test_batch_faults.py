"""Batches that fail loudly (issue 34 §2): the model check before the first query, error kinds that say what
happened, configuration errors that are never a finished query, and a batch whose every query failed exiting 3.

Every network path is a real loopback server: an OpenAI-compatible one that refuses the key (401/403) on every
path, one that answers its model list but refuses every chat request, and a port nobody listens on."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.cli.app import main
from langgraph_anytool.cli.exits import EXIT_ALL_ERRORS
from langgraph_anytool.config import ConfigError
from langgraph_anytool.eval.anytool.results import ResultsWriter, read_results
from langgraph_anytool.eval.anytool.runner import BatchOptions, exception_kind, run_batch, wants_retry
from langgraph_anytool.eval.datasets import load_queries
from langgraph_anytool.models.llm import ModelCallError, ModelNotConfiguredError
from tests.servers import OpenAIChatServer, Request, Response

KEY = "sk-test-0123456789abcdefghijklmnopqrstuv"


def write_group(path: Path, n: int = 3) -> Path:
    items = [{"query": f"Convert {10 + i} miles to kilometers.", "query_id": 100 + i,
              "api_list": [{"tool_name": "Universal Unit Converter", "api_name": "Convert Units"}],
              "relevant APIs": [["Universal Unit Converter", "Convert Units"]]} for i in range(n)]
    path.write_text(json.dumps(items))
    return path


class KeyRefusingServer(OpenAIChatServer):
    """An OpenAI-compatible server that answers every request with `status`, echoing the key it was sent (as
    some proxies do): the key must still never reach the user's screen or a record."""

    def __init__(self, status: int = 401) -> None:
        super().__init__()
        self.status = status

    async def handle(self, request: Request) -> Response:
        sent = request.headers.get("authorization", "").removeprefix("Bearer ")
        return Response.json({"error": {"message": f"Incorrect API key provided: {sent}", "type": "invalid_request_error",
                                         "code": "invalid_api_key"}}, self.status)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANYTOOL_MODEL", "GROQ_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["eval", "run", "--no-progress", *args])
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.startswith("anytool: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ------------------------------------------------------------------------------------------ the model check
def test_a_model_without_a_key_stops_the_batch_before_any_record(tmp_path: Path, no_keys: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Was: every query recorded as an `other` error and exit 0; the same command with the key then ran nothing."""
    queries, out = write_group(tmp_path / "g.json"), tmp_path / "r.jsonl"
    code, _, err = run_cli(capsys, "--queries", str(queries), "--model", "openai:gpt-4-turbo", "--out", str(out))
    assert code == 2
    assert "needs an API key: set OPENAI_API_KEY" in one_error_line(err)
    assert not out.exists()  # no record: nothing to skip once the key is set
    # a role's own model counts as much as the default one (here the judge's; the default is the stand-in)
    code, _, err = run_cli(capsys, "--queries", str(queries), "--offline", "--out", str(out),
                           "--set", 'models={"judge": "openai:gpt-4o-mini"}')
    assert code == 2 and "needs an API key" in one_error_line(err) and not out.exists()


@pytest.mark.parametrize("status", [401, 403])
def test_an_endpoint_refusing_the_key_stops_the_batch(status: int, tmp_path: Path, no_keys: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    queries, out = write_group(tmp_path / "g.json"), tmp_path / "r.jsonl"
    with KeyRefusingServer(status) as server:
        no_keys.setenv("OPENAI_API_KEY", KEY)
        no_keys.setenv("OPENAI_BASE_URL", server.base_url)
        code, stdout, err = run_cli(capsys, "--queries", str(queries), "--model", "openai:gpt-4o", "--out", str(out))
        asked = [(r.method, r.path) for r in server.requests]
    line = one_error_line(err)
    assert code == 2 and not out.exists()
    assert "refused the API key (auth" in line and server.base_url in line and "--no-model-check" in line
    assert "solver" in line and "judge" in line  # the roles that model plays
    assert KEY not in err + stdout
    assert asked == [("GET", "/v1/models")]  # one request, spending no tokens; no chat request


def test_an_unreachable_endpoint_stops_the_batch(tmp_path: Path, no_keys: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    queries, out = write_group(tmp_path / "g.json"), tmp_path / "r.jsonl"
    no_keys.setenv("OPENAI_API_KEY", KEY)
    no_keys.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    code, _, err = run_cli(capsys, "--queries", str(queries), "--model", "openai:gpt-4o", "--out", str(out))
    assert code == 2 and "cannot be reached (connection" in one_error_line(err) and not out.exists()


# ------------------------------------------------------------------------------------------ exit 3
def test_a_batch_whose_every_query_failed_exits_3(tmp_path: Path, no_keys: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The model list answers (the check passes), every chat request is refused with a 401: each query is an
    `auth` error, the batch says so and exits 3, and again when resumed (a refused key is no finished query)."""
    queries, out = write_group(tmp_path / "g.json", 2), tmp_path / "r.jsonl"

    class ChatRefusing(KeyRefusingServer):
        async def handle(self, request: Request) -> Response:
            if request.path == "/v1/models":
                return Response.json({"object": "list", "data": [{"id": "gpt-4o", "object": "model"}]})
            return await super().handle(request)

    with ChatRefusing(401) as server:
        no_keys.setenv("OPENAI_API_KEY", KEY)
        no_keys.setenv("OPENAI_BASE_URL", server.base_url)
        code, stdout, err = run_cli(capsys, "--queries", str(queries), "--model", "openai:gpt-4o", "--out", str(out))
        assert code == EXIT_ALL_ERRORS
        assert "every one of the 2 queries of this batch ended in an error (2 errors (auth 2))" in err
        assert KEY not in err + stdout + out.read_text()
        assert {(r["status"], r["error_kind"]) for r in read_results(out)} == {("error", "auth")}
        # resumed: the refused key is no finished query (run again), and fails again: exit 3 again
        code, _, err = run_cli(capsys, "--queries", str(queries), "--model", "openai:gpt-4o", "--out", str(out))
        assert code == EXIT_ALL_ERRORS
    assert [r["attempt"] for r in read_results(out)] == [2, 2]


def test_no_model_check_skips_the_check(tmp_path: Path, no_keys: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    queries, out = write_group(tmp_path / "g.json", 1), tmp_path / "r.jsonl"
    with KeyRefusingServer(401) as server:
        no_keys.setenv("OPENAI_API_KEY", KEY)
        no_keys.setenv("OPENAI_BASE_URL", server.base_url)
        code, _, err = run_cli(capsys, "--queries", str(queries), "--model", "openai:gpt-4o", "--out", str(out),
                               "--no-model-check")
    assert code == EXIT_ALL_ERRORS and "anytool: error:" not in err
    assert [r["error_kind"] for r in read_results(out)] == ["auth"]


def test_a_batch_with_one_answer_exits_0(tmp_path: Path, no_keys: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text(json.dumps({"query_id": "100", "group": "g", "status": "error", "error_kind": "bad_request",
                               "reason": "bad_request: x"}) + "\n")
    code, _, err = run_cli(capsys, "--queries", str(write_group(tmp_path / "g.json", 2)), "--offline", "--out", str(out))
    assert code == 0 and "every one" not in err


# ------------------------------------------------------------------------------------------ error kinds, retries
def test_error_kinds_say_what_happened() -> None:
    assert exception_kind(ModelNotConfiguredError("model 'openai:x' needs an API key")) == "configuration"
    # a ConfigError may be the query's own (reference mode without its api_list): no re-run fixes it
    assert exception_kind(ConfigError("retriever='reference' needs the input's 'api_ids'")) == "other"
    assert exception_kind(ImportError("langchain-groq is not installed")) == "configuration"
    assert exception_kind(ModelCallError("auth", "solver model: 401")) == "auth"
    assert exception_kind(RuntimeError("boom")) == "other"


@pytest.mark.parametrize("record", [
    {"status": "error", "error_kind": "configuration", "reason": "model 'openai:x' needs an API key"},
    {"status": "error", "error_kind": "auth", "reason": "auth: solver model: 401"},
    # records of earlier versions: a missing key was recorded as kind "other"
    {"status": "error", "error_kind": "other", "error": "ModelNotConfiguredError: model 'openai:x' needs an API key"},
    {"status": "error", "error_kind": "other", "error": "ModelNotConfiguredError: no model for role 'judge': ..."},
])
def test_a_configuration_error_is_never_a_finished_query(record: dict[str, Any]) -> None:
    assert wants_retry(record, "transport") and wants_retry(record, "all") and not wants_retry(record, "none")


def test_other_errors_stay_finished() -> None:
    for record in ({"status": "error", "error_kind": "other", "reason": "RuntimeError: boom"},
                   {"status": "error", "error_kind": "bad_request", "reason": "bad_request: x"},
                   {"status": "error", "error_kind": "other", "reason": "ConfigError: retriever='reference' needs ..."},
                   {"status": "unsolved", "error_kind": None}):
        assert not wants_retry(record, "transport")


class RaisingRemote:
    """A stand-in for `RemoteSolver`: each query raises the exception given for it, else is solved."""

    def __init__(self, raising: dict[str, BaseException]) -> None:
        self.raising, self.calls = raising, []  # type: ignore[var-annotated]

    async def solve(self, query: str, **_: Any) -> dict[str, Any]:
        self.calls.append(query)
        if query in self.raising:
            raise self.raising[query]
        return {"query": query, "status": "solved", "answer": "ok", "reason": "accepted"}


def test_a_configuration_error_is_recorded_as_such_and_run_again(tmp_path: Path) -> None:
    catalog = Catalog.builtin()
    queries = load_queries(write_group(tmp_path / "g.json", 2))
    out = tmp_path / "r.jsonl"
    first = RaisingRemote({q.query: ModelNotConfiguredError("model 'openai:x' needs an API key") for q in queries})
    with ResultsWriter(out) as w:
        asyncio.run(run_batch(queries, catalog, None, w, BatchOptions(), remote=first))
    assert {r["error_kind"] for r in read_results(out)} == {"configuration"}
    again = RaisingRemote({})
    with ResultsWriter(out) as w:
        tally = asyncio.run(run_batch(queries, catalog, None, w, BatchOptions(), remote=again))
    assert tally.done == 2 and len(again.calls) == 2
    assert {(r["status"], r["attempt"]) for r in read_results(out)} == {("solved", 2)}


def test_old_other_records_of_a_missing_key_are_run_again(tmp_path: Path, no_keys: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A results file written before this fix (kind `other`, the `ModelNotConfiguredError` text) is resumed: its
    queries run now, not `2 already in ...`."""
    queries, out = write_group(tmp_path / "g.json", 2), tmp_path / "r.jsonl"
    reason = ("ModelNotConfiguredError: model 'openai:gpt-4-turbo' needs an API key: set OPENAI_API_KEY, or pass "
              "a BaseChatModel made with api_key=...")
    out.write_text("".join(json.dumps({"query_id": str(100 + i), "group": "g", "status": "error", "error_kind": "other",
                                       "reason": reason, "error": reason, "attempt": 1}) + "\n" for i in range(2)))
    code, stdout, _ = run_cli(capsys, "--queries", str(queries), "--offline", "--out", str(out))
    assert code == 0 and "2 queries run now, 0 already in" in stdout
    assert {r["attempt"] for r in read_results(out)} == {2}
    assert "errors: 2 errors" not in stdout
