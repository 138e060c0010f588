"""The batch runner behind `anytool eval run`: many benchmark queries through the AnyTool graph.

- Modes: `whole` (AnyTool's setting: the graph searches the whole catalog) and `reference` (ToolBench's setting:
  the solver gets the query's `api_list`, mapped to catalog API ids, through `AnyToolConfig(retriever="reference")`).
- One JSON line per finished query (see `ResultsWriter`): re-running skips finished queries, except those whose
  record is an error a later try may overcome (`retry_errors`: by default `RETRIED_KINDS`, the transport kinds of
  `llm.TRANSPORT_KINDS` — rate_limited, server_error, connection, timeout — and "configuration" and "auth": a
  model without a key or package, a refused key; no query caused those); their new record supersedes the old one
  for every reader. With a persistent checkpointer (`--db`) a query that was in flight when the process died
  resumes from its last checkpoint, and one whose run ended in a transport error from its last checkpoint before
  the failed model call, its usage kept (its thread is not compacted until it ends otherwise).
- A query whose run ended in `error` (or whose run raised) is recorded with its `error_kind` (a
  `ModelCallError`'s kind, "configuration" for a model that could not be made, else "other") and the reason; the
  batch goes on. (`anytool eval run` checks every role's model before the first query: `models/preflight.py`.)
- Bounded concurrency (an asyncio semaphore), a per-query timeout (the run is cancelled and recorded as
  `timeout`; the batch goes on), a progress bar with running pass counts, a summary table.

`solve` is the one place that builds and invokes the graph.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from langchain_core.messages import BaseMessage

from ...config import AnyToolConfig, ConfigError
from ...models.faults import USAGE_KEYS
from ...models.llm import (
    CALL_USAGE_KEYS,
    CONFIG_KIND,
    TRANSPORT_KINDS,
    ModelCallError,
    ModelNotConfiguredError,
    error_kind_of,
)
from ...paper_prompts import prompts_record
from ...text import shorten
from ...tools.dbfile import StorageError, describe_error, is_storage_fault
from ..datasets import BenchQuery, api_ids
from .results import ResultsWriter, record_error_kind

Mode = Literal["whole", "reference"]
log = logging.getLogger(__name__)
OFFLINE_LABEL = "offline-policy (rule-based stand-in, NOT an LLM)"


# ------------------------------------------------------------------------------------------------ --set
def config_fields() -> dict[str, Any]:
    return {f.name: f for f in fields(AnyToolConfig)}


def parse_settings(pairs: Sequence[str]) -> dict[str, Any]:
    """`key=value` strings → AnyToolConfig field values (JSON values, else the raw string), validated by building
    an `AnyToolConfig`. An unknown key or a bad value raises `ConfigError` naming it."""
    known = config_fields()
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ConfigError(f"--set {pair!r}: expected key=value")
        if key not in known:
            raise ConfigError(f"--set {pair!r}: AnyToolConfig has no field {key!r}; fields are {', '.join(sorted(known))}")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        ftype = str(known[key].type)
        if ftype == "int" and isinstance(value, float) and value.is_integer():
            value = int(value)
        if ftype == "bool" and isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "1", "0"):
            value = value.lower() in ("true", "yes", "1")
        if ftype == "bool" and not isinstance(value, bool):
            raise ConfigError(f"--set {pair!r}: AnyToolConfig.{key} must be true or false")
        if ftype.startswith(("dict", "Mapping")) and not isinstance(value, dict):
            raise ConfigError(f"--set {pair!r}: AnyToolConfig.{key} must be a JSON object")
        out[key] = value
    AnyToolConfig(**out)  # validate values together
    return out


# ------------------------------------------------------------------------------------------------ one query
async def solve(catalog: Any, model: Any, config: AnyToolConfig, query: str, *, api_ids: list[str] | None,
                executor: Any, checkpointer: Any, thread_id: str, retry_budget: Any = None,
                rerun: bool = False) -> dict[str, Any]:
    """Build the graph and run one query on `thread_id`; the final state values. On a persistent checkpointer a
    thread holding an interrupted run of the same query resumes it, and a finished one is returned as it is
    (with `rerun`, a finished one is run again: the retry of a recorded error). `retry_budget` (one for the
    whole batch) caps the model-call retries of all its queries together."""
    from ...graphs.anytool import create_anytool_graph
    from ...graphs.retry_point import aretry_point

    graph = create_anytool_graph(catalog, model, config=config, checkpointer=checkpointer, executor=executor,
                                 retry_budget=retry_budget)
    run_config: Any = {"configurable": {"thread_id": thread_id}}
    inputs: Any = {"query": query} if api_ids is None else {"query": query, "api_ids": api_ids}
    pending = await graph.aget_state(run_config)
    if pending.values.get("query") == query:
        # interrupted (a crash): go on from the last checkpoint. `next` leaves out the step's tasks whose writes
        # were saved, so a crash after all of them (before the step's checkpoint) shows only in `tasks`
        if pending.next or pending.tasks:
            inputs = None
        elif pending.values.get("status") not in (None, "running") and not rerun:
            return dict(pending.values)  # finished, but its record was never written
        elif (point := await aretry_point(graph, run_config)) is not None:
            # the retry of a run ended by a transport error: from its checkpoint before the failed call, its
            # usage kept (graphs/retry_point.py)
            await graph.ainvoke(point.resume_input(), point.config)
            return dict((await graph.aget_state(run_config)).values)
    await graph.ainvoke(inputs, run_config)
    return dict((await graph.aget_state(run_config)).values)


# ------------------------------------------------------------------------------------------------ records
def _message(m: BaseMessage | Mapping[str, Any], limit: int = 4000) -> dict[str, Any]:
    get: Callable[[str], Any] = m.get if isinstance(m, Mapping) else (lambda a: getattr(m, a, None))
    raw = get("content")
    content = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)
    out: dict[str, Any] = {"role": get("type") or get("role"), "content": shorten(content, limit)}
    for attr in ("tool_calls", "tool_call_id", "name"):
        value = get(attr)
        if value:
            out[attr] = value
    return out


def trajectory(attempts: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The solver attempts as plain JSON data (search tree nodes with their messages and calls)."""
    out = []
    for a in attempts:
        nodes = []
        for node in a.get("tree") or []:
            nodes.append({k: ([_message(m) for m in node.get("messages") or []] if k == "messages" else node.get(k))
                          for k in ("id", "parent", "depth", "status", "note", "calls", "messages")})
        out.append({**{k: a.get(k) for k in ("attempt", "round", "mode", "finish_type", "answer", "reason",
                                              "failed_functions", "api_calls")}, "tree": nodes})
    return out


