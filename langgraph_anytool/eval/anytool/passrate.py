"""Pass rates of batch results, scored by an evaluator model that is separate from the in-loop judge.

Protocols (each sample is ToolEval's two-stage check, `nodes/judge/tooleval.py`):
- `anytool` — AnyTool §3, Eq. 2: R = #Solved / (#Solved + #Unsolved) over every query (no solvability phase).
  As in the authors' loop (dyabel/AnyTool `scripts/main.py`), an answer containing one of AnyTool's exclusion
  words (`nodes/judge/anytool.py`, case-sensitive) is Unsolved without asking the evaluator; then each of the samples
  is ToolEval's check, and the query is Solved when `passed >= failed`. Only a Solved sample passes: main.py
  hands `check_solved_toolbench` the plain string `task_solvable='Solvable'`, which AnyTool's `rtl.py is_passed`
  never finds equal to `TaskStatus.Solvable`, so Unsolved and Unsure samples both reach its final
  `return AnswerPass.Failed` (no coin flip in the authors' loop).
- `toolllm` — AnyTool §3, Eq. 1 (ToolLLM's protocol, ToolEval's `is_passed`): R = (#Non-solvable + #Solved) /
  (#Non-solvable + #Solved + #Unsolved); a query the evaluator finds unsolvable with the offered APIs passes.
- `sopr` — StableToolBench's solvable pass rate (`toolbench/tooleval/eval_pass_rate.py`, the `scores` loop): per
  evaluation sample the mean over queries of Solved 1, Unsure 0.5, Unsolved 0; reported as the mean and the
  population standard deviation (`np.std`) over the samples.

For `toolllm`, as in StableToolBench's `eval_pass_rate.py` (`compute_pass_rate` and the pass-rate count): each of
the N samples gives passed / failed, where a sample that stays Unsure (ToolEval's `AnswerPass.Unsure`) is settled by
a coin flip (`random.random() < 0.5` there; ours is seeded by query and sample so a re-score gives the same figures,
and the output states how many were flipped). For both: the query passes when `failed <= passed` — a tie counts as
passed, with no coin (AnyTool's `check_solved_toolbench`: `passed >= failed`). A record without an answer
(timeout, error, empty answer) is Unsolved without a model call; one whose solve never called Finish (a
timeout, an error, a budget stop) is also "failed" in `toolllm` without a solvability check (ToolEval's "No answer"
rule, `called_finish`), so it cannot pass as unsolvable.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import statistics
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ...models.llm import RoleUsage
from ...nodes.judge.anytool import EXCLUSION_WORDS, excluded_word, sample_passed, seeded_coin
from ...nodes.judge.tooleval import JudgeResult, Stage, check_is_solved, check_task_solvable
from ...nodes.judge.tooleval_request import ToolEvalRequest
from ...paper_prompts import PromptBook
from ...sanitize.files import DataFileError, loads_json
from ...sanitize.schema import Count, FileModel, check_model
from ..evaluator_faults import EvaluatorFault, fault_text
from ..intervals import Interval, bootstrap_mean
from .convert import record_to_tooleval
from .process import answer_process

log = logging.getLogger(__name__)
Protocol = Literal["anytool", "toolllm", "sopr"]
PROTOCOLS: tuple[str, ...] = ("anytool", "toolllm", "sopr")

UNSURE_RULE = ("toolllm: a sample that stays Unsure is settled by a coin flip as in ToolEval's eval_pass_rate.py "
               "(ours seeded by query and sample, so re-scoring repeats it); anytool: an Unsure sample fails, as in "
               "AnyTool's check_solved_toolbench (task_solvable='Solvable' is a string, so is_passed falls through "
               "to Failed); a tie between passed and failed samples counts as passed (failed <= passed)")
EXCLUSION_RULE = ("an answer containing one of AnyTool's exclusion words (case-sensitive: "
                  + ", ".join(EXCLUSION_WORDS) + ") is Unsolved without an evaluator call (AnyTool scripts/main.py)")


# ------------------------------------------------------------------------------------------------ cache
class EvaluatorCache:
    """On-disk cache of evaluator verdicts (SQLite): same check + evaluator + sample index + inputs → no call."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self._db.commit()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(*parts: Any) -> str:
        return hashlib.sha256(json.dumps(parts, ensure_ascii=False, default=str).encode()).hexdigest()

    def get_or_call(self, key: str, call: Callable[[], JudgeResult]) -> JudgeResult:
        with self._lock:
            row = self._db.execute("SELECT value FROM verdicts WHERE key = ?", (key,)).fetchone()
        cached = self._decoded(key, row[0]) if row is not None else None
        if cached is not None:
            self.hits += 1
            return cached
        self.misses += 1
        result = call()
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO verdicts VALUES (?, ?)", (key, json.dumps(result.to_dict())))
            self._db.commit()
        return result

    def _decoded(self, key: str, value: Any) -> JudgeResult | None:
        """A cached verdict, or None when the row is damaged or foreign (recomputed; a warning names the row)."""
        source = f"{self.path} (verdict {key[:12]})"
        try:
            if not isinstance(value, str):
                raise DataFileError(f"the value is {type(value).__name__}, not JSON text", source=source)
            entry = check_model(_CachedJudgement, loads_json(value, source=source), source=source)
        except DataFileError as exc:
            log.warning("%s; recomputed", exc)
            return None
        usage = {k: (v if k == "cost_usd" else int(v)) for k, v in entry.usage.items()}
        return JudgeResult(entry.label, entry.reason, entry.stage, RoleUsage(**usage))  # type: ignore[typeddict-item]

    def close(self) -> None:
        self._db.close()


