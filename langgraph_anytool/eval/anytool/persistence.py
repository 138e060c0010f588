"""Checkpointers from a `--db` value: a SQLite file, or a PostgreSQL URL (optional `postgres` extra) that several
worker processes or machines share; plus a claim table so workers sharing a batch never run a query twice."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from ...install.extras import install_hint

_SETUP_LOCK = 0x616E7974  # advisory lock serialising schema set-up of workers starting together


@asynccontextmanager
async def _setup_lock(db: str) -> AsyncIterator[None]:
    """Hold a session advisory lock while creating tables (concurrent CREATE TABLE IF NOT EXISTS can collide).

    The lock is polled, not waited for inside a statement: the checkpointer's set-up runs `CREATE INDEX
    CONCURRENTLY`, which waits for every other session's open statement to end, so a worker blocked in
    `pg_advisory_lock` would deadlock with the worker holding the lock (PostgreSQL does not detect that cycle)."""
    import asyncio

    import psycopg

    async with await psycopg.AsyncConnection.connect(db, autocommit=True) as conn:
        while True:
            cur = await conn.execute("SELECT pg_try_advisory_lock(%s)", (_SETUP_LOCK,))
            row = await cur.fetchone()
            if row is not None and row[0]:
                break
            await asyncio.sleep(0.05)  # idle between polls: no open statement for CREATE INDEX CONCURRENTLY to wait on
        try:
            yield
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (_SETUP_LOCK,))


def is_postgres(db: str | None) -> bool:
    return bool(db) and str(db).startswith(("postgres://", "postgresql://"))


def check_db(db: str | None, *, what: str = "--db") -> None:
    """Refuse a `--db` value that cannot hold checkpoints, before the first query, with one line naming it: an
    unsupported URL (mysql://...), a PostgreSQL server that does not answer, a missing directory, a directory, a
    file that is not SQLite or is damaged, a read-only location (`DatabaseFileError`)."""
    from ...tools.dbfile import DatabaseFileError, open_sqlite, redact_url, url_scheme

    if not db:
        return
    if is_postgres(db):
        try:
            import psycopg
        except ImportError as exc:
            raise ImportError(f"a PostgreSQL --db needs the postgres extra: {install_hint('postgres')} ({exc})") from None
        try:
            psycopg.connect(db, connect_timeout=10).close()
        except psycopg.Error as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise DatabaseFileError(f"{what} {redact_url(db)}: cannot connect to the PostgreSQL server ({first})") from None
        return
    scheme = url_scheme(db)
    if scheme is not None:
        raise DatabaseFileError(f"{what} {redact_url(db)}: unsupported URL scheme {scheme!r}; --db takes a SQLite file "
                                "path or a postgresql:// URL")
    open_sqlite(db, what=what).close()


@contextmanager
def sync_checkpointer(db: str | None) -> Iterator[Any]:
    """A checkpointer for synchronous runs: in memory (None), SQLite (a path) or PostgreSQL (a URL)."""
    if not db:
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
    elif is_postgres(db):
        try:
            from langgraph.checkpoint.postgres import PostgresSaver
        except ImportError as exc:
            raise ImportError(f"a PostgreSQL --db needs the postgres extra: {install_hint('postgres')} ({exc})") from None
        check_db(db)
        with PostgresSaver.from_conn_string(db) as saver:
            saver.setup()
            yield saver
    else:
        from langgraph.checkpoint.sqlite import SqliteSaver

        from ...tools.dbfile import open_sqlite, url_scheme

        if url_scheme(db) is not None:
            check_db(db)  # an unsupported URL is refused, not taken for a file name
        conn = open_sqlite(db, what="--db")  # a missing directory, a directory, a non-SQLite file: one clear line
        try:
            yield SqliteSaver(conn)
        finally:
            conn.close()


@asynccontextmanager
async def async_checkpointer(db: str | None, *, check: bool = True) -> AsyncIterator[Any]:
    """The asynchronous counterpart (the batch runner runs queries as asyncio tasks); `check=False` when the
    caller already ran `check_db`."""
    if not db:
        yield None  # the runner gives each query its own in-memory saver
    elif is_postgres(db):
        try:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        except ImportError as exc:
            raise ImportError(f"a PostgreSQL --db needs the postgres extra: {install_hint('postgres')} ({exc})") from None
        if check:
            check_db(db)
        async with AsyncPostgresSaver.from_conn_string(db) as saver:
            async with _setup_lock(db):
                await saver.setup()
            yield saver
    else:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        if check:  # a damaged or non-SQLite file is refused here, not recorded as every query's error
            check_db(db)
        async with AsyncSqliteSaver.from_conn_string(db) as saver:
            yield saver


class PostgresClaims:
    """A claim table in the run's PostgreSQL database: the first worker to insert a (batch, query) key owns it.

    A finished query's claim is marked done and never taken again; a claim whose worker died before finishing
    is taken over after `stale_seconds` (the query then resumes from its checkpoints in the same database)."""

    def __init__(self, db: str, batch: str, *, worker: str, stale_seconds: float = 3600.0) -> None:
        self.db, self.batch, self.worker, self.stale = db, batch, worker, stale_seconds
        self._conn: Any = None

    async def __aenter__(self) -> PostgresClaims:
        try:
            import psycopg
        except ImportError as exc:
            raise ImportError(f"a PostgreSQL --db needs the postgres extra: {install_hint('postgres')} ({exc})") from None
        self._conn = await psycopg.AsyncConnection.connect(self.db, autocommit=True)
        async with _setup_lock(self.db):
            await self._conn.execute(
                "CREATE TABLE IF NOT EXISTS anytool_claims (batch TEXT NOT NULL, query_key TEXT NOT NULL, "
                "worker TEXT NOT NULL, claimed_at TIMESTAMPTZ NOT NULL DEFAULT now(), "
                "done BOOLEAN NOT NULL DEFAULT false, PRIMARY KEY (batch, query_key))")
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._conn is not None:
            await self._conn.close()

    async def claim(self, key: str, retry: bool = False) -> bool:
        """True when this worker now owns `key` (new, already its own, or taken over from a stale claim; with
        `retry`, also a done one: its record is an error the resumed batch runs again)."""
        cur = await self._conn.execute(
            "INSERT INTO anytool_claims (batch, query_key, worker) VALUES (%s, %s, %s) "
            "ON CONFLICT (batch, query_key) DO UPDATE SET worker = EXCLUDED.worker, claimed_at = now(), done = false "
            "WHERE (anytool_claims.done AND %s) OR (NOT anytool_claims.done AND (anytool_claims.worker = "
            "EXCLUDED.worker OR anytool_claims.claimed_at < now() - make_interval(secs => %s))) RETURNING worker",
            (self.batch, key, self.worker, retry, self.stale))
        return await cur.fetchone() is not None

    async def done(self, key: str) -> None:
        """Mark `key` finished (its record is written)."""
        await self._conn.execute("UPDATE anytool_claims SET done = true WHERE batch = %s AND query_key = %s",
                                 (self.batch, key))


# ------------------------------------------------------------------------------------------------ compaction
# A finished query's thread keeps what a resume or an audit needs: the latest checkpoint of each persistent
# namespace (the root's holds the final state: answer, status, agents, solver attempts, usage) and that
# checkpoint's pending writes. Every earlier checkpoint, their writes, and the checkpoints of finished subgraph
# calls (a namespace with a task id after ":") go. Without this a 1,000-query batch left a 2.6 GB database.
_COMPACT_SQL = (
    "DELETE FROM writes WHERE thread_id = ? AND instr(checkpoint_ns, ':') > 0",
    "DELETE FROM checkpoints WHERE thread_id = ? AND instr(checkpoint_ns, ':') > 0",
    "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id < (SELECT MAX(c.checkpoint_id) FROM checkpoints c "
    "WHERE c.thread_id = checkpoints.thread_id AND c.checkpoint_ns = checkpoints.checkpoint_ns)",
    "DELETE FROM writes WHERE thread_id = ? AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = "
    "writes.thread_id AND c.checkpoint_ns = writes.checkpoint_ns AND c.checkpoint_id = writes.checkpoint_id)",
)


def compact_thread_sync(saver: Any, thread_id: str) -> None:
    """Compact a finished thread of a `SqliteSaver` (the statements above) or a `PostgresSaver` (its own
    `prune(strategy="keep_latest")`); an in-memory saver is left as it is."""
    if type(saver).__name__ == "PostgresSaver" and hasattr(saver, "prune"):
        saver.prune([thread_id], strategy="keep_latest")
        return
    conn, lock = getattr(saver, "conn", None), getattr(saver, "lock", None)
    if not isinstance(conn, sqlite3.Connection) or lock is None:
        return
    with lock:
        for sql in _COMPACT_SQL:
            conn.execute(sql, (thread_id,))
        conn.commit()
        if conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2:  # incremental: hand freed pages back
            conn.executescript("PRAGMA incremental_vacuum;")  # execute() would free one page (one step) only


async def compact_thread(saver: Any, thread_id: str) -> None:
    """Compact a finished thread: an `AsyncSqliteSaver` by the statements above, an `AsyncPostgresSaver` by its own
    `aprune(strategy="keep_latest")`; an in-memory saver is dropped with its query anyway."""
    prune = getattr(saver, "aprune", None)
    if type(saver).__name__ == "AsyncPostgresSaver" and prune is not None:
        await prune([thread_id], strategy="keep_latest")
        return
    conn, lock = getattr(saver, "conn", None), getattr(saver, "lock", None)
    if conn is None or lock is None or not hasattr(conn, "execute") or isinstance(conn, sqlite3.Connection):
        return
    async with lock:
        for sql in _COMPACT_SQL:
            await conn.execute(sql, (thread_id,))
        await conn.commit()
        async with conn.execute("PRAGMA auto_vacuum") as cur:
            row = await cur.fetchone()
        if row is not None and row[0] == 2:
            await conn.executescript("PRAGMA incremental_vacuum;")  # execute() would free one page (one step)


def db_size(db: str | None) -> int:
    """Bytes a SQLite `--db` takes on disk (the file and its WAL); 0 for none or a URL."""
    import os

    if not db or is_postgres(db):
        return 0
    return sum(os.path.getsize(p) for p in (db, f"{db}-wal") if os.path.exists(p))
