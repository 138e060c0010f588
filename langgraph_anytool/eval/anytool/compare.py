"""`anytool eval compare A B`: two batches of the same queries, paired by query, with intervals and an exact test.

Each side is either a results file of `eval run` (scored here by `passrate.evaluate_records` with the command's
evaluator, protocol and cache, so a query passes exactly when `eval passrate` says so) or the `--json` report of
`eval passrate` (which lists every query's outcome and usage, and records its evaluator, protocol and catalogs).

- Queries are paired by their key (group, query_id) (`results.record_key`); queries on one side only are left out
  and counted. No common query: refused.
- Per group and overall: both pass rates (percent), their difference B − A (percentage points) with the paired
  percentile bootstrap 95 % interval (`intervals.paired_bootstrap_mean_diff`), and the exact McNemar p-value on the
  discordant pairs (`intervals.mcnemar_exact`). SoPR scores are graded (0, 0.5, 1 per sample; per query their mean),
  not pass / fail: there the interval is that of the mean score difference, and the p-value is the exact sign test
  on the queries whose score rose or fell (McNemar's test is that sign test on 0/1 outcomes); it is labelled so.
- Tokens, model calls and cost per query: both medians and the median of the paired differences with its
  bootstrap interval. Cost only when both sides carry prices (`usage.roles.*.cost_usd`).
- The queries that flipped, each direction (SoPR: whose score fell / rose), with their report pages
  (`sanitize.paths.query_page_name`) under `--report DIR`.
- Refused (one line, unless `allow_mismatch`): sides scored by different evaluators (identity, or prompt files) or
  protocols (protocol, samples, exclusion rule), or run on different catalogs (fingerprint; name and size for
  records written before the fingerprint was recorded).
"""

from __future__ import annotations

import json
import re
import stat
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from pydantic import Field as PydanticField

from ...catalog.errors import CatalogError
from ...sanitize.files import DataFileError, InvalidJson, loads_json, read_text
from ...sanitize.paths import query_page_name
from ...sanitize.schema import FileModel, Fraction, Tally, check_model
from ..intervals import (
    LEVEL,
    RESAMPLES,
    SEED,
    Interval,
    mcnemar_exact,
    median_diff,
    paired_bootstrap_mean_diff,
    paired_bootstrap_median_diff,
)
from .passrate import Protocol, QueryOutcome
from .results import read_results, record_key

Key = tuple[str, str]
METRICS: tuple[tuple[str, str], ...] = (("tokens", "tokens"), ("model_calls", "model calls"), ("cost_usd", "cost (USD)"))


class CompareError(ValueError):
    """A comparison that cannot be made (no common query, mismatched sides, a bad input file): one line."""


# ------------------------------------------------------------------------------------------------ per query
@dataclass(frozen=True)
class QueryUsage:
    """What one query's run spent: tokens (input + output), model calls, and cost in USD (None: no price known)."""

    tokens: float = 0.0
    model_calls: float = 0.0
    cost_usd: float | None = None


def query_usage(record: Mapping[str, Any]) -> QueryUsage:
    """A results record's usage (`runner.usage_summary`); a record without usage (a failure) spent 0. The cost is
    known when a role carries `cost_usd` (the model's profile price)."""
    u = record.get("usage") or {}
    roles = u.get("roles") or {}
    priced = any(isinstance(r, Mapping) and "cost_usd" in r for r in roles.values())
    return QueryUsage(float(u.get("input_tokens") or 0) + float(u.get("output_tokens") or 0),
                      float(u.get("model_calls") or 0), float(u.get("cost_usd") or 0.0) if priced else None)


def catalog_of(record: Mapping[str, Any]) -> str | None:
    """The catalog a record was run on, as one comparable string: its fingerprint when recorded, else its name and
    size; None when the record names none (e.g. converted from another format)."""
    fp = record.get("catalog_fingerprint")
    if fp:
        return f"{record.get('catalog', '?')} (fingerprint {fp})"
    if record.get("catalog") is None:
        return None
    return f"{record.get('catalog')} ({record.get('catalog_apis', '?')} APIs, no fingerprint recorded)"


