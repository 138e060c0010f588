"""The offline stand-in replies in the format a call's inputs name: a text-mode caller or solver writes
`Action:` / `Action Input:` text (read by the real parser), the α-UMi planner words its decision as the prompt
profile has it (read by the real `parse_next`). Whole offline runs solve with every combination, ask the user in
text mode, and `anytool demo` / `anytool run --offline` take the settings with `--set`."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import LLMResult
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.config import AnyToolConfig
from langgraph_anytool.graphs.anytool import create_anytool_graph
from langgraph_anytool.models.llm import ModelSet, role_config
from langgraph_anytool.nodes.abilities import NO_USER_ANSWER
from langgraph_anytool.nodes.solver.finish import parse_finish
from langgraph_anytool.nodes.solver.functions import tool_schemas
from langgraph_anytool.nodes.solver.textmode import TextToolRunnable
from langgraph_anytool.nodes.solver.tree import message_to_dict
from langgraph_anytool.nodes.solver.umi import parse_next
from langgraph_anytool.offline import OfflinePolicyModel
from langgraph_anytool.protocol import action_message, parse_action
from langgraph_anytool.runtime import Deps, RunSignals
from langgraph_anytool.tools.pipeline import ApiExecutor

OPENING: list[BaseMessage] = [SystemMessage("(system prompt: any wording)"), HumanMessage("(any wording)")]
MILES = "Convert 26.2 miles to kilometers"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.builtin(embeddings="none")


@pytest.fixture(scope="module")
def model(catalog: Catalog) -> OfflinePolicyModel:
    return OfflinePolicyModel(catalog=catalog)


def fn(catalog: Catalog, tool: str, api: str) -> str:
    return catalog.function_name(catalog.find_api(tool, api).id)


def reply(model: OfflinePolicyModel, role: str, inputs: dict[str, Any], tools: list[Any] | None = None) -> AIMessage:
    runnable: Any = model.bind_tools(tools) if tools else model
    out = runnable.invoke(OPENING, role_config(None, role, inputs))
    assert isinstance(out, AIMessage)
    return out


def observed(call: dict[str, Any], response: dict[str, Any]) -> list[dict[str, Any]]:
    """History dicts: the caller's call and its observation."""
    ai = AIMessage(content="", tool_calls=[{**call, "type": "tool_call"}], name="caller")
    obs = ToolMessage(content=json.dumps({"status": "ok", "response": response}), tool_call_id=call["id"],
                      name=call["name"])
    return [message_to_dict(ai), message_to_dict(obs)]


# ------------------------------------------------------------------------------------------ replies
def test_text_mode_caller_writes_the_native_call_as_text(model: OfflinePolicyModel, catalog: Catalog) -> None:
    convert = fn(catalog, "Universal Unit Converter", "Convert Units")
    base = {"query": MILES, "functions": [convert], "history": [], "thought": f"call {convert}"}
    native = reply(model, "caller", {**base, "text_mode": False}, [{"type": "function", "function": {
        "name": convert, "parameters": {"type": "object", "properties": {}}}}])
    text = reply(model, "caller", {**base, "text_mode": True, "umi_prompts": "alpha_umi"})
    assert text.tool_calls == [] and native.tool_calls
    parsed = parse_action(str(text.content))
    assert parsed is not None and parsed.error == ""
    assert (parsed.name, parsed.args) == (native.tool_calls[0]["name"], native.tool_calls[0]["args"])
    assert parsed.args is not None and parsed.args["value"] == 26.2


