"""`anytool eval run | passrate | compare | stats | convert`: argument set-up and handlers (registered in `cli.py`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..catalog.errors import CatalogError
from .argtypes import add_budget_args, budget_values, count, positive_float, positive_int
from .exits import EVALUATOR_EPILOG, EXIT_ALL_ERRORS, EXIT_EVALUATOR, RUN_EPILOG
from .labels import first_line, is_stand_in, last_line, resolve_stand_in, stand_in_roles
from .resuming import batch_interrupted


class EvalUsageError(ValueError):
    """A mistake on the `anytool eval` command line, reported as one line."""


# ------------------------------------------------------------------------------------------------ run
def configure_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("--queries", nargs="+", required=True, metavar="FILE",
                   help="query files: ToolBench/StableToolBench groups (group = file stem) or anytoolbench.json")
    p.add_argument("--catalog", metavar="PATH", default=None,
                   help="ToolBench tools directory (default: the builtin toolset)")
    p.add_argument("--mode", choices=("whole", "reference"), default="whole",
                   help="whole: search the whole catalog (AnyTool); reference: solve with the query's api_list (ToolBench)")
    p.add_argument("--model", metavar="M", default=None, help="'provider:model' (default: $ANYTOOL_MODEL)")
    p.add_argument("--offline", action="store_true",
                   help="the offline policy model (a rule-based stand-in, NOT an LLM; results are labelled)")
    p.add_argument("--execution", default=None, choices=("auto", "local", "template", "http", "virtual", "llm"),
                   help="how APIs are called (template: offline simulation from response templates)")
    p.add_argument("--virtual-url", metavar="URL", default=None,
                   help="--execution virtual: the StableToolBench-compatible server (default $ANYTOOL_VIRTUAL_URL)")
    p.add_argument("--api-cache", metavar="FILE", default=None,
                   help="SQLite cache of API responses shared by the batch (same call → cached response)")
    p.add_argument("--concurrency", type=positive_int, default=2, help="queries in flight at once (default 2)")
    p.add_argument("--timeout", type=positive_float, default=None, metavar="S",
                   help="seconds per query: the query is cancelled and recorded as timeout (compare --max-seconds, "
                        "which lets the run end itself with budget_exhausted)")
    add_budget_args(p)
    p.add_argument("--limit", type=positive_int, default=None, metavar="N",
                   help="first N queries of each query file (after --exclude and --skip-uncovered)")
    p.add_argument("--out", default="results.jsonl", metavar="FILE", help="JSON-lines results (appended; resumable)")
    p.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                   help="an AnyToolConfig field, e.g. --set max_api_pool=16 --set solver=cot (repeatable)")
    p.add_argument("--exclude", metavar="FILE", default=None,
                   help="exclusion list of query ids (the paper's filtered ToolBench: anytoolbench/unsolvable.json)")
    p.add_argument("--skip-uncovered", action="store_true",
                   help="drop queries whose relevant APIs are not all in the catalog")
    p.add_argument("--sample-apis", type=positive_int, default=None, metavar="N",
                   help="run on N APIs drawn at random from the catalog (AnyTool Table 5)")
    p.add_argument("--seed", type=int, default=0, help="seed of --sample-apis (default 0)")
    p.add_argument("--db", metavar="FILE|URL", default=None,
                   help="checkpoints: a SQLite file or a postgresql:// URL (shared by several workers; "
                        "in-flight queries resume from their last step)")
    p.add_argument("--batch", metavar="NAME", default=None,
                   help="with a postgresql:// --db: the batch name workers share (default: the --out file name)")
    p.add_argument("--server", metavar="URL", default=None,
                   help="send each query as a run to a LangGraph server (langgraph dev / a deployment)")
    p.add_argument("--assistant", default="anytool", help="assistant or graph id on --server (default anytool)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--retry-errors", choices=("transport", "all", "none"), default="transport",
                   help="which queries already recorded with an error a resumed batch runs again (their new "
                        "record supersedes the old one for passrate, stats and convert): transport (default) — "
                        "errors no query caused: of kind rate_limited, server_error, connection or timeout, and "
                        "configuration or auth (a missing or refused key: run again once it is fixed); all — "
                        "every error (bad_request, other, ...) and every --timeout; none — keep every record")
    p.add_argument("--max-retries-per-batch", type=count, default=None, metavar="N",
                   help="at most N model-call retries (after rate limits, server errors, dropped connections) "
                        "across the whole batch; once spent, a failing call fails at once and its query is "
                        "recorded as an error, to retry by resuming later (default: each run's own retry policy)")
    p.add_argument("--no-model-check", action="store_true",
                   help="start without the model check: before the first query each role's model is resolved (a "
                        "missing key or provider package stops the batch at once) and each distinct endpoint is "
                        "sent one request that spends no tokens (its model list); a refused key, an unreachable "
                        "endpoint or no answer within 15 s stops the batch with exit 2 and no record written")
    p.epilog = RUN_EPILOG


def _select(args: argparse.Namespace, catalog: Any) -> tuple[list[Any], list[str]]:
    """Each query file in turn: drop the excluded ids, then (`--skip-uncovered`) the queries whose relevant APIs
    are not all in the catalog, then keep the first `--limit`; the file is read only as far as that needs.
    `EvalUsageError` when nothing is left, saying why."""
    from ..eval.datasets import coverage_report, load_exclusion_list

    notes: list[str] = []
    excluded = load_exclusion_list(args.exclude) if args.exclude else None
    selected = []
    for f in args.queries:
        group, considered, read, stopped = _take(args, catalog, f, excluded)
        upto = " (reading stopped at --limit)" if stopped else ""
        if excluded is not None:
            notes.append(f"{Path(f).stem}: {read - len(considered)} of {read} queries excluded by {args.exclude}{upto}")
        # the coverage of what was read: with --skip-uncovered, every query read; otherwise the queries kept
        for cov in coverage_report(catalog, considered if args.skip_uncovered else group):
            if cov.uncovered:
                notes.append(f"{cov.group}: {cov.uncovered} of {cov.queries} queries have relevant APIs missing "
                             f"from the catalog ({cov.missing_refs} references; e.g. {', '.join(cov.examples)})"
                             + ("; skipped" if args.skip_uncovered else "") + upto)
        selected.extend(group)
    if not selected:
        why = "; ".join(notes) if notes else "the query files hold no queries"
        raise EvalUsageError(f"no queries selected from {', '.join(args.queries)} ({why}); nothing was run")
    return selected, notes


def _take(args: argparse.Namespace, catalog: Any, path: str,
          excluded: frozenset[int] | None) -> tuple[list[Any], list[Any], int, bool]:
    """`(queries kept, queries read that are not excluded, queries read, whether --limit stopped the reading)` of
    one query file, streamed: the first `--limit` queries left after `--exclude` (and, with `--skip-uncovered`,
    the first `--limit` covered ones; "covered before limited")."""
    from ..eval.datasets import filter_excluded, is_covered, iter_queries

    kept: list[Any] = []
    considered: list[Any] = []
    read = 0
    for q in iter_queries(path):
        read += 1
        if excluded is not None and not filter_excluded([q], excluded):
            continue
        considered.append(q)
        if args.skip_uncovered and not is_covered(catalog, q):
            continue
        kept.append(q)
        if args.limit and len(kept) >= args.limit:
            return kept, considered, read, True
    return kept, considered, read, False


def _model(args: argparse.Namespace, catalog: Any) -> tuple[Any, str]:
    """(the model of the batch, its label in the records): --offline, or the name "offline" in --model /
    $ANYTOOL_MODEL, is the stand-in, labelled as such."""
    from ..eval.anytool.runner import OFFLINE_LABEL
    from ..models.llm import NO_MODEL_HELP

    spec = args.model or os.environ.get("ANYTOOL_MODEL", "").strip()
    if args.offline or is_stand_in(spec):
        return resolve_stand_in("offline", catalog), OFFLINE_LABEL
    if spec:
        return spec, spec
    raise EvalUsageError(f"{NO_MODEL_HELP}, or pass --offline for the rule-based stand-in")


def _server_label(args: argparse.Namespace, settings: Mapping[str, Any]) -> tuple[str, bool, list[str]]:
    """(the records' model label, whether the stand-in plays every role, the roles it plays) for a batch sent to
    `--server`: the model the server's graph runs, as its HTTP app says (`/anytool/model`), with the per-role
    models the run context names (`--set models=...`) over its own; the stand-in labelled as NOT an LLM."""
    import asyncio

    from ..eval.anytool.remote import RemoteSolver
    from ..eval.anytool.runner import OFFLINE_LABEL

    remote = RemoteSolver(args.server, assistant=args.assistant, api_key=os.environ.get("LANGSMITH_API_KEY"))
    info = asyncio.run(remote.served_models())
    if info is None:
        return f"server {args.server}: model unknown (the server does not say)", False, []
    served = info
    spec = served.get("model")
    roles = {**dict(served.get("models") or {}), **dict(settings.get("models") or {})}
    everywhere = is_stand_in(spec) if spec else False
    offline_roles = [] if everywhere else stand_in_roles(roles)
    label = f"server {args.server}: " + (OFFLINE_LABEL if everywhere else str(spec or "no model configured"))
    if offline_roles:
        label += f" ({', '.join(offline_roles)}: {OFFLINE_LABEL})"
    return label, everywhere, offline_roles


def cmd_run(args: argparse.Namespace) -> int:
    """`anytool eval run`."""
    from ..catalog.catalog import Catalog
    from ..config import AnyToolConfig
    from ..eval.anytool.results import ResultsWriter, read_results, record_key
    from ..eval.anytool.runner import BatchOptions, BatchTally, parse_settings, summary_table
    from ..eval.datasets import sample_catalog

    # as on `anytool run`: the named options, then the `--set` pairs over them, over ANYTOOL_<FIELD> over the
    # profile's defaults (ANYTOOL_PROFILE); what differs from the defaults goes to the runner (or the server)
    flags = {**budget_values(args), **({"execution": args.execution} if args.execution else {}),
             **parse_settings(args.settings)}
    config = AnyToolConfig.layered(flags)
    settings = config.changed()
    catalog = Catalog.load(args.catalog)
    if args.sample_apis:
        catalog = sample_catalog(catalog, args.sample_apis, args.seed)
    queries, notes = _select(args, catalog)
    from ..config import env_note

    notes.extend([env_note()] if env_note() else [])
    log = _log(args)
    if args.server:
        model = None
        label, everywhere, offline_roles = _server_label(args, settings)
        stand_in = everywhere or bool(offline_roles)
        if stand_in:
            log.write(first_line([] if everywhere else offline_roles) + "\n")
    else:
        model, label = _model(args, catalog)
        # the stand-in for every role, or for some (--set 'models={"judge": "offline"}'): labelled either way
        offline_roles = stand_in_roles(dict(settings.get("models") or {}))
        stand_in = is_stand_in(model) or bool(offline_roles)
        if stand_in:
            log.write(first_line([] if is_stand_in(model) else offline_roles) + "\n")
    if args.server and settings:
        notes.append(f"settings (--set, ANYTOOL_<FIELD>) travel to {args.server} as the run context ({', '.join(sorted(settings))}); "
                     "the served graph applies those its context schema declares")
    if not args.server and offline_roles and not is_stand_in(model):
        from ..eval.anytool.runner import OFFLINE_LABEL

        label += f" ({', '.join(offline_roles)}: {OFFLINE_LABEL})"
    for n in notes:
        log.write(f"note: {n}\n")
    log.write(f"{len(queries)} queries | catalog {catalog.name} ({len(catalog)} APIs) | mode {args.mode} | "
              f"model {label} | out {args.out}\n")
    if not args.server:  # before the first query and before the results file is opened: no record of a fault
        _check_models(model, config, catalog, log, probe=not args.no_model_check)
    options = BatchOptions(mode=args.mode, settings=settings, concurrency=args.concurrency, timeout=args.timeout,
                           model_label=label, retry_errors=args.retry_errors, db=args.db)
    import asyncio  # here, not at the top: `anytool --help` stays light

    from ..eval.anytool.persistence import check_db, is_postgres

    if not args.server:
        check_db(args.db)  # before the first query: a damaged or foreign file is refused, not recorded N times
    # one writer per results file; PostgreSQL workers share the file (their claims keep queries from running twice)
    with ResultsWriter(args.out, shared=is_postgres(args.db)) as writer:
        try:
            tally = asyncio.run(_run_async(args, queries, catalog, model, writer, options, config))
        except KeyboardInterrupt:  # Ctrl-C: the same command resumes the batch
            sys.stderr.write("\n" + batch_interrupted(getattr(args, "argv", []), args.out, writer.written, args.db)
                             + "\n")
            raise
    print(f"\n{tally.done} queries run now, {tally.skipped} already in {args.out}"
          + (f"; {tally.rerun} of those run now were run again after an error" if tally.rerun else "")
          + (f"; policy model: {label}" if stand_in else ""))
    wanted = {(q.group, q.query_id) for q in queries}
    whole = BatchTally()  # the summary covers every selected query on file, not only this session's
    for rec in read_results(args.out):
        if record_key(rec) in wanted:
            whole.add(rec)
    if whole.by_group:
        print(summary_table(whole))
    if stand_in:
        print(last_line())
    if whole.done and whole.count("error") == whole.done:
        sys.stderr.write(f"anytool: every one of the {whole.done} queries of this batch ended in an error "
                         f"({whole.errors_text()}): nothing to score (exit {EXIT_ALL_ERRORS})\n")
        return EXIT_ALL_ERRORS
    return 0


def _check_models(model: Any, config: Any, catalog: Any, log: Any, *, probe: bool) -> None:
    """The model check before a batch: every role's model is resolved (`ModelNotConfiguredError`: a missing key
    or provider package, one line, exit 2) and, with `probe`, each distinct endpoint answers one request that
    spends no tokens (`models.preflight.check_models`; `ModelCheckError`, one line, exit 2)."""
    from ..models.preflight import check_models
    from ..runtime import resolve_models, roles_in_use

    models = resolve_models(model, None, config, catalog)
    roles = [*roles_in_use(config), *(["simulator"] if config.execution == "llm" else [])]
    pairs = [(role, models.for_role(role)) for role in roles]
    if probe:
        asked = check_models(pairs)
        if asked:
            log.write(f"model check: {', '.join(sorted(set(asked)))} answered\n")


async def _run_async(args: argparse.Namespace, queries: list[Any], catalog: Any, model: Any, writer: Any,
                     options: Any, config: Any) -> Any:
    import socket
    from contextlib import AsyncExitStack

    from ..eval.anytool.persistence import PostgresClaims, async_checkpointer, is_postgres
    from ..eval.anytool.runner import run_batch, wants_retry

    def due(q: Any) -> bool:
        last = writer.last_record(q.group, q.query_id)
        return last is None or wants_retry(last, args.retry_errors)

    pending = sum(1 for q in queries if due(q))
    bar, on_record = _progress(pending, disabled=args.no_progress or args.quiet)
    retry_budget = _retry_budget(args.max_retries_per_batch)
    async with AsyncExitStack() as stack:
        remote = None
        executor = None
        checkpointer = None
        claim: Callable[[Any, bool], Any] | None = None
        done: Callable[[Any], Any] | None = None
        if args.server:
            from ..eval.anytool.remote import RemoteSolver

            remote = RemoteSolver(args.server, assistant=args.assistant, api_key=os.environ.get("LANGSMITH_API_KEY"))
        else:
            executor = _executor(args, catalog, config)
            stack.callback(executor.close)
            checkpointer = await stack.enter_async_context(async_checkpointer(args.db, check=False))
        if is_postgres(args.db):
            batch = args.batch or Path(args.out).name
            stale = max(2 * args.timeout, 600.0) if args.timeout else 3600.0
            claims = await stack.enter_async_context(
                PostgresClaims(args.db, batch, worker=f"{socket.gethostname()}:{os.getpid()}", stale_seconds=stale))

            async def claim(q: Any, retry: bool) -> bool:
                return await claims.claim(f"{q.group}:{q.query_id}", retry=retry)

            async def done(q: Any) -> None:
                await claims.done(f"{q.group}:{q.query_id}")

        try:
            return await run_batch(queries, catalog, model, writer, options, executor=executor,
                                   checkpointer=checkpointer, on_record=on_record, claim=claim, done=done,
                                   remote=remote, retry_budget=retry_budget)
        finally:
            if bar is not None:
                bar.close()
    raise AssertionError("unreachable")  # pragma: no cover


def _retry_budget(limit: int | None) -> Any:
    """One `RetryBudget` (guard.py) shared by the batch's queries (None without --max-retries-per-batch)."""
    if limit is None:
        return None
    from ..models.guard import RetryBudget

    return RetryBudget(limit)