def usage_summary(values: Mapping[str, Any]) -> dict[str, Any]:
    """AnyTool Table 12 fields of one run: model calls and tokens per role and in total, API calls,
    self-reflections, API-candidate pool size, agents per level."""
    usage = values.get("usage") or {}
    roles: dict[str, dict[str, Any]] = {
        r: {k: int(v.get(k, 0)) for k in ("model_calls", "input_tokens", "output_tokens", "estimated_tokens")
            if k in v} for r, v in usage.items() if isinstance(v, Mapping) and "model_calls" in v}
    for r, v in usage.items():  # content faults (faults.py): malformed replies (one per fault) by kind, hallucinated calls, fallbacks
        if r in roles:
            roles[r].update({k: int(n) for k, n in v.items()
                             if k.startswith((*USAGE_KEYS, *CALL_USAGE_KEYS)) and isinstance(n, int | float)})
            if "cost_usd" in v:  # USD from the model's profile price (absent when unknown)
                roles[r]["cost_usd"] = round(float(v["cost_usd"]), 6)
    agents: dict[str, int] = {}
    for a in (values.get("agents") or {}).values():
        agents[str(a.get("level"))] = agents.get(str(a.get("level")), 0) + 1
    attempts = values.get("solver_attempts") or []
    api: Mapping[str, Any] = usage["api"] if isinstance(usage.get("api"), Mapping) else {}
    return {
        "roles": roles,
        "model_calls": sum(r.get("model_calls", 0) for r in roles.values()),
        "input_tokens": sum(r.get("input_tokens", 0) for r in roles.values()),
        "output_tokens": sum(r.get("output_tokens", 0) for r in roles.values()),
        "estimated_tokens": sum(r.get("estimated_tokens", 0) for r in roles.values()),
        "malformed": sum(r.get("malformed", 0) for r in roles.values()),
        "hallucinated": sum(r.get("hallucinated", 0) for r in roles.values()),
        "cost_usd": round(sum(r.get("cost_usd", 0.0) for r in roles.values()), 6),
        "api_calls": sum(int(a.get("api_calls", 0)) for a in attempts),
        "api_stats": dict(api),  # executor counters (calls, cache hits, errors) when the graph reports them
        "solver_attempts": len(attempts),
        "reflections": int(values.get("reflections", max(0, len(attempts) - 1)) or 0),
        "pool_size": len(values.get("api_pool") or []),
        "agents": agents,
    }


