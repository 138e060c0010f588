"""The report's index page: the pass rate per group with its interval, the failure taxonomy (each count links to
its queries), tokens, model calls and cost per role (AnyTool Table 12) as plots, and a sortable, filterable table of
the queries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from ...sanitize.paths import query_page_name
from ...text import shorten
from ..intervals import bootstrap_mean
from . import svg
from .markup import attr, badge, data_value, esc, mapping, number, section, table, text
from .page import document, role_rows, usage_charts

NUM = ' class="num"'
STATUSES = ("solved", "unsolved", "gave_up", "no_apis", "budget_exhausted", "time_limit", "error", "planned")


def page_name(record: Mapping[str, Any]) -> str:
    return query_page_name(record.get("group", ""), record.get("query_id", ""))


def solved(record: Mapping[str, Any]) -> float:
    return 1.0 if record.get("status") == "solved" else 0.0


def pass_rates(records: Sequence[Mapping[str, Any]]) -> list[svg.Rate]:
    """The solved rate (percent) of each group and overall, each with its 95 % percentile bootstrap interval
    (`eval/intervals.bootstrap_mean`: 10,000 resamples, seed 0, as `eval passrate` and `eval compare`)."""
    groups: dict[str, list[float]] = {}
    for r in records:
        groups.setdefault(text(r.get("group")), []).append(solved(r))
    every = [solved(r) for r in records]
    out = []
    for name, values in [*sorted(groups.items()), *([("overall", every)] if every else [])]:
        ci = bootstrap_mean(values).scaled(100)
        out.append(svg.Rate(name or "(no group)", 100 * sum(values) / len(values), ci.low, ci.high, len(values),
                            overall=name == "overall" and len(groups) >= 1))
    return out


def rate_section(records: Sequence[Mapping[str, Any]]) -> str:
    rates = pass_rates(records)
    chart = svg.interval_chart(rates, title="Solved rate per group, with its 95% interval")
    rows = [[esc(r.label), number(r.n), f"{r.rate:.1f}",
             f"[{r.low:.1f}, {r.high:.1f}]" if r.low is not None and r.high is not None else "-"] for r in rates]
    note = ("Solved = the in-loop judge's verdict (the run's status). The interval is a percentile bootstrap over the "
            "queries (10,000 resamples, seed 0; <code>eval/intervals.py</code>, the same as <code>eval passrate</code>"
            " and <code>eval compare</code>); with under ~20 queries it is too narrow. Score with a separate "
            "evaluator with <code>anytool eval passrate</code>.")
    return section("rates", "Pass rate per group", chart + table(["group", "queries", "solved %", "95% CI"], rows),
                   note=note)


def filter_link(field: str, value: str) -> str:
    """The link that filters the queries table to `field` = `value` (each part percent-encoded: a value may hold
    ``&``, ``=``, ``%`` or ``#``; the page's script decodes each part after splitting)."""
    return f"#queries?{quote(field, safe='')}={quote(value, safe='')}"


def taxonomy_section(records: Sequence[Mapping[str, Any]]) -> str:
    by_status = Counter(text(r.get("status")) or "unknown" for r in records)
    by_kind = Counter(text(r.get("error_kind")) for r in records if r.get("error_kind"))
    by_stop = Counter(text(r.get("stop_reason")) for r in records if r.get("stop_reason"))
    order = sorted(by_status, key=lambda s: (STATUSES.index(s) if s in STATUSES else len(STATUSES), s))

    def links(field: str, counts: Counter[str], keys: Sequence[str]) -> str:
        return table([field, "queries"], [[badge(k, k), f'<a class="filter-link" href={attr(filter_link(field, k))}>'
                                           f"{counts[k]}</a>"] for k in keys])

    body = '<div class="cards">' + links("status", by_status, order)
    body += (links("error_kind", by_kind, sorted(by_kind)) if by_kind
             else '<p class="muted">No run ended in an error (no error_kind).</p>')
    if by_stop:
        body += links("stop_reason", by_stop, sorted(by_stop))
    return section("failures", "Failure taxonomy", body + "</div>",
                   note="Each count links to its queries in the table below.")


MAX_ERROR_MESSAGES = 30  # distinct messages listed (the most frequent first)
ERROR_MESSAGE_CHARS = 400


def error_messages_section(records: Sequence[Mapping[str, Any]]) -> str:
    """The distinct error messages of the runs that ended in an error, each with its kind and how many queries it
    ended (47 missing-key errors are one line saying so, not only `error_kind: other`). The records reach this
    page already masked (`redact.Scrubber`), so a key inside a message never does."""
    from ..anytool.results import record_error_kind

    counts: Counter[tuple[str, str]] = Counter()
    for r in records:
        if text(r.get("status")) != "error":
            continue
        message = " ".join((text(r.get("error")) or text(r.get("reason")) or "(no message recorded)").split())
        counts[(shorten(message, ERROR_MESSAGE_CHARS), text(record_error_kind(r)) or "other")] += 1
    if not counts:
        return ""
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    rows = [[badge(kind, "warn"), f"<code>{esc(message)}</code>",
             f'<a class="filter-link" href={attr(filter_link("error_kind", kind))}>{n}</a>']
            for (message, kind), n in ranked[:MAX_ERROR_MESSAGES]]
    more = len(ranked) - MAX_ERROR_MESSAGES
    note = (f"{sum(counts.values())} queries ended in an error, with {len(ranked)} distinct messages"
            + (f"; the {MAX_ERROR_MESSAGES} most frequent are listed ({more} more)" if more > 0 else "")
            + ". Each count links to the queries of its kind.")
    return section("errors", "Error messages", table(["error_kind", "message", "queries"], rows), note=note)


def usage_section(records: Sequence[Mapping[str, Any]]) -> str:
    totals: dict[str, dict[str, float]] = {}
    runs = 0
    for r in records:
        roles = mapping(mapping(r.get("usage")).get("roles"))
        runs += bool(roles)
        for role, v in roles.items():
            row = totals.setdefault(role, {})
            for k in ("model_calls", "input_tokens", "output_tokens", "estimated_tokens", "cost_usd"):
                row[k] = row.get(k, 0.0) + float(mapping(v).get(k, 0) or 0)
    if not totals:
        return section("usage", "Usage per role", '<p class="missing">Usage per role: not recorded.</p>')
    mean = {role: {k: v / runs for k, v in row.items()} for role, row in totals.items()}
    rows = [[esc(role), number(mean[role]["model_calls"], 1), number(mean[role]["input_tokens"]),
             number(mean[role]["output_tokens"]), number(totals[role]["input_tokens"] + totals[role]["output_tokens"]),
             number(totals[role]["cost_usd"], 4)] for role in role_rows(totals)]
    body = usage_charts(mean, per=" (mean per query)") + table(
        ["role", "model calls / query", "input tokens / query", "output tokens / query", "tokens in all",
         "cost USD in all"], rows)
    if not any(row["cost_usd"] for row in totals.values()):
        body += '<p class="muted">Cost: no price is known for the model(s) of this run (0 USD recorded).</p>'
    return section("usage", "Tokens, model calls and cost per role (AnyTool Table 12)", body,
                   note=f"Means over the {runs} queries whose usage was recorded.")


def query_table(records: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for r in records:
        usage = mapping(r.get("usage"))
        status = text(r.get("status")) or "unknown"
        verdict = text(mapping(r.get("verdict")).get("label"))
        tokens = int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
        query = text(r.get("query"))
        cells = [
            f'<a href={attr(page_name(r))}>{esc(r.get("query_id", ""))}</a>', esc(r.get("group", "")),
            badge(status, status), esc(r.get("error_kind") or ""), badge(verdict, verdict) if verdict else "",
            number(tokens), number(usage.get("model_calls")), number(usage.get("api_calls")),
            number(usage.get("reflections")), number(r.get("wall_time"), 2),
            esc(query[:140] + ("…" if len(query) > 140 else "")),
        ]
        keys = [r.get("query_id", ""), r.get("group", ""), status, r.get("error_kind") or "", verdict, tokens,
                usage.get("model_calls", ""), usage.get("api_calls", ""), usage.get("reflections", ""),
                r.get("wall_time", ""), query]
        tds = "".join(f'<td{data_value(k)}{NUM if 5 <= i <= 9 else ""}>{c}</td>'
                      for i, (c, k) in enumerate(zip(cells, keys, strict=True)))
        rows.append(f'<tr data-status={attr(status)} data-group={attr(r.get("group", ""))} '
                    f'data-error_kind={attr(r.get("error_kind") or "")} data-stop_reason={attr(r.get("stop_reason") or "")}'
                    f">{tds}</tr>")
    head = ["query", "group", "status", "error_kind", "verdict", "tokens", "model calls", "API calls", "reflections",
            "seconds", "request"]
    ths = "".join(f'<th{NUM if 5 <= i <= 9 else ""}>{esc(h)}</th>' for i, h in enumerate(head))

    def select(field: str, values: Sequence[str]) -> str:
        opts = "".join(f"<option value={attr(v)}>{esc(v)}</option>" for v in values)
        return f'<label>{esc(field)} <select data-field={attr(field)}><option value="">all</option>{opts}</select></label>'

    filters = ('<div class="filters"><input id="q-text" type="search" placeholder="filter: any text of a row">'
               + select("status", sorted({text(r.get("status")) or "unknown" for r in records}))
               + select("group", sorted({text(r.get("group")) for r in records}))
               + select("error_kind", sorted({text(r.get("error_kind")) for r in records if r.get("error_kind")}))
               + select("stop_reason", sorted({text(r.get("stop_reason")) for r in records if r.get("stop_reason")}))
               + '<span id="q-count" class="muted"></span></div>')
    body = (f'{filters}<table class="grid sortable" id="queries"><thead><tr>{ths}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')
    return section("queries-table", "Queries", body, note="Click a column to sort; a query id opens its page.")


def index_page(records: Sequence[Mapping[str, Any]], *, title: str, sources: Sequence[str]) -> str:
    models = sorted({text(r.get("model")) for r in records if r.get("model")})
    head = (f"<h1>{esc(title)}</h1><p class=\"muted\">{len(records)} queries from "
            f"{esc(', '.join(sources))}" + (f" · model: {esc(', '.join(models))}" if models else "") + "</p>")
    body = (head + rate_section(records) + taxonomy_section(records) + error_messages_section(records)
            + usage_section(records) + query_table(records))
    return document(title, body)