def test_text_tool_runnable_over_the_stand_in_yields_tool_calls(model: OfflinePolicyModel, catalog: Catalog) -> None:
    """The real text-mode path: the runnable renders the prompt as text, the stand-in writes text, the runnable
    parses it into `tool_calls`."""
    distance = catalog.find_api("Geo Distance Calculator", "Distance Between Cities")
    name = catalog.function_name(distance.id)
    deps = Deps(catalog=catalog, models=ModelSet(default=model, by_role={}),
                executor=ApiExecutor.for_catalog(catalog, kind="template"), config=AnyToolConfig(), signals=RunSignals())
    runnable = TextToolRunnable(model, tool_schemas(deps, {name: distance.id}))
    out = runnable.invoke(OPENING, role_config(None, "caller", {
        "query": "How far is Paris from Berlin?", "functions": [name], "history": [], "thought": name,
        "text_mode": True}))
    assert isinstance(out, AIMessage) and [tc["name"] for tc in out.tool_calls] == [name]
    assert set(out.tool_calls[0]["args"].values()) >= {"Paris", "Berlin"}


def test_text_mode_solver_calls_then_finishes_in_text(model: OfflinePolicyModel, catalog: Catalog) -> None:
    convert = fn(catalog, "Universal Unit Converter", "Convert Units")
    base = {"query": MILES, "functions": [convert], "text_mode": True, "ask_user": False}
    first = action_message(str(reply(model, "solver", {**base, "history": []}).content))
    (tc,) = first.tool_calls
    assert tc["name"] == convert and tc["args"]["value"] == 26.2
    history = observed({"name": convert, "args": tc["args"], "id": tc["id"]}, {"text": "26.2 mi = 42.16 km"})
    second = reply(model, "solver", {**base, "history": history})
    (finish,) = action_message(str(second.content)).tool_calls
    assert finish["name"] == "Finish"
    fc = parse_finish(finish["args"])
    assert fc.return_type == "give_answer" and "42.16 km" in fc.final_answer


def test_text_mode_solver_avoids_what_the_diversity_note_lists(model: OfflinePolicyModel, catalog: Catalog) -> None:
    from langgraph_anytool.protocol import DIVERSITY

    fns = [fn(catalog, "Universal Unit Converter", "Convert Units"), fn(catalog, "Quick Metric Converter", "Convert Length")]
    base = {"query": MILES, "functions": fns, "text_mode": True}
    first = parse_action(str(reply(model, "solver", {**base, "history": []}).content))
    assert first is not None
    note = message_to_dict(HumanMessage(f"(any wording) {json.dumps([{'function': first.name}])}", name=DIVERSITY))
    other = parse_action(str(reply(model, "solver", {**base, "history": [note]}).content))
    assert other is not None and other.name not in (first.name, "Finish")


@pytest.mark.parametrize(("profile", "words"), [
    ("alpha_umi", ("Next: caller.", "Next: conclusion.", "Next: give up.")),
    ("default", ("Next: caller", "Next: summarizer", "Next: give up")),
])
def test_planner_words_its_decisions_in_the_profile(model: OfflinePolicyModel, catalog: Catalog, profile: str,
                                                    words: tuple[str, str, str]) -> None:
    convert = fn(catalog, "Universal Unit Converter", "Convert Units")
    base = {"query": MILES, "functions": [convert], "umi_prompts": profile}
    plan = str(reply(model, "planner", {**base, "history": []}).content)
    assert plan.endswith(words[0]) and parse_next(plan) == ("caller", "")
    call = {"name": convert, "args": {"value": 26.2}, "id": "c1"}
    done = str(reply(model, "planner", {**base, "history": observed(call, {"text": "26.2 mi = 42.16 km"})}).content)
    assert done.endswith(words[1]) and parse_next(done) == ("summarizer", "")
    error = ToolMessage(content=json.dumps({"status": "server_error", "error": "HTTP 500"}), tool_call_id="c1",
                        name=convert, status="error")
    failed = [observed(call, {})[0], message_to_dict(error)]
    gave_up = str(reply(model, "planner", {**base, "history": failed}).content)
    assert gave_up.endswith(words[2]) and parse_next(gave_up) == ("give_up", "")


