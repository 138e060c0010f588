"""HTML building blocks of the report: escaping, folding, badges, JSON display. Every text from a record passes
through `esc` (records hold untrusted API output, model text and names from data)."""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping
from typing import Any

from ...sanitize.files import loads_json

FOLD_CHARS = 600  # longer texts fold (<details>): the first line shows, the rest on demand
FOLD_LINES = 8


def esc(value: Any) -> str:
    """`value` as HTML text: `& < > " '` escaped (safe in element content and in quoted attributes)."""
    return html.escape(value if isinstance(value, str) else str(value), quote=True)


def attr(value: Any) -> str:
    """A quoted attribute value."""
    return f'"{esc(value)}"'


def as_text(value: Any) -> str:
    """A value as display text: strings as they are, other values as indented JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, indent=1, default=str)
    except (TypeError, ValueError):
        return str(value)


def pretty(value: Any) -> str:
    """A string holding JSON pretty-printed (indent 1), other strings as they are, values as JSON."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in "{[":
            try:  # bounded: a string from a record may nest 100,000 levels deep
                return json.dumps(loads_json(text, source="text", allow_nonfinite=True), ensure_ascii=False, indent=1)
            except ValueError:
                return value
        return value
    return as_text(value)


def block(value: Any, *, cls: str = "text", fold: int = FOLD_CHARS, label: str = "") -> str:
    """A text as a `<pre>` block; a long one folds: its first line visible, the whole on demand."""
    text = as_text(value)
    pre = f'<pre class="{cls}">{esc(text)}</pre>'
    if len(text) <= fold and text.count("\n") < FOLD_LINES:
        return pre
    head = text.strip().split("\n", 1)[0][:160]
    size = f"{len(text):,} characters"
    return (f'<details class="fold"><summary>{esc(label + ": " if label else "")}<span class="peek">{esc(head)}'
            f'</span> <span class="muted">({size})</span></summary>{pre}</details>')


def badge(text: Any, kind: str = "") -> str:
    """A small label; `kind` picks its colour (a status name, "ok", "warn", ...)."""
    cls = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in str(kind)) if kind else "plain"
    return f'<span class="badge b-{cls}">{esc(text)}</span>'


def table(head: Iterable[str], rows: Iterable[Iterable[str]], *, cls: str = "grid", tid: str = "") -> str:
    """A table; `head` cells are plain text (escaped here), row cells are HTML already."""
    ident = f" id={attr(tid)}" if tid else ""
    ths = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"{ident}><thead><tr>{ths}</tr></thead><tbody>{body}</tbody></table>'


def facts(pairs: Iterable[tuple[str, str]]) -> str:
    """A definition list of (label, HTML value) pairs, skipping empty values."""
    items = "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in pairs if v not in ("", None))
    return f'<dl class="facts">{items}</dl>'


def section(sid: str, title: str, body: str, *, note: str = "") -> str:
    extra = f'<p class="muted">{note}</p>' if note else ""
    return f'<section id={attr(sid)}><h2>{esc(title)}</h2>{extra}{body}</section>'


def not_recorded(what: str) -> str:
    return (f'<p class="missing">{esc(what)}: not recorded (this record was written by an older version, or the '
            f"run did not reach this part).</p>")


def number(value: Any, digits: int = 0) -> str:
    """A number for a table cell ('-' when absent)."""
    if value is None or value == "":
        return "-"
    try:
        x = float(value)
    except (TypeError, ValueError):
        return esc(value)
    return f"{x:,.{digits}f}"


def data_value(value: Any) -> str:
    """A `data-v` attribute (the sort key of a table cell)."""
    return f" data-v={attr(value)}"


def mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))
