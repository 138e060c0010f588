"""The authors' in-loop judge (`AnyToolConfig.judge="anytool"`), as dyabel/AnyTool's code decides Solved.

1. `scripts/main.py` (main loop, after `solve_given_api_main`): a solve that did not end with an answer, or whose
   final answer contains one of `EXCLUSION_WORDS` (`anytool/api_database_function.py exclusion_words`; a plain
   substring test, case-sensitive), is Unsolved without asking the evaluator;
2. `anytool/verifier.py check_solved_toolbench`: three ToolEval samples (`anytool/check_solved.py
   compute_pass_rate`, each ToolEval's two-stage `check_is_solved`); each gives passed / failed by ToolEval's
   `is_passed` with the task status main.py passes: the plain string `task_solvable = 'Solvable'`. So
   `compute_pass_rate` skips its own solvability check, and in AnyTool's `toolbench/tooleval/evaluators/
   registered_cls/rtl.py is_passed` the string never equals `TaskStatus.Solvable` (a plain `Enum`): Solved →
   passed, and Unsolved *and Unsure* fall through to the final `return AnswerPass.Failed`. An Unsure sample is
   therefore failed; the coin (`random.random() < 0.5`) is never reached in the authors' loop;
3. Solved when passed >= failed (a tie is Solved), else Unsolved.

The verdict's reason (what a user reads) is the first sample that agrees with the verdict, with the vote. The
reason `check_solved_toolbench` returns is `random.sample(reason_list, 1)[0]`: any sample's, passed or failed,
drawn at random; that one is kept as the verdict's `sample_reason` (drawn reproducibly, `seeded_index`), which
`failure_reason_form="verbatim"` hands the re-activated agents as main.py does.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..draws import seeded_coin, seeded_index

# seeded_coin: the reproducible coin for an Unsure sample where ToolEval flips one (`random.random() < 0.5` in
# StableToolBench's `eval_pass_rate.py compute_pass_rate`; the `toolllm` pass rate's, not AnyTool's judge's)
__all__ = ["EXCLUSION_WORDS", "excluded_word", "majority_solved", "sample_passed", "seeded_coin", "seeded_index"]

EXCLUSION_WORDS: tuple[str, ...] = (
    "sorry", "apologize", "apology", "unfortunately", "couldn't", "could not", "can't", "cannot", "unable",
    "regret", "not successfully",
)


def excluded_word(answer: str) -> str | None:
    """The first of `EXCLUSION_WORDS` (in the list's order) that `answer` contains, or None.

    A plain substring test on the answer as written, as main.py's `word in final_answer`: case-sensitive ("Sorry"
    does not match "sorry"), no word boundaries, the apostrophe as typed (ASCII `'`). The rule belongs to AnyTool's
    protocol (Eq. 2; also the eval-side pass rate, `eval/passrate.py`), not to ToolEval's SoPR.
    """
    return next((word for word in EXCLUSION_WORDS if word in answer), None)


def sample_passed(label: str) -> bool:
    """One sample's pass as the authors' loop gets it (`check_solved.py compute_pass_rate` → `rtl.py is_passed`
    with `task_status='Solvable'`, a string): only Solved passes; Unsolved and Unsure fail (see the module doc)."""
    return label == "Solved"


def majority_solved(passes: Sequence[bool]) -> bool:
    """verifier.py `check_solved_toolbench`: Solved when passed samples are at least as many as failed ones."""
    passed = sum(passes)
    return passed >= len(passes) - passed
