"""Reading data files we did not write: bounded, and every fault one line naming the file (and the line, the field).

Every JSON or YAML file the package reads from a user, a release or a model folder goes through here:

- `read_bytes` / `read_text`: a regular file only (a FIFO or a device would block or never end), at most
  `max_bytes` (checked before and while reading), UTF-8.
- `loads_json`: `json.loads` with its faults named (line, column), nesting deeper than `MAX_NESTING` refused
  (also when the C parser gives up with a `RecursionError`), integers of more than `MAX_INT_DIGITS` digits and,
  unless `allow_nonfinite`, `NaN` / `Infinity` / numbers that overflow a float (`1e999`) refused.
- `loads_yaml`: PyYAML's safe loader, with at most `MAX_YAML_ALIASES` aliases and `MAX_VALUES` values after
  expanding them (a "billion laughs" document of a few hundred bytes expands to gigabytes), keys as strings and
  dates as ISO strings (JSON-compatible data).
- `read_head`: the start of a file (its format told from its first character, without reading it whole).
- `load_data_file`: JSON or YAML by the file's suffix (other suffixes try JSON, then YAML).
- `file_digest`: sha256 of a file's bytes, memoised per (path, device, inode, size, mtime, ctime).
- `replace_surrogates`: lone surrogates (`"\\ud800"`, valid in JSON escapes, not encodable as UTF-8) replaced by
  U+FFFD, with the field paths where it happened, so a loader can say which field of which file it repaired.
- `iter_lines` / `iter_json_lines` / `iter_json_array`: a JSON-lines or CSV file streamed line by line (each line
  capped at `max_line_bytes`: a file of one 2 GB line is refused at the cap, not read whole), a JSON list item by
  item; faults naming the line or the item.

The sibling modules check what was read: `sanitize.schema` (the one schema layer, pydantic: `check_model`) and
`sanitize.paths` (names from data kept inside their folders); `sanitize.writes` writes files and folders whole.
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
from pathlib import Path
from typing import Any

from ..text import shorten
from . import MAX_NESTING, NestingTooDeep, check_nesting

MAX_YAML_ALIASES = 100  # YAML aliases (`*name`) allowed in one document
MAX_VALUES = 1_000_000  # values (scalars, lists, maps) in a loaded YAML document, aliases counted as expanded
MAX_INT_DIGITS = 100  # an integer literal longer than this is no count, id or size any file of ours needs
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # how a surrogate is written in JSON text
_log = logging.getLogger(__name__)


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


def _open_regular(path: str | os.PathLike[str], what: str, *, max_bytes: int | None = None) -> Any:
    """`path` opened for binary reading, refusing what is not a regular file (a FIFO would block) and, with
    `max_bytes`, a file larger than that (from its size, before reading)."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise DataFileError(f"the {what} does not exist", source=str(p)) from None
    except OSError as exc:
        raise DataFileError(f"cannot read the {what}: {exc.strerror or exc}", source=str(p)) from None
    if not stat.S_ISREG(st.st_mode):
        raise DataFileError(f"not a regular file (a {what} must be one)", source=str(p))
    if max_bytes is not None and st.st_size > max_bytes:
        raise DataFileError(f"the {what} is {st.st_size:,} bytes; at most {max_bytes:,} allowed", source=str(p))
    try:
        return p.open("rb")
    except OSError as exc:
        raise DataFileError(f"cannot read the {what}: {exc.strerror or exc}", source=str(p)) from None


