"""Prompts of the judge (AnyTool §4.2: the model reviews a given solution)."""

JUDGE_SYSTEM = """You review whether an AI assistant's final answer solves a user's query.
The assistant could call APIs; you see the query, the APIs it called with the status of each result, and its final answer.
Label the answer:
- "Solved": the answer addresses every part of the query with concrete information (not a plan, not a refusal).
- "Unsolved": the answer misses a part of the query, is a refusal or apology, invents information that no API
  returned, or says the APIs failed.
- "Unsure": you cannot tell from what you see.
Reply with one JSON object and nothing else: {"label": "Solved" | "Unsolved" | "Unsure", "reason": "<one or two sentences naming what is missing or wrong>"}"""

JUDGE_USER = """Query:
{query}

API calls made (function → status):
{calls}

Final answer:
{answer}"""
