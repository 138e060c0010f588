"""Reading data files we did not write: bounded, and every fault one line naming the file (and the field).

Every JSON or YAML file the package reads from a user, a release or a model folder goes through here:

- `read_bytes` / `read_text`: a regular file only (a FIFO or a device would block or never end), at most
  `max_bytes` (checked before and while reading), UTF-8.
- `loads_json`: `json.loads` with its faults named (line, column), nesting deeper than `MAX_NESTING` refused
  (also when the C parser gives up with a `RecursionError`), integers of more than `MAX_INT_DIGITS` digits and,
  unless `allow_nonfinite`, `NaN` / `Infinity` / numbers that overflow a float (`1e999`) refused.
- `loads_yaml`: PyYAML's safe loader, with at most `MAX_YAML_ALIASES` aliases and `MAX_VALUES` values after
  expanding them (a "billion laughs" document of a few hundred bytes expands to gigabytes), keys as strings and
  dates as ISO strings (JSON-compatible data).
- `load_data_file`: JSON or YAML by the file's suffix (other suffixes try JSON, then YAML).
- `Field` / `check_value` / `check_object`: the typed field reader (kind, bounds, finiteness, choices, length,
  nested items and fields), every fault one line naming the file and the field's path.
- `file_digest`: sha256 of a file's bytes, memoised per (path, device, inode, size, mtime, ctime).
- `inside`: a file name resolved inside a folder, refused when it climbs out or a symbolic link leads out.
- `replace_surrogates`: lone surrogates (`"\\ud800"`, valid in JSON escapes, not encodable as UTF-8) replaced by
  U+FFFD, with the field paths where it happened, so a loader can say which field of which file it repaired.

The faults are `DataFileError`s; a caller in a higher layer turns them into its own error (e.g. `CatalogError`)
with `source` and `field`.
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import json
import math
import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..text import shorten
from . import MAX_NESTING, NestingTooDeep, check_nesting

MAX_YAML_ALIASES = 100  # YAML aliases (`*name`) allowed in one document
MAX_VALUES = 1_000_000  # values (scalars, lists, maps) in a loaded YAML document, aliases counted as expanded
MAX_INT_DIGITS = 100  # an integer literal longer than this is no count, id or size any file of ours needs
_SURROGATE = re.compile("[\ud800-\udfff]")


class DataFileError(ValueError):
    """A data file that cannot be read as what it should be; `str()` is one line naming the file (and field)."""

    def __init__(self, message: str, *, source: str, field: str | None = None) -> None:
        self.message = message
        self.source = source
        self.field = field
        where = f"{source}" + (f", field {field!r}" if field else "")
        super().__init__(f"{where}: {message}")


def read_bytes(path: str | os.PathLike[str], *, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of the regular file `path`, refusing one over `max_bytes` (`what` names it in the message)."""
    p = Path(path)
    source = str(p)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise DataFileError(f"the {what} does not exist", source=source) from None
    except OSError as exc:
        raise DataFileError(f"cannot read the {what}: {exc.strerror or exc}", source=source) from None
    if not stat.S_ISREG(st.st_mode):
        raise DataFileError(f"not a regular file (a {what} must be one)", source=source)
    if st.st_size > max_bytes:
        raise DataFileError(f"the {what} is {st.st_size:,} bytes; at most {max_bytes:,} allowed", source=source)
    try:
        with p.open("rb") as f:
            raw = f.read(max_bytes + 1)  # the file may have grown since stat
    except OSError as exc:
        raise DataFileError(f"cannot read the {what}: {exc.strerror or exc}", source=source) from None
    if len(raw) > max_bytes:
        raise DataFileError(f"the {what} is over {max_bytes:,} bytes, the limit", source=source)
    return raw


def read_text(path: str | os.PathLike[str], *, max_bytes: int, what: str = "file") -> str:
    """`read_bytes` decoded as UTF-8 (a byte-order mark is dropped)."""
    raw = read_bytes(path, max_bytes=max_bytes, what=what)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataFileError(f"not UTF-8 text (byte {exc.start:,}: {exc.reason})", source=str(path)) from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} overflows a float")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text):,} digits (at most {MAX_INT_DIGITS} allowed)")
    return int(text)