def read_bytes(path: str | os.PathLike[str], *, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of the regular file `path`, refusing one over `max_bytes` (`what` names it in the message)."""
    with _open_regular(path, what, max_bytes=max_bytes) as fh:
        try:
            raw = fh.read(max_bytes + 1)  # the file may have grown since stat
        except OSError as exc:
            raise DataFileError(f"cannot read the {what}: {exc.strerror or exc}", source=str(path)) from None
    if len(raw) > max_bytes:
        raise DataFileError(f"the {what} is over {max_bytes:,} bytes, the limit", source=str(path))
    return raw


def read_head(path: str | os.PathLike[str], *, max_bytes: int = 4096, what: str = "file") -> bytes:
    """The first `max_bytes` bytes of the regular file `path`, a UTF-8 byte-order mark and leading whitespace dropped:
    enough to tell a file's format from its first character without reading it whole."""
    with _open_regular(path, what) as fh:
        try:
            raw: bytes = fh.read(max_bytes)
        except OSError as exc:
            raise DataFileError(f"cannot read the {what}: {exc.strerror or exc}", source=str(path)) from None
    return raw.removeprefix(b"\xef\xbb\xbf").lstrip()


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


def _json_hooks(allow_nonfinite: bool) -> dict[str, Any]:
    """The `json` parsing hooks that bound numbers (see `loads_json`)."""
    hooks: dict[str, Any] = {"parse_int": _bounded_int}
    if not allow_nonfinite:
        hooks.update(parse_constant=_refuse_constant, parse_float=_finite_float)
    return hooks


def loads_json(text: str | bytes, *, source: str, allow_nonfinite: bool = False,
               max_depth: int = MAX_NESTING) -> Any:
    """`text` parsed as JSON, bounded (see the module docstring); faults as `DataFileError`."""
    try:
        value = json.loads(text, **_json_hooks(allow_nonfinite))
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


def _checked_depth(value: Any, source: str, max_depth: int, item: int | None = None) -> Any:
    """`value` when it nests at most `max_depth` levels (an `item` of a list: one level less), else a fault."""
    try:
        return check_nesting(value, max_depth if item is None else max_depth - 1)
    except NestingTooDeep:
        raise DataFileError(f"nesting too deep (more than {max_depth} levels)", source=source,
                            field=None if item is None else f"[{item}]") from None


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

    loader = None
    try:
        loader = _yaml_loader(text)  # the reader checks every character here: a NUL is refused already
        value = _jsonable(loader.get_single_data(), [MAX_VALUES])
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (NUL, other controls)
        ch = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\0")
        raise DataFileError(f"invalid YAML: the character U+{ch:04X} (at character {exc.position:,}) is not "
                            "allowed in YAML", source=source) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
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
        if loader is not None:
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


def join_field(path: str, *keys: Any) -> str:
    """A field path for a message: `tools[3].description` from `"tools"`, `3`, `"description"`."""
    for key in keys:
        path = f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else str(key))
    return path


def brief(value: Any, limit: int = 40) -> str:
    """A short rendering of a faulty value for a one-line message (never a whole document)."""
    if isinstance(value, (dict, list)):
        return f"a JSON {'object' if isinstance(value, dict) else 'list'}"
    return shorten(repr(value), limit)


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
        return {clean(str(k), path) if isinstance(k, str) else k: _walk(v, join_field(path, k), clean)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_walk(v, join_field(path, i), clean) for i, v in enumerate(value)]
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


def iter_json_array(path: str | os.PathLike[str], *, max_bytes: int, max_item_bytes: int,
                    what: str = "JSON file", allow_nonfinite: bool = False, max_depth: int = MAX_NESTING,
                    repair: bool = True, chunk_bytes: int = 1 << 20) -> Iterator[tuple[int, Any]]:
    """`(index, item)` of each item of a file holding one JSON list, parsed one item at a time, so a reader that
    needs the first N items stops reading there. Bounded as `loads_json` bounds a file (per item: depth, numbers),
    the file at `max_bytes`, an item at `max_item_bytes`; a fault is a `DataFileError` naming the file and the
    item (`field '[3]'`). A file that is no JSON list is one too. `repair`: lone surrogates are replaced
    (`repair_surrogates`, with a warning naming the item's fields)."""
    source = str(path)
    decoder = json.JSONDecoder(**_json_hooks(allow_nonfinite))
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
                    item = _checked_depth(item, source, max_depth, index)
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

