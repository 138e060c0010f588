"""Prompts of the OPPO task runners (the model under test) and of the LLM evaluator (seed 001, §3.4, App. C.2),
in our own words."""

from __future__ import annotations

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
of the steps that would fulfil the request, one numbered line per step, naming the API each step uses and why.

Available APIs:
{apis}"""

CHAIN_SYSTEM = """You are a helpful assistant that can call functions. Some functions need the output of another \
function as their input: call them in the order the data requires, one step at a time, then answer the user \
with the final result."""

ASK_USER_DESCRIPTION = ("Ask the user a question when information needed to fulfil the request (for example a "
                        "required parameter value) is missing from it.")

# ---------------------------------------------------------------------------- evaluator (separate from the agent)
EVALUATOR_SYSTEM = """You are a strict evaluator of an AI assistant's tool use. Read the task and the assistant's \
output and decide whether it passes the criterion. Reply with one JSON object only:
{"label": "pass" or "fail", "reason": "one sentence"}"""

CRITERIA: dict[int, str] = {
    4: "The function call is correct: the right function, every required parameter present, and every value "
       "supported by the request (no invented or placeholder values) and of the right type.",
    5: "The response is related to the question and answers it correctly from general knowledge.",
    6: "The response is based on the tool result and states the desired information precisely (exact values "
       "copied correctly).",
    7: "The final answer fulfils the request correctly, using the results of the function calls.",
    8: "The outline is sound, covers the provided APIs that the request needs, and uses each API for what it "
       "actually does.",
}

EVALUATOR_TASK = """Criterion: {criterion}

Request:
{instruction}

{context}
Assistant output:
{output}"""
