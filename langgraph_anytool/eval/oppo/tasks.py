"""`anytool eval tasks`: runners of the OPPO paper's eight tasks (§3.4, Table 1), reproducing the authors'
code (repository OPPO-Mente-Lab/agent_eval: `eval_scripts/tasks.py` and `agent_interface.py` run the model,
`eval_scripts/eval_func.py` scores). Each runner asks the model under test through `oppo_agent` and scores with
`oppo_score`; the evaluator-judged parts use a `TaskEvaluator`. Without one, a task falls back to our rule checks
and the report says that its figure is not the paper's.

Metrics per task, the paper's first: 1 precision/recall/f1 (macro); 2 accuracy; 3 clarification_rate; 4 precision;
5, 6, 8 pass_rate; 7 progress. Our own figures follow under their own names (see `oppo_score`). As the authors'
`eval_scripts/run_eval.ipynb` does, runs that raised in tasks 4 and 7 (the model under test failed, a call's
arguments were not JSON, task 7 called a function it was not offered) are scored 0 per item but left out of the
paper's figure; `progress_failed_as_0` counts them.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel

from ...catalog import Catalog
from ...models.llm import ModelNotConfiguredError
from ...paper_prompts import PromptBook, ours_provenance
from ...text import shorten
from ...tools.pipeline import ApiExecutor
from ..evaluator_faults import EvaluatorFault, failed_as_zero_note, fault_text
from . import agent, score, wire
from . import prompts as P
from .data import TASKS, TaskDataError, TaskItem, parse_label, resolve_api
from .judge import TaskEvaluator, Verdict

PROTOCOLS = ("paper", "ours")
TASK7_STEPS = ("evaluator", "calls")
TASK7_EXTRACT_TRIES = 5  # eval_func.py _check_act_steps: `for _ in range(5): used_tools = _extract_tools(...)`
JUDGED = frozenset({3, 4, 5, 6, 7, 8})  # tasks whose paper figure needs the evaluator (task 4: recorded only)
SIMILAR_APIS = 5  # `agent_interface.py` `perform_task2`: simi_api_num=5


@dataclass
class ItemResult:
    id: str
    type: str
    score: float
    prediction: Any
    reason: str = ""
    status: str = ""  # task 4: call | none | excluded; task 7: excluded or ""


@dataclass
class TaskReport:
    task: int
    name: str
    metrics: dict[str, float]
    items: list[ItemResult]
    scoring: str
    model_label: str
    protocol: str = "paper"
    types: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    seconds: float = 0.0
    evaluator_calls: int = 0
    evaluator_cache_hits: int = 0
    evaluator_faults: int = 0  # items the evaluator failed on, scored 0 (`failed_as_zero`)
    notes: list[str] = field(default_factory=list)
    prompts: dict[str, Any] = field(default_factory=ours_provenance)  # which prompts ran (files and sha256)

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "name": self.name, "protocol": self.protocol, "prompts": self.prompts,
                "metrics": self.metrics,
                "scoring": self.scoring, "notes": self.notes, "model": self.model_label, "types": self.types,
                "errors": self.errors,
                "seconds": round(self.seconds, 3), "evaluator_calls": self.evaluator_calls,
                "evaluator_cache_hits": self.evaluator_cache_hits, "evaluator_faults": self.evaluator_faults,
                "items": [asdict(i) for i in self.items]}

    def table(self) -> str:
        head = f"task {self.task} ({self.name}): {len(self.items)} items, types " + \
            ", ".join(f"{k}={v}" for k, v in sorted(self.types.items()))
        lines = [head, f"model: {self.model_label}; protocol: {self.protocol}; scoring: {self.scoring}"]
        if self.prompts.get("files"):
            lines.append(f"prompts: the authors', from {self.prompts['path']} ({', '.join(self.prompts['files'])})")
        lines += [f"  {k:<20} {100 * v:6.1f}" for k, v in self.metrics.items()]
        if self.errors:
            lines.append(f"  items whose model or evaluator call failed (scored 0): {self.errors}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def _shuffled(item_id: str, values: Sequence[str]) -> list[str]:
    """Ours: a deterministic order per item, so the right API is not always first."""
    return sorted(values, key=lambda v: hashlib.sha256(f"{item_id}|{v}".encode()).hexdigest())


class TaskRunner:
    """Runs one task's items against a model. `protocol="paper"` (default) sends what the authors send
    (`oppo.agent`, `oppo.wire`); "ours" adds our system prompts and shuffles task 2's candidates. `ask_user` (ours,
    off by default) also offers an `ask_user` function in task 3. `executor` runs the API calls of tasks 4 and 7.
    `prompts`: the authors' prompts read from a clone of their repository (`paper_prompts.oppo_book`): the
    evaluator's prompts and task 8's message are theirs (and their files' hashes join the evaluator's cache key).

    Paper protocol only: `functions_api` says how tasks 1-3 offer their functions — "functions" (the authors'
    legacy `functions=`, `agent_interface.py` `perform_task1`-`3`), "tools" (`tools=`, only the first call read, as
    the legacy API returns at most one) or "auto" (the default: "functions" for a ChatOpenAI-family model, "tools"
    for other clients, and "tools" for the rest of the run once a provider refuses `functions=`);
    `rename_duplicates` (ours) renames the later of two offered functions that share a name.

    `task7_steps`: what task 7's step progress reads when the evaluator does not find the problem solved —
    "evaluator" (the paper protocol's default: the evaluator lists the tools used and their results,
    `eval_func.py _extract_tools`) or "calls" (ours' default: the calls the model made, as the executor saw them)."""

    def __init__(self, catalog: Catalog, model: BaseChatModel, *, evaluator: TaskEvaluator | None = None,
                 executor: ApiExecutor | None = None, model_label: str = "", protocol: str = "paper",
                 ask_user: bool = False, functions_api: str = "auto", rename_duplicates: bool = False,
                 prompts: PromptBook | None = None, failed_as_zero: bool = False,
                 task7_steps: str | None = None) -> None:
        if protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {protocol!r}; expected one of: {', '.join(PROTOCOLS)}")
        if functions_api not in agent.FUNCTIONS_APIS:
            raise ValueError(f"unknown functions_api {functions_api!r}; expected one of: "
                             f"{', '.join(agent.FUNCTIONS_APIS)}")
        self.catalog = catalog
        self.model = model
        self.evaluator = evaluator
        self.executor = executor
        self.model_label = model_label or type(model).__name__
        self.protocol = protocol
        self.paper = protocol == "paper"
        self.ask_user = ask_user
        self.functions_api = functions_api
        self.rename_duplicates = rename_duplicates
        self._legacy: bool | None = None  # tasks 1-3 send functions= (resolved on first use)
        self._refused = ""  # the provider's refusal of functions= (auto: tools= from then on)
        self.prompts = prompts
        self.failed_as_zero = failed_as_zero
        self._faults = 0  # evaluator calls that failed for good (each item it failed on; `failed_as_zero`)
        if task7_steps not in (None, *TASK7_STEPS):
            raise ValueError(f"unknown task7_steps {task7_steps!r}; expected one of: {', '.join(TASK7_STEPS)}")
        self.task7_steps = task7_steps or ("evaluator" if self.paper else "calls")

    def _judge(self, task: int, prompt: str) -> Verdict:
        """The evaluator's verdict (its cache key holds the authors' prompt files' fingerprint when they are used).
        A call that fails for good raises `EvaluatorFault` (the task stops: no figure from items never scored),
        or with `failed_as_zero` the provider's error, which the task scores 0 as the authors' scripts do."""
        assert self.evaluator is not None
        try:
            return self.evaluator.judge(task, prompt, prompts_key=self.prompts.key if self.prompts is not None else "")
        except Exception as exc:
            self._faults += 1
            if self.failed_as_zero:
                raise
            raise EvaluatorFault(fault_text(exc, self.evaluator.model), unscored=0, total=0) from None

    def _api(self, item: TaskItem) -> str:
        tool, api = item.api_ref()
        return resolve_api(self.catalog, tool, api, item.where("api_name"))

    def run(self, task: int, items: Sequence[TaskItem], progress: Callable[[int], Any] | None = None) -> TaskReport:
        start = time.perf_counter()
        handler = getattr(self, f"_task{task}")
        results: list[ItemResult] = []
        extra: dict[str, list[Any]] = {"labels": [], "preds": [], "called": [], "coverage": [], "url_rule": []}
        errors = 0
        calls0 = self.evaluator.calls if self.evaluator else 0
        hits0 = self.evaluator.hits if self.evaluator else 0
        faults0 = self._faults
        for item in items:
            try:
                results.append(handler(item, extra))
            except LookupError as exc:  # a row the task cannot use
                raise ValueError(f"{item.where()}: {exc}") from exc
            except EvaluatorFault as exc:  # this item and the rest are not scored: no figure of this task
                raise EvaluatorFault(exc.fault, unscored=len(items) - len(results), total=len(items),
                                     where=f"task {task}, item {item.id}") from None
            except (TaskDataError, ModelNotConfiguredError):
                raise
            except Exception as exc:  # a provider error costs this item, not the run
                errors += 1
                # tasks 4 and 7: perform_task4/7 raised, and run_eval.ipynb leaves the row out of the paper's figure
                results.append(ItemResult(item.id, item.type, 0.0, None, f"call failed: {type(exc).__name__}: {exc}",
                                          status="excluded" if task in (4, 7) else ""))
                self._failed(task, item, extra)
            if progress is not None:
                progress(1)
        metrics = self._metrics(task, results, extra)
        excluded = sum(1 for r in results if r.status == "excluded")
        notes = [f"{excluded} item(s) left out of {'precision and score' if task == 4 else 'progress'}: the run "
                 "raised (as run_eval.ipynb leaves such rows out; they count 0 in "
                 f"{'strict_correct_rate' if task == 4 else 'progress_failed_as_0'})"] if excluded else []
        if task in (1, 2, 3) and self.paper:
            notes.append(self._functions_note())
        faults = self._faults - faults0
        if faults:
            notes.append(failed_as_zero_note(faults, len(items), "items"))
        return TaskReport(task=task, name=TASKS[task], metrics=metrics, items=results, scoring=self._scoring(task),
                          notes=notes,
                          model_label=self.model_label, protocol=self.protocol,
                          types=dict(Counter(i.type for i in items)), errors=errors,
                          seconds=time.perf_counter() - start,
                          evaluator_calls=(self.evaluator.calls - calls0) if self.evaluator else 0,
                          evaluator_cache_hits=(self.evaluator.hits - hits0) if self.evaluator else 0,
                          evaluator_faults=faults, prompts=self.prompts.provenance() if self.prompts is not None else ours_provenance())

    @staticmethod
    def _failed(task: int, item: TaskItem, extra: dict[str, list[Any]]) -> None:
        if task == 1:
            extra["labels"].append(parse_label(item.get("tool_use_label")) or 0)
            extra["preds"].append(0)
        if task == 2:
            extra["called"].append(False)
        if task == 8:
            extra["coverage"].append(0.0)

    @staticmethod
    def _metrics(task: int, results: list[ItemResult], extra: dict[str, list[Any]]) -> dict[str, float]:
        if task == 1:
            return score.task1_scores(extra["labels"], extra["preds"])
        if task == 2:
            return score.task2_scores([(int(r.score), c) for r, c in zip(results, extra["called"], strict=True)])
        if task == 4:
            return score.task4_scores([(int(r.score), r.status) for r in results],
                                      [bool(isinstance(r.prediction, dict) and r.prediction.get("strict"))
                                       for r in results])
        if task == 7:
            kept = [r.score for r in results if r.status != "excluded"]
            return {"progress": score.rate(kept) if kept else 0.0,
                    "progress_failed_as_0": score.rate([r.score for r in results])}
        name = {3: "clarification_rate", 5: "pass_rate", 6: "pass_rate", 7: "progress", 8: "pass_rate"}[task]
        metrics = {name: score.rate([r.score for r in results])}
        if task == 6 and extra["url_rule"]:
            metrics["url_rule_pass"] = score.rate(extra["url_rule"])
        if task == 8 and extra["coverage"]:
            metrics["api_coverage"] = score.rate(extra["coverage"])
        return metrics

    def _scoring(self, task: int) -> str:
        who = f"evaluator {self.evaluator.identity}" if self.evaluator else ""
        if task in (1, 2):
            return "rules (eval_func.py)"
        if task == 4:
            return ("rule check on the API result (eval_func.py evaluate_task4); strict_correct_rate: schema checks "
                    "and " + (who or "the ref_call column when present"))
        if who:
            return f"{who} (verdicts read as eval_func.py reads them)"
        return f"rules — no --evaluator, so task {task}'s figure is NOT the paper's"

    # ------------------------------------------------------------------------------------------ tasks 1-3
    def _sends_functions(self) -> bool:
        if self._legacy is None:
            self._legacy = self.functions_api == "functions" or (
                self.functions_api == "auto" and wire.openai_family(self.model) is not None)
        return self._legacy

    def _functions_note(self) -> str:
        if self._sends_functions():
            return "functions offered with the legacy functions= parameter (agent_interface.py perform_task1-3)"
        why = f" (the provider refused functions=: {self._refused})" if self._refused else ""
        return f"functions offered with tools=, only the first call read, as the legacy API returns one{why}"

    def _first(self, task: int, item: TaskItem, api_ids: list[str], ask_user: bool = False) -> agent.FirstReply:
        """The first reply of tasks 1-3, offered as `functions_api` says; under "auto", a provider's refusal of
        `functions=` switches the run to `tools=` and this item is asked again."""
        while True:
            legacy = self.paper and self._sends_functions()
            try:
                return agent.first_reply(self.model, self.catalog, task, item.instruction, api_ids, paper=self.paper,
                                         ask_user=ask_user, functions_api="functions" if legacy else "tools",
                                         rename_duplicates=self.rename_duplicates)
            except agent.FunctionsRefused as exc:
                if self.functions_api != "auto":
                    raise
                self._legacy, self._refused = False, shorten(str(exc), 200)

    # ------------------------------------------------------------------------------------------ tasks
    def _task1(self, item: TaskItem, extra: dict[str, Any]) -> ItemResult:
        """`perform_task1` / `evaluate_task1`: the row's API offered; a call in the reply = tool used."""
        label = parse_label(item.get("tool_use_label"))
        if label is None:
            raise LookupError(f"column 'tool_use_label' must be 0 or 1, got {item.get('tool_use_label')!r}")
        first = self._first(1, item, [self._api(item)])
        extra["labels"].append(label)
        extra["preds"].append(int(first.called))
        right = int(first.called) == label
        reason = "" if right else ("misuse tools" if label == 0 else "failed to decide the usage")
        return ItemResult(item.id, item.type, float(right), {"use_tool": first.called}, reason)

    def _task2(self, item: TaskItem, extra: dict[str, Any]) -> ItemResult:
        """`perform_task2` / `evaluate_task2`: the right API first, then up to five similar ones (paper: in file
        order, as they are — a similar API that shares the right one's name is offered under that name too, and
        the authors compare names only)."""
        right = self._api(item)
        similar = [resolve_api(self.catalog, t, a, item.where("simi_apis")) for t, a in item.simi_apis()]
        candidates = [right, *similar[:SIMILAR_APIS]]
        if not self.paper:
            candidates = _shuffled(item.id, list(dict.fromkeys(candidates)))
        first = self._first(2, item, candidates)
        offered = first.offer
        parsed = all(c.parsed for c in first.calls)
        first_name = first.calls[0].function if first.calls else None
        value, reason = score.task2_item(first.called, parsed, first_name, offered.name_of(right),
                                         [n for n, a in offered.entries if a != right])
        extra["called"].append(first.called)
        return ItemResult(item.id, item.type, float(value), {"function": first_name, "offered": offered.names},
                          reason)

    def _task3(self, item: TaskItem, extra: dict[str, Any]) -> ItemResult:
        """`perform_task3` / `evaluate_task3`: a call = "misuse tools" (0); otherwise the evaluator decides whether
        the reply asks the user for more information (`_check_clarification`)."""
        first = self._first(3, item, [self._api(item)], ask_user=self.ask_user)
        asks = [c for c in first.calls if c.function == agent.ASK_USER]
        calls = [c for c in first.calls if c.function != agent.ASK_USER]
        pred = {"text": first.text, "calls": [c.function for c in first.calls]}
        if asks and not calls:  # ours: the ask_user function
            return ItemResult(item.id, item.type, 1.0, pred, "asked through ask_user")
        if calls:
            return ItemResult(item.id, item.type, 0.0, pred, "misuse tools")
        if self.evaluator is not None:
            v = self._judge(3, P.clarification_prompt(first.content if self.paper else first.text, self.prompts))
            return ItemResult(item.id, item.type, float(v.passed), pred,
                              "" if v.passed else "the response is not to request for clarification")
        asked = "?" in first.text  # ours, without an evaluator
        return ItemResult(item.id, item.type, float(asked), pred, "a question mark in the reply" if asked else
                          "no question in the reply")

    def _task4(self, item: TaskItem, extra: dict[str, Any]) -> ItemResult:
        """`perform_task4` / `evaluate_task4`: the paper's figure is the rule check on the API's result; the
        evaluator's verdict on the call only feeds our strict figure."""
        api_id = self._api(item)
        api = self.catalog.api(api_id)
        fill = agent.fill_parameters(self.model, self.catalog, item.instruction, api_id, self.executor,
                                     paper=self.paper)
        call = fill.call
        called = call is not None
        # _check_params_with_rule reads json.dumps(<the tool message>) (paper); ours, the result text
        rule_text = json.dumps(fill.tool_message) if fill.tool_message is not None else fill.tool_result
        value, reason = score.task4_rule(called, bool(call and call.parsed), rule_text)
        # perform_task4 runs json.loads on the first call's arguments: when that fails the run raises and the
        # notebook leaves the row out of evaluate_task4 (scored 0 in its list)
        status = "none" if call is None else "call" if call.parsed else "excluded"
        strict, why = False, "no function call"
        if call is not None:
            strict, why = score.check_raw_call(api, call.api_id == api_id and call.parsed, call.args)
            if strict and self.evaluator is not None:
                # paper: what evaluate_task4 passes _check_params_with_gpt4 (the conversation perform_task4
                # returned, as str(), and the first call's dict as model_dump() holds it); ours: the instruction
                authors = P.authors_task4_inputs(fill.conversation) if self.paper and fill.conversation else None
                instruction, checked = authors if authors is not None else (
                    item.instruction, {"name": call.function, "arguments": call.args})
                try:
                    v = self._judge(4, P.call_check_prompt(instruction, fill.offer.functions[0], checked,
                                                           self.prompts))
                    strict, why = v.passed, v.reason
                except EvaluatorFault:
                    raise
                except Exception as exc:  # _check_params_with_gpt4: a failed check costs only the verdict
                    strict, why = False, f"WARNING: evaluator failed: {type(exc).__name__}: {exc}"
            elif strict and item.ref_call() is not None:
                strict, why = score.matches_reference(call.args, item.ref_call() or {})
        pred = {"function": call.function if call else None, "args": call.args if call else None,
                "tool_result": fill.tool_result, "strict": strict, "strict_reason": why}
        return ItemResult(item.id, item.type, float(value), pred, reason, status=status)

    def _task5(self, item: TaskItem, extra: dict[str, Any]) -> ItemResult:
        """`perform_task5` / `evaluate_task5`: the evaluator's verdict on the direct answer."""
        answer = agent.answer_directly(self.model, item.instruction, paper=self.paper)
        if self.evaluator is not None:
            v = self._judge(5, P.direct_answer_prompt(item.instruction, answer, self.prompts))
            return ItemResult(item.id, item.type, float(v.passed), {"answer": answer}, v.reason)
        ok, why = score.has_facts(answer, item.facts())
        return ItemResult(item.id, item.type, float(ok), {"answer": answer}, why)

    def _task6(self, item: TaskItem, extra: dict[str, Any]) -> ItemResult:
        """`perform_task6` / `evaluate_task6`: the URL rule on the reply, then the evaluator's verdict. Paper: the
        evaluator sees what `_check_response_w_tool` gives it — the user's content, the assistant's `function_call`
        (`json.dumps` of it when a dict, else as it is: the release's null reads "None"), the tool message's content
        as the release has it and the reply's content; a failed evaluator call scores 0 with a warning (the authors'
        handler raises NameError there: a working version returns its 0)."""
        conv = item.conv()
        answer = agent.answer_from_conversation(self.model, self.catalog, conv, paper=self.paper)
        full = [*conv, {"role": "assistant", "content": answer}]
        tool_text = str(full[-2].get("content") or "")
        ok, why = score.task6_rule([str(m.get("role")) for m in full], tool_text, answer)
        extra["url_rule"].append(float(ok))
        pred = {"answer": answer}
        if not ok:
            return ItemResult(item.id, item.type, 0.0, pred, why)
        if self.evaluator is not None:
            start = 1 if conv and conv[0].get("role") == "system" else 0
            if self.paper:
                fc = conv[start + 1].get("function_call")
                prompt = P.tool_answer_prompt(f"{conv[start].get('content')}",
                                              json.dumps(fc, ensure_ascii=False) if isinstance(fc, dict) else f"{fc}",
                                              f"{conv[start + 2].get('content')}", answer, self.prompts)
            else:
                call = conv[start + 1].get("function_call") or conv[start + 1].get("tool_calls")
                prompt = P.tool_answer_prompt(str(conv[start].get("content") or ""), call, tool_text, answer,
                                              self.prompts)
            try:
                v = self._judge(6, prompt)
            except EvaluatorFault:
                raise
            except Exception as exc:
                return ItemResult(item.id, item.type, 0.0, pred,
                                  f"WARNING: fail to check. Exception: {type(exc).__name__}: {exc}")
            return ItemResult(item.id, item.type, float(v.passed), pred, v.reason)
        ok, why = score.has_facts(answer, item.facts())
        return ItemResult(item.id, item.type, float(ok), pred, why)

    def _task7(self, item: TaskItem, extra: dict[str, Any]) -> ItemResult:
        """`perform_task7` / `evaluate_task7`: 1 when the evaluator says the problem was solved, else the step
        progress against the best reference sequence (`_check_act_steps`)."""
        if self.executor is None:
            raise LookupError("task 7 executes API calls: the runner needs an executor")
        main = self._api(item)
        deps = [resolve_api(self.catalog, t, a, item.where("dep")) for t, a in item.deps()]
        alternatives = item.ref_steps()
        if not alternatives:
            raise LookupError("column 'ref_steps' is empty")
        ids = [main, *deps]  # perform_task7: the main API's document, then each dependency's, as listed
        chain = agent.solve_chain(self.model, self.catalog, self.executor, item.instruction,
                                  ids if self.paper else _shuffled(item.id, list(dict.fromkeys(ids))),
                                  paper=self.paper)
        pred: dict[str, Any] = {"calls": [asdict(s) for s in chain.steps], "answer": chain.answer, "stopped": chain.stopped,
                "aborted": chain.aborted}
        if chain.aborted:
            return ItemResult(item.id, item.type, 0.0, pred, f"failed as the authors' run does: {chain.aborted}",
                              status="excluded")
        if self.evaluator is not None:
            try:
                v = self._judge(7, P.solved_prompt(chain.messages, self.prompts))
            except EvaluatorFault:
                raise
            except Exception as exc:  # evaluate_task7: a failed evaluation scores 0 and stays in the average
                return ItemResult(item.id, item.type, 0.0, pred,
                                  f"WARNING: to double check. failed to evaluate: {type(exc).__name__}: {exc}")
            if v.passed:
                return ItemResult(item.id, item.type, 1.0, pred, v.reason)
        steps = [(s.api_name, s.ok) for s in chain.steps]
        if self.evaluator is not None and self.task7_steps == "evaluator":
            try:
                steps = self._extracted_steps(chain.messages)
            except EvaluatorFault:
                raise
            except Exception as exc:  # evaluate_task7: a failed evaluation scores 0 and stays in the average
                return ItemResult(item.id, item.type, 0.0, pred,
                                  f"WARNING: to double check. failed to evaluate: {type(exc).__name__}: {exc}")
            pred["extracted_steps"] = [[name, ok] for name, ok in steps]
        prog = score.task7_progress(steps, alternatives)
        return ItemResult(item.id, item.type, prog, pred, f"step progress {prog:.2f}")

    def _extracted_steps(self, conversation: list[dict[str, Any]]) -> list[tuple[str, bool]]:
        """Task 7's steps as `eval_func.py _check_act_steps` gets them: up to 5 times `_extract_tools` — the
        evaluator lists the tools used and their results (`score.extracted_steps`); a reply listing none gives
        the conversation's function calls, each a success (`score.called_functions`) — until a try gives steps
        (no steps: progress 0). Each try is a new ask (its own cache entry). `_extract_tools` retries a failing
        call and then falls back: a call that fails for good raises `EvaluatorFault` here, or with
        `failed_as_zero` falls back as there."""
        assert self.evaluator is not None
        prompt = P.extract_tools_prompt(conversation, self.prompts)
        key = self.prompts.key if self.prompts is not None else ""
        steps: list[tuple[str, bool]] = []
        for draw in range(TASK7_EXTRACT_TRIES):
            try:
                steps = score.extracted_steps(self.evaluator.reply(7, "extract_tools", prompt, key, draw))
            except Exception as exc:
                self._faults += 1
                if not self.failed_as_zero:
                    raise EvaluatorFault(fault_text(exc, self.evaluator.model), unscored=0, total=0) from None
                steps = []
            steps = steps or score.called_functions(conversation)
            if steps:
                break
        return steps

    def _task8(self, item: TaskItem, extra: dict[str, Any]) -> ItemResult:
        """`perform_task8` / `evaluate_task8`: the evaluator's verdict on the plan's soundness."""
        ids = [resolve_api(self.catalog, t, a, item.where("comb")) for t, a in item.comb()]
        if not ids:
            raise LookupError("column 'comb' lists no API")
        plan = agent.plan_outline(self.model, self.catalog, item.instruction, ids, paper=self.paper,
                                  book=self.prompts)
        names = [self.catalog.api(a).name for a in ids]
        coverage = score.outline_coverage(plan.outline, names)
        pred = {"outline": plan.outline, "coverage": coverage}
        if self.evaluator is not None:
            v = self._judge(8, P.plan_check_prompt(plan.task_text, plan.outline, self.prompts))
            extra["coverage"].append(coverage)
            return ItemResult(item.id, item.type, float(v.passed), pred, v.reason)
        extra["coverage"].append(coverage)
        return ItemResult(item.id, item.type, float(coverage == 1.0), pred, f"names {coverage:.0%} of the given APIs")
