"""The graph's abilities (issue 9) with scripted models: answer without tools (router), ask the user (interrupt →
resume, batch runs), start from a given conversation, plan only."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langgraph_anytool import AnyToolConfig, create_anytool_graph
from langgraph_anytool.catalog import Catalog
from langgraph_anytool.chat import InputError
from langgraph_anytool.config import ConfigError
from langgraph_anytool.nodes.abilities import NO_USER_ANSWER, split_request
from langgraph_anytool.nodes.abilities.conversation import PRIOR_NAME
from langgraph_anytool.tools.executors.local import LocalExecutor
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.fakes import ScriptedChatModel, ai, call
from tests.graph_world import World, make_world, observations, solved_judge

REF = {"seed_with_search": False, "retriever": "reference"}


def fn(catalog: Catalog, tool: str, api: str) -> str:
    return catalog.function_name(catalog.find_api(tool, api).id)


def counting_world() -> tuple[Catalog, ApiExecutor, list[dict[str, Any]], str, str]:
    """The test world's catalog with a counting weather API and a quote API; (catalog, executor, calls, ids...)."""
    catalog, _ = make_world()
    weather = catalog.find_api("Weather Now", "Current").id
    quote = catalog.find_api("Backup Quotes", "Quote").id
    calls: list[dict[str, Any]] = []

    def current(city: str) -> dict[str, Any]:
        calls.append({"city": city})
        return {"city": city, "temp_c": 21}

    def price(symbol: str) -> dict[str, Any]:
        calls.append({"symbol": symbol})
        return {"symbol": symbol, "price": 187.5}

    return catalog, ApiExecutor(catalog, default=LocalExecutor({weather: current, quote: price})), calls, weather, quote


def unsolved_judge(_: list[BaseMessage]) -> AIMessage:
    return ai('{"label": "Unsolved", "reason": "the answer gives no current value"}')


def tool_answers(messages: list[BaseMessage], name: str) -> list[dict[str, Any]]:
    return [json.loads(str(m.content)) for m in messages if isinstance(m, ToolMessage) and m.name == name]


# ------------------------------------------------------------------------------------------ answer without tools
def weather_solver(catalog: Catalog) -> Any:
    weather = fn(catalog, "Weather Now", "Current")

    def solve(messages: list[BaseMessage]) -> AIMessage:
        if not observations(messages):
            return ai("", call(weather, city="Paris"))
        return ai("", call("Finish", return_type="give_answer", final_answer="It is 21°C in Paris."))

    return solve


def test_router_is_off_by_default_and_never_called() -> None:
    catalog, executor, _, weather, _ = counting_world()
    world = World({"solver": weather_solver(catalog), "judge": solved_judge})
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=world), config=AnyToolConfig(**REF),
                                 executor=executor)
    out = graph.invoke({"query": "Weather in Paris?", "api_ids": [weather]})
    assert out["status"] == "solved" and "router" not in world.roles and AnyToolConfig().route_tools is False


def test_router_answers_directly_without_retrieval() -> None:
    catalog, executor, calls, _, _ = counting_world()
    world = World({"router": lambda m: ai("", call("answer_directly", answer="Paris is the capital of France.")),
                   "judge": solved_judge})
    model = ScriptedChatModel(responder=world)
    graph = create_anytool_graph(catalog, model, config=AnyToolConfig(seed_with_search=False, route_tools=True),
                                 executor=executor)
    out = graph.invoke({"query": "What is the capital of France?"})
    assert out["status"] == "solved" and out["answer"] == "Paris is the capital of France."
    assert world.roles == ["router", "judge"]  # no meta-agent, no solver
    assert out["api_pool"] == [] and calls == [] and out["agents"]["meta"]["steps"] == 0  # created, never run
    (attempt,) = out["solver_attempts"]
    assert attempt["mode"] == "direct" and attempt["api_calls"] == 0 and attempt["finish_type"] == "give_answer"
    assert out["usage"]["router"]["model_calls"] == 1
    (router_call,) = [c for c in model.calls if c["role"] == "router"]
    assert router_call["tools"] == ["use_tools", "answer_directly"]
    assert router_call["inputs"]["query"] == "What is the capital of France?"


