"""Benchmark loaders: StableToolBench / ToolBench query groups, AnyToolBench, the paper's filtered ToolBench.

- A ToolBench group file (`<group>.json`) is a JSON list of {query, query_id, api_list, relevant APIs}; the group
  name is the file stem.
- AnyToolBench (`anytoolbench.json`) is a JSON list of {query, query_id, final_answer, gt_api_list}, where
  `gt_api_list` is a Python-literal string in the upstream file: parsed with `ast.literal_eval`, never `eval`.
- The paper's filtered ToolBench (AnyTool §3 and Appendix A.7) is each group minus the authors' exclusion list of
  query ids (`unsolvable.json`); the released runner compares `int(query_id)`, one group at a time.
- Coverage: a query whose relevant APIs are not all in the loaded catalog is "uncovered"; it is reported per group
  and `skip_uncovered` drops it.
- Catalog subsampling (AnyTool Table 5): a seeded uniform random subset of the catalog's APIs.
"""

from __future__ import annotations

import ast
import itertools
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog.errors import CatalogError, UnknownNameError
from ..sanitize.files import DataFileError, iter_json_array

if TYPE_CHECKING:
    from ..catalog.catalog import Catalog

ApiRef = tuple[str | None, str, str]
MAX_QUERY_ITEM_BYTES = 64 << 20  # one query of a query file (ToolBench's carry their api_list: a few KB)
MAX_GT_API_LIST_CHARS = 1_000_000  # AnyToolBench's gt_api_list strings are a few hundred characters  # (category or None, tool display name, API display name)


@dataclass(frozen=True, slots=True)
class BenchQuery:
    """One benchmark query: its text, the APIs given to the solver in ToolBench's setting (`api_list`), the
    ground-truth APIs (`relevant`), and AnyToolBench's reference answer when there is one."""

    group: str
    query_id: str
    query: str
    api_list: tuple[ApiRef, ...] = ()
    relevant: tuple[ApiRef, ...] = ()
    final_answer: str | None = None
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "query_id": self.query_id, "query": self.query,
                "api_list": [list(r) for r in self.api_list], "relevant": [list(r) for r in self.relevant],
                "final_answer": self.final_answer}


def iter_json_list(path: Path) -> Iterator[tuple[int, Any]]:
    """`(index, item)` of a query file's JSON list, one item at a time (a reader that needs N queries stops
    reading there), bounded (`sanitize.files.iter_json_array`: the file at `MAX_QUERY_FILE_BYTES`, each item at
    `MAX_QUERY_ITEM_BYTES`, depth, numbers, lone surrogates repaired); a missing file, bad JSON, too deep
    nesting or another shape is a `CatalogError` naming the file (and the item)."""
    from ..catalog.loaders import MAX_QUERY_FILE_BYTES

    if not path.exists():
        raise CatalogError("query file does not exist", source=str(path))
    try:
        yield from iter_json_array(path, max_bytes=MAX_QUERY_FILE_BYTES, max_item_bytes=MAX_QUERY_ITEM_BYTES,
                                   what="query file", allow_nonfinite=True)
    except DataFileError as exc:
        raise CatalogError.from_data(exc) from None


def read_json_list(path: Path) -> list[Any]:
    """A query file's whole JSON list (`iter_json_list`)."""
    return [item for _, item in iter_json_list(path)]


def _api_ref(entry: Any, source: str, where: str) -> ApiRef:
    if isinstance(entry, dict):
        tool, api = entry.get("tool_name"), entry.get("api_name")
        if not isinstance(tool, str) or not isinstance(api, str):
            raise CatalogError("API reference needs 'tool_name' and 'api_name' strings", source=source, field=where)
        cat = entry.get("category_name")
        return (cat if isinstance(cat, str) else None, tool, api)
    if isinstance(entry, (list, tuple)) and len(entry) == 2 and all(isinstance(x, str) for x in entry):
        return (None, entry[0], entry[1])
    raise CatalogError(f"API reference must be an object or a [tool_name, api_name] pair, got {entry!r}",
                       source=source, field=where)