class _CachedJudgement(FileModel):
    label: Literal["Solved", "Unsolved", "Unsure", "Solvable", "Unsolvable"]
    reason: str
    stage: Stage
    usage: dict[str, Count] = Field(default_factory=dict)


# ------------------------------------------------------------------------------------------------ record → inputs
def offered_tools(record: Mapping[str, Any]) -> list[str]:
    """The APIs the solver was offered (its final pool), for the solvability check of Eq. 1."""
    return list(record.get("pool") or [])


def answered_by(record: Mapping[str, Any]) -> list[str]:
    """The functions of the record's successful API calls: what its answer rests on. Structured metadata of the
    evaluator's calls (never part of a prompt): a model reads the process as ToolEval sends it; the offline
    stand-in's judge checks that these APIs serve the request's purpose (`offline/judging.py off_purpose`)."""
    return list(dict.fromkeys(str(step["function"]) for step in answer_process(record, max_content=0)
                              if step.get("function") and str(step.get("status", "")).lower() in ("ok", "success")))


def tooleval_inputs(record: Mapping[str, Any], catalog: Any = None) -> tuple[str, dict[str, Any], list[Any]]:
    """(final answer, answer, available tools) as ToolEval reads a converted answer (`eval/anytool/convert.py
    record_to_tooleval`, ToolBench's `convert_to_answer_format.py` form): `rtl.py check_is_solved` sends
    `answer['final_answer']` (the Finish call's arguments as written) to its first stage and `json.dumps(answer)` to
    its second; `check_task_solvable` `json.dumps({'query', 'available_tools'})`, the offered functions' schemas
    (from `catalog`; without one, their names with empty descriptions) and Finish's."""
    converted = record_to_tooleval(record, catalog)
    answer = converted["answer"]
    return str(answer["final_answer"]), answer, list(converted["available_tools"])


# ------------------------------------------------------------------------------------------------ verdicts
@dataclass
class QueryVerdicts:
    group: str
    query_id: str
    answer_labels: list[str] = field(default_factory=list)  # per sample: Solved | Unsolved | Unsure
    task_labels: list[str] = field(default_factory=list)  # per sample (toolllm): Solvable | Unsolvable | Unsure
    reasons: list[str] = field(default_factory=list)
    excluded: str | None = None  # anytool: the exclusion word that made every sample Unsolved without a call
    fault: str = ""  # the evaluator failed on this query (`evaluator_faults`): unscored, or scored failed on request


# the finish types of our solver that are not a Finish call (a budget, an error, ...): `state.SolverAttempt`
NO_FINISH_TYPES = frozenset({"call_budget", "no_apis", "budget", "error", "malformed", "context_length", "no_calls"})


def called_finish(record: Mapping[str, Any]) -> bool:
    """Whether the record's solve ended with a Finish call (an answer or a give-up). False for a record without
    any solver attempt (a timeout, an error, no APIs) and for a last attempt that ended otherwise (a budget, an
    error), unless the record holds an answer. StableToolBench `eval_pass_rate.py compute_pass_rate` (and AnyTool's `check_solved.py`): when
    `"'name': 'Finish'" not in final_step` the sample is "failed" with `TaskStatus.Solvable` and `AnswerStatus.
    Unsolved`, before any evaluator call — so such a query cannot pass as unsolvable in Eq. 1. A record whose
    attempts do not name a finish type (e.g. converted from elsewhere) is taken as finished."""
    if str(record.get("answer") or "").strip():  # the run's answer came from a Finish call (of some attempt)
        return True
    attempts = record.get("trajectory") or []
    if not attempts:
        return False
    last = attempts[-1] if isinstance(attempts[-1], Mapping) else {}
    return str(last.get("finish_type") or "") not in NO_FINISH_TYPES