def test_router_sends_tool_requests_to_retrieval_and_can_be_enabled_per_run() -> None:
    catalog, executor, calls, weather, _ = counting_world()
    world = World({"router": lambda m: ai("", call("use_tools", reason="live weather")),
                   "solver": weather_solver(catalog), "judge": solved_judge})
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=world), config=AnyToolConfig(**REF),
                                 executor=executor)
    out = graph.invoke({"query": "Weather in Paris?", "api_ids": [weather]}, context={"route_tools": True})
    assert out["status"] == "solved" and out["answer"] == "It is 21°C in Paris." and calls == [{"city": "Paris"}]
    assert world.roles == ["router", "solver", "solver", "judge"]
    assert [a["mode"] for a in out["solver_attempts"]] == ["dfsdt"]


@pytest.mark.parametrize("reply", [ai("I think tools are needed."), ai("", call("answer_directly", answer="  "))])
def test_router_without_a_usable_decision_retrieves(reply: AIMessage) -> None:
    catalog, executor, _, weather, _ = counting_world()
    world = World({"router": lambda m: reply, "solver": weather_solver(catalog), "judge": solved_judge})
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=world),
                                 config=AnyToolConfig(**REF, route_tools=True), executor=executor)
    out = graph.invoke({"query": "Weather in Paris?", "api_ids": [weather]})
    assert out["status"] == "solved" and world.roles[:2] == ["router", "solver"]


def test_rejected_direct_answer_falls_back_to_tools() -> None:
    catalog, executor, calls, weather, _ = counting_world()
    verdicts = iter([unsolved_judge, solved_judge])
    world = World({"router": lambda m: ai("", call("answer_directly", answer="It is usually mild in Paris.")),
                   "solver": weather_solver(catalog), "judge": lambda m: next(verdicts)(m)})
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=world),
                                 config=AnyToolConfig(**REF, route_tools=True), executor=executor)
    out = graph.invoke({"query": "Weather in Paris right now?", "api_ids": [weather]})
    assert world.roles == ["router", "judge", "solver", "solver", "judge"]
    assert out["status"] == "solved" and out["answer"] == "It is 21°C in Paris." and len(calls) == 1
    assert [a["mode"] for a in out["solver_attempts"]] == ["direct", "dfsdt"]
    assert out["solver_attempts"][1]["attempt"] == 2


# ------------------------------------------------------------------------------------------ ask the user
def asking_solver(catalog: Catalog, *, also_call: bool = False) -> Any:
    """Asks which city, then calls the weather API for the answered city (with `also_call`, the weather of Lyon
    is fetched in the same step as the question)."""
    weather = fn(catalog, "Weather Now", "Current")

    def solve(messages: list[BaseMessage]) -> AIMessage:
        answers = tool_answers(messages, "ask_user")
        if not answers:
            extra = [call(weather, city="Lyon")] if also_call else []
            return ai("Which city?", *extra, call("ask_user", question="Which city do you mean?"))
        reply = answers[-1]["user_answer"]
        if reply == NO_USER_ANSWER:
            return ai("", call("Finish", return_type="give_up", reason="the city is unknown"))
        if not [o for o in observations(messages) if o.get("response", {}).get("city") == reply]:
            return ai("", call(weather, city=reply))
        return ai("", call("Finish", return_type="give_answer", final_answer=f"It is 21°C in {reply}."))

    return solve


def ask_graph(checkpointer: Any = None, *, also_call: bool = False, **cfg: Any) -> tuple[Any, list[dict[str, Any]],
                                                                                       str, World]:
    catalog, executor, calls, weather, _ = counting_world()
    world = World({"solver": asking_solver(catalog, also_call=also_call), "judge": solved_judge})
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=world),
                                 config=AnyToolConfig(**REF, ask_user=True, **cfg), executor=executor,
                                 checkpointer=checkpointer)
    return graph, calls, weather, world


def test_ask_user_pauses_and_resumes_with_the_answer() -> None:
    graph, calls, weather, _ = ask_graph(InMemorySaver())
    config: Any = {"configurable": {"thread_id": "a1"}}
    first = graph.invoke({"query": "What's the weather?", "api_ids": [weather]}, config)
    (intr,) = first["__interrupt__"]
    assert intr.value["type"] == "ask_user" and intr.value["question"] == "Which city do you mean?"
    assert graph.get_state(config).next and calls == []
    out = graph.invoke(Command(resume="Nice"), config)
    assert out["status"] == "solved" and out["answer"] == "It is 21°C in Nice." and calls == [{"city": "Nice"}]
    tree = out["solver_attempts"][0]["tree"]
    statuses = [c["status"] for n in tree for c in n["calls"]]
    assert "asked_user" in statuses


