"""Check a model's call arguments against an API's parameters, with safe coercion.

Safe coercions (never lossy, never a guess about meaning):
- number / integer: numeric strings ("3" → 3, "2.5" → 2.5), integral floats for integers (3.0 → 3);
- string: numbers → their decimal text (3 → "3"), booleans → "true"/"false";
- boolean: "true"/"false" (any case) → bool; 0/1 and "0"/"1" are accepted unchanged (many RapidAPI
  endpoints document booleans as 1/0, so the value is passed on as the model wrote it);
- array / object: a JSON string holding a list / an object is decoded;
- date: a `datetime.date` → "YYYY-MM-DD"; time: a `datetime.time` → "HH:MM[:SS]";
- `None`, and "" for a non-string type, on an optional parameter mean "not given" and are dropped.
NaN and infinities are rejected anywhere, including inside arrays and objects.

Size caps: each argument may hold at most `Api.max_argument_chars` characters (strings: their length; arrays and
objects: their compact JSON), by default `DEFAULT_MAX_ARGUMENT_CHARS` (10,000); a JSON-string `arguments` at most
four times that; arrays/objects nest at most `MAX_ARGUMENT_NESTING` levels. Oversized input never reaches an API.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..catalog.models import Api, Param
from ..sanitize import nesting_depth
from ..text import shorten
from .observation import Observation, Status

_INT_RE = re.compile(r"[+-]?\d+")
_FLOAT_RE = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME_RE = re.compile(r"([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?")
_MAX_SHOWN_ENUM = 20
DEFAULT_MAX_ARGUMENT_CHARS = 10_000
MAX_ARGUMENT_NESTING = 64


@dataclass(frozen=True, slots=True)
class ValidationResult:
    """`ok`, the coerced `arguments` (what executors receive), and one message per `problems` entry."""

    ok: bool
    arguments: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


class _Invalid(Exception):
    """Internal: a value cannot be used for a parameter (message says why)."""


def describe_param(p: Param) -> str:
    """`name (type, required; one of [...])`: how a parameter is shown in error messages."""
    bits = [_type_label(p), "required" if p.required else "optional"]
    text = f"{p.name} ({', '.join(bits)}"
    if p.enum:
        shown = ", ".join(json.dumps(v, ensure_ascii=False) for v in p.enum[:_MAX_SHOWN_ENUM])
        more = f", ... {len(p.enum) - _MAX_SHOWN_ENUM} more" if len(p.enum) > _MAX_SHOWN_ENUM else ""
        text += f"; one of [{shown}{more}]"
    return text + ")"


def _type_label(p: Param) -> str:
    return {
        "date": "date YYYY-MM-DD",
        "time": "time HH:MM or HH:MM:SS",
        "enum": "string",
        "binary": "string (URL or base64 data)",
    }.get(p.type, p.type)


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, Mapping):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_non_finite(v) for v in value)
    return False


def _to_number(value: Any, *, integer: bool) -> int | float:
    kind = "an integer" if integer else "a number"
    if isinstance(value, bool):
        raise _Invalid(f"expected {kind}, got a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Invalid(f"expected {kind}, got {value!r} (NaN and infinities are not allowed)")
        if integer:
            if not value.is_integer():
                raise _Invalid(f"expected an integer, got {value!r}")
            return int(value)
        return value
    if isinstance(value, str):
        s = value.strip()
        if _INT_RE.fullmatch(s):
            return int(s)
        if _FLOAT_RE.fullmatch(s):
            f = float(s)
            if not math.isfinite(f):
                raise _Invalid(f"expected {kind}, got {value!r} (out of range)")
            if integer:
                if not f.is_integer():
                    raise _Invalid(f"expected an integer, got {value!r}")
                return int(f)
            return f
        raise _Invalid(f"expected {kind}, got the string {value!r}")
    raise _Invalid(f"expected {kind}, got {_kind_of(value)}")


def _kind_of(value: Any) -> str:
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


def _to_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Invalid(f"expected a string, got {value!r} (NaN and infinities are not allowed)")
        return str(int(value)) if value.is_integer() else repr(value)
    raise _Invalid(f"expected a string, got {_kind_of(value)}")


def _to_bool(value: Any) -> bool | int | str:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str):
        s = value.strip().lower()
        if s in ("true", "false"):
            return s == "true"
        if s in ("0", "1"):
            return value.strip()
    raise _Invalid(f"expected a boolean (true or false), got {_kind_of(value)} {_short(value)}")


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return shorten(text, 60)


def _decode_json(value: str, want: type, label: str) -> Any:
    try:
        decoded = json.loads(value)
    except RecursionError:
        raise _Invalid(f"expected {label}, got JSON nested too deeply") from None
    except ValueError:
        raise _Invalid(f"expected {label}, got a string that is not JSON: {_short(value)}") from None
    if not isinstance(decoded, want):
        raise _Invalid(f"expected {label}, got a string holding {_kind_of(decoded)}")
    return decoded


def _to_array(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        return list(_decode_json(value, list, "an array"))
    raise _Invalid(f"expected an array (JSON list), got {_kind_of(value)} {_short(value)}")


def _to_object(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            raise _Invalid("expected an object with string keys")
        return dict(value)
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        return dict(_decode_json(value, dict, "an object"))
    raise _Invalid(f"expected an object (JSON object), got {_kind_of(value)} {_short(value)}")


def _to_date(value: Any) -> str:
    if isinstance(value, dt.datetime):
        raise _Invalid("expected a date YYYY-MM-DD, got a date-time")
    if isinstance(value, dt.date):
        return value.isoformat()
    if not isinstance(value, str):
        raise _Invalid(f"expected a date string YYYY-MM-DD, got {_kind_of(value)}")
    s = value.strip()
    if not _DATE_RE.fullmatch(s):
        raise _Invalid(f"expected a date YYYY-MM-DD, got {value!r}")
    try:
        dt.date.fromisoformat(s)
    except ValueError:
        raise _Invalid(f"{value!r} is not a valid calendar date") from None
    return s


def _to_time(value: Any) -> str:
    if isinstance(value, dt.time):
        return value.isoformat(timespec="seconds" if value.second else "minutes")
    if not isinstance(value, str) or not _TIME_RE.fullmatch(value.strip()):
        raise _Invalid(f"expected a time HH:MM or HH:MM:SS (24-hour), got {_short(value)}")
    return value.strip()


def _coerce(p: Param, value: Any) -> Any:
    """The value to send for `p`, or `_Invalid` with the reason."""
    if _has_non_finite(value):
        raise _Invalid("NaN and infinities are not allowed")
    t = p.type
    if t == "integer":
        out: Any = _to_number(value, integer=True)
    elif t == "number":
        out = _to_number(value, integer=False)
    elif t == "boolean":
        out = _to_bool(value)
    elif t == "array":
        out = _to_array(value)
    elif t == "object":
        out = _to_object(value)
    elif t == "date":
        out = _to_date(value)
    elif t == "time":
        out = _to_time(value)
    else:  # string, enum, binary, anything else
        out = _to_string(value)
    if p.enum:
        out = _enum_member(p, out)
    return out


def coerce_value(p: Param, value: Any) -> Any:
    """`value` coerced for parameter `p` (as validation does); ValueError with the reason when unusable."""
    try:
        return _coerce(p, value)
    except _Invalid as e:
        raise ValueError(str(e)) from None


def _enum_member(p: Param, value: Any) -> Any:
    for allowed in p.enum:
        if type(allowed) is type(value) and allowed == value:
            return allowed
    for allowed in p.enum:  # 1 vs "1", "Celsius" vs "celsius": the catalog's spelling wins
        if str(allowed) == str(value) or (isinstance(allowed, str) and isinstance(value, str)
                                          and allowed.casefold() == value.casefold()):
            return allowed
    raise _Invalid(f"{_short(value)} is not an allowed value")


def size_cap(api: Api) -> int:
    """The largest argument (in characters) `api` accepts."""
    return api.max_argument_chars or DEFAULT_MAX_ARGUMENT_CHARS


def _size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (list, tuple, Mapping)):
        return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))
    return len(str(value))


def _check_size(p: Param, value: Any, cap: int) -> None:
    if isinstance(value, (list, tuple, Mapping)) and nesting_depth(value, MAX_ARGUMENT_NESTING) > MAX_ARGUMENT_NESTING:
        raise _Invalid(f"nested more than {MAX_ARGUMENT_NESTING} levels deep")
    size = _size(value)
    if size > cap:
        raise _Invalid(f"{size:,} characters; this API accepts at most {cap:,} per argument")


def _parse_arguments(arguments: Any, cap: int = DEFAULT_MAX_ARGUMENT_CHARS) -> dict[str, Any]:
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        if len(arguments) > 4 * cap:
            raise _Invalid(f"arguments are {len(arguments):,} characters long; this API accepts at most {4 * cap:,}")
        try:
            arguments = json.loads(arguments)
        except RecursionError:
            raise _Invalid("arguments are nested too deeply") from None
        except ValueError as e:
            raise _Invalid(f"arguments must be a JSON object; the string given is not valid JSON ({e})") from None
    if not isinstance(arguments, Mapping):
        raise _Invalid(f"arguments must be a JSON object mapping parameter names to values, got {_kind_of(arguments)}")
    if not all(isinstance(k, str) for k in arguments):
        raise _Invalid("arguments must be a JSON object with string keys")
    return dict(arguments)


def validate_arguments(api: Api, arguments: Any) -> ValidationResult:
    """Check `arguments` (a dict or a JSON string of one) against `api.params`; coerce safely."""
    cap = size_cap(api)
    try:
        given = _parse_arguments(arguments, cap)
    except _Invalid as e:
        return ValidationResult(ok=False, problems=[str(e)])
    problems: list[str] = []
    out: dict[str, Any] = {}
    names = [p.name for p in api.params]
    for key, value in given.items():
        p = api.param(key)
        if p is None:
            hint = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
            if not hint:
                folded = {n.casefold(): n for n in names}
                hint = [folded[key.casefold()]] if key.casefold() in folded else []
            suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
            known = ", ".join(names) if names else "none (call it with {})"
            problems.append(f"unknown parameter {key!r}{suggestion} (parameters: {known})")
            continue
        if value is None or (value == "" and p.type not in ("string", "enum", "binary")):
            if p.required:
                problems.append(f"parameter {describe_param(p)} is required but was {_short(value)}")
            continue
        try:
            _check_size(p, value, cap)
            out[key] = _coerce(p, value)
            if isinstance(value, str) and isinstance(out[key], (list, dict)):
                _check_size(p, out[key], cap)  # a JSON string decoded to an array/object: its nesting too
        except _Invalid as e:
            problems.append(f"parameter {describe_param(p)}: {e}")
    for p in api.required_params:
        if p.name not in given:
            problems.append(f"missing required parameter {describe_param(p)}")
    if problems:
        return ValidationResult(ok=False, arguments=out, problems=problems)
    return ValidationResult(ok=True, arguments=out)


def invalid_arguments_message(api: Api, result: ValidationResult) -> str:
    """What the model must fix: each problem, then the API's full parameter list."""
    lines = [f"Invalid arguments for {api.tool_name} / {api.name}; nothing was sent. Fix:"]
    lines += [f"- {p}" for p in result.problems]
    required = [p.name for p in api.required_params]
    lines.append(f"Required parameters: {', '.join(required) if required else 'none'}.")
    if api.params:
        lines.append("All parameters: " + "; ".join(describe_param(p) for p in api.params) + ".")
    else:
        lines.append("This API takes no parameters: call it with {}.")
    return "\n".join(lines)


def invalid_arguments_observation(api: Api, result: ValidationResult) -> Observation:
    """The Observation returned instead of calling an executor when validation fails."""
    return Observation(api_id=api.id, status=Status.INVALID_ARGUMENTS, error=invalid_arguments_message(api, result),
                       meta={"problems": list(result.problems)})