# ------------------------------------------------------------------------------------------------ a scored side
@dataclass
class Side:
    """One file's queries: their keys and usage, what decides their outcomes (`evaluation`), the catalogs they were
    run on, and the outcomes once scored (a results file's are scored for the paired queries only)."""

    path: str
    keys: list[Key]
    usage: dict[Key, QueryUsage]
    evaluation: dict[str, Any]  # {"protocol", "samples", "exclusion", "evaluator", "evaluator_identity", "prompts"}
    catalogs: list[str | None] = field(default_factory=list)
    outcomes: dict[Key, QueryOutcome] = field(default_factory=dict)

    def add_outcomes(self, outcomes: Sequence[QueryOutcome]) -> None:
        self.outcomes.update({(o.group, o.query_id): o for o in outcomes})


def evaluation_record(protocol: Protocol, samples: int, exclusion: bool, evaluator: str,
                      identity: Mapping[str, Any], prompts: Mapping[str, Any]) -> dict[str, Any]:
    """What decided a side's outcomes (compared between the sides)."""
    return {"protocol": protocol, "samples": samples, "exclusion": exclusion, "evaluator": evaluator,
            "evaluator_identity": dict(identity), "prompts": dict(prompts)}


def side_from_records(path: str, records: Sequence[Mapping[str, Any]], evaluation: dict[str, Any]) -> Side:
    """A side from a results file's records, not yet scored (`Side.add_outcomes`)."""
    keys = [record_key(r) for r in records]
    return Side(path, keys, {k: query_usage(r) for k, r in zip(keys, records, strict=True)}, evaluation,
                sorted({catalog_of(r) for r in records}, key=str))


def common_keys(a: Side, b: Side) -> list[Key]:
    """The queries of both sides, sorted."""
    return sorted(set(a.keys) & set(b.keys))


def query_entries(records: Sequence[Mapping[str, Any]], outcomes: Sequence[QueryOutcome]) -> list[dict[str, Any]]:
    """The per-query list of `eval passrate --json` (`queries`): what `eval compare` reads back from a report."""
    out = []
    for r, o in zip(records, outcomes, strict=True):
        u = query_usage(r)
        out.append({"group": o.group, "query_id": o.query_id, "value": o.value, "coin_flips": o.coin_flips,
                    "tokens": u.tokens, "model_calls": u.model_calls, "cost_usd": u.cost_usd,
                    "catalog": catalog_of(r)})
    return out


MAX_REPORT_BYTES = 256 << 20  # a pass-rate report: ~250 bytes per query, so a million queries fit
_SNIFF_BYTES = 64 << 10


class _ReportQuery(FileModel):
    """One entry of a pass-rate report's `queries` (`query_entries`)."""

    group: str | int
    query_id: str | int
    value: Fraction
    coin_flips: Annotated[int, PydanticField(ge=0)] = 0
    tokens: Tally | None = None  # bounded: medians and paired differences of 1.7e308 are inf and nan
    model_calls: Tally | None = None
    cost_usd: Tally | None = None
    catalog: str | None = None


class _PassRateReport(FileModel):
    """The fields of `eval passrate --json` that `eval compare` reads back."""

    protocol: Protocol
    samples: Annotated[int, PydanticField(ge=1)]
    exclusion_rule: str | None = None
    evaluator: str = ""
    evaluator_identity: dict[str, Any] | None = None
    prompts: dict[str, Any] | None = None
    queries: list[_ReportQuery]


def is_passrate_report(path: str | Path) -> bool:
    """Whether the file is the `--json` output of `eval passrate` (one JSON object with `protocol` and `overall` or
    `queries`)
    rather than a results file (JSON lines). Anything but a regular file is no report (the results reader then
    refuses it in one line); a first line that is a whole record with a `query_id` is a results file, unread
    further."""
    p = Path(path)
    try:
        if not stat.S_ISREG(p.stat().st_mode):
            return False
        with p.open("rb") as f:
            head = f.read(_SNIFF_BYTES).lstrip()
    except OSError:
        return False
    if not head.startswith(b"{"):
        return False
    try:
        first = loads_json(head.split(b"\n", 1)[0], source=str(p), allow_nonfinite=True)
    except DataFileError:
        first = None  # an indented report's first line is `{`; a line longer than the sniff; or a refused one
    if isinstance(first, dict) and "query_id" in first:
        return False
    try:
        text = read_text(p, max_bytes=MAX_REPORT_BYTES, what="pass-rate report")
    except DataFileError:
        return False  # larger than any report, or not UTF-8: the results reader (streaming) reads it or says why
    try:
        data = loads_json(text, source=str(p))
    except InvalidJson:
        return False  # JSON lines, or no JSON at all: the results reader says which
    except DataFileError:
        return True  # one JSON document refused as a whole (too deep, too large): `side_from_report` says why
    return isinstance(data, dict) and "protocol" in data and ("queries" in data or "overall" in data)


