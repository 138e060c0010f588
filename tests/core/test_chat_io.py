"""Messages in, messages out: chat input, the answer appended as an AIMessage, and AnyTool as a LangChain tool."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_anytool import AnyToolConfig, Catalog, create_anytool_graph, create_anytool_tool
from langgraph_anytool.chat import InputError, message_text
from tests.fakes import ScriptedChatModel, ai, call
from tests.graph_world import World, adds, last_human, make_world, observations, solved_judge, turns

CFG = AnyToolConfig(seed_with_search=False)


def fn(catalog: Catalog, tool: str, api: str) -> str:
    return catalog.function_name(catalog.find_api(tool, api).id)


def weather_world(catalog: Catalog) -> World:
    """Meta → Weather → the tool agent adds Current; the solver calls it for the city named in its prompt."""
    weather = fn(catalog, "Weather Now", "Current")

    def solver(m: list[BaseMessage]) -> AIMessage:
        asked = " ".join(str(x.content) for x in m if x.name != "prior_conversation")  # the request, not the chat
        city = "Rome" if "Rome" in asked else "Paris"
        if not observations(m):
            return ai("", call(weather, city=city))
        return ai("", call("Finish", return_type="give_answer", final_answer=f"It is 21°C in {city}."))

    return World({
        "meta": lambda m: (ai("", call("create_agent_category_level", category_name="Weather"))
                           if turns(m) == 0 else ai("", call("finish_search"))),
        "tool": lambda m: [adds("Weather Now", "Current"), ai("", call("check_if_request_solvable"))][turns(m)]
        if turns(m) < 2 else ai("", call("finish_search")),
        "solvable": lambda m: ai("Solvable"),
        "solver": solver,
        "judge": solved_judge,
    })


def test_messages_only_input_answers_the_last_human_message_and_appends_the_answer() -> None:
    catalog, executor = make_world()
    world = weather_world(catalog)
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=world), config=CFG, executor=executor)
    out = graph.invoke({"messages": [{"role": "user", "content": "Hi, I am planning a trip."},
                                     {"role": "assistant", "content": "Where to?"},
                                     {"role": "user", "content": "What's the temperature in Rome?"}]})

    assert out["query"] == "What's the temperature in Rome?"  # the last human message is the request
    assert out["status"] == "solved" and out["answer"] == "It is 21°C in Rome."
    msgs = out["messages"]
    assert [type(m).__name__ for m in msgs] == ["HumanMessage", "AIMessage", "HumanMessage", "AIMessage"]
    assert msgs[-1].content == "It is 21°C in Rome." and msgs[-1].response_metadata["anytool_status"] == "solved"
    assert msgs[0].content == "Hi, I am planning a trip."  # the input turns are kept, in order
    # the agents worked on the last human message
    assert "What's the temperature in Rome?" in " ".join(str(m.content) for m in out["agents"]["meta"]["messages"])


def test_content_blocks_and_a_chat_on_a_thread() -> None:
    """Studio sends content blocks; on a thread, each new human message is the next request and the
    conversation accumulates (add_messages), with the query form usable on the same thread."""
    catalog, executor = make_world()
    model = ScriptedChatModel(responder=weather_world(catalog))
    graph = create_anytool_graph(catalog, model, config=CFG, executor=executor, checkpointer=InMemorySaver())
    cfg: Any = {"configurable": {"thread_id": "chat"}}
    first = graph.invoke({"messages": [HumanMessage(content=[{"type": "text", "text": "Temperature in Paris?"}])]},
                         cfg)
    assert first["query"] == "Temperature in Paris?" and first["answer"] == "It is 21°C in Paris."
    second = graph.invoke({"messages": [{"role": "user", "content": "And in Rome?"}]}, cfg)
    assert second["query"] == "And in Rome?" and second["answer"] == "It is 21°C in Rome."
    assert [message_text(m) for m in second["messages"]] == [
        "Temperature in Paris?", "It is 21°C in Paris.", "And in Rome?", "It is 21°C in Rome."]
    # a {"query"} turn on the same thread: the query is the request (not the earlier human message) and is
    # recorded as a human message
    third = graph.invoke({"query": "Weather in Paris please"}, cfg)
    assert third["query"] == "Weather in Paris please" and third["answer"] == "It is 21°C in Paris."
    assert [message_text(m) for m in third["messages"]][-2:] == ["Weather in Paris please", "It is 21°C in Paris."]
    assert isinstance(third["messages"][-2], HumanMessage) and len(third["messages"]) == 6
    # the earlier turns reached the solver as context (one message holding the conversation as text)
    solver_prompt = [c["messages"] for c in model.calls if c["role"] == "solver"][-1]
    prior = [x for x in solver_prompt if x.name == "prior_conversation"]
    assert len(prior) == 1 and "And in Rome?" in str(prior[0].content)
    assert "Weather in Paris please" not in str(prior[0].content)


def test_query_input_still_works_and_gets_a_conversation() -> None:
    catalog, executor = make_world()
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=weather_world(catalog)), config=CFG,
                                 executor=executor)
    out = graph.invoke({"query": "Temperature in Paris?"})
    assert out["status"] == "solved" and out["answer"] == "It is 21°C in Paris."
    assert [(type(m).__name__, m.content) for m in out["messages"]] == [
        ("HumanMessage", "Temperature in Paris?"), ("AIMessage", "It is 21°C in Paris.")]


def test_a_failed_run_appends_its_status_and_reason() -> None:
    catalog, executor = make_world()
    world = World({"meta": lambda m: ai("", call("finish_search"))})  # finds nothing
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=world),
                                 config=AnyToolConfig(seed_with_search=False, max_reflections=0), executor=executor)
    out = graph.invoke({"messages": [{"role": "user", "content": "Book me a flight to Mars"}]})
    assert out["status"] == "no_apis" and out["answer"] == ""
    last = out["messages"][-1]
    assert isinstance(last, AIMessage) and last.response_metadata["anytool_status"] == "no_apis"
    assert "no_apis" in last.content and out["reason"] in last.content and out["reason"]


@pytest.mark.parametrize(("payload", "expected"), [
    ({}, "the input has no request: give 'query'"),
    ({"query": "   "}, "the input has no request"),
    ({"messages": [{"role": "assistant", "content": "hello"}]}, "input 'messages' has no human message"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]},
     r"input 'messages'\[0\]: the last human message has no text"),
])
def test_an_input_without_a_request_fails_clearly(payload: dict[str, Any], expected: str) -> None:
    catalog, executor = make_world()
    model = ScriptedChatModel(replies=[])
    graph = create_anytool_graph(catalog, model, config=CFG, executor=executor)
    with pytest.raises(InputError, match=expected):
        graph.invoke(payload)
    assert model.calls == []  # nothing ran


def test_the_graph_schemas_carry_messages_for_chat_clients() -> None:
    """Studio's chat view and A2A look for a `messages` list of messages in the input (and output) schema."""
    catalog, executor = make_world()
    graph = create_anytool_graph(catalog, ScriptedChatModel(replies=[]), config=CFG, executor=executor)
    inp, outp = graph.get_input_jsonschema(), graph.get_output_jsonschema()
    assert "messages" in inp["properties"] and "query" in inp["properties"] and not inp.get("required")
    assert inp["properties"]["messages"]["type"] == "array"
    assert "HumanMessage" in json.dumps(inp) and "AIMessage" in json.dumps(outp)
    assert "messages" in outp["properties"]