def evaluate_records(records: Sequence[Mapping[str, Any]], evaluator: Any, evaluator_id: str, *,
                     samples: int = 3, protocol: Protocol = "anytool", cache: EvaluatorCache | None = None,
                     concurrency: int = 4, exclusion: bool | None = None,
                     prompts: PromptBook | None = None, failed_as_zero: bool = False,
                     request: ToolEvalRequest | None = None, catalog: Any = None) -> list[QueryVerdicts]:
    """Per record, `samples` two-stage verdicts (and, for `toolllm`, solvability verdicts) from the evaluator.

    `evaluator_id` is the evaluator's part of the cache key: it must name the evaluator fully (model, endpoint,
    sampling settings — `identity.evaluator_key`). `exclusion` (default: on for `anytool` only) applies AnyTool's
    exclusion-word rule before any evaluator call. `prompts`: ToolEval's own templates read from a checkout
    (`paper_prompts.tooleval_book`) instead of ours; their files' hashes join the cache key, so a verdict given
    with our prompts is never reused for theirs (nor one of another version of their files). `request`: the call form
    of the authors' checks (`nodes/judge/tooleval_request.py`; its settings are the `evaluator`'s own, set with
    `with_settings` so that `evaluator_id` names them). With `prompts`, the checks read what ToolEval reads
    (`tooleval_inputs`; `catalog` gives the offered APIs' full schemas).

    An evaluator call that fails for good (`evaluator_faults`) stops the scoring: no further query is sent, and
    `EvaluatorFault` says how many queries were left without a score (a failed call is never cached). With
    `failed_as_zero` each query it failed on is scored Unsolved instead (`QueryVerdicts.fault` says why; the
    authors' scripts count a failed check so) and the others are scored."""
    use_exclusion = protocol == "anytool" if exclusion is None else exclusion
    # our prompts keep the key they always had; the authors' add their files' fingerprint
    theirs: tuple[str, ...] = (f"prompts:{prompts.key}",) if prompts is not None else ()
    if prompts is not None and request is not None and request.form != "tools":  # tools=: the key it always had
        theirs += (f"form:{request.form}",)

    stop = threading.Event()

    def one(rec: Mapping[str, Any]) -> QueryVerdicts:
        qv = QueryVerdicts(str(rec.get("group", "")), str(rec.get("query_id", "")))
        if stop.is_set():
            qv.fault = "not asked: the evaluator had failed"
            return qv
        try:
            return scored(rec, qv)
        except Exception as exc:  # the evaluator failed for good (after its call's retries)
            qv.fault = fault_text(exc, evaluator)
            if not failed_as_zero:
                stop.set()
                return qv
            done = len(qv.answer_labels)
            qv.answer_labels += ["Unsolved"] * (samples - done)
            qv.reasons += [f"evaluator failed ({qv.fault}): scored as failed (--failed-as-zero)"] * (samples - done)
            if protocol == "toolllm":
                qv.task_labels += ["Solvable"] * (samples - len(qv.task_labels))
            return qv

    def scored(rec: Mapping[str, Any], qv: QueryVerdicts) -> QueryVerdicts:
        query, answer = str(rec.get("query", "")), str(rec.get("answer") or "")
        if not called_finish(rec):  # ToolEval's "No answer": failed, the task taken as Solvable, no evaluator call
            qv.answer_labels = ["Unsolved"] * samples
            qv.task_labels = ["Solvable"] * samples if protocol == "toolllm" else []
            qv.reasons = ["No answer: the solve never called Finish (ToolEval's rule; no evaluator call)"] * samples
            return qv
        word = excluded_word(answer) if use_exclusion else None
        if word is not None:  # AnyTool scripts/main.py: Unsolved before check_solved_toolbench is called
            qv.excluded = word
            qv.answer_labels = ["Unsolved"] * samples
            qv.reasons = [f"the answer contains the exclusion word {word!r} (AnyTool's rule; no evaluator call)"] * samples
            return qv
        process: Any = answer_process(rec)
        tools: Any = offered_tools(rec)
        checked = answer
        if prompts is not None:  # what ToolEval reads (module docstring of nodes/judge/tooleval.py)
            checked, process, tools = tooleval_inputs(rec, catalog)
        for i in range(samples):
            config: Any = {"metadata": {"anytool_eval_sample": i}}

            def solved(i: int = i, config: Any = config) -> JudgeResult:
                return check_is_solved(evaluator, query, checked, process, config=config, book=prompts,
                                       request=request, inputs={"apis": answered_by(rec)})

            key = EvaluatorCache.key("check_is_solved", evaluator_id, *theirs, i, query, checked, process)
            res = cache.get_or_call(key, solved) if cache else solved()
            qv.answer_labels.append(res.label)
            qv.reasons.append(res.reason)
            if protocol == "toolllm":
                done = res.label == "Solved"

                def solvable(config: Any = config, done: bool = done, tools: Any = tools) -> JudgeResult:
                    return check_task_solvable(evaluator, query, tools, config=config, has_been_solved=done,
                                               book=prompts, request=request)

                tkey = EvaluatorCache.key("check_task_solvable", evaluator_id, *theirs, i, query, tools, done)
                qv.task_labels.append((cache.get_or_call(tkey, solvable) if cache else solvable()).label)
        return qv

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        verdicts = list(pool.map(one, records))
    failed = [v for v in verdicts if v.fault]
    if failed and not failed_as_zero:
        first = next(v for v in failed if not v.fault.startswith("not asked"))
        raise EvaluatorFault(first.fault, unscored=len(failed), total=len(verdicts),
                             where=f"query {first.group}/{first.query_id}" if first.group else f"query {first.query_id}")
    return verdicts


