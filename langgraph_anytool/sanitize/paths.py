"""Names that come from data, and the paths built from them: never a way out of their folder.

- `safe_file_name`: a group, a query id or a thread id made a file name (`[A-Za-z0-9._-]`, no leading dot, a digest
  of the original appended when it had to change, so two names never share a file).
- `query_page_name`: the file name of one query's page in a run report (`<group>+<query_id>.html`); `anytool
  report` writes it and `eval compare --report DIR` links to it, so both go through this one function.
- `check_plain_name`: a name given in a config (a tool name) is a name, never a path: refused otherwise.
- `user_cache_dir`: the folder of one kind of rebuildable data (search indexes, model conversions, cached
  responses, evaluator verdicts): `$ANYTOOL_*` when set, else `$XDG_CACHE_HOME/langgraph-anytool/<name>`.
- `path_inside`: a path under a folder (an output file, a file of a model folder or a toolset), refused when a part
  is absolute or ``..``, or when it resolves outside the folder through a symbolic link (a link that stays inside
  is fine). The result is the resolved path, so a later open cannot be redirected by the same link.

The faults are `DataFileError`s naming the folder or the file.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

from .files import DataFileError, brief

MAX_FILE_NAME_CHARS = 120  # a file name made from data (before its suffix and digest)
PAGE_SUFFIX = ".html"  # a query's page in a run report
MAX_PAGE_PART_CHARS = 100  # a page name's group or query part: 2 × (100 + 17) + 1 + 5 = 240 < 255 bytes
DIGEST_HEX = 16  # hex digits of the digest a changed name carries (64 bits: no collision in billions of names)
_DIGESTED = re.compile(r"-[0-9a-f]{16}$")
_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


def safe_file_name(name: object, *, fallback: str = "item", max_chars: int = MAX_FILE_NAME_CHARS) -> str:
    """A file name (no suffix) made from a name that comes from data (a group, a query id, a thread id): only
    `[A-Za-z0-9._-]`, no leading dot, at most `max_chars` + 17 characters. A name that had to change gets a
    64-bit digest of the original appended (`a_b-3f2a1c0d9e8b7a65`), and so does a plain name that ends like a
    digest, so two different names never share a file (short of a 64-bit sha256 collision: a reader that keys
    pages by name still checks, e.g. `report.site.write_site`)."""
    text = str(name)
    cleaned = _UNSAFE_NAME_CHARS.sub("_", text).lstrip(".")[:max_chars] or fallback
    if cleaned == text and not _DIGESTED.search(text):
        return cleaned
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_HEX]
    return f"{cleaned}-{digest}"


def query_page_name(group: object, query_id: object) -> str:
    """The file name (in the report's folder, no subfolder) of one query's page: `<group>+<query_id>.html`, each
    part through `safe_file_name` (at most `MAX_PAGE_PART_CHARS` before its digest, so the whole name stays under
    the 255 bytes a file system allows). A query is known by (group, query_id) (`results.record_key`); `+` never
    occurs in a safe name, so the split is unambiguous and two keys never share a page."""
    return (f"{safe_file_name(group, fallback='group', max_chars=MAX_PAGE_PART_CHARS)}+"
            f"{safe_file_name(query_id, fallback='query', max_chars=MAX_PAGE_PART_CHARS)}{PAGE_SUFFIX}")


def check_plain_name(name: str, *, source: str, field: str, what: str = "name") -> str:
    """`name` when it is a plain name (no path separator, not `.` / `..`, no NUL, not absolute); otherwise a
    `DataFileError`: a name given in a config is a name, never a path."""
    if (not name or "/" in name or "\\" in name or "\x00" in name or name in (".", "..")
            or os.path.isabs(name) or name.startswith("~")):
        raise DataFileError(f"{name!r} is not a {what} (a name, not a path: no '/', '\\', '..' or '~')",
                            source=source, field=field)
    return name


def path_inside(root: str | os.PathLike[str], *parts: str, what: str = "file") -> Path:
    """`root / parts...` resolved (symbolic links followed), when it lies inside `root` (resolved too).

    Refused with a `DataFileError`: a part that is absolute, empty or holds ``..`` (named with `what`, e.g. "the
    output file '../x.json' would lie outside the folder"), and a path that a symbolic link leads outside `root`
    (the message names the link and where it leads, never what the file holds).
    """
    base = Path(root).resolve()
    rel = Path(*parts) if parts else Path()
    if not rel.parts or rel.is_absolute() or ".." in rel.parts or any(not p for p in parts):
        raise DataFileError(f"the {what} {brief('/'.join(parts))} would lie outside the folder (an absolute path, "
                            "'..' or an empty name); refused", source=str(base))
    target = (base / rel).resolve()
    if target != base and base not in target.parents:
        raise DataFileError(f"a symbolic link that leads outside {base} (to {target}); refused",
                            source=str(base / rel))
    return target


__all__ = ["MAX_FILE_NAME_CHARS", "PAGE_SUFFIX", "check_plain_name", "path_inside", "query_page_name", "safe_file_name",
           "user_cache_dir"]


def user_cache_dir(name: str, env_var: str | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """`$env_var` when it is set, else `$XDG_CACHE_HOME/langgraph-anytool/<name>` (`~/.cache` by default)."""
    env = os.environ if environ is None else environ
    if env_var and env.get(env_var):
        return Path(env[env_var]).expanduser()
    return Path(env.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "langgraph-anytool" / name
