"""Append-only JSON-lines results: one line per finished query, crash-safe and resumable.

Each record is written as one line with a single `write` followed by flush and fsync. A line cut short by a
crash (kill -9) is not valid JSON: reading ignores it, and opening the file for appending first removes it, so
that query is simply run again. A query is finished when a record with its key (group, query_id) is on disk. A
query may be run again (a resumed batch retries recorded transport errors): the last record of a key is the one
every reader takes (`read_results`, behind pass rate, stats and convert).

Reading is bounded and checked (`sanitize.files`): lines are streamed with a cap of `MAX_RECORD_BYTES` each, a
line deeper than the nesting cap or holding an out-of-range number is refused, and every field the readers use is
validated against `ResultsRecord` (types, ranges, finiteness). A fault is one line naming the file, the line and
the field; only a line that is not JSON at all (a crash's cut-short line) is skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from ...catalog.errors import CatalogError
from ...sanitize.files import DataFileError, iter_json_lines
from ...sanitize.schema import FileModel, Fraction, Tally, check_model
from ...tools.dbfile import StorageError, describe_error

MAX_RECORD_BYTES = 64 << 20  # one results line (a long run's trajectory is a few MB at most)


Ident = str | int  # an id a page uses as a key (a node, an attempt, a tool call): a scalar, never a list


class _RoleUsage(FileModel):
    model_calls: Tally | None = None
    input_tokens: Tally | None = None
    output_tokens: Tally | None = None
    estimated_tokens: Tally | None = None
    cost_usd: Tally | None = None


class _Usage(_RoleUsage):
    api_calls: Tally | None = None
    reflections: Tally | None = None
    solver_attempts: Tally | None = None
    pool_size: Tally | None = None
    roles: dict[str, _RoleUsage] | None = None
    agents: dict[str, Tally] | None = None


class _ToolCall(FileModel):
    id: Ident | None = None
    name: str | None = None


class _Message(FileModel):
    role: str | None = None
    tool_call_id: Ident | None = None
    tool_calls: list[_ToolCall] | None = None


class _Call(FileModel):
    function: str | None = None
    status: str | None = None
    tool_call_id: Ident | None = None
    api_id: str | None = None


class _Node(FileModel):
    id: Ident | None = None
    parent: Ident | None = None
    status: str | None = None
    calls: list[_Call] | None = None
    messages: list[_Message] | None = None


class _Attempt(FileModel):
    attempt: int | None = None
    round: int | None = None
    finish_type: str | None = None
    answer: str | None = None
    api_calls: Tally | None = None
    failed_functions: list[str] | None = None
    tree: list[_Node] | None = None


class _Agent(FileModel):
    """One retriever agent (`runner.agents_record`), as the report's agent tree reads it."""

    id: str | None = None
    parent: str | None = None
    level: str | None = None
    category: str | None = None
    tools: list[str] | None = None
    status: str | None = None
    end_reason: str | None = None
    steps: Tally | None = None
    activations: Tally | None = None
    tokens: Tally | None = None
    messages: list[_Message] | None = None


class _PoolEntry(FileModel):
    api_id: str | None = None
    function_name: str | None = None
    added_by: str | None = None
    round: int | None = None


class _Verdict(FileModel):
    label: str | None = None
    by: str | None = None
    apis: Tally | None = None


class _Event(FileModel):
    """One event of the run's log (`state.run_event`), as the report's sections read it."""

    kind: str | None = None
    agent: str | None = None
    level: str | None = None
    round: int | None = None
    attempt: Ident | None = None
    label: str | None = None
    by: str | None = None
    request: str | None = None
    functions: list[str] | None = None
    reactivated: list[str] | None = None
    pruned: list[_PoolEntry] | None = None
    solvable: list[_Verdict] | None = None
    pool: list[Any] | None = None


class ResultsRecord(FileModel):
    """The fields of a results record that pass rate, stats, convert, the report and a resumed batch read: every
    field a report page reads is typed here (a node id is a scalar, a count a bounded number), so a record the
    schema accepts renders, and one it refuses is one line naming the record and the field."""

    query_id: str | int
    group: str | int = ""
    query: str | None = None
    status: str | None = None
    answer: str | None = None
    reason: str | None = None
    error_kind: str | None = None
    stop_reason: str | None = None
    attempt: Annotated[int, Field(ge=1)] | None = None
    retries: Tally | None = None
    wall_time: Tally | None = None
    pool_recall: Fraction | None = None
    pool: list[str] | None = None
    relevant: list[str] | None = None
    usage: _Usage | None = None
    trajectory: list[_Attempt] | None = None
    config: dict[str, Any] | None = None
    model: str | None = None
    catalog: str | None = None
    # read by `anytool report` (absent in records of older versions: the report says "not recorded")
    verdict: _Verdict | None = None
    agents: list[_Agent] | None = None
    pool_entries: list[_PoolEntry] | None = None
    removed_apis: list[str] | None = None
    events: list[_Event] | None = None


class ResultsInUse(StorageError):
    """Another process holds the results file (one writer per results file)."""


def record_key(record: Mapping[str, Any]) -> tuple[str, str]:
    return (str(record.get("group", "")), str(record.get("query_id", "")))


