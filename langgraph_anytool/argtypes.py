"""Argument types for the `anytool` command line (argparse `type=`): numbers with a lower bound."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def _bounded(convert: Callable[[str], float], what: str, least: float, strict: bool) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
        if value < least or (strict and value == least):
            raise argparse.ArgumentTypeError(f"must be positive: {value}" if strict else f"must be {least} or more: {value}")
        return value

    return parse


positive_int: Callable[[str], int] = _bounded(int, "an integer", 0, strict=True)  # type: ignore[assignment]
count: Callable[[str], int] = _bounded(int, "an integer", 0, strict=False)  # type: ignore[assignment]
positive_float: Callable[[str], float] = _bounded(float, "a number", 0, strict=True)
