"""Plain-text tables and JSON printing for terminal output (the CLI and the eval reports)."""

from __future__ import annotations

import json
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

