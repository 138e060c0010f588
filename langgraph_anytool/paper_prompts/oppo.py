"""OPPO-Mente-Lab/agent_eval's prompts (`anytool eval tasks --prompts-from`): the `prompt` f-strings of
`eval_scripts/eval_func.py` (the evaluator's, one user message each, read by `_get_gpt_response`) and of
`eval_scripts/agent_interface.py perform_task8` (the model under test's task 8 message).

Each placeholder is the expression the authors' f-string holds, filled with the value our task runner computes for
it (`eval/oppo/prompts.py`).
"""

from __future__ import annotations

from pathlib import Path

from .book import BookSpec, PromptBook, Slot, load_book

REPO = "OPPO-Mente-Lab/agent_eval"
EVAL_FUNC = "eval_scripts/eval_func.py"
AGENT = "eval_scripts/agent_interface.py"

SPEC = BookSpec(
    repo=REPO,
    marker=EVAL_FUNC,
    slots=(
        ("task3_check", Slot(EVAL_FUNC, "_check_clarification:prompt", "literal", (("content", "reply"),),
                             "task 3 evaluator")),
        ("task4_check", Slot(EVAL_FUNC, "_check_params_with_gpt4:prompt", "literal",
                             (("user_instruction", "instruction"), ("api_doc_text", "api_doc"),
                              ("func_call_text", "call")), "task 4 evaluator")),
        ("task5_check", Slot(EVAL_FUNC, "_check_direct_response:prompt", "literal",
                             (("user_msg", "instruction"), ("resp", "reply")), "task 5 evaluator")),
        ("task6_check", Slot(EVAL_FUNC, "_check_response_w_tool:prompt", "literal",
                             (("user_msg", "instruction"), ("assistant_msg", "call"), ("func_return", "tool_result"),
                              ("final_resp", "reply")), "task 6 evaluator")),
        ("task7_check", Slot(EVAL_FUNC, "_check_answer:prompt", "literal", (("conv_str", "conversation"),),
                             "task 7 evaluator")),
        ("task7_extract", Slot(EVAL_FUNC, "_extract_tools:prompt", "literal", (("conv_str", "conversation"),),
                               "task 7 step extraction (the evaluator lists the tools used and their results)")),
        ("task8_check", Slot(EVAL_FUNC, "_check_plan:prompt", "literal", (("task", "task"), ("plan", "plan")),
                             "task 8 evaluator")),
        ("task8_request", Slot(AGENT, "perform_task8:prompt", "literal",
                               (("instruction", "instruction"), ("api_doc_text", "tools")),
                               "task 8, the model under test's user message")),
    ),
)


def oppo_book(root: str | Path) -> PromptBook:
    """The OPPO prompts of the checkout at `root` (refused in one line when something is missing or differs)."""
    return load_book(SPEC, root)