def loads_json(text: str | bytes, *, source: str, allow_nonfinite: bool = False,
               max_depth: int = MAX_NESTING) -> Any:
    """`text` parsed as JSON, bounded (see the module docstring); faults as `DataFileError`."""
    kwargs: dict[str, Any] = {"parse_int": _bounded_int}
    if not allow_nonfinite:
        kwargs["parse_constant"] = _refuse_constant
        kwargs["parse_float"] = _finite_float
    try:
        value = json.loads(text, **kwargs)
    except json.JSONDecodeError as exc:
        raise DataFileError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
                            source=source) from None
    except RecursionError:
        raise DataFileError(f"nesting too deep (more than {max_depth} levels)", source=source) from None
    except UnicodeDecodeError as exc:
        raise DataFileError(f"not UTF-8 text (byte {exc.start:,}: {exc.reason})", source=source) from None
    except ValueError as exc:  # our number checks, or int's own digit limit
        raise DataFileError(f"invalid JSON: {exc}", source=source) from None
    return _checked_depth(value, source, max_depth)


def _checked_depth(value: Any, source: str, max_depth: int) -> Any:
    try:
        return check_nesting(value, max_depth)
    except NestingTooDeep:
        raise DataFileError(f"nesting too deep (more than {max_depth} levels)", source=source) from None


class _TooManyValues(Exception):
    """The document expands to more than `MAX_VALUES` values."""


class _TooManyAliases(Exception):
    """The YAML text uses more than `MAX_YAML_ALIASES` aliases."""


def _yaml_loader(text: str) -> Any:
    """A safe YAML loader for `text` that refuses more than `MAX_YAML_ALIASES` aliases."""
    import yaml  # lazily: only YAML files need it

    class BoundedLoader(yaml.SafeLoader):
        aliases = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                self.aliases += 1
                if self.aliases > MAX_YAML_ALIASES:
                    raise _TooManyAliases(f"more than {MAX_YAML_ALIASES} YAML aliases (the next at line "
                                          f"{self.peek_event().start_mark.line + 1}); refused: expanding "
                                          "aliases can exhaust memory")
            return super().compose_node(parent, index)

    return BoundedLoader(text)


def _jsonable(value: Any, budget: list[int]) -> Any:
    """YAML → JSON-compatible data: keys as strings (`200:` is an int in YAML), dates as ISO strings.

    `budget`: a one-item list counting down the values still allowed (aliased nodes count once per use).
    """
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooManyValues
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v, budget) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v, budget) for v in value]
    if isinstance(value, (_dt.date, _dt.datetime, _dt.time)):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(".nan and .inf are not numbers JSON allows")
    return value


def loads_yaml(text: str, *, source: str, max_depth: int = MAX_NESTING) -> Any:
    """`text` parsed as YAML (the safe loader), bounded (see the module docstring); faults as `DataFileError`."""
    import yaml

    loader = _yaml_loader(text)
    try:
        value = _jsonable(loader.get_single_data(), [MAX_VALUES])
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise DataFileError(f"invalid YAML{at}: {problem}", source=source) from None
    except _TooManyAliases as exc:
        raise DataFileError(str(exc), source=source) from None
    except _TooManyValues:
        raise DataFileError(f"the document expands to more than {MAX_VALUES:,} values (nested YAML aliases?)",
                            source=source) from None
    except RecursionError:  # YAML anchors can build self-containing structures, or the text nests deeply
        raise DataFileError(f"nesting too deep (more than {max_depth} levels), or an alias contains itself",
                            source=source) from None
    except ValueError as exc:
        raise DataFileError(f"invalid YAML: {exc}", source=source) from None
    finally:
        loader.dispose()
    return _checked_depth(value, source, max_depth)


def loads_data(text: str, *, source: str, suffix: str = "", max_depth: int = MAX_NESTING) -> Any:
    """JSON for a `.json` suffix, YAML for `.yaml`/`.yml`; otherwise JSON, then YAML (YAML is a superset)."""
    suffix = suffix.lower()
    if suffix in (".yaml", ".yml"):
        return loads_yaml(text, source=source, max_depth=max_depth)
    try:
        return loads_json(text, source=source, max_depth=max_depth)
    except DataFileError:
        if suffix == ".json":
            raise
    return loads_yaml(text, source=source, max_depth=max_depth)


def load_data_file(path: str | os.PathLike[str], *, max_bytes: int, what: str = "file",
                   max_depth: int = MAX_NESTING) -> Any:
    """A JSON or YAML file (by suffix, see `loads_data`), read with `read_text`'s bounds."""
    p = Path(path)
    return loads_data(read_text(p, max_bytes=max_bytes, what=what), source=str(p), suffix=p.suffix,
                      max_depth=max_depth)


