"""The in-loop judge (AnyTool §4.2-4.3): did the solver's answer solve the query? Solved / Unsolved / Unsure.

It follows ToolEval's two-stage procedure, as the paper's judge uses ToolBench's: a give-up or an empty answer is
Unsolved without a model call; otherwise `check_answer_status` on the query and answer, and on Unsure
`parse_answer_status` on the whole solve (the API calls with their truncated outputs). A final Unsure is not
Solved: the run reflects as on Unsolved. The judge has its own model (role "judge"), separate from any evaluator
(`eval/`), which runs the same procedure with its own model and cache.

With `judge="anytool"` (`AnyToolConfig.paper()`) the verdict is the authors' instead (`anytool.py`): an answer
with an exclusion word is Unsolved, else `judge_samples` ToolEval checks vote (only a Solved sample passes: an
Unsure sample fails, as in the authors' loop) and the answer is Solved when passed >= failed; the verdict is then
never Unsure. Its `sample_reason` is the reason of one sample drawn as `check_solved_toolbench` draws it (any
sample, passed or failed), which `failure_reason_form="verbatim"` gives the re-activated agents.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NotRequired

from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from langgraph.types import Command
from typing_extensions import TypedDict

from ...models.llm import BUDGET_KIND, ModelCallError, ModelNotConfiguredError
from ...state import AnyToolState, SolverAttempt, run_event, since
from ...text import shorten, shorten_counted
from ...tools.observation import Status, reported_error_in_text
from ..abilities.router import DIRECT_MODE
from ..draws import seeded_index
from .anytool import excluded_word, majority_solved, sample_passed
from .converted import converted_answer
from .tooleval import JudgeResult, add_usage, check_is_solved
from .tooleval_request import request_for, with_settings

if TYPE_CHECKING:
    from ...runtime import Deps

_OBSERVED = frozenset(s.value for s in Status)

Label = Literal["Solved", "Unsolved", "Unsure"]


class Verdict(TypedDict):
    label: Label
    reason: str
    by: str  # "rule", or the ToolEval stage that decided: "answer" | "process"; "error": the judge's model failed;
    # judge "anytool": "exclusion" (an exclusion word), "majority" (the samples' vote)
    sample_reason: NotRequired[str]  # judge "anytool": the reason of the sample drawn as the authors draw it


def rule_verdict(attempt: SolverAttempt) -> Verdict | None:
    """The verdicts that need no model (a give-up, an empty answer: ToolEval's rule); None when the model decides."""
    if attempt["finish_type"] != "give_answer":
        reason = attempt["reason"] or f"the solver ended with {attempt['finish_type']}"
        return {"label": "Unsolved", "reason": reason, "by": "rule"}
    if not attempt["answer"].strip():
        return {"label": "Unsolved", "reason": "the final answer is empty", "by": "rule"}
    return None


def exclusion_verdict(attempt: SolverAttempt) -> Verdict | None:
    """judge "anytool": Unsolved without a model call when the answer holds an exclusion word (main.py)."""
    word = excluded_word(attempt["answer"])
    if word is None:
        return None
    return {"label": "Unsolved", "reason": f"the answer contains {word!r} (AnyTool's exclusion rule)",
            "by": "exclusion"}


def authors_verdict(samples: list[JudgeResult], *key: object) -> tuple[Verdict, dict[str, Any]]:
    """judge "anytool": the vote of the ToolEval samples (anytool.py) and their summed usage; `sample_reason` is
    one sample's reason drawn at random, passed or failed (verifier.py `check_solved_toolbench`:
    `random.sample(reason_list, 1)[0]`), reproducibly from `key` and the samples."""
    passes = [sample_passed(r.label) for r in samples]
    solved = majority_solved(passes)
    agreeing = [r for r, ok in zip(samples, passes, strict=True) if ok == solved]
    votes = f"{sum(passes)} of {len(passes)} samples passed"
    reason = f"{agreeing[0].reason} ({votes})" if agreeing and agreeing[0].reason else votes
    reasons = [r.reason for r in samples]
    drawn = reasons[seeded_index(len(reasons), *key, reasons)]
    usage: dict[str, Any] = {}
    for r in samples:
        usage = dict(add_usage(usage, r.usage))
    return {"label": "Solved" if solved else "Unsolved", "reason": reason, "by": "majority",
            "sample_reason": drawn}, usage


PROCESS_OUTPUT_CHARS = 600  # per API output shown to the judge


def carried_calls(attempt: SolverAttempt, earlier: Sequence[SolverAttempt]) -> list[tuple[Mapping[str, Any], str]]:
    """The API calls an attempt's root carries over from the previous attempt's chain — after a reflection the
    solver resumes from it (AnyTool §4.3; `nodes/solver/tree.py: seed_messages`) — as (the call's record in the
    earlier attempt, the output the root holds); only calls that reached the executor. An answer may rest on them
    alone: the judge and the answer's sources must count them."""
    tree = attempt.get("tree") or []
    if not tree or not earlier:
        return []
    outputs = {str(m.get("tool_call_id")): str(m.get("content", "")) for m in tree[0].get("messages", [])
               if m.get("role") == "tool"}
    if not outputs:
        return []
    records = {str(c.get("tool_call_id")): c for a in earlier for node in a.get("tree") or []
               for c in node.get("calls", [])}
    return [(records[i], text) for i, text in outputs.items() if i in records and records[i].get("status") in _OBSERVED]


def _judged_calls(attempt: SolverAttempt, earlier: Sequence[SolverAttempt]) -> list[tuple[Mapping[str, Any], str]]:
    """The carried calls, then the attempt's own calls on live nodes that reached the executor, with outputs."""
    out = carried_calls(attempt, earlier)
    for node in attempt["tree"]:
        if node.get("status") == "dead":
            continue
        outputs = {m.get("tool_call_id"): str(m.get("content", "")) for m in node.get("messages", [])
                   if m.get("role") == "tool"}
        out += [(c, outputs.get(c.get("tool_call_id"), "")) for c in node.get("calls", [])
                if c.get("status") in _OBSERVED]
    return out


def process_text(attempt: SolverAttempt, max_chars: int = PROCESS_OUTPUT_CHARS,
                 earlier: Sequence[SolverAttempt] = ()) -> str:
    """The solve the judge reviews: each API call on the answer's path (those carried over from `earlier`
    attempts first) with its status and (truncated) output."""
    lines = []
    for call, text in _judged_calls(attempt, earlier):
        text = shorten_counted(text, max_chars)
        args = json.dumps(call.get("arguments"), ensure_ascii=False, default=str)
        lines.append(f"- {call.get('function', '?')} → {call.get('status')}\n  arguments: {args}\n  output: {text}")
    return "\n".join(lines) or "(no API was called)"


def observed_calls(attempt: SolverAttempt, earlier: Sequence[SolverAttempt] = ()) -> list[dict[str, str]]:
    """The API calls of a solve that reached the executor, those carried over from `earlier` attempts included:
    function, status and, when the output reports a failure of its own (a script's traceback, `ok: false`), that
    `error` (structured judge input)."""
    return [{"function": str(c.get("function")), "status": str(c.get("status")),
             **({"error": shorten(failure, 200)} if (failure := reported_error_in_text(text)) else {})}
            for c, text in _judged_calls(attempt, earlier)]


def make_judge(base: Deps) -> Any:
    """The `judge` node: the verdict ({label, reason, by}) on the latest solver attempt, then the route: Solved →
    finalize; Unsolved or Unsure (Unsure never counts as solved) → reflect, while reflections and budget last; a
    solve ended by a model error, or a judge call that failed for good (verdict "by": "error") → finalize (status
    `error`: reflecting cannot mend a failing provider).
    An answer given without tools (the router's, mode "direct") that is not Solved → retrieval (`dispatch`)."""

    def judge(state: AnyToolState, runtime: Runtime[Any]) -> Command[Literal["reflect", "dispatch", "finalize"]]:
        deps = base.for_run(runtime.context)
        run_key = state.get("run_key", "")
        attempt = state["solver_attempts"][-1]
        t0 = since(state.get("started_at"), time.time())
        authors = deps.config.judge == "anytool"
        # a refusal of functions= is remembered for the run: later rounds' checks go with tools= at once
        request = request_for("functions", deps.paper_prompts,
                              refusal=deps.signals.functions_refusal(run_key, "judge")) if authors else None
        verdict = rule_verdict(attempt)
        if verdict is None and authors:
            verdict = exclusion_verdict(attempt)
        usage: dict[str, Any] = {}
        result: JudgeResult | None = None
        stop = deps.budget_stop(run_key) if verdict is None else None
        if stop is not None:
            verdict = {"label": "Unsure", "reason": f"not judged: {stop.reason}", "by": "rule"}
        elif verdict is None:
            try:
                earlier = state["solver_attempts"][:-1]
                model = deps.models.for_role("judge")
                if request is not None:  # AnyTool's check_solved.py → its own tooleval: config.yaml's settings, functions=
                    model, _ = with_settings(model, request.settings)
                # with the authors' prompts their check reads the converted answer (converted.py): the Finish
                # arguments in the first stage, json.dumps of the whole converted answer in the second
                converted = converted_answer(attempt) if authors and deps.paper_prompts is not None else None
                final, process = converted if converted is not None else (
                    attempt["answer"], process_text(attempt, earlier=earlier))
                samples = [check_is_solved(model, state["query"], final, process,
                                           inputs={"calls": observed_calls(attempt, earlier), "sample": i},
                                           on_usage=deps.meter(run_key), book=deps.paper_prompts,
                                           request=request if authors else None)
                           for i in range(deps.config.judge_samples if authors else 1)]
                if authors:
                    verdict, used_all = authors_verdict(samples, state["query"], attempt["answer"])
                    used_all = {k: v for k, v in used_all.items() if isinstance(v, int | float)}
                    usage = {"judge": used_all} if used_all else {}
                else:
                    result = samples[0]
            except (ModelNotConfiguredError, GraphBubbleUp):
                raise
            except ModelCallError as exc:  # the provider failed for good: the run ends as an error of that kind
                verdict = ({"label": "Unsure", "reason": shorten(f"not judged: {str(exc).split(': ', 1)[1]}", 500),
                            "by": "rule"}
                           if exc.kind == BUDGET_KIND else {"label": "Unsure", "reason": shorten(str(exc), 500),
                                                            "by": "error"})
                usage = exc.usage()
            except Exception as exc:  # a provider error must not discard the solver's answer
                verdict = {"label": "Unsure", "reason": shorten(f"judge model call failed: {type(exc).__name__}: {exc}", 500),
                           "by": "rule"}
            if result is not None:
                used: dict[str, Any] = {k: v for k, v in result.usage.items() if isinstance(v, int | float)}
                usage = {"judge": used} if used else {}  # (the run's tallies were metered call by call)
                label: Label = "Solved" if result.label == "Solved" else (
                    "Unsolved" if result.label == "Unsolved" else "Unsure")
                verdict = {"label": label, "reason": result.reason, "by": result.stage}
        assert verdict is not None
        event = run_event("judge", state.get("started_at"), attempt=attempt["attempt"], round=attempt["round"],
                          **{k: verdict.get(k, "") for k in ("label", "reason", "by")})
        if t0 is not None:
            event["t0"] = t0
        if request is not None and verdict.get("by") not in ("rule", None):
            event["evaluator_request"] = request.record()  # the call form sent and ToolEval's settings
        update = {"verdict": dict(verdict), "usage": usage, "events": [event]}
        if attempt["mode"] == DIRECT_MODE and verdict["label"] != "Solved" and not deps.over_budget(run_key):
            # the router's "no tool" was wrong: retrieve tools after all (not a reflection)
            why = f"the answer without tools was not accepted ({verdict['label']}: {verdict['reason']})"
            return Command(update={**update, "reason": shorten(why, 500)}, goto="dispatch")
        # imported here: reflection imports the agents' prompts, whose packages import the judge's request form
        from ..reflection import can_reflect

        if (verdict["label"] == "Solved" or attempt["finish_type"] == "error" or verdict["by"] == "error"
                or not can_reflect(state, deps)):
            return Command(update=update, goto="finalize")
        return Command(update={**update, "reflect_request": "new"}, goto="reflect")

    return judge
