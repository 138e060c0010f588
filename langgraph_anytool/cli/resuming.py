"""Resuming runs from the command line: the run context `anytool run` passes (so that a resume without the same
flags keeps the run's settings), and the line printed on Ctrl-C that resumes the run (or the batch)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from ..config import AnyToolConfig


def explicit_settings(config: AnyToolConfig, given: Sequence[str], profile: str) -> dict[str, Any]:
    """The run context of the settings a command line gave (`given`: their field names; `profile`: "paper" is
    passed as such), with their values from `config` (converted and checked). Fields fixed at build time are not
    part of a context."""
    from ..context import BUILD_TIME_FIELDS

    values: dict[str, Any] = {name: getattr(config, name) for name in given if name not in BUILD_TIME_FIELDS}
    if profile == "paper":
        values["profile"] = "paper"
    return values


def describe_settings(values: Mapping[str, Any]) -> str:
    """`field=value` pairs of a stored run context, written as `--set` takes them."""
    import json

    def shown(v: Any) -> str:
        if isinstance(v, list | tuple):
            return ",".join(map(str, v))
        return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)

    return ", ".join(f"{k}={shown(v)}" for k, v in values.items())


def _has_option(argv: Sequence[str], name: str) -> bool:
    return any(a == name or a.startswith(name + "=") for a in argv)


def resume_command(argv: Sequence[str], *, thread: str | None = None) -> str:
    """The exact command that continues an interrupted one: `anytool` and its arguments, with `--thread T` added
    when it was not given (the thread the run used)."""
    words = ["anytool", *argv]
    if thread is not None and not _has_option(argv, "--thread"):
        words += ["--thread", thread]
    return shlex.join(words)


def run_interrupted(argv: Sequence[str], thread: str, db: str | None) -> str:
    """What `anytool run` prints when Ctrl-C stops it: the command that resumes the run from its last checkpoint,
    or, for a run checkpointed in memory (no --db), that it cannot be resumed and how to make the next one
    resumable."""
    if db:
        return (f"interrupted: the run on thread {thread} is checkpointed in {db}; resume it with\n"
                f"  {resume_command(argv, thread=thread)}")
    return ("interrupted: this run kept its checkpoints in memory (no --db), so it cannot be resumed; "
            "to be able to resume a run, give it a checkpoint file:\n"
            f"  {resume_command([*argv, '--db', 'anytool-runs.sqlite'], thread=thread)}")


def run_failed(argv: Sequence[str], thread: str, kind: str) -> str:
    """What `anytool run` prints after a run (checkpointed in a file) ended in an error of a transport kind: the
    same command resumes it from its last checkpoint before the failed model call, keeping its usage."""
    return (f"the run ended in error ({kind}): once the model server answers again, resume it from its last "
            f"checkpoint before the failed model call (its usage is kept) with\n  {resume_command(argv, thread=thread)}")


def batch_interrupted(argv: Sequence[str], out: str, done: int, db: str | None) -> str:
    """What `anytool eval run` prints when Ctrl-C stops it: the same command resumes the batch (the queries with a
    record in the results file are skipped; with --db, a query in flight resumes from its checkpoint)."""
    in_flight = ("queries in flight resume from their checkpoints in " + db) if db else \
        "queries in flight start over (give --db FILE to resume them from their checkpoints)"
    return (f"interrupted: {done} queries recorded in {out} in this session; the same command resumes the batch "
            f"(recorded queries are skipped, {in_flight}):\n  {resume_command(argv)}")
