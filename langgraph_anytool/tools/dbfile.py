"""Open a user-named SQLite file (the CLI's `--db` checkpoint database) with one clear line per problem.

Missing directory, a directory, a file that is not SQLite, a truncated or corrupt database, a read-only location
and a full disk each give a `DatabaseFileError` naming the file and the problem, instead of a `sqlite3` traceback.
"""

from __future__ import annotations

import errno
import os
import re
import sqlite3
from pathlib import Path

SQLITE_HEADER = b"SQLite format 3\x00"


class StorageError(ValueError):
    """A file the run stores into (results, checkpoints, caches) cannot be used or written; the message names
    the file and the problem in one line."""


class DatabaseFileError(StorageError):
    """A database file that cannot be used; the message names the file and the problem."""


def is_disk_full(exc: BaseException) -> bool:
    """Whether an error is SQLite's (or the OS's) "disk full"."""
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        return code == sqlite3.SQLITE_FULL or "full" in str(exc).lower()
    return isinstance(exc, OSError) and exc.errno == errno.ENOSPC


def is_storage_fault(exc: BaseException) -> bool:
    """A fault of the storage itself (disk full, file too large, read-only, I/O error, damaged database), which no
    later query can get past: the batch stops with one line instead of recording it against every query."""
    if is_disk_full(exc):
        return True
    if isinstance(exc, OSError):
        return exc.errno in (errno.EFBIG, errno.EROFS, errno.EIO, errno.EDQUOT)
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        text = str(exc).lower()
        return code in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_READONLY,
                        sqlite3.SQLITE_TOOBIG) or any(w in text for w in ("malformed", "not a database",
                                                                          "disk i/o", "readonly"))
    return False


def describe_error(path: str | Path, exc: BaseException) -> str:
    """One line for a storage error raised while using `path`."""
    if is_disk_full(exc):
        return f"{path}: the disk is full ({_first_line(exc)}); free some space and run the same command again to resume"
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return (f"{path}: the file is too large for this system's file-size limit ({exc.strerror}); raise the "
                "limit (ulimit -f) or start a new file")
    if isinstance(exc, OSError) and exc.errno == errno.EROFS:
        return f"{path}: the file system is read-only"
    text = _first_line(exc)
    if isinstance(exc, sqlite3.Error) and "disk i/o error" in text.lower():
        limit = _file_size_limit()
        if limit is not None:
            return f"{path}: {text} (this process may write files of at most {limit} bytes: ulimit -f)"
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
    writable = p if p.exists() else parent
    if not os.access(writable, os.W_OK):
        reason = "the file system is read-only" if _read_only_fs(writable) else "no permission to write"
        raise DatabaseFileError(f"{what} {p}: cannot write to {'the file' if writable == p else parent} ({reason})")
    new = not p.exists() or p.stat().st_size == 0
    try:
        conn = sqlite3.connect(str(p), check_same_thread=False)
        if new:  # freed pages (compacted threads) go back to the file system: PRAGMA incremental_vacuum
            conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
            conn.execute("PRAGMA user_version=0")  # writes the header, so the setting holds for the tables to come
            conn.commit()
    except sqlite3.Error as exc:
        raise DatabaseFileError(f"{what} {describe_error(p, exc)}") from None
    try:
        rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check(20)").fetchall()]
        if rows != ["ok"]:
            raise DatabaseFileError(f"{what} {p}: the database is damaged ({_integrity_summary(rows)}); "
                                    "move it away or name another file")
    except sqlite3.Error as exc:
        conn.close()
        raise DatabaseFileError(f"{what} {describe_error(p, exc)}") from None
    except DatabaseFileError:
        conn.close()
        raise
    return conn


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _integrity_summary(rows: list[str]) -> str:
    """SQLite's integrity report in one line: the first problem and how many more (it lists one per line)."""
    problems = [line.strip() for row in rows for line in row.splitlines()
                if line.strip() and not line.startswith("***")]
    if not problems:
        return "integrity check failed"
    more = len(problems) - 1
    return f"integrity check: {problems[0]}" + (f"; {more}{'+' if len(problems) >= 20 else ''} more problems" if more else "")


_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_PASSWORD = re.compile(r"(://[^:/@]*:)[^@/]*@")


def redact_url(url: str) -> str:
    """A database URL with its password replaced by `***`."""
    return _PASSWORD.sub(r"\1***@", url)


def url_scheme(db: str) -> str | None:
    """The scheme of a URL-looking `--db` value ("mysql" for mysql://...), None for a file path."""
    m = _URL.match(db)
    return m.group(1).lower() if m else None


def _file_size_limit() -> int | None:
    """RLIMIT_FSIZE in bytes when one is set (SQLite reports a write past it only as "disk I/O error")."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return None
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if soft == resource.RLIM_INFINITY else int(soft)
