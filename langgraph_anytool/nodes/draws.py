"""Reproducible stand-ins for the random draws of the authors' code: the same inputs give the same draw, so a
re-run or a re-score repeats it, while over many inputs the draws spread as the authors' `random` calls do."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def _digest(parts: tuple[object, ...]) -> bytes:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).digest()


def seeded_coin(*parts: object) -> bool:
    """A fair coin keyed by `parts` (e.g. ToolEval's `random.random() < 0.5` on an Unsure sample)."""
    return _digest(parts)[0] < 128


def seeded_index(n: int, *parts: object) -> int:
    """A uniform draw from range(n) keyed by `parts` (e.g. `random.sample(reason_list, 1)[0]`)."""
    return int.from_bytes(_digest(parts)[:8], "big") % n


def seeded_sample(items: Sequence[T], *parts: object) -> list[T]:
    """All of `items` in an order drawn as `random.sample(items, len(items))` draws one, keyed by `parts` (e.g.
    AnyTool's `query_all_categories`)."""
    return random.Random(int.from_bytes(_digest(parts)[:8], "big")).sample(list(items), len(items))
