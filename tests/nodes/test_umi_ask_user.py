"""α-UMi's caller may ask the user (`ask_user`), as the DFSDT solver can: the planner is told asking is possible and
routes to the caller, the caller is offered `ask_user(question)` (bound natively, or listed in text mode), the run
pauses with `interrupt` and `Command(resume=...)` brings the answer to the caller as the call's result; batch runs
answer "no user is available" without pausing. Scripted models, both prompt profiles, native and text mode."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langgraph_anytool import AnyToolConfig, create_anytool_graph
from langgraph_anytool.models.testing import ScriptedChatModel, ai, call
from langgraph_anytool.nodes.abilities import NO_USER_ANSWER
from langgraph_anytool.nodes.abilities.prompts import PLANNER_ASK_USER_NOTE
from langgraph_anytool.protocol import parse_action
from tests.nodes.test_abilities import REF, counting_world

QUESTION = "Which city do you mean?"
MODES = [pytest.param(text, profile, id=f"{profile}-{'text' if text else 'native'}")
         for profile in ("default", "alpha_umi") for text in (False, True)]


def answers_in(history: Sequence[Mapping[str, Any]]) -> list[str]:
    """The user's answers among a role's `history` input (message dicts)."""
    return [json.loads(d["content"])["user_answer"] for d in history
            if d.get("role") == "tool" and d.get("name") == "ask_user"]


def called(history: Sequence[Mapping[str, Any]], name: str) -> bool:
    return any(tc["name"] == name for d in history if d.get("role") == "assistant" for tc in d.get("tool_calls") or [])


class Script:
    """Planner, caller, summarizer and judge of an α-UMi run that needs a city only the user can give."""

    def __init__(self, weather: str, *, text: bool, profile: str) -> None:
        self.weather, self.text = weather, text
        self.next = ({"caller": "Next: caller.", "summarizer": "Next: conclusion."} if profile == "alpha_umi"
                     else {"caller": "Next: caller", "summarizer": "Next: summarizer"})
        self.calls: list[dict[str, Any]] = []  # role, tools, system prompt, inputs of every call

    def __call__(self, messages: list[BaseMessage], tools: list[str], meta: Mapping[str, Any]) -> AIMessage:
        role, inputs = meta["role"], meta["inputs"]
        system = "\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage))
        self.calls.append({"role": role, "tools": tools, "system": system, "inputs": inputs})
        history = inputs.get("history") or []
        answers = answers_in(history)
        if role == "planner":
            if not answers:
                return ai(f"The request names no city: the caller should ask the user. {self.next['caller']}")
            if not called(history, self.weather):
                return ai(f"Now the weather for the city the user gave. {self.next['caller']}")
            return ai(f"The weather is known. {self.next['summarizer']}")
        if role == "caller":
            if not answers:
                return self.reply("ask_user", {"question": QUESTION})
            city = "Paris" if answers[-1] == NO_USER_ANSWER else answers[-1]  # no user: a stated assumption
            return self.reply(self.weather, {"city": city})
        if role == "summarizer":
            cities = [d for d in history if d.get("role") == "tool" and d.get("name") == self.weather]
            return ai(f"It is 21°C ({json.loads(cities[-1]['content'])['response']['city']}).")
        if role == "judge":
            return ai('{"label": "Solved", "reason": "the answer gives the weather"}')
        raise AssertionError(f"unexpected role {role!r}")

    def reply(self, name: str, args: dict[str, Any]) -> AIMessage:
        if self.text:
            return ai(f"Action: {name}\nAction Input: {json.dumps(args)}")
        return ai("", call(name, **args))

    def of(self, role: str) -> list[dict[str, Any]]:
        return [c for c in self.calls if c["role"] == role]


def graph_for(text: bool, profile: str, **cfg: Any) -> tuple[Any, Script, list[dict[str, Any]], str]:
    catalog, executor, calls, weather_id, _ = counting_world()
    script = Script(catalog.function_name(weather_id), text=text, profile=profile)
    config = AnyToolConfig(**{**REF, "solver": "umi", "ask_user": True, "umi_prompts": profile,
                              "text_mode_roles": ("caller",) if text else (), **cfg})
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=script), config=config, executor=executor,
                                 checkpointer=InMemorySaver())
    return graph, script, calls, weather_id


def assert_paired(tree: Sequence[Mapping[str, Any]]) -> int:
    """Every tool call of every node is answered by exactly one ToolMessage, in the same node, before the node's
    next assistant message; returns how many calls were checked."""
    checked = 0
    for node in tree:
        pending: list[str] = []
        for m in node["messages"]:
            if m["role"] == "assistant":
                assert not pending, (node["id"], pending)
                pending = [tc["id"] for tc in m.get("tool_calls") or []]
                assert len(set(pending)) == len(pending)
                checked += len(pending)
            elif m["role"] == "tool":
                assert m["tool_call_id"] in pending, (node["id"], m)
                pending.remove(m["tool_call_id"])
        assert not pending, (node["id"], pending)
    return checked


def caller_tree_messages(out: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    return [m for n in out["solver_attempts"][-1]["tree"] for m in n["messages"] if m.get("name") == name]


@pytest.mark.parametrize(("text", "profile"), MODES)
def test_caller_asks_the_run_pauses_and_the_answer_reaches_the_caller(text: bool, profile: str) -> None:
    graph, script, calls, weather_id = graph_for(text, profile)
    config: Any = {"configurable": {"thread_id": f"umi-ask-{profile}-{text}"}}
    first = graph.invoke({"query": "What's the weather?", "api_ids": [weather_id]}, config)
    (intr,) = first["__interrupt__"]
    assert intr.value == {"type": "ask_user", "question": QUESTION, "query": "What's the weather?"}
    assert graph.get_state(config).next and calls == []
    # the planner was told the caller can ask; the caller was offered ask_user beside the pooled API
    planner, caller = script.of("planner"), script.of("caller")
    assert PLANNER_ASK_USER_NOTE.strip() in planner[0]["system"] and planner[0]["inputs"]["ask_user"] is True
    if text:  # nothing bound natively: the function list in the prompt holds ask_user's schema
        assert caller[0]["tools"] == [] and '"name": "ask_user"' in caller[0]["system"]
        assert caller[0]["inputs"]["text_mode"] is True
    else:
        assert caller[0]["tools"] == [script.weather, "ask_user"] and caller[0]["inputs"]["text_mode"] is False
    assert caller[0]["inputs"]["umi_prompts"] == profile and planner[0]["inputs"]["umi_prompts"] == profile

    out = graph.invoke(Command(resume="Nice"), config)
    assert "__interrupt__" not in out
    assert out["status"] == "solved" and out["answer"] == "It is 21°C (Nice)." and calls == [{"city": "Nice"}]
    # the answer is the ask_user call's result: in the caller's next history, as data and as prompt text
    second = script.of("caller")[1]
    assert answers_in(second["inputs"]["history"]) == ["Nice"]
    assert 'Observation (ask_user): {"user_answer": "Nice"}' in second["system"]
    (asked,) = caller_tree_messages(out, "ask_user")
    assert json.loads(asked["content"]) == {"user_answer": "Nice"}
    tree = out["solver_attempts"][-1]["tree"]
    assert "asked_user" in [c["status"] for n in tree for c in n["calls"]]
    assert assert_paired(tree) == 2  # ask_user, then the weather call
    assert [c["role"] for c in script.calls] == ["planner", "caller", "planner", "caller", "planner", "summarizer",
                                                 "judge"]  # the asking step is not asked again on resume


@pytest.mark.parametrize(("text", "profile"), [MODES[0], MODES[3]])
def test_batch_runs_answer_no_user_without_pausing(text: bool, profile: str) -> None:
    graph, script, calls, weather_id = graph_for(text, profile)
    out = graph.invoke({"query": "What's the weather?", "api_ids": [weather_id]},
                       {"configurable": {"thread_id": "umi-batch"}}, context={"batch": True})
    assert "__interrupt__" not in out and out["status"] == "solved" and calls == [{"city": "Paris"}]
    first, second = script.of("caller")[:2]
    assert first["inputs"]["ask_user"] is True and ("ask_user" in first["tools"]) is not text
    assert answers_in(second["inputs"]["history"]) == [NO_USER_ANSWER]
    assert assert_paired(out["solver_attempts"][-1]["tree"]) == 2


def test_ask_user_is_not_offered_to_the_umi_caller_by_default() -> None:
    graph, script, calls, weather_id = graph_for(False, "default", ask_user=False, max_reflections=0)
    out = graph.invoke({"query": "What's the weather?", "api_ids": [weather_id]},
                       {"configurable": {"thread_id": "umi-off"}})
    assert "__interrupt__" not in out and calls == []
    planner, caller = script.of("planner"), script.of("caller")
    assert PLANNER_ASK_USER_NOTE.strip() not in planner[0]["system"] and planner[0]["inputs"]["ask_user"] is False
    assert all(c["tools"] == [script.weather] and "ask_user" not in c["system"] for c in caller)
    tree = out["solver_attempts"][0]["tree"]
    assert "unknown_function" in [c["status"] for n in tree for c in n["calls"] if c["function"] == "ask_user"]
    assert_paired(tree)


def test_text_mode_ask_user_call_is_parsed_from_the_alpha_umi_caller_format() -> None:
    action = parse_action(f'I need the city.\nAction: ask_user\nAction Input: {{"question": "{QUESTION}"}}')
    assert action is not None and action.name == "ask_user" and action.args == {"question": QUESTION}