def test_planner_routes_to_asking_and_the_text_mode_caller_asks(model: OfflinePolicyModel, catalog: Catalog) -> None:
    convert = fn(catalog, "Universal Unit Converter", "Convert Units")
    base = {"query": "Convert miles to kilometers", "functions": [convert], "history": [], "ask_user": True}
    plan = str(reply(model, "planner", {**base, "umi_prompts": "alpha_umi"}).content)
    assert parse_next(plan) == ("caller", "") and "ask_user" in plan and "'value'" in plan
    asked = parse_action(str(reply(model, "caller", {**base, "thought": plan, "text_mode": True}).content))
    assert asked is not None and asked.name == "ask_user" and asked.args is not None
    assert "'value'" in asked.args["question"]
    # answered (even by "no user"): the caller calls the API, with the user's value when there is one
    for answer, value in (("26.2", 26.2), (NO_USER_ANSWER, None)):
        ask = AIMessage(content="", tool_calls=[{"name": "ask_user", "args": asked.args, "id": "q1"}], name="caller")
        reply_msg = ToolMessage(content=json.dumps({"user_answer": answer}), tool_call_id="q1", name="ask_user")
        history = [message_to_dict(ask), message_to_dict(reply_msg)]
        plan2 = str(reply(model, "planner", {**base, "history": history}).content)
        assert "ask_user" not in plan2 and parse_next(plan2) == ("caller", "")
        then = parse_action(str(reply(model, "caller", {**base, "history": history, "thought": plan2,
                                                         "text_mode": True}).content))
        assert then is not None and then.name == convert and then.args is not None
        assert then.args.get("value") == value or (value is None and then.args.get("value") != 26.2)
    # not offered: no question
    plain = parse_action(str(reply(model, "caller", {**base, "ask_user": False, "thought": "",
                                                      "text_mode": True}).content))
    assert plain is not None and plain.name == convert


# ------------------------------------------------------------------------------------------ whole runs
class Moves(BaseCallbackHandler):
    """The stand-in's replies per role: (text, tool-call names)."""

    def __init__(self) -> None:
        self.by_role: dict[str, list[tuple[str, list[str]]]] = {}

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        msg = getattr(response.generations[0][0], "message", None)
        assert isinstance(msg, AIMessage)
        role = str(msg.response_metadata.get("role"))
        self.by_role.setdefault(role, []).append((str(msg.content), [tc["name"] for tc in msg.tool_calls]))


QUERY = "How far is Paris from Berlin, and is 2025-07-14 a public holiday in France?"
SETTINGS = [
    pytest.param({"solver": "umi"}, id="umi-default-native"),
    pytest.param({"solver": "umi", "text_mode_roles": ("caller",)}, id="umi-default-text"),
    pytest.param({"solver": "umi", "umi_prompts": "alpha_umi"}, id="umi-alpha_umi-native"),
    pytest.param({"solver": "umi", "umi_prompts": "alpha_umi", "text_mode_roles": ("caller",)}, id="umi-alpha_umi-text"),
    pytest.param({"solver": "dfsdt", "text_mode_roles": ("solver",)}, id="dfsdt-text"),
]


@pytest.mark.parametrize("settings", SETTINGS)
def test_offline_runs_solve_in_every_format(catalog: Catalog, settings: dict[str, Any]) -> None:
    moves = Moves()
    graph = create_anytool_graph(catalog, OfflinePolicyModel(catalog=catalog), config=AnyToolConfig(**settings))
    out = graph.invoke({"query": QUERY}, {"recursion_limit": 500, "callbacks": [moves], "max_concurrency": 1})
    assert out["status"] == "solved", out.get("reason")
    assert "879.7" in out["answer"] and "National Day" in out["answer"]
    attempt = out["solver_attempts"][-1]
    assert attempt["mode"] == settings["solver"] and attempt["api_calls"] == 2
    role = "caller" if settings["solver"] == "umi" else "solver"
    replies = moves.by_role[role]
    text = role in settings.get("text_mode_roles", ())
    for content, calls in replies:  # text mode: every call written as text, none native
        assert (calls == [] and "\nAction Input: " in f"\n{content}") if text else (len(calls) == 1)
    if settings["solver"] == "umi":
        alpha = settings.get("umi_prompts") == "alpha_umi"
        ends = {content.rsplit("Next:", 1)[-1].strip() for content, _ in moves.by_role["planner"]}
        assert ends == ({"caller.", "conclusion."} if alpha else {"caller", "summarizer"})