def _log(args: argparse.Namespace) -> Any:
    """Where an eval command's notes and progress go: stderr, or nowhere with --quiet."""
    import io

    return io.StringIO() if getattr(args, "quiet", False) else sys.stderr


def _executor(args: argparse.Namespace, catalog: Any, config: Any) -> Any:
    """The API executor of a local batch: the config's kind, a virtual server's URL, an optional response cache."""
    from ..graphs.anytool import default_executor
    from ..tools.pipeline import ApiExecutor

    url = args.virtual_url or os.environ.get("ANYTOOL_VIRTUAL_URL", "").strip()
    if config.execution == "virtual":
        if not url:
            raise EvalUsageError("--execution virtual needs --virtual-url URL (or ANYTOOL_VIRTUAL_URL): the "
                                 "StableToolBench-compatible server's endpoint")
        return ApiExecutor.for_catalog(catalog, kind="virtual", url=url, cache_path=args.api_cache,
                                       max_observation_chars=config.max_observation_chars)
    if args.api_cache:
        kind = config.execution if config.execution != "auto" else ("local" if catalog.name == "builtin" else "http")
        return ApiExecutor.for_catalog(catalog, kind=kind, cache_path=args.api_cache,
                                       max_observation_chars=config.max_observation_chars)
    return default_executor(catalog, config)