def load_json_file(path: str | os.PathLike[str], *, max_bytes: int, what: str = "file",
                   allow_nonfinite: bool = False, max_depth: int = MAX_NESTING) -> Any:
    """A JSON file, read with `read_text`'s bounds and parsed with `loads_json`'s."""
    p = Path(path)
    return loads_json(read_text(p, max_bytes=max_bytes, what=what), source=str(p),
                      allow_nonfinite=allow_nonfinite, max_depth=max_depth)


def _path_join(path: str, key: Any) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else str(key))


def replace_surrogates(value: Any, path: str = "") -> tuple[Any, list[str]]:
    """`value` with lone surrogates in its strings (keys included) replaced by U+FFFD, and the field paths where
    that happened (`tools[3].description`); iterative, so any depth `check_nesting` allows is fine."""
    fixed: list[str] = []

    def clean(text: str, where: str) -> str:
        try:
            text.encode("utf-8")
            return text
        except UnicodeEncodeError:
            fixed.append(where or "(top level)")
            return _SURROGATE.sub("\ufffd", text)

    return _walk(value, path, clean), fixed


def _walk(value: Any, path: str, clean: Any) -> Any:
    if isinstance(value, str):
        return clean(value, path)
    if isinstance(value, Mapping):
        return {clean(str(k), path) if isinstance(k, str) else k: _walk(v, _path_join(path, k), clean)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_walk(v, _path_join(path, i), clean) for i, v in enumerate(value)]
    return value


def first_fields(paths: Iterable[str], most: int = 3) -> str:
    """`a, b, c and 4 more` — a short list of field paths for a one-line message."""
    paths = list(paths)
    shown = ", ".join(paths[:most])
    return shown + (f" and {len(paths) - most} more" if len(paths) > most else "")


# ---------------------------------------------------------------------- typed fields
_MISSING: Any = object()
_KINDS = {"str": "a string", "int": "an integer", "float": "a number", "bool": "true or false", "list": "a list",
          "object": "an object", "any": "a value"}


@dataclass(frozen=True)
class Field:
    """What one value of a data file must be: `check_value` enforces it and names the file and field on a fault.

    `kind`: ``str``, ``int`` (not a bool), ``float`` (an int or a float, finite; returned as float), ``bool``,
    ``list``, ``object`` or ``any``. `low`/`high`: inclusive bounds of a number. `choices`: the allowed values.
    `pattern`: a regular expression a string must match in full. `max_len`: characters of a string, items of a
    list, keys of an object. `items`: each item of a list, or each value of an object without `fields`.
    `fields`: an object's known fields (`required` ones must be present; a missing optional field with a
    `default` gets it); `extra`: whether other keys are allowed. `nullable`: null is allowed too.
    """

    kind: str
    required: bool = False
    default: Any = _MISSING
    low: float | None = None
    high: float | None = None
    choices: tuple[Any, ...] | None = None
    pattern: str | None = None
    max_len: int | None = None
    items: Field | None = None
    fields: Mapping[str, Field] | None = None
    extra: bool = True
    nullable: bool = False

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"unknown field kind {self.kind!r}")


def _shown(value: Any) -> str:
    """A short rendering of a faulty value for a one-line message (never a whole document)."""
    text = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
    return shorten(text, 40)


