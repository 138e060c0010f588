"""ToolEval's two-stage answer check with scripted judges."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda

from langgraph_anytool.models.llm import INPUTS_KEY, ROLE_KEY
from langgraph_anytool.models.testing import ScriptedChatModel, ai, call
from langgraph_anytool.nodes.judge.tooleval import (
    TASK_LABELS,
    JudgeResult,
    check_answer_status,
    check_is_solved,
    check_task_solvable,
    parse_answer_status,
    parse_label,
)


def scripted(*texts: str) -> ScriptedChatModel:
    return ScriptedChatModel(replies=[ai(t) for t in texts])


def test_empty_answer_is_unsolved_without_a_call() -> None:
    model = scripted()
    for answer in ("", "   ", '{"return_type": "give_up_and_restart"}'):
        res = check_is_solved(model, "q", answer, [])
        assert (res.label, res.stage) == ("Unsolved", "rule")
        assert res.usage == {}
    assert model.calls == []


def test_stage_one_decides_when_sure() -> None:
    model = scripted('{"reason": "it names the capital", "label": "Solved"}')
    res = check_is_solved(model, "Capital of France?", "Paris.", [{"function": "x"}])
    assert res == JudgeResult("Solved", "it names the capital", "answer", res.usage)
    assert res.solved and res.usage["model_calls"] == 1
    assert len(model.calls) == 1
    prompt = "\n".join(str(m.content) for m in model.calls[0]["messages"])
    assert "Paris." in prompt and "Capital of France?" in prompt
    assert '"function"' not in prompt  # stage 1 does not see the process


def test_unsure_goes_to_the_process_stage_with_the_process() -> None:
    model = scripted('{"label": "Unsure", "reason": "cannot tell"}',
                     '```json\n{"answer_status": "Unsolved", "reason": "the API said 404"}\n```')
    process = [{"function": "get_weather", "args": {"city": "Paris"}, "status": "error", "content": "404 not found"}]
    res = check_is_solved(model, "Weather in Paris?", "It is sunny.", process)
    assert (res.label, res.stage, res.reason) == ("Unsolved", "process", "the API said 404")
    assert not res.solved
    assert res.usage["model_calls"] == 2
    second = "\n".join(str(m.content) for m in model.calls[1]["messages"])
    assert "404 not found" in second and "get_weather" in second and "It is sunny." in second


def test_a_final_unsure_stays_unsure_and_is_not_solved() -> None:
    model = scripted("Unsure", "UNSURE.")
    res = check_is_solved(model, "q", "an answer", "step 1: ok")
    assert (res.label, res.stage) == ("Unsure", "process") and not res.solved


def test_unparseable_reply_is_unsure_with_the_text() -> None:
    model = scripted("I think maybe yes, maybe no")
    res = check_answer_status(model, "q", "a")
    assert res.label == "Unsure" and "maybe yes" in res.reason and res.stage == "answer"


def test_calls_carry_the_judge_role_and_structured_inputs() -> None:
    seen: list[dict[str, Any]] = []

    def judge(messages: list[BaseMessage], config: RunnableConfig) -> AIMessage:
        seen.append(dict(config.get("metadata") or {}))
        return AIMessage(content='{"label": "Unsure", "reason": "?"}')

    check_is_solved(RunnableLambda(judge), "the query", "the answer", ["p"], config={"metadata": {"run": "r1"}})
    assert [m[ROLE_KEY] for m in seen] == ["judge", "judge"]
    assert [m[INPUTS_KEY] for m in seen] == [
        {"query": "the query", "answer": "the answer", "stage": "answer"},
        {"query": "the query", "answer": "the answer", "stage": "process"},
    ]
    assert all(m["run"] == "r1" for m in seen)


def test_parse_answer_status_direct() -> None:
    res = parse_answer_status(scripted('{"label": "Solved", "reason": "calls succeeded"}'), "q", "a", "trace")
    assert (res.label, res.stage) == ("Solved", "process")


def test_task_solvable_labels_and_shortcut() -> None:
    model = scripted('{"reason": "no phone number", "label": "Unsolvable"}', "Solvable")
    res = check_task_solvable(model, "Call my friend", [{"name": "phone_call"}])
    assert (res.label, res.stage, res.reason) == ("Unsolvable", "task", "no phone number")
    assert check_task_solvable(model, "q", []).label == "Solvable"
    assert check_task_solvable(model, "q", [], has_been_solved=True).stage == "rule"
    assert len(model.calls) == 2


def test_parse_label_forms() -> None:
    assert parse_label('{"label": "solved"}')[0] == "Solved"
    assert parse_label('Here: {"answer_status": "Unsolved", "reason": "r"} done')[0] == "Unsolved"
    assert parse_label("**Unsolved**")[0] == "Unsolved"
    assert parse_label("Label: Unsure because the data cannot be checked")[0] == "Unsure"
    assert parse_label("The query is Unsolved since the API failed.")[0] == "Unsolved"  # not 'Solved'
    assert parse_label("The answer is not solved.")[0] is None  # negated: no guess
    assert parse_label("Solved or Unsolved, hard to say")[0] is None
    assert parse_label("Unsolvable", TASK_LABELS)[0] == "Unsolvable"  # not 'Solvable'
    assert parse_label(AIMessage(content="", tool_calls=[call("check_answer_status", answer_status="Solved",
                                                               reason="ok")]))[0] == "Solved"
    assert parse_label(AIMessage(content=[{"type": "text", "text": '{"label": "Unsure"}'}]))[0] == "Unsure"
