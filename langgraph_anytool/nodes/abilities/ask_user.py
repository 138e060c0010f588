"""`ask_user(question)`: a function the solver may call when the request lacks information only the user has.

Interactive runs pause with LangGraph's `interrupt` (the payload: `{"type": "ask_user", "question": ...}`); the
caller resumes with `graph.invoke(Command(resume=answer), config)` on the same thread, and the answer becomes the
call's result. The pause is checkpointed, so it survives a process restart. Batch runs (`batch=True`) get
`NO_USER_ANSWER` at once and go on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langgraph.types import interrupt

from ...protocol import ASK_USER_NAME
from . import prompts

INTERRUPT_TYPE = "ask_user"
NO_USER_ANSWER = prompts.NO_USER


def ask_user_schema() -> dict[str, Any]:
    """OpenAI function schema of `ask_user`."""
    return {
        "type": "function",
        "function": {
            "name": ASK_USER_NAME,
            "description": prompts.ASK_USER_DESCRIPTION,
            "parameters": {
                "type": "object",
                "properties": {"question": {"type": "string", "description": "One clear question for the user."}},
                "required": ["question"],
            },
        },
    }


def question_of(args: Any) -> str:
    """The question of an `ask_user` call ("" when there is none)."""
    if isinstance(args, Mapping):
        value = args.get("question")
        return value.strip() if isinstance(value, str) else ""
    return ""


def resume_text(value: Any) -> str:
    """The user's answer from a resume value: a string, or a mapping with "answer" (anything else as JSON)."""
    if isinstance(value, Mapping) and "answer" in value:
        value = value["answer"]
    if isinstance(value, str):
        return value.strip() or "(the user gave an empty answer)"
    return json.dumps(value, ensure_ascii=False, default=str)


def ask(question: str, *, batch: bool, query: str = "") -> str:
    """The user's answer to `question`: `NO_USER_ANSWER` in batch runs, else the run pauses here (interrupt) until
    it is resumed with `Command(resume=answer)`."""
    if batch:
        return NO_USER_ANSWER
    return resume_text(interrupt({"type": INTERRUPT_TYPE, "question": question, "query": query}))


def result_content(answer: str) -> str:
    """The ToolMessage content of an answered `ask_user` call."""
    return json.dumps({"user_answer": answer}, ensure_ascii=False)
