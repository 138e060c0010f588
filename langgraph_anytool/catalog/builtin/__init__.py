"""The builtin offline toolset: RapidAPI-style documented tools whose APIs run locally.

`builtin_categories()` gives the catalog objects (parsed through `catalog/parse.py` from ToolBench-shaped
documents, so ids follow the usual rules) and `builtin_implementations()` maps each `Api.id` to its callable.
"""

from __future__ import annotations

import functools
import importlib
import logging
from collections.abc import Callable
from typing import Any

from ..models import Category
from ..parse import parse_tool
from ._registry import ApiSpec, CategorySpec, ToolSpec, tool_document
from ._sandbox import sandbox_status

logger = logging.getLogger(__name__)

# Category modules, in catalog order (module names, not objects: nothing mutable at module level).
MODULES: tuple[str, ...] = (
    "units",
    "datetime_tools",
    "holidays_tools",
    "countries",
    "geo",
    "math_tools",
    "algebra_geometry",
    "stats_tools",
    "finance",
    "text_tools",
    "encoding_tools",
    "code_tools",
)


def category_specs() -> list[tuple[str, CategorySpec]]:
    """(module name, category declaration) for every builtin category."""
    out: list[tuple[str, CategorySpec]] = []
    for mod_name in MODULES:
        module = importlib.import_module(f"{__name__}.{mod_name}")
        out.append((mod_name, module.category()))
    return out


def _offered(tool_spec: ToolSpec, code_runs: bool) -> ToolSpec | None:
    """The tool without the APIs that need the OS sandbox when there is none (None when nothing is left)."""
    if code_runs:
        return tool_spec
    apis = tuple(a for a in tool_spec.apis if not a.needs_sandbox)
    return ToolSpec(tool_spec.name, tool_spec.description, apis, tool_spec.key) if apis else None


def _build() -> tuple[list[Category], dict[str, ApiSpec]]:
    """The categories and API declarations (fresh containers over immutable objects: callers may change them).

    Parsed once per process for each sandbox state: a run asks three times (the catalog, the executor's callables,
    its worker APIs), and each parse of the 194 declarations cost about a quarter of a second of CPU before the
    first model request."""
    status = sandbox_status()
    if not status.available:  # said by the commands that offer the code tool (`announce_code_tool`), not here
        logger.debug("%s", status.detail)
    categories, specs = _parsed(status.available)
    return list(categories), dict(specs)


@functools.lru_cache(maxsize=2)
def _parsed(code_runs: bool) -> tuple[tuple[Category, ...], tuple[tuple[str, ApiSpec], ...]]:
    categories: list[Category] = []
    specs: dict[str, ApiSpec] = {}
    for mod_name, cat in category_specs():
        tools = []
        for declared in cat.tools:
            tool_spec = _offered(declared, code_runs)
            if tool_spec is None:
                continue
            tool = parse_tool(tool_document(tool_spec), category=cat.name, source=f"builtin:{mod_name}",
                              key=tool_spec.key)
            if len(tool.apis) != len(tool_spec.apis):  # pragma: no cover - parse keeps every entry
                raise RuntimeError(f"{tool.name}: parsed {len(tool.apis)} APIs, declared {len(tool_spec.apis)}")
            for api, api_spec in zip(tool.apis, tool_spec.apis, strict=True):
                specs[api.id] = api_spec
            tools.append(tool)
        categories.append(Category(name=cat.name, description=cat.description, tools=tuple(tools)))
    return tuple(categories), tuple(specs.items())


def builtin_categories() -> list[Category]:
    """The builtin toolset as catalog categories."""
    return _build()[0]


def builtin_api_specs() -> dict[str, ApiSpec]:
    """Each builtin `Api.id` → its declaration (documentation + callable)."""
    return _build()[1]


class ArithmeticGuard:
    """Reports numeric overflow & co. (OverflowError, decimal.InvalidOperation...) as bad input (ValueError).

    A class rather than a closure so that it pickles (by the wrapped function's name): slow APIs run in worker
    processes."""

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func
        functools.update_wrapper(self, func)

    def __call__(self, **kwargs: Any) -> Any:
        try:
            return self.func(**kwargs)
        except ArithmeticError as exc:
            raise ValueError(f"the numbers are out of range for this API ({type(exc).__name__}: {exc})") from None


def builtin_implementations() -> dict[str, Callable[..., Any]]:
    """Each builtin `Api.id` → the callable taking the API's parameters as keyword arguments."""
    return {api_id: ArithmeticGuard(spec.func) for api_id, spec in _build()[1].items()}


def builtin_worker_api_ids() -> frozenset[str]:
    """The builtin APIs that run in killable worker processes: all but the code-running ones (those wait on their
    sandbox, which its own time, CPU and memory limits end). In a worker, a call that overruns its time limit is
    killed, and a big-integer operation holding the GIL stops no other query."""
    return frozenset(api_id for api_id, spec in _build()[1].items() if not spec.needs_sandbox)


__all__ = ["builtin_api_specs", "builtin_categories", "builtin_implementations", "builtin_worker_api_ids",
           "category_specs"]