def test_offline_umi_text_mode_caller_asks_the_user(catalog: Catalog) -> None:
    config = AnyToolConfig(solver="umi", text_mode_roles=("caller",), umi_prompts="alpha_umi", ask_user=True)
    graph = create_anytool_graph(catalog, OfflinePolicyModel(catalog=catalog), config=config,
                                 checkpointer=InMemorySaver())
    run: Any = {"configurable": {"thread_id": "offline-umi-ask"}, "recursion_limit": 500}
    asked = graph.invoke({"query": "Convert miles to kilometers"}, run)
    assert "'value'" in asked["__interrupt__"][0].value["question"]
    out = graph.invoke(Command(resume="26.2"), run)
    assert out["status"] == "solved" and "26.2 mi = 42.1648128 km" in out["answer"]
    batch = graph.invoke({"query": "Convert miles to kilometers"},
                         {"configurable": {"thread_id": "offline-umi-batch"}, "recursion_limit": 500},
                         context={"batch": True})
    assert "__interrupt__" not in batch and "1 mi = 1.609344 km" in batch["answer"]


# ------------------------------------------------------------------------------------------ the CLI
UMI_TEXT = ["--set", "solver=umi", "--set", "text_mode_roles=caller", "--set", "umi_prompts=alpha_umi"]


@pytest.mark.parametrize("argv", [["demo", *UMI_TEXT], ["run", "How far is Paris from Berlin?", "--offline", *UMI_TEXT]])
def test_cli_demo_and_offline_run_take_the_settings(argv: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Any,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from langgraph_anytool.cli.app import main

    monkeypatch.delenv("ANYTOOL_MODEL", raising=False)
    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")
    monkeypatch.setenv("ANYTOOL_INDEX_DIR", str(tmp_path / "index"))
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "status: solved" in out and "879.7" in out
    assert "caller " in out and "planner " in out and "summarizer " in out  # the α-UMi roles ran (usage table)
    if argv[0] == "demo":
        assert "settings: solver=umi, text_mode_roles=caller, umi_prompts=alpha_umi" in out


def test_cli_demo_rejects_bad_settings(capsys: pytest.CaptureFixture[str]) -> None:
    from langgraph_anytool.cli.app import main

    assert main(["demo", "--set", "solver=tree"]) == 2
    assert "AnyToolConfig.solver must be one of dfsdt, cot, umi, got 'tree'" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ eval steps
@pytest.mark.parametrize(("mode", "text_mode"), [("multi", ["--text-mode", "caller", "--prompts", "alpha_umi"]),
                                                 ("single", ["--text-mode", "solver"])])
def test_eval_steps_offline_in_text_mode_predicts_as_natively(mode: str, text_mode: list[str], tmp_path: Any,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from langgraph_anytool.cli.app import main
    from tests.eval.umi.test_step_eval import UMI_ITEM

    path = tmp_path / "in_domain.json"
    path.write_text(json.dumps([UMI_ITEM]), encoding="utf-8")

    def predictions(*extra: str) -> tuple[dict[str, Any], list[Any]]:
        assert main(["eval", "steps", str(path), "--offline", "--mode", mode, *extra, "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["errors"] == 0
        # a text-mode call keeps its `Action Input:` as written (the scorer parses it, as the authors' does):
        # compare it parsed, as the scorer reads it
        return data["overall"], [(s["prediction"]["plan"], s["prediction"]["action"],
                                  json.loads(a) if isinstance(a := s["prediction"]["args"], str) else a)
                                 for s in data["steps"]]

    native, text = predictions(), predictions(*text_mode)
    assert text == native and any(action for _, action, _ in text[1])
    assert text[0]["predicted_calls"] == native[0]["predicted_calls"] > 0