def side_from_report(path: str | Path) -> Side:
    """A side from an `eval passrate --json` report (made by a version that lists its queries); read bounded and
    checked field by field (`_PassRateReport`), a fault one line naming the file and the field."""
    source = str(path)
    try:
        data = loads_json(read_text(path, max_bytes=MAX_REPORT_BYTES, what="pass-rate report"), source=source)
        if isinstance(data, Mapping) and "queries" not in data:
            raise CompareError(f"{path}: a pass-rate report without its per-query list (`queries`); score it again "
                               "with `eval passrate --json`, or compare the results files")
        report = check_model(_PassRateReport, data, source=source)
    except DataFileError as exc:
        raise CompareError(str(exc)) from None
    outcomes: dict[Key, QueryOutcome] = {}
    usage: dict[Key, QueryUsage] = {}
    for e in report.queries:
        key = (str(e.group), str(e.query_id))
        outcomes[key] = QueryOutcome(key[0], key[1], e.value, e.coin_flips)
        usage[key] = QueryUsage(e.tokens or 0.0, e.model_calls or 0.0, e.cost_usd)
    evaluation = evaluation_record(report.protocol, report.samples, report.exclusion_rule is not None,
                                   report.evaluator, report.evaluator_identity or {}, report.prompts or {})
    return Side(source, list(outcomes), usage, evaluation, sorted({e.catalog for e in report.queries}, key=str),
                outcomes)


def read_side_records(path: str) -> list[dict[str, Any]]:
    """A results file's records; a missing or empty file is a `CompareError` naming it."""
    try:
        records = read_results(path)
    except CatalogError as exc:
        raise CompareError(str(exc)) from None
    if not records:
        raise CompareError(f"{path}: no results records")
    return records


# ------------------------------------------------------------------------------------------------ refusals
def _prompt_files(prompts: Mapping[str, Any]) -> Any:
    return (prompts.get("repo"), sorted((prompts.get("files") or {}).items()))  # not the clone's path


def mismatches(a: Side, b: Side) -> list[str]:
    """What differs between the sides' evaluator, protocol and catalog (empty: comparable)."""
    out = []
    ea, eb = a.evaluation, b.evaluation
    pa = (ea["protocol"], ea["samples"], ea["exclusion"])
    pb = (eb["protocol"], eb["samples"], eb["exclusion"])
    if pa != pb:
        def shown(p: tuple[Any, ...]) -> str:
            return f"{p[0]}, {p[1]} samples{', exclusion words' if p[2] else ''}"
        out.append(f"protocol: {shown(pa)} vs {shown(pb)}")
    if ea["evaluator_identity"] != eb["evaluator_identity"]:
        out.append(f"evaluator: {json.dumps(ea['evaluator_identity'], sort_keys=True)} vs "
                   f"{json.dumps(eb['evaluator_identity'], sort_keys=True)}")
    elif _prompt_files(ea["prompts"]) != _prompt_files(eb["prompts"]):
        out.append(f"evaluator prompts: {ea['prompts'].get('repo')} {sorted(ea['prompts'].get('files') or {})} vs "
                   f"{eb['prompts'].get('repo')} {sorted(eb['prompts'].get('files') or {})}")
    ca, cb = [c for c in a.catalogs if c], [c for c in b.catalogs if c]
    if ca and cb and ca != cb:
        out.append(f"catalog: {'; '.join(ca)} vs {'; '.join(cb)}")
    return out


def check_comparable(a: Side, b: Side, *, allow_mismatch: bool = False) -> list[str]:
    """The mismatches `allow_mismatch` lets through; `CompareError` (one line) when no query is common to both
    sides, or when their evaluator, protocol or catalog differ and `allow_mismatch` is False. Needs no outcome:
    called before any evaluator call."""
    if not common_keys(a, b):
        only_a, only_b = len(set(a.keys)), len(set(b.keys))
        raise CompareError(f"no query ids match between {a.path} and {b.path}: {only_a} unmatched in A, {only_b} "
                           "unmatched in B (queries are paired by group and query_id)")
    diffs = mismatches(a, b)
    if diffs and not allow_mismatch:
        raise CompareError(f"{a.path} and {b.path} are not comparable: {'; '.join(diffs)} "
                           "(--allow-mismatch compares them anyway)")
    return diffs


