"""`anytool report`: a static HTML site of a batch's runs (a results file) or of one checkpointed run."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any


class ReportUsageError(ValueError):
    """A wrong combination of arguments (reported as one line)."""


def configure_report(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", nargs="*", metavar="RESULTS.jsonl",
                   help="results files of `anytool eval run` (one page per query; a later record of a query wins)")
    p.add_argument("--out", metavar="DIR", required=True, help="folder to write index.html and the query pages into")
    p.add_argument("--thread", metavar="ID", default=None, help="one checkpointed run: its thread id (with --db)")
    p.add_argument("--db", metavar="FILE|URL", default=None,
                   help="the checkpoints of --thread: a SQLite file or a postgresql:// URL")
    p.add_argument("--title", default="AnyTool report", help="the index page's title")


def cmd_report(args: argparse.Namespace) -> int:
    """Write the site; print where it is, with the page count and the time taken."""
    from ..eval.anytool.results import read_results, record_key
    from ..eval.report import thread_record, write_site

    if bool(args.thread) != bool(args.db):
        raise ReportUsageError("--thread and --db go together (one checkpointed run)")
    if not args.results and not args.thread:
        raise ReportUsageError("nothing to report: give RESULTS.jsonl files, or --thread ID --db FILE")
    started = time.perf_counter()
    by_key: dict[tuple[str, str], dict[str, Any]] = {}  # a query in several files: the later file's record
    sources = []
    for path in args.results:
        found = read_results(path)
        by_key.update((record_key(r), r) for r in found)
        sources.append(Path(path).name)
        if not found:
            print(f"note: {path} holds no results record", file=sys.stderr)
    records = list(by_key.values())
    if args.thread:
        records.append(thread_record(args.db, args.thread))
        sources.append(f"thread {args.thread}")
    site = write_site(records, args.out, title=args.title, sources=sources)
    print(f"{len(site.pages)} query pages and {site.index} written in {time.perf_counter() - started:.1f} s")
    return 0
