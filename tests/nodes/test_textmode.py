"""Text-mode tool calling (Action: / Action Input:), the config switch, and the live-run hallucination rate."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_anytool.config import AnyToolConfig, ConfigError
from langgraph_anytool.eval.umi.hallucination import hallucination_stats
from langgraph_anytool.models.testing import ScriptedChatModel, ai
from langgraph_anytool.nodes.solver.textmode import TextToolRunnable, bind_role_tools, umi_template
from langgraph_anytool.protocol import action_message, parse_action, render_action

TOOL = {"type": "function", "function": {"name": "search_for_db", "description": "Search.",
                                         "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}


@pytest.mark.parametrize(("text", "name", "args"), [
    ("Action: f\nAction Input: {\"a\": 1}", "f", {"a": 1}),
    ("I should search.\nAction: search_for_db\nAction Input: {\n  \"q\": \"x\"\n}\nObservation: ...", "search_for_db",
     {"q": "x"}),
    ("Action: f\nAction Input: {'a': 'b'}", "f", {"a": "b"}),  # a Python-literal dict (literal_eval, never eval)
    ("Action: f", "f", {}),  # no Action Input: no arguments
    ("Action: f\nAction Input: ```json\n{\"a\": 2}\n```", "f", {"a": 2}),
    ("Action: first\nAction Input: {}\nAction: second\nAction Input: {\"k\": true}", "second", {"k": True}),
])
def test_parse_action(text: str, name: str, args: dict[str, Any]) -> None:
    parsed = parse_action(text)
    assert parsed is not None and parsed.name == name and parsed.args == args


def test_parse_action_bad_input_and_none() -> None:
    bad = parse_action("Action: f\nAction Input: [1, 2]")
    assert bad is not None and bad.args is None and "not a JSON object" in bad.error
    assert parse_action("just an answer") is None
    msg = action_message("Thinking.\nAction: f\nAction Input: __import__('os')")
    assert msg.invalid_tool_calls and not msg.tool_calls and msg.content == "Thinking."


def test_render_round_trip() -> None:
    text = render_action("f", {"a": [1, "é"]})
    assert text == 'Action: f\nAction Input: {"a": [1, "é"]}'
    parsed = parse_action(text)
    assert parsed is not None and parsed.args == {"a": [1, "é"]}


def test_text_tool_runnable_renders_history_and_parses_reply() -> None:
    model = ScriptedChatModel(replies=[ai('Search.\nAction: search_for_db\nAction Input: {"q": "cats"}')])
    runnable = TextToolRunnable(model, [TOOL])
    history = [SystemMessage(content="You solve tasks."), HumanMessage(content="find cats"),
               AIMessage(content="", tool_calls=[{"name": "search_for_db", "args": {"q": "dogs"}, "id": "1",
                                                  "type": "tool_call"}]),
               ToolMessage(content="no dogs", tool_call_id="1", name="search_for_db")]
    reply = runnable.invoke(history)
    assert isinstance(reply, AIMessage) and reply.tool_calls[0]["name"] == "search_for_db"
    assert reply.tool_calls[0]["args"] == {"q": "cats"} and reply.content == "Search."
    sent = model.calls[0]["messages"]
    assert model.calls[0]["tools"] == []  # nothing bound natively
    assert "Action Input:" in str(sent[0].content) and '"name": "search_for_db"' in str(sent[0].content)
    assert not any(isinstance(m, ToolMessage) for m in sent)
    assert 'Action Input: {"q": "dogs"}' in str(sent[2].content) and "Observation (search_for_db): no dogs" in str(
        sent[3].content)


def test_bind_role_tools_switch() -> None:
    model = ScriptedChatModel(replies=[])
    assert isinstance(bind_role_tools(model, AnyToolConfig(text_mode_roles=("caller",)), "caller", [TOOL]),
                      TextToolRunnable)
    assert not isinstance(bind_role_tools(model, AnyToolConfig(), "caller", [TOOL]), TextToolRunnable)


def test_config_validation() -> None:
    with pytest.raises(ConfigError, match="text_mode_roles"):
        AnyToolConfig(text_mode_roles=("judge",))
    with pytest.raises(ConfigError, match="umi_prompts"):
        AnyToolConfig(umi_prompts="other")  # type: ignore[arg-type]
    cfg = AnyToolConfig(text_mode_roles=["caller"])  # type: ignore[arg-type]
    assert cfg.text_mode_roles == ("caller",)
    assert "Next: give up." in umi_template(AnyToolConfig(umi_prompts="alpha_umi"), "planner")
    assert "{tool_names}" in umi_template(AnyToolConfig(umi_prompts="alpha_umi"), "caller")


def test_hallucination_stats_from_attempt_trees() -> None:
    def node(*calls: tuple[str, str]) -> dict[str, Any]:
        return {"messages": [{"role": "assistant", "content": ""}],
                "calls": [{"function": f, "status": s} for f, s in calls]}

    attempts = [
        {"attempt": 1, "tree": [{"messages": [], "calls": []}, node(("f", "ok")), node(("ghost", "unknown_function")),
                                node(("Finish", "finish:give_up_and_restart"))]},
        {"attempt": 2, "tree": [{"messages": [], "calls": []}, node(("g", "not_in_pool"), ("f", "ok"))]},
    ]
    s = hallucination_stats(attempts)
    # calls (Finish excluded): f, ghost, g, f = 4; hallucinated: ghost, g = 2; steps: 4 nodes with an assistant turn
    assert (s.calls, s.hallucinated, s.unknown_function, s.steps) == (4, 2, 1, 4)
    assert s.per_call == pytest.approx(0.5) and s.per_step == pytest.approx(0.5)
    assert s.functions == ("ghost", "g")
    with pytest.raises(ValueError, match="tree"):
        hallucination_stats([{"attempt": 3, "tree": "x"}])


def test_umi_solver_with_text_mode_caller_and_alpha_umi_prompts() -> None:
    """The α-UMi solver graph with a caller that has no function calling; its hallucinated call is counted."""
    from tests.nodes.test_solver import CURRENT
    from tests.nodes.test_solver_umi import make_deps, solve, system_of

    planner = ScriptedChatModel(replies=[
        ai("Look up a made-up function first. Next: caller."),
        ai(f"Now {CURRENT} for Paris. Next: caller."),
        ai("Known now. Next: conclusion."),
    ])
    caller = ScriptedChatModel(replies=[
        ai("Action: weather_magic\nAction Input: {}"),
        ai(f'I call it.\nAction: {CURRENT}\nAction Input: {{"city": "Paris"}}'),
    ])
    summarizer = ScriptedChatModel(replies=[ai("It is sunny in Paris.")])
    deps = make_deps(planner, caller, summarizer, text_mode_roles=("caller",), umi_prompts="alpha_umi")
    attempt = solve(deps)
    assert attempt["finish_type"] == "give_answer" and attempt["api_calls"] == 1
    assert caller.calls[0]["tools"] == []  # text mode: nothing bound natively
    c0 = system_of(caller, 0)
    assert "Action Input:" in c0 and "Thought for this step:" in c0  # the alpha_umi caller profile
    assert "Next: conclusion." in system_of(planner, 0)
    stats = hallucination_stats([attempt])
    assert stats.calls == 2 and stats.hallucinated == 1 and stats.functions == ("weather_magic",)


def test_dfsdt_solver_in_text_mode() -> None:
    """A solver model without function calling: its `Action:` / `Action Input:` text drives the DFSDT tree."""
    from tests.nodes.test_solver import CURRENT, make_deps, only_attempt, solve

    model = ScriptedChatModel(replies=[
        ai(f'Check the weather.\nAction: {CURRENT}\nAction Input: {{"city": "Paris"}}'),
        ai('Action: Finish\nAction Input: {"return_type": "give_answer", "final_answer": "Sunny in Paris."}'),
    ])
    attempt = only_attempt(solve(make_deps(model, text_mode_roles=("solver",))))
    assert attempt["finish_type"] == "give_answer" and attempt["answer"] == "Sunny in Paris."
    assert attempt["api_calls"] == 1 and model.calls[0]["tools"] == []  # nothing bound natively