# ------------------------------------------------------------------------------------------------ the comparison
@dataclass
class MetricDiff:
    """A usage metric per query: both medians, the median of the paired differences B − A and its interval."""

    metric: str
    median_a: float | None
    median_b: float | None
    median_diff: float | None
    interval: Interval | None


@dataclass
class GroupComparison:
    group: str
    queries: int
    rate_a: float  # percent (SoPR: mean score × 100)
    rate_b: float
    diff: float  # percentage points, B − A
    interval: Interval  # percentage points
    a_only: int  # passed in A only (SoPR: score fell)
    b_only: int  # passed in B only (SoPR: score rose)
    p_value: float
    metrics: list[MetricDiff] = field(default_factory=list)


@dataclass
class Flip:
    group: str
    query_id: str
    a: float
    b: float
    pages: dict[str, str] = field(default_factory=dict)  # "a" / "b" → path of the query's report page


@dataclass
class Comparison:
    a: str
    b: str
    protocol: str
    test: str  # "McNemar exact" | "sign test (exact)"
    evaluation: dict[str, Any]
    matched: int
    only_a: int
    only_b: int
    groups: list[GroupComparison]
    overall: GroupComparison
    lost: list[Flip]  # passed in A, failed in B (SoPR: score fell)
    gained: list[Flip]  # failed in A, passed in B (SoPR: score rose)
    mismatches: list[str] = field(default_factory=list)  # allowed with --allow-mismatch
    notes: list[str] = field(default_factory=list)
    level: float = LEVEL
    resamples: int = RESAMPLES
    seed: int = SEED


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def _metrics(keys: Sequence[Key], a: Side, b: Side, priced: bool, *, level: float, resamples: int,
             seed: int) -> list[MetricDiff]:
    out = []
    for attr, label in METRICS:
        if attr == "cost_usd" and not priced:
            out.append(MetricDiff(label, None, None, None, None))
            continue
        xa = [float(getattr(a.usage[k], attr) or 0.0) for k in keys]
        xb = [float(getattr(b.usage[k], attr) or 0.0) for k in keys]
        out.append(MetricDiff(label, _median(xa), _median(xb), median_diff(xa, xb),
                              paired_bootstrap_median_diff(xa, xb, level=level, resamples=resamples, seed=seed)))
    return out


def _group(name: str, keys: Sequence[Key], a: Side, b: Side, priced: bool, *, level: float, resamples: int,
           seed: int) -> GroupComparison:
    va = [a.outcomes[k].value for k in keys]
    vb = [b.outcomes[k].value for k in keys]
    fell = sum(x > y for x, y in zip(va, vb, strict=True))
    rose = sum(y > x for x, y in zip(va, vb, strict=True))
    ci = paired_bootstrap_mean_diff(va, vb, level=level, resamples=resamples, seed=seed).scaled(100)
    rate_a, rate_b = 100 * statistics.fmean(va), 100 * statistics.fmean(vb)
    return GroupComparison(name, len(keys), rate_a, rate_b, rate_b - rate_a, ci, fell, rose, mcnemar_exact(fell, rose),
                           _metrics(keys, a, b, priced, level=level, resamples=resamples, seed=seed))


def _pages(report: Sequence[str], key: Key) -> dict[str, str]:
    """The query's report page in each report folder that has it (one folder: both runs' pages there)."""
    if not report:
        return {}
    dirs = {"a": report[0], "b": report[-1]}
    name = query_page_name(*key)
    out = {}
    for side, d in dirs.items():
        page = Path(d) / name
        if page.is_file():
            out[side] = str(page)
    return out


