"""Prompts of the abilities, in our own words. The router follows the contract of the OPPO paper's tasks 1 and 5
(§3: decide whether a tool is needed; if not, answer from your own knowledge); the outline follows its task 8
(a high-level plan: which APIs, in which order, for what); `ask_user` its task 3 (ask for missing information)."""

from __future__ import annotations

from ...protocol import NO_USER_ANSWER as NO_USER  # noqa: F401  (moved there; importable here too)

ROUTER_SYSTEM = """You decide how a request is handled before any tool is looked for.
Some requests need a tool (an API): real-time or changing data (prices, weather, news), lookups in external \
services or databases, exact computations on given data, actions in the world. Others can be answered well from \
general knowledge and the conversation so far (definitions, explanations, well-known facts, advice, opinions, \
small talk, or a question the conversation already answers).
Call exactly one function:
- answer_directly(answer) when no tool is needed: the answer is the complete reply shown to the user;
- use_tools(reason) when the request needs a tool, or when you are not sure."""

ROUTER_QUERY = "Request: {query}"

USE_TOOLS_DESCRIPTION = "The request needs a tool (an API call): retrieve the APIs that can solve it."
ANSWER_DIRECTLY_DESCRIPTION = "No tool is needed: give the complete answer to the request from your own knowledge."

CONVERSATION = """The conversation so far (context for the request that follows; tool results in it are real \
results you may use):
{conversation}"""

OUTLINE_SYSTEM = """You write a plan for a request, without carrying it out: which of the functions below to call, \
in which order, and what each call is for. Use only these functions; a step may use the result of an earlier one. \
Keep the plan as short as the request allows, and leave out functions that do not help.
Call submit_plan once with the ordered steps.
Functions:
{functions}"""

OUTLINE_QUERY = "Request: {query}\nWrite the plan."

SUBMIT_PLAN_DESCRIPTION = "Submit the plan: the ordered function calls that solve the request, each with its purpose."

ASK_USER_DESCRIPTION = (
    "Ask the user a question and wait for the reply. Use it only when the request lacks information that only the "
    "user can give (a missing value, an ambiguous choice) and no function can provide it. The reply is this call's "
    "result."
)

ASK_USER_NOTE = (
    "\nIf the request lacks information only the user can give, call ask_user with one clear question instead of "
    "guessing; its result is the user's reply."
)

PLANNER_ASK_USER_NOTE = (
    "\nThe caller can also ask the user: if the request lacks information only the user can give (a missing value, "
    "an ambiguous choice) and no API can provide it, say in your thought which one clear question to ask and make "
    "it the caller's turn; the caller calls ask_user, and the user's reply appears in the history."
)
