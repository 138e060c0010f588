"""Append-only JSON-lines results: one line per finished query, crash-safe and resumable.

Each record is written as one line with a single `write` followed by flush and fsync. A line cut short by a
crash (kill -9) is not valid JSON: reading ignores it, and opening the file for appending first removes it, so
that query is simply run again. A query is finished when a record with its key (group, query_id) is on disk. A
query may be run again (a resumed batch retries recorded transport errors): the last record of a key is the one
every reader takes (`read_results`, behind pass rate, stats and convert).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ...catalog.errors import CatalogError
from ...tools.dbfile import StorageError, describe_error


class ResultsInUse(StorageError):
    """Another process holds the results file (one writer per results file)."""


def record_key(record: Mapping[str, Any]) -> tuple[str, str]:
    return (str(record.get("group", "")), str(record.get("query_id", "")))


def read_results(path: str | Path, *, strict: bool = False) -> list[dict[str, Any]]:
    """Every complete record of a results file (a later record of the same key replaces an earlier one).

    A line that is not a JSON object is skipped (a crash's half-written last line), or with `strict` an error
    naming the file and line."""
    p = Path(path)
    if not p.is_file():
        raise CatalogError("results file does not exist", source=str(p))
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for n, line in enumerate(_lines(p), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            rec = None
        if not isinstance(rec, dict) or "query_id" not in rec:
            if strict:
                raise CatalogError("not a results record (a JSON object with query_id)", source=str(p), field=f"line {n}")
            continue
        out[record_key(rec)] = rec
    return list(out.values())


def _brief(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: record.get(k) for k in ("status", "error_kind", "attempt")}


def _lines(p: Path) -> Iterator[str]:
    with p.open("r", encoding="utf-8", errors="replace") as f:
        yield from f


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
