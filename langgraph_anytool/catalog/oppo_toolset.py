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
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import CatalogError, CatalogLoadError
from .models import Api, Category, Param, Tool
from .naming import slugify

CONFIG_FILE = "config.yml"
TOOL_DIRS: dict[str, str] = {"RAPIDAPI_TOOLS": "rapidapi", "DEV_TOOLS": "dev_tools"}
_JSON_TYPES = frozenset({"string", "number", "integer", "object", "array", "boolean"})
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


def read_oppo_config(root: str | Path) -> OppoConfig:
    """Parse `<root>/config.yml`; a clear error names the file and the field that is wrong."""
    import yaml

    path = Path(root) / CONFIG_FILE
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CatalogError(f"cannot read the OPPO toolset config: {exc}", source=str(path)) from exc
    except yaml.YAMLError as exc:
        raise CatalogError(f"invalid YAML: {exc}", source=str(path)) from exc
    if not isinstance(data, Mapping):
        raise CatalogError("expected a mapping at the top level", source=str(path))
    lists: dict[str, tuple[str, ...]] = {}
    for key in TOOL_DIRS:
        value = data.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise CatalogError("must be a list of tool names", source=str(path), field=key)
        lists[key] = tuple(v.strip() for v in value)
    user = data.get("USER") or {}
    if not isinstance(user, Mapping):
        raise CatalogError("must be a mapping (name, age, sex, location, language)", source=str(path), field="USER")
    agent = data.get("AGENT") or {}
    if not isinstance(agent, Mapping):
        raise CatalogError("must be a mapping with 'location'", source=str(path), field="AGENT")
    return OppoConfig(user=dict(user), agent_location=str(agent.get("location") or ""),
                      rapidapi_tools=lists["RAPIDAPI_TOOLS"], dev_tools=lists["DEV_TOOLS"], source=str(path))


def _parse_doc(doc: Any, category: str, source: str) -> Tool:
    if not isinstance(doc, Mapping):
        raise CatalogError("expected a JSON object", source=source)
    name = doc.get("tool_name")
    if not isinstance(name, str) or not name.strip():
        raise CatalogError("missing or empty", source=source, field="tool_name")
    entries = doc.get("APIs")
    if not isinstance(entries, list) or not entries:
        raise CatalogError("must be a non-empty list of OpenAI function objects", source=source, field="APIs")
    key = slugify(name)
    apis: list[Api] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        where = f"APIs[{i}]"
        fn = entry.get("function") if isinstance(entry, Mapping) else None
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str) or not fn["name"].strip():
            raise CatalogError("expected {'type': 'function', 'function': {'name': ...}}", source=source, field=where)
        api_name = fn["name"].strip()
        if api_name in seen:
            raise CatalogError(f"duplicate function name {api_name!r}", source=source, field=f"{where}.function.name")
        seen.add(api_name)
        schema = fn.get("parameters") or {}
        props = schema.get("properties") if isinstance(schema, Mapping) else None
        if props is None:
            props = {}
        if not isinstance(props, Mapping):
            raise CatalogError("must be an object", source=source, field=f"{where}.function.parameters.properties")
        required = schema.get("required") or []
        if not isinstance(required, list):
            raise CatalogError("must be a list", source=source, field=f"{where}.function.parameters.required")
        params = []
        for pname, spec in props.items():
            spec = spec if isinstance(spec, Mapping) else {}
            enum = spec.get("enum")
            params.append(Param(name=str(pname), type=authors_param_type(spec.get("type")),
                                description=str(spec.get("description") or ""), required=pname in required,
                                default=spec.get("default"), enum=tuple(enum) if isinstance(enum, list) else ()))
        apis.append(Api(id=f"{category}/{key}/{slugify(api_name)}", name=api_name, tool_key=key, tool_name=name,
                        category=category, description=str(fn.get("description") or ""), params=tuple(params),
                        deterministic=not (key == "agent_equipments" and api_name == "get_current_time")))
    return Tool(key=key, name=name, category=category, description=str(doc.get("tool_description") or ""),
                apis=tuple(apis), source=source)


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
                doc = json.loads(path.read_text(encoding="utf-8"))
                tools.append(_parse_doc(doc, dirname, str(path)))
            except json.JSONDecodeError as exc:
                errors.append(CatalogError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
                                           source=str(path)))
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