def _number(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def _bounds(spec: Field) -> str:
    if spec.low is not None and spec.high is not None:
        return f" from {_number(spec.low)} to {_number(spec.high)}"
    if spec.low is not None:
        return f" of at least {_number(spec.low)}"
    return f" of at most {_number(spec.high)}" if spec.high is not None else ""


def check_value(value: Any, spec: Field, *, source: str, field: str = "") -> Any:
    """`value` checked against `spec` (see `Field`); objects come back with their defaults filled in.

    A fault is a `DataFileError` naming `source` and the field's path (``weights.rrf_k``, ``added_tokens[3].id``).
    """
    def fault(message: str) -> DataFileError:
        return DataFileError(message, source=source, field=field or None)

    if value is None and spec.nullable:
        return None
    kind = spec.kind
    ok = {"str": isinstance(value, str), "bool": isinstance(value, bool), "list": isinstance(value, list),
          "object": isinstance(value, dict), "any": True,
          "int": isinstance(value, int) and not isinstance(value, bool),
          "float": isinstance(value, (int, float)) and not isinstance(value, bool)}[kind]
    if not ok:
        raise fault(f"must be {_KINDS[kind]}{_bounds(spec) if kind in ('int', 'float') else ''}, "
                    f"got {_shown(value)}")
    if kind == "float":
        value = float(value)
        if not math.isfinite(value):
            raise fault(f"must be a finite number, got {_shown(value)}")
    if kind in ("int", "float") and ((spec.low is not None and value < spec.low)
                                     or (spec.high is not None and value > spec.high)):
        raise fault(f"must be {_KINDS[kind]}{_bounds(spec)}, got {_shown(value)}")
    if spec.choices is not None and value not in spec.choices:
        raise fault(f"must be one of {', '.join(map(repr, spec.choices))}; got {_shown(value)}")
    if spec.max_len is not None and isinstance(value, (str, list, dict)) and len(value) > spec.max_len:
        raise fault(f"holds {len(value):,} {'characters' if isinstance(value, str) else 'items'}; "
                    f"at most {spec.max_len:,} allowed")
    if spec.pattern is not None and isinstance(value, str) and not re.fullmatch(spec.pattern, value):
        raise fault(f"has an unexpected form: {_shown(value)}")
    if kind == "list" and spec.items is not None:
        return [check_value(v, spec.items, source=source, field=f"{field}[{i}]") for i, v in enumerate(value)]
    if kind == "object":
        return _check_object(value, spec, source, field)
    return value


def _check_object(value: dict[str, Any], spec: Field, source: str, field: str) -> dict[str, Any]:
    if spec.fields is None:
        if spec.items is None:
            return value
        return {k: check_value(v, spec.items, source=source, field=_path_join(field, k)) for k, v in value.items()}
    out: dict[str, Any] = {}
    for key, v in value.items():
        sub = spec.fields.get(key)
        if sub is None and not spec.extra:
            raise DataFileError(f"unknown field (expected {', '.join(spec.fields)})", source=source,
                                field=_path_join(field, key))
        out[key] = v if sub is None else check_value(v, sub, source=source, field=_path_join(field, key))
    for key, sub in spec.fields.items():
        if key in out:
            continue
        if sub.required:
            raise DataFileError("is missing", source=source, field=_path_join(field, key))
        if sub.default is not _MISSING:
            out[key] = sub.default
    return out


def check_object(value: Any, fields: Mapping[str, Field], *, source: str, extra: bool = True) -> dict[str, Any]:
    """A whole document that must be a JSON object with `fields` (see `Field`)."""
    if not isinstance(value, dict):
        raise DataFileError(f"expected a JSON object, got {_KINDS.get(type(value).__name__, type(value).__name__)}",
                            source=source)
    return _check_object(value, Field("object", fields=fields, extra=extra), source, "")


# ---------------------------------------------------------------------- paths inside a folder
def inside(root: str | os.PathLike[str], name: str, *, what: str = "folder") -> Path:
    """`root / name`, refused (`DataFileError`) when `name` is absolute, climbs out with ``..``, or when it (or a
    folder on its way) is a symbolic link that leads out of `root` (a link that stays inside is fine).

    The result is the resolved path, so a later open cannot be redirected by the same link.
    """
    base = Path(root).resolve()
    rel = Path(name)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise DataFileError(f"a file name must stay inside the {what}: {_shown(name)}", source=str(base))
    target = (base / rel).resolve()
    if target != base and base not in target.parents:
        raise DataFileError(f"a symbolic link that leads out of the {what} (to {target}); refused",
                            source=str(base / rel))
    return target


# ---------------------------------------------------------------------- digests
@functools.lru_cache(maxsize=1024)
def _digest_of(path: str, _stat_key: tuple[int, ...]) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def file_digest(path: str | os.PathLike[str]) -> str:
    """sha256 (hex) of a regular file's bytes, computed once per (device, inode, size, mtime, ctime) in a process:
    an identity we compute, never one a file claims, that costs a `stat` the second time."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError as exc:
        raise DataFileError(f"cannot read it: {exc.strerror or exc}", source=str(path)) from None
    if not stat.S_ISREG(st.st_mode):
        raise DataFileError("not a regular file", source=str(path))
    return _digest_of(real, (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
