"""The authors' in-loop judge (`AnyToolConfig.judge="anytool"`), as dyabel/AnyTool's code decides Solved.

1. `scripts/main.py` (main loop, after `solve_given_api_main`): a solve that did not end with an answer, or whose
   final answer contains one of `EXCLUSION_WORDS` (`anytool/api_database_function.py exclusion_words`; a plain
   substring test, case-sensitive), is Unsolved without asking the evaluator;
2. `anytool/verifier.py check_solved_toolbench`: three ToolEval samples (`anytool/check_solved.py
   compute_pass_rate`, each ToolEval's two-stage `check_is_solved`); each gives passed / failed by ToolEval's
   `is_passed` with the task "Solvable" (main.py passes `task_solvable='Solvable'`, checked by hand): Solved →
   passed, Unsolved → failed, Unsure → a coin flip (`random.random() < 0.5`; ours is seeded by the query, the
   answer and the sample, so a re-run repeats it);
3. Solved when passed >= failed (a tie is Solved), else Unsolved.

The authors return the reason of a sample drawn at random; ours is the first sample that agrees with the verdict.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

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


def seeded_coin(*parts: object) -> bool:
    """A reproducible fair coin for an Unsure sample (ToolEval flips `random.random() < 0.5`)."""
    return hashlib.sha256(json.dumps(parts, default=str).encode()).digest()[0] < 128


def sample_passed(label: str, coin: bool) -> bool:
    """One sample's pass as ToolEval's `is_passed` gives it for a task judged Solvable: Solved passes, Unsolved
    fails, Unsure is settled by `coin`."""
    if label == "Solved":
        return True
    if label == "Unsolved":
        return False
    return coin


def majority_solved(passes: Sequence[bool]) -> bool:
    """verifier.py `check_solved_toolbench`: Solved when passed samples are at least as many as failed ones."""
    passed = sum(passes)
    return passed >= len(passes) - passed
