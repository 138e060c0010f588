"""Prompts of the OPPO task runners, in our own words.

Paper protocol (the default): the model under test gets what the authors' `eval_scripts/agent_interface.py`
gives it — the user's instruction as the only message (no system prompt) and the task's functions; task 8's single
user message holds the problem and the numbered tool documents (`perform_task8`). The evaluator gets one user
message per item carrying the authors' criterion and inputs (`eval_scripts/eval_func.py`, cited per task below) and
is asked to answer yes or no first, which is how the authors read it.

`--protocol ours`: our system prompts below, and task 3 also offers an `ask_user` function.

`--prompts-from PATH` (`book`, the authors' prompts read from a clone of OPPO-Mente-Lab/agent_eval,
`paper_prompts/oppo.py`): the evaluator's prompts and task 8's message are the authors' f-strings, filled with the
values each builder below computes for them (the same values our wording gets).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...paper_prompts import PromptBook


# ------------------------------------------------------------------------------ model under test, task 8 (paper)
def plan_request(instruction: str, tool_docs: Sequence[dict[str, Any]], book: PromptBook | None = None) -> str:
    """Task 8's user message (`agent_interface.py` `perform_task8`: the problem, then the numbered tool documents
    as one-line JSON)."""
    docs = "\n".join(f"{i + 1}. " + json.dumps(d, ensure_ascii=False).replace("\n", " ")
                     for i, d in enumerate(tool_docs))
    if book is not None:
        return book.fill("task8_request", instruction=instruction, tools=docs)
    return (f"Think about how the problem below can be solved with the help of the tools provided.\n\n"
            f"Problem: {instruction}\n\nTools:\n{docs}")


# ------------------------------------------------------------------------------ model under test (ours)
DECIDE_SYSTEM = """You are a helpful assistant that can call functions (tools) when a request needs them.
Call a function only when the request cannot be answered well without it (for example it needs an exact \
computation, a lookup or current data); otherwise answer directly from your own knowledge."""

AGENT_SYSTEM = """You are a helpful assistant that can call functions (tools) when a request needs them.
Call a function only when the request cannot be answered well without it (for example it needs an exact \
computation, a lookup or current data); otherwise answer directly from your own knowledge.
When a function needs information the user has not given, do not guess or use placeholder values: call \
`ask_user` with a short question, or ask the user in plain text."""

SELECT_SYSTEM = """You are a helpful assistant that can call functions. Several functions are available; some look \
alike. Choose the one function that fits the request and call it with the right arguments."""

FILL_SYSTEM = """You are a helpful assistant that can call functions. Call the function that serves the request, \
filling every required parameter with a value taken from the request (in the type the schema asks for)."""

ANSWER_SYSTEM = """You are a helpful assistant. Answer the user's question directly and accurately."""

CONVERSATION_SYSTEM = """You are a helpful assistant that can call functions. The conversation below already holds \
the result of a function call. Answer the user's request from that result, quoting exact values (numbers, \
dates, codes) as they appear in it."""

PLAN_SYSTEM = """You are a helpful assistant that plans how to use APIs. Do not call any API now: write an outline \
of the steps that would fulfil the request, one numbered line per step, naming the API each step uses and why."""

CHAIN_SYSTEM = """You are a helpful assistant that can call functions. Some functions need the output of another \
function as their input: call them in the order the data requires, one step at a time, then answer the user \
with the final result."""

ASK_USER_DESCRIPTION = ("Ask the user a question when information needed to fulfil the request (for example a "
                        "required parameter value) is missing from it.")

SYSTEMS: dict[int, str] = {1: DECIDE_SYSTEM, 2: SELECT_SYSTEM, 3: AGENT_SYSTEM, 4: FILL_SYSTEM, 5: ANSWER_SYSTEM,
                           6: CONVERSATION_SYSTEM, 7: CHAIN_SYSTEM, 8: PLAN_SYSTEM}


