"""Retrieval evaluation: StableToolBench-style query files against a catalog's API search.

Each query's ``relevant APIs`` ([tool_name, api_name] pairs, original names) are mapped to API ids with
`Catalog.find_api` (using the category given in the query's ``api_list`` when it names the pair). Pairs that do
not map are counted and reported, never fatal; a query with no mapped pair is skipped (its metrics are undefined).
Groups are the query files' stems; "overall" averages over every evaluated query (micro average).

An encoder trained on query files (`anytool index train`) lists its training queries in its manifest; scoring it
on any of them is refused (`TrainOverlapError`) unless `allow_train_overlap`: such figures are not held-out.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog.errors import CatalogError, UnknownNameError
from .datasets import read_json_list
from .metrics import ndcg_at_k, recall_at_k

if TYPE_CHECKING:
    from ..catalog.catalog import Catalog

SearchFn = Callable[[str, int], Sequence[str]]  # (query, k) -> ranked API ids


class TrainOverlapError(ValueError):
    """The encoder under evaluation was trained on some of the evaluation queries."""


def train_overlap(encoder: Any, queries: Sequence[EvalQuery]) -> int:
    """How many of `queries` (those with a mapped relevant API) `encoder` was trained on (0 for untrained ones).

    A trained encoder exposes `trained` (`catalog.trained_model.TrainedModel`), whose manifest lists the hashes of
    its training queries' texts.
    """
    trained = getattr(encoder, "trained", None)
    if trained is None:
        return 0
    return int(trained.overlap(q.query for q in queries if q.relevant))


def check_train_overlap(encoder: Any, queries: Sequence[EvalQuery], *, allow: bool) -> int:
    """`train_overlap`, raising `TrainOverlapError` (one line) when it is not 0 and not `allow`ed."""
    n = train_overlap(encoder, queries)
    if n and not allow:
        scored = sum(1 for q in queries if q.relevant)
        where = getattr(encoder.trained, "path", "the encoder's folder")
        raise TrainOverlapError(f"the encoder at {where} was trained on {n} of these {scored} queries (its "
                                "manifest.json lists them), so its scores would not be held-out; evaluate on other "
                                "queries, or pass --allow-train-overlap to score it anyway")
    return n


@dataclass(frozen=True, slots=True)
class EvalQuery:
    """One query with its relevant API ids."""

    group: str
    query_id: str
    query: str
    relevant: tuple[str, ...]
    unmapped: tuple[tuple[str, str], ...] = ()


@dataclass
class GroupScores:
    """Mean metrics of one group (values in [0, 1])."""

    group: str
    queries: int = 0
    skipped: int = 0
    unmapped_pairs: int = 0
    metrics: dict[str, float] = field(default_factory=dict)


@dataclass
class RetrievalReport:
    """Per-group and overall scores, plus how the run was configured."""

    groups: list[GroupScores]
    overall: GroupScores
    metric_names: list[str]
    seconds: float = 0.0
    config: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"groups": [asdict(g) for g in self.groups], "overall": asdict(self.overall),
                "metrics": self.metric_names, "seconds": round(self.seconds, 3), "config": self.config}

    def table(self) -> str:
        """An aligned text table, metrics in percent."""
        head = ["group", "queries", *self.metric_names, "unmapped"]
        rows = [[g.group, str(g.queries), *(f"{100 * g.metrics[m]:.1f}" for m in self.metric_names),
                 str(g.unmapped_pairs)] for g in [*self.groups, self.overall]]
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

        def line(cells: list[str]) -> str:
            return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

        sep = "  ".join("-" * w for w in widths)
        return "\n".join([line(head), sep, *(line(r) for r in rows[:-1]), sep, line(rows[-1])])


def _pairs(item: dict[str, Any], source: str) -> list[tuple[str, str, str | None]]:
    raw = item.get("relevant APIs", item.get("relevant_apis"))
    if not isinstance(raw, list):
        raise CatalogError("query has no 'relevant APIs' list", source=source, field="relevant APIs")
    cats: dict[tuple[str, str], str] = {}
    for entry in item.get("api_list") or []:
        if isinstance(entry, dict) and isinstance(entry.get("category_name"), str):
            cats[(str(entry.get("tool_name")), str(entry.get("api_name")))] = entry["category_name"]
    out = []
    for pair in raw:
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            raise CatalogError(f"relevant API must be a [tool_name, api_name] pair, got {pair!r}", source=source)
        tool, api = str(pair[0]), str(pair[1])
        out.append((tool, api, cats.get((tool, api))))
    return out


def map_api(catalog: Catalog, tool: str, api: str, category: str | None) -> str | None:
    """The id of the catalog's API named (`tool`, `api`), tried in `category` first when given (`Catalog.find_api`,
    which normalises names the way the loaders do); None when it is not in the catalog."""
    for cat in ([category] if category else []) + [None]:
        try:
            return catalog.find_api(tool, api, category=cat).id
        except UnknownNameError:
            continue
    return None


def load_queries(files: Iterable[str | Path], catalog: Catalog) -> list[EvalQuery]:
    """Read query files (JSON lists); relevant pairs mapped to API ids of `catalog`."""
    out: list[EvalQuery] = []
    for f in files:
        path = Path(f)
        for n, item in enumerate(read_json_list(path)):
            if not isinstance(item, dict) or not isinstance(item.get("query"), str):
                raise CatalogError("query entry must be an object with a 'query' string", source=str(path),
                                   field=f"[{n}]")
            mapped: list[str] = []
            unmapped: list[tuple[str, str]] = []
            for tool, api, cat in _pairs(item, str(path)):
                api_id = map_api(catalog, tool, api, cat)
                if api_id is None:
                    unmapped.append((tool, api))
                elif api_id not in mapped:
                    mapped.append(api_id)
            out.append(EvalQuery(group=path.stem, query_id=str(item.get("query_id", n)), query=item["query"],
                                 relevant=tuple(mapped), unmapped=tuple(unmapped)))
    return out


def metric_names(recall_ks: Sequence[int], ndcg_ks: Sequence[int]) -> list[str]:
    return [f"Recall@{k}" for k in recall_ks] + [f"NDCG@{k}" for k in ndcg_ks]


def evaluate_retrieval(
    catalog: Catalog,
    query_files: Iterable[str | Path],
    *,
    search: SearchFn | None = None,
    recall_ks: Sequence[int] = (5, 10, 64),
    ndcg_ks: Sequence[int] = (5, 10),
    progress: bool = False,
    encoder: Any = None,
    allow_train_overlap: bool = False,
) -> RetrievalReport:
    """Run `search` (default: `catalog.search`) on every query and aggregate per group and overall.

    `progress`: a tqdm bar on stderr, one step per query. `encoder`: the embeddings behind `search` (default,
    when `search` is not given: the catalog searcher's); a trained one is refused on its own training queries
    (`TrainOverlapError`) unless `allow_train_overlap` (the count is then in `config["train_overlap"]`).
    """
    from tqdm import tqdm

    if not recall_ks and not ndcg_ks:
        raise ValueError("no metric cutoffs given")
    if search is None:
        encoder = encoder if encoder is not None else catalog.searcher().embeddings

        def search(q: str, k: int) -> list[str]:
            return [h.api_id for h in catalog.search(q, k)]
    depth = max([*recall_ks, *ndcg_ks])
    names = metric_names(recall_ks, ndcg_ks)
    queries = load_queries(query_files, catalog)
    overlap = check_train_overlap(encoder, queries, allow=allow_train_overlap)
    t0 = time.perf_counter()
    sums: dict[str, dict[str, float]] = {}
    groups: dict[str, GroupScores] = {}
    for q in tqdm(queries, desc="queries", unit="q", file=sys.stderr, disable=not progress, leave=False):
        g = groups.setdefault(q.group, GroupScores(group=q.group))
        g.unmapped_pairs += len(q.unmapped)
        if not q.relevant:
            g.skipped += 1
            continue
        ranked = list(search(q.query, depth))
        acc = sums.setdefault(q.group, dict.fromkeys(names, 0.0))
        for k in recall_ks:
            acc[f"Recall@{k}"] += recall_at_k(ranked, q.relevant, k)
        for k in ndcg_ks:
            acc[f"NDCG@{k}"] += ndcg_at_k(ranked, q.relevant, k)
        g.queries += 1
    overall = GroupScores(group="overall")
    total = dict.fromkeys(names, 0.0)
    for name, g in groups.items():
        g.metrics = {m: (sums.get(name, {}).get(m, 0.0) / g.queries if g.queries else 0.0) for m in names}
        overall.queries += g.queries
        overall.skipped += g.skipped
        overall.unmapped_pairs += g.unmapped_pairs
        for m in names:
            total[m] += sums.get(name, {}).get(m, 0.0)
    overall.metrics = {m: (total[m] / overall.queries if overall.queries else 0.0) for m in names}
    return RetrievalReport(groups=list(groups.values()), overall=overall, metric_names=names,
                           seconds=time.perf_counter() - t0, config={"train_overlap": overlap} if overlap else {})
