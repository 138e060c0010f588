"""Argument types for the `anytool` command line (argparse `type=`): numbers with a lower bound."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def _bounded(convert: Callable[[str], float], what: str, least: float, strict: bool) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
        if not math.isfinite(value):  # nan compares false with every bound; inf is no limit a run can reach
            raise argparse.ArgumentTypeError(f"must be a finite number: {text!r}")
        if value < least or (strict and value == least):
            raise argparse.ArgumentTypeError(f"must be positive: {value}" if strict else f"must be {least} or more: {value}")
        return value

    return parse


positive_int: Callable[[str], int] = _bounded(int, "an integer", 0, strict=True)  # type: ignore[assignment]
count: Callable[[str], int] = _bounded(int, "an integer", 0, strict=False)  # type: ignore[assignment]
positive_float: Callable[[str], float] = _bounded(float, "a number", 0, strict=True)


# the per-query budgets (AnyToolConfig.token_budget / max_cost / max_seconds), shared by `anytool run` and
# `anytool eval run`
BUDGET_FIELDS = ("token_budget", "max_cost", "max_seconds")


def add_budget_args(p: argparse.ArgumentParser, *token_aliases: str) -> None:
    """`--max-tokens-per-query`, `--max-cost` and `--max-seconds` (dests: the AnyToolConfig fields)."""
    p.add_argument("--max-tokens-per-query", *token_aliases, dest="token_budget", type=positive_int, default=None,
                   metavar="N",
                   help="stop a query's run once its model calls have used N tokens (input + output, every role; "
                        "default 200000, the AnyTool paper's): status budget_exhausted, stop_reason tokens")
    p.add_argument("--max-cost", dest="max_cost", type=positive_float, default=None, metavar="USD",
                   help="stop a query's run once its model calls have cost USD dollars, priced per 1M tokens by "
                        "the model's profile (the built-in table, or --set model_profiles=...); a model without "
                        "a known price is refused up front. Status budget_exhausted, stop_reason cost "
                        "(default: no limit)")
    p.add_argument("--max-seconds", dest="max_seconds", type=positive_float, default=None, metavar="S",
                   help="stop a query's run once S seconds of wall time have passed since it started, checked "
                        "before each model call (a call in flight finishes; a resumed run counts from its first "
                        "start). Status budget_exhausted, stop_reason wall_time; the run still ends with its "
                        "answer and record (default: no limit)")


def budget_values(args: argparse.Namespace) -> dict[str, float]:
    """The budget flags that were given, as AnyToolConfig field values."""
    return {name: getattr(args, name) for name in BUDGET_FIELDS if getattr(args, name, None) is not None}
