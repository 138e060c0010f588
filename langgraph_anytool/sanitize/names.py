"""File names made from names that come from data (a group, a query id), shared by every writer and linker of
per-query files: the run report writes `query_page_name(group, query_id)` for each query, and `eval compare
--report DIR` links to the same name.

`safe_file_name` keeps only `[A-Za-z0-9._-]`, drops leading dots, caps the length, and appends a digest of the
original when it had to change anything, so two different names never share a file. (Branch `harden-files` has the
same function, with the same output, in `sanitize/files.py`; one of the two goes when both are merged.)
"""

from __future__ import annotations

import hashlib
import re

MAX_FILE_NAME_CHARS = 120  # a file name made from data (before its suffix and digest)
PAGE_SUFFIX = ".html"
_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


def safe_file_name(name: object, *, fallback: str = "item", max_chars: int = MAX_FILE_NAME_CHARS) -> str:
    """A file name (no suffix) made from `name`: only `[A-Za-z0-9._-]`, no leading dot, at most `max_chars`
    characters before the digest. A name that had to change gets `-` and 8 hex digits of its sha256 appended
    (`a b` → `a_b-<digest>`), so different names give different file names."""
    text = str(name)
    cleaned = _UNSAFE_NAME_CHARS.sub("_", text).lstrip(".")[:max_chars] or fallback
    if cleaned == text:
        return cleaned
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{cleaned}-{digest}"


def query_page_name(group: object, query_id: object) -> str:
    """The file name (in the report's folder, no subfolder) of one query's page: `<group>+<query_id>.html`, each
    part through `safe_file_name`. A query is known by (group, query_id) (`results.record_key`); `+` never occurs
    in a safe name, so the split is unambiguous and two keys never share a page."""
    return f"{safe_file_name(group, fallback='group')}+{safe_file_name(query_id, fallback='query')}{PAGE_SUFFIX}"


__all__ = ["MAX_FILE_NAME_CHARS", "PAGE_SUFFIX", "query_page_name", "safe_file_name"]
