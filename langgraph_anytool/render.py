"""Plain-text tables, JSON printing and shortened text for terminal output (the CLI and the eval reports) and for
the text a model reads (`shorten`: never a cut mid-word)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any


def table(head: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    """`rows` under `head`, columns padded to their widest cell (`right`: indexes of right-aligned
    columns), a dashed rule under the head."""
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]

    def line(cells: Sequence[str]) -> str:
        out = [str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "  ".join(out).rstrip()

    return "\n".join([line(head), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])


def print_json(data: Any) -> None:
    """`data` as indented JSON on stdout (made JSON-safe first: no NaN, no bytes)."""
    from .sanitize import json_safe

    print(json.dumps(json_safe(data), indent=2, ensure_ascii=False, default=str, allow_nan=False))


ELLIPSIS = "…"
_SENTENCE_END = re.compile(r"[.!?;](?=\s)")


def shorten(text: str, limit: int, ellipsis: str = ELLIPSIS) -> str:
    """`text` in at most `limit` characters: whole when it fits, else cut at the last sentence end or, failing
    that, the last space before the limit, followed by `ellipsis` — never mid-word ("missing required parameter
    time (string, re" becomes "missing required parameter time…"). One word longer than the room (a URL, a
    token without spaces) is cut where the room ends."""
    if len(text) <= limit:
        return text
    room = max(0, limit - len(ellipsis))
    head = text[:room]
    if room < len(text) and text[room].isspace():  # the cut falls on a space: nothing of a word is lost
        return head.rstrip() + ellipsis
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    if ends and ends[-1] >= room * 0.6:
        return head[: ends[-1]].rstrip(".;") + ellipsis
    space = head.rfind(" ")
    if space >= room * 0.4:
        return head[:space].rstrip(" ,;:(-") + ellipsis
    return head + ellipsis


def shorten_counted(text: str, limit: int) -> str:
    """`text` cut as `shorten` cuts it (`limit` characters kept at most), marked with how many were left out:
    "... [123 more characters]"."""
    if len(text) <= limit:
        return text
    head = shorten(text, limit, ellipsis="")
    return f"{head}... [{len(text) - len(head)} more characters]"
