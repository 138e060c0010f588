"""Prompts of the solver: the DFSDT/CoT bootstrap prompt (the contract of AnyTool's Table 17, after ToolLLM) and
α-UMi's planner / caller / summarizer prompts (α-UMi Appendix A.1-A.3), in our own words, for chat models with
function calling."""

from __future__ import annotations

SOLVER_SYSTEM = """You solve a task by calling functions (APIs), one step at a time.
At every step, think briefly about where you stand and what to do next, then make a function call that carries the step out. \
Its result puts you in a new state; repeat until you can answer.
If you find you cannot solve the task, or only part of it, give up and say why, naming the functions that failed.
Rules:
1. A call cannot be undone: you never return to an earlier state by yourself.{restart_rule}
2. Keep each thought short: five sentences at most.
3. When a plan means trying several options in turn, try one option per attempt.
Task description: {task_description}"""

RESTART_RULE = (
    ' To start over from an earlier state, call Finish with return_type "give_up_and_restart" and say why, naming'
    " the functions that failed."
)

TASK_DESCRIPTION = """Use the functions below to answer the user's real-time request.
1. Always end by calling Finish. Its final answer must hold everything the user needs to see. If you cannot handle \
the task, or the functions keep failing (they may be unavailable now), call Finish with {give_up_types} and list the \
failed functions in "failed_functions".
2. Call only the functions listed here, with the parameters their schemas define, one function per step.
Functions:
{functions}"""

QUERY = "{query}\nBegin!"

DIVERSITY_PROMPT = """This is not the first time you try this task: all previous tries from this state failed.
Here are the actions already taken from this state (do not repeat them):
{actions}
First analyse the current state and these earlier actions, then take an action that is different from all of them \
(another function, other arguments, or Finish)."""

NUDGE = (
    "You did not call a function. Every step must be a function call: call one of the functions, "
    "or call Finish to give the answer, to restart, or to give up."
)

SEED_NOTE = (
    "The steps above come from an earlier attempt at this task (calls to functions that are no longer available "
    "were removed). The set of functions has changed since then: continue from here with the functions now listed."
)

CALL_LIMIT = (
    "You have used all {limit} API calls allowed for this task: no more functions will run. Call Finish now: "
    "give the best answer the results above support (return_type give_answer), or give up with the reason."
)

# call_limit "model_queries" (the authors' DFS.py): the same contract as their note after `max_query_count`
# model queries (call Finish: give the answer, or give up without restarting), in our own words
QUERY_LIMIT = (
    "You have made the maximum number of model queries for this task. Call Finish now: give the answer "
    "(return_type give_answer) or give up (return_type give_up); do not restart."
)

FINISH_ALONE = (
    "Finish was not accepted: it must be the only function call of a step. The other calls of this step were "
    "executed; look at their results, then call Finish alone."
)

# ---------------------------------------------------------------------------------------------- α-UMi
PLANNER_SYSTEM = """You have access to the following APIs:
{doc}

The conversation history is:
{history}
{diversity}
You are the assistant that plans what to do next and decides whether it is the caller's turn (to call one API) \
or the summarizer's turn (to write the final answer for the user).
The caller calls one API; the summarizer answers from the API results in the history only. Reply with your thought \
for the next step (which API to call, or why the results suffice), then the decision on the last line: \
"Next: caller", "Next: summarizer" or "Next: give up".
Choose "Next: give up" only when the query cannot be solved from the current situation; then say why and name \
the functions that failed."""

CALLER_SYSTEM = """You have access to the following APIs:
{doc}

The conversation history is:
{history}

The thought of this step is:
{thought}

Based on the thought, make exactly one API call: call one function, whose name must be exactly one of \
{tool_names}, with the arguments the request needs."""

SUMMARIZER_SYSTEM = """Make a conclusion based on the conversation history:
{history}

The thought of this step is:
{thought}

Write the final answer for the user: answer every part of the query with the information the API results gave, \
and say plainly which parts could not be answered."""

CALLER_NUDGE = "The caller made no function call in this step."

PLANNER_NO_DECISION = "(the planner gave no 'Next:' decision; the caller acts on the thought as it stands)"

EMPTY_HISTORY = "(empty: this is the first step)"
