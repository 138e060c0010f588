"""The LangGraph-native structure: run-time context, layering, schemas, ownership of what the graph creates."""

from __future__ import annotations

import ast
import gc
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from langgraph_anytool import AnyToolConfig, create_anytool_graph
from langgraph_anytool.config import ConfigError
from langgraph_anytool.context import AnyToolContext, resolve_settings
from langgraph_anytool.runtime import RunSignals
from tests.fakes import ScriptedChatModel, ai, call
from tests.graph_world import make_world, turns

PACKAGE = Path(__file__).resolve().parents[2] / "langgraph_anytool"


def test_nothing_under_nodes_imports_graphs() -> None:
    offenders = []
    for path in (PACKAGE / "nodes").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and ((node.module or "").startswith("graphs")
                                                     or "graphs" in (node.module or "").split(".")):
                offenders.append(f"{path.relative_to(PACKAGE)}: from {node.module}")
            if isinstance(node, ast.Import) and any("langgraph_anytool.graphs" in a.name for a in node.names):
                offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []


def _pool_world(cap_seen: list[int]) -> Any:
    """Meta creates 3 categories' agents; each tool agent tries to add its APIs; records the pool sizes seen."""

    def respond(messages: list[BaseMessage], tools: list[str], meta: Any) -> AIMessage:
        role, inputs = meta["role"], meta["inputs"]
        if role == "meta":
            return (ai("", *(call("create_agent_category_level", category_name=c) for c in
                             ("Weather", "Finance", "Markets"))) if turns(messages) == 0 else ai("", call("finish_search")))
        if role == "tool":
            if turns(messages) == 0:
                return ai("", call("get_apis_in_tool", tool_name=inputs["tools"][0]))
            apis = [{"tool_name": t, "api_name": a} for t, a in (
                ("Weather Now", "Current"), ("Stocks API", "Quote"), ("Backup Quotes", "Quote"),
                ("Exchange Board", "Last Price")) if t in inputs["tools"]]
            return ai("", call("add_apis_into_api_pool", apis=apis)) if turns(messages) == 1 else ai(
                "", call("finish_search"))
        if role == "solver":
            cap_seen.append(len(tools) - 1)  # the pooled functions (Finish aside)
            return ai("", call("Finish", return_type="give_answer", final_answer="done"))
        return ai('{"label": "Solved", "reason": "ok"}')

    return respond


def test_one_compiled_graph_runs_with_different_context_limits() -> None:
    catalog, executor = make_world()
    seen: list[int] = []
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=_pool_world(seen)),
                                 config=AnyToolConfig(seed_with_search=False), executor=executor)
    small = graph.invoke({"query": "weather and stock prices"}, context={"max_api_pool": 2})
    large = graph.invoke({"query": "weather and stock prices"}, context={"max_api_pool": 64})
    assert len(small["api_pool"]) == 2 and len(large["api_pool"]) == 4
    assert seen == [2, 4]  # the solver of each run saw its own pool
    assert any(a["end_reason"] == "pool_full" for a in small["agents"].values())
    default = graph.invoke({"query": "weather and stock prices"})  # no context: the build-time config
    assert len(default["api_pool"]) == 4


def test_context_overrides_field_by_field_and_validates() -> None:
    base = AnyToolConfig(solver="umi", max_api_pool=32)
    got = resolve_settings(base, AnyToolContext(max_api_pool=8))
    assert (got.solver, got.max_api_pool) == ("umi", 8)
    paper = resolve_settings(base, {"profile": "paper"})
    assert not paper.seed_with_search and not paper.small_category_finished and paper.max_api_pool == 32
    with pytest.raises(ConfigError, match="max_api_pool"):
        resolve_settings(base, {"max_api_pool": 0})
    with pytest.raises(ConfigError, match="profile"):
        resolve_settings(base, {"profile": "fast"})


def test_config_from_env_and_strings() -> None:
    cfg = AnyToolConfig.from_env({"ANYTOOL_PROFILE": "paper", "ANYTOOL_MAX_API_POOL": "16",
                                  "ANYTOOL_SMALL_CATEGORY_SHORTCUT": "true", "ANYTOOL_SOLVER": "cot"})
    assert (cfg.max_api_pool, cfg.small_category_shortcut, cfg.seed_with_search, cfg.solver) == (16, True, False, "cot")
    with pytest.raises(ConfigError, match="max_api_pool must be an integer"):
        AnyToolConfig.from_env({"ANYTOOL_MAX_API_POOL": "many"})
    with pytest.raises(ConfigError, match="unknown AnyToolConfig field 'pool'"):
        AnyToolConfig().with_values({"pool": 3})


def test_per_role_models_from_a_command_line() -> None:
    """`--set 'models={"judge": "openai:gpt-4o"}'`: a JSON object of role → model string (the judge on another
    model, from `anytool run` or `eval run`); anything else is one error naming the field."""
    cfg = AnyToolConfig().with_values({"models": '{"judge": "openai:gemma3-270m"}'})
    assert cfg.models == {"judge": "openai:gemma3-270m"}
    with pytest.raises(ConfigError, match=r"models must be a JSON object .*got 'judge=openai:x'"):
        AnyToolConfig().with_values({"models": "judge=openai:x"})
    with pytest.raises(ConfigError, match="models must be a JSON object"):
        AnyToolConfig().with_values({"models": '["openai:x"]'})
    with pytest.raises(ConfigError, match="unknown role 'jduge'"):
        AnyToolConfig().with_values({"models": '{"jduge": "openai:x"}'})


def test_graph_schemas_and_as_tool_work_on_python_311() -> None:
    catalog, executor = make_world()
    graph = create_anytool_graph(catalog, ScriptedChatModel(replies=[]), executor=executor)
    assert graph.get_input_jsonschema()["properties"]["query"]["type"] == "string"
    assert "answer" in graph.get_output_jsonschema()["properties"]
    assert "max_api_pool" in graph.get_context_jsonschema()["properties"]
    tool = graph.as_tool(name="anytool", description="Answer a request with APIs")
    assert tool.name == "anytool" and "query" in tool.args


def test_an_executor_the_factory_made_is_closed_with_the_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    from langgraph_anytool.tools.pipeline import ApiExecutor

    closed: list[int] = []
    monkeypatch.setattr(ApiExecutor, "close", lambda self: closed.append(id(self)))
    catalog, executor = make_world()
    graph = create_anytool_graph(catalog, ScriptedChatModel(replies=[]))  # the factory makes an executor
    del graph
    gc.collect()
    assert len(closed) == 1
    mine = create_anytool_graph(catalog, ScriptedChatModel(replies=[]), executor=executor)
    del mine
    gc.collect()
    assert len(closed) == 1  # a caller's executor stays the caller's


def test_run_signals_of_crashed_runs_do_not_pile_up() -> None:
    signals = RunSignals(max_runs=3)
    for i in range(10):  # runs that never reached finalize
        signals.add_tokens(f"run{i}", 5)
    assert signals.tracked_runs() == 3 and signals.tokens("run9") == 5