def evaluator_faults(verdicts: Sequence[QueryVerdicts]) -> int:
    """Queries the evaluator failed on (scored as failed with `failed_as_zero`)."""
    return sum(1 for v in verdicts if v.fault)



def sample_pass(answer: str, task: str | None) -> bool | None:
    """One sample's pass (True/False), or None when it stays Unsure (a coin decides). `task` None: Eq. 2 as
    AnyTool's loop decides it (only Solved passes: `nodes/judge/anytool.py sample_passed`, never None); otherwise
    ToolEval's `is_passed` (Eq. 1, StableToolBench `rtl.py`)."""
    if task is None:
        return sample_passed(answer)
    if answer == "Solved":
        return True
    if task == "Unsolvable":
        return True
    if answer == "Unsolved" and task == "Solvable":
        return False
    return None  # Unsolved + Unsure task, Unsure + Solvable, Unsure + Unsure


@dataclass(frozen=True)
class QueryOutcome:
    """One query's result under a protocol. `value`: 1.0 passed / 0.0 failed (`anytool`, `toolllm`), or (`sopr`) the
    query's mean score over the samples (Solved 1, Unsure 0.5, Unsolved 0; a missing sample scores 0). The mean of
    `value` over a group's queries is its pass rate (× 100): for `sopr` that equals StableToolBench's mean over
    samples of the per-sample mean over queries. `coin_flips`: Unsure samples a seeded coin settled (`toolllm`)."""

    group: str
    query_id: str
    value: float
    coin_flips: int = 0


SOPR_WEIGHT: dict[str, float] = {"Solved": 1.0, "Unsure": 0.5, "Unsolved": 0.0}


def query_outcome(v: QueryVerdicts, protocol: Protocol, samples: int) -> QueryOutcome:
    """The query's outcome from its per-sample verdicts (the rules in the module docstring)."""
    if protocol == "sopr":  # StableToolBench eval_pass_rate.py, the `scores` loop
        total = sum(SOPR_WEIGHT[v.answer_labels[i]] for i in range(samples) if i < len(v.answer_labels))
        return QueryOutcome(v.group, v.query_id, total / samples if samples else 0.0)
    votes = {True: 0, False: 0}
    flips = 0
    for i, label in enumerate(v.answer_labels):
        ok = sample_pass(label, v.task_labels[i] if protocol == "toolllm" else None)
        if ok is None:
            ok = seeded_coin(v.group, v.query_id, i)
            flips += 1
        votes[ok] += 1
    # StableToolBench eval_pass_rate.py: `failed <= passed` passes (a tie passes, no coin); AnyTool
    # anytool/verifier.py check_solved_toolbench: `passed >= failed` → Solved
    return QueryOutcome(v.group, v.query_id, 1.0 if votes[False] <= votes[True] else 0.0, flips)


def query_outcomes(verdicts: Sequence[QueryVerdicts], protocol: Protocol, samples: int) -> list[QueryOutcome]:
    """`query_outcome` of every query, in order (what `eval compare` pairs by query)."""
    return [query_outcome(v, protocol, samples) for v in verdicts]


