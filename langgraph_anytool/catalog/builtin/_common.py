"""Small helpers shared by the builtin tool modules."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable
from typing import Any

# Numbers written as text: at most this many digits, and a decimal exponent (1e400) of at most this size. Checked
# before any arithmetic: Fraction("1e40000000") computes 10**40000000, holding the GIL for minutes.
MAX_NUMBER_DIGITS = 1000
MAX_DECIMAL_EXPONENT = 1000
_EXPONENT = re.compile(r"[eE]\s*[-+]?\s*([0-9_]+)")


def clean_number(x: float, digits: int = 12) -> float | int:
    """Round away floating-point noise (12 significant digits); integral values become int."""
    if isinstance(x, bool):
        raise ValueError("expected a number, got a boolean")
    if isinstance(x, int):
        return x
    if not math.isfinite(x):
        raise ValueError(f"result is not a finite number ({x})")
    if x == 0:
        return 0
    rounded = round(x, max(0, digits - 1 - math.floor(math.log10(abs(x)))))
    if rounded.is_integer() and abs(rounded) < 1e15:
        return int(rounded)
    return rounded


def check_number_text(text: str, name: str, *, max_digits: int = MAX_NUMBER_DIGITS,
                      max_exponent: int = MAX_DECIMAL_EXPONENT) -> str:
    """`text` unchanged when it holds at most `max_digits` digits and no decimal exponent (`e...`) larger than
    `max_exponent`; ValueError naming the parameter otherwise. Counting characters costs nothing, whatever the
    text: it runs before any parsing."""
    digits = sum(ch.isdigit() for ch in text)
    if digits > max_digits:
        raise ValueError(f"{name} has {digits} digits; at most {max_digits} are allowed")
    for match in _EXPONENT.finditer(text):
        exponent = match.group(1).replace("_", "").lstrip("0")
        if len(exponent) > len(str(max_exponent)) or (exponent and int(exponent) > max_exponent):
            raise ValueError(f"{name} has an exponent above {max_exponent} ({text[:40]!r})")
    return text


def as_float(value: Any, name: str) -> float:
    """A finite float from a number or numeric string; ValueError naming the parameter otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got a boolean")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return out


def as_floats(values: Iterable[Any], name: str, *, min_len: int = 1) -> list[float]:
    """A list of floats (items may be numeric strings); ValueError when too short or not numeric."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise ValueError(f"{name} must be a list of numbers")
    out = [as_float(v, f"{name}[{i}]") for i, v in enumerate(values)]
    if len(out) < min_len:
        raise ValueError(f"{name} needs at least {min_len} number(s), got {len(out)}")
    return out


def parse_date(value: str, name: str = "date") -> dt.date:
    """A date from 'YYYY-MM-DD'; ValueError naming the parameter otherwise."""
    try:
        return dt.date.fromisoformat(str(value).strip())
    except ValueError:
        raise ValueError(f"{name} must be a date in YYYY-MM-DD form, got {value!r}") from None


def require_range(value: float, name: str, lo: float | None = None, hi: float | None = None) -> None:
    """ValueError when `value` lies outside [lo, hi]."""
    if lo is not None and value < lo:
        raise ValueError(f"{name} must be >= {lo}, got {value}")
    if hi is not None and value > hi:
        raise ValueError(f"{name} must be <= {hi}, got {value}")
