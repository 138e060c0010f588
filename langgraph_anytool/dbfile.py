"""Open a user-named SQLite file (the CLI's `--db` checkpoint database) with one clear line per problem.

Missing directory, a directory, a file that is not SQLite, a truncated or corrupt database, a read-only location
and a full disk each give a `DatabaseFileError` naming the file and the problem, instead of a `sqlite3` traceback.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

SQLITE_HEADER = b"SQLite format 3\x00"


class DatabaseFileError(ValueError):
    """A database file that cannot be used; the message names the file and the problem."""


def is_disk_full(exc: BaseException) -> bool:
    """Whether an error is SQLite's (or the OS's) "disk full"."""
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        return code == sqlite3.SQLITE_FULL or "full" in str(exc).lower()
    return isinstance(exc, OSError) and exc.errno == 28  # ENOSPC


def describe_error(path: str | Path, exc: BaseException) -> str:
    """One line for a database error raised while using `path`."""
    if is_disk_full(exc):
        return f"{path}: the disk is full ({exc}); free some space and run the same command again to resume"
    text = str(exc)
    if isinstance(exc, sqlite3.DatabaseError) and ("malformed" in text or "not a database" in text):
        return f"{path}: the database is damaged (truncated or corrupt: {text})"
    if "readonly" in text or "read-only" in text or isinstance(exc, PermissionError):
        return f"{path}: cannot write to the database ({text})"
    return f"{path}: {text}"


def open_sqlite(path: str | Path, *, what: str = "database") -> sqlite3.Connection:
    """A connection to `path` (created when absent) after checking that it is usable; else `DatabaseFileError`."""
    p = Path(path).expanduser()
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.exists():
        raise DatabaseFileError(f"{what} {p}: directory {parent} does not exist")
    if not parent.is_dir():
        raise DatabaseFileError(f"{what} {p}: {parent} is not a directory")
    if p.is_dir():
        raise DatabaseFileError(f"{what} {p}: is a directory, not a file")
    if p.exists():
        try:
            with p.open("rb") as fh:
                head = fh.read(len(SQLITE_HEADER))
        except OSError as exc:
            raise DatabaseFileError(f"{what} {p}: cannot be read ({exc.strerror or exc})") from None
        if head and head != SQLITE_HEADER:
            raise DatabaseFileError(f"{what} {p}: is not an SQLite database")
    try:
        conn = sqlite3.connect(str(p), check_same_thread=False)
    except sqlite3.Error as exc:
        raise DatabaseFileError(f"{what} {describe_error(p, exc)}") from None
    try:
        row = conn.execute("PRAGMA quick_check").fetchone()
        if row is None or row[0] != "ok":
            raise DatabaseFileError(f"{what} {p}: the database is damaged (integrity check: {row[0] if row else '?'})")
    except sqlite3.Error as exc:
        conn.close()
        raise DatabaseFileError(f"{what} {describe_error(p, exc)}") from None
    except DatabaseFileError:
        conn.close()
        raise
    return conn
