"""Declarations pairing each builtin API's ToolBench-style documentation with its implementation.

A tool is declared once as a `ToolSpec` whose `ApiSpec`s hold the Python callable next to its docs, so the
two cannot drift: required/optional status and optional defaults are read from the callable's signature, and
`check_api` rejects any parameter that is documented but not accepted (or accepted but not documented).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

# ToolBench's spellings of parameter types (catalog/models.py normalises them).
STRING = "STRING"
NUMBER = "NUMBER"
INTEGER = "INTEGER"
BOOLEAN = "BOOLEAN"
ENUM = "ENUM"
DATE = "DATE (YYYY-MM-DD)"
ARRAY = "ARRAY"
OBJECT = "OBJECT"


@dataclass(frozen=True, slots=True)
class P:
    """One documented parameter. `example` is shown as ToolBench's `default` for required parameters."""

    name: str
    type: str
    description: str
    example: Any = None
    enum: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class ApiSpec:
    """One API: its documentation and the callable that implements it."""

    func: Callable[..., Any]
    name: str
    description: str
    params: tuple[P, ...]
    template: Any
    method: str = "GET"
    deterministic: bool = True  # False: the answer depends on the clock, randomness or timing (do not cache)
    # runs submitted code: offered only where an OS sandbox works (see _sandbox.py); it runs in our process (it
    # waits on the sandbox, which its own limits kill), every other builtin API runs in a killable worker process
    needs_sandbox: bool = False
    max_argument_chars: int | None = None  # per-API cap on each argument's size (None: validation's default)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: a display name, a description and its APIs."""

    name: str
    description: str
    apis: tuple[ApiSpec, ...]
    key: str | None = None


@dataclass(frozen=True, slots=True)
class CategorySpec:
    """One category of builtin tools."""

    name: str
    description: str
    tools: tuple[ToolSpec, ...]


_NO_DEFAULT = inspect.Parameter.empty


def plain(value: Any) -> Any:
    """A fresh JSON-shaped copy: mappings → dict, tuples/lists → list (declarations may use read-only types)."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def _signature_params(func: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    sig = inspect.signature(func)
    out: dict[str, inspect.Parameter] = {}
    for name, prm in sig.parameters.items():
        if prm.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD,
                        inspect.Parameter.POSITIONAL_ONLY):
            raise TypeError(f"{func.__qualname__}: parameter {name!r} must be a plain keyword parameter")
        out[name] = prm
    return out


def check_api(spec: ApiSpec, *, where: str = "") -> None:
    """Raise TypeError when the documentation and the callable's signature disagree."""
    label = where or spec.name
    sig = _signature_params(spec.func)
    declared = [p.name for p in spec.params]
    if len(set(declared)) != len(declared):
        raise TypeError(f"{label}: duplicate parameter names {declared}")
    missing = [n for n in declared if n not in sig]
    extra = [n for n in sig if n not in declared]
    if missing or extra:
        raise TypeError(f"{label}: documented but not accepted {missing}; accepted but not documented {extra}")
    for p in spec.params:
        prm = sig[p.name]
        if prm.default is _NO_DEFAULT and p.example is None:
            raise TypeError(f"{label}: required parameter {p.name!r} needs an example value")
        if p.type == ENUM:
            if not p.enum:
                raise TypeError(f"{label}: ENUM parameter {p.name!r} lists no values")
            value = p.example if prm.default is _NO_DEFAULT else prm.default
            if value is not None and value not in p.enum:
                raise TypeError(f"{label}: {p.name!r} default/example {value!r} is not one of {p.enum}")
        elif p.enum:
            raise TypeError(f"{label}: only ENUM parameters may list values ({p.name!r})")
    if spec.template is None:
        raise TypeError(f"{label}: missing template_response")


def param_doc(p: P, prm: inspect.Parameter) -> dict[str, Any]:
    """The ToolBench entry of one parameter."""
    doc: dict[str, Any] = {"name": p.name, "type": p.type, "description": p.description}
    default = p.example if prm.default is _NO_DEFAULT else prm.default
    if default is not None:
        doc["default"] = plain(default)
    if p.enum:
        doc["enum"] = list(p.enum)
    return doc


def api_document(spec: ApiSpec) -> dict[str, Any]:
    """The ToolBench `api_list` entry of one API (checked against the callable first)."""
    check_api(spec)
    sig = _signature_params(spec.func)
    required = [param_doc(p, sig[p.name]) for p in spec.params if sig[p.name].default is _NO_DEFAULT]
    optional = [param_doc(p, sig[p.name]) for p in spec.params if sig[p.name].default is not _NO_DEFAULT]
    return {
        "name": spec.name,
        "url": "",
        "description": spec.description,
        "method": spec.method,
        "required_parameters": required,
        "optional_parameters": optional,
        "template_response": plain(spec.template),
        **({} if spec.deterministic else {"deterministic": False}),
        **({} if spec.max_argument_chars is None else {"max_argument_chars": spec.max_argument_chars}),
    }


def tool_document(tool: ToolSpec) -> dict[str, Any]:
    """The ToolBench tool document (`tool_name`, `tool_description`, `api_list`)."""
    doc: dict[str, Any] = {
        "tool_name": tool.name,
        "title": tool.name,
        "tool_description": tool.description,
        "api_list": [api_document(a) for a in tool.apis],
    }
    if tool.key:
        doc["standardized_name"] = tool.key
    return doc


def example_arguments(spec: ApiSpec) -> dict[str, Any]:
    """Arguments for a demonstration call: the documented example of every required parameter."""
    sig = _signature_params(spec.func)
    return {p.name: plain(p.example) for p in spec.params if sig[p.name].default is _NO_DEFAULT}