def _query_fields(item: Any, n: int, source: str) -> tuple[str, str]:
    if not isinstance(item, dict) or not isinstance(item.get("query"), str) or not item["query"].strip():
        raise CatalogError("query entry must be an object with a non-empty 'query' string", source=source,
                           field=f"[{n}]")
    qid = item.get("query_id", n)
    if not isinstance(qid, (str, int)) or isinstance(qid, bool):
        raise CatalogError(f"query_id must be a string or an integer, got {qid!r}", source=source,
                           field=f"[{n}].query_id")
    return str(qid), item["query"]


def _toolbench_query(item: Any, n: int, source: str, name: str) -> BenchQuery:
    """One query of a StableToolBench / ToolBench group (`relevant APIs` pairs get their category from
    `api_list`)."""
    qid, query = _query_fields(item, n, source)
    raw_list = item.get("api_list") or []
    if not isinstance(raw_list, list):
        raise CatalogError("'api_list' must be a list", source=source, field=f"[{n}].api_list")
    api_list = tuple(_api_ref(e, source, f"[{n}].api_list[{i}]") for i, e in enumerate(raw_list))
    cats = {(t, a): c for c, t, a in api_list if c}
    raw = item.get("relevant APIs", item.get("relevant_apis", []))
    if not isinstance(raw, list):
        raise CatalogError("'relevant APIs' must be a list", source=source, field=f"[{n}].relevant APIs")
    relevant = []
    for i, e in enumerate(raw):
        c, t, a = _api_ref(e, source, f"[{n}].relevant APIs[{i}]")
        relevant.append((c or cats.get((t, a)), t, a))
    return BenchQuery(name, qid, query, api_list, tuple(relevant), None, source)


def load_toolbench_group(path: str | Path, group: str | None = None) -> list[BenchQuery]:
    """A StableToolBench / ToolBench query group (`relevant APIs` pairs get their category from `api_list`)."""
    p = Path(path)
    return [_toolbench_query(item, n, str(p), group or p.stem) for n, item in iter_json_list(p)]


def parse_gt_api_list(text: Any, source: str = "", where: str = "gt_api_list") -> tuple[ApiRef, ...]:
    """AnyToolBench's `gt_api_list`: a Python-literal list (or already a list) of {category_name, tool_name,
    api_name}; parsed with `ast.literal_eval`."""
    value = text
    if isinstance(text, str):
        if len(text) > MAX_GT_API_LIST_CHARS:
            raise CatalogError(f"gt_api_list is {len(text):,} characters long; at most {MAX_GT_API_LIST_CHARS:,}",
                               source=source, field=where)
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
            raise CatalogError(f"gt_api_list is not a Python literal list: {type(exc).__name__}: "
                               f"{str(exc)[:200]}", source=source, field=where) from None
    if not isinstance(value, list):
        raise CatalogError(f"gt_api_list must be a list, got {type(value).__name__}", source=source, field=where)
    return tuple(_api_ref(e, source, f"{where}[{i}]") for i, e in enumerate(value))


def _anytoolbench_query(item: Any, n: int, source: str, group: str) -> BenchQuery:
    """One AnyToolBench entry; the ground-truth APIs serve both as `relevant` and as `api_list`."""
    qid, query = _query_fields(item, n, source)
    refs = parse_gt_api_list(item.get("gt_api_list", "[]"), source, f"[{n}].gt_api_list")
    final = item.get("final_answer")
    return BenchQuery(group, qid, query, refs, refs, final if isinstance(final, str) else None, source)


def load_anytoolbench(path: str | Path, group: str = "AnyToolBench") -> list[BenchQuery]:
    """AnyToolBench entries; the ground-truth APIs serve both as `relevant` and as `api_list`."""
    p = Path(path)
    return [_anytoolbench_query(item, n, str(p), group) for n, item in iter_json_list(p)]


def iter_queries(path: str | Path) -> Iterator[BenchQuery]:
    """The queries of a file in either format, one at a time (read as they are taken: `eval run --limit N` reads
    no further than it needs), recognised by the first entry's fields (`gt_api_list` → AnyToolBench, otherwise a
    ToolBench group)."""
    p = Path(path)
    items = iter_json_list(p)
    first = next(items, None)
    if first is None:
        return
    if isinstance(first[1], dict) and "gt_api_list" in first[1]:
        group = p.stem if p.stem != "anytoolbench" else "AnyToolBench"
        for n, item in itertools.chain([first], items):
            yield _anytoolbench_query(item, n, str(p), group)
    else:
        for n, item in itertools.chain([first], items):
            yield _toolbench_query(item, n, str(p), p.stem)


