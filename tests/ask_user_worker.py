"""A run that pauses on `ask_user` and exits: `python -m tests.ask_user_worker DB THREAD`. Prints the interrupt's
payload as JSON; the parent test resumes the run in its own process from the SQLite checkpoint."""

from __future__ import annotations

import json
import sqlite3
import sys

from langgraph.checkpoint.sqlite import SqliteSaver

from tests.nodes.test_abilities import ask_graph


def main(argv: list[str]) -> int:
    db, thread = argv[0], argv[1]
    conn = sqlite3.connect(db, check_same_thread=False)
    graph, _, weather, _ = ask_graph(SqliteSaver(conn))
    out = graph.invoke({"query": "What's the weather?", "api_ids": [weather]}, {"configurable": {"thread_id": thread}})
    conn.close()
    print(json.dumps([i.value for i in out.get("__interrupt__", ())]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
