"""The OPPO evaluation's toolset folder (repository OPPO-Mente-Lab/agent_eval, `toolset/`) as a `Catalog`.

Layout, read as released:
- `toolset/config.yml`: `USER` (a user profile: name, age, sex, location, language), `AGENT` (`location`),
  `RAPIDAPI_TOOLS` and `DEV_TOOLS` (which tools are on), `X-RapidAPI-Key`, `FILE_DIR`;
- `toolset/{rapidapi,dev_tools}/docs/<tool>.json`: `{"tool_name", "tool_description", "APIs": [{"type":
  "function", "function": {"name", "description", "parameters"}}]}` with parameter types in upper case
  ("STRING", "INT", "NUMBER", "DATE (YYYY-MM-DD)", "ENUM", ...).

As the authors do (`toolset/__init__.py` `Toolset`, `toolset/rapidapi/__init__.py` and
`toolset/dev_tools/__init__.py` `get_docs`): only the tools named in `RAPIDAPI_TOOLS` / `DEV_TOOLS` are loaded, each
from `<dir>/docs/<name>.json`; an API is known by its tool's `tool_name` and its function `name`. Parameter types
become what the authors' model sees (`eval_scripts/agent_interface.py` `convert_doc_to_openai_format`): lower-cased;
JSON-schema types kept; "int" → integer; every other spelling → string.

The user profile and the agent's location are served as the authors serve them: by the dev tools
`access_user_info.get_user_profile` and `agent_equipments.get_my_location` (`toolset/dev_tools/access_user_info.py`,
`agent_equipments.py`), which this loader binds to local implementations of our own, together with
`agent_equipments.get_current_time`, `calendar.days_of_month` / `display_calendar_of_month` and
`calculator.calculate` (a safe arithmetic evaluator, never Python's eval). The RapidAPI docs carry no endpoint, so
those APIs have no executor here: run them with an explicit executor kind (template / llm / virtual) or bind your
own. The RapidAPI key in `config.yml` is never read into the catalog.
"""

from __future__ import annotations

import calendar as _calendar
import datetime as _dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, StringConstraints

from ..sanitize.files import (
    DataFileError,
    check_model,
    check_plain_name,
    load_data_file,
    loads_json,
    path_inside,
    read_text,
    repair_surrogates,
)
from ..sanitize.schema import FileModel
from .errors import CatalogError, CatalogLoadError
from .models import Api, Category, Param, Tool
from .naming import slugify

CONFIG_FILE = "config.yml"
TOOL_DIRS: dict[str, str] = {"RAPIDAPI_TOOLS": "rapidapi", "DEV_TOOLS": "dev_tools"}
_JSON_TYPES = frozenset({"string", "number", "integer", "object", "array", "boolean"})
MAX_CONFIG_BYTES = 1_000_000  # config.yml: a user profile and two lists of names
MAX_DOC_BYTES = 10_000_000  # one tool document (the release's largest is 40 KB)
ToolName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
ApiName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True)
class OppoConfig:
    """What `toolset/config.yml` says (the RapidAPI key is left out on purpose)."""

    user: dict[str, Any] = field(default_factory=dict)
    agent_location: str = ""
    rapidapi_tools: tuple[str, ...] = ()
    dev_tools: tuple[str, ...] = ()
    source: str = ""


def is_oppo_toolset(path: str | Path) -> bool:
    """A directory holding `config.yml` and a `rapidapi/docs` or `dev_tools/docs` folder."""
    p = Path(path)
    return (p / CONFIG_FILE).is_file() and any((p / d / "docs").is_dir() for d in TOOL_DIRS.values())


def authors_param_type(raw: object) -> str:
    """The type the authors' model sees (`agent_interface.py` `convert_doc_to_openai_format`): lower-cased; a
    JSON-schema type is kept, "int" becomes integer and anything else string ("null" too: our catalog has no null
    parameter type)."""
    low = str(raw).strip().lower() if isinstance(raw, str) else "string"
    if low in _JSON_TYPES:
        return low
    return "integer" if low == "int" else "string"




