"""The solver's functions: the pooled APIs as function names, their schemas and a readable list for prompts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...state import PoolEntry
from ...text import shorten
from ...tools.lc import api_json_schema

if TYPE_CHECKING:
    from ...runtime import Deps

_DESCRIPTION_CHARS = 300


def pool_functions(deps: Deps, pool: Sequence[PoolEntry]) -> dict[str, str]:
    """Function name → API id for the pooled APIs that exist in the catalog (pool order)."""
    out: dict[str, str] = {}
    for entry in pool:
        api_id = entry["api_id"]
        if api_id in deps.catalog:
            out[deps.catalog.function_name(api_id)] = api_id
    return out


def tool_schemas(deps: Deps, functions: dict[str, str]) -> list[dict[str, Any]]:
    return [api_json_schema(deps.catalog, api_id) for api_id in functions.values()]


def describe_functions(deps: Deps, functions: dict[str, str], *, with_params: bool = False) -> str:
    """A numbered list of the available functions: name, tool, description (and parameters)."""
    lines: list[str] = []
    for i, (name, api_id) in enumerate(functions.items(), 1):
        api = deps.catalog.api(api_id)
        desc = " ".join((api.description or api.name).split())
        desc = shorten(desc, _DESCRIPTION_CHARS + 1)
        line = f"{i}. {name} (tool {api.tool_name!r}, API {api.name!r}): {desc}"
        if with_params:
            req = ", ".join(f"{p.name} ({p.type})" for p in api.required_params) or "none"
            opt = ", ".join(f"{p.name} ({p.type})" for p in api.optional_params) or "none"
            line += f" Required parameters: {req}. Optional parameters: {opt}."
        lines.append(line)
    return "\n".join(lines)
