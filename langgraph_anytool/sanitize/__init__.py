"""Input hygiene shared by the CLI, the loaders and the graph's entry: queries, nesting depth, terminal text, JSON.

- `clean_query`: repairs undecodable bytes (surrogate-escaped argv bytes, lone surrogates) and drops control
  characters from a query, saying what it changed; `check_query` also rejects empty and oversized queries.
- `check_nesting`: the depth of a decoded JSON/YAML document, without recursion (a 200,000-deep file must give
  one clear error, not a RecursionError deep inside a later pass).
- `terminal_safe` / `TerminalSafeWriter`: control characters (ESC, NUL, C1, bidirectional overrides) are shown
  escaped (`\\u001b`), never sent raw to a terminal; the escape is also valid inside JSON strings.
- `json_safe`: NaN and infinities become null, so `--json` output is valid JSON.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Mapping
from typing import Any, TextIO

MAX_NESTING = 200  # ToolBench tool files and OpenAPI specs nest a few dozen levels at most
MAX_QUERY_CHARS = 20_000

_SURROGATES = re.compile("[\ud800-\udfff]")
_SCALARS = (str, int, float, type(None))  # never containers (bool is an int)
_QUERY_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class NestingTooDeep(ValueError):
    """A document nests deeper than allowed."""


def clean_query(text: str) -> tuple[str, list[str]]:
    """The query with undecodable bytes replaced by U+FFFD and control characters removed, and notes on what
    changed (empty when nothing did)."""
    notes: list[str] = []
    if _SURROGATES.search(text):
        repaired = _SURROGATES.sub("\ufffd", text)  # lone surrogates (e.g. from JSON input): one U+FFFD each
        with contextlib.suppress(UnicodeEncodeError):  # argv bytes that were not UTF-8 (surrogate-escaped)
            repaired = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        repaired = _SURROGATES.sub("\ufffd", repaired)
        count = repaired.count("\ufffd") - text.count("\ufffd")
        notes.append(f"the query held {count} undecodable character(s); each was replaced with U+FFFD (�)")
        text = repaired
    if _QUERY_CONTROLS.search(text):
        count = len(_QUERY_CONTROLS.findall(text))
        text = _QUERY_CONTROLS.sub("", text)
        notes.append(f"removed {count} control character(s) from the query")
    return text, notes


def check_query(text: Any, *, max_chars: int = MAX_QUERY_CHARS) -> tuple[str, list[str]]:
    """`clean_query`, then ValueError when the query is not a string, is empty, or is longer than `max_chars`."""
    if not isinstance(text, str):
        raise ValueError(f"the query must be a string, got {type(text).__name__}")
    cleaned, notes = clean_query(text)
    cleaned = cleaned.strip()
    if not cleaned:
        raise ValueError("the query is empty")
    if len(cleaned) > max_chars:
        raise ValueError(f"the query is {len(cleaned):,} characters long; the limit is {max_chars:,}")
    return cleaned, notes


def nesting_depth(value: Any, limit: int = MAX_NESTING) -> int:
    """Depth of nested lists/dicts (a scalar is 0), counted iteratively; stops counting past `limit` + 1."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):  # the concrete types first: the Mapping ABC check is slow
            children: Any = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        elif isinstance(node, Mapping):
            children = node.values()
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend([(c, depth) for c in children if not isinstance(c, _SCALARS)])
    return deepest


def check_nesting(value: Any, limit: int = MAX_NESTING) -> Any:
    """`value` unchanged, or `NestingTooDeep` when it nests deeper than `limit` levels."""
    if nesting_depth(value, limit) > limit:
        raise NestingTooDeep(f"nesting too deep (more than {limit} levels)")
    return value


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def terminal_safe(text: str) -> str:
    """`text` with control characters other than newline, tab and carriage return (progress bars) escaped as
    `\\uXXXX`."""
    return _TERMINAL_CONTROLS.sub(_escape, text)


class TerminalSafeWriter:
    """A text stream wrapper escaping control characters on the way out (see `terminal_safe`)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(terminal_safe(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding...
        return getattr(self._stream, name)


def json_safe(value: Any) -> Any:
    """A copy with NaN/±infinity replaced by None (JSON has no such numbers); other values unchanged."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value
