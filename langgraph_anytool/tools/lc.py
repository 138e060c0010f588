"""Catalog APIs as function schemas and LangChain tools that run through the execution pipeline."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from langchain_core.tools import StructuredTool

from ..catalog.models import Api, Param
from ..text import shorten
from .validation import coerce_value

if TYPE_CHECKING:
    from ..catalog.catalog import Catalog
    from .pipeline import ApiExecutor

MAX_DESCRIPTION = 1024
MAX_PARAM_DESCRIPTION = 300
_JSON_TYPES = {
    "string": "string", "number": "number", "integer": "integer", "boolean": "boolean", "date": "string",
    "time": "string", "array": "array", "object": "object", "binary": "string", "enum": "string",
}
_FORMAT_HINTS = {
    "date": "Format: YYYY-MM-DD.",
    "time": "Format: HH:MM or HH:MM:SS (24-hour).",
    "binary": "A URL or base64-encoded data.",
}


def _shorten(text: str, limit: int) -> str:
    """Whitespace collapsed; cut at a word boundary with an ellipsis when longer than `limit`."""
    return shorten(" ".join(text.split()), limit)


def _json_type_of(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def _usable(p: Param, value: Any) -> tuple[bool, Any]:
    if value is None or value == "":
        return False, None
    try:
        return True, coerce_value(p, value)
    except ValueError:
        return False, None


def param_json_schema(p: Param) -> dict[str, Any]:
    """The JSON schema of one parameter: type, enum, format hints, default (optional) or example (required)."""
    schema: dict[str, Any] = {}
    json_type: str | None = _JSON_TYPES.get(p.type, "string")
    if p.enum:
        kinds = {_json_type_of(v) for v in p.enum}
        json_type = kinds.pop() if len(kinds) == 1 else None
        if p.type not in ("enum", "string") and json_type != _JSON_TYPES.get(p.type):
            json_type = None
    if json_type:
        schema["type"] = json_type
    if p.enum:
        schema["enum"] = list(p.enum)
    if p.type == "date":
        schema["format"] = "date"
    ok, example = _usable(p, p.default)
    if p.type == "array":
        items = {_json_type_of(v) for v in example} if ok else set()
        schema["items"] = {"type": items.pop() if len(items) == 1 and None not in items else "string"}
    notes = [_shorten(p.description, MAX_PARAM_DESCRIPTION)] if p.description.strip() else []
    if p.type in _FORMAT_HINTS:
        notes.append(_FORMAT_HINTS[p.type])
    if ok and not p.required:
        schema["default"] = example
    elif ok and isinstance(example, (str, int, float, bool)):
        notes.append(f"Example: {_shorten(str(example), 80)}")
    if notes:
        schema["description"] = " ".join(notes)
    return schema


def api_description(api: Api) -> str:
    """The function description: what the API does and which tool it belongs to (≤ 1024 characters)."""
    what = " ".join(api.description.split()) or f"The {api.name} endpoint."
    return _shorten(f"{api.name} (tool: {api.tool_name}). {what}", MAX_DESCRIPTION)


def api_parameters_schema(api: Api) -> dict[str, Any]:
    """`{"type": "object", "properties": ..., "required": [...]}` for the API's parameters."""
    return {
        "type": "object",
        "properties": {p.name: param_json_schema(p) for p in api.params},
        "required": [p.name for p in api.required_params],
    }


def api_json_schema(catalog: Catalog, api_id: str) -> dict[str, Any]:
    """The OpenAI function schema of an API: `{"name", "description", "parameters"}`."""
    api = catalog.api(api_id)
    return {"name": catalog.function_name(api_id), "description": api_description(api),
            "parameters": api_parameters_schema(api)}


def api_tool(catalog: Catalog, executor: ApiExecutor, api_id: str) -> StructuredTool:
    """One API as a StructuredTool; both sync and async invocation go through `executor` and return
    the rendered observation (never raise: failures are observations the model can read)."""
    schema = api_json_schema(catalog, api_id)

    def run(**arguments: Any) -> str:
        return executor.render(executor.call(api_id, arguments))

    async def arun(**arguments: Any) -> str:
        return executor.render(await executor.acall(api_id, arguments))

    return StructuredTool(name=schema["name"], description=schema["description"], args_schema=schema["parameters"],
                          func=run, coroutine=arun, metadata={"api_id": api_id})


def api_tools(catalog: Catalog, executor: ApiExecutor, api_ids: Iterable[str] | None = None) -> list[StructuredTool]:
    """One StructuredTool per API (all catalog APIs when `api_ids` is None), named by `catalog.function_name`."""
    ids = [api.id for api in catalog] if api_ids is None else list(api_ids)
    return [api_tool(catalog, executor, api_id) for api_id in ids]
