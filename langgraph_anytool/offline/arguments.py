"""Arguments for an API read from a request text: each parameter takes a mention that fits its type and name."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..catalog import Api, Param
from .mentions import MONTHS, Mention, Mentions, code_of, loose, mentions_of, overlaps, zone_of_place

_TARGET_BEFORE = re.compile(r"\b(?:to|into|in|as|how many)\s+(?:the\s+)?$", re.IGNORECASE)
_SOURCE_BEFORE = re.compile(r"\b(?:from)\s+(?:the\s+)?$", re.IGNORECASE)


def _preceded(text: str, start: int, pattern: re.Pattern[str]) -> bool:
    return bool(pattern.search(text[max(0, start - 12):start]))


def _direction(name: str) -> Literal["source", "target", ""]:
    n = name.lower()
    if n.startswith(("to_", "target", "dest")) or n.endswith(("_to", "_b", "2", "_target")) or n == "to":
        return "target"
    if n.startswith(("from_", "source", "origin")) or n.endswith(("_from", "_a", "1")) or n == "from":
        return "source"
    return ""


def _pick(free: Sequence[Mention], text: str, direction: str) -> Mention | None:
    """The first mention, a target preferring one introduced by to/into/in, a source one that is not."""
    if not free:
        return None
    if direction == "target" and len(free) > 1:
        marked = [m for m in free if _preceded(text, m.start, _TARGET_BEFORE)]
        return marked[0] if marked else free[-1]
    if direction == "source":
        unmarked = [m for m in free if _preceded(text, m.start, _SOURCE_BEFORE)
                    or not _preceded(text, m.start, _TARGET_BEFORE)]
        return unmarked[0] if unmarked else free[0]
    return free[0]


def _enum_mentions(param: Param, me: Mentions) -> list[Mention]:
    """Mentions of a value of an enum parameter (directly, or as a unit spelled out)."""
    values = [v for v in param.enum if v is not None]
    out: list[Mention] = []
    for v in values:
        sv = str(v)
        spelled = re.escape(sv).replace("_", "[ _-]")
        flags = 0 if len(sv) <= 2 else re.IGNORECASE
        for m in re.finditer(rf"(?<![\w/]){spelled}(?![\w/])", me.text, flags):
            out.append(Mention(m.start(), m.end(), v, m.group(0)))
    for ident in me.identifiers:  # "SHA-256" is the value "sha256", "UTF-8" "utf8" (loosely the same name)
        hit = next((v for v in values if loose(str(v)) == ident.codes[0]), None)
        if hit is not None:
            out.append(Mention(ident.start, ident.end, hit, ident.text))
    for u in me.units:
        hit = next((v for v in values if str(v) in u.codes), None)
        if hit is None:
            hit = next((v for v in values if str(v).lower() in {c.lower() for c in u.codes}), None)
        if hit is not None and not any(o.start == u.start for o in out):
            out.append(Mention(u.start, u.end, hit, u.text))
    out.sort(key=lambda m: (m.start, -(m.end - m.start)))
    dedup: list[Mention] = []
    for mention in out:
        if not overlaps((mention.start, mention.end), [(d.start, d.end) for d in dedup]):
            dedup.append(mention)
    return dedup


def _number_value(param: Param, value: int | float) -> int | float:
    if param.type == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


@dataclass
class _Extraction:
    """Mentions of a text and the spans already given to a parameter (a span feeds one parameter only)."""

    me: Mentions
    spans: list[tuple[int, int]] = field(default_factory=list)  # given to a parameter
    touched: list[tuple[int, int]] = field(default_factory=list)  # read (a date's year, a list of cities)
    weak: set[str] = field(default_factory=set)  # parameters filled on weak evidence

    def take(self, found: Sequence[Mention], direction: str = "") -> Mention | None:
        free = [m for m in found if not overlaps((m.start, m.end), self.spans)]
        m = _pick(free, self.me.text, direction)
        if m is not None:
            self.spans.append((m.start, m.end))
        return m

    def read(self, found: Sequence[Mention]) -> None:
        self.touched.extend((m.start, m.end) for m in found)


def _has(name: str, *words: str) -> bool:
    """Whether a parameter name has a part starting or ending with one of `words` ("to_unit", "timezone")."""
    parts = [p for p in re.split(r"[_\W]+", name.lower()) if p]
    return any(p.startswith(w) or p.endswith(w) for p in parts for w in words)


_CODE_PARAMS = frozenset(("code", "source", "source_code", "python_code", "script", "snippet", "program",
                          "expression", "expr", "statement"))


# string parameters whose value is an identifier (SHA-256, UTF-8, ISO-8601, H2O, IPv4) rather than a name or text
_NAMED_BY_IDENTIFIER = ("format", "algorithm", "encoding", "charset", "codec", "formula", "standard", "version",
                        "protocol", "compound", "model")


def _code_param(param: Param) -> str:
    """"eval" for a parameter taking one Python expression, "exec" for one taking code, "" otherwise."""
    name, desc = param.name.lower(), param.description.lower()
    if param.type != "string" or not (name in _CODE_PARAMS or re.search(r"\bpython (?:source|code|expression)", desc)):
        return ""
    return "eval" if "expr" in name or "expression" in desc.split(".")[0] else "exec"


def _value_for(param: Param, ex: _Extraction) -> Any:
    """The argument for one parameter, or None when the text gives nothing for it."""
    me, name, desc = ex.me, param.name.lower(), param.description.lower()
    direction = _direction(param.name)
    if mode := _code_param(param):  # the request's code; the numbers in it belong to no other parameter
        code = code_of(me.text, mode)
        taken = ex.take([code] if code is not None else [])
        return taken.value if taken else None
    if param.enum:
        m = ex.take(_enum_mentions(param, me), direction)
        return m.value if m else None
    if param.type == "date" or (param.type == "string" and _has(name, "date") and not _has(name, "format")):
        m = ex.take(me.dates, direction)
        return m.value if m else None
    if param.type in ("integer", "number"):
        if _has(name, "year"):
            years = [n for n in me.numbers if isinstance(n.value, int) and 1000 <= n.value <= 2999]
            m = ex.take(years)
            if m:
                return m.value
            if me.dates:
                ex.read(me.dates[:1])
                return int(me.dates[0].value[:4])
            return None
        if name == "month":
            for i, month in enumerate(MONTHS, 1):
                if re.search(rf"\b{month}\b", me.text, re.IGNORECASE):
                    return i
        free = [n for n in me.numbers if not (isinstance(n.value, int) and 1900 <= n.value <= 2100
                                              and "year" not in desc and len(me.numbers) > 1)] or me.numbers
        m = ex.take(free)
        return _number_value(param, m.value) if m else None
    if param.type == "boolean":
        return None
    if param.type == "array":
        if _has(name, "cit", "place") or "cities" in desc or "place" in desc:
            found = [n for n in me.names if not any(c.start == n.start for c in me.countries)]
        elif "number" in desc or _has(name, "value", "number"):
            found = me.numbers
        else:
            found = me.quoted
        ex.read(found)
        return [m.value for m in found] or None
    # strings
    if _has(name, "country"):
        m = ex.take(me.countries, direction)
        if m is None:
            return None
        return m.value if ("code" in desc or "iso" in desc) else m.codes[0]
    if _has(name, "currency"):
        m = ex.take(me.currencies, direction)
        return m.value if m else None
    if _has(name, "unit", "scale"):
        m = ex.take(me.units, direction)
        return m.value if m else None
    if _has(name, "zone"):
        m = ex.take(me.zones + [z for z in (zone_of_place(n) for n in me.names) if z], direction)
        return m.value if m else None
    if _has(name, "locale", "language", "lang"):
        m = ex.take(me.languages, direction)
        return m.value if m else None
    m = ex.take(me.quoted)
    if m is not None:
        return m.value
    if _has(name, *_NAMED_BY_IDENTIFIER):
        m = ex.take(me.identifiers)  # a format, algorithm, formula or version is written as an identifier
        if m is not None:
            return m.value
    places = [n for n in me.names if not any(c.start <= n.start < c.end for c in me.countries)] or me.names
    m = ex.take(places, direction)
    if m is None:
        return None
    if not any(w in name or w in desc for w in ("city", "place", "location", "name", "holiday", "origin", "dest")):
        ex.weak.add(param.name)  # a capitalised word in a parameter that does not ask for a name: weak evidence
    return m.value


@dataclass(frozen=True)
class Extraction:
    """Arguments read from a text, with how well the API fits it."""

    args: dict[str, Any]
    fit: float  # share of the required parameters the text gave (0.5 when there are none)
    coverage: float  # share of the text's values (numbers, dates, places, units, ...) the arguments use
    given: tuple[str, ...] = ()  # the parameters whose value the text gave (not a default or the first choice)


def extract(api: Api, text: str) -> Extraction:
    """Arguments for `api` read from a request text (see `extract_arguments`), with fit and coverage."""
    ex = _Extraction(mentions_of(text))
    args: dict[str, Any] = {}
    given = 0.0
    from_text: list[str] = []
    for param in sorted(api.params, key=lambda p: not p.required):
        value = _value_for(param, ex)
        if value is not None and not param.required and param.name in ex.weak:
            value = None  # a capitalised word is too weak a reason to set an optional parameter ("stdin: Python")
        given += int(value is not None and param.required)
        if value is not None:
            from_text.append(param.name)
        if value is None and param.required:
            value = param.default if param.default is not None else (param.enum[0] if param.enum else None)
        if value is not None:
            args[param.name] = value
    required = len(api.required_params)
    given -= sum(0.5 for p in api.required_params if p.name in ex.weak)
    salient = ex.me.salient()
    used = ex.spans + ex.touched
    coverage = sum(1 for span in salient if overlaps(span, used)) / len(salient) if salient else 0.0
    return Extraction({p.name: args[p.name] for p in api.params if p.name in args},
                      given / required if required else 0.5, coverage, tuple(from_text))


def extract_arguments(api: Api, text: str) -> dict[str, Any]:
    """Arguments for `api` read from a request text; required parameters fall back to their documented default.

    enum → a value mentioned (units spelled out count) else the default; number/integer → the numbers of the
    text in order (years go to `year` parameters); date → YYYY-MM-DD (or "14 July 2025"); string → by the
    parameter's name: country (ISO code or name), unit, currency, time zone, language, else a quoted string,
    else a capitalised name (cities, places). to_/from_ and _a/_b pairs take mentions in their order, a target
    preferring the one introduced by "to"/"into"/"in".
    """
    return extract(api, text).args

