"""`AnyToolSelectorMiddleware(mode="hierarchical")` inside real `create_agent` runs: AnyTool's hierarchical
retriever selects the tools, once per request, with its usage reported and a search fall-back on failure."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from langgraph_anytool import AnyToolConfig, AnyToolSelectorMiddleware, Catalog, api_tools
from langgraph_anytool.models.llm import ModelNotConfiguredError
from langgraph_anytool.models.testing import ScriptedChatModel, ai, call
from langgraph_anytool.tools.pipeline import ApiExecutor

BUILTIN = Catalog.builtin()
LENGTH = "convert_length_for_quick_metric_converter"
UNITS = "convert_units_for_universal_unit_converter"
SPEED = "convert_speed_for_quick_metric_converter"
TEMPERATURE = "convert_temperature_for_quick_metric_converter"
MILES = "Convert 26.2 miles to kilometres."


@pytest.fixture(scope="module")
def tools() -> Iterator[list[Any]]:
    with ApiExecutor.for_catalog(BUILTIN, kind="template") as executor:
        yield api_tools(BUILTIN, executor)


def scripted_retriever(fail: bool = False, fail_tool_after: int | None = None) -> ScriptedChatModel:
    """The retriever's model: the meta-agent opens Units_Conversion (a small category: its tool agent starts at
    once), the tool agent adds three APIs in a known order; `fail`: every call raises; `fail_tool_after`: the
    tool agent's calls after that many turns raise."""

    def respond(messages: list[BaseMessage], tools: list[str], meta: Mapping[str, Any]) -> AIMessage:
        turn = sum(isinstance(m, AIMessage) for m in messages)
        if fail or (meta["role"] == "tool" and fail_tool_after is not None and turn >= fail_tool_after):
            raise RuntimeError("provider down")
        if meta["role"] == "meta" and turn == 0:
            return ai("", call("create_agent_category_level", category_name="Units_Conversion"))
        if meta["role"] == "tool" and turn == 0:
            return ai("", call("add_apis_into_api_pool", apis=[
                {"tool_name": "Quick Metric Converter", "api_name": "Convert Length"},
                {"tool_name": "Universal Unit Converter", "api_name": "Convert Units"},
                {"tool_name": "Quick Metric Converter", "api_name": "Convert Speed"}]))
        if meta["role"] == "solvable":
            return ai("Unsolvable: not checked")
        return ai("done", call("finish_search"))

    return ScriptedChatModel(responder=respond)


class AgentModel(ScriptedChatModel):
    """The agent's model: calls `target` (whether offered or not), then answers the request; records, per model call, how
    many calls the retriever's model had made by then (`retriever_calls_seen`)."""

    target: str = LENGTH
    watch: Any = None  # the retriever's ScriptedChatModel
    retriever_calls_seen: list[int] = Field(default_factory=list)

    def model_post_init(self, context: Any) -> None:
        def respond(messages: list[BaseMessage], tools: list[str]) -> AIMessage:
            if self.watch is not None:
                self.retriever_calls_seen.append(len(self.watch.calls))
            last_human = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
            if any(isinstance(m, ToolMessage) for m in messages[last_human:]):
                return ai("done")
            return ai("", call(self.target, value=26.2, from_unit="mi", to_unit="km"))

        self.responder = respond


def offered(model: ScriptedChatModel) -> list[list[str]]:
    return [c["tools"] for c in model.calls]


