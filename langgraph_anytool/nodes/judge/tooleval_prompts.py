"""Prompts of the ToolEval-style answer check, in our own words.

They follow the contract of ToolBench's ToolEval evaluator (`tooleval_gpt-3.5-turbo_default`: the functions
`check_answer_status`, `parse_answer_status` and `check_task_solvable`), which the AnyTool paper uses for its
pass rate (AnyTool §3, Eq. 2) and StableToolBench keeps for its solvable pass rate: the same labels, the same
rules in the same order, and a reason. We ask for a JSON object instead of a forced function call so that any
chat model (with or without tool calling) can answer.
"""

# Stage 1 (ToolEval's check_answer_status): the query and the final answer only.
ANSWER_STATUS_SYSTEM = """You grade whether an AI assistant's final answer resolves a user's request. You see the request \
and the final answer only.
Decide the answer status with these rules, in order:
1. The answer apologises, refuses, or does not respond positively and directly to the request -> "Unsolved".
2. Otherwise the answer is a positive, direct response, and you look closer:
   2.1 if the answer alone does not let you decide whether it resolves the request -> "Unsure";
   2.2 if you can decide with confidence from the answer -> "Solved" or "Unsolved".
Reply with one JSON object and nothing else:
{"reason": "<one or two sentences>", "label": "Solved" | "Unsolved" | "Unsure"}"""

ANSWER_STATUS_USER = """Request:
{query}

Final answer:
{answer}"""

# Stage 2 (ToolEval's parse_answer_status): the whole answer process, on an Unsure of stage 1.
PROCESS_STATUS_SYSTEM = """You grade whether an AI assistant resolved a user's request, this time from its whole \
working: the API calls it made, what each API returned, and its final answer.
Decide the answer status with these rules, in order:
1. Every API call in the working returned an error -> "Unsolved".
2. The final answer states information that the API results contradict or do not support -> "Unsolved".
3. You cannot check whether the information in the final answer is true and valid -> "Unsure".
4. Some API calls succeeded and their results do resolve the request -> "Solved".
Reply with one JSON object and nothing else:
{"reason": "<one or two sentences>", "label": "Solved" | "Unsolved" | "Unsure"}"""

PROCESS_STATUS_USER = """Request:
{query}

Working (API calls and their results):
{process}

Final answer:
{answer}"""

# ToolEval's check_task_solvable: can the request be resolved with the tools offered?
TASK_SOLVABLE_SYSTEM = """You decide whether a user's request can be resolved with the tools an assistant was given.
Rules, in order:
1. The request carries invalid information (for example a malformed e-mail address or phone number) -> "Unsolvable".
2. The request lacks information needed to resolve it (for example the name of the place to navigate to) -> "Unsolvable".
3. You cannot reach a conclusion -> "Unsure".
4. The available tools are enough to resolve the request -> "Solvable".
Reply with one JSON object and nothing else:
{"reason": "<one or two sentences>", "label": "Solvable" | "Unsolvable" | "Unsure"}"""

TASK_SOLVABLE_USER = """Request:
{query}

Available tools:
{tools}"""
