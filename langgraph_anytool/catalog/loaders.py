"""Loaders for the ToolBench directory layout and StableToolBench query files."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..sanitize.files import DataFileError, iter_json_array, loads_json, read_head, read_text, repair_surrogates
from .errors import CatalogError, CatalogLoadError
from .models import Category, Tool
from .parse import group_api_entries, parse_tool

MAX_TOOL_FILE_BYTES = 50_000_000  # one ToolBench tool document (the largest released one is a few MB)
MAX_QUERY_FILE_BYTES = 1 << 30  # a StableToolBench / ToolBench query file (the largest released is ~300 MB)


def read_catalog_json(path: Path, *, max_bytes: int = MAX_TOOL_FILE_BYTES, what: str = "catalog file") -> Any:
    """A JSON file of a catalog, bounded (`sanitize.files`: size, depth, integer digits), lone surrogates replaced
    with a warning naming the file and the fields; faults as `CatalogError`s naming the file. `NaN` / `Infinity`
    load (pandas writes them into ToolBench's defaults; output shows them as null)."""
    try:
        text = read_text(path, max_bytes=max_bytes, what=what)
        return repair_surrogates(loads_json(text, source=str(path), allow_nonfinite=True), source=str(path),
                                 text=text)
    except DataFileError as exc:
        raise CatalogError.from_data(exc) from None


def load_toolbench_dir(root: str | Path) -> list[Category]:
    """Read `<root>/<Category>/<tool>.json`. Collects every bad file's error before raising."""
    base = Path(root)
    if not base.exists():
        raise CatalogError(f"catalog directory does not exist: {base}", source=str(base))
    if not base.is_dir():
        raise CatalogError(f"not a directory: {base}", source=str(base))
    errors: list[CatalogError] = []
    categories: list[Category] = []
    for cat_dir in sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")):
        tools: list[Tool] = []
        keys: set[str] = set()
        for f in sorted(cat_dir.glob("*.json")):
            try:
                tool = parse_tool(read_catalog_json(f), category=cat_dir.name, source=str(f), key=f.stem)
            except CatalogError as exc:
                errors.append(exc)
                continue
            if tool.key in keys:
                errors.append(CatalogError(f"duplicate tool key {tool.key!r} in category {cat_dir.name!r}",
                                           source=str(f), field="standardized_name"))
                continue
            keys.add(tool.key)
            tools.append(tool)
        if tools:
            categories.append(Category(name=cat_dir.name, tools=tuple(tools)))
    if errors or not categories:
        below = _tools_dir_below(base)
        if below is not None:  # e.g. the data folder given instead of its tools/ folder: one line that says so
            found = f"{len(errors)} of its JSON files are no tool documents (e.g. {errors[0]})" if errors else (
                "it holds no <Category>/<tool>.json files")
            raise CatalogError(f"not a ToolBench tools directory: {found}; did you mean {below}?", source=str(base))
    if errors:
        raise errors[0] if len(errors) == 1 else CatalogLoadError(errors)
    if not categories:
        raise not_a_catalog(base, "a directory without <Category>/<tool>.json files")
    return categories


def _looks_like_tools_dir(path: Path) -> bool:
    """Whether `path` holds `<Category>/<tool>.json` files whose first one is a tool document (`api_list`)."""
    for cat_dir in sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for f in sorted(cat_dir.glob("*.json"))[:1]:
            try:
                doc = read_catalog_json(f)
            except CatalogError:
                return False
            return isinstance(doc, dict) and "api_list" in doc
    return False


def _tools_dir_below(base: Path, depth: int = 2) -> Path | None:
    """A ToolBench tools directory named `tools` inside `base` (at most `depth` levels down), for a suggestion."""
    try:
        subdirs = sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return None
    for d in subdirs:
        if d.name == "tools" and _looks_like_tools_dir(d):
            return d
    if depth > 1:
        for d in subdirs:
            found = _tools_dir_below(d, depth - 1)
            if found is not None:
                return found
    return None


def load_query_api_lists(files: Iterable[str | Path]) -> list[Category]:
    """Build a catalog from the `api_list` entries of StableToolBench query files (deduplicated)."""
    merged: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    errors: list[CatalogError] = []
    for file in files:
        path = Path(file)
        try:
            data = read_catalog_json(path, max_bytes=MAX_QUERY_FILE_BYTES, what="query file")
            if not isinstance(data, list):
                raise CatalogError("expected a JSON list of queries", source=str(path))
            for qi, q in enumerate(data):
                entries = q.get("api_list") if isinstance(q, dict) else None
                if not isinstance(entries, list):
                    raise CatalogError("missing or not a list", source=str(path), field=f"[{qi}].api_list")
                for key, apis in group_api_entries(entries, source=f"{path}[{qi}]").items():
                    slot = merged.setdefault(key, {})
                    for a in apis:
                        slot.setdefault(a["api_name"], dict(a))
        except CatalogError as exc:
            errors.append(exc)
    if errors:
        raise errors[0] if len(errors) == 1 else CatalogLoadError(errors)
    by_cat: dict[str, list[Tool]] = {}
    for (cat, tool_name), by_name in sorted(merged.items()):
        doc = {"tool_name": tool_name, "api_list": list(by_name.values())}
        by_cat.setdefault(cat, []).append(parse_tool(doc, category=cat, source=f"queries:{tool_name}"))
    return [Category(name=c, tools=tuple(ts)) for c, ts in sorted(by_cat.items())]


def is_query_file(path: str | Path) -> bool:
    """True when `path` is a JSON list of queries carrying `api_list`s (a StableToolBench / ToolBench query file)."""
    p = Path(path)
    if p.suffix.lower() != ".json" or not p.is_file():
        return False
    try:  # the first query only: a query file may be hundreds of MB
        if not read_head(p, what="query file").startswith(b"["):
            return False
        first = next(iter_json_array(p, max_bytes=MAX_QUERY_FILE_BYTES, max_item_bytes=MAX_QUERY_FILE_BYTES,
                                     what="query file", allow_nonfinite=True), None)
    except DataFileError as exc:
        raise CatalogError.from_data(exc) from None
    return first is not None and isinstance(first[1], dict) and "api_list" in first[1]


CATALOG_FORMATS = (
    "a ToolBench tools directory (<Category>/<tool>.json files), an OPPO toolset folder (config.yml and "
    "rapidapi/ or dev_tools/ docs), a StableToolBench query file (a JSON list of queries with 'api_list's) or an "
    "OpenAPI 3 spec (a .json/.yaml document with an 'openapi: 3.x' field)")


def not_a_catalog(path: Path, why: str) -> CatalogError:
    """The error for a path that is no catalog of any accepted format: what it is, and the formats accepted."""
    return CatalogError(f"not a catalog: {why}. A catalog is {CATALOG_FORMATS}", source=str(path))


def check_spec_file(path: Path) -> None:
    """Raise `not_a_catalog` unless the file is (or tries to be) an OpenAPI/Swagger document: its JSON or YAML
    holds an `openapi` or `swagger` field. A file that mentions them but does not parse keeps its parse error."""
    from ..sanitize.files import DataFileError, read_head
    from .openapi import read_spec_file

    try:
        doc = read_spec_file(path)
    except CatalogError as exc:
        try:
            head = read_head(path, what="OpenAPI spec").lower()
        except DataFileError:
            raise exc from None  # no regular file (a FIFO, a device...): the reader's own refusal says so
        if b"openapi" in head or b"swagger" in head:
            raise  # a broken spec: its own error (line, column) is the useful one
        detail = str(exc).removeprefix(f"file {path}: ")
        raise not_a_catalog(path, f"no JSON or YAML document could be read from it ({detail})") from None
    if isinstance(doc, dict) and ("openapi" in doc or "swagger" in doc):
        return
    if isinstance(doc, dict):
        keys = ", ".join(map(str, list(doc)[:6])) + (", ..." if len(doc) > 6 else "")
        why = f"a JSON/YAML object without an 'openapi' field, with keys {keys}" if doc else "an empty object"
    elif isinstance(doc, list):
        why = "a list whose items are no queries with an 'api_list'"
    else:
        why = f"a single {type(doc).__name__} value, not a document"
    raise not_a_catalog(path, why)