def test_api_calls_of_the_asking_step_run_once() -> None:
    graph, calls, weather, _ = ask_graph(InMemorySaver(), also_call=True)
    config: Any = {"configurable": {"thread_id": "a2"}}
    graph.invoke({"query": "What's the weather?", "api_ids": [weather]}, config)
    assert calls == []  # the question comes before any API call of the step
    out = graph.invoke(Command(resume={"answer": "Nice"}), config)
    assert out["status"] == "solved" and calls == [{"city": "Lyon"}, {"city": "Nice"}]


def test_batch_runs_get_no_user_and_go_on() -> None:
    graph, calls, weather, _ = ask_graph(InMemorySaver())
    out = graph.invoke({"query": "What's the weather?", "api_ids": [weather]},
                       {"configurable": {"thread_id": "b1"}}, context={"batch": True, "max_reflections": 0})
    assert "__interrupt__" not in out and out["status"] == "gave_up" and calls == []


def test_ask_user_is_not_offered_by_default() -> None:
    catalog, executor, _, weather, _ = counting_world()
    world = World({"solver": asking_solver(catalog), "judge": solved_judge})
    model = ScriptedChatModel(responder=world)
    graph = create_anytool_graph(catalog, model, config=AnyToolConfig(**REF, max_reflections=0), executor=executor)
    out = graph.invoke({"query": "What's the weather?", "api_ids": [weather]})
    assert "__interrupt__" not in out
    tree = out["solver_attempts"][0]["tree"]
    assert "unknown_function" in [c["status"] for n in tree for c in n["calls"] if c["function"] == "ask_user"]
    assert all("ask_user" not in c["tools"] for c in model.calls)


def test_paused_run_survives_a_new_graph_on_the_same_sqlite_file(tmp_path: Any) -> None:
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    db = tmp_path / "runs.sqlite"
    config: Any = {"configurable": {"thread_id": "s1"}}
    conn = sqlite3.connect(db, check_same_thread=False)
    graph, _, weather, _ = ask_graph(SqliteSaver(conn))
    assert graph.invoke({"query": "What's the weather?", "api_ids": [weather]}, config)["__interrupt__"]
    conn.close()
    conn = sqlite3.connect(db, check_same_thread=False)
    graph2, calls, _, world = ask_graph(SqliteSaver(conn))
    out = graph2.invoke(Command(resume="Nice"), config)
    conn.close()
    assert out["status"] == "solved" and calls == [{"city": "Nice"}]
    assert world.roles == ["solver", "solver", "judge"]  # the asking step is not asked again


# ------------------------------------------------------------------------------------------ a given conversation
def test_prior_turns_reach_the_solver_as_context() -> None:
    catalog, executor, _, weather, _ = counting_world()
    prompts: list[list[BaseMessage]] = []

    def solve(messages: list[BaseMessage]) -> AIMessage:
        prompts.append(messages)
        return weather_solver(catalog)(messages)

    world = World({"solver": solve, "judge": solved_judge})
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=world), config=AnyToolConfig(**REF),
                                 executor=executor)
    conversation = [
        {"role": "user", "content": "I am travelling to Paris tomorrow."},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "flights", "arguments": '{"to": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "flights", "content": '{"flight": "AF123"}'},
        {"role": "assistant", "content": "Your flight AF123 is on time."},
        {"role": "user", "content": "And the weather there?"},
    ]
    out = graph.invoke({"messages": conversation, "api_ids": [weather]})
    assert out["status"] == "solved" and out["query"] == "And the weather there?"
    first = prompts[0]
    prior = [m for m in first if isinstance(m, HumanMessage) and m.name == PRIOR_NAME]
    assert len(prior) == 1
    text = str(prior[0].content)
    assert "User: I am travelling to Paris tomorrow." in text and 'flights({"to": "Paris"})' in text
    assert 'Tool result of flights: {"flight": "AF123"}' in text and "And the weather there?" not in text
    assert str(first[first.index(prior[0]) + 1].content).startswith("And the weather there?")