def _progress(total: int, *, disabled: bool) -> tuple[Any, Callable[[dict[str, Any], Any], None]]:
    from tqdm import tqdm

    if disabled or total == 0:
        return None, lambda rec, tally: None
    bar = tqdm(total=total, unit="query", file=sys.stderr, dynamic_ncols=True)

    def on_record(rec: dict[str, Any], tally: Any) -> None:
        bar.update(1)
        bar.set_postfix_str(f"solved* {tally.count('solved')}/{tally.done}, timeout {tally.count('timeout')}, "
                            f"{tally.errors_text()}")

    return bar, on_record


# ------------------------------------------------------------------------------------------------ passrate
def _default_cache() -> Path:
    from ..sanitize.paths import user_cache_dir

    return user_cache_dir("evaluator.sqlite")


def add_evaluator_args(p: argparse.ArgumentParser, *, protocol: str | None = "anytool",
                       samples: int | None = 3) -> None:
    """The evaluator options `eval passrate` and `eval compare` share (None default: decided by the command)."""
    p.add_argument("--evaluator", metavar="M", default=None,
                   help="'provider:model' of the evaluator (separate from the in-loop judge; default $ANYTOOL_EVALUATOR)")
    p.add_argument("--offline", action="store_true",
                   help="the offline policy model's judge as evaluator (a rule-based stand-in, NOT an LLM; labelled)")
    p.add_argument("--catalog", metavar="PATH", default=None,
                   help="catalog for --offline (default: builtin); with --prompts-from, where the offered APIs' "
                        "schemas come from (ToolEval's available_tools)")
    p.add_argument("--protocol", choices=("anytool", "toolllm", "sopr"), default=protocol,
                   help="anytool: Eq. 2 of the AnyTool paper; toolllm: Eq. 1; sopr: StableToolBench's solvable pass "
                        "rate" + (" (default: a pass-rate report's, else anytool)" if protocol is None else ""))
    p.add_argument("--samples", type=positive_int, default=samples,
                   help="evaluator samples per query (default " + ("3)" if samples is not None else
                                                                   "a pass-rate report's, else 3)"))
    p.add_argument("--no-exclusion", action="store_true",
                   help="anytool: ask the evaluator even when the answer holds one of AnyTool's exclusion words "
                        "(not the paper's protocol)")
    p.add_argument("--concurrency", type=positive_int, default=4, help="queries scored at once (default 4)")
    p.add_argument("--cache", metavar="FILE", default=None, help=f"evaluator cache (default {_default_cache()})")
    p.add_argument("--no-cache", action="store_true", help="call the evaluator for every sample")
    p.add_argument("--evaluator-settings", choices=("tooleval", "ours"), default="tooleval",
                   help="tooleval (default): the completion settings of ToolEval's config.yaml (max_tokens 1000, "
                        "temperature 0.2, timeout 10; with --prompts-from, the checkout's own); ours: no "
                        "temperature, the judge role's reply limit (not the paper's)")
    p.add_argument("--prompts-from", metavar="PATH", default=None,
                   help="your clone of StableToolBench (or ToolBench): the evaluator gets ToolEval's own templates "
                        "(toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default), read from it as data, "
                        "instead of ours")
    p.add_argument("--failed-as-zero", action="store_true",
                   help="when an evaluator call fails for good, score that query as failed and go on (as the "
                        "authors' scripts count a failed check), and print the figures with the count; without it "
                        "the first failure stops the scoring and no figure is printed (exit 4 either way)")
    p.epilog = EVALUATOR_EPILOG


