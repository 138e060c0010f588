"""Odd but well-typed inputs make builtin APIs answer or raise ValueError/KeyError — never crash otherwise."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from langgraph_anytool import Catalog
from langgraph_anytool.catalog.builtin import builtin_implementations
from langgraph_anytool.catalog.models import Api, Param

# APIs that start a subprocess are exercised in test_builtin.py; fuzzing them would only be slow.
_SLOW = ("Code_Execution/python_sandbox/",)

_ODD: dict[str, tuple[Any, ...]] = {
    "string": ("", " ", "0", "-1", "🙂" * 3, "a" * 5000, "null", "../../etc/passwd", "%s%n{0}", "\x00"),
    "number": (0, -1, 0.5, -1e9, 1e15, 1e300, 7),
    "integer": (0, -1, 1, 10**9, -(10**9), 10**30),
    "boolean": (True, False),
    "date": ("0001-01-01", "9999-12-31", "2024-02-29", "1970-01-01"),
    "array": ([], [0], [-1, 1e300], ["x", "y"], [[1, 2], [3]], [{"name": "a", "price": 1, "quantity": 0}]),
    "object": ({}, {"radius": -1}, {"x": None}),
}


def _variants(p: Param) -> tuple[Any, ...]:
    if p.type == "enum":
        return tuple(p.enum)
    return _ODD.get(p.type, ("",))


def _fuzz_ids() -> list[str]:
    return sorted(i for i in builtin_implementations() if not i.startswith(_SLOW))


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.builtin()


@pytest.fixture(scope="module")
def impls() -> dict[str, Callable[..., Any]]:
    return builtin_implementations()


def _base_args(api: Api) -> dict[str, Any]:
    return {p.name: p.default for p in api.required_params}


@pytest.mark.parametrize("api_id", _fuzz_ids())
def test_odd_inputs_fail_cleanly(api_id: str, catalog: Catalog, impls: dict[str, Callable[..., Any]]) -> None:
    api = catalog.api(api_id)
    fn = impls[api_id]
    for p in api.params:
        for value in _variants(p):
            args = {**_base_args(api), p.name: value}
            try:
                result = fn(**args)
            except (ValueError, KeyError) as exc:
                assert str(exc), f"{api_id}({p.name}={value!r}) raised an empty {type(exc).__name__}"
                continue
            except Exception as exc:  # pragma: no cover - the assertion below reports it
                pytest.fail(f"{api_id}({p.name}={value!r}) raised {type(exc).__name__}: {exc}")
            json.dumps(result, allow_nan=False)
    if not api.params:
        json.dumps(fn(), allow_nan=False)
