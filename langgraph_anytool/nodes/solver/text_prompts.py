"""Prompts of the solver's text mode and of the "alpha_umi" prompt profile.

The profile follows α-UMi's prompt formats (α-UMi Appendix A.1-A.3: P_plan, P_call, P_sum) in our own words, with
the same contract: the planner ends with `Next: caller.`, `Next: conclusion.` or `Next: give up.`; the caller
answers `Action: <function>` / `Action Input: <JSON object>`; the summarizer writes the conclusion.
"""

from __future__ import annotations

# Appended to the system prompt of a text-mode model (no native function calling).
TEXT_TOOLS = """Functions you can call (JSON schemas, one per line):
{functions}

You cannot call functions natively. To call one, end your reply with exactly these two lines:
Action: <the function name, exactly one of {tool_names}>
Action Input: <the arguments as one JSON object, {{}} when there are none>
Write nothing after the Action Input line."""

TEXT_TOOLS_LIST = """Functions you can call (JSON schemas, one per line):
{functions}"""

# ------------------------------------------------------------------ "alpha_umi" profile (α-UMi Appendix A.1-A.3)
UMI_PLANNER = """These APIs are available to you:
{doc}

Conversation so far:
{history}
{diversity}
You are the planner. Decide what should happen next and whose turn it is: the caller's (to call one API) or the \
conclusion's (to answer the user).
Reply with your thought for the next step, then end with exactly one of:
Next: caller.
Next: conclusion.
Next: give up."""

UMI_CALLER = """These APIs are available to you:
{doc}

Conversation so far:
{history}

Thought for this step:
{thought}

Following the thought, make one API call, written as:
Action: the API to call in this step, exactly one of {tool_names}
Action Input: the request, as a JSON object"""

UMI_SUMMARIZER = """Write the conclusion for the user from this conversation:
{history}

Thought for this step:
{thought}"""