# ------------------------------------------------------------------------------ evaluator (one user message)
def _one_line(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text.replace("\n", " ")


def clarification_prompt(reply: str, book: PromptBook | None = None) -> str:
    """Task 3 (`_check_clarification`): does the assistant's reply ask the user for more information?"""
    if book is not None:
        return book.fill("task3_check", reply=reply)
    return ("An assistant received a question or request from a user and replied with the message below. Is this "
            "message asking the user to provide more information?\n\n"
            f"Message:\n{reply}\n\nAnswer only Yes or No, with no explanation.")


def call_check_prompt(instruction: str, api_doc: dict[str, Any], call: dict[str, Any],
                      book: PromptBook | None = None) -> str:
    """Task 4 (`_check_params_with_gpt4`): is the function call right for the instruction and the API document?"""
    if book is not None:
        return book.fill("task4_check", instruction=instruction, api_doc=_one_line(api_doc), call=_one_line(call))
    return ("Decide whether the function call below is correct for the user's instruction and the API "
            "specification.\n\n"
            f"Instruction: {instruction}\n\nAPI specification: {_one_line(api_doc)}\n\nFunction call: "
            f"{_one_line(call)}\n\nAnswer YES or NO first; if NO, explain briefly.")


def authors_task4_inputs(conversation: Sequence[dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    """(instruction, function call) of task 4's evaluator prompt as `eval_func.py` `evaluate_task4` gives them to
    `_check_params_with_gpt4`: `func_call = _extract_func_calls(conv_msgs)[0]`, which parses every call's
    `arguments` string in the conversation in place (`json.loads`), then `user_instruction=conv_msgs` — the whole
    conversation, formatted by the f-string as Python's `str()` of the list, with those parsed arguments. The call
    is the first call's `function` dict as the reply's `model_dump()` holds it (its keys in that order:
    `arguments`, then `name`). None when a call's arguments are not JSON (evaluate_task4 then records "function
    call is not parsed successfully" and asks nothing)."""
    conv = json.loads(json.dumps(list(conversation)))
    found: list[dict[str, Any]] = []
    try:
        for m in conv:
            if m.get("role") != "assistant":
                continue
            fns = ([m["function_call"]] if m.get("function_call") else []) + \
                [tc["function"] for tc in m.get("tool_calls") or []]
            for fn in fns:
                if isinstance(fn.get("arguments"), str):
                    fn["arguments"] = json.loads(fn["arguments"])
                found.append(fn)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not found:
        return None
    return str(conv), {"arguments": found[0].get("arguments"), "name": found[0].get("name")}


def direct_answer_prompt(instruction: str, reply: str, book: PromptBook | None = None) -> str:
    """Task 5 (`_check_direct_response`): has the assistant answered the user properly?"""
    if book is not None:
        return book.fill("task5_check", instruction=instruction, reply=reply)
    return ("Here is a dialogue between a user and an assistant. Decide whether the assistant has responded "
            f"properly.\n\nUSER: {instruction}\nASSISTANT: {reply}\n\nAnswer YES or NO first, then give the reason "
            "if NO.")


def tool_answer_prompt(instruction: str, call: Any, tool_result: str, reply: str,
                       book: PromptBook | None = None) -> str:
    """Task 6 (`_check_response_w_tool`): is the assistant's last reply proper given what the tool returned? `call`
    as text goes in as it is (the paper protocol's `json.dumps(function_call)` or "None"); another value as
    one-line JSON."""
    call_text = call if isinstance(call, str) else _one_line(call)
    if book is not None:
        return book.fill("task6_check", instruction=instruction, call=call_text, tool_result=tool_result,
                         reply=reply)
    return ("Here is a dialogue between a user and an assistant that used a tool. Decide whether the assistant's "
            "last response is proper given the result the tool returned.\n"
            f"USER: {instruction}\nASSISTANT: {call_text}\nFUNCTION: {tool_result}\nASSISTANT: {reply}\n\n"
            "Answer YES or NO first, then give the reason if NO.")


def solved_prompt(conversation: Sequence[dict[str, Any]], book: PromptBook | None = None) -> str:
    """Task 7 (`_check_answer`): did the assistant solve the problem, chiefly by getting useful information from the
    tools in the end? (The conversation without its system message, as indented JSON.)"""
    conv = json.dumps([m for m in conversation if m.get("role") != "system"], ensure_ascii=False, indent=2)
    if book is not None:
        return book.fill("task7_check", conversation=conv)
    return ("Below is a conversation between a user and an assistant that can use tools. Decide whether the "
            "assistant solved the user's problem successfully; above all, whether it used the tools to obtain "
            f"useful information in the end.\n\n{conv}\n\nAnswer Yes or No first, then explain your reason.")


def extract_tools_prompt(conversation: Sequence[dict[str, Any]], book: PromptBook | None = None) -> str:
    """Task 7's step extraction (`_extract_tools`): which tools did the assistant use, and did each succeed? (The
    conversation without its first message when that is the system's, as indented JSON.)"""
    msgs = list(conversation[1:] if conversation and conversation[0].get("role") == "system" else conversation)
    conv = json.dumps(msgs, ensure_ascii=False, indent=2)
    if book is not None:
        return book.fill("task7_extract", conversation=conv)
    return ("Below is a conversation between a user and an assistant that can use tools. List each tool the "
            f"assistant used, in order, with the result of that step (success or failure).\n\n{conv}\n\n"
            "Answer with a numbered list of lines `tool name`: result, and nothing else.")


def plan_check_prompt(task_text: str, plan: str, book: PromptBook | None = None) -> str:
    """Task 8 (`_check_plan`): is the plan the assistant made for the task (using the provided tools) sound?"""
    if book is not None:
        return book.fill("task8_check", task=task_text, plan=plan)
    return ("An assistant was given a task: use a few provided tools to help solve a user's question. Decide "
            f"whether the plan the assistant made is sound.\n\nTask:\n{task_text}\n\nPlan:\n{plan}\n\n"
            "Answer Yes or No first, then give the reason if No.")
