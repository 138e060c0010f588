"""Hallucination rate of live runs, from recorded solver trajectories (`SolverAttempt.tree`).

α-UMi's Hallu. (§4.2; the released scorer) counts predicted calls to a function that is not in the tool list the
step offered. In a live run the solver's execute node records each call's verdict: `not_in_pool` (an API of the
catalog that was not offered) and `unknown_function` (no such function at all) are such calls; `Finish` is a
decision, not a call. Two rates are given: per function call (the share of calls that were hallucinated) and per
step (hallucinated calls over model turns, α-UMi's denominator).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...protocol import FINISH_NAME

HALLUCINATED = frozenset({"not_in_pool", "unknown_function"})


@dataclass(frozen=True)
class HallucinationStats:
    steps: int  # model turns (tree nodes holding an assistant message)
    calls: int  # function calls other than Finish
    hallucinated: int
    unknown_function: int  # of which: the function does not exist at all
    functions: tuple[str, ...]  # the hallucinated names, in order of first use

    @property
    def per_call(self) -> float | None:
        return self.hallucinated / self.calls if self.calls else None

    @property
    def per_step(self) -> float | None:
        return self.hallucinated / self.steps if self.steps else None

    def to_dict(self) -> dict[str, Any]:
        return {"steps": self.steps, "calls": self.calls, "hallucinated": self.hallucinated,
                "unknown_function": self.unknown_function, "functions": list(self.functions),
                "per_call": self.per_call, "per_step": self.per_step}


def hallucination_stats(attempts: Iterable[Mapping[str, Any]]) -> HallucinationStats:
    """Hallucinated calls over every node of every attempt's tree (`SolverAttempt` dicts, as in a run's output
    `solver_attempts`)."""
    steps = calls = bad = unknown = 0
    names: dict[str, None] = {}
    for attempt in attempts:
        tree = attempt.get("tree") or []
        if not isinstance(tree, list):
            raise ValueError(f"solver attempt {attempt.get('attempt')!r}: 'tree' must be a list of nodes")
        for node in tree:
            if not isinstance(node, Mapping):
                raise ValueError(f"solver attempt {attempt.get('attempt')!r}: a tree node is not an object")
            if any(isinstance(m, Mapping) and m.get("role") == "assistant" for m in node.get("messages") or []):
                steps += 1
            for rec in node.get("calls") or []:
                if rec.get("function") == FINISH_NAME or str(rec.get("status", "")).startswith("finish"):
                    continue
                calls += 1
                if rec.get("status") in HALLUCINATED:
                    bad += 1
                    unknown += int(rec.get("status") == "unknown_function")
                    names.setdefault(str(rec.get("function")), None)
    return HallucinationStats(steps=steps, calls=calls, hallucinated=bad, unknown_function=unknown,
                              functions=tuple(names))
