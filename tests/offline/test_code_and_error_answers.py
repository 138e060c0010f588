"""The stand-in and error output (issue 29 §7): it reads the code of a request for the code tool ("Run this Python
code: print(sum(range(10)))" once ran `Python` and ended `solved` with its NameError), a response that reports a
failure is no success for its solver, and its judge never calls an error message or an observation with an error
status solved."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_anytool import Catalog, create_anytool_graph
from langgraph_anytool.catalog.builtin import code_tools
from langgraph_anytool.catalog.builtin._registry import tool_document
from langgraph_anytool.catalog.models import Api
from langgraph_anytool.catalog.parse import parse_tool
from langgraph_anytool.models.llm import INPUTS_KEY, ROLE_KEY
from langgraph_anytool.offline import OfflinePolicyModel, extract_arguments
from langgraph_anytool.offline.mentions import code_of
from langgraph_anytool.tools.observation import reported_error, reported_error_in_text
from tests.catalog.test_builtin import needs_sandbox

BUILTIN = Catalog.builtin()


def _declared(api_id: str) -> Api:
    """A code API as declared, whether or not this machine offers it: `Catalog.builtin()` leaves the code tool out
    without a working bubblewrap, and this module must still import there (issue 35 §3)."""
    category = code_tools.category()
    apis = [api for spec in category.tools
            for api in parse_tool(tool_document(spec), category=category.name, source="builtin:code_tools").apis]
    return next(api for api in apis if api.id == api_id)


RUN = _declared("Code_Execution/python_sandbox/run_python_code")
EVALUATE = _declared("Code_Execution/python_sandbox/evaluate_python_expression")


@pytest.mark.parametrize(("text", "mode", "code"), [
    ("Run this Python code: print(sum(range(10)))", "exec", "print(sum(range(10)))"),
    ("Run this Python code: print(sum(range(10))).", "exec", "print(sum(range(10)))"),
    ("Evaluate the Python expression 2**10", "eval", "2**10"),
    ("What is 17 * 23?", "eval", "17 * 23"),  # not "What is 17 * 23" (an `is` test that parses)
    ("Please run `print('hi')` for me", "exec", "print('hi')"),
    ("Compute sum(i*i for i in range(10)) for me", "eval", "sum(i*i for i in range(10))"),
    ("Convert 26.2 miles to kilometers", "eval", None),
    ("Is 2025-07-14 a public holiday in France?", "exec", None),
])
def test_the_code_of_a_request(text: str, mode: str, code: str | None) -> None:
    found = code_of(text, mode)
    assert (found.value if found else None) == code


def test_code_arguments_take_the_code_and_nothing_else_takes_its_numbers() -> None:
    assert extract_arguments(RUN, "Run this Python code: print(sum(range(10)))") == {
        "code": "print(sum(range(10)))"}  # no stdin "Python", no timeout 10 from range(10)
    assert extract_arguments(EVALUATE, "Evaluate the Python expression 2**10") == {"expression": "2**10"}


def test_a_response_reporting_a_failure() -> None:
    traceback = "Traceback (most recent call last):\n  File \"<main>\", line 1\nNameError: name 'Python' is not defined"
    assert reported_error({"stdout": "", "stderr": traceback, "exit_code": 1, "timed_out": False}) == (
        "NameError: name 'Python' is not defined")
    assert reported_error({"ok": False, "type": "", "value": "", "error": "NameError: x", "timed_out": False}) == (
        "NameError: x")
    assert reported_error({"stdout": "", "stderr": "", "exit_code": 0, "timed_out": True}) == "timed out"
    assert reported_error({"stdout": "45\n", "stderr": "", "exit_code": 0, "timed_out": False}) == ""
    assert reported_error({"ok": True, "value": "1024", "error": ""}) == ""
    assert reported_error([1, 2]) == "" and reported_error("plain text") == ""
    seen = json.dumps({"status": "ok", "response": {"ok": False, "error": "ZeroDivisionError: division by zero"}},
                      separators=(",", ":"))  # as `Observation.for_model` writes it
    assert reported_error_in_text(seen) == "ZeroDivisionError: division by zero"
    assert reported_error_in_text(seen[:45] + "... [truncated 40 of 85 characters]") == '"ok":false'


def _judge(answer: str, calls: list[dict[str, str]] | None = None) -> dict[str, str]:
    model = OfflinePolicyModel(catalog=BUILTIN)
    inputs: dict[str, Any] = {"query": "Evaluate the Python expression 2**10", "answer": answer, "stage": "answer"}
    if calls is not None:
        inputs["calls"] = calls
    reply = model.invoke([HumanMessage("judge")], config={"metadata": {ROLE_KEY: "judge", INPUTS_KEY: inputs}})
    assert isinstance(reply, AIMessage)
    return dict(json.loads(str(reply.content)))


@pytest.mark.parametrize("answer", [
    "Evaluate Python Expression: ok: no; error: NameError: name 'Python' is not defined; timed out: no.",
    "Run Python Code: stderr: Traceback (most recent call last): ... NameError: name 'x' is not defined; exit code: 1",
    "Evaluate Python Expression (expression: 2**10): exit code: 1",
])
def test_the_stand_in_judge_never_calls_an_error_message_solved(answer: str) -> None:
    verdict = _judge(answer, [{"function": "evaluate_python_expression_for_python_sandbox", "status": "ok"}])
    assert verdict["label"] == "Unsolved" and "error message" in verdict["reason"]


def test_the_stand_in_judge_counts_no_call_whose_output_reports_a_failure() -> None:
    answer = "Evaluate Python Expression (expression: 2**10): ok: yes; type: int; value: 1024; timed out: no."
    assert _judge(answer, [{"function": "f", "status": "ok"}])["label"] == "Solved"
    failed = _judge(answer, [{"function": "f", "status": "ok", "error": "NameError: x"}])
    assert failed["label"] == "Unsolved" and "No API call succeeded" in failed["reason"] and "NameError" in failed[
        "reason"]
    assert _judge(answer, [{"function": "f", "status": "error"}])["label"] == "Unsolved"


@needs_sandbox
@pytest.mark.parametrize(("query", "expected"), [
    ("Run this Python code: print(sum(range(10)))", "stdout: 45"),
    ("Evaluate the Python expression 2**10", "value: 1024"),
])
def test_simple_code_requests_are_solved_with_the_right_answer(query: str, expected: str) -> None:
    out = create_anytool_graph(BUILTIN, "offline").invoke({"query": query})
    assert out["status"] == "solved" and expected in out["answer"], (out["status"], out["answer"])
    assert "Error" not in out["answer"]


@needs_sandbox
def test_code_that_fails_is_not_solved() -> None:
    out = create_anytool_graph(BUILTIN, "offline").invoke(
        {"query": "Run this Python code: print(undefined_name)"}, {"recursion_limit": 200},
        context={"max_reflections": 0})
    assert out["status"] != "solved", out["answer"]
    assert "NameError" in json.dumps(out["solver_attempts"])  # the code ran, and its error was seen as one
    assert "NameError" not in out["answer"]  # no answer passes an error off as a result
