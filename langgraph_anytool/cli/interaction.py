"""Answering a paused run's questions: the solver's `ask_user` pauses a run with `interrupt`; these helpers find the
pending questions of a thread and build the `Command(resume=...)` that continues it (used by `anytool run`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TextIO

from langgraph.types import Command

from ..nodes.abilities.ask_user import INTERRUPT_TYPE
from ..protocol import NO_USER_ANSWER


def pending_questions(graph: Any, config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(interrupt id, question) of every `ask_user` pause the thread waits on (subgraph pauses included)."""
    snapshot = graph.get_state(config)
    out: list[tuple[str, str]] = []
    for task in snapshot.tasks:
        for intr in getattr(task, "interrupts", ()) or ():
            value = intr.value
            if isinstance(value, Mapping) and value.get("type") == INTERRUPT_TYPE:
                out.append((str(intr.id), str(value.get("question", ""))))
    return out


def read_line(stream: TextIO, echo: TextIO | None = None) -> Callable[[str], str | None]:
    """An `ask` reading one line from `stream` (None at end of input); the line is echoed to `echo` when `stream`
    is not a terminal (piped answers would not show otherwise)."""

    def ask(_question: str) -> str | None:
        line = stream.readline()
        if echo is not None and not stream.isatty():
            echo.write(line if line.endswith("\n") else f"{line or '(end of input: no user)'}\n")
        return line.rstrip("\n") if line else None

    return ask


def answer_questions(graph: Any, config: Mapping[str, Any], ask: Callable[[str], str | None], out: TextIO
                     ) -> Command[Any] | None:
    """The resume command answering the thread's pending questions (None when it waits on none). Each question is
    written to `out` and answered by `ask`; no answer (end of input) tells the run no user is available."""
    questions = pending_questions(graph, config)
    if not questions:
        return None
    answers: dict[str, str] = {}
    for intr_id, question in questions:
        out.write(f"\nthe agent asks: {question}\nyour answer> ")
        out.flush()
        reply = ask(question)
        answers[intr_id] = NO_USER_ANSWER if reply is None else reply
    return Command(resume=answers)
