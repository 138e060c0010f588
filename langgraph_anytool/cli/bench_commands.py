"""`anytool eval steps` and `anytool eval tasks` (α-UMi step metrics, OPPO tasks): argument set-up and handlers (registered by `cli.py`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .argtypes import positive_int
from .exits import EVALUATOR_EPILOG, EXIT_EVALUATOR
from .labels import first_line, is_stand_in, last_line, model_spec, resolve_stand_in, stand_in_label, stand_in_roles


def _add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", metavar="M", default=None,
                   help="model under test, 'provider:model' for init_chat_model (default: $ANYTOOL_MODEL)")
    p.add_argument("--offline", action="store_true",
                   help="use OfflinePolicyModel, a rule-based stand-in (NOT an LLM); results are labelled as such")


# ------------------------------------------------------------------------------------------ steps
def configure_steps(sub: Any) -> None:
    p = sub.add_parser("steps", help="α-UMi step-level metrics (Plan ACC, Act. EM, Hallu., Arg. F1, Rouge-L)",
                       description="Teacher-forced step-level evaluation (α-UMi Appendix C) on ToolBench answer "
                                   "files or α-UMi test files.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="answer/test files or directories of *.json")
    p.add_argument("--format", default="auto", choices=("auto", "toolbench", "umi"), help="input format")
    p.add_argument("--group-by", default="auto", choices=("auto", "file", "dir"),
                   help="table rows: per file, per directory, or auto (directory for ToolBench answers, "
                        "file for α-UMi test files)")
    p.add_argument("--mode", default="single", choices=("single", "multi"),
                   help="single: the DFSDT solver's one model; multi: planner / caller / summarizer")
    _add_model_args(p)
    for role in ("planner", "caller", "summarizer"):
        p.add_argument(f"--{role}", metavar="M", default=None, help=f"model of the {role} (multi mode)")
    p.add_argument("--text-mode", nargs="+", default=(), choices=("solver", "caller"), metavar="ROLE",
                   help="roles whose model has no native function calling (Action: / Action Input: text)")
    p.add_argument("--prompts", default=None, choices=("default", "alpha_umi"),
                   help="α-UMi role prompts: ours, or the profile following α-UMi's formats (default: "
                        "$ANYTOOL_UMI_PROMPTS, else default)")
    p.add_argument("--prompts-from", metavar="PATH", default=None,
                   help="your clone of X-PLUG/Multi-LLM-Agent: the planner, caller and summarizer get α-UMi's own "
                        "prompts (GLPFT/utils/prompt_lib.py, read as data), as its infer_pipeline.py fills them "
                        "(--mode multi)")
    p.add_argument("--limit", type=positive_int, default=None, metavar="N", help="evaluate the first N steps only")
    p.add_argument("--json", action="store_true", help="print JSON (scores and every step)")
    p.set_defaults(eval_handler=cmd_steps)


def _models_for(args: argparse.Namespace) -> tuple[Any, str]:
    """(catalog -> ModelSet, label of the model under test). The stand-in, by --offline or by the name "offline"
    for the model or a role, is made over each catalog and named by its label."""
    from ..models.llm import NO_MODEL_HELP, ModelSet  # here, not at the top: `anytool --help` never loads LangChain

    roles = {r: getattr(args, r) for r in ("planner", "caller", "summarizer") if getattr(args, r, None)}
    spec = model_spec(args)
    if not (spec or roles):
        raise ValueError(f"{NO_MODEL_HELP}, or pass --offline for the rule-based stand-in")
    real = ModelSet(default=None, by_role={}).with_overrides(
        None if is_stand_in(spec) else spec, {r: m for r, m in roles.items() if not is_stand_in(m)})

    def models_for(catalog: Any) -> ModelSet:
        offline = {r: resolve_stand_in(m, catalog) for r, m in roles.items() if is_stand_in(m)}
        default = resolve_stand_in(spec, catalog) if is_stand_in(spec) else None
        return real.with_overrides(default, offline) if default is not None or offline else real

    label = ", ".join([*([stand_in_label(spec) or str(spec)] if spec else []),
                       *(f"{k}={stand_in_label(v) or v}" for k, v in roles.items())])
    return models_for, label


def cmd_steps(args: argparse.Namespace) -> int:
    from ..config import AnyToolConfig
    from ..eval.umi.data import StepDataError, load_step_cases
    from ..eval.umi.steps import evaluate_steps

    try:
        loaded = load_step_cases(args.paths, args.format, args.group_by, limit=args.limit)
    except StepDataError as exc:
        raise ValueError(str(exc)) from exc
    cases = loaded.cases[: args.limit] if args.limit else loaded.cases
    if not cases:
        raise ValueError("no step to evaluate in " + ", ".join(args.paths))
    book = None
    if args.prompts_from:
        from ..paper_prompts import umi_book
        from .eval_commands import load_prompts

        if args.mode != "multi":
            raise ValueError("--prompts-from gives α-UMi's planner, caller and summarizer prompts: use it with "
                             "--mode multi")
        book = load_prompts(args.prompts_from, umi_book)
    models_for, label = _models_for(args)
    offline = stand_in_roles({"model": model_spec(args), **{r: getattr(args, r) for r in ("planner", "caller",
                                                                                            "summarizer")}})
    if offline:
        print(first_line([] if offline == ["model"] else offline), file=sys.stderr)
    flags: dict[str, Any] = {"solver": "umi" if args.mode == "multi" else "dfsdt"}  # over ANYTOOL_<FIELD>
    if args.text_mode:
        flags["text_mode_roles"] = tuple(args.text_mode)
    if args.prompts:
        flags["umi_prompts"] = args.prompts
    config = AnyToolConfig.layered(flags)
    report = evaluate_steps(cases, models_for, mode=args.mode, config=config, model_label=label, loaded=loaded,
                            prompts=book)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2, default=str))
    else:
        print(report.table())
        if not args.quiet:
            print(f"{len(cases)} steps in {report.seconds:.1f} s", file=sys.stderr)
    if offline:
        print(last_line(), file=sys.stderr)
    return 0


# ------------------------------------------------------------------------------------------ tasks
def configure_tasks(sub: Any) -> None:
    p = sub.add_parser("tasks", help="the OPPO paper's eight decomposed tool-use tasks",
                       description="Runs OPPO tasks (the OPPO paper, §3.4) as the authors' code does (OPPO-Mente-Lab/"
                                   "agent_eval eval_scripts/) on our sample set over the builtin catalog, or on the "
                                   "release's data/eval_tasks/ (--data) with its toolset/ folder (--catalog).")
    p.add_argument("--task", nargs="+", required=True, metavar="N",
                   help="task number(s) 1-8, or ranges such as 1-8 or 2-4")
    p.add_argument("--data", metavar="DIR", default=None,
                   help="directory of task<N>.csv files in the release's layout (default: our sample set)")
    p.add_argument("--catalog", metavar="PATH", default=None,
                   help="catalog holding the tasks' tools: the release's toolset/ folder, a ToolBench directory, ... "
                        "(default: the builtin toolset)")
    _add_model_args(p)
    p.add_argument("--evaluator", metavar="M", default=None,
                   help="evaluator model ('provider:model') of tasks 3-8, as the authors' GPT-4; without it those "
                        "tasks fall back to rule checks and are labelled as not the paper's figure")
    p.add_argument("--evaluator-cache", metavar="DIR", default=".anytool-cache/evaluator",
                   help="where evaluator verdicts are cached (default: %(default)s)")
    p.add_argument("--protocol", choices=("paper", "ours"), default="paper",
                   help="paper (default): the authors' conversations (no system prompt, their function names, task 2's "
                        "right API first); ours: our system prompts, candidates in a per-item shuffled order")
    p.add_argument("--ask-user", action="store_true",
                   help="task 3 also offers an ask_user function (ours; off in the paper's protocol)")
    p.add_argument("--functions-api", choices=("auto", "functions", "tools"), default="auto",
                   help="paper protocol, tasks 1-3: offer the functions with the legacy functions= parameter, as the "
                        "authors do, or with tools= reading only the first call, as the legacy API returns one; auto "
                        "(default): functions= for OpenAI-compatible clients, tools= for others and once a provider "
                        "refuses functions=")
    p.add_argument("--rename-duplicates", action="store_true",
                   help="paper protocol: of two offered functions that share a name, rename the later one to its "
                        "catalog function name (ours; the authors send both under the same name)")
    p.add_argument("--failed-as-zero", action="store_true",
                   help="when an evaluator call fails for good, score that item 0 and go on, as the authors' "
                        "eval_func.py does, and print the figures with the count; without it the first failure "
                        "stops the task and no figure of it is printed (exit 4 either way)")
    p.add_argument("--task7-steps", choices=("evaluator", "calls"), default=None,
                   help="task 7's step progress reads the steps the evaluator lists (evaluator: the paper protocol's "
                        "default, eval_func.py _extract_tools) or the calls the model made (calls: ours' default)")
    p.add_argument("--json-verdicts", action="store_true",
                   help="also read our JSON verdict form {\"label\": \"pass\"|\"fail\"} from the evaluator (ours; the "
                        "authors only count a reply that starts with yes)")
    p.add_argument("--prompts-from", metavar="PATH", default=None,
                   help="your clone of OPPO-Mente-Lab/agent_eval: the evaluator's prompts and task 8's message are "
                        "the authors' own (eval_scripts/eval_func.py, agent_interface.py, read as data)")
    p.add_argument("--execution", choices=("auto", "template", "http"), default="auto",
                   help="how tasks 4 and 7 call APIs that have no executor of their own (auto: the builtin toolset "
                        "locally, others over HTTP; template: offline simulation); the OPPO toolset's dev tools "
                        "(user profile, location, time, calendar, calculator) always run locally")
    p.add_argument("--limit", type=positive_int, default=None, metavar="N", help="the first N items of each task")
    p.add_argument("--json", action="store_true", help="print JSON (metrics and every item)")
    p.epilog = EVALUATOR_EPILOG
    p.set_defaults(eval_handler=cmd_tasks)


def task_numbers(values: list[str]) -> list[int]:
    """`--task 1 3`, `--task 1-8`, `--task 2-4 7` → task numbers in order, each once (1-8 only)."""
    out: list[int] = []
    for v in values:
        lo, sep, hi = v.partition("-")
        try:
            a, b = (int(lo), int(hi)) if sep else (int(v), int(v))
        except ValueError:
            raise ValueError(f"--task: {v!r} is not a task number or range (1-8)") from None
        if not (1 <= a <= b <= 8):
            raise ValueError(f"--task: {v!r} is outside 1-8")
        out.extend(n for n in range(a, b + 1) if n not in out)
    return out


def cmd_tasks(args: argparse.Namespace) -> int:
    from ..catalog import Catalog
    from ..eval.evaluator_faults import EvaluatorFault
    from ..eval.oppo.data import TaskDataError, load_task
    from ..eval.oppo.judge import TaskEvaluator, evaluator_identity
    from ..eval.oppo.tasks import TaskRunner
    from ..models.llm import NO_MODEL_HELP, init_model
    from ..paper_prompts import oppo_book
    from ..tools.executors import make_executor
    from ..tools.pipeline import ApiExecutor
    from .eval_commands import load_prompts

    tasks = task_numbers(args.task)
    book = load_prompts(args.prompts_from, oppo_book)
    try:  # every task file read (and checked) before the first model call; streamed, stopping after --limit items
        items_of = {task: load_task(task, args.data, limit=args.limit) for task in tasks}
    except TaskDataError as exc:
        raise ValueError(str(exc)) from exc
    catalog = Catalog.load(args.catalog)
    spec = model_spec(args)
    if spec is None:
        raise ValueError(f"{NO_MODEL_HELP}, or pass --offline for the rule-based stand-in")
    model: Any = resolve_stand_in(spec, catalog) if is_stand_in(spec) else init_model(spec)
    label = stand_in_label(spec) or spec
    if label != spec:
        print(first_line(), file=sys.stderr)
    evaluator = None
    if args.evaluator and is_stand_in(args.evaluator):
        raise ValueError("--evaluator offline: the offline stand-in is not an LLM and cannot judge the OPPO tasks' "
                         "replies; leave --evaluator out to score without an evaluator (labelled as such)")
    if args.evaluator:
        judge = init_model(args.evaluator)
        evaluator = TaskEvaluator(judge, cache_dir=args.evaluator_cache,
                                  identity=evaluator_identity(args.evaluator, judge), json_verdicts=args.json_verdicts)
    kind = args.execution if args.execution != "auto" else ("local" if catalog.name == "builtin" else "http")
    executor = ApiExecutor(catalog, default=make_executor(kind), use_catalog_executors=True)
    reports = []
    fault: EvaluatorFault | None = None
    try:
        runner = TaskRunner(catalog, model, evaluator=evaluator, executor=executor, model_label=label,
                            protocol=args.protocol, ask_user=args.ask_user, functions_api=args.functions_api,
                            rename_duplicates=args.rename_duplicates, prompts=book, failed_as_zero=args.failed_as_zero,
                            task7_steps=args.task7_steps)
        for task in tasks:
            reports.append(runner.run(task, items_of[task]))
    except EvaluatorFault as exc:  # the tasks scored before are printed; the failed one and the rest are not
        fault = exc
    finally:
        executor.close()
    if args.json:
        print(json.dumps([r.to_dict() for r in reports], ensure_ascii=False, indent=2, default=str))
    elif reports:
        print("\n\n".join(r.table() for r in reports))
    if label != spec:
        print(last_line(), file=sys.stderr)
    if fault is not None:
        print(f"anytool: {fault.line(args.evaluator, 'items', 'figure of this task')}", file=sys.stderr)
        return EXIT_EVALUATOR
    failed = sum(r.evaluator_faults for r in reports)
    if failed:
        print(f"anytool: evaluator {args.evaluator} failed on {failed} item(s), scored 0 (--failed-as-zero); "
              f"exit {EXIT_EVALUATOR}", file=sys.stderr)
        return EXIT_EVALUATOR
    return 0
