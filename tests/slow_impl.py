"""Module-level (picklable) callables for the worker-process tests."""

from __future__ import annotations

import os
import time


def burn(seconds: float) -> int:
    """Busy-loop for `seconds` of wall-clock time (a CPU-bound call that ignores every timeout)."""
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
    return n


def whoami() -> int:
    """The worker's process id."""
    return os.getpid()


def fail(message: str) -> None:
    raise ValueError(message)


def allocate(megabytes: int) -> int:
    """Fill `megabytes` MB of memory (touched, so it counts); the number of bytes held."""
    block = bytearray(megabytes << 20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    return len(block)
