"""`anytool report`: a static site of a batch's runs (or of one checkpointed run), and `render_run` for a notebook.

The site is one folder: `index.html` and one self-contained page per query, named by
`sanitize.paths.query_page_name(group, query_id)` (the name `eval compare --report` links to), each written through
`sanitize.files.path_inside`, so a name from data never reaches a file outside the folder. Each record is checked
against the fields the pages read (`results.ResultsRecord`) first, a fault one line naming the record and the
field; two queries whose names would share a page are refused (never one page for both)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...sanitize.files import DataFileError, brief
from ...sanitize.paths import path_inside
from ...sanitize.schema import check_model
from ..anytool.results import ResultsRecord, record_key
from .index import index_page, page_name
from .page import query_page
from .redact import Scrubber, env_secrets, scrub

INDEX = "index.html"


@dataclass(frozen=True)
class SiteReport:
    """What `write_site` wrote: the folder, its index, the query pages and their sizes in bytes."""

    out: Path
    index: Path
    pages: list[Path]
    sizes: list[int]


def write_site(records: Sequence[Mapping[str, Any]], out: str | os.PathLike[str], *, title: str = "AnyTool report",
               sources: Sequence[str] = (), secrets: Iterable[str] | None = None) -> SiteReport:
    """Write the index and one page per record into `out` (created when missing). Secrets (the environment's
    secret-named variables unless `secrets` is given, and anything shaped like a key) are masked first."""
    checked = unique_pages(records)
    known = tuple(env_secrets() if secrets is None else secrets)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    scrub = Scrubber(known)
    clean = [scrub(dict(r)) for r in checked]
    pages, sizes = [], []
    for r in clean:
        target = path_inside(folder, page_name(r), what="report page")
        html = query_page(r, index_href=INDEX)
        target.write_text(html, encoding="utf-8")
        pages.append(target)
        sizes.append(len(html.encode("utf-8")))
    index = path_inside(folder, INDEX, what="report index")
    index.write_text(index_page(clean, title=title, sources=list(sources)), encoding="utf-8")
    return SiteReport(folder, index, pages, sizes)


def record_source(n: int, record: Mapping[str, Any]) -> str:
    """How a fault names a record: its place in the list and its key."""
    group, query_id = record_key(record) if isinstance(record, Mapping) else ("?", "?")
    return f"record {n} (group {brief(group)}, query_id {brief(query_id)})"


def unique_pages(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The records, each checked against the fields the pages read (`ResultsRecord`), one per query (a later record
    of a key replaces an earlier one, as `read_results` does); a `DataFileError` when a record is wrong or when two
    queries' page names meet."""
    by_name: dict[str, tuple[tuple[str, str], Mapping[str, Any]]] = {}
    for n, r in enumerate(records, 1):
        check_model(ResultsRecord, r, source=record_source(n, r))
        key, name = record_key(r), page_name(r)
        if name in by_name and by_name[name][0] != key:
            raise DataFileError(f"queries {by_name[name][0]!r} and {key!r} would share the page {name!r} (rename "
                                "one of them)", source=record_source(n, r))
        by_name[name] = (key, r)
    return [r for _, r in by_name.values()]


def render_run(out: Mapping[str, Any], *, secrets: Iterable[str] | None = None) -> str:
    """One run's page, as an HTML string, from the output of `graph.invoke` (an AnyTool graph's final state) or
    from a results record: the same page as `anytool report` writes. In a notebook:
    `IPython.display.HTML(render_run(out))`."""
    from ..anytool.runner import run_record

    record = dict(out) if "trajectory" in out or "pool_entries" in out else run_record(out)
    check_model(ResultsRecord, {"query_id": "run", **record}, source="run record")
    known = tuple(env_secrets() if secrets is None else secrets)
    return query_page(scrub(record, known))


def thread_record(db: str, thread: str) -> dict[str, Any]:
    """The run checkpointed on `thread` in `db` (a SQLite file or a postgresql:// URL) as a results record."""
    from ..anytool.persistence import sync_checkpointer
    from ..anytool.runner import run_record

    with sync_checkpointer(db) as saver:
        found = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
    if found is None:
        raise ValueError(f"--db {db}: no checkpoint of thread {thread!r}")
    values = dict(found.checkpoint.get("channel_values") or {})
    if "query" not in values:
        raise ValueError(f"--db {db}: thread {thread!r} holds no AnyTool run")
    return {"query_id": thread, "group": "thread", **run_record(values), "query": values.get("query", "")}