@dataclass
class GroupScore:
    group: str
    queries: int = 0
    passed: int = 0
    failed: int = 0
    solved: int = 0  # majority answer label Solved (for the table)
    unsolved: int = 0
    unsure: int = 0
    non_solvable: int = 0  # toolllm: majority solvability Unsolvable
    excluded: int = 0  # anytool: Unsolved by an exclusion word, without an evaluator call
    coin_flips: int = 0
    rate: float = 0.0  # percent
    std: float | None = None  # sopr: standard deviation over samples (percent)
    per_sample: list[float] = field(default_factory=list)
    # percent: percentile bootstrap over the group's queries (`eval/intervals.py`; None with `interval=False`)
    interval: Interval | None = None


def _majority(labels: Sequence[str], order: Sequence[str]) -> str:
    counts = {x: labels.count(x) for x in order}
    best = max(counts.values())
    tops = [x for x in order if counts[x] == best]
    return tops[0] if len(tops) == 1 else "Unsure"


def score(verdicts: Sequence[QueryVerdicts], protocol: Protocol, samples: int, *,
          interval: bool = True) -> tuple[list[GroupScore], GroupScore]:
    """Per-group and overall scores of `protocol` from the per-sample verdicts; with `interval`, each with the
    95 % percentile bootstrap interval of its rate over queries (10,000 resamples, seed 0)."""
    groups: dict[str, list[QueryVerdicts]] = {}
    for v in verdicts:
        groups.setdefault(v.group, []).append(v)
    out = [_score_group(name, vs, protocol, samples, interval) for name, vs in groups.items()]
    overall = _score_group("overall", list(verdicts), protocol, samples, interval)
    return out, overall


def _score_group(name: str, vs: Sequence[QueryVerdicts], protocol: Protocol, samples: int,
                 interval: bool = True) -> GroupScore:
    g = GroupScore(name, queries=len(vs))
    for v in vs:
        m = _majority(v.answer_labels, ("Solved", "Unsolved", "Unsure"))
        g.solved += m == "Solved"
        g.unsolved += m == "Unsolved"
        g.unsure += m == "Unsure"
        g.excluded += v.excluded is not None
        if v.task_labels:
            g.non_solvable += _majority(v.task_labels, ("Solvable", "Unsolvable", "Unsure")) == "Unsolvable"
    outcomes = query_outcomes(vs, protocol, samples)
    if interval and outcomes:
        g.interval = bootstrap_mean([o.value for o in outcomes]).scaled(100)
    if protocol == "sopr":  # StableToolBench: mean over samples of the mean score over queries
        for i in range(samples):
            total = sum(SOPR_WEIGHT[v.answer_labels[i]] for v in vs if i < len(v.answer_labels))
            g.per_sample.append(100 * total / len(vs) if vs else 0.0)
        g.rate = statistics.fmean(g.per_sample) if g.per_sample else 0.0
        g.std = statistics.pstdev(g.per_sample) if len(g.per_sample) > 1 else 0.0
        return g
    g.passed = sum(o.value == 1.0 for o in outcomes)
    g.failed = len(outcomes) - g.passed
    g.coin_flips = sum(o.coin_flips for o in outcomes)
    g.rate = 100 * g.passed / g.queries if g.queries else 0.0
    return g


INTERVAL_NOTE = ("95% CI: percentile bootstrap over the queries (10,000 resamples, seed 0); with few queries "
                 "(under ~20) it is too narrow")


def _ci(g: GroupScore) -> str:
    return g.interval.text() if g.interval is not None else "-"


def passrate_table(groups: Sequence[GroupScore], overall: GroupScore, protocol: Protocol) -> str:
    from ...render import table as _table

    if protocol == "sopr":
        head = ["group", "queries", "Solved", "Unsure", "Unsolved", "SoPR %", "std", "95% CI"]
        rows = [[g.group, str(g.queries), str(g.solved), str(g.unsure), str(g.unsolved), f"{g.rate:.1f}",
                 f"{g.std or 0:.1f}", _ci(g)] for g in [*groups, overall]]
    else:
        head = ["group", "queries", "passed", "failed", "Solved", "Unsolved", "Unsure",
                *(["Non-solvable"] if protocol == "toolllm" else []), *(["excluded"] if protocol == "anytool" else []),
                "coin flips", "pass rate %", "95% CI"]
        rows = [[g.group, str(g.queries), str(g.passed), str(g.failed), str(g.solved), str(g.unsolved), str(g.unsure),
                 *([str(g.non_solvable)] if protocol == "toolllm" else []),
                 *([str(g.excluded)] if protocol == "anytool" else []), str(g.coin_flips), f"{g.rate:.1f}", _ci(g)]
                for g in [*groups, overall]]
    return _table(head, rows, right=range(1, len(head)))


def report_dict(groups: Sequence[GroupScore], overall: GroupScore, **meta: Any) -> dict[str, Any]:
    return {**meta, "groups": [asdict(g) for g in groups], "overall": asdict(overall)}
