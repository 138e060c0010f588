"""ToolEval's evaluator prompts (`anytool eval passrate --prompts-from`): the templates of the evaluator
`tooleval_gpt-3.5-turbo_default` in a checkout of StableToolBench (THUNLP-MT/StableToolBench; also found in ToolBench
and in dyabel/AnyTool, which carry the same `toolbench/tooleval`).

Where they live: `toolbench/tooleval/evaluators/<evaluator>/config.yaml` names the template file (`template.txt`),
whose `<function>` sections are the prompts, each sent as the only (user) message with its function forced
(`registered_cls/tooleval.py OpenAINormalizedEvaluator.function_call`: `.format(**func_args)`, a `reason` property
added). `registered_cls/rtl.py ReinforceToolLearningEvaluator` fills them: `check_answer_status` with the query and
the final answer, `parse_answer_status` with the query and `json.dumps(answer)` (the whole answer: final answer
and its details), `check_task_solvable` with `json.dumps({"query", "available_tools"})`.
"""

from __future__ import annotations

from pathlib import Path

from .book import BookSpec, PromptBook, Slot, load_book

REPO = "ToolEval (toolbench/tooleval of StableToolBench or ToolBench)"
EVALUATOR = "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default"  # eval_pass_rate.py --evaluator default
TOOLEVAL_CLS = "toolbench/tooleval/evaluators/registered_cls/tooleval.py"
# the `reason` property ToolEval adds to the forced function (`function_call(..., return_reason=True)`)
REASON_PROPERTY = "OpenAINormalizedEvaluator.function_call:func_description['parameters']['properties']['reason']"

# ToolEval's two-stage check (`rtl.py check_is_solved`), also AnyTool's in-loop judge (its clone's own tooleval)
CHECK_SLOTS: tuple[tuple[str, Slot], ...] = (
    ("judge_answer", Slot(EVALUATOR, "check_answer_status", "format", (("query", "query"), ("answer", "answer")),
                          "first stage (one user message)", kind="tooleval")),
    ("judge_process", Slot(EVALUATOR, "parse_answer_status", "format", (("query", "query"), ("answer", "answer_json")),
                           "second stage (one user message)", kind="tooleval")),
)
REASON_LITERAL = ("reason_property", TOOLEVAL_CLS, REASON_PROPERTY)

SPEC = BookSpec(
    repo=REPO,
    marker=f"{EVALUATOR}/config.yaml",
    slots=(
        *CHECK_SLOTS,
        ("judge_task", Slot(EVALUATOR, "check_task_solvable", "format", (("task", "task_json"),),
                            "solvability check of ToolLLM's Eq. 1 (one user message)", kind="tooleval")),
    ),
    literals=(REASON_LITERAL,),
)


def tooleval_book(root: str | Path) -> PromptBook:
    """ToolEval's evaluator prompts of the checkout at `root` (refused in one line when something is missing or
    differs)."""
    return load_book(SPEC, root)