def pool_recall(pool: Sequence[str], relevant: Sequence[str]) -> float | None:
    """Share of the relevant APIs that reached the pool (None without relevant APIs)."""
    if not relevant:
        return None
    got = set(pool)
    return sum(1 for r in relevant if r in got) / len(relevant)


def run_error_kind(values: Mapping[str, Any]) -> str:
    """The kind of a run that ended in `error`: the final state's `error_kind` (set by `finalize`), else the
    `ModelCallError` kind its reason starts with (a server's older graph), else "other"."""
    kind = values.get("error_kind")
    if isinstance(kind, str) and kind:
        return kind
    return error_kind_of(str(values.get("reason") or "")) or "other"


def run_retries(values: Mapping[str, Any]) -> int:
    """Model-call retries the run spent (guard.py records them per role in `usage`)."""
    usage = values.get("usage") or {}
    return sum(int(v.get("retries", 0)) for v in usage.values() if isinstance(v, Mapping))


def exception_kind(exc: BaseException) -> str:
    """The `error_kind` of an exception that escaped a query's run: a `ModelCallError`'s kind, "configuration" for
    a model that could not be made (`ModelNotConfiguredError`: a missing key or provider package; an
    `ImportError`), else "other" (a `ConfigError` too: it may be the query's own, e.g. no `api_list` in reference
    mode, which no re-run fixes)."""
    if isinstance(exc, ModelCallError):
        return exc.kind
    if isinstance(exc, (ModelNotConfiguredError, ImportError)):
        return CONFIG_KIND
    return "other"


AGENT_MESSAGE_CHARS = 2000  # per message of an agent's history in a results record


