"""The live progress lines of a run are the same on every run (issue 29 point 12: a re-executed notebook is
unchanged): the agents of one step finish in any order, the printer prints them in the order of their ids."""

from __future__ import annotations

import io
import itertools
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from langgraph_anytool import AnyToolConfig, Catalog, create_anytool_graph
from langgraph_anytool.cli.progress import ProgressPrinter, stream_run
from langgraph_anytool.offline import OfflinePolicyModel


def _agent(rid: str, api: str) -> tuple[str, dict[str, Any]]:
    record = {"level": "tool", "status": "finished", "end_reason": "finish_search", "steps": 1}
    return "tool_agent", {"agents": {rid: record}, "usage": {"tool_agent": {"input_tokens": len(rid) * 100}},
                          "api_pool": {"add": [{"api_id": api, "function_name": api}]}}


def test_one_steps_agents_print_in_id_order_whatever_order_they_finish() -> None:
    steps = [_agent("meta/B/t1", "b"), _agent("meta/A/t1", "a"), _agent("meta/C/t1", "c")]
    outputs = set()
    for order in itertools.permutations(steps):
        out = io.StringIO()
        printer = ProgressPrinter(out)
        for node, update in order:
            printer.handle((), node, update)
        printer.handle((), "dispatch", {"agents": {}})  # the next step: the held lines are printed
        outputs.add(out.getvalue())
    (text,) = outputs
    lines = text.splitlines()
    assert [line.split("agent ")[1].split()[0] for line in lines] == ["meta/A/t1", "meta/B/t1", "meta/C/t1"]
    assert lines[0].startswith("[pool  1 |") and lines[2].startswith("[pool  3 |")


def test_a_run_prints_the_same_lines_every_time() -> None:
    catalog = Catalog.builtin()
    graph = create_anytool_graph(catalog, OfflinePolicyModel(catalog=catalog), config=AnyToolConfig(),
                                 checkpointer=InMemorySaver())
    outputs = set()
    for i in range(6):
        out = io.StringIO()
        stream_run(graph, {"query": "Convert 26.2 miles to kilometers"}, {"configurable": {"thread_id": f"t{i}"}},
                   ProgressPrinter(out).handle)
        outputs.add(out.getvalue())
    assert len(outputs) == 1, "\n----\n".join(sorted(outputs))
    (text,) = outputs
    assert "tool agent meta/Geography/t1 finished" in text and text.rstrip().endswith("done: solved")