def test_query_with_messages_and_bad_messages() -> None:
    from langchain_core.messages import AIMessage as AI

    query, prior = split_request({"query": "Weather?", "messages": [HumanMessage("hi"), AI("hello")]})
    assert query == "Weather?" and [m.content for m in prior] == ["hi", "hello"]
    query, prior = split_request({"query": "old", "messages": [HumanMessage("hi"), AI("x"), HumanMessage("new")]})
    assert query == "new" and len(prior) == 2
    with pytest.raises(ConfigError, match=r"'messages'\[1\]"):
        split_request({"messages": [{"role": "user", "content": "a"}, {"role": "nobody", "content": "b"}]})
    catalog, executor, _, _, _ = counting_world()
    graph = create_anytool_graph(catalog, ScriptedChatModel(replies=[]), config=AnyToolConfig(**REF),
                                 executor=executor)
    with pytest.raises(InputError, match="no human message"):
        graph.invoke({"messages": [{"role": "assistant", "content": "hello"}]})


# ------------------------------------------------------------------------------------------ plan only
def test_plan_only_returns_a_plan_and_calls_no_api() -> None:
    catalog, executor, calls, weather, quote = counting_world()
    wfn, qfn = catalog.function_name(weather), catalog.function_name(quote)

    def outline(messages: list[BaseMessage]) -> AIMessage:
        return ai("", call("submit_plan", steps=[
            {"function": wfn, "purpose": "the weather in Paris", "arguments": {"city": "Paris"}},
            {"function": "made_up_api", "purpose": "nothing"},
            {"function": qfn, "purpose": "the AAPL price"}]))

    world = World({"outline": outline})
    model = ScriptedChatModel(responder=world)
    graph = create_anytool_graph(catalog, model, config=AnyToolConfig(**REF, plan_only=True), executor=executor)
    out = graph.invoke({"query": "Weather in Paris and the AAPL price?", "api_ids": [weather, quote]})
    assert world.roles == ["outline"] and calls == []
    assert out["status"] == "planned" and out["solver_attempts"] == []
    assert [(s["step"], s["function"], s["api_id"]) for s in out["plan"]] == [(1, wfn, weather), (2, qfn, quote)]
    assert out["plan"][0]["arguments"] == {"city": "Paris"} and out["plan"][1]["arguments"] == {}
    assert "made_up_api" in out["reason"] and "no API was called" in out["reason"]
    assert out["answer"].splitlines()[0] == f"1. {wfn} (Weather Now / Current): the weather in Paris"


def test_plan_only_without_a_plan_is_unsolved() -> None:
    catalog, executor, _, weather, _ = counting_world()
    world = World({"outline": lambda m: ai("I would call the weather API.")})
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=world),
                                 config=AnyToolConfig(**REF, plan_only=True), executor=executor)
    out = graph.invoke({"query": "Weather in Paris?", "api_ids": [weather]})
    assert out["status"] == "unsolved" and out["plan"] == [] and "submit_plan" in out["reason"]