def configure_passrate(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", nargs="+", metavar="RESULTS.jsonl", help="results of `anytool eval run`")
    add_evaluator_args(p)
    p.add_argument("--json", action="store_true",
                   help="print JSON (with every query's outcome and usage: `eval compare` reads it back)")


def load_prompts(path: str | None, load: Callable[[str], Any]) -> Any:
    """`--prompts-from PATH`: the authors' prompts read by `load`, or None; a refusal is a one-line usage error."""
    if not path:
        return None
    from ..paper_prompts import PromptSourceError

    try:
        return load(path)
    except PromptSourceError as exc:
        raise EvalUsageError(f"--prompts-from: {exc}") from None


class Evaluator:
    """The evaluator the options name: the model, its label, its identity (what the cache key and a comparison
    check: class, model, endpoint, sampling; never a key) and the authors' prompts when `--prompts-from` is given."""

    def __init__(self, args: argparse.Namespace, protocol: str | None = None) -> None:
        from ..eval.identity import evaluator_identity, evaluator_key
        from ..models.llm import init_model
        from ..paper_prompts import ours_provenance, tooleval_book

        self.book = load_prompts(args.prompts_from, tooleval_book)
        spec = args.evaluator or os.environ.get("ANYTOOL_EVALUATOR", "").strip()
        offline = args.offline or is_stand_in(spec)  # --offline, or the evaluator named "offline"
        if offline:
            from ..catalog.catalog import Catalog
            from ..eval.anytool.runner import OFFLINE_LABEL
            from ..offline.judging import JUDGE_RULES

            self.model: Any = resolve_stand_in("offline", Catalog.load(args.catalog))
            self.label = OFFLINE_LABEL
        elif spec:
            self.model, self.label = init_model(spec), spec
        else:
            raise EvalUsageError("no evaluator: pass --evaluator 'provider:model' (or set ANYTOOL_EVALUATOR), "
                                 "or --offline for the rule-based stand-in")
        # ToolEval's completion settings (nodes/judge/tooleval_request.py), on the model before its identity is read
        from ..nodes.judge.tooleval_request import PROTOCOL_FORMS, request_for, with_settings

        choice: Any = getattr(args, "evaluator_settings", "tooleval") or "tooleval"
        self.request = request_for(PROTOCOL_FORMS.get(str(protocol or args.protocol or "anytool"), "tools"), self.book, choice)
        self.settings_set: dict[str, Any] = {}
        if not offline:
            self.model, self.settings_set = with_settings(self.model, self.request.settings)
        # The cache key names the evaluator fully (class, model, endpoint, sampling settings; never a key), so the
        # same model name served elsewhere or sampled otherwise never reuses these verdicts.
        named = self.label if offline else self.model
        self.identity = evaluator_identity(named)
        # the stand-in's rules are its "model": a revision of them must not reuse the verdicts cached before it
        self.key = evaluator_key(f"{self.label} [{JUDGE_RULES}]" if offline else named)
        self.prompts = self.book.provenance() if self.book is not None else ours_provenance()

    def request_record(self) -> dict[str, Any]:
        """The evaluator's request as sent (call form, settings and their source, a refusal of `functions=`) and the
        model fields the settings were set on (`set_on`; empty for a model class without them)."""
        return {**self.request.record(), "set_on": dict(self.settings_set)}

    def evaluate(self, records: list[dict[str, Any]], args: argparse.Namespace, protocol: Any, samples: int,
                 exclusion: bool) -> tuple[list[Any], Any]:
        """Per-record verdicts (`passrate.evaluate_records`) through the cache of the options; and the cache."""
        from ..eval.anytool.passrate import EvaluatorCache, evaluate_records

        cache = None if args.no_cache else EvaluatorCache(args.cache or _default_cache())
        catalog = None
        if self.book is not None and args.catalog:
            from ..catalog.catalog import Catalog
            from ..catalog.errors import CatalogError

            try:
                catalog = Catalog.load(args.catalog)
            except CatalogError as exc:
                raise EvalUsageError(f"--catalog: {exc}") from None
        try:
            verdicts = evaluate_records(records, self.model, self.key, samples=samples, protocol=protocol,
                                        cache=cache, concurrency=args.concurrency, exclusion=exclusion,
                                        prompts=self.book, failed_as_zero=args.failed_as_zero,
                                        request=self.request, catalog=catalog)
        finally:
            if cache is not None:
                cache.close()
        return verdicts, cache


def cmd_passrate(args: argparse.Namespace) -> int:
    """`anytool eval passrate`."""
    from ..eval.anytool.compare import catalog_of, query_entries
    from ..eval.anytool.passrate import (
        EXCLUSION_RULE,
        INTERVAL_NOTE,
        UNSURE_RULE,
        evaluator_faults,
        passrate_table,
        query_outcomes,
        report_dict,
        score,
    )
    from ..eval.anytool.results import read_results
    from ..eval.evaluator_faults import EvaluatorFault, failed_as_zero_note
    from ..render import print_json as _print_json

    records = [r for f in args.results for r in read_results(f)]
    if not records:
        raise EvalUsageError(f"no results in {', '.join(args.results)}")
    evaluator = Evaluator(args)
    exclusion = args.protocol == "anytool" and not args.no_exclusion
    try:
        verdicts, cache = evaluator.evaluate(records, args, args.protocol, args.samples, exclusion)
    except EvaluatorFault as exc:
        sys.stderr.write(f"anytool: {exc.line(evaluator.label)}\n")
        return EXIT_EVALUATOR
    faults = evaluator_faults(verdicts)
    groups, overall = score(verdicts, args.protocol, args.samples)
    in_loop = sorted({str(r.get("model", "")) for r in records})
    meta = {"protocol": args.protocol, "evaluator": evaluator.label, "evaluator_identity": evaluator.identity,
            "samples": args.samples,
            "unsure_rule": UNSURE_RULE if args.protocol != "sopr" else "Unsure scores 0.5 (StableToolBench SoPR)",
            "exclusion_rule": EXCLUSION_RULE if exclusion else None,
            "interval": INTERVAL_NOTE,
            "runs_made_by": in_loop,
            "catalogs": sorted({catalog_of(r) for r in records}, key=str),
            "prompts": evaluator.prompts,
            "evaluator_request": evaluator.request_record(),
            "cache": None if cache is None else {"path": str(cache.path), "hits": cache.hits, "calls": cache.misses},
            "evaluator_faults": faults}
    code = EXIT_EVALUATOR if faults else 0
    if faults:
        sys.stderr.write(f"anytool: evaluator {evaluator.label} failed: {failed_as_zero_note(faults, len(verdicts))}; "
                         f"exit {EXIT_EVALUATOR}\n")
    if args.json:
        queries = query_entries(records, query_outcomes(verdicts, args.protocol, args.samples))
        _print_json({**report_dict(groups, overall, **meta), "queries": queries})
        return code
    title = {"anytool": "AnyTool Eq. 2: Solved / (Solved + Unsolved)",
             "toolllm": "ToolLLM Eq. 1: (Non-solvable + Solved) / all (inflated when the APIs offered are unrelated)",
             "sopr": "StableToolBench SoPR: Solved 1, Unsure 0.5, Unsolved 0; mean over samples"}[args.protocol]
    identity = evaluator.identity
    print(f"pass rate — {title}")
    print(f"evaluator: {evaluator.label} (separate from the in-loop judge), {args.samples} samples per query, "
          "majority vote")
    if identity["base_url"] or identity["sampling"]:
        print(f"evaluator endpoint: {identity['base_url'] or '-'}; sampling: {identity['sampling'] or 'defaults'}")
    if args.protocol != "sopr":
        print(f"unsure: {UNSURE_RULE}")
    if exclusion:
        print(f"exclusion: {EXCLUSION_RULE}")
    if cache is not None:
        print(f"evaluator cache: {cache.hits} hits, {cache.misses} new checks ({cache.path})")
    if evaluator.book is not None:
        print(f"evaluator prompts: ToolEval's, from {evaluator.book.root} ({', '.join(evaluator.book.files)})")
    print(INTERVAL_NOTE + ("; std: over the evaluator samples (StableToolBench)" if args.protocol == "sopr" else ""))
    if faults:
        print(f"note: {failed_as_zero_note(faults, len(verdicts))}")
    print()
    print(passrate_table(groups, overall, args.protocol))
    return code


# ------------------------------------------------------------------------------------------------ compare
def configure_compare(p: argparse.ArgumentParser) -> None:
    for name, which in (("a", "run A (the baseline)"), ("b", "run B (the change)")):
        p.add_argument(name, metavar=name.upper(),
                       help=f"{which}: a results file of `eval run` (scored here, as `eval passrate` scores it), "
                            "or the --json output of `eval passrate`")
    add_evaluator_args(p, protocol=None, samples=None)
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print JSON")
    fmt.add_argument("--markdown", action="store_true", help="print Markdown tables (for a paper or a pull request)")
    p.add_argument("--report", nargs="+", metavar="DIR", default=[],
                   help="link the changed queries to their pages in `anytool report` folders: one DIR (both runs' "
                        "pages), or A's DIR then B's DIR")
    p.add_argument("--allow-mismatch", action="store_true",
                   help="compare files whose evaluator, protocol or catalog differ (refused otherwise)")
    p.add_argument("--seed", type=count, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--resamples", type=positive_int, default=10_000, help="bootstrap resamples (default 10000)")
    p.add_argument("--level", type=_level, default=0.95, help="confidence level of the intervals (default 0.95)")


def _level(text: str) -> float:
    value = positive_float(text)
    if not value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (e.g. 0.95): {value}")
    return value


def cmd_compare(args: argparse.Namespace) -> int:
    """`anytool eval compare A B`: the two runs' pass rates per group, paired by query, with intervals."""
    from ..eval.anytool.compare import (
        check_comparable,
        common_keys,
        compare_sides,
        comparison_dict,
        comparison_markdown,
        comparison_table,
        evaluation_record,
        is_passrate_report,
        read_side_records,
        side_from_records,
        side_from_report,
    )
    from ..eval.anytool.passrate import evaluator_faults, query_outcomes
    from ..eval.anytool.results import record_key
    from ..eval.evaluator_faults import EvaluatorFault, failed_as_zero_note
    from ..render import print_json as _print_json

    if len(args.report) > 2:
        raise EvalUsageError("--report takes one folder (both runs' pages) or two (A's, then B's)")
    for d in args.report:
        if not Path(d).is_dir():
            raise EvalUsageError(f"--report {d}: not a folder (the --out of `anytool report`)")
    reports = {path: side_from_report(path) for path in (args.a, args.b) if is_passrate_report(path)}
    for side in reports.values():  # a report's outcomes are final: its protocol cannot be changed here
        for opt, given, got in (("--protocol", args.protocol, side.evaluation["protocol"]),
                                ("--samples", args.samples, side.evaluation["samples"])):
            if given is not None and given != got:
                raise EvalUsageError(f"{side.path}: a pass-rate report scored with {opt.lstrip('-')} {got}; "
                                     f"{opt} {given} cannot re-score it (compare the results files instead)")
    first = next(iter(reports.values()), None)
    protocol: Any = args.protocol or (first.evaluation["protocol"] if first else "anytool")
    samples = args.samples or (int(first.evaluation["samples"]) if first else 3)
    exclusion = protocol == "anytool" and not args.no_exclusion
    records = {path: read_side_records(path) for path in (args.a, args.b) if path not in reports}
    evaluator = Evaluator(args, protocol) if records else None
    sides = []
    for path in (args.a, args.b):
        if path in reports:
            sides.append(reports[path])
            continue
        assert evaluator is not None
        sides.append(side_from_records(path, records[path], evaluation_record(
            protocol, samples, exclusion, evaluator.label, evaluator.identity, evaluator.prompts)))
    a, b = sides
    check_comparable(a, b, allow_mismatch=args.allow_mismatch)  # refusals before any evaluator call
    paired = set(common_keys(a, b))
    faults = 0
    for side in sides:
        if side.path in records and evaluator is not None:
            todo = [r for r in records[side.path] if record_key(r) in paired]
            try:
                verdicts, _ = evaluator.evaluate(todo, args, protocol, samples, exclusion)
            except EvaluatorFault as exc:
                sys.stderr.write(f"anytool: {exc.line(evaluator.label, f'queries of {side.path}', 'comparison')}\n")
                return EXIT_EVALUATOR
            faults += evaluator_faults(verdicts)
            if evaluator_faults(verdicts):
                sys.stderr.write(f"anytool: evaluator {evaluator.label} failed on {side.path}: "
                                 f"{failed_as_zero_note(evaluator_faults(verdicts), len(verdicts))}\n")
            side.add_outcomes(query_outcomes(verdicts, protocol, samples))
    result = compare_sides(a, b, report=args.report, allow_mismatch=args.allow_mismatch, level=args.level,
                           resamples=args.resamples, seed=args.seed)
    if args.json:
        _print_json(comparison_dict(result))
    elif args.markdown:
        print(comparison_markdown(result))
    else:
        print(comparison_table(result))
    return EXIT_EVALUATOR if faults else 0


# ------------------------------------------------------------------------------------------------ stats
def configure_stats(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", nargs="+", metavar="RESULTS.jsonl", help="results of `anytool eval run`")
    p.add_argument("--json", action="store_true", help="print JSON")


def cmd_stats(args: argparse.Namespace) -> int:
    """`anytool eval stats`: Table 12 per group, and pool recall."""
    from ..eval.anytool.results import read_results
    from ..eval.anytool.stats import results_stats, stats_dict, stats_table
    from ..render import print_json as _print_json

    records = [r for f in args.results for r in read_results(f)]
    if not records:
        raise EvalUsageError(f"no results in {', '.join(args.results)}")
    groups, overall = results_stats(records)
    if args.json:
        _print_json(stats_dict(groups, overall))
        return 0
    models = sorted({str(r.get("model", "")) for r in records})
    print(f"consumption per query (AnyTool Table 12); runs made by: {', '.join(models)}\n")
    print(stats_table(groups, overall))
    return 0


# ------------------------------------------------------------------------------------------------ convert
def configure_convert(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="PATH",
                   help="--to tooleval: our results files; --to ours: ToolEval converted-answer files (.json) or "
                        "ToolBench/StableToolBench answer directories")
    p.add_argument("--to", choices=("tooleval", "ours"), required=True, help="target format")
    p.add_argument("--out", required=True, metavar="PATH",
                   help="--to tooleval: a directory (one <group>.json each); --to ours: a results .jsonl file")
    p.add_argument("--group", default=None, help="--to ours: group name (default: file stem / directory name)")
    p.add_argument("--catalog", metavar="PATH", default=None,
                   help="--to tooleval: catalog for the available tools' schemas (default: names only)")


def cmd_convert(args: argparse.Namespace) -> int:
    """`anytool eval convert`."""
    from ..eval.anytool.convert import from_answer_dir, from_tooleval, group_files, to_tooleval
    from ..eval.anytool.results import ResultsWriter, read_results

    if args.to == "tooleval":
        catalog = None
        if args.catalog:
            from ..catalog.catalog import Catalog

            catalog = Catalog.load(args.catalog)
        records = [r for f in args.inputs for r in read_results(f)]
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        by_group = to_tooleval(records, catalog)
        for group, path in group_files(out, by_group).items():  # file names from the data: inside --out only
            entries = by_group[group]
            path.write_text(json.dumps(entries, ensure_ascii=False, indent=1), encoding="utf-8")
            print(f"{path}: {len(entries)} answers" + (f" (group {group!r})" if path.stem != group else ""))
        return 0
    converted: list[dict[str, Any]] = []
    for inp in args.inputs:
        p = Path(inp)
        converted.extend(from_answer_dir(p, args.group) if p.is_dir() else from_tooleval(p, args.group))
    with ResultsWriter(args.out) as writer:
        for rec in converted:
            writer.append(rec)
    print(f"{args.out}: {len(converted)} records")
    return 0


EVAL_COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {
    "run": ("run benchmark queries through AnyTool (resumable JSON lines)", configure_run, cmd_run),
    "passrate": ("pass rate of results by a separate evaluator (anytool Eq. 2 | toolllm Eq. 1 | sopr)",
                 configure_passrate, cmd_passrate),
    "compare": ("two runs of the same queries, paired: pass rates with a bootstrap interval, McNemar, usage, "
                "flipped queries", configure_compare, cmd_compare),
    "stats": ("consumption statistics per group (AnyTool Table 12) and pool recall", configure_stats, cmd_stats),
    "convert": ("convert results to ToolEval's answer format, or ToolBench answers to ours", configure_convert,
                cmd_convert),
}


def add_eval_commands(sub: Any) -> None:
    """Register the subcommands on `anytool eval`'s subparsers."""
    for name, (help_text, configure, handler) in EVAL_COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        configure(p)
        p.set_defaults(eval_handler=handler)


def add_quiet(sub: Any) -> None:
    """`--quiet` on every `anytool eval` subcommand: no progress bar or lines, no notes on stderr (results and
    tables are still printed; errors are still reported)."""
    for p in sub.choices.values():
        p.add_argument("--quiet", action="store_true",
                       help="nothing on stderr but errors: no progress bar or lines, no notes (results and "
                            "tables are still printed)")


@contextlib.contextmanager
def quiet_logs(quiet: bool = True) -> Iterator[None]:
    """--quiet: while the command runs, the package's warnings (e.g. a failed model call that the run survives) are
    not printed; the logger's level is restored afterwards (the CLI may run in a longer-lived process)."""
    logger = logging.getLogger("langgraph_anytool")
    level = logger.level
    if quiet:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


__all__ = ["EVAL_COMMANDS", "CatalogError", "EvalUsageError", "add_eval_commands", "add_quiet", "quiet_logs"]
