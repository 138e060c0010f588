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
- `iter_lines` / `iter_json_lines`: a JSON-lines or CSV file streamed line by line, each line capped at
  `max_line_bytes` (a file of one 2 GB line is refused at the cap, not read whole), faults naming the line.
- `check_model`: data validated against a pydantic model (the one schema layer for every field of every file:
  types, ranges, finiteness); the first fault is one line naming the file, the line and the field path.
- `safe_file_name` / `path_inside` / `check_plain_name`: names that come from data (a group, a query id, a tool
  name in a config) become file names, never paths; a path built from them is checked to resolve inside its
  folder (symlinks followed), or refused.

The faults are `DataFileError`s; a caller in a higher layer turns them into its own error (e.g. `CatalogError`)
with `source` and `field`.
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import json
import logging
import math
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from . import MAX_NESTING, NestingTooDeep, check_nesting

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")

MAX_YAML_ALIASES = 100  # YAML aliases (`*name`) allowed in one document
MAX_VALUES = 1_000_000  # values (scalars, lists, maps) in a loaded YAML document, aliases counted as expanded
MAX_INT_DIGITS = 100  # an integer literal longer than this is no count, id or size any file of ours needs
MAX_FILE_NAME_CHARS = 120  # a file name made from data (before its suffix and digest)
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # how a surrogate is written in JSON text
_log = logging.getLogger(__name__)
_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