def compare_sides(a: Side, b: Side, *, report: Sequence[str] = (), allow_mismatch: bool = False,
                  level: float = LEVEL, resamples: int = RESAMPLES, seed: int = SEED) -> Comparison:
    """The comparison of two scored sides (the refusals of `check_comparable` first). Every paired query must have
    its outcome on both sides."""
    diffs = check_comparable(a, b, allow_mismatch=allow_mismatch)
    common = common_keys(a, b)
    only_a, only_b = len(set(a.keys) - set(b.keys)), len(set(b.keys) - set(a.keys))
    unscored = [k for k in common if k not in a.outcomes or k not in b.outcomes]
    if unscored:
        raise CompareError(f"query {unscored[0][0]}/{unscored[0][1]} has no outcome (score both sides first)")
    protocol = str(a.evaluation["protocol"])
    # a side's usage carries prices when any of its queries does (a failure that spent nothing has no roles)
    priced = any(a.usage[k].cost_usd is not None for k in common) and \
        any(b.usage[k].cost_usd is not None for k in common)
    by_group: dict[str, list[Key]] = {}
    for k in common:
        by_group.setdefault(k[0], []).append(k)
    groups = [_group(g, ks, a, b, priced, level=level, resamples=resamples, seed=seed)
              for g, ks in sorted(by_group.items())]
    overall = _group("overall", common, a, b, priced, level=level, resamples=resamples, seed=seed)
    lost = [Flip(*k, a.outcomes[k].value, b.outcomes[k].value, _pages(report, k))
            for k in common if a.outcomes[k].value > b.outcomes[k].value]
    gained = [Flip(*k, a.outcomes[k].value, b.outcomes[k].value, _pages(report, k))
              for k in common if b.outcomes[k].value > a.outcomes[k].value]
    notes = []
    if only_a or only_b:
        notes.append(f"left out: {only_a} queries only in A, {only_b} only in B (paired by group and query_id)")
    if not priced:
        notes.append("cost: no price known for the models of one or both runs (usage.roles.*.cost_usd)")
    if report:
        flips = [*lost, *gained]
        missing = sum(1 for f in flips if len(f.pages) < 2)
        if missing:
            notes.append(f"{missing} of the {len(flips)} changed queries have no page in {' / '.join(report)}")
    if len(common) < 20:
        notes.append(f"only {len(common)} paired queries: the bootstrap interval is too narrow with so few")
    return Comparison(a.path, b.path, protocol, "sign test (exact)" if protocol == "sopr" else "McNemar exact",
                      a.evaluation, len(common), only_a, only_b, groups, overall, lost, gained, diffs, notes,
                      level, resamples, seed)


# ------------------------------------------------------------------------------------------------ output
def _pct(x: float) -> str:
    return f"{x:.1f}"


def _p(p: float) -> str:
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def _num(x: float | None, digits: int) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _signed(x: float | None, digits: int) -> str:
    return "-" if x is None else f"{x:+.{digits}f}"


def _metric_digits(metric: str) -> int:
    return 4 if metric.startswith("cost") else 0 if metric == "tokens" else 1


def _labels(c: Comparison) -> tuple[str, str, str, str]:
    """(rate column, A-only column, B-only column, p column) for the protocol."""
    if c.protocol == "sopr":
        return "SoPR %", "fell", "rose", "sign-test p"
    return "pass %", "A only", "B only", "McNemar p"


def rate_rows(c: Comparison) -> tuple[list[str], list[list[str]]]:
    rate, a_only, b_only, p = _labels(c)
    head = ["group", "queries", f"A {rate}", f"B {rate}", "B−A (pp)", f"{100 * c.level:.0f}% CI", a_only, b_only, p]
    rows = [[g.group, str(g.queries), _pct(g.rate_a), _pct(g.rate_b), f"{g.diff:+.1f}", g.interval.text(signed=True),
             str(g.a_only), str(g.b_only), _p(g.p_value)] for g in [*c.groups, c.overall]]
    return head, rows


def usage_rows(c: Comparison) -> tuple[list[str], list[list[str]]]:
    head = ["group", "per query", "A median", "B median", "B−A median", f"{100 * c.level:.0f}% CI"]
    rows = []
    for g in [*c.groups, c.overall]:
        for i, m in enumerate(g.metrics):
            d = _metric_digits(m.metric)
            rows.append([g.group if i == 0 else "", m.metric, _num(m.median_a, d), _num(m.median_b, d),
                         _signed(m.median_diff, d),
                         "-" if m.interval is None else m.interval.text(d, signed=True)])
    return head, rows


def _flip_titles(c: Comparison) -> tuple[str, str]:
    if c.protocol == "sopr":
        return "score fell (A > B)", "score rose (B > A)"
    return "passed in A, failed in B", "failed in A, passed in B"


