"""An evaluator call that failed for good, and what the evaluation commands do about it.

A pass rate, a task's figure or a step metric is only honest over items the evaluator scored. When an evaluator
call fails (after the retries its call allows: `models.llm.call_role`), the command stops asking it and raises
`EvaluatorFault`: the CLI prints one line naming the evaluator and the fault and exits with
`cli.exits.EXIT_EVALUATOR`, and no figure is printed from the items that were not scored. Verdicts already given
stay in the evaluator's cache, so the same command, once the evaluator answers, asks only for the rest.
`--failed-as-zero` (what the authors' scripts do: StableToolBench's and OPPO's count a failed check as a failure)
scores those items as failed instead, and says how many.
"""

from __future__ import annotations

from typing import Any

from ..models.guard import describe_error, model_secrets
from ..models.llm import ModelCallError


class EvaluatorFault(RuntimeError):
    """The evaluator failed; `fault` says how (one line, secrets masked), `unscored` how many of `total` items
    were left without a score, `where` the first item it failed on."""

    def __init__(self, fault: str, *, unscored: int, total: int, where: str = "") -> None:
        super().__init__(fault)
        self.fault, self.unscored, self.total, self.where = fault, unscored, total, where

    def line(self, evaluator: str, items: str = "queries", figure: str = "pass rate") -> str:
        """The one line the CLI prints for it."""
        at = f" on {self.where}" if self.where else ""
        return (f"evaluator {evaluator} failed{at} ({self.fault}); {self.unscored} of {self.total} {items} not "
                f"scored, so no {figure} is printed; run the same command again once the evaluator answers (the "
                "verdicts given are cached), or pass --failed-as-zero to score them as failed")


def fault_text(exc: BaseException, evaluator: Any = None) -> str:
    """One line describing an evaluator call's failure: a `ModelCallError`'s own text (kind first), else the
    provider error's, the evaluator's secrets masked."""
    if isinstance(exc, ModelCallError):
        return describe_error(exc, model_secrets(evaluator), 400)
    return f"{type(exc).__name__}: {describe_error(exc, model_secrets(evaluator), 400)}"


def failed_as_zero_note(failed: int, total: int, items: str = "queries") -> str:
    """The note printed with figures that count evaluator failures as failed items."""
    return (f"{failed} of {total} {items} were not scored by the evaluator (its call failed) and count as failed "
            "(--failed-as-zero)")