def agents_record(agents: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The retriever's agents as plain JSON data, in creation order: scope, status, steps, end reason, and the
    history (the function calls in order with their results, re-activation messages; each cut at
    `AGENT_MESSAGE_CHARS`)."""
    out = []
    for agent_id, a in (agents or {}).items():
        out.append({"id": a.get("id", agent_id), **{k: a.get(k) for k in (
            "level", "parent", "category", "tools", "status", "steps", "activations", "end_reason", "tokens",
            "invalid_calls", "children")},
            "messages": [_message(m, AGENT_MESSAGE_CHARS) for m in a.get("messages") or []]})
    return out


def run_record(values: Mapping[str, Any]) -> dict[str, Any]:
    """What a run's final state holds, as plain JSON data (the part of a results record that does not depend on
    the batch): the outcome, the pool (ids, and the entries: who added each and in which round), the APIs pruned,
    Table 12 usage, the solver trajectory, the agents and the run's event log. `anytool report` and `render_run`
    read this form."""
    entries = [dict(e) for e in values.get("api_pool") or []]
    status = values.get("status") or "unknown"
    return {
        "query": values.get("query") or "", "status": status, "answer": values.get("answer") or "",
        "reason": values.get("reason") or "", "verdict": values.get("verdict") or {},
        "stop_reason": values.get("stop_reason") or "",
        "error_kind": run_error_kind(values) if status == "error" else None,
        "retries": run_retries(values), "pool": [e["api_id"] for e in entries], "usage": usage_summary(values),
        "trajectory": trajectory(values.get("solver_attempts") or []),
        "pool_entries": entries, "removed_apis": list(values.get("removed_apis") or []),
        "agents": agents_record(values.get("agents")), "events": list(values.get("events") or []),
    }


def make_record(q: BenchQuery, values: Mapping[str, Any], *, relevant: list[str], missing: list[Any],
                run_info: Mapping[str, Any], seconds: float) -> dict[str, Any]:
    run = run_record(values)
    return {
        "query_id": q.query_id, "group": q.group, **run, "query": q.query,
        "relevant": relevant, "relevant_missing": [list(m) for m in missing],
        "pool_recall": pool_recall(run["pool"], relevant), "wall_time": round(seconds, 3), "error": None,
        **run_info,
    }


def failure_record(q: BenchQuery, status: str, error: str, *, relevant: list[str], missing: list[Any],
                   run_info: Mapping[str, Any], seconds: float, error_kind: str | None = None,
                   retries: int = 0) -> dict[str, Any]:
    return {"query_id": q.query_id, "group": q.group, "query": q.query, "status": status, "answer": "",
            "reason": error, "verdict": {}, "stop_reason": "", "error_kind": error_kind, "retries": retries,
            "pool": [], "relevant": relevant,
            "relevant_missing": [list(m) for m in missing], "pool_recall": None, "usage": {},
            "wall_time": round(seconds, 3), "error": error, "trajectory": [], **run_info}


# ------------------------------------------------------------------------------------------------ the batch
RetryErrors = Literal["transport", "all", "none"]
# errors no query caused: the endpoint may answer later (`llm.TRANSPORT_KINDS`), or the model was not usable
# ("configuration": a missing key or package; "auth": a refused key) and is once the user fixes it. A query that
# ended so is never finished: the default policy runs it again (the model check stops a batch whose model is
# still unusable before its first query).
RETRIED_KINDS = TRANSPORT_KINDS | {CONFIG_KIND, "auth"}


def wants_retry(record: Mapping[str, Any], policy: str) -> bool:
    """Whether a resumed batch runs the query of `record` again: "transport" — an `error` of a kind in
    `RETRIED_KINDS` (a transport fault, a configuration or a refused key; an older record's configuration error
    recorded as "other" included, `results.record_error_kind`); "all" — every `error` and `timeout`; "none"."""
    status = record.get("status")
    if policy == "all":
        return status in ("error", "timeout")
    if policy == "transport":
        return status == "error" and record_error_kind(record) in RETRIED_KINDS
    return False


@dataclass
class BatchOptions:
    mode: Mode = "whole"
    settings: dict[str, Any] = field(default_factory=dict)
    concurrency: int = 2
    timeout: float | None = None  # seconds per query
    model_label: str = ""
    retry_errors: RetryErrors = "transport"  # which recorded errors a resumed batch runs again (see `wants_retry`)
    db: str | None = None  # the checkpoint database (--db), named when a storage fault stops the batch
    compact: bool = True  # a finished query's thread keeps only its final checkpoint (persistence.compact_thread)


@dataclass
class BatchTally:
    """Running counts of a batch (for the progress bar and the summary)."""

    done: int = 0
    skipped: int = 0
    rerun: int = 0  # records of queries run again after an earlier record's error (`attempt` > 1; `wants_retry`)
    by_group: dict[str, dict[str, Any]] = field(default_factory=dict)
    error_kinds: dict[str, int] = field(default_factory=dict)
    retries: int = 0  # model-call retries the records report

    def add(self, rec: Mapping[str, Any]) -> None:
        self.done += 1
        g = self.by_group.setdefault(str(rec.get("group", "")), {"queries": 0, "statuses": {}, "seconds": 0.0,
                                                                 "tokens": 0, "recall": [], "model_calls": 0,
                                                                 "retries": 0})
        g["queries"] += 1
        status = str(rec.get("status"))
        g["statuses"][status] = g["statuses"].get(status, 0) + 1
        if status == "error":
            kind = str(record_error_kind(rec) or "other")
            self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1
        self.retries += int(rec.get("retries") or 0)
        g["retries"] += int(rec.get("retries") or 0)
        self.rerun += int(rec.get("attempt") or 1) > 1
        g["seconds"] += float(rec.get("wall_time") or 0)
        u = rec.get("usage") or {}
        g["tokens"] += int(u.get("input_tokens") or 0) + int(u.get("output_tokens") or 0)
        g["model_calls"] += int(u.get("model_calls") or 0)
        if rec.get("pool_recall") is not None:
            g["recall"].append(float(rec["pool_recall"]))

    def count(self, status: str) -> int:
        return sum(g["statuses"].get(status, 0) for g in self.by_group.values())

    def errors_text(self) -> str:
        """e.g. "3 errors (rate_limited 2, auth 1)"."""
        n = self.count("error")
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.error_kinds.items(), key=lambda kv: (-kv[1], kv[0])))
        return f"{n} error{'' if n == 1 else 's'}" + (f" ({kinds})" if kinds else "")


def thread_id_for(q: BenchQuery, run_info: Mapping[str, Any]) -> str:
    digest = hashlib.sha1(json.dumps(run_info, sort_keys=True, default=str).encode()).hexdigest()[:10]
    return f"{q.group}:{q.query_id}:{digest}"


async def run_batch(
    queries: Sequence[BenchQuery],
    catalog: Any,
    model: Any,
    writer: ResultsWriter,
    options: BatchOptions,
    *,
    executor: Any = None,
    checkpointer: Any = None,
    on_record: Callable[[dict[str, Any], BatchTally], None] | None = None,
    claim: Callable[[BenchQuery, bool], Any] | None = None,
    done: Callable[[BenchQuery], Any] | None = None,
    remote: Any = None,
    retry_budget: Any = None,
) -> BatchTally:
    """Run every unfinished query, and every query whose record is an error to retry (`options.retry_errors`), at
    most `options.concurrency` at once, appending one record per query (a retry's supersedes the earlier one).

    `claim(q, retry)` (optional, async) returns False when another worker owns the query (shared-database
    scale-out; `retry`: the query was finished with an error and is taken again) and `done(q)` (async) marks it
    finished; `remote` (a `RemoteSolver`) sends each query to a LangGraph server instead of running the graph
    here; `retry_budget` (e.g. `llm.RetryBudget`) is shared by every query of the batch."""
    from langgraph.checkpoint.memory import InMemorySaver

    settings = dict(options.settings)
    if options.mode == "reference":
        settings["retriever"] = "reference"
    config = AnyToolConfig(**settings)
    if remote is None and config.max_cost is not None:  # fail before the batch, not once per query
        from ...runtime import resolve_models

        resolve_models(model, None, config, catalog)  # raises naming a model without a known price
    run_info = {"mode": options.mode, "model": options.model_label, "config": config.to_dict(),
                "prompts": prompts_record(config.prompts_from),
                "catalog": getattr(catalog, "name", "?"), "catalog_apis": len(catalog),
                "catalog_fingerprint": catalog.fingerprint() if hasattr(catalog, "fingerprint") else None}
    tally = BatchTally()
    todo: list[tuple[BenchQuery, Mapping[str, Any] | None]] = []  # (query, the record it retries)
    for q in queries:
        last = writer.last_record(q.group, q.query_id)
        if last is None:
            todo.append((q, None))
        elif wants_retry(last, options.retry_errors):
            todo.append((q, last))
        else:
            tally.skipped += 1
    # the per-query --timeout shows as a TimeoutError; without one, a TimeoutError is an error like any other
    our_timeout: tuple[type[BaseException], ...] = (TimeoutError,) if options.timeout else ()
    sem = asyncio.Semaphore(max(1, options.concurrency))

    async def one(q: BenchQuery, earlier: Mapping[str, Any] | None) -> None:
        async with sem:
            if claim is not None and not await claim(q, earlier is not None):
                return
            relevant, missing = api_ids(catalog, q.relevant)
            ref_ids = api_ids(catalog, q.api_list)[0] if options.mode == "reference" else None
            started = time.perf_counter()
            saver = checkpointer if checkpointer is not None else InMemorySaver()
            try:
                if remote is not None:
                    coro = remote.solve(q.query, api_ids=ref_ids, thread_key=thread_id_for(q, run_info),
                                        settings=settings)
                else:
                    coro = solve(catalog, model, config, q.query, api_ids=ref_ids, executor=executor,
                                 checkpointer=saver, thread_id=thread_id_for(q, run_info),
                                 retry_budget=retry_budget, rerun=earlier is not None)
                values = await asyncio.wait_for(coro, options.timeout) if options.timeout else await coro
                rec = make_record(q, values, relevant=relevant, missing=missing, run_info=run_info,
                                  seconds=time.perf_counter() - started)
            except our_timeout:
                rec = failure_record(q, "timeout", f"timed out after {options.timeout:g} s", relevant=relevant,
                                     missing=missing, run_info=run_info, seconds=time.perf_counter() - started)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # one query's failure must not stop the batch
                if checkpointer is not None and is_storage_fault(exc):  # ... but a full disk stops every query
                    raise StorageError(f"checkpoint database {describe_error(options.db or '--db', exc)}") from None
                kind = exception_kind(exc)
                text = str(exc) if isinstance(exc, ModelCallError) else f"{type(exc).__name__}: {exc}"
                rec = failure_record(q, "error", shorten(text, 1000), relevant=relevant, missing=missing,
                                     run_info=run_info, seconds=time.perf_counter() - started, error_kind=kind,
                                     retries=int(getattr(exc, "retries", 0) or 0))
            rec["attempt"] = int((earlier or {}).get("attempt") or 1) + 1 if earlier is not None else 1
            writer.append(rec)
            if checkpointer is not None and remote is None and options.compact and rec["status"] != "timeout" \
                    and not resumable(rec):
                await _compact(checkpointer, thread_id_for(q, run_info), options.db)
            if done is not None:
                await done(q)
            tally.add(rec)
            if on_record is not None:
                on_record(rec, tally)

    tasks = [asyncio.ensure_future(one(q, earlier)) for q, earlier in todo]
    try:
        await asyncio.gather(*tasks)
    except BaseException:  # a storage fault (or a cancel): no other query may run on, or record, a closed store
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return tally


def resumable(record: Mapping[str, Any]) -> bool:
    """Whether a query's run ended in an error of a transport kind: its thread keeps its checkpoints, so that the
    batch's resume retries it from the last one before the failed model call (graphs/retry_point.py)."""
    return record.get("status") == "error" and record.get("error_kind") in TRANSPORT_KINDS


async def _compact(checkpointer: Any, thread_id: str, db: str | None) -> None:
    """Compact a finished query's thread once its record is on disk (a crash before leaves the thread whole:
    the record decides that the query is done). A storage fault stops the batch like any other."""
    from .persistence import compact_thread

    try:
        await compact_thread(checkpointer, thread_id)
    except Exception as exc:
        if is_storage_fault(exc):
            raise StorageError(f"checkpoint database {describe_error(db or '--db', exc)}") from None
        log.warning("could not compact the checkpoints of %s: %s", thread_id, exc)


def summary_table(tally: BatchTally) -> str:
    """Per group: queries, solved (in-loop judge), other statuses, model-call retries, mean wall time, model calls,
    tokens, recall; then the errors by kind and the queries run again after an error."""
    from ...render import table as _table

    rows = []
    total: dict[str, Any] = {"queries": 0, "statuses": {}, "seconds": 0.0, "tokens": 0, "recall": [], "model_calls": 0,
                             "retries": 0}
    for name, g in sorted(tally.by_group.items()):
        rows.append(_summary_row(name, g))
        total["queries"] += g["queries"]
        for s, n in g["statuses"].items():
            total["statuses"][s] = total["statuses"].get(s, 0) + n
        for k in ("seconds", "tokens", "model_calls", "retries"):
            total[k] += g[k]
        total["recall"].extend(g["recall"])
    rows.append(_summary_row("overall", total))
    head = ["group", "queries", "solved*", "unsolved", "timeout", "error", "retries", "s/query", "calls/query",
            "tok/query", "pool recall"]
    notes = []
    if tally.count("error"):
        notes.append(f"errors: {tally.errors_text()}; resuming the batch with --retry-errors transport (the default) "
                     f"runs those of these kinds again: {', '.join(sorted(RETRIED_KINDS))} (all: every error)")
    if tally.rerun:
        notes.append(f"{tally.rerun} of these queries were run again after an error (their newer record counts)")
    return _table(head, rows, right=range(1, len(head))) + "".join(f"\n{n}" for n in notes) + \
        "\n* solved = the in-loop judge's verdict; score with `anytool eval passrate` (a separate evaluator)"


def _summary_row(name: str, g: Mapping[str, Any]) -> list[str]:
    n = max(g["queries"], 1)
    st = g["statuses"]
    other = sum(v for k, v in st.items() if k not in ("solved", "timeout", "error"))
    recall = f"{100 * sum(g['recall']) / len(g['recall']):.1f}" if g["recall"] else "-"
    return [name, str(g["queries"]), str(st.get("solved", 0)), str(other), str(st.get("timeout", 0)),
            str(st.get("error", 0)), str(g.get("retries", 0)), f"{g['seconds'] / n:.1f}", f"{g['model_calls'] / n:.1f}",
            f"{g['tokens'] / n:.0f}", recall]
