"""File names made from names that come from data (a group, a query id), shared by every writer and linker of
per-query files: the run report writes `query_page_name(group, query_id)` for each query, and `eval compare
--report DIR` links to the same name.

`safe_file_name` (from `sanitize/files.py`) keeps only `[A-Za-z0-9._-]`, drops leading dots, caps the length, and
appends a digest of the original when it had to change anything, so two different names never share a file.
"""

from __future__ import annotations

from .files import MAX_FILE_NAME_CHARS, safe_file_name

PAGE_SUFFIX = ".html"


def query_page_name(group: object, query_id: object) -> str:
    """The file name (in the report's folder, no subfolder) of one query's page: `<group>+<query_id>.html`, each
    part through `safe_file_name`. A query is known by (group, query_id) (`results.record_key`); `+` never occurs
    in a safe name, so the split is unambiguous and two keys never share a page."""
    return f"{safe_file_name(group, fallback='group')}+{safe_file_name(query_id, fallback='query')}{PAGE_SUFFIX}"


__all__ = ["MAX_FILE_NAME_CHARS", "PAGE_SUFFIX", "query_page_name", "safe_file_name"]
