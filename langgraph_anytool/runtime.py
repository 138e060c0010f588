"""What a compiled graph's nodes share at run time: catalog, models, executor, limits, run signals."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .catalog import Catalog
from .config import AnyToolConfig
from .llm import ModelSet

if TYPE_CHECKING:
    from .tools.pipeline import ApiExecutor


class RunSignals:
    """Run-scoped, in-process signals that parallel branches cannot see through state.

    - the stop signal: a tool agent found the pool solvable in round r of run k; every agent loop checks it
      before each model call and stops (status `stopped`);
    - the token tally: tokens spent so far in the run, across all branches, checked against the budget.

    Not checkpointed: after a resume the graph re-derives both from state (`solvable_round`, `usage`).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stopped: set[tuple[str, int]] = set()
        self._tokens: dict[str, int] = {}

    def stop(self, run_key: str, round_: int) -> None:
        with self._lock:
            self._stopped.add((run_key, round_))

    def is_stopped(self, run_key: str, round_: int) -> bool:
        with self._lock:
            return (run_key, round_) in self._stopped

    def seed_tokens(self, run_key: str, tokens: int) -> None:
        """Set the tally to at least `tokens` (e.g. the checkpointed usage after a resume)."""
        with self._lock:
            self._tokens[run_key] = max(self._tokens.get(run_key, 0), tokens)

    def add_tokens(self, run_key: str, tokens: int) -> int:
        with self._lock:
            self._tokens[run_key] = self._tokens.get(run_key, 0) + tokens
            return self._tokens[run_key]

    def tokens(self, run_key: str) -> int:
        with self._lock:
            return self._tokens.get(run_key, 0)

    def forget(self, run_key: str) -> None:
        with self._lock:
            self._tokens.pop(run_key, None)
            self._stopped = {k for k in self._stopped if k[0] != run_key}


@dataclass(frozen=True)
class Deps:
    """Everything a node needs besides its state; captured by the node factories."""

    catalog: Catalog
    models: ModelSet
    executor: ApiExecutor
    config: AnyToolConfig
    signals: RunSignals = field(default_factory=RunSignals)

    def over_budget(self, run_key: str) -> bool:
        return self.signals.tokens(run_key) >= self.config.token_budget