class DataFileError(ValueError):
    """A data file that cannot be read as what it should be; `str()` is one line naming the file (and the line of a
    JSON-lines or CSV file, and the field)."""

    def __init__(self, message: str, *, source: str, field: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.source = source
        self.field = field
        self.line = line
        where = f"{source}" + (f", line {line}" if line is not None else "") + (f", field {field!r}" if field else "")
        super().__init__(f"{where}: {message}")


class InvalidJson(DataFileError):
    """Text that is not JSON at all (a syntax error, e.g. a line cut short by a crash), as opposed to JSON that is
    refused (too deep, a number out of range)."""


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
        raise InvalidJson(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
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


def repair_surrogates(value: Any, *, source: str, line: int | None = None, text: str | None = None,
                      prefix: str = "") -> Any:
    """`value` with lone surrogates replaced (`replace_surrogates`), and a warning naming `source` (and `line`) and
    the fields when there were any. `text`: the JSON text `value` was parsed from; when it holds no surrogate escape
    (`\\udXXX`) the walk is skipped (a lone surrogate in JSON can only be written as one)."""
    if text is not None and not _SURROGATE_ESCAPE.search(text):
        return value
    cleaned, fixed = replace_surrogates(value, prefix)
    if fixed:
        where = source + (f", line {line}" if line is not None else "")
        _log.warning("%s: invalid code points (lone surrogates) replaced with U+FFFD in %d field(s): %s", where,
                     len(fixed), first_fields(fixed))
    return cleaned


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
# ------------------------------------------------------------------------------------------- lines, streamed
def _open_regular(path: str | os.PathLike[str], what: str) -> Any:
    """`path` opened for binary reading, refusing what is not a regular file (a FIFO would block)."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise DataFileError(f"the {what} does not exist", source=str(p)) from None
    except OSError as exc:
        raise DataFileError(f"cannot read the {what}: {exc.strerror or exc}", source=str(p)) from None
    if not stat.S_ISREG(st.st_mode):
        raise DataFileError(f"not a regular file (a {what} must be one)", source=str(p))
    try:
        return p.open("rb")
    except OSError as exc:
        raise DataFileError(f"cannot read the {what}: {exc.strerror or exc}", source=str(p)) from None


def iter_lines(path: str | os.PathLike[str], *, max_line_bytes: int, what: str = "file",
               errors: str = "strict") -> Iterator[tuple[int, str]]:
    """`(line number, text)` of each line of the regular file `path` (its newline kept), read one line at a time; a
    line over `max_line_bytes` is a `DataFileError` naming it (found after reading at most that many bytes of it).
    `errors`: how undecodable UTF-8 is handled ("strict": a `DataFileError` naming the line; "replace": U+FFFD)."""
    source = str(path)
    with _open_regular(path, what) as fh:
        n = 0
        while True:
            try:
                raw = fh.readline(max_line_bytes + 1)
            except OSError as exc:
                raise DataFileError(f"cannot read the {what}: {exc.strerror or exc}", source=source,
                                    line=n + 1) from None
            if not raw:
                return
            n += 1
            if len(raw) > max_line_bytes:
                raise DataFileError(f"the line is over {max_line_bytes:,} bytes, the limit of a {what} line",
                                    source=source, line=n)
            try:
                text = raw.decode("utf-8-sig" if n == 1 else "utf-8", errors)
            except UnicodeDecodeError as exc:
                raise DataFileError(f"not UTF-8 text (byte {exc.start:,} of the line: {exc.reason})", source=source,
                                    line=n) from None
            yield n, text


def iter_json_lines(path: str | os.PathLike[str], *, max_line_bytes: int, what: str = "JSON-lines file",
                    skip_invalid: bool = False, allow_nonfinite: bool = False,
                    max_depth: int = MAX_NESTING) -> Iterator[tuple[int, Any]]:
    """`(line number, value)` of each non-blank line of a JSON-lines file, bounded per line as `loads_json` bounds a
    file. `skip_invalid`: a line that is not JSON at all (e.g. cut short by a crash) is skipped; JSON that is refused
    (too deep, a number out of range, an over-long line) is always a `DataFileError` naming the line."""
    source = str(path)
    for n, text in iter_lines(path, max_line_bytes=max_line_bytes, what=what, errors="replace"):
        if not text.strip():
            continue
        try:
            value = loads_json(text, source=source, allow_nonfinite=allow_nonfinite, max_depth=max_depth)
        except InvalidJson as exc:
            if skip_invalid:
                continue
            raise InvalidJson(exc.message.replace("at line 1 column", "at column"), source=source, line=n) from None
        except DataFileError as exc:
            raise DataFileError(exc.message, source=source, line=n) from None
        yield n, value


def _decoder(allow_nonfinite: bool) -> json.JSONDecoder:
    kwargs: dict[str, Any] = {"parse_int": _bounded_int}
    if not allow_nonfinite:
        kwargs["parse_constant"] = _refuse_constant
        kwargs["parse_float"] = _finite_float
    return json.JSONDecoder(**kwargs)


def iter_json_array(path: str | os.PathLike[str], *, max_bytes: int, max_item_bytes: int,
                    what: str = "JSON file", allow_nonfinite: bool = False, max_depth: int = MAX_NESTING,
                    repair: bool = True, chunk_bytes: int = 1 << 20) -> Iterator[tuple[int, Any]]:
    """`(index, item)` of each item of a file holding one JSON list, parsed one item at a time, so a reader that
    needs the first N items stops reading there. Bounded as `loads_json` bounds a file (per item: depth, numbers),
    the file at `max_bytes`, an item at `max_item_bytes`; a fault is a `DataFileError` naming the file and the
    item (`field '[3]'`). A file that is no JSON list is one too. `repair`: lone surrogates are replaced
    (`repair_surrogates`, with a warning naming the item's fields)."""
    source = str(path)
    decoder = _decoder(allow_nonfinite)
    with _open_regular(path, what) as fh:
        reader = _utf8_reader(fh)
        buf, pos, eof, total, index = "", 0, False, 0, 0

        def more() -> bool:
            nonlocal buf, pos, eof, total
            if eof:
                return False
            chunk = reader.read(chunk_bytes)
            if not chunk:
                eof = True
                return False
            total += len(chunk)
            if total > max_bytes:
                raise DataFileError(f"the {what} is over {max_bytes:,} bytes, the limit", source=source)
            buf, pos = buf[pos:] + chunk, 0
            return True

        def skip_space() -> str:
            nonlocal pos
            while True:
                while pos < len(buf) and buf[pos] in " \t\r\n":
                    pos += 1
                if pos < len(buf) or not more():
                    return buf[pos] if pos < len(buf) else ""

        try:
            if skip_space() != "[":
                raise DataFileError(f"expected a JSON list ('[') at the start of the {what}", source=source)
            pos += 1
            if skip_space() == "]":
                pos += 1
            else:
                while True:
                    while True:  # one item: decode, reading on while it is cut at the end of the buffer
                        try:
                            item, end = decoder.raw_decode(buf, pos)
                            if end < len(buf) or eof:
                                break
                        except json.JSONDecodeError as exc:
                            if eof:
                                raise DataFileError(f"invalid JSON at line {exc.lineno} column {exc.colno} of "
                                                    f"item {index}: {exc.msg}", source=source) from None
                        if len(buf) - pos > max_item_bytes:
                            raise DataFileError(f"item {index} is over {max_item_bytes:,} bytes, the limit",
                                                source=source, field=f"[{index}]")
                        if not more():
                            continue
                    item = _checked_depth_item(item, source, max_depth, index)
                    if repair:
                        item = repair_surrogates(item, source=source, text=buf[pos:end], prefix=f"[{index}]")
                    pos = end
                    yield index, item
                    index += 1
                    sep = skip_space()
                    if sep == ",":
                        pos += 1
                        skip_space()
                        continue
                    if sep == "]":
                        pos += 1
                        break
                    raise DataFileError(f"expected ',' or ']' after item {index - 1}", source=source)
            if skip_space():
                raise DataFileError(f"text after the JSON list of the {what}", source=source)
        except RecursionError:
            raise DataFileError(f"nesting too deep (more than {max_depth} levels)", source=source,
                                field=f"[{index}]") from None
        except UnicodeDecodeError as exc:
            raise DataFileError(f"not UTF-8 text ({exc.reason})", source=source) from None
        except ValueError as exc:
            if isinstance(exc, DataFileError):
                raise
            raise DataFileError(f"invalid JSON: {exc}", source=source, field=f"[{index}]") from None


def _utf8_reader(fh: Any) -> Any:
    """A UTF-8 text reader over the binary file `fh` (a byte-order mark is dropped)."""
    import codecs

    return codecs.getreader("utf-8-sig")(fh)


def _checked_depth_item(value: Any, source: str, max_depth: int, index: int) -> Any:
    try:
        return check_nesting(value, max_depth - 1)  # the item sits one level inside the list
    except NestingTooDeep:
        raise DataFileError(f"nesting too deep (more than {max_depth} levels)", source=source,
                            field=f"[{index}]") from None


# ------------------------------------------------------------------------------------------- one schema layer
def _loc(prefix: str, data: Any, loc: Iterable[Any], missing: bool) -> str:
    """The field path of a pydantic error location in `data`: the union members pydantic names in a location
    (`query_id.str`) are no fields, so only keys and indexes that `data` has are kept (and the absent key of a
    missing field)."""
    keys = list(loc)
    path, node = prefix, data
    for i, key in enumerate(keys):
        present = (isinstance(node, Mapping) and key in node) or (
            isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node))
        if present:
            node = node[key]
        elif not (missing and i == len(keys) - 1):
            continue
        path = _path_join(path, key)
    return path


def _shown(value: Any, limit: int = 40) -> str:
    """A short rendering of a faulty value for a one-line message (never a whole document)."""
    if isinstance(value, (dict, list)):
        return f"a JSON {'object' if isinstance(value, dict) else 'list'}"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def check_model(model: type[M], data: Any, *, source: str, line: int | None = None, prefix: str = "") -> M:
    """`data` validated as `model` (a pydantic model: the one schema layer for data files); the first fault is a
    `DataFileError` naming `source`, `line` and the field path (`prefix` before it), e.g.
    `results.jsonl, line 3, field 'usage.model_calls': Input should be a valid number, got 'abc'`."""
    from pydantic import ValidationError

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = exc.errors(include_url=False)
        first = problems[0]
        located = [(_loc(prefix, data, p.get("loc", ()), p.get("type") == "missing"), p) for p in problems]
        field = located[0][0]
        # a union's members each fail at the same field: "a valid string or a valid integer"
        msgs = list(dict.fromkeys(str(p["msg"]) for f, p in located if f == field))
        lead = "Input should be "
        if len(msgs) > 1 and all(m.startswith(lead) for m in msgs):
            msgs = [lead + " or ".join(m[len(lead):] for m in msgs)]
        others = len({f for f, _ in located} - {field})
        more = f" (and faults in {others} more field(s))" if others else ""
        got = f", got {_shown(first.get('input'))}" if first.get("type") != "missing" else ""
        raise DataFileError(f"{'; '.join(msgs)}{got}{more}", source=source, line=line, field=field or None) from None
    except RecursionError:  # depth is checked when reading; this guards data built in code
        raise DataFileError("nesting too deep", source=source, line=line, field=prefix or None) from None


# ------------------------------------------------------------------------------------------- names → paths
def safe_file_name(name: object, *, fallback: str = "item", max_chars: int = MAX_FILE_NAME_CHARS) -> str:
    """A file name (no suffix) made from a name that comes from data (a group, a query id, a thread id): only
    `[A-Za-z0-9._-]`, no leading dot, at most `max_chars` characters. A name that had to change gets a digest of
    the original appended (`a_b-3f2a1c0d`), so two different names never share a file."""
    text = str(name)
    cleaned = _UNSAFE_NAME_CHARS.sub("_", text).lstrip(".")[:max_chars] or fallback
    if cleaned == text:
        return cleaned
    import hashlib

    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{cleaned}-{digest}"


def path_inside(root: str | os.PathLike[str], *parts: str, what: str = "file") -> Path:
    """`root / parts...`, resolved (symlinks followed), when it lies inside `root` (resolved too); otherwise a
    `DataFileError`: a name from data never reaches a file outside its folder."""
    base = Path(root).resolve()
    target = base.joinpath(*parts).resolve()
    if target != base and base not in target.parents:
        shown = "/".join(parts)
        raise DataFileError(f"the {what} {shown!r} resolves to {target}, outside {base}; refused",
                            source=str(root))
    return target


def check_plain_name(name: str, *, source: str, field: str, what: str = "name") -> str:
    """`name` when it is a plain name (no path separator, not `.` / `..`, no NUL, not absolute); otherwise a
    `DataFileError`: a name given in a config is a name, never a path."""
    if (not name or "/" in name or "\\" in name or "\x00" in name or name in (".", "..")
            or os.path.isabs(name) or name.startswith("~")):
        raise DataFileError(f"{name!r} is not a {what} (a name, not a path: no '/', '\\', '..' or '~')",
                            source=source, field=field)
    return name
