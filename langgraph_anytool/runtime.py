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
    - the token tally: tokens spent so far in the run, across all branches, checked against the budget;
    - the live API pool (the paper's global pool): what parallel tool agents have added so far, so that the cap
      holds across them and `check_if_request_solvable` judges the whole pool, not one agent's share.

    Not checkpointed: the graph re-derives all three from state (`solvable_round`, `usage`, `api_pool`) at every
    dispatch, so a resumed run starts from the checkpoint's values.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stopped: set[tuple[str, int]] = set()
        self._tokens: dict[str, int] = {}
        self._pools: dict[str, dict[str, None]] = {}  # run -> ordered set of API ids
        self._removed: dict[str, set[str]] = {}

    def sync_pool(self, run_key: str, api_ids: list[str], removed: list[str]) -> None:
        """Reset the live pool to the checkpointed one (called between supersteps)."""
        with self._lock:
            self._pools[run_key] = dict.fromkeys(api_ids)
            self._removed[run_key] = set(removed)

    def pool_ids(self, run_key: str) -> list[str]:
        with self._lock:
            return list(self._pools.get(run_key, {}))

    def try_add(self, run_key: str, api_id: str, cap: int) -> str:
        """Atomically add to the live pool: "added", "already", "full" or "removed" (pruned by reflection)."""
        with self._lock:
            pool = self._pools.setdefault(run_key, {})
            if api_id in pool:
                return "already"
            if api_id in self._removed.get(run_key, ()):
                return "removed"
            if len(pool) >= cap:
                return "full"
            pool[api_id] = None
            return "added"

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
            self._pools.pop(run_key, None)
            self._removed.pop(run_key, None)
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