def load_queries(path: str | Path) -> list[BenchQuery]:
    """Either format, recognised by its fields (`gt_api_list` → AnyToolBench, otherwise a ToolBench group)."""
    return list(iter_queries(path))


def load_exclusion_list(path: str | Path) -> frozenset[int]:
    """The AnyTool authors' list of unsolvable ToolBench query ids (a JSON list of integers)."""
    p = Path(path)
    data = read_json_list(p)
    out = set()
    for i, x in enumerate(data):
        try:
            out.add(int(x))
        except (TypeError, ValueError):
            raise CatalogError(f"query id must be an integer, got {x!r}", source=str(p), field=f"[{i}]") from None
    return frozenset(out)


def filter_excluded(queries: Iterable[BenchQuery], excluded: frozenset[int]) -> list[BenchQuery]:
    """The paper's filtered ToolBench: drop queries whose `int(query_id)` is in the exclusion list (apply it to
    one group at a time: upstream ids are per group)."""
    def kept(q: BenchQuery) -> bool:
        try:
            return int(q.query_id) not in excluded
        except ValueError:
            return True
    return [q for q in queries if kept(q)]


# ------------------------------------------------------------------------------------------------ catalog mapping
def resolve_api(catalog: Catalog, ref: ApiRef) -> str | None:
    """The catalog API id of one (category, tool, api) reference, or None (the category is tried, then any)."""
    category, tool, api = ref
    for cat in ([category] if category else []) + [None]:
        try:
            return catalog.find_api(tool, api, category=cat).id
        except (UnknownNameError, CatalogError):
            continue
    return None


def api_ids(catalog: Catalog, refs: Sequence[ApiRef]) -> tuple[list[str], list[ApiRef]]:
    """(mapped API ids without duplicates, references that do not map)."""
    ids: list[str] = []
    missing: list[ApiRef] = []
    for ref in refs:
        api_id = resolve_api(catalog, ref)
        if api_id is None:
            missing.append(ref)
        elif api_id not in ids:
            ids.append(api_id)
    return ids, missing


@dataclass
class GroupCoverage:
    """How many queries of a group have all their relevant APIs in the catalog."""

    group: str
    queries: int = 0
    uncovered: int = 0
    missing_refs: int = 0
    examples: list[str] = field(default_factory=list)  # a few uncovered query ids


def coverage_report(catalog: Catalog, queries: Iterable[BenchQuery]) -> list[GroupCoverage]:
    """Per group: queries whose relevant APIs are not all in the catalog."""
    groups: dict[str, GroupCoverage] = {}
    for q in queries:
        g = groups.setdefault(q.group, GroupCoverage(q.group))
        g.queries += 1
        _, missing = api_ids(catalog, q.relevant)
        if missing or not q.relevant:
            g.uncovered += 1
            g.missing_refs += len(missing)
            if len(g.examples) < 5:
                g.examples.append(q.query_id)
    return list(groups.values())


def is_covered(catalog: Catalog, query: BenchQuery) -> bool:
    """All relevant APIs of the query are in the catalog (and it has some)."""
    return bool(query.relevant) and not api_ids(catalog, query.relevant)[1]


def sample_catalog(catalog: Catalog, n: int, seed: int = 0) -> Catalog:
    """A catalog of `n` APIs drawn uniformly at random (seeded) from `catalog` (AnyTool Table 5: "randomly
    selecting subsets of APIs from the complete pool"); tools and categories left empty are dropped."""
    from ..catalog.catalog import Catalog

    if n <= 0:
        raise ValueError(f"--sample-apis must be positive, got {n}")
    all_ids = sorted(a.id for a in catalog)
    if n >= len(all_ids):
        return catalog
    keep = set(random.Random(seed).sample(all_ids, n))
    cats = []
    for name in catalog.categories:
        cat = catalog.category(name)
        tools = tuple(replace(t, apis=tuple(a for a in t.apis if a.id in keep)) for t in cat.tools)
        tools = tuple(t for t in tools if t.apis)
        if tools:
            cats.append(replace(cat, tools=tools))
    return Catalog(cats, name=f"{catalog.name}[sample {n}, seed {seed}]")
