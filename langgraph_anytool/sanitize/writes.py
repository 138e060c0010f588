"""Writing files and folders as a whole: a reader (or a crash) sees the old one, none, or the new one, never half.

- `atomic_file`: `write` fills a temporary file beside the target, which is then renamed over it (a symbolic link
  of that name is replaced, never followed).
- `atomic_write`: `atomic_file` for bytes already in memory.
- `write_folder`: `fill` writes a fresh temporary folder beside the target, which then replaces it
  (`replace_folder`); temporary folders a crashed writer left behind are swept after an hour.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

STALE_SECONDS = 3600  # temporary folders of a crashed writer older than this are swept


def atomic_file(path: Path, write: Callable[[Path], object], *, mode: int | None = None) -> None:
    """Call `write(tmp)` to fill a temporary file beside `path`, then rename it over `path` (on any failure the
    temporary file is removed). `mode`: the file's permissions (default: private to the user, as `mkstemp` makes
    it)."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write `data` to `path` as a whole (`atomic_file`)."""
    atomic_file(path, lambda tmp: tmp.write_bytes(data), mode=mode)


def write_folder(path: Path, fill: Callable[[Path], None]) -> None:
    """Make the folder `path` as a whole: `fill` writes a fresh temporary folder beside it, which then replaces
    `path` (a symbolic link or file of that name is removed, never followed)."""
    parent = path.parent
    parent.mkdir(parents=True, exist_ok=True)
    _sweep(parent, path.name)
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{path.name}.tmp-"))
    try:
        fill(tmp)
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; an index or a model is not a secret
        replace_folder(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def replace_folder(new: Path, path: Path) -> None:
    """Rename the folder `new` to `path`, moving whatever `path` was out of the way first (not following links)."""
    old: Path | None = None
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.exists():
        old = path.with_name(f".{path.name}.old-{uuid.uuid4().hex[:8]}")
        os.rename(path, old)
    try:
        os.rename(new, path)
    except OSError:
        if old is not None and not path.exists():
            os.rename(old, path)  # another writer did not win: put the old folder back
            old = None
        if not path.is_dir():
            raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def _sweep(parent: Path, name: str) -> None:
    """Remove temporary folders of `name` that a crashed writer left behind (older than `STALE_SECONDS`)."""
    now = time.time()
    for pattern in (f".{name}.tmp-*", f".{name}.old-*"):
        for leftover in parent.glob(pattern):
            try:
                if not leftover.is_symlink() and now - leftover.stat().st_mtime > STALE_SECONDS:
                    shutil.rmtree(leftover, ignore_errors=True)
            except OSError:
                continue


__all__ = ["STALE_SECONDS", "atomic_file", "atomic_write", "replace_folder", "write_folder"]
