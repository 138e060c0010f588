"""A run that the resume test kills mid-way: `python -m tests.resume_worker DB THREAD LOG [--fast]`.

The world: the meta-agent creates Weather and Finance; the Weather tool agent finishes quickly; the Finance tool
agent hangs in its second model call (unless --fast), which is where the parent test kills the process.
Every model call appends `<role> <turn>` to LOG, flushed, so the parent can see progress and count calls.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from langgraph_anytool import AnyToolConfig, create_anytool_graph
from tests.fakes import ScriptedChatModel, ai, call
from tests.graph_world import World, adds, make_world, observations, solved_judge, turns


def build(db: str, log: Path, *, fast: bool) -> tuple[Any, sqlite3.Connection]:
    catalog, executor = make_world()
    backup = catalog.function_name(catalog.find_api("Backup Quotes", "Quote").id)

    def logged(role: str, reply: Any) -> Any:
        def handler(m: list[BaseMessage]) -> AIMessage:
            with log.open("a") as fh:
                fh.write(f"{role} {turns(m)}\n")
            return reply(m)
        return handler

    def finance(m: list[BaseMessage]) -> AIMessage:
        if turns(m) == 0:
            return adds("Backup Quotes", "Quote")
        if not fast:
            time.sleep(120)  # killed here
        return ai("", call("finish_search"))

    def solver(m: list[BaseMessage]) -> AIMessage:
        if not observations(m):
            return ai("", call(backup, symbol="AAPL"))
        return ai("", call("Finish", return_type="give_answer", final_answer="AAPL is at 187.5."))

    world = World({
        "meta": logged("meta", lambda m: ai("", call("create_agent_category_level", category_name="Weather"),
                                               call("create_agent_category_level", category_name="Finance"))
                       if turns(m) == 0 else ai("", call("finish_search"))),
        "tool:Weather Now": logged("weather", lambda m: adds("Weather Now", "Current") if turns(m) == 0
                                   else ai("", call("finish_search"))),
        "tool:Stocks API, Backup Quotes": logged("finance", finance),
        "solver": logged("solver", solver),
        "judge": logged("judge", solved_judge),
    })
    conn = sqlite3.connect(db, check_same_thread=False)
    graph = create_anytool_graph(catalog, ScriptedChatModel(responder=world),
                                 config=AnyToolConfig(seed_with_search=False), executor=executor,
                                 checkpointer=SqliteSaver(conn))
    return graph, conn


def main(argv: list[str]) -> int:
    db, thread, log = argv[0], argv[1], Path(argv[2])
    graph, conn = build(db, log, fast="--fast" in argv)
    out = graph.invoke({"query": "Weather in Paris and the AAPL price?"}, {"configurable": {"thread_id": thread}})
    conn.close()
    print(out["status"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
