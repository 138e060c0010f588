"""Deadlines on the async doors (issue 38, hardening of issue 34 §1): `ainvoke`, `astream` and `astream_events`.

A LangChain or FastAPI application, `langgraph dev` and `create_anytool_tool` run the graph through its async
doors; an LLM-simulated API call (`--execution llm`) and an application's own `await model.ainvoke(...)` read
through the model's *asynchronous* HTTP clients. A loopback server (tests/hostile_model_servers.py) keeps every
reply alive with bytes that are no reply (SSE comments, blank lines, token-less chunks): each door must end by the
run's deadline. Each case runs under `asyncio.wait_for` with room to spare, so a stretched read fails the test
instead of hanging it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from langgraph_anytool import AnyToolConfig, Catalog, create_anytool_graph
from langgraph_anytool.models.deadline import bounded, clients_of, is_async_client
from langgraph_anytool.models.llm import init_model
from tests.hostile_model_servers import STREAM_MODES, HostileModelServer

SLACK = 2.5  # seconds a cut may come after its limit on a busy machine
LIMIT = 2.0  # the run's (or the call's) deadline, seconds
GRAPH_DOORS = ("ainvoke", "astream", "astream_events")
MODEL_DOORS = ("ainvoke", "astream", "astream_events", "abatch")


async def _through(door: str, runnable: Any, value: Any) -> Any:
    """`value` through one async door of a runnable; the last output (the graph's final state for a graph)."""
    if door == "ainvoke":
        return await runnable.ainvoke(value)
    if door == "abatch":
        return (await runnable.abatch([value], return_exceptions=True))[0]
    last: Any = None
    if door == "astream":
        async for chunk in runnable.astream(value, **({"stream_mode": "values"} if isinstance(value, dict) else {})):
            last = chunk
        return last
    async for event in runnable.astream_events(value, version="v2"):
        if event["event"].endswith("_end") and not event.get("parent_ids"):
            last = event["data"].get("output")
    return last


@pytest.fixture
def server_env(monkeypatch: pytest.MonkeyPatch) -> Any:
    def use(server: HostileModelServer) -> None:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "x")
    return use


@pytest.mark.parametrize("mode", STREAM_MODES)
@pytest.mark.parametrize("door", MODEL_DOORS)
def test_every_async_door_of_a_model_keeps_to_the_limits_in_force(door: str, mode: str, server_env: Any) -> None:
    """The model's async clients read through the same bounded backend as its sync ones: a call made in a
    `bounded` context (a node's, an LLM-simulated API call's) ends by its deadline, whatever the server sends."""
    with HostileModelServer(mode, every=0.3) as server:
        server_env(server)
        model = init_model("openai:m")
        assert clients_of(model, asynchronous=True) and all(is_async_client(c)
                                                            for c in clients_of(model, asynchronous=True))

        async def call() -> Any:
            with bounded(within=LIMIT):
                return await _through(door, model, [HumanMessage("convert 3 miles to km")])

        started = time.monotonic()
        try:
            outcome: Any = asyncio.run(asyncio.wait_for(call(), LIMIT + 20))
        except TimeoutError:
            pytest.fail(f"{door} still read after {LIMIT + 20} s: the server stretched the async read")
        except Exception as exc:  # the client's own timeout error: what the deadline cuts with
            outcome = exc
        took = time.monotonic() - started
    assert isinstance(outcome, Exception) and "Timeout" in type(outcome).__name__, outcome
    assert took < LIMIT + SLACK, took


@pytest.mark.parametrize("door", GRAPH_DOORS)
def test_every_async_door_of_the_graph_ends_by_max_run_seconds(door: str, server_env: Any) -> None:
    """The graph's async doors: the model calls of its nodes keep to `max_run_seconds` (status time_limit)."""
    with HostileModelServer("comments", every=0.3) as server:
        server_env(server)
        graph = create_anytool_graph(Catalog.builtin(), "openai:m",
                                     config=AnyToolConfig(max_run_seconds=LIMIT + 1, stall_timeout=600))
        started = time.monotonic()
        try:
            out = asyncio.run(asyncio.wait_for(_through(door, graph, {"query": "convert 3 miles to km"}),
                                               LIMIT + 30))
        except TimeoutError:
            pytest.fail(f"graph.{door} still running after {LIMIT + 30} s")
        took = time.monotonic() - started
    assert out["status"] == "time_limit", out.get("status")
    assert took < LIMIT + 1 + SLACK + 3, took  # the graph's own set-up (catalog, search) counts too


@pytest.mark.parametrize("mode", STREAM_MODES)
def test_an_llm_simulated_api_call_keeps_to_the_deadline_of_the_node_that_makes_it(mode: str,
                                                                                  server_env: Any) -> None:
    """`--execution llm`: the simulator awaits its model on the executor's own event loop thread; the deadline of
    the calling node (a context variable) reaches it there, and its async read is cut by it."""
    from langgraph_anytool.tools.executors.llm_sim import LLMSimulatedExecutor
    from langgraph_anytool.tools.pipeline import ApiExecutor

    catalog = Catalog.builtin()
    api = catalog.api("Units_Conversion/universal_unit_converter/convert_units")  # the simulator plays it
    with HostileModelServer(mode, every=0.3) as server:
        server_env(server)
        executor = ApiExecutor(catalog, default=LLMSimulatedExecutor(init_model("openai:m")),
                               use_catalog_executors=False)
        out: dict[str, Any] = {}

        def call() -> None:  # a node's thread: the API call under the run's deadline
            with bounded(within=LIMIT):
                out["obs"] = executor.call(api.id, {"value": 3, "from_unit": "mile", "to_unit": "km"})

        try:
            started = time.monotonic()
            worker = threading.Thread(target=call, daemon=True)
            worker.start()
            worker.join(LIMIT + 20)
            took = time.monotonic() - started
            assert not worker.is_alive(), f"the simulated call still read after {LIMIT + 20} s"
        finally:
            executor.close()
    obs = out["obs"]
    assert obs.error and "Timeout" in obs.error, obs
    assert took < LIMIT + SLACK, took
