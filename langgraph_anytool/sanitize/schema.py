"""The one schema layer: every field of every file we read (and every bounded setting) checked by pydantic, a
fault one line naming the file, the line and the field, what was expected and what was got.

- `FileModel`: an object of a data file, strict (``"8"`` is no integer, ``true`` no number, no coercion), numbers
  finite; its declared fields are checked, any other field is kept as it is (files written by other tools or later
  versions carry more). A reader declares its file's models beside it and calls `check_model`.
- `Count`: a finite number ≥ 0 (a token count, seconds, a price); `Fraction`: a finite number in [0, 1];
  `Tally`: a count that is summed over records and drawn (tokens, calls, cost): at most `MAX_TALLY`, so sums and
  plot scales stay finite (two token counts of 1.7e308 add up to infinity).
- `check_model`: data validated against a model; the first fault is a `DataFileError`, e.g.
  ``config.json, field 'hidden_size': must be an integer from 1 to 4,096, got '8'``.
- `check_fields` / `fields_model`: the fields of a dataclass of settings (`TrainSettings`, `FusionWeights`), their
  types and bounds declared once in its annotations, checked the same way (strict, unknown fields refused).
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Mapping
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from .files import DataFileError, brief, join_field

M = TypeVar("M", bound=BaseModel)

MAX_TALLY = 1e15  # a token count, call count or cost no run reaches; a million of them still sum finitely
Count = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Tally = Annotated[float, Field(ge=0, le=MAX_TALLY, allow_inf_nan=False)]
Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


class FileModel(BaseModel):
    """An object of a data file: the declared fields are checked (strictly, numbers finite), others are kept."""

    model_config = ConfigDict(extra="allow", strict=True, allow_inf_nan=False)


def check_model(model: type[M], data: Any, *, source: str, line: int | None = None, prefix: str = "") -> M:
    """`data` validated as `model`; the first fault is a `DataFileError` naming `source`, `line` and the field path
    (`prefix` before it), what the field must be (its type, bounds, choices, form) and what it is, e.g.
    `results.jsonl, line 3, field 'usage.model_calls': must be a number of at least 0, got 'abc'`."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _fault(model, data, exc, source, line, prefix) from None
    except RecursionError:  # depth is checked when reading; this guards data built in code
        raise DataFileError("nesting too deep", source=source, line=line, field=prefix or None) from None


@functools.cache
def fields_model(cls: type) -> type[BaseModel]:
    """A strict pydantic model of the dataclass `cls`'s fields (annotations with their bounds, and defaults; an
    unknown field is refused): for checking an instance (`check_fields`) or a document describing one."""
    hints = typing.get_type_hints(cls, include_extras=True)
    specs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            specs[f.name] = (hints[f.name], f.default)
        elif f.default_factory is not dataclasses.MISSING:
            specs[f.name] = (hints[f.name], Field(default_factory=f.default_factory))
        else:
            specs[f.name] = (hints[f.name], ...)
    config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    model: type[BaseModel] = create_model(f"{cls.__name__}Fields", __config__=config, **specs)
    return model


def check_fields(obj: Any, *, source: str) -> None:
    """The fields of the dataclass instance `obj` checked against their annotations (`fields_model`); a fault is a
    `DataFileError` naming `source` (e.g. "training settings") and the field."""
    model = fields_model(type(obj))  # type: ignore[arg-type]  # a class is hashable
    check_model(model, {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)},
                source=source)


# ------------------------------------------------------------------------------------------- one-line faults
def _fault(model: type[BaseModel], data: Any, exc: ValidationError, source: str, line: int | None,
           prefix: str) -> DataFileError:
    problems = exc.errors(include_url=False)
    located = [(_keys(data, p.get("loc", ()), p.get("type") == "missing"), p) for p in problems]
    keys, first = located[0]
    same = [p for k, p in located if k == keys]  # a union's members each fail at the same field
    schema = _json_schema(model)
    node = _schema_at(schema, keys) if schema is not None else None
    parent = _schema_at(schema, keys[:-1]) if schema is not None and keys else None
    field = join_field(prefix, *keys)
    message = _describe(same, node, parent, top=not field)
    if first.get("type") not in ("missing", "extra_forbidden", "too_long", "string_too_long", "too_short"):
        message += f", got {brief(first.get('input'))}"
    others = len({tuple(k) for k, _ in located} - {tuple(keys)})
    if others:
        message += f" (and faults in {others} more field(s))"
    return DataFileError(message, source=source, line=line, field=field or None)


def _keys(data: Any, loc: Any, missing: bool) -> list[Any]:
    """The keys and indexes of a pydantic error location that `data` has (the union members pydantic names in a
    location, `query_id.str`, are no fields), and the absent key of a missing field."""
    keys, node = list(loc), data
    out: list[Any] = []
    for i, key in enumerate(keys):
        if (isinstance(node, Mapping) and key in node) or (
                isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node)):
            node = node[key]
        elif not (missing and i == len(keys) - 1):
            continue
        out.append(key)
    return out


