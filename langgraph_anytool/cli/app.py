"""The `anytool` command: answer requests, browse a catalog, search it, evaluate retrieval.

Each subcommand is one `Subcommand` (an argument-configuring function and a handler) in `SUBCOMMANDS`.
User errors (missing path, empty query, unknown name) print one `anytool: error: ...` line and exit with 2.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..catalog.errors import CatalogError, UnknownNameError
from ..render import print_json as _print_json
from ..render import table as _table
from .argtypes import add_budget_args, budget_values, count, positive_int
from .report_commands import cmd_report, configure_report

if TYPE_CHECKING:
    from ..catalog.catalog import Catalog
    from ..catalog.models import Tool
    from ..catalog.search import CatalogSearcher

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as shells report it
_DESC_WIDTH = 90


class UsageError(Exception):
    """A mistake in the command line, reported as one line."""


@dataclass(frozen=True)
class Subcommand:
    """One `anytool <name>` subcommand."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# ------------------------------------------------------------------ shared helpers
def _add_catalog_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--catalog", metavar="PATH", default=None,
                   help="ToolBench tools directory, StableToolBench query file (its api_lists) or OpenAPI spec file "
                        "(default: the builtin toolset)")


def _add_search_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--embeddings", metavar="SPEC", default=None,
                   help="minilm[:int8|:fp32|:torch|:static] | wordllama | trained:<DIR> | openai:<model> | none "
                        "(default: $ANYTOOL_EMBEDDINGS, else minilm when installed)")
    p.add_argument("--index-dir", metavar="DIR", default=None,
                   help="where search indexes persist (default: $ANYTOOL_INDEX_DIR or ~/.cache/langgraph-anytool/index)")


def _load_catalog(path: str | None) -> Catalog:
    from ..catalog.catalog import Catalog

    try:
        return Catalog.load(path)
    except ImportError as exc:
        if path is None:
            raise UsageError(f"the builtin catalog is not available ({exc}); pass --catalog PATH") from None
        raise


def _searcher(args: argparse.Namespace, catalog: Catalog) -> CatalogSearcher:
    from ..catalog.search import CatalogSearcher

    return CatalogSearcher(catalog, embeddings=args.embeddings, index_dir=args.index_dir)


def _short(text: str, width: int = _DESC_WIDTH) -> str:
    from ..text import shorten

    return shorten(" ".join(text.split()), width)


