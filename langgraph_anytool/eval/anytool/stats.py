"""Consumption statistics of batch results (AnyTool Appendix A.6, Table 12) and pool recall, per group."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..umi.hallucination import hallucination_stats

ROLE_ORDER = ("meta", "category", "tool", "solvable", "solver", "planner", "caller", "summarizer", "judge", "simulator")


@dataclass
class GroupStats:
    """Means per query of one group (Table 12's rows, plus per-role calls, agents per level and wall time)."""

    group: str
    queries: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    model_calls: float = 0.0
    calls_per_role: dict[str, float] = field(default_factory=dict)
    input_tokens: float = 0.0
    output_tokens: float = 0.0
    total_tokens: float = 0.0
    estimated_share: float = 0.0  # share of tokens that are estimates (no usage metadata from the provider)
    api_calls: float = 0.0
    reflections: float = 0.0
    pool_size: float = 0.0
    agents_per_level: dict[str, float] = field(default_factory=dict)
    wall_time: float = 0.0
    pool_recall: float | None = None  # mean over queries with relevant APIs
    recall_queries: int = 0
    hallucination_rate: float | None = None  # α-UMi's Hallu. on live runs: calls to functions not offered / calls
    hallucinated_calls: int = 0


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def _n(usage: Mapping[str, Any], key: str) -> float:
    """A count of a usage mapping (absent or null: 0)."""
    return float(usage.get(key) or 0)


def group_stats(name: str, records: Sequence[Mapping[str, Any]]) -> GroupStats:
    g = GroupStats(name, queries=len(records))
    for r in records:
        g.statuses[str(r.get("status"))] = g.statuses.get(str(r.get("status")), 0) + 1
    usages = [r.get("usage") or {} for r in records]
    g.model_calls = _mean([_n(u, "model_calls") for u in usages])
    roles = sorted({role for u in usages for role in (u.get("roles") or {})},
                   key=lambda x: ROLE_ORDER.index(x) if x in ROLE_ORDER else len(ROLE_ORDER))
    g.calls_per_role = {role: _mean([_n((u.get("roles") or {}).get(role) or {}, "model_calls") for u in usages])
                        for role in roles}
    g.input_tokens = _mean([_n(u, "input_tokens") for u in usages])
    g.output_tokens = _mean([_n(u, "output_tokens") for u in usages])
    g.total_tokens = g.input_tokens + g.output_tokens
    est = sum(_n(u, "estimated_tokens") for u in usages)
    tot = sum(_n(u, "input_tokens") + _n(u, "output_tokens") for u in usages)
    g.estimated_share = est / tot if tot else 0.0
    g.api_calls = _mean([_n(u, "api_calls") for u in usages])
    g.reflections = _mean([_n(u, "reflections") for u in usages])
    g.pool_size = _mean([_n(u, "pool_size") for u in usages])
    levels = sorted({lv for u in usages for lv in (u.get("agents") or {})})
    g.agents_per_level = {lv: _mean([_n(u.get("agents") or {}, lv) for u in usages]) for lv in levels}
    g.wall_time = _mean([float(r.get("wall_time") or 0) for r in records])
    recalls = [float(r["pool_recall"]) for r in records if r.get("pool_recall") is not None]
    g.pool_recall = _mean(recalls) if recalls else None
    g.recall_queries = len(recalls)
    hallu = hallucination_stats(a for r in records for a in r.get("trajectory") or [])
    g.hallucination_rate, g.hallucinated_calls = hallu.per_call, hallu.hallucinated
    return g


def results_stats(records: Iterable[Mapping[str, Any]]) -> tuple[list[GroupStats], GroupStats]:
    recs = list(records)
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in recs:
        groups.setdefault(str(r.get("group", "")), []).append(r)
    return [group_stats(n, rs) for n, rs in sorted(groups.items())], group_stats("overall", recs)


def stats_table(groups: Sequence[GroupStats], overall: GroupStats) -> str:
    """Rows = statistics (as in Table 12), columns = groups and the overall mean."""
    from ...render import table as _table

    cols = [*groups, overall]
    roles = list(dict.fromkeys(r for g in cols for r in g.calls_per_role))
    levels = list(dict.fromkeys(lv for g in cols for lv in g.agents_per_level))
    rows: list[list[str]] = [
        ["queries", *(str(g.queries) for g in cols)],
        ["average token consumption (×10^4)", *(f"{g.total_tokens / 1e4:.2f}" for g in cols)],
        ["  input tokens", *(f"{g.input_tokens:.0f}" for g in cols)],
        ["  output tokens", *(f"{g.output_tokens:.0f}" for g in cols)],
        ["  estimated share (no provider usage)", *(f"{100 * g.estimated_share:.0f}%" for g in cols)],
        ["average call number (model calls)", *(f"{g.model_calls:.1f}" for g in cols)],
        *[[f"  {role}", *(f"{g.calls_per_role.get(role, 0):.1f}" for g in cols)] for role in roles],
        ["average self-reflection number", *(f"{g.reflections:.1f}" for g in cols)],
        ["average API candidate number (pool)", *(f"{g.pool_size:.1f}" for g in cols)],
        ["average API calls", *(f"{g.api_calls:.1f}" for g in cols)],
        *[[f"agents: {lv}", *(f"{g.agents_per_level.get(lv, 0):.1f}" for g in cols)] for lv in levels],
        ["wall time (s)", *(f"{g.wall_time:.1f}" for g in cols)],
        ["pool recall (relevant APIs in pool)",
         *("-" if g.pool_recall is None else f"{100 * g.pool_recall:.1f}%" for g in cols)],
        ["hallucinated calls (share of solver calls)",
         *("-" if g.hallucination_rate is None else f"{100 * g.hallucination_rate:.1f}%" for g in cols)],
    ]
    return _table(["statistic", *(g.group for g in cols)], rows, right=range(1, len(cols) + 1))


def stats_dict(groups: Sequence[GroupStats], overall: GroupStats) -> dict[str, Any]:
    return {"groups": [asdict(g) for g in groups], "overall": asdict(overall)}
