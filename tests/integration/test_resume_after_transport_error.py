"""Issue 38 §3: a run ended by a transport error resumes from its last checkpoint, keeping its usage, and a dead
loopback server (connection refused) is given up in seconds.

The server is a real loopback OpenAI-compatible server reached by the real `ChatOpenAI` client through `anytool
run`; it dies in the middle of the run (stopped: its port then refuses connections) and comes back on the same
port."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from langgraph_anytool.cli.app import main
from langgraph_anytool.graphs.retry_point import find_retry_point
from langgraph_anytool.models.guard import REFUSED_MAX_WAIT, REFUSED_RETRIES, CallGuard, RetryPolicy
from langgraph_anytool.models.llm import ModelCallError, call_role
from tests.servers import ChatFault, ChatReply, OpenAIChatServer, tool_call

QUERY = "What is 17 * 23?"
CALC = "Quick Calculator"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def builtin_reply(body: dict[str, Any]) -> str | ChatReply:
    """Answers each request of a run on the builtin catalog by the role its `tools` reveal."""
    tools = [t["function"]["name"] for t in body.get("tools") or []]
    turns = sum(m["role"] == "assistant" for m in body["messages"])
    if "create_agent_category_level" in tools:
        return tool_call("create_agent_category_level", category_name="Mathematics") if turns == 0 \
            else tool_call("finish_search")
    if "create_agent_tool_level" in tools:
        return tool_call("create_agent_tool_level", tools=[CALC]) if turns == 0 else tool_call("finish_search")
    if "add_apis_into_api_pool" in tools:
        return tool_call("add_apis_into_api_pool", apis=[{"tool_name": CALC, "api_name": "Evaluate Expression"}]) \
            if turns == 0 else tool_call("finish_search")
    if "Finish" in tools:
        return tool_call("Finish", return_type="give_answer", final_answer="17 * 23 = 391.")
    return ChatReply(content=json.dumps({"label": "Solved", "reason": "gives the product"}), usage=(50, 12))


def is_solver(body: dict[str, Any]) -> bool:
    return any(t["function"]["name"] == "Finish" for t in body.get("tools") or [])


# ------------------------------------------------------------------------------------------ a dead local server
def test_a_refused_loopback_connection_is_given_up_after_a_few_short_waits() -> None:
    """Old code: the default policy's 6 retries, backing off up to a minute each (49 s in the issue's run)."""
    waits: list[float] = []
    model = ChatOpenAI(model="m", base_url=f"http://127.0.0.1:{free_port()}/v1", api_key="sk-x", max_retries=0)
    with pytest.raises(ModelCallError) as caught:
        call_role(model, "solver", [HumanMessage("hi")], guard=CallGuard(sleep=waits.append))
    assert caught.value.kind == "connection" and caught.value.retries == REFUSED_RETRIES
    assert len(waits) == REFUSED_RETRIES and all(w <= REFUSED_MAX_WAIT for w in waits)
    assert "nothing listens at http://127.0.0.1:" in str(caught.value)


def test_a_refused_connection_to_a_remote_server_keeps_the_full_policy() -> None:
    """The fast give-up is for loopback servers only: a remote endpoint may be restarting behind a balancer."""
    waits: list[float] = []
    model = ChatOpenAI(model="m", base_url=f"http://127.0.0.1:{free_port()}/v1", api_key="sk-x", max_retries=0)
    guard = CallGuard(policy=RetryPolicy(retries=4), sleep=waits.append, is_local=lambda e: False)
    with pytest.raises(ModelCallError) as caught:
        call_role(model, "solver", [HumanMessage("hi")], guard=guard)
    assert caught.value.retries == 4 and len(waits) == 4


def test_a_dropped_connection_to_a_live_local_server_is_still_retried() -> None:
    """Only a refused connection is a dead server: a dropped one is retried under the policy and succeeds."""
    waits: list[float] = []
    with OpenAIChatServer([ChatReply("ok")] * 2,
                          fault_hook=lambda n, body: ChatFault.dropped() if n <= 3 else None) as server:
        model = ChatOpenAI(model="m", base_url=server.base_url, api_key="sk-x", max_retries=0)
        reply, used = call_role(model, "solver", [HumanMessage("hi")],
                                guard=CallGuard(policy=RetryPolicy(retries=5, max_wait=0.01), sleep=waits.append))
    assert reply.content == "ok" and used["retries"] == 3


# ------------------------------------------------------------------------------------------ the CLI resume
def _serve(monkeypatch: pytest.MonkeyPatch, port: int) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-resume")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("ANYTOOL_CACHE", "off")


def test_a_run_ended_by_a_dead_server_resumes_from_its_checkpoint_with_its_usage(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Old code: the second command ran the query again from the start (the retrieval's calls sent again, no
    "resuming" line) and the first attempt's tokens and retries were gone from the record."""
    port = free_port()
    _serve(monkeypatch, port)
    db = str(tmp_path / "runs.sqlite")
    argv = ["run", QUERY, "--model", "openai:m", "--db", db, "--thread", "t1", "--json",
            "--set", "seed_with_search=false"]
    dying = OpenAIChatServer(policy=builtin_reply, port=port)

    def die(n: int, body: dict[str, Any]) -> ChatFault | None:
        if is_solver(body):  # the server dies as the solver's request arrives: the port then refuses
            threading.Thread(target=dying.stop, daemon=True).start()
            return ChatFault.dropped()
        return None

    dying.fault_hook = die
    with dying:
        assert main(argv) == 1
    first = capsys.readouterr()
    ended = json.loads(first.out)
    assert ended["status"] == "error" and ended["error_kind"] == "connection", ended["reason"]
    assert "resume it from its last checkpoint" in first.err and "--thread t1" in first.err
    retrieval_requests = [r for r in dying.chat_requests if not is_solver(r)]
    spent = {role: ended["usage"][role] for role in ("meta", "category", "tool") if role in ended["usage"]}
    assert spent and all(u["model_calls"] >= 1 for u in spent.values())

    with OpenAIChatServer(policy=builtin_reply, port=port) as server:
        assert main(argv) == 0
        second = capsys.readouterr()
        sent = server.chat_requests
    resumed = json.loads(second.out)
    assert "resuming the run on thread t1, which ended in error (connection)" in second.err
    assert resumed["status"] == "solved" and resumed["answer"] == "17 * 23 = 391."
    assert not any("create_agent_category_level" in json.dumps(r.get("tools")) for r in sent)  # not started over
    assert is_solver(sent[0])  # the failed model call is the first one made again
    usage = resumed["usage"]
    for role, used in spent.items():  # the first attempt's usage is kept
        assert usage[role]["model_calls"] == used["model_calls"]
        assert usage[role]["input_tokens"] == used["input_tokens"]
    assert usage["solver"]["retries"] == ended["usage"]["solver"]["retries"] == REFUSED_RETRIES
    assert usage["solver"]["model_calls"] == 1
    assert len(retrieval_requests) == sum(u["model_calls"] for u in spent.values())


