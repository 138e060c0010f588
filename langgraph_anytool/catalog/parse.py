"""Turn ToolBench-shaped dicts into catalog objects, with errors that name file and field."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import CatalogError
from .models import Api, Param, Tool, normalize_param_type
from .naming import slugify


def parse_param(raw: Any, *, required: bool, source: str, where: str) -> Param:
    if not isinstance(raw, Mapping):
        raise CatalogError(f"parameter must be an object, got {type(raw).__name__}", source=source, field=where)
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise CatalogError("parameter has no name", source=source, field=f"{where}.name")
    raw_type = raw.get("type", "string")
    ptype = normalize_param_type(raw_type) if raw_type not in (None, "") else "string"
    if ptype is None:
        raise CatalogError(f"unknown parameter type {raw_type!r}", source=source, field=f"{where}.type")
    enum = raw.get("enum") or ()
    if not isinstance(enum, (list, tuple)):
        raise CatalogError("enum must be a list", source=source, field=f"{where}.enum")
    desc = raw.get("description") or ""
    if not isinstance(desc, str):
        desc = str(desc)
    return Param(
        name=name,
        type=ptype,
        description=desc,
        required=required,
        default=raw.get("default"),
        enum=tuple(enum),
        location=str(raw.get("in") or raw.get("location") or "query"),
        written_type=raw_type if isinstance(raw_type, str) else None,
    )


def _unique_key(base: str, taken: set[str]) -> str:
    key, n = base, 2
    while key in taken:
        key, n = f"{base}_{n}", n + 1
    taken.add(key)
    return key


def parse_api(raw: Any, *, category: str, tool_key: str, tool_name: str, taken: set[str], source: str, where: str) -> Api:
    if not isinstance(raw, Mapping):
        raise CatalogError(f"API entry must be an object, got {type(raw).__name__}", source=source, field=where)
    name = raw.get("name", raw.get("api_name"))
    if not isinstance(name, str) or not name.strip():
        raise CatalogError("API has no name", source=source, field=f"{where}.name")
    params: list[Param] = []
    seen: set[str] = set()
    for req_key, required in (("required_parameters", True), ("optional_parameters", False)):
        plist = raw.get(req_key) or []
        if not isinstance(plist, list):
            raise CatalogError("must be a list", source=source, field=f"{where}.{req_key}")
        for i, praw in enumerate(plist):
            p = parse_param(praw, required=required, source=source, where=f"{where}.{req_key}[{i}]")
            if p.name in seen:  # ToolBench has a few duplicate parameter entries: keep the first
                continue
            seen.add(p.name)
            params.append(p)
    method = _method(raw.get("method"), source=source, where=f"{where}.method", tool=tool_name, api=name.strip())
    desc = raw.get("description", raw.get("api_description")) or ""
    api_key = _unique_key(slugify(name, fallback="api"), taken)
    return Api(
        id=f"{category}/{tool_key}/{api_key}",
        name=name.strip(),
        tool_key=tool_key,
        tool_name=tool_name,
        category=category,
        description=str(desc).strip(),
        written_description=desc if isinstance(desc, str) and desc != desc.strip() else None,
        method=method,
        path=str(raw.get("url") or raw.get("path") or ""),
        params=tuple(params),
        template_response=raw.get("template_response"),
        deterministic=_deterministic(raw, source=source, where=where),
        max_argument_chars=_size_cap(raw, source=source, where=where),
    )


def _method(value: Any, *, source: str, where: str, tool: str, api: str) -> str:
    """The API's HTTP method (absent or empty: GET); anything but a method name (e.g. 42) is refused."""
    if value is None or value == "":
        return "GET"
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z]{3,10}", value.strip()):
        raise CatalogError(f"tool {tool!r}, API {api!r}: method must be an HTTP method name such as GET or POST, "
                           f"got {value!r}", source=source, field=where)
    return value.strip().upper()


def _size_cap(raw: Mapping[str, Any], *, source: str, where: str) -> int | None:
    """The optional per-API `max_argument_chars` (a positive integer)."""
    value = raw.get("max_argument_chars")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise CatalogError("must be a positive integer", source=source, field=f"{where}.max_argument_chars")
    return value


def _deterministic(raw: Mapping[str, Any], *, source: str, where: str) -> bool:
    """The optional `deterministic` flag (false: the answer depends on the clock or randomness; never cached)."""
    value = raw.get("deterministic", True)
    if not isinstance(value, bool):
        raise CatalogError("must be true or false", source=source, field=f"{where}.deterministic")
    return value


def parse_tool(data: Any, *, category: str, source: str, key: str | None = None) -> Tool:
    """Parse one ToolBench tool document (`tool_name`, `tool_description`, `api_list`)."""
    if not isinstance(data, Mapping):
        raise CatalogError(f"tool document must be a JSON object, got {type(data).__name__}", source=source)
    name = data.get("tool_name") or data.get("title")
    if not isinstance(name, str) or not name.strip():
        raise CatalogError("missing tool name", source=source, field="tool_name")
    tool_key = key or data.get("standardized_name") or slugify(name, fallback="tool")
    tool_key = slugify(str(tool_key), fallback="tool")
    api_list = data.get("api_list")
    if not isinstance(api_list, list):
        raise CatalogError("missing or not a list", source=source, field="api_list")
    taken: set[str] = set()
    apis = tuple(
        parse_api(a, category=category, tool_key=tool_key, tool_name=name.strip(), taken=taken, source=source,
                  where=f"api_list[{i}]")
        for i, a in enumerate(api_list)
    )
    desc = data.get("tool_description") or data.get("description") or ""
    return Tool(
        key=tool_key,
        name=name.strip(),
        category=category,
        description=str(desc).strip(),
        written_description=desc if isinstance(desc, str) and desc != desc.strip() else None,
        base_url=str(data.get("base_url") or data.get("host") or ""),
        apis=apis,
        source=source,
    )


def group_api_entries(entries: Iterable[Mapping[str, Any]], *, source: str) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """Group StableToolBench `api_list` entries by (category_name, tool_name)."""
    grouped: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for i, e in enumerate(entries):
        if not isinstance(e, Mapping):
            raise CatalogError(f"API entry must be an object, got {type(e).__name__}", source=source,
                               field=f"api_list[{i}]")
        for f in ("category_name", "tool_name", "api_name"):
            if not isinstance(e.get(f), str) or not e[f]:
                raise CatalogError("missing", source=source, field=f"api_list[{i}].{f}")
        grouped.setdefault((e["category_name"], e["tool_name"]), []).append(e)
    return grouped