def describe(c: Comparison) -> list[str]:
    """The header lines: what was compared and how."""
    e = c.evaluation
    lines = [f"A: {c.a}", f"B: {c.b}",
             f"{c.matched} queries paired by group and query_id ({c.only_a} only in A, {c.only_b} only in B)",
             f"protocol: {c.protocol}, {e['samples']} samples per query"
             f"{', exclusion words' if e['exclusion'] else ''}; evaluator: {e['evaluator']}",
             f"B−A: paired percentile bootstrap {100 * c.level:.0f}% interval over queries ({c.resamples:,} "
             f"resamples, seed {c.seed}); "
             + ("p: exact sign test on the queries whose SoPR score changed (graded scores: McNemar does not apply)"
                if c.protocol == "sopr" else "p: exact McNemar test (two-sided binomial on the discordant pairs)")]
    lines += [f"MISMATCH (allowed): {m}" for m in c.mismatches]
    return lines


def comparison_table(c: Comparison) -> str:
    """The plain-text report (`eval compare`'s default output)."""
    from ...render import table as _table

    head, rows = rate_rows(c)
    uhead, urows = usage_rows(c)
    parts = [*describe(c), "", _table(head, rows, right=range(1, len(head))), "",
             "usage per query (B−A median: the median of the paired differences)",
             _table(uhead, urows, right=range(2, len(uhead)))]
    for title, flips in zip(_flip_titles(c), (c.lost, c.gained), strict=True):
        parts += ["", f"{title}: {len(flips)}"]
        for f in flips:
            pages = "  ".join(f"{s.upper()}: {p}" for s, p in f.pages.items())
            parts.append(f"  {f.group}/{f.query_id}" + (f"  ({f.a:.2f} → {f.b:.2f})" if c.protocol == "sopr" else "")
                         + (f"  {pages}" if pages else ""))
    parts += [f"note: {n}" for n in c.notes]
    return "\n".join(parts)


_MD_MARKUP = re.compile(r"([\\`*_{}\[\]<>#|~&!$])")  # what opens markup, wherever it stands in a line


def _md_text(text: Any) -> str:
    """A value from data as Markdown text: on one line (every line break, a bare carriage return included, made a
    space) and each character that can open markup backslash-escaped (CommonMark lets any ASCII punctuation be):
    no tag, comment, entity, link, image, emphasis, code, heading, math or table cell can be opened by it."""
    return _MD_MARKUP.sub(r"\\\1", " ".join(str(text).splitlines()))


def _md_cell(text: str) -> str:
    """A cell we formatted (a number, a label): only the table's own `|` escaped."""
    return " ".join(text.splitlines()).replace("|", "\\|")


def _md_table(head: Sequence[str], rows: Sequence[Sequence[str]], right: range) -> list[str]:
    align = ["---:" if i in right else "---" for i in range(len(head))]
    return ["| " + " | ".join(_md_cell(h) for h in head) + " |", "| " + " | ".join(align) + " |",
            *("| " + " | ".join(_md_text(x) if i == 0 else _md_cell(x) for i, x in enumerate(r)) + " |"
              for r in rows)]


def _md_link(label: str, path: str) -> str:
    """A link to a report page: the path percent-encoded (a folder name from the command line may hold `)`, `<`
    or spaces), so it never leaves the link's destination."""
    return f"[{_md_text(label)}]({quote(Path(path).as_posix(), safe='/._-~+')})"


def comparison_markdown(c: Comparison) -> str:
    """The comparison as GitHub-flavoured Markdown (for a paper's notes or a pull request). Every value from data
    (file names, groups, query ids, the evaluator, notes) goes through `_md_text`."""
    head, rows = rate_rows(c)
    uhead, urows = usage_rows(c)
    out = [f"**{_md_text(Path(c.b).name)}** vs **{_md_text(Path(c.a).name)}**: "
           + "; ".join(_md_text(line) for line in describe(c)[2:]), "",
           *_md_table(head, rows, range(1, len(head))), "", *_md_table(uhead, urows, range(2, len(uhead)))]
    for title, flips in zip(_flip_titles(c), (c.lost, c.gained), strict=True):
        out += ["", f"**{title}** ({len(flips)})" + (":" if flips else "")]
        for f in flips:
            name = _md_text(f"{f.group}/{f.query_id}")
            links = ", ".join(_md_link(s.upper(), p) for s, p in f.pages.items())
            out.append(f"- {name}" + (f" ({f.a:.2f} → {f.b:.2f})" if c.protocol == "sopr" else "")
                       + (f": {links}" if links else ""))
    out += [f"\n_{_md_text(n)}_" for n in c.notes]
    return "\n".join(out)


def comparison_dict(c: Comparison) -> dict[str, Any]:
    return asdict(c)