class _ConfigDoc(FileModel):
    USER: dict[str, Any] | None = None
    AGENT: dict[str, Any] | None = None
    RAPIDAPI_TOOLS: list[ToolName] | None = None
    DEV_TOOLS: list[ToolName] | None = None


class _ParamDoc(FileModel):
    type: str | list[str] | None = None
    description: str | float | None = None
    enum: list[Any] | None = None
    default: Any = None


class _ParametersDoc(FileModel):
    type: str | None = None
    properties: dict[str, _ParamDoc] | None = None
    required: list[str] | None = None


class _FunctionDoc(FileModel):
    name: ApiName
    description: str | None = None
    parameters: _ParametersDoc | None = None


class _EntryDoc(FileModel):
    type: str | None = None
    function: _FunctionDoc


class _ToolDoc(FileModel):
    tool_name: ApiName
    tool_description: str | None = None
    APIs: list[_EntryDoc] = Field(min_length=1)


def read_oppo_config(root: str | Path) -> OppoConfig:
    """Parse `<root>/config.yml` (bounded: size, aliases, depth); a clear error names the file and the field that
    is wrong. A tool name is a name, never a path (`check_plain_name`)."""
    path = Path(root) / CONFIG_FILE
    source = str(path)
    try:
        path_inside(root, CONFIG_FILE, what="config file")  # a symlink leaving the toolset folder is refused
        data = repair_surrogates(load_data_file(path, max_bytes=MAX_CONFIG_BYTES, what="OPPO toolset config"),
                                 source=source)
        if not isinstance(data, Mapping):
            raise CatalogError("expected a mapping at the top level", source=source)
        for key in TOOL_DIRS:
            value = data.get(key)
            if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                raise CatalogError("must be a list of tool names", source=source, field=key)
            for i, name in enumerate(value or []):
                check_plain_name(name.strip(), source=source, field=f"{key}[{i}]", what="tool name")
        doc = check_model(_ConfigDoc, data, source=source)
    except DataFileError as exc:
        raise CatalogError.from_data(exc) from None
    return OppoConfig(user=dict(doc.USER or {}), agent_location=str((doc.AGENT or {}).get("location") or ""),
                      rapidapi_tools=tuple(doc.RAPIDAPI_TOOLS or ()), dev_tools=tuple(doc.DEV_TOOLS or ()),
                      source=source)


def _param(name: str, spec: _ParamDoc, required: bool) -> Param:
    description = spec.description if isinstance(spec.description, str) else str(spec.description or "")
    raw_type = spec.type[0] if isinstance(spec.type, list) and spec.type else spec.type
    return Param(name=name, type=authors_param_type(raw_type), description=description, required=required,
                 default=spec.default, enum=tuple(spec.enum or ()))


def _parse_doc(data: Any, category: str, source: str) -> Tool:
    """One tool document, every field checked (`_ToolDoc`); faults name the file and the field."""
    if not isinstance(data, Mapping):
        raise CatalogError("expected a JSON object", source=source)
    try:
        doc = check_model(_ToolDoc, data, source=source)
    except DataFileError as exc:
        raise CatalogError.from_data(exc) from None
    name = doc.tool_name
    key = slugify(name)
    apis: list[Api] = []
    seen: set[str] = set()
    for i, entry in enumerate(doc.APIs):
        fn = entry.function
        api_name = fn.name
        if api_name in seen:
            raise CatalogError(f"duplicate function name {api_name!r}", source=source, field=f"APIs[{i}].function.name")
        seen.add(api_name)
        schema = fn.parameters or _ParametersDoc()
        required = set(schema.required or ())
        params = tuple(_param(pname, spec, pname in required) for pname, spec in (schema.properties or {}).items())
        apis.append(Api(id=f"{category}/{key}/{slugify(api_name)}", name=api_name, tool_key=key, tool_name=name,
                        category=category, description=fn.description or "", params=params,
                        deterministic=not (key == "agent_equipments" and api_name == "get_current_time")))
    return Tool(key=key, name=name, category=category, description=doc.tool_description or "", apis=tuple(apis),
                source=source)