def _query(text: str) -> str:
    """The query repaired (undecodable bytes, control characters) with a note on stderr; UsageError when unusable."""
    from ..sanitize import check_query

    try:
        query, notes = check_query(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for note in notes:
        print(f"anytool: note: {note}", file=sys.stderr)
    return query


# ------------------------------------------------------------------ catalog
def _configure_catalog(p: argparse.ArgumentParser) -> None:
    _add_catalog_arg(p)
    p.add_argument("--category", metavar="NAME", help="list the tools of a category")
    p.add_argument("--tool", metavar="NAME", help="list the APIs of a tool (with --category when ambiguous)")
    p.add_argument("--json", action="store_true", help="print JSON")


def _find_tool(catalog: Catalog, name: str, category: str | None) -> Tool:
    if category:
        return catalog.tool(category, name)
    found = catalog.find_tools(name)
    if not found:
        raise UnknownNameError(f"unknown tool {name!r}")
    if len(found) > 1:
        cats = ", ".join(sorted(t.category for t in found))
        raise UsageError(f"tool {name!r} exists in several categories ({cats}); pass --category")
    return found[0]


def cmd_catalog(args: argparse.Namespace) -> int:
    """Counts per level; or a category's tools; or a tool's APIs."""
    catalog = _load_catalog(args.catalog)
    if args.tool:
        tool = _find_tool(catalog, args.tool, args.category)
        if args.json:
            _print_json({"category": tool.category, "tool": tool.name, "tool_key": tool.key,
                         "description": tool.description,
                         "apis": [{"api_id": a.id, "function_name": catalog.function_name(a.id), **a.details()}
                                  for a in tool.apis]})
            return 0
        print(f"{tool.name}  [{tool.category}/{tool.key}]  {len(tool.apis)} APIs")
        if tool.description:
            print(f"  {_short(tool.description, 200)}")
        for a in tool.apis:
            print(f"\n- {a.name}  ({a.method}, function {catalog.function_name(a.id)})")
            if a.description:
                print(f"    {_short(a.description, 200)}")
            for p in a.params:
                flag = "required" if p.required else "optional"
                desc = f": {_short(p.description, 100)}" if p.description else ""
                print(f"    · {p.name} ({p.type}, {flag}){desc}")
        return 0
    if args.category:
        cat = catalog.category(args.category)
        if args.json:
            _print_json({"category": cat.name, "description": cat.description,
                         "tools": [{"tool": t.name, "tool_key": t.key, "apis": len(t.apis),
                                    "description": t.description} for t in cat.tools]})
            return 0
        print(f"category {cat.name}: {len(cat.tools)} tools, {sum(len(t.apis) for t in cat.tools)} APIs\n")
        rows = [[t.name, str(len(t.apis)), _short(t.description)] for t in cat.tools]
        print(_table(["tool", "APIs", "description"], rows, right=(1,)))
        return 0
    cats = [catalog.category(c) for c in catalog.categories]
    if args.json:
        _print_json({"catalog": catalog.name, "categories": len(cats), "tools": catalog.num_tools, "apis": len(catalog),
                     "per_category": [{"category": c.name, "tools": len(c.tools),
                                       "apis": sum(len(t.apis) for t in c.tools)} for c in cats]})
        return 0
    print(f"catalog {catalog.name}: {len(cats)} categories, {catalog.num_tools} tools, {len(catalog)} APIs\n")
    rows = [[c.name, str(len(c.tools)), str(sum(len(t.apis) for t in c.tools))] for c in cats]
    print(_table(["category", "tools", "APIs"], rows, right=(1, 2)))
    return 0


# ------------------------------------------------------------------ search
def _configure_search(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", help="what the APIs should do")
    _add_catalog_arg(p)
    p.add_argument("--k", type=positive_int, default=10, help="number of APIs (default 10)")
    _add_search_args(p)
    p.add_argument("--json", action="store_true", help="print JSON")


BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def import_numpy_one_blas_thread() -> None:
    """Import numpy with a one-thread OpenBLAS, unless numpy is loaded already or the user set a thread count.

    Ranking one query multiplies a vector by a matrix: a BLAS thread pool brings nothing, and starting it (its
    threads spin while they wait) cost a sixth of a warm `anytool search`'s CPU. The variable is read once, when
    OpenBLAS loads, and is then taken out again: a caller's environment and its children are left as they were.
    """
    if "numpy" in sys.modules or any(var in os.environ for var in BLAS_THREAD_VARS):
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        os.environ.pop("OPENBLAS_NUM_THREADS", None)


def cmd_search(args: argparse.Namespace) -> int:
    """Ranked APIs for a query."""
    query = _query(args.query)
    import_numpy_one_blas_thread()
    catalog = _load_catalog(args.catalog)
    from ..catalog.search import relevance

    searcher = _searcher(args, catalog)
    hits = searcher.search_apis(query, args.k)
    if args.json:
        _print_json([{"rank": i, "relevance": relevance(h.score, searcher), **asdict(h)} for i, h in enumerate(hits, 1)])
        return 0
    if not hits:
        print("no matching API")
        return 0
    rows = [[str(i), f"{relevance(h.score, searcher):.2f}", h.api, h.tool, h.category] for i, h in enumerate(hits, 1)]
    print(_table(["rank", "relevance", "api", "tool", "category"], rows, right=(0, 1)))
    meaning = ("share of the best score this query allows (1.0 = first for every retriever)"
               if searcher.weights.method == "zscore" else "1 / effective rank (1.0 = first for every retriever, 0.5 ≈ second)")
    print(f"\nrelevance: {meaning}; raw fused scores: --json")
    return 0


# ------------------------------------------------------------------ index
def _configure_index(p: argparse.ArgumentParser) -> None:
    from .index_commands import configure, configure_train

    sub = p.add_subparsers(dest="index_command", metavar="{build,train}", required=True)
    build_help = "build every search index of a catalog ahead of time (progress on stderr)"
    b = sub.add_parser("build", help=build_help, description=build_help[0].upper() + build_help[1:] + ".")
    _add_catalog_arg(b)
    _add_search_args(b)
    configure(b)
    train_help = "fine-tune the dense encoder on a catalog's queries (needs the 'train' extra)"
    t = sub.add_parser("train", help=train_help, description=train_help[0].upper() + train_help[1:] + ".")
    _add_catalog_arg(t)
    configure_train(t)


def cmd_index(args: argparse.Namespace) -> int:
    """`anytool index build` / `anytool index train`."""
    from .index_commands import run_build, run_train

    if args.index_command == "train":
        return run_train(_load_catalog(args.catalog), args, out=sys.stdout)
    return run_build(_load_catalog(args.catalog), embeddings=args.embeddings, index_dir=args.index_dir,
                     as_json=args.json, out=sys.stdout)


# ------------------------------------------------------------------ eval
def _configure_eval(p: argparse.ArgumentParser) -> None:
    from .bench_commands import configure_steps, configure_tasks
    from .eval_commands import EVAL_COMMANDS, add_eval_commands, add_quiet

    names = ",".join(["retrieval", *EVAL_COMMANDS, "steps", "tasks"])
    sub = p.add_subparsers(dest="eval_command", metavar="{" + names + "}", required=True)
    configure_steps(sub)
    configure_tasks(sub)
    r = sub.add_parser("retrieval", help="Recall@k / NDCG@k of API search on query files",
                       description="Recall@k and NDCG@k of the catalog's API search on query files with relevant "
                                   "APIs, per group (the file stem) and overall.")
    _add_catalog_arg(r)
    r.add_argument("--queries", nargs="+", required=True, metavar="FILE", help="query files (group = file stem)")
    r.add_argument("--k", nargs="+", type=positive_int, default=None, metavar="K",
                   help="cutoffs for both metrics (default: Recall@5,10,64 and NDCG@5,10)")
    _add_search_args(r)
    r.add_argument("--allow-train-overlap", action="store_true",
                   help="score a trained encoder (minilm:DIR) even on queries it was trained on (not held-out)")
    r.add_argument("--json", action="store_true", help="print JSON")
    add_eval_commands(sub)
    add_quiet(sub)


def cmd_eval(args: argparse.Namespace) -> int:
    """`anytool eval retrieval`: per-group and overall retrieval metrics (other eval subcommands: eval/commands.py,
    eval/bench_commands.py)."""
    from .eval_commands import quiet_logs

    with quiet_logs(bool(args.quiet)):
        return _eval_command(args)


def _eval_command(args: argparse.Namespace) -> int:
    if getattr(args, "eval_handler", None) is not None:
        return int(args.eval_handler(args))
    from ..catalog.encoders import embeddings_id
    from ..eval.retrieval import check_train_overlap, evaluate_retrieval, load_queries

    catalog = _load_catalog(args.catalog)
    searcher = _searcher(args, catalog)
    recall_ks, ndcg_ks = (args.k, args.k) if args.k else ((5, 10, 64), (5, 10))
    check_train_overlap(searcher.embeddings, load_queries(args.queries, catalog), allow=args.allow_train_overlap)
    searcher.build()  # refused before any index is built
    report = evaluate_retrieval(catalog, args.queries, recall_ks=recall_ks, ndcg_ks=ndcg_ks,
                                progress=not (args.json or args.quiet),
                                search=lambda q, k: [h.api_id for h in searcher.search_apis(q, k)],
                                encoder=searcher.embeddings, allow_train_overlap=args.allow_train_overlap)
    model = embeddings_id(searcher.embeddings) if searcher.embeddings is not None else "none (BM25 only)"
    report.config = {"catalog": catalog.name, "apis": len(catalog), "embeddings": model, **report.config}
    if report.config.get("train_overlap"):
        print(f"note: {report.config['train_overlap']} of these queries were the encoder's training queries "
              "(--allow-train-overlap): not held-out figures", file=sys.stderr)
    if args.json:
        _print_json(report.to_dict())
        return 0
    print(f"catalog {catalog.name} ({len(catalog)} APIs); embeddings: {model}\n")
    print(report.table())
    print(f"\n{report.overall.queries} queries searched in {report.seconds:.1f} s")
    return 0


EXIT_STATUS = ("exit status: 0 when the run is {solved}, 1 when it ends otherwise (unsolved, gave_up, "
               "no_apis, budget_exhausted, time_limit, error: the status line says which), 2 on a usage error or bad "
               "input, 130 when interrupted (Ctrl-C)")


def _configure_run(p: argparse.ArgumentParser) -> None:
    p.epilog = EXIT_STATUS.format(solved="solved (or planned, with --set plan_only=true)")
    p.add_argument("query", help="the request to answer")
    _add_catalog_arg(p)
    p.add_argument("--model", metavar="M", default=None,
                   help="'provider:model' for init_chat_model (default: $ANYTOOL_MODEL)")
    p.add_argument("--offline", action="store_true",
                   help="use OfflinePolicyModel (a rule-based stand-in, not an LLM) when no model is configured")
    p.add_argument("--thread", metavar="T", default=None, help="thread id; re-using it resumes an interrupted run")
    p.add_argument("--db", metavar="FILE|URL", default=None,
                   help="checkpoints: a SQLite file or a postgresql:// URL (default: in memory)")
    p.add_argument("--execution", default=None, choices=("auto", "local", "template", "http", "virtual", "llm"),
                   help="how APIs are called (default: $ANYTOOL_EXECUTION, else auto: local for the builtin catalog, "
                        "http otherwise; template simulates offline; llm: a model plays the APIs; virtual: a "
                        "StableToolBench server)")
    p.add_argument("--virtual-url", metavar="URL", default=None,
                   help="server for --execution virtual (default: $ANYTOOL_VIRTUAL_URL)")
    p.add_argument("--quiet", action="store_true", help="no live progress lines")
    p.add_argument("--solver", default=None, choices=("dfsdt", "cot", "umi"),
                   help="dfsdt: depth-first decision tree with backtracking (default); cot: one chain; umi: α-UMi's "
                        "planner, caller and summarizer")
    p.add_argument("--profile", default=None, choices=("default", "paper"),
                   help="paper: AnyTool's exact setting (no search hints, no small-category shortcut); default: "
                        "$ANYTOOL_PROFILE, else default")
    p.add_argument("--max-reflections", type=count, default=None, metavar="N",
                   help="cap on reflections (default 50; 0 = the paper's no-reflection ablation)")
    add_budget_args(p, "--token-budget")
    p.add_argument("--set", metavar="FIELD=VALUE", action="append", default=[], dest="settings",
                   help="any AnyToolConfig field, e.g. --set max_api_pool=16 (repeatable)")
    p.add_argument("--json", action="store_true", help="print the result as JSON (progress goes to stderr)")
    p.add_argument("--no-cache", action="store_true",
                   help="do not use the on-disk response cache (default: on, in $ANYTOOL_CACHE_DIR or "
                        "~/.cache/langgraph-anytool/responses; ANYTOOL_CACHE=off also turns it off)")


def run_settings(args: argparse.Namespace) -> Any:
    """The `AnyToolConfig` of `anytool run`: the named options, then `--set` pairs, over the environment
    (`ANYTOOL_<FIELD>`) over the profile's defaults (`--profile`, else `ANYTOOL_PROFILE`)."""
    values: dict[str, Any] = {}
    for name in ("execution", "solver", "max_reflections"):
        if getattr(args, name) is not None:
            values[name] = getattr(args, name)
    values.update(budget_values(args))
    values.update(set_pairs(args.settings))
    return layered_config(values, profile=args.profile)


def layered_config(flags: dict[str, Any], *, profile: str | None = None) -> Any:
    """`AnyToolConfig.layered`: command-line values > `ANYTOOL_<FIELD>` > the profile's defaults; a bad value is
    one `UsageError` line naming the variable (or the field)."""
    from ..config import AnyToolConfig, ConfigError

    try:
        return AnyToolConfig.layered(flags, profile=profile)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def set_pairs(settings: list[str]) -> dict[str, str]:
    """The `--set FIELD=VALUE` options as field → value (strings; `AnyToolConfig.with_values` converts them)."""
    values: dict[str, str] = {}
    for pair in settings:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set {pair!r}: expected FIELD=VALUE, e.g. --set max_api_pool=16")
        values[key.strip()] = value
    return values


def _given_fields(args: argparse.Namespace) -> list[str]:
    """The AnyToolConfig fields the command set: named options, `--set` pairs and `ANYTOOL_<FIELD>` variables."""
    from ..config import env_settings

    named = [name for name in ("solver", "max_reflections") if getattr(args, name) is not None]
    return [*named, *budget_values(args), *set_pairs(args.settings), *env_settings()[1]]


def _result_json(values: dict[str, Any], thread: str) -> dict[str, Any]:
    agents = {i: {k: a.get(k) for k in ("level", "parent", "category", "tools", "status", "end_reason", "steps",
                                         "activations", "tokens", "invalid_calls")}
              for i, a in (values.get("agents") or {}).items()}
    attempts = [{k: a.get(k) for k in ("attempt", "mode", "finish_type", "answer", "reason", "failed_functions",
                                        "api_calls")} for a in values.get("solver_attempts") or []]
    status = values.get("status")
    kind = (values.get("error_kind") or "other") if status == "error" else None  # as in eval records
    return {"thread_id": thread, "query": values.get("query"), "status": status, "error_kind": kind,
            "answer": values.get("answer"), "reason": values.get("reason"), "api_pool": values.get("api_pool"),
            "stop_reason": values.get("stop_reason") or "", "agents": agents, "solver_attempts": attempts,
            "usage": values.get("usage"), "prompts": values.get("prompts")}


def cmd_run(args: argparse.Namespace) -> int:
    """One AnyTool run with live progress; resumes the thread's interrupted run when there is one."""
    import sqlite3
    import uuid
    from contextlib import ExitStack

    from ..context import resume_context
    from ..eval.anytool.persistence import compact_thread_sync, sync_checkpointer
    from ..graphs.anytool import create_anytool_graph
    from ..graphs.compiled import RUN_CONTEXT_KEY
    from ..graphs.retry_point import retry_point
    from ..models.llm import NO_MODEL_HELP, TRANSPORT_KINDS
    from ..tools.dbfile import describe_error
    from .interaction import answer_questions, read_line
    from .labels import first_line, last_line, model_spec, stand_in_label
    from .preflight import build_executor, check_execution
    from .progress import ProgressPrinter, stream_run, usage_table
    from .resuming import describe_settings, explicit_settings, run_failed, run_interrupted

    query = _query(args.query)
    catalog = _load_catalog(args.catalog)
    config = run_settings(args)
    spec = model_spec(args)
    # the settings the command line gives travel as the run's context: the run keeps them, and a resume of the
    # thread without the same flags gets them back from the checkpoint (graphs/compiled.py)
    profile = args.profile or (os.environ.get("ANYTOOL_PROFILE") or "").strip()
    context = {**explicit_settings(config, _given_fields(args), profile), **({"model": spec} if spec else {})}
    if spec is None and not args.thread:  # only the resume of a thread may take its model from the checkpoint
        raise UsageError(f"{NO_MODEL_HELP}, or pass --offline for the rule-based stand-in")
    log = sys.stderr if args.json else sys.stdout
    warning = check_execution(catalog, config.execution)  # fails fast when no API could be called
    if warning:
        log.write(warning + "\n")
    from ..config import env_note

    if env_note():
        log.write(env_note() + "\n")
    thread = args.thread or uuid.uuid4().hex[:12]
    stack = ExitStack()
    checkpointer = stack.enter_context(sync_checkpointer(args.db))
    executor = build_executor(catalog, config.execution, model=spec, virtual_url=args.virtual_url,
                              max_observation_chars=config.max_observation_chars, persistent_cache=not args.no_cache)
    stand_in = ""
    try:
        graph = create_anytool_graph(catalog, spec, config=config, checkpointer=checkpointer, executor=executor)
        run_config: Any = {"configurable": {"thread_id": thread}}
        pending = graph.get_state(run_config)
        # the run's clock starts with the command: loading the catalog and building the graph count too
        fresh: Any = {"query": query, "clock_start": getattr(args, "started", None) or time.time()}
        inputs: Any = fresh
        start_config: Any = run_config  # where the run starts: a resume after a transport error forks the thread
        stored: dict[str, Any] = {}
        # unfinished: a step is due, or the run never reached finalize (a kill between a node and its checkpoint)
        if pending.next or pending.values.get("status") == "running":
            earlier = pending.values.get("query", "")
            if earlier != query:
                raise UsageError(f"thread {thread!r} has an interrupted run of another query ({earlier!r}); "
                                 "resume it with that query or use another --thread")
            stored = dict(pending.values.get(RUN_CONTEXT_KEY) or {})
            kept = {k: v for k, v in stored.items() if k not in context}
            log.write(f"resuming the interrupted run on thread {thread}"
                      + (f" with the settings it started with ({describe_settings(kept)})" if kept else "") + "\n")
            inputs = None
        elif args.thread and pending.values.get("query") == query \
                and (point := retry_point(graph, run_config)) is not None:
            # ended by a transport error (a dead or failing server): the failed model call is made again
            stored = dict(pending.values.get(RUN_CONTEXT_KEY) or {})
            log.write(f"resuming the run on thread {thread}, which ended in error ({point.kind}), from its last "
                      f"checkpoint before the failed model call; {point.describe()}\n")
            inputs, start_config = point.resume_input(), point.config
        if not (spec or stored.get("model")):
            raise UsageError(f"{NO_MODEL_HELP}, or pass --offline for the rule-based stand-in")
        stand_in = stand_in_label(spec or stored.get("model"))
        if stand_in:
            log.write(first_line() + "\n")
        if catalog.name == "builtin":
            from ..catalog.builtin._sandbox import announce_code_tool

            announce_code_tool(log.write)
        log.write(f"thread {thread} | catalog {catalog!r}\n")
        printer = ProgressPrinter(io.StringIO() if args.quiet else log)
        stream_run(graph, inputs, start_config, printer.handle, context)
        after = graph.get_state(run_config)
        if inputs is None and not after.next and after.values.get("status") == "running":
            log.write("the checkpoint holds no step to resume from; the run starts over\n")
            stream_run(graph, fresh, run_config, printer.handle, resume_context(stored, context))
        while (resume := answer_questions(graph, run_config, read_line(sys.stdin, log), log)) is not None:
            # ask_user: the user's answer continues the run
            stream_run(graph, resume, run_config, printer.handle, context)
        final = graph.get_state(run_config)
        values = final.values
        resumable = bool(args.db) and values.get("status") == "error" and values.get("error_kind") in TRANSPORT_KINDS
        if args.db and not final.next and values.get("status") not in (None, "running") and not resumable:
            compact_thread_sync(checkpointer, thread)  # a finished run keeps its final checkpoint only
    except sqlite3.Error as exc:  # the checkpoint database failed mid-run (full disk, damaged file)
        if not args.db:
            raise
        raise UsageError(f"--db {describe_error(args.db, exc)} (thread {thread})") from None
    except KeyboardInterrupt:  # Ctrl-C: say how to resume the run (exit 130, as the shell's convention)
        sys.stderr.write("\n" + run_interrupted(getattr(args, "argv", []), thread, args.db) + "\n")
        return EXIT_INTERRUPTED
    finally:
        executor.close()
        stack.close()
    if args.json:
        _print_json({**_result_json(values, thread), **({"model": stand_in} if stand_in else {})})
    else:
        print(f"\nanswer: {values.get('answer') or '(none)'}")
        print(f"status: {values.get('status')}" + (f" ({values['reason']})" if values.get("reason") else ""))
        print("API pool: " + (", ".join(e["function_name"] for e in values.get("api_pool") or []) or "(empty)"))
        print(usage_table(values.get("usage") or {}))
        if stand_in:
            print(last_line())
    if resumable:  # the same command (with the run's --thread) resumes it from the checkpoint before the failure
        sys.stderr.write(run_failed(getattr(args, "argv", []), thread, str(values.get("error_kind"))) + "\n")
    return 0 if values.get("status") in ("solved", "planned") else 1


def _configure_demo(p: argparse.ArgumentParser) -> None:
    p.epilog = EXIT_STATUS.format(solved="solved")
    p.add_argument("query", nargs="?", default=None, help="a request (default: a three-part builtin example)")
    p.add_argument("--model", metavar="M", default=None, help="'provider:model' (default: $ANYTOOL_MODEL, "
                   "else the offline rule-based stand-in)")
    p.add_argument("--no-cache", action="store_true", help="do not use the on-disk response cache")
    p.add_argument("--set", metavar="FIELD=VALUE", action="append", default=[], dest="settings",
                   help="any AnyToolConfig field, e.g. --set solver=umi --set text_mode_roles=caller (repeatable)")


def cmd_demo(args: argparse.Namespace) -> int:
    """AnyTool on the builtin offline catalog, with the offline stand-in unless a model is configured."""
    from .demo import run_demo

    query = _query(args.query) if args.query is not None else None
    config = layered_config(set_pairs(args.settings))
    return run_demo(query, sys.stdout, model=args.model, cache=not args.no_cache, config=config)


def _configure_serve(p: argparse.ArgumentParser) -> None:
    from .serve_command import configure

    configure(p)


def cmd_serve(args: argparse.Namespace) -> int:
    """`anytool serve MODEL`: a packaged small model on a loopback llama-server until Ctrl-C."""
    from .serve_command import run

    return run(args)


SUBCOMMANDS: tuple[Subcommand, ...] = (
    Subcommand("run", "answer a request with AnyTool (live progress, usage table)", _configure_run, cmd_run),
    Subcommand("demo", "run AnyTool offline on the builtin catalog", _configure_demo, cmd_demo),
    Subcommand("catalog", "browse a catalog: counts, a category's tools, a tool's APIs", _configure_catalog, cmd_catalog),
    Subcommand("search", "search a catalog's APIs", _configure_search, cmd_search),
    Subcommand("index", "build a catalog's search indexes ahead of time", _configure_index, cmd_index),
    Subcommand("eval", "evaluate: retrieval, batch runs, pass rate, statistics, format conversion, step metrics, "
                       "OPPO tasks", _configure_eval, cmd_eval),
    Subcommand("report", "write a static, offline HTML report of runs (a results file, or one checkpointed run)",
               configure_report, cmd_report),
    Subcommand("serve", "serve a packaged small model (smollm2, gemma3-270m) on a loopback llama-server",
               _configure_serve, cmd_serve),
)


def build_parser(subcommands: Sequence[Subcommand] = SUBCOMMANDS) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="anytool", description="AnyTool on LangGraph")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for cmd in subcommands:
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        cmd.configure(p)
        p.set_defaults(handler=cmd.run)
    return parser


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors reported as one line; `llm` is only imported by commands that use a model (it loads LangChain)."""
    llm = sys.modules.get("langgraph_anytool.models.llm")
    extra = (llm.ModelNotConfiguredError,) if llm is not None else ()
    return (CatalogError, UsageError, ValueError, ImportError, OSError, *extra)


def main(argv: list[str] | None = None) -> int:
    """Entry point of `anytool`; returns the exit code."""
    started = time.time()  # the command's start: `anytool run`'s clock (max_run_seconds) counts from here
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help or a usage error (already printed by argparse)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command as given (the line that resumes a run)
    args.started = started
    from ..sanitize import TerminalSafeWriter

    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = TerminalSafeWriter(sys.stdout), TerminalSafeWriter(sys.stderr)
    try:
        return int(args.handler(args))
    except BrokenPipeError:  # output piped into `head` and the like: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except _user_errors() as exc:
        print(f"anytool: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    finally:
        sys.stdout, sys.stderr = saved


if __name__ == "__main__":
    sys.exit(main())
