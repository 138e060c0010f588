"""A response cache for API calls: SQLite file (default) or memory, TTLs, JSONL export/import.

Key = sha256 of the API id and the canonical JSON of the *validated* arguments (sorted keys, no
whitespace, integral floats written as integers), so key order, whitespace and "3" vs 3 never split
entries. Only what the pipeline hands over is stored: status, content, error, simulated. Keys hold
nothing but the API id and the arguments; executors never put credentials into either.

Thread- and task-safe: one SQLite connection per cache guarded by a lock, in WAL mode with a busy
timeout so several processes may share the file; async methods run the SQLite work in a thread.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, StrictBool

from ..sanitize.files import DataFileError, check_model, iter_json_lines
from ..sanitize.schema import Count, FileModel
from .dbfile import SQLITE_HEADER, DatabaseFileError, describe_error
from .observation import Observation, Status

MAX_IMPORT_LINE_BYTES = 64 << 20  # one exported cache record (observations are cut to a few KB when stored)


class _CacheRecord(FileModel):
    """One line of a cache export (`export_jsonl`), as `import_jsonl` checks it."""

    api_id: str = Field(min_length=1)
    arguments: dict[str, Any]
    status: Status
    error: str | None = None
    simulated: StrictBool = False
    created: Count | None = None

_CACHE_HINT = " (name another file, set ANYTOOL_CACHE_DIR elsewhere, or turn the cache off: ANYTOOL_CACHE=off)"

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    api_id TEXT NOT NULL,
    arguments TEXT NOT NULL,
    status TEXT NOT NULL,
    content TEXT NOT NULL,
    error TEXT NOT NULL,
    simulated INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS responses_api ON responses(api_id);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _canonical_value(value: Any) -> Any:
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _canonical_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical_value(v) for v in value]
    return value


def canonical_json(arguments: Mapping[str, Any]) -> str:
    """Sorted keys, no whitespace, integral floats as integers; NaN/inf rejected (ValueError)."""
    return json.dumps(_canonical_value(arguments), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False, default=str)


def cache_key(api_id: str, arguments: Mapping[str, Any]) -> str:
    """The hex sha256 identifying one call."""
    return hashlib.sha256(f"{api_id}\x00{canonical_json(arguments)}".encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class _Entry:
    key: str
    api_id: str
    arguments: str  # canonical JSON
    status: str
    content: str  # JSON
    error: str
    simulated: bool
    created: float

    def to_observation(self) -> Observation:
        return Observation(api_id=self.api_id, status=Status(self.status), content=json.loads(self.content),
                           error=self.error, cached=True, simulated=self.simulated)

    def to_record(self) -> dict[str, Any]:
        return {"api_id": self.api_id, "arguments": json.loads(self.arguments), "status": self.status,
                "content": json.loads(self.content), "error": self.error, "simulated": self.simulated,
                "created": self.created}


def _row_entry(row: tuple[Any, ...]) -> _Entry:
    key, api_id, arguments, status, content, error, simulated, created = row
    return _Entry(key, api_id, arguments, status, content, error, bool(simulated), float(created))


class _MemoryStore:
    """Entries in a dict under a lock."""

    blocking = False

    def __init__(self) -> None:
        self._data: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> _Entry | None:
        with self._lock:
            return self._data.get(key)

    def put(self, entries: list[_Entry]) -> None:
        with self._lock:
            for e in entries:
                self._data[e.key] = e

    def delete(self, key: str) -> None:
        with self._lock:
            self._data.pop(key, None)

    def count(self) -> int:
        with self._lock:
            return len(self._data)

    def entries(self) -> Iterator[_Entry]:
        with self._lock:
            items = sorted(self._data.values(), key=lambda e: (e.created, e.key))
        yield from items

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def check(self) -> str:
        return "ok"

    def close(self) -> None:
        return None


class _SqliteStore:
    """One connection (check_same_thread off) guarded by a lock; WAL + busy timeout for other processes."""

    blocking = True

    def __init__(self, path: Path, busy_timeout_ms: int = 30_000) -> None:
        self._lock = threading.Lock()
        try:
            self._conn = self._open(path, busy_timeout_ms)
        except (OSError, sqlite3.Error) as exc:  # a directory, not SQLite, read-only, a full disk: one line
            raise DatabaseFileError(f"response cache {describe_error(path, exc)}{_CACHE_HINT}") from None

    def _open(self, path: Path, busy_timeout_ms: int) -> sqlite3.Connection:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            raise DatabaseFileError(f"response cache {path}: is a directory, not a file")
        if path.is_file() and path.stat().st_size:
            with path.open("rb") as fh:
                if fh.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
                    raise DatabaseFileError(f"response cache {path}: is not an SQLite database")
        conn = sqlite3.connect(str(path), timeout=busy_timeout_ms / 1000, check_same_thread=False,
                               isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(_SCHEMA)
            row = conn.execute("SELECT value FROM meta WHERE name='schema_version'").fetchone()
            if row is None:
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) != SCHEMA_VERSION:
                raise ValueError(f"cache file {path} has schema version {row[0]}, expected {SCHEMA_VERSION}")
        except BaseException:
            conn.close()
            raise
        return conn

    def get(self, key: str) -> _Entry | None:
        with self._lock:
            row = self._conn.execute("SELECT * FROM responses WHERE key=?", (key,)).fetchone()
        return None if row is None else _row_entry(row)

    def put(self, entries: list[_Entry]) -> None:
        rows = [(e.key, e.api_id, e.arguments, e.status, e.content, e.error, int(e.simulated), e.created)
                for e in entries]
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.executemany("INSERT OR REPLACE INTO responses VALUES (?,?,?,?,?,?,?,?)", rows)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def delete(self, key: str) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM responses WHERE key=?", (key,))

    def count(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def entries(self) -> Iterator[_Entry]:
        with self._lock:
            rows = self._conn.execute("SELECT * FROM responses ORDER BY created, key").fetchall()
        for row in rows:
            yield _row_entry(row)

    def clear(self) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM responses")

    def check(self) -> str:
        with self._lock:
            return str(self._conn.execute("PRAGMA integrity_check").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class ResponseCache:
    """Cached Observations keyed by API id + canonical arguments.

    `ttl` maps an API id, a tool id ("Category/tool_key") or a category to seconds (None = forever);
    the longest matching prefix (on "/" boundaries) wins, else `default_ttl`. Non-ok observations are
    stored only with `cache_errors=True`; invalid-argument results never are. `clock` is injectable.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        ttl: Mapping[str, float | None] | None = None,
        default_ttl: float | None = None,
        cache_errors: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path: Path | None = None if str(path) == ":memory:" else Path(path)
        self._store: _MemoryStore | _SqliteStore = _MemoryStore() if self.path is None else _SqliteStore(self.path)
        self._ttl: dict[str, float | None] = dict(ttl or {})
        self.default_ttl = default_ttl
        self.cache_errors = cache_errors
        self._clock = clock
        self._stats_lock = threading.Lock()
        self._hits = self._misses = self._stores = self._expired = 0

    @classmethod
    def memory(cls, **kwargs: Any) -> ResponseCache:
        """A process-local cache (nothing written to disk)."""
        return cls(":memory:", **kwargs)

    def __repr__(self) -> str:
        where = str(self.path) if self.path else "memory"
        return f"ResponseCache({where}, {len(self)} entries)"

    def __len__(self) -> int:
        return self._store.count()

    # ------------------------------------------------------------------ TTLs
    def set_ttl(self, prefix: str, seconds: float | None) -> None:
        """TTL for an API id, tool id or category prefix (None = forever)."""
        self._ttl[prefix] = seconds

    def ttl_for(self, api_id: str) -> float | None:
        best, best_len = self.default_ttl, -1
        for prefix, seconds in self._ttl.items():
            if (api_id == prefix or api_id.startswith(prefix.rstrip("/") + "/")) and len(prefix) > best_len:
                best, best_len = seconds, len(prefix)
        return best

    def _expired_entry(self, e: _Entry) -> bool:
        ttl = self.ttl_for(e.api_id)
        return ttl is not None and self._clock() - e.created >= ttl

    # ------------------------------------------------------------- get / put
    def get(self, api_id: str, arguments: Mapping[str, Any]) -> Observation | None:
        """The cached Observation (with `cached=True`), or None on a miss or an expired entry."""
        key = cache_key(api_id, arguments)
        entry = self._store.get(key)
        expired = entry is not None and self._expired_entry(entry)
        if expired:
            self._store.delete(key)
        with self._stats_lock:
            if entry is None or expired:
                self._misses += 1
                self._expired += expired
                return None
            self._hits += 1
        return entry.to_observation()

    def should_store(self, obs: Observation) -> bool:
        if obs.status is Status.OK:
            return True
        return self.cache_errors and obs.status not in (Status.INVALID_ARGUMENTS, Status.REJECTED)

    def put(self, api_id: str, arguments: Mapping[str, Any], obs: Observation) -> bool:
        """Store `obs` for this call; False when its status is not cacheable."""
        if not self.should_store(obs):
            return False
        content = json.dumps(obs.content, ensure_ascii=False, separators=(",", ":"), default=str)
        entry = _Entry(cache_key(api_id, arguments), api_id, canonical_json(arguments), obs.status.value, content,
                       obs.error, obs.simulated, self._clock())
        self._store.put([entry])
        with self._stats_lock:
            self._stores += 1
        return True

    async def aget(self, api_id: str, arguments: Mapping[str, Any]) -> Observation | None:
        if self._store.blocking:
            return await asyncio.to_thread(self.get, api_id, arguments)
        return self.get(api_id, arguments)

    async def aput(self, api_id: str, arguments: Mapping[str, Any], obs: Observation) -> bool:
        if self._store.blocking:
            return await asyncio.to_thread(self.put, api_id, arguments, obs)
        return self.put(api_id, arguments, obs)

    # ------------------------------------------------------------ statistics
    @property
    def stats(self) -> dict[str, int]:
        with self._stats_lock:
            return {"hits": self._hits, "misses": self._misses, "stores": self._stores, "expired": self._expired}

    def reset_stats(self) -> None:
        with self._stats_lock:
            self._hits = self._misses = self._stores = self._expired = 0

    def integrity_check(self) -> str:
        """SQLite's `PRAGMA integrity_check` ("ok" when sound; always "ok" in memory)."""
        return self._store.check()

    # ------------------------------------------------------- export / import
    def records(self) -> Iterator[dict[str, Any]]:
        """Every entry as a plain record (api_id, arguments, status, content, error, simulated, created)."""
        for e in self._store.entries():
            yield e.to_record()

    def export_jsonl(self, path: str | Path) -> int:
        """Write every entry, one JSON object a line, oldest first; returns the number written."""
        n = 0
        with Path(path).open("w", encoding="utf-8") as f:
            for rec in self.records():
                f.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
                n += 1
        return n

    def import_jsonl(self, path: str | Path, *, refresh: bool = False) -> int:
        """Load records written by `export_jsonl` (keys are recomputed); `refresh` stamps them as new. The file is
        streamed (each line capped at `MAX_IMPORT_LINE_BYTES`, its depth and numbers bounded) and every field is
        checked; a fault is a `DataFileError` (a ValueError) naming the file, the line and the field."""
        entries: list[_Entry] = []
        for lineno, rec in iter_json_lines(path, max_line_bytes=MAX_IMPORT_LINE_BYTES, what="cache export",
                                           allow_nonfinite=True):
            if not isinstance(rec, dict):
                raise DataFileError("not a cache record (a JSON object)", source=str(path), line=lineno)
            entry = check_model(_CacheRecord, rec, source=str(path), line=lineno)
            try:
                arguments = canonical_json(entry.arguments)
                content = json.dumps(rec.get("content"), ensure_ascii=False, separators=(",", ":"))
            except ValueError as exc:
                raise DataFileError(f"not storable ({exc})", source=str(path), line=lineno) from None
            created = self._clock() if refresh or entry.created is None else entry.created
            entries.append(_Entry(cache_key(entry.api_id, entry.arguments), entry.api_id, arguments,
                                  entry.status.value, content, entry.error or "", entry.simulated, created))
        self._store.put(entries)
        return len(entries)

    # --------------------------------------------------------------- lifecycle
    def clear(self) -> None:
        self._store.clear()

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