@functools.cache
def _json_schema(model: type[BaseModel]) -> dict[str, Any] | None:
    """The model's JSON schema (where the bounds, choices and patterns of a field are read for a message)."""
    try:
        return model.model_json_schema()
    except Exception:  # a type without a JSON schema: the message then says what pydantic says
        return None


def _schema_at(schema: dict[str, Any], keys: list[Any]) -> dict[str, Any] | None:
    """The JSON-schema node of the field at `keys` (references and unions followed), or None."""
    defs = schema.get("$defs", {})

    def resolve(node: Any) -> dict[str, Any]:
        while isinstance(node, dict) and "$ref" in node:
            node = defs.get(str(node["$ref"]).rsplit("/", 1)[-1], {})
        return node if isinstance(node, dict) else {}

    node = resolve(schema)
    for key in keys:
        step: Any = None
        for option in (node, *map(resolve, node.get("anyOf", ()))):
            if isinstance(key, str) and key in option.get("properties", {}):
                step = option["properties"][key]
            elif isinstance(key, str) and isinstance(option.get("additionalProperties"), dict):
                step = option["additionalProperties"]
            elif isinstance(key, int) and isinstance(option.get("items"), dict):
                step = option["items"]
            if step is not None:
                break
        if step is None:
            return None
        node = resolve(step)
    return node


_KINDS = {"integer": "an integer", "number": "a number", "string": "a string", "boolean": "true or false",
          "array": "a list", "object": "a JSON object", "null": "null"}
_TYPE_ERRORS = {"int_type": "an integer", "int_parsing": "an integer", "int_from_float": "an integer",
                "float_type": "a number", "float_parsing": "a number", "finite_number": "a finite number",
                "bool_type": "true or false", "bool_parsing": "true or false", "string_type": "a string",
                "list_type": "a list", "dict_type": "a JSON object", "model_type": "a JSON object",
                "model_attributes_type": "a JSON object", "dataclass_type": "a JSON object", "none_required": "null"}
_BOUND_ERRORS = ("greater_than", "greater_than_equal", "less_than", "less_than_equal")


def _number(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def _numeric(node: dict[str, Any] | None) -> dict[str, Any]:
    """The number option of a field's schema (a field may be `int | None`)."""
    for option in ((node or {}), *(node or {}).get("anyOf", ())):
        if isinstance(option, dict) and option.get("type") in ("integer", "number"):
            return option
    return {}


def _bounds(node: dict[str, Any]) -> str:
    """` from 1 to 4,096`, ` of at least 0`... (empty without bounds)."""
    low, high = node.get("minimum"), node.get("maximum")
    if low is not None and high is not None:
        return f" from {_number(low)} to {_number(high)}"
    parts = [f"{words} {_number(node[key])}" for key, words in (
        ("minimum", "of at least"), ("exclusiveMinimum", "above"), ("maximum", "of at most"),
        ("exclusiveMaximum", "below")) if node.get(key) is not None]
    return " " + " and ".join(parts) if parts else ""


def _expected(problem: Any, node: dict[str, Any] | None) -> str:
    """What the field must be, as `problem` (one pydantic error) and its schema `node` tell (without "must be")."""
    kind, ctx = problem.get("type"), problem.get("ctx") or {}
    numeric = _numeric(node)
    if kind in _TYPE_ERRORS:
        what = _TYPE_ERRORS[kind]
        return what + (_bounds(numeric) if what in ("an integer", "a number", "a finite number") else "")
    if kind in _BOUND_ERRORS:
        return _KINDS.get(str(numeric.get("type")), "a number") + (_bounds(numeric) or f" ({problem['msg']})")
    if kind in ("literal_error", "enum"):
        return str(ctx.get("expected", "one of the allowed values"))
    if kind == "string_pattern_mismatch":
        return f"a string matching {ctx.get('pattern', '?')}"
    if kind == "string_too_short":
        return "a non-empty string" if ctx.get("min_length") == 1 else \
            f"a string of at least {ctx.get('min_length', 0):,} characters"
    return str(problem.get("msg", "invalid"))


def _describe(problems: list[Any], node: dict[str, Any] | None, parent: dict[str, Any] | None, *, top: bool) -> str:
    """The message of the faults at one field (several when the field is a union)."""
    first = problems[0]
    kind, ctx = first.get("type"), first.get("ctx") or {}
    if kind == "missing":
        return "is missing"
    if kind == "extra_forbidden":
        known = ", ".join((parent or {}).get("properties", {}))
        return "unknown field" + (f" (expected {known})" if known else "")
    if kind in ("too_long", "string_too_long"):
        unit = "characters" if kind == "string_too_long" else "items"
        actual = ctx.get("actual_length")
        held = f"holds {actual:,} {unit}" if isinstance(actual, int) else f"holds more {unit} than allowed"
        return f"{held}; at most {ctx.get('max_length', 0):,} allowed"
    if kind == "too_short":
        return f"holds {ctx.get('actual_length', 0):,} items; at least {ctx.get('min_length', 0):,} needed"
    wanted = list(dict.fromkeys(_expected(p, node) for p in problems))
    return f"{'expected' if top else 'must be'} {' or '.join(wanted)}"


__all__ = ["Count", "FileModel", "Fraction", "check_fields", "check_model", "fields_model"]
