"""Text shortened for a model or a user: `shorten` cuts at a sentence or word end, never mid-word, and marks the cut
with an ellipsis (`shorten_counted`: with the number of characters left out). The one way the package cuts text."""

from __future__ import annotations

import re

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