def test_scripted_retriever_selects_from_its_pool_once_per_request(tools: list[Any]) -> None:
    retriever = scripted_retriever()
    mw = AnyToolSelectorMiddleware(max_tools=2, catalog=BUILTIN, mode="hierarchical", model=retriever)
    main = AgentModel(watch=retriever, target=TEMPERATURE)  # calls a tool outside the pool
    out = create_agent(main, tools=tools, middleware=[mw]).invoke({"messages": [HumanMessage(MILES)]})

    assert out["messages"][-1].content == "done"
    # first call: the pool's first two APIs, in pool order (max_tools=2 cuts Convert Speed);
    # second call: the tool called since the request is kept first, the pool fills the rest
    assert offered(main) == [[LENGTH, UNITS], [TEMPERATURE, LENGTH]]
    # the retriever ran before the first model call and not again for the second
    assert sorted(c["role"] for c in retriever.calls) == ["meta", "meta", "tool", "tool"]
    assert main.retriever_calls_seen == [4, 4]
    assert len(mw.retrievals) == 1
    run = mw.retrievals[0]
    assert run.query == MILES and run.function_names == (LENGTH, UNITS, SPEED) and not run.failed
    # usage: per role, from the retriever model's usage metadata (the scripted model reports chars / 4)
    assert run.model_calls == 4 and mw.usage == dict(run.usage)
    assert run.usage["meta"]["model_calls"] == 2 and run.usage["tool"]["model_calls"] == 2
    prompt_tokens = sum(sum(len(str(m.content)) for m in c["messages"]) // 4 for c in retriever.calls)
    assert sum(u["input_tokens"] for u in run.usage.values()) == prompt_tokens > 0
    assert run.tokens > prompt_tokens


def test_async_agent_runs_the_retriever_once_per_request(tools: list[Any]) -> None:
    retriever = scripted_retriever()
    mw = AnyToolSelectorMiddleware(max_tools=3, catalog=BUILTIN, mode="hierarchical", model=retriever)
    main = AgentModel(watch=retriever)
    out = asyncio.run(create_agent(main, tools=tools, middleware=[mw]).ainvoke({"messages": [HumanMessage(MILES)]}))

    assert out["messages"][-1].content == "done"
    assert offered(main) == [[LENGTH, UNITS, SPEED], [LENGTH, UNITS, SPEED]]
    assert main.retriever_calls_seen == [4, 4] and len(mw.retrievals) == 1


def test_each_new_request_runs_the_retriever_again(tools: list[Any]) -> None:
    retriever = scripted_retriever()
    mw = AnyToolSelectorMiddleware(max_tools=2, catalog=BUILTIN, mode="hierarchical", model=retriever)
    main = AgentModel(watch=retriever)
    agent = create_agent(main, tools=tools, middleware=[mw], checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [HumanMessage(MILES)]}, thread)
    agent.invoke({"messages": [HumanMessage("And 10 miles?")]}, thread)
    assert [r.query for r in mw.retrievals] == [MILES, "And 10 miles?"]
    assert main.retriever_calls_seen == [4, 4, 8, 8]  # two model calls per request, one retrieval each
    assert mw.usage["meta"]["model_calls"] == 4 and mw.usage["tool"]["model_calls"] == 4


@pytest.mark.parametrize(("query", "target"), [
    (MILES, LENGTH),
    ("Is 2024-12-26 a public holiday in Germany?", "is_public_holiday_for_public_holidays"),
    ("What is the distance between Paris and Berlin in km?", "distance_between_cities_for_geo_distance_calculator"),
])
def test_offline_stand_in_retriever_selects_the_right_tool(tools: list[Any], query: str, target: str) -> None:
    mw = AnyToolSelectorMiddleware(max_tools=3, catalog=BUILTIN, mode="hierarchical", model="offline")
    main = AgentModel(target=target)
    create_agent(main, tools=tools, middleware=[mw]).invoke({"messages": [HumanMessage(query)]})

    first, second = offered(main)
    assert target in first and 1 <= len(first) <= 3 and len(second) <= 3
    assert second[0] == target  # called since the request: kept, first
    (run,) = mw.retrievals
    assert set(first) <= set(run.function_names) and not run.failed
    assert run.usage["meta"]["model_calls"] >= 1 and run.tokens > 0
    assert mw.usage == dict(run.usage)


def test_failing_retriever_model_falls_back_to_search(tools: list[Any], caplog: pytest.LogCaptureFixture) -> None:
    mw = AnyToolSelectorMiddleware(max_tools=3, catalog=BUILTIN, mode="hierarchical", model=scripted_retriever(True))
    main = AgentModel()
    with caplog.at_level(logging.WARNING):
        out = create_agent(main, tools=tools, middleware=[mw]).invoke({"messages": [HumanMessage(MILES)]})

    assert out["messages"][-1].content == "done"  # the agent ran to its answer
    search = AnyToolSelectorMiddleware(max_tools=3, catalog=BUILTIN)
    reference = AgentModel()
    create_agent(reference, tools=tools, middleware=[search]).invoke({"messages": [HumanMessage(MILES)]})
    assert offered(main) == offered(reference) and len(offered(main)[0]) == 3
    (run,) = mw.retrievals
    assert run.failed and "provider down" in run.errors[0] and run.function_names == () and run.model_calls == 0
    failures = [r for r in caplog.records if "hierarchical retriever failed" in r.getMessage()]
    assert len(failures) == 1 and failures[0].levelno == logging.WARNING  # once per request, not per model call