def _read_doc(base: Path, dirname: str, name: str, category: str) -> Tool:
    """`<base>/<dirname>/docs/<name>.json`, which must resolve inside the toolset folder (symlinks followed)."""
    path = base / dirname / "docs" / f"{name}.json"
    try:
        path_inside(base, dirname, "docs", f"{name}.json", what="tool document")
        text = read_text(path, max_bytes=MAX_DOC_BYTES, what="OPPO tool document")
        doc = repair_surrogates(loads_json(text, source=str(path)), source=str(path), text=text)
    except DataFileError as exc:
        raise CatalogError.from_data(exc) from None
    return _parse_doc(doc, category, str(path))


def load_oppo_toolset(root: str | Path) -> tuple[list[Category], OppoConfig]:
    """The categories `rapidapi` and `dev_tools` with the tools `config.yml` turns on. Collects every bad file's
    error before raising."""
    base = Path(root)
    if not is_oppo_toolset(base):
        raise CatalogError("not an OPPO toolset folder (expected config.yml and rapidapi/docs or dev_tools/docs)",
                           source=str(base))
    config = read_oppo_config(base)
    errors: list[CatalogError] = []
    categories: list[Category] = []
    for key, dirname in TOOL_DIRS.items():
        names = config.rapidapi_tools if key == "RAPIDAPI_TOOLS" else config.dev_tools
        tools: list[Tool] = []
        for name in names:
            path = base / dirname / "docs" / f"{name}.json"
            if not path.is_file():
                errors.append(CatalogError(f"config.yml {key} names {name!r}, but {path} does not exist",
                                           source=config.source, field=key))
                continue
            try:
                tools.append(_read_doc(base, dirname, name, dirname))
            except CatalogError as exc:
                errors.append(exc)
        if tools:
            categories.append(Category(name=dirname, tools=tuple(tools)))
    if errors:
        raise errors[0] if len(errors) == 1 else CatalogLoadError(errors)
    if not categories:
        raise CatalogError("config.yml turns no tool on (RAPIDAPI_TOOLS and DEV_TOOLS are empty)", source=config.source)
    return categories, config


# ----------------------------------------------------------------------------------------------- dev tools, ours
def dev_tool_implementations(config: OppoConfig,
                             now: Callable[[], _dt.datetime] = _dt.datetime.now) -> dict[tuple[str, str], Callable[..., Any]]:
    """Our own implementations of the dev tools that need no file or network, by (tool_name, function name)."""
    from .builtin._safe_math import evaluate

    def get_user_profile() -> dict[str, Any]:
        return {k: config.user.get(k) for k in ("name", "age", "sex", "location", "language")}

    def get_my_location() -> dict[str, Any]:
        return {"location": config.agent_location}

    def get_current_time() -> dict[str, Any]:
        t = now()
        return {"current_time": f"{t:%Y-%m-%d %H:%M:%S} {_WEEKDAYS[t.weekday()]}"}

    def _month(year: Any, month: Any) -> tuple[int, int]:
        y, m = int(year), int(month)
        if not 1 <= m <= 12 or not 1 <= y <= 9999:
            raise ValueError(f"no month {m} of year {y}")
        return y, m

    def days_of_month(year: Any, month: Any) -> list[str]:
        y, m = _month(year, month)
        return [f"{_dt.date(y, m, d).isoformat()} {_WEEKDAYS[_dt.date(y, m, d).weekday()]}"
                for d in range(1, _calendar.monthrange(y, m)[1] + 1)]

    def display_calendar_of_month(year: Any, month: Any) -> str:
        return _calendar.month(*_month(year, month))

    def calculate(formula: str) -> Any:
        return evaluate(str(formula))

    return {("access_user_info", "get_user_profile"): get_user_profile,
            ("agent_equipments", "get_my_location"): get_my_location,
            ("agent_equipments", "get_current_time"): get_current_time,
            ("calendar", "days_of_month"): days_of_month,
            ("calendar", "display_calendar_of_month"): display_calendar_of_month,
            ("calculator", "calculate"): calculate}
