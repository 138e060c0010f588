"""X-PLUG/Multi-LLM-Agent's (α-UMi's) role prompts (`anytool eval steps --prompts-from`): `prompt_dict` of
`GLPFT/utils/prompt_lib.py`, the entries `GLPFT/inference_utils/toolbench/infer_pipeline.py` uses for ToolBench
(`toolbench_planner`, `toolbench_caller`, `toolbench_summarizer`; ToolBench-multiLLM's `qa_pipeline.py` defaults).

The authors fill them with `.replace`: `{doc}` the tools (one JSON line each), `{tool_names}` their names joined by
", ", `{history}` the conversation so far, `{thought}` the planner's output (the caller's prompt); the summarizer's
entry has only `{history}`. The whole filled text is the model's input (one user message here).
"""

from __future__ import annotations

from pathlib import Path

from .book import BookSpec, PromptBook, Slot, load_book

REPO = "X-PLUG/Multi-LLM-Agent"
PROMPT_LIB = "GLPFT/utils/prompt_lib.py"

SPEC = BookSpec(
    repo=REPO,
    marker=PROMPT_LIB,
    slots=(
        ("planner", Slot(PROMPT_LIB, "prompt_dict['toolbench_planner']", "replace",
                         (("doc", "doc"), ("history", "history")), "planner input")),
        ("caller", Slot(PROMPT_LIB, "prompt_dict['toolbench_caller']", "replace",
                        (("doc", "doc"), ("history", "history"), ("thought", "thought"), ("tool_names", "tool_names")),
                        "caller input")),
        ("summarizer", Slot(PROMPT_LIB, "prompt_dict['toolbench_summarizer']", "replace", (("history", "history"),),
                            "summarizer input")),
    ),
)


def umi_book(root: str | Path) -> PromptBook:
    """α-UMi's role prompts of the checkout at `root` (refused in one line when something is missing or differs)."""
    return load_book(SPEC, root)


# α-UMi's run-time pipeline (ToolBench-multiLLM `toolbench/inference/LLM/collab_agent_model.py` `CollbaAgentV3`)
# reads `prompt_dict[prompt_type[...]]` of its own `Downstream_tasks/prompt_lib.py`. `qa_pipeline.py`'s defaults
# name "toolbench_planner" / "toolbench_caller" / "toolbench_summarizer", which that file does not hold (at f9eeef7);
# its entries with the same texts as GLPFT's are "v9_assistant", "v9_caller" and "v9_conclusion", read here.
RUN_PROMPT_LIB = "ToolBench-multiLLM/toolbench/inference/Downstream_tasks/prompt_lib.py"

RUN_SPEC = BookSpec(
    repo=REPO,
    marker=RUN_PROMPT_LIB,
    slots=(
        ("planner", Slot(RUN_PROMPT_LIB, "prompt_dict['v9_assistant']", "replace",
                         (("doc", "doc"), ("history", "history")), "the run's planner input")),
        ("caller", Slot(RUN_PROMPT_LIB, "prompt_dict['v9_caller']", "replace",
                        (("doc", "doc"), ("history", "history"), ("thought", "thought"), ("tool_names", "tool_names")),
                        "the run's caller input")),
        ("summarizer", Slot(RUN_PROMPT_LIB, "prompt_dict['v9_conclusion']", "replace", (("history", "history"),),
                            "the run's summarizer input")),
    ),
)


def umi_run_book(root: str | Path) -> PromptBook:
    """α-UMi's run-time role prompts (`RUN_SPEC`) of the checkout at `root` (refused in one line when missing)."""
    return load_book(RUN_SPEC, root)
