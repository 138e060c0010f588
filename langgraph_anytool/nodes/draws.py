"""Reproducible stand-ins for the random draws of the authors' code: the same inputs give the same draw, so a
re-run or a re-score repeats it, while over many inputs the draws spread as the authors' `random` calls do."""

from __future__ import annotations

import hashlib
import json


def _digest(parts: tuple[object, ...]) -> bytes:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).digest()


def seeded_coin(*parts: object) -> bool:
    """A fair coin keyed by `parts` (e.g. ToolEval's `random.random() < 0.5` on an Unsure sample)."""
    return _digest(parts)[0] < 128


def seeded_index(n: int, *parts: object) -> int:
    """A uniform draw from range(n) keyed by `parts` (e.g. `random.sample(reason_list, 1)[0]`)."""
    return int.from_bytes(_digest(parts)[:8], "big") % n