def test_a_run_that_ended_otherwise_is_not_resumed(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A solved run (or one ended by an error no retry mends) has no retry point: the same thread runs anew."""
    port = free_port()
    _serve(monkeypatch, port)
    argv = ["run", QUERY, "--model", "openai:m", "--db", str(tmp_path / "r.sqlite"), "--thread", "t2", "--json",
            "--set", "seed_with_search=false"]
    with OpenAIChatServer(policy=builtin_reply, port=port):
        assert main(argv) == 0
        capsys.readouterr()
        assert main(argv) == 0
    assert "resuming" not in capsys.readouterr().err


def test_no_retry_point_without_a_failure_recorded_before_the_end() -> None:
    """`find_retry_point` on a thread whose history holds no checkpoint before the failure (a compacted thread)."""

    class Snap:
        def __init__(self, cid: str, parent: str | None, values: dict[str, Any]) -> None:
            self.config = {"configurable": {"thread_id": "t", "checkpoint_id": cid}}
            self.parent_config = {"configurable": {"thread_id": "t", "checkpoint_id": parent}} if parent else None
            self.values, self.next = values, ()

    failed = {"status": "error", "error_kind": "connection", "reason": "connection: solver model: refused",
              "usage": {"solver": {"retries": 2}}}
    assert find_retry_point([Snap("2", None, failed)]) is None
    point = find_retry_point([Snap("1", None, {"status": "running", "usage": {}}), Snap("2", "1", failed)])
    assert point is not None and point.carried == {"solver": {"retries": 2}}
    assert find_retry_point([Snap("1", None, {}), Snap("2", "1", {**failed, "error_kind": "auth"})]) is None


# ------------------------------------------------------------------------------------------ eval run's records
def test_a_batch_query_ended_by_a_dead_server_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    """`eval run` with --db: the query's record is error / connection; the batch's resume retries it from its
    checkpoint before the failed call (its thread was not compacted), the usage of its first try kept. Old code:
    the thread was compacted and the query ran again from the start."""
    import asyncio

    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from langgraph_anytool.catalog.catalog import Catalog
    from langgraph_anytool.eval.anytool.results import ResultsWriter, read_results
    from langgraph_anytool.eval.anytool.runner import BatchOptions, run_batch
    from langgraph_anytool.eval.datasets import load_queries

    group = tmp_path / "g.json"
    group.write_text(json.dumps([{"query": QUERY, "query_id": 1, "api_list": []}]))
    queries, out, port = load_queries(group), tmp_path / "r.jsonl", free_port()
    model = ChatOpenAI(model="m", base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-x", max_retries=0,
                       streaming=True)
    options = BatchOptions(mode="whole", concurrency=1, settings={"seed_with_search": False})

    async def batch() -> Any:
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "ck.sqlite")) as saver:
            with ResultsWriter(out) as w:
                return await run_batch(queries, Catalog.builtin(), model, w, options, checkpointer=saver)

    dying = OpenAIChatServer(policy=builtin_reply, port=port)

    def die(n: int, body: dict[str, Any]) -> ChatFault | None:
        if is_solver(body):
            threading.Thread(target=dying.stop, daemon=True).start()
            return ChatFault.dropped()
        return None

    dying.fault_hook = die
    with dying:
        asyncio.run(batch())
    first = read_results(out)[-1]
    assert (first["status"], first["error_kind"]) == ("error", "connection"), first["reason"]
    with OpenAIChatServer(policy=builtin_reply, port=port) as server:
        tally = asyncio.run(batch())
        sent = server.chat_requests
    second = read_results(out)[-1]
    assert tally.rerun == 1 and (second["status"], second["attempt"]) == ("solved", 2)
    assert sent and is_solver(sent[0])  # from the failed call on: the retrieval is not run again
    assert not any("create_agent_category_level" in json.dumps(r.get("tools")) for r in sent)
    before, after = first["usage"]["roles"], second["usage"]["roles"]
    assert after["meta"] == before["meta"] and after["solver"]["model_calls"] == 1
