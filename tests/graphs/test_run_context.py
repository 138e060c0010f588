"""A run keeps the context it started with (issue 29 §1): a resume without a context (`Command(resume=...)`, `None`
after a crash) runs with the started run's settings; a resume that passes one overrides the fields it sets for that
call only; a context with an unknown field or a bad value is refused before the run starts (§10)."""

from __future__ import annotations

import asyncio
from typing import Any, NotRequired

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from langgraph_anytool import Catalog, create_anytool_graph
from langgraph_anytool.config import ConfigError
from langgraph_anytool.context import AnyToolContext, context_values, storable_context
from langgraph_anytool.graphs.compiled import AnyToolGraph

QUERY = "Convert miles to kilometers"  # the value to convert is missing: the stand-in asks for it


@pytest.fixture(scope="module")
def asking() -> Any:
    return create_anytool_graph(Catalog.builtin(), "offline", checkpointer=InMemorySaver())


def test_a_resume_without_context_keeps_ask_user_and_uses_the_answer(asking: Any) -> None:
    cfg: Any = {"configurable": {"thread_id": "keep-1"}}
    out = asking.invoke({"query": QUERY}, cfg, context={"ask_user": True})
    assert "'value'" in out["__interrupt__"][0].value["question"]
    assert asking.get_state(cfg).values["run_context"] == {"ask_user": True}
    out = asking.invoke(Command(resume="26.2 miles"), cfg)  # no context: the run's own
    assert out["status"] == "solved" and "26.2 mi = 42.1648128 km" in out["answer"], out["answer"]
    calls = [c for a in out["solver_attempts"] for n in a["tree"] for c in n.get("calls", [])]
    assert all(c.get("status") != "unknown_function" for c in calls), calls


def test_an_async_resume_keeps_the_context_too(asking: Any) -> None:
    cfg: Any = {"configurable": {"thread_id": "keep-async"}}

    async def run() -> dict[str, Any]:
        first = await asking.ainvoke({"query": QUERY}, cfg, context={"ask_user": True})
        assert "__interrupt__" in first
        return dict(await asking.ainvoke(Command(resume="26.2"), cfg))

    out = asyncio.run(run())
    assert out["status"] == "solved" and "26.2 mi = 42.1648128 km" in out["answer"]


def test_a_new_query_on_the_thread_starts_with_its_own_context(asking: Any) -> None:
    cfg: Any = {"configurable": {"thread_id": "keep-new"}}
    asking.invoke({"query": QUERY}, cfg, context={"ask_user": True, "batch": True})  # no user: goes on
    assert asking.get_state(cfg).values["run_context"] == {"ask_user": True, "batch": True}
    out = asking.invoke({"query": "Convert 26.2 miles to kilometers"}, cfg)
    assert out["status"] == "solved" and asking.get_state(cfg).values["run_context"] == {}


class _State(TypedDict):
    seen: NotRequired[list[Any]]
    run_context: NotRequired[dict[str, Any]]


def _probe_graph() -> Any:
    """Two nodes that record the run-time context they get; the first stores it as `init` does, the second pauses."""

    def start(state: _State, runtime: Runtime[Any]) -> dict[str, Any]:
        values = context_values(runtime.context)
        return {"run_context": storable_context(values), "seen": [values]}

    def ask(state: _State, runtime: Runtime[Any]) -> dict[str, Any]:
        seen = context_values(runtime.context)
        answer = interrupt("?")
        return {"seen": [*state["seen"], seen, answer]}

    builder = StateGraph(_State, context_schema=AnyToolContext)
    builder.add_node("start", start)
    builder.add_node("ask", ask)
    builder.add_edge(START, "start")
    builder.add_edge("start", "ask")
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.__class__ = AnyToolGraph
    return graph


def test_a_resume_that_passes_a_context_overrides_those_fields_for_that_call_only() -> None:
    graph = _probe_graph()
    cfg: Any = {"configurable": {"thread_id": "p"}}
    graph.invoke({}, cfg, context={"ask_user": True, "max_api_pool": 8})
    out = graph.invoke(Command(resume="yes"), cfg, context={"max_api_pool": 4})
    # the resumed node saw the run's ask_user and the resume's max_api_pool
    assert out["seen"][1] == {"ask_user": True, "max_api_pool": 4} and out["seen"][2] == "yes"
    # the run's stored context is still the one it started with
    assert graph.get_state(cfg).values["run_context"] == {"ask_user": True, "max_api_pool": 8}


def test_a_model_object_in_the_context_is_not_stored() -> None:
    from langgraph_anytool.offline import OfflinePolicyModel

    model = OfflinePolicyModel(catalog=Catalog.builtin())
    assert storable_context({"model": model, "max_api_pool": 8, "text_mode_roles": ("caller",)}) == {
        "max_api_pool": 8, "text_mode_roles": ["caller"]}


@pytest.mark.parametrize(("context", "message"), [
    ({"max_pool": 3}, "unknown context field 'max_pool' (did you mean 'max_api_pool'?); fields are model, profile, "
                      "max_api_pool"),
    ({"max_api_pool": "many"}, "context: AnyToolConfig.max_api_pool must be an integer, got 'many'"),
    ({"execution": "template"}, "execution cannot change per run"),
    ({"profile": "papers"}, "unknown profile 'papers'"),
])
def test_a_bad_context_is_one_clear_error_before_the_run(asking: Any, context: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        asking.invoke({"query": "Convert 26.2 miles to kilometers"}, {"configurable": {"thread_id": "bad"}},
                      context=context)
    assert message in str(info.value)
    assert not isinstance(info.value, TypeError)