def read_results(path: str | Path, *, strict: bool = False) -> list[dict[str, Any]]:
    """Every complete record of a results file (a later record of the same key replaces an earlier one).

    A line that is not JSON, or JSON that is no object with a `query_id`, is skipped (a crash's half-written last
    line), or with `strict` an error naming the file and line. A record whose fields are wrong (`ResultsRecord`:
    types, ranges, finiteness), or a line that is too long or too deep, is always a `CatalogError` naming the file,
    the line and the field."""
    p = Path(path)
    if not p.exists():
        raise CatalogError("results file does not exist", source=str(p))
    out: dict[tuple[str, str], dict[str, Any]] = {}
    try:
        # NaN may sit in a model's call arguments (Python's json writes it); the fields read are checked finite
        for n, rec in iter_json_lines(p, max_line_bytes=MAX_RECORD_BYTES, what="results file",
                                      skip_invalid=not strict, allow_nonfinite=True):
            if not isinstance(rec, dict) or "query_id" not in rec:
                if strict:
                    raise CatalogError("not a results record (a JSON object with query_id)", source=str(p), line=n)
                continue
            check_model(ResultsRecord, rec, source=str(p), line=n)
            rec.setdefault("group", "")
            out[record_key(rec)] = rec
    except DataFileError as exc:
        raise CatalogError.from_data(exc) from None
    return list(out.values())


# how the error of a query whose model could not be made began, in records written before such errors had their
# own kind ("configuration"; they were recorded as "other")
CONFIG_ERROR_HEADS = ("ModelNotConfiguredError:",)
CONFIG_KIND = "configuration"  # = models.llm.CONFIG_KIND (not imported: reading results needs no LangChain)


def record_error_kind(record: Mapping[str, Any]) -> str | None:
    """The `error_kind` of a record, an older record's "other" that was a configuration error read as
    "configuration" (so that a resumed batch runs it again once the model is configured)."""
    kind = record.get("error_kind")
    if record.get("status") == "error" and kind in (None, "", "other"):
        text = str(record.get("error") or record.get("reason") or "")
        if text.startswith(CONFIG_ERROR_HEADS):
            return CONFIG_KIND
    return kind if isinstance(kind, str) or kind is None else str(kind)


def _brief(record: Mapping[str, Any]) -> dict[str, Any]:
    return {"status": record.get("status"), "error_kind": record_error_kind(record), "attempt": record.get("attempt")}


class ResultsWriter:
    """Appends records to a JSON-lines file; knows which keys are already finished.

    One writer per results file: the writer holds an exclusive `flock` on the file while open, and a second
    writer (another `anytool eval run` on the same `--out`) is refused with a `ResultsInUse` line instead of
    running every query again. Workers that share a batch through claims (`--db postgresql://`, where a query
    is run by the one worker holding its claim) open the file with `shared=True`: they hold a shared lock
    together, and an exclusive writer is refused while they run (and they while it runs). Storage faults (a
    directory, a read-only or full disk, the file-size limit) raise `StorageError` naming the file."""

    def __init__(self, path: str | Path, *, shared: bool = False) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.is_dir():
                raise StorageError(f"results file {self.path}: is a directory, not a file")
            if self.path.exists() and not self.path.is_file():  # a FIFO would block the open for ever
                raise StorageError(f"results file {self.path}: not a regular file")
            self._fh = self.path.open("a", encoding="utf-8")
        except OSError as exc:
            raise StorageError(f"results file {describe_error(self.path, exc)}") from None
        try:
            exclusive = self._take_lock(shared)
            if exclusive:
                self._repair_tail()
            # the last record of each key on disk: (status, error_kind, attempt) are what a resumed batch decides on
            self.latest: dict[tuple[str, str], dict[str, Any]] = (
                {record_key(r): _brief(r) for r in read_results(self.path)} if self.path.exists() else {})
        except OSError as exc:
            self._fh.close()
            raise StorageError(f"results file {describe_error(self.path, exc)}") from None
        except BaseException:
            self._fh.close()
            raise
        self._lock = threading.Lock()
        self.written = 0  # records appended by this writer

    def _take_lock(self, shared: bool) -> bool:
        """Lock the file for this writer; True when the lock is (or was first) exclusive."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock
            return True
        try:
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if shared:
                try:
                    fcntl.flock(self._fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
                    return False
                except BlockingIOError:
                    pass
            raise ResultsInUse(
                f"results file {self.path}: another process is writing it (one writer per results file); "
                "wait for it to finish or choose another --out (workers sharing a batch through --db "
                "postgresql:// may share one file)") from None
        if shared:
            self._repair_tail()
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_SH)  # let the batch's other workers in
            return False
        return True

    def _repair_tail(self) -> None:
        """Drop a half-written last line (no trailing newline) left by a crash."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        with self.path.open("rb+") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 1))
            if f.read(1) == b"\n":
                return
            block = 1 << 16
            pos = size
            while pos > 0:  # find the last newline
                start = max(0, pos - block)
                f.seek(start)
                chunk = f.read(pos - start)
                idx = chunk.rfind(b"\n")
                if idx != -1:
                    f.truncate(start + idx + 1)
                    return
                pos = start
            f.truncate(0)

    def is_finished(self, group: str, query_id: str) -> bool:
        return (group, query_id) in self.latest

    def last_record(self, group: str, query_id: str) -> dict[str, Any] | None:
        """The outcome fields of the key's last record (status, error_kind, attempt), or None."""
        return self.latest.get((group, query_id))

    def append(self, record: Mapping[str, Any]) -> None:
        """Write one record (one line, flushed and fsynced); a storage fault raises `StorageError` naming the file
        (the record is not kept: the query runs again when the batch is resumed)."""
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            try:
                self._fh.write(line)
                self._fh.flush()
                os.fsync(self._fh.fileno())
            except OSError as exc:
                raise StorageError(f"results file {describe_error(self.path, exc)}") from None
            self.latest[record_key(record)] = _brief(record)
            self.written += 1

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                with contextlib.suppress(OSError):  # a write that failed for lack of space fails again here
                    self._fh.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