def test_partly_failed_retrieval_keeps_its_pool_and_search_fills(tools: list[Any],
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    mw = AnyToolSelectorMiddleware(max_tools=3, catalog=BUILTIN, mode="hierarchical",
                                   model=scripted_retriever(fail_tool_after=1))  # the tool agent fails after adding
    main = AgentModel()
    with caplog.at_level(logging.WARNING):
        create_agent(main, tools=tools, middleware=[mw]).invoke({"messages": [HumanMessage(MILES)]})
    (run,) = mw.retrievals
    assert run.function_names == (LENGTH, UNITS, SPEED) and run.failed and "provider down" in run.errors[0]
    first = offered(main)[0]
    assert first[:3] == [LENGTH, UNITS, SPEED]  # max_tools reached by the pool: nothing to fill
    mw2 = AnyToolSelectorMiddleware(max_tools=5, catalog=BUILTIN, mode="hierarchical",
                                    model=scripted_retriever(fail_tool_after=1))
    main2 = AgentModel()
    create_agent(main2, tools=tools, middleware=[mw2]).invoke({"messages": [HumanMessage(MILES)]})
    first = offered(main2)[0]
    assert first[:3] == [LENGTH, UNITS, SPEED] and len(first) == 5  # the search fills what the failed run left
    assert any("hierarchical retriever failed" in r.getMessage() for r in caplog.records)


def test_retriever_exception_falls_back_to_search(tools: list[Any], caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        def invoke(self, *args: Any, **kwargs: Any) -> Any:
            raise KeyError("bad graph state")

    mw = AnyToolSelectorMiddleware(max_tools=2, catalog=BUILTIN, mode="hierarchical", model=scripted_retriever())
    assert mw._pools is not None
    mw._pools.graph = Broken()  # type: ignore[assignment]
    main = AgentModel()
    with caplog.at_level(logging.WARNING):
        create_agent(main, tools=tools, middleware=[mw]).invoke({"messages": [HumanMessage(MILES)]})
    reference = AgentModel()
    create_agent(reference, tools=tools, middleware=[AnyToolSelectorMiddleware(max_tools=2, catalog=BUILTIN)]).invoke(
        {"messages": [HumanMessage(MILES)]})
    assert offered(main) == offered(reference) and len(offered(main)[0]) == 2
    assert "KeyError" in mw.retrievals[0].errors[0]
    assert any("hierarchical retriever failed" in r.getMessage() for r in caplog.records)


def test_pool_without_the_agents_tools_falls_back_to_search(tools: list[Any],
                                                            caplog: pytest.LogCaptureFixture) -> None:
    mw = AnyToolSelectorMiddleware(max_tools=2, catalog=BUILTIN, mode="hierarchical", model=scripted_retriever())
    main = AgentModel(target=TEMPERATURE)
    subset = [t for t in tools if t.name not in (LENGTH, UNITS, SPEED)]
    with caplog.at_level(logging.WARNING):
        create_agent(main, tools=subset, middleware=[mw]).invoke({"messages": [HumanMessage(MILES)]})
    first = offered(main)[0]
    assert len(first) == 2 and not set(first) & {LENGTH, UNITS, SPEED}
    assert any("holds none of the agent's tools" in r.getMessage() for r in caplog.records)


def test_hierarchical_mode_configuration_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="needs catalog="):
        AnyToolSelectorMiddleware(mode="hierarchical", model="offline")
    with pytest.raises(ValueError, match="mode must be 'search' or 'hierarchical'"):
        AnyToolSelectorMiddleware(mode="llm")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="are for mode='hierarchical'"):
        AnyToolSelectorMiddleware(catalog=BUILTIN, model="offline")
    with pytest.raises(ValueError, match=r"config\.retriever is 'search'"):
        AnyToolSelectorMiddleware(catalog=BUILTIN, mode="hierarchical", model="offline",
                                  config=AnyToolConfig(retriever="search"))
    monkeypatch.delenv("ANYTOOL_MODEL", raising=False)
    with pytest.raises(ModelNotConfiguredError, match="needs model="):
        AnyToolSelectorMiddleware(catalog=BUILTIN, mode="hierarchical")
    # per-role models in the config are enough
    mw = AnyToolSelectorMiddleware(catalog=BUILTIN, mode="hierarchical",
                                   config=AnyToolConfig(models={r: "offline" for r in ("meta", "category", "tool")}))
    assert mw.usage == {} and mw.retrievals == []


def test_concurrent_calls_of_one_request_share_one_retrieval() -> None:
    from concurrent.futures import ThreadPoolExecutor

    retriever = scripted_retriever()
    retriever.latency = 0.05  # the first run is still going when the other calls arrive
    mw = AnyToolSelectorMiddleware(max_tools=2, catalog=BUILTIN, mode="hierarchical", model=retriever)
    assert mw._pools is not None
    pools = mw._pools
    with ThreadPoolExecutor(4) as workers:
        runs = list(workers.map(lambda _: pools.retrieve(("m1", MILES), MILES), range(4)))
    assert all(r is runs[0] for r in runs) and len(retriever.calls) == 4 and len(mw.retrievals) == 1
    pools.retrieve(("m2", MILES), MILES)  # another message with the same text is another request
    assert len(retriever.calls) == 8 and len(mw.retrievals) == 2