# ------------------------------------------------------------------------------------- the LangChain tool
def test_create_agent_with_the_anytool_tool_gets_the_answer_with_sources() -> None:
    catalog, executor = make_world()
    weather = fn(catalog, "Weather Now", "Current")
    inner = ScriptedChatModel(responder=weather_world(catalog))
    tool = create_anytool_tool(catalog, inner, config=CFG, executor=executor, name="find_and_call_apis")
    assert set(tool.args) == {"request"} and "5 APIs" in tool.description

    def outer_reply(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        assert tools == ["find_and_call_apis"]
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results:
            return ai("", call("find_and_call_apis", request="What is the temperature in Rome right now?"))
        found = str(results[-1].content)  # text: the answer, then its sources
        return ai(f"{found.splitlines()[0]} (via {found.split('Sources: ')[1].split(' / ')[0]})")

    outer = ScriptedChatModel(responder=outer_reply)
    agent = create_agent(outer, tools=[tool])
    out = agent.invoke({"messages": [{"role": "user", "content": "How warm is it in Rome?"}]})

    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert result.content == "It is 21°C in Rome.\n\nSources: Weather Now / Current (1 call, ok)"
    record = {k: result.artifact[k] for k in ("answer", "status", "sources")}
    assert record == {"answer": "It is 21°C in Rome.", "status": "solved",
                      "sources": [{"function": weather, "tool": "Weather Now", "api": "Current",
                                   "category": "Weather", "calls": 1, "status": "ok"}]}
    assert result.artifact["query"] == "What is the temperature in Rome right now?"
    assert result.artifact["total_tokens"] > 0 and result.artifact["api_pool"][0]["function_name"] == weather
    assert out["messages"][-1].content == "It is 21°C in Rome. (via Weather Now)"
    assert len(outer.calls) == 2 and "solver" in [c["role"] for c in inner.calls]


def test_the_tool_names_only_the_apis_of_the_answer_and_runs_async() -> None:
    """After a failed call and a reflection, the sources are the APIs on the answer's path (not the failed one);
    `ainvoke` runs the graph too."""
    catalog, executor = make_world()
    broken, backup = fn(catalog, "Stocks API", "Quote"), fn(catalog, "Backup Quotes", "Quote")

    def tool_agent(m: list[BaseMessage]) -> AIMessage:
        if broken in last_human(m):
            return adds("Backup Quotes", "Quote") if not isinstance(m[-1], ToolMessage) else ai("", call("finish_search"))
        return [adds("Stocks API", "Quote"), ai("", call("check_if_request_solvable"))][min(turns(m), 1)]

    def solver(m: list[BaseMessage]) -> AIMessage:
        target = backup if backup in str(m[0].content) else broken
        seen = observations(m)
        if not seen:
            return ai("", call(target, symbol="AAPL"))
        if seen[-1]["status"] == "ok":
            return ai("", call("Finish", return_type="give_answer", final_answer="AAPL trades at 187.5 USD."))
        return ai("", call("Finish", return_type="give_up", reason=f"{target} failed", failed_functions=[target]))

    world = World({
        "meta": lambda m: (ai("", call("create_agent_category_level", category_name="Finance"))
                           if turns(m) == 0 else ai("", call("finish_search"))),
        "tool": tool_agent, "solvable": lambda m: ai("Solvable"), "solver": solver, "judge": solved_judge,
    })
    tool = create_anytool_tool(catalog, ScriptedChatModel(responder=world), config=CFG, executor=executor)
    msg = asyncio.run(tool.ainvoke({"type": "tool_call", "id": "t1", "name": "anytool",
                                    "args": {"request": "Price of AAPL?"}}))
    body = msg.artifact
    assert body["status"] == "solved" and body["answer"] == "AAPL trades at 187.5 USD."
    assert [s["function"] for s in body["sources"]] == [backup] and body["sources"][0]["status"] == "ok"


def test_a_failed_tool_run_reports_status_reason_and_the_apis_it_tried() -> None:
    catalog, executor = make_world()
    broken = fn(catalog, "Stocks API", "Quote")
    world = World({
        "meta": lambda m: (ai("", call("create_agent_category_level", category_name="Finance"))
                           if turns(m) == 0 else ai("", call("finish_search"))),
        "tool": lambda m: adds("Stocks API", "Quote") if turns(m) == 0 else ai("", call("check_if_request_solvable")),
        "solvable": lambda m: ai("Solvable"),
        "solver": lambda m: (ai("", call(broken, symbol="AAPL")) if not observations(m) else
                             ai("", call("Finish", return_type="give_up", reason="the quote API is down",
                                         failed_functions=[broken]))),
    })
    tool = create_anytool_tool(catalog, ScriptedChatModel(responder=world), executor=executor,
                               config=AnyToolConfig(seed_with_search=False, max_reflections=0))
    msg = tool.invoke({"type": "tool_call", "id": "t1", "name": "anytool", "args": {"request": "Price of AAPL?"}})
    assert msg.content == ("No answer (gave_up): the quote API is down\n\nSources: Stocks API / Quote (1 call, "
                           "error)")
    body = msg.artifact
    assert body["status"] == "gave_up" and body["answer"] == "" and body["reason"] == "the quote API is down"
    assert body["sources"] == [{"function": broken, "tool": "Stocks API", "api": "Quote", "category": "Finance",
                                "calls": 1, "status": "error"}]
