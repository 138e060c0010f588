"""Catalog data model: categories → tools → APIs → parameters (immutable, plain data)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

ParamType = Literal[
    "string", "number", "integer", "boolean", "enum", "date", "time", "array", "object", "binary"
]
PARAM_TYPES: frozenset[str] = frozenset(
    ["string", "number", "integer", "boolean", "enum", "date", "time", "array", "object", "binary"]
)
# Spellings seen in ToolBench / OpenAPI / JSON schema, mapped to ours.
_TYPE_ALIASES: dict[str, str] = {
    "str": "string",
    "text": "string",
    "float": "number",
    "double": "number",
    "int": "integer",
    "long": "integer",
    "bool": "boolean",
    "list": "array",
    "dict": "object",
    "json": "object",
    "datetime": "date",
    "date (yyyy-mm-dd)": "date",
    "file": "binary",
    "geopoint (latitude, longitude)": "string",
    "credentials": "string",
}


def normalize_param_type(raw: object) -> str | None:
    """Map a type spelling to one of `PARAM_TYPES`, or None when unknown."""
    if not isinstance(raw, str):
        return None
    key = raw.strip().lower()
    if key not in _TYPE_ALIASES and "(" in key:  # "TIME (24-hour HH:MM)", "DATE (YYYY-MM-DD)"
        key = key.split("(", 1)[0].strip()
    key = _TYPE_ALIASES.get(key, key)
    return key if key in PARAM_TYPES else None


@dataclass(frozen=True, eq=False)
class Binding:
    """How APIs of a catalog run, as data: `tools/binding.py` turns it into an executor.

    kind "local": `target` maps API id -> Python callable (None = the builtin toolset);
    kind "langchain": `target` maps API id -> LangChain tool. `options` go to the executor."""

    kind: str
    target: Mapping[str, Any] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


# What a catalog binds to an API: a `Binding`, or an executor object its caller made (opaque here: `tools/`
# runs both; catalog/ never imports tools/).
Executor = Any


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of an API."""

    name: str
    type: str = "string"
    description: str = ""
    required: bool = False
    default: Any = None
    enum: tuple[Any, ...] = ()
    location: str = "query"  # query | path | header | body (used by the HTTP executor)
    # the type as the document writes it ("NUMBER", "int", ...; `type` is ours): what AnyTool's
    # rapidapi.py `api_json_to_openai_json` maps; None: the document gave no string
    written_type: str | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "type": self.type, "description": self.description}
        if self.default is not None:
            d["default"] = self.default
        if self.enum:
            d["enum"] = list(self.enum)
        return d


@dataclass(frozen=True, slots=True)
class Api:
    """One callable endpoint of a tool. `id` is `category/tool_key/api_key`.

    `function_name` is the name a model calls it by in the catalog that holds it (the pool entries' and the
    retriever's `function_name`; `Catalog.function_name(api.id)`): unique in the catalog, ≤ 64 characters of
    `[a-zA-Z0-9_-]`, `<api>_for_<tool>` by default. A loader may set `preferred_name` (LangChain and MCP tools:
    their own name); a catalog gives that name when no other of its APIs wants it (see `catalog/naming.py`).
    "" for an API outside any catalog.
    """

    id: str
    name: str
    tool_key: str
    tool_name: str
    category: str
    description: str = ""
    method: str = "GET"
    path: str = ""
    params: tuple[Param, ...] = ()
    template_response: Any = None
    deterministic: bool = True  # False: clock, randomness, sandboxed code...: the response cache never stores it
    max_argument_chars: int | None = None  # cap on each argument's size; None: validation's documented default
    function_name: str = field(default="", compare=False)  # the catalog's name for it (see the class docstring)
    preferred_name: str = field(default="", compare=False)  # a loader's wish (a LangChain tool's own name), kept when unique
    # the description as the document writes it (`description` is stripped): what the authors' code reads from
    # ToolBench's files (e.g. a description of ' '); None: the document gave no string (`as_written` → description)
    written_description: str | None = field(default=None, compare=False)

    @property
    def as_written(self) -> str:
        """The description as the document writes it (`written_description`), else `description`."""
        return self.description if self.written_description is None else self.written_description

    @property
    def required_params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.required)

    @property
    def optional_params(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if not p.required)

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None

    def details(self) -> dict[str, Any]:
        """What an agent sees of the API (paper Table 8, `get_api_details`)."""
        d: dict[str, Any] = {
            "tool_name": self.tool_name,
            "api_name": self.name,
            "description": self.description,
            "method": self.method,
            "required_parameters": [p.to_dict() for p in self.required_params],
            "optional_parameters": [p.to_dict() for p in self.optional_params],
        }
        if self.template_response is not None:
            d["template_response"] = self.template_response
        return d


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool (a RapidAPI "API product"): a named group of APIs in one category."""

    key: str  # standardized name, unique within its category
    name: str  # display name (ToolBench's original tool_name)
    category: str
    description: str = ""
    base_url: str = ""
    apis: tuple[Api, ...] = ()
    source: str = ""  # file or origin it was loaded from
    written_description: str | None = field(default=None, compare=False)  # as the document writes it (see Api)

    @property
    def as_written(self) -> str:
        """The description as the document writes it (`written_description`), else `description`."""
        return self.description if self.written_description is None else self.written_description

    @property
    def id(self) -> str:
        return f"{self.category}/{self.key}"


@dataclass(frozen=True, slots=True)
class Category:
    """A category of tools."""

    name: str
    description: str = ""
    tools: tuple[Tool, ...] = field(default_factory=tuple)
