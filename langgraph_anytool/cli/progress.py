"""Live progress of an AnyTool run from `graph.stream(..., stream_mode="updates", subgraphs=True)`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.types import Overwrite

from ..models.llm import total_tokens
from ..text import shorten


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return shorten(text, limit)


def _calls(messages: Iterable[Any]) -> list[str]:
    out: list[str] = []
    for m in messages:
        if isinstance(m, AIMessage):
            out.extend(f"{tc['name']}({_short(tc.get('args', {}), 60)})" for tc in m.tool_calls)
    return out


AGENT_NODES = ("meta_agent", "category_agent", "tool_agent")  # the retrieval agents' nodes, run in parallel


@dataclass
class ProgressPrinter:
    """Turns stream updates into one line per event: agents, pool size, tokens, solver steps, verdicts.

    The agents of one step run in parallel and report in whatever order they finish: their updates are held until
    the step is over (the next update of another node), then printed in the order of their ids, so that the same
    run prints the same lines every time."""

    out: TextIO
    pool: dict[str, str] = field(default_factory=dict)  # api_id -> function name
    tokens: int = 0
    agents: dict[str, str] = field(default_factory=dict)  # id -> status
    held: list[tuple[str, Mapping[str, Any]]] = field(default_factory=list)  # this step's agent updates

    def _line(self, text: str) -> None:
        self.out.write(f"[pool {len(self.pool):>2} | {self.tokens:>7} tok] {text}\n")
        self.out.flush()

    def _track(self, update: Mapping[str, Any]) -> None:
        usage = update.get("usage")
        if isinstance(usage, Overwrite):  # a new run: start over
            self.tokens = 0
        elif isinstance(usage, Mapping):
            self.tokens += total_tokens(usage)
        pool = update.get("api_pool")
        if isinstance(pool, Overwrite | list):  # a whole new pool (a new run)
            entries = pool.value if isinstance(pool, Overwrite) else pool
            self.pool = {e["api_id"]: e["function_name"] for e in entries}
        elif isinstance(pool, Mapping):
            for api_id in pool.get("remove") or ():
                self.pool.pop(api_id, None)
            for e in pool.get("add") or ():
                self.pool.setdefault(e["api_id"], e["function_name"])

    def handle(self, namespace: tuple[str, ...], node: str, update: Any) -> None:
        if not namespace:
            if node in AGENT_NODES and isinstance(update, Mapping):
                self.held.append((node, update))
                return
            self.flush()
        if not isinstance(update, Mapping):
            return
        inner = bool(namespace)
        if not inner:
            self._track(update)
        where = namespace[-1].split(":", 1)[0] if inner else ""
        if inner:
            for key in ("messages", "new_messages"):
                if isinstance(update.get(key), list):
                    calls = _calls(m for m in update[key] if isinstance(m, BaseMessage))
                    if calls:
                        self._line(f"{where} → {', '.join(calls)}")
            return
        if node == "init":
            agents = update.get("agents")
            records = agents.value if isinstance(agents, Overwrite) else agents or {}
            self.agents = {rid: rec["status"] for rid, rec in records.items()}
            self._line("run started: " + ("meta-agent created" if records else f"pool of {len(self.pool)} APIs"))
        elif node == "dispatch":
            started = [rid for rid, rec in (update.get("agents") or {}).items() if rec["status"] == "running"]
            if started:
                self._line(f"step of {len(started)} agent(s): {', '.join(started)}")
        elif node == "solver":
            for att in update.get("solver_attempts") or []:
                self._line(f"solver attempt {att['attempt']} ({att['mode']}): {att['finish_type']}, "
                           f"{att['api_calls']} API calls" + (f" — {_short(att['reason'])}" if att["reason"] else ""))
        elif node == "judge":
            v = update.get("verdict") or {}
            self._line(f"judge: {v.get('label')} ({v.get('by')}) {_short(v.get('reason', ''))}")
        elif node == "reflect":
            self._line(f"reflection: {_short(update.get('reason', ''), 100)}; removed {len(update.get('removed_apis') or [])} API(s)")
        elif node == "finalize":
            self._line(f"done: {update.get('status')}")


    def flush(self) -> None:
        """Print the held agent updates of the step, in the order of their agents' ids."""
        held, self.held = self.held, []
        for _, update in sorted(held, key=lambda h: (sorted(h[1].get("agents") or {}) or [""], h[0])):
            self._track(update)
            for rid, rec in (update.get("agents") or {}).items():
                before = self.agents.get(rid)
                self.agents[rid] = rec["status"]
                if rec["status"] == "pending" and before is None:
                    self._line(f"  + {rec['level']} agent {rid} created")
                elif rec["status"] in ("finished", "stopped"):
                    self._line(f"{rec['level']} agent {rid} {rec['status']} ({rec.get('end_reason', '')}, "
                               f"{rec.get('steps', 0)} steps)")


def usage_table(usage: Mapping[str, Any]) -> str:
    """The paper's Table 12 statistics of one run, as aligned text."""
    rows = [("role", "model calls", "input tok", "output tok")]
    for role, v in sorted(usage.items()):
        if isinstance(v, Mapping) and "model_calls" in v:
            est = " (est.)" if v.get("estimated_tokens") else ""
            rows.append((role, str(v.get("model_calls", 0)), f"{v.get('input_tokens', 0)}{est}",
                         f"{v.get('output_tokens', 0)}{est}"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    api_usage = usage.get("api")
    api: Mapping[str, Any] = api_usage if isinstance(api_usage, Mapping) else {}
    lines.append(f"total tokens: {usage.get('total_tokens', total_tokens(usage))}   API calls: {api.get('calls', 0)}   "
                 f"cache hits: {api.get('cache_hits', 0)}   reflections: {usage.get('reflections', 0)}")
    return "\n".join(lines)


def stream_run(graph: Any, inputs: Any, config: Mapping[str, Any], on_event: Callable[[tuple[str, ...], str, Any], None],
               context: Mapping[str, Any] | None = None) -> None:
    """Stream a run (or its resumption when `inputs` is None), calling `on_event(namespace, node, update)`;
    `context`: the run-time context of the call."""
    try:
        for namespace, chunk in graph.stream(inputs, config, context=dict(context) if context else None,
                                             stream_mode="updates", subgraphs=True):
            for node, update in (chunk or {}).items():
                on_event(tuple(namespace), node, update)
    finally:
        on_event((), "__end__", None)  # the stream is over, or stopped: a printer prints what it held