def test_paused_run_survives_a_process_restart(tmp_path: Any) -> None:
    import os
    import sqlite3
    import subprocess
    import sys
    from pathlib import Path

    from langgraph.checkpoint.sqlite import SqliteSaver

    root = Path(__file__).resolve().parents[2]
    db = tmp_path / "runs.sqlite"
    done = subprocess.run([sys.executable, "-m", "tests.ask_user_worker", str(db), "p1"], cwd=root, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [
        {"type": "ask_user", "question": "Which city do you mean?", "query": "What's the weather?"}]
    conn = sqlite3.connect(db, check_same_thread=False)
    graph, calls, _, world = ask_graph(SqliteSaver(conn))
    config: Any = {"configurable": {"thread_id": "p1"}}
    assert graph.get_state(config).next
    out = graph.invoke(Command(resume="Nice"), config)
    conn.close()
    assert out["status"] == "solved" and out["answer"] == "It is 21°C in Nice." and calls == [{"city": "Nice"}]
    assert world.roles == ["solver", "solver", "judge"]


# ------------------------------------------------------------------------------------------ the offline stand-in
@pytest.fixture
def offline_graph(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Any:
    from langgraph_anytool.offline import OfflinePolicyModel

    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")
    monkeypatch.setenv("ANYTOOL_INDEX_DIR", str(tmp_path / "index"))
    catalog = Catalog.builtin()
    return create_anytool_graph(catalog, OfflinePolicyModel(catalog=catalog), checkpointer=InMemorySaver())


def test_offline_router_plan_and_ask(offline_graph: Any) -> None:
    g = offline_graph
    tools = g.invoke({"query": "Convert 26.2 miles to kilometers"}, {"configurable": {"thread_id": "o1"}},
                     context={"route_tools": True})
    assert tools["status"] == "solved" and [a["mode"] for a in tools["solver_attempts"]] == ["dfsdt"]
    assert tools["usage"]["router"]["model_calls"] == 1
    # no on-topic API: the stand-in "answers directly" but says it cannot; the judge rejects it, tools are tried
    direct = g.invoke({"query": "Who wrote Hamlet?"}, {"configurable": {"thread_id": "o2"}},
                      context={"route_tools": True, "max_reflections": 0})
    assert direct["solver_attempts"][0]["mode"] == "direct" and direct["status"] != "solved"
    assert "not an LLM" in direct["solver_attempts"][0]["answer"]

    plan = g.invoke({"query": "Convert 26.2 miles to kilometers and is 2025-07-14 a public holiday in France?"},
                    {"configurable": {"thread_id": "o3"}}, context={"plan_only": True})
    assert plan["status"] == "planned" and plan["usage"].get("api", {}).get("calls", 0) == 0
    assert [(s["api"], s["arguments"]) for s in plan["plan"]] == [
        ("Convert Units", {"value": 26.2, "from_unit": "mile", "to_unit": "kilometer"}),
        ("Is Public Holiday", {"country": "FR", "date": "2025-07-14"})]

    config: Any = {"configurable": {"thread_id": "o4"}}
    asked = g.invoke({"query": "Convert miles to kilometers"}, config, context={"ask_user": True})
    assert "'value'" in asked["__interrupt__"][0].value["question"]
    out = g.invoke(Command(resume="26.2"), config, context={"ask_user": True})
    assert out["status"] == "solved" and "26.2 mi = 42.1648128 km" in out["answer"]
    batch = g.invoke({"query": "Convert miles to kilometers"}, {"configurable": {"thread_id": "o5"}},
                     context={"ask_user": True, "batch": True})
    assert "__interrupt__" not in batch and "1 mi = 1.609344 km" in batch["answer"]  # went on with the default


@pytest.mark.parametrize(("stdin", "expected"), [("26.2\n", "26.2 mi = 42.1648128 km"), ("", "1 mi = 1.609344 km")])
def test_cli_run_asks_on_the_terminal(stdin: str, expected: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Any,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    import io

    from langgraph_anytool.cli.app import main

    monkeypatch.delenv("ANYTOOL_MODEL", raising=False)
    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")
    monkeypatch.setenv("ANYTOOL_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    assert main(["run", "Convert miles to kilometers", "--offline", "--set", "ask_user=true"]) == 0
    out = capsys.readouterr().out
    assert "the agent asks: To answer 'Convert miles to kilometers' I need the 'value'" in out
    assert expected in out and "status: solved" in out


def test_prior_turns_reach_the_umi_roles() -> None:
    catalog, executor, _, weather, _ = counting_world()
    model = ScriptedChatModel(responder=World({
        "planner": lambda m: ai("The conversation already gives the answer. Next: summarizer"),
        "summarizer": lambda m: ai("It was 21°C in Paris an hour ago."), "judge": solved_judge}))
    graph = create_anytool_graph(catalog, model, config=AnyToolConfig(**REF, solver="umi"), executor=executor)
    out = graph.invoke({"api_ids": [weather], "messages": [
        HumanMessage("Weather in Paris?"), AIMessage("It is 21°C in Paris."), HumanMessage("What did you say?")]})
    assert out["status"] == "solved"
    for c in model.calls:
        if c["role"] in ("planner", "summarizer"):
            prior = [m for m in c["messages"] if isinstance(m, HumanMessage) and m.name == PRIOR_NAME]
            assert len(prior) == 1 and "Assistant: It is 21°C in Paris." in str(prior[0].content)
            assert c["messages"][-1].content == "What did you say?"
