"""An offline, deterministic simulator that fills an API's ToolBench `template_response`.

Template language (as in ToolBench's tool documents):
- leaves "str", "int", "float", "bool", "NoneType"; "empty list" → [];
- "list of <type> with length <n>" (bare, or as the only element of a list) → n leaves of that type;
- `[{..., "_list_length": n}]` → n objects of that shape;
- a string holding (often truncated) JSON → that JSON, repaired, then filled;
- any other literal is kept as it is.
Values are plausible and derived from the call: a PRNG seeded by sha256(seed, api id, canonical
arguments); a field named like an argument echoes the argument's value; ids, names, dates, URLs, ...
are shaped after the field name. Output is always marked `simulated=True`. This executor is never a
default: it must be chosen explicitly (and it logs a warning when created).
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import re
import string
import uuid
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

from ...catalog.models import Api
from ..cache import canonical_json
from ..observation import Observation, Status

_LIST_OF = re.compile(r"list of (\w+) with length (\d+)")
_LEAVES = frozenset({"str", "int", "float", "bool", "NoneType"})
_TOKEN = re.compile(
    r"""\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<num>-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)"""
    r"""|(?P<lit>true|false|null)|(?P<punct>[{}\[\]:,]))""",
    re.DOTALL,
)
_BASE_DATE = date(2023, 6, 15)  # fixed, so outputs never depend on the day the simulator runs
_WORDS = (
    "alpha", "amber", "atlas", "aurora", "beacon", "birch", "cedar", "coral", "delta", "ember", "falcon", "harbor",
    "horizon", "indigo", "jasper", "juniper", "lumen", "maple", "meadow", "nova", "orbit", "pioneer", "quartz",
    "river", "saffron", "sierra", "summit", "tango", "terra", "umber", "vertex", "willow", "zenith", "cobalt",
)
_NOUNS = ("report", "update", "result", "summary", "record", "item", "entry", "profile", "listing", "event")
_COUNTRIES = ("United States", "Germany", "France", "Japan", "Brazil", "India", "Canada", "Australia", "Spain")
_COUNTRY_CODES = ("US", "DE", "FR", "JP", "BR", "IN", "CA", "AU", "ES")
_CITIES = ("New York", "Berlin", "Paris", "Tokyo", "São Paulo", "Mumbai", "Toronto", "Sydney", "Madrid")
_CURRENCIES = ("USD", "EUR", "JPY", "GBP", "BRL", "INR", "CAD", "AUD", "CHF")
_STATUSES = ("success", "active", "ok", "completed", "available")
_logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- template parsing
def repair_truncated_json(text: str) -> Any:
    """Parse JSON that may be cut off: keep every complete value, close the open containers."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    stack: list[str] = []  # "{" or "["
    expect_key: list[bool] = []  # per open object: next string is a key
    safe_end, safe_closers = -1, ""
    pos = 0

    def mark(end: int) -> None:
        nonlocal safe_end, safe_closers
        safe_end, safe_closers = end, "".join("}" if c == "{" else "]" for c in reversed(stack))

    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            break
        pos = m.end()
        kind = m.lastgroup
        tok = m.group(kind or "punct")
        if kind == "punct":
            if tok in "{[":
                stack.append(tok)
                expect_key.append(tok == "{")
                mark(pos)
            elif tok in "}]":
                if not stack:
                    break
                stack.pop()
                expect_key.pop()
                if not stack:
                    break
                mark(pos)
            elif tok == ",":
                if stack and stack[-1] == "{":
                    expect_key[-1] = True
            else:  # ":"
                if stack and stack[-1] == "{":
                    expect_key[-1] = False
        elif stack and stack[-1] == "{" and expect_key[-1]:
            continue  # an object key: not a complete value yet
        elif stack and not (kind == "num" and pos >= len(text)):  # a number at the very end may be cut
            mark(pos)
    if safe_end < 0:
        raise ValueError("no complete JSON value in the template text")
    return json.loads(text[:safe_end] + safe_closers)


def parse_template(template: Any) -> Any:
    """The template as a structure: JSON-looking strings (ToolBench truncates long ones) are parsed."""
    if isinstance(template, str) and template.lstrip()[:1] in ("{", "["):
        try:
            return repair_truncated_json(template.strip())
        except ValueError:
            return template
    return template


# ---------------------------------------------------------------- value generation
def _norm(key: str) -> str:
    return re.sub(r"[^a-z0-9]", "", key.lower())


def _is_id_key(key: str) -> bool:
    n = _norm(key)
    return n in ("id", "uid", "pk", "guid") or key.endswith(("_id", "Id", "ID", "-id", "_ids", "Ids"))


def _has(n: str, *parts: str) -> bool:
    return any(p in n for p in parts)


class _Filler:
    """Fills one template for one call; all randomness comes from `rng`."""

    def __init__(self, rng: random.Random, arguments: Mapping[str, Any], max_list_length: int) -> None:
        self.rng = rng
        self.args = {_norm(k): v for k, v in arguments.items() if v is not None and v != ""}
        self.max_list_length = max_list_length
        self._kinds: dict[str, dict[str, str]] = {}
        self._norms: dict[str, str] = {}
        self.day = self._argument_date() or _BASE_DATE + timedelta(days=rng.randint(-400, 0))

    def _argument_date(self) -> date | None:
        for v in self.args.values():
            if isinstance(v, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
                try:
                    return date.fromisoformat(v)
                except ValueError:
                    continue
        return None

    # structure --------------------------------------------------------
    def fill(self, node: Any, key: str = "") -> Any:
        if isinstance(node, Mapping):
            return {k: self.fill(v, k) for k, v in node.items() if k != "_list_length"}
        if isinstance(node, list):
            return self._fill_list(node, key)
        if isinstance(node, str):
            return self._fill_string(node, key)
        return node  # a literal number / bool / null

    def _fill_list(self, node: list[Any], key: str) -> list[Any]:
        if len(node) == 1 and isinstance(node[0], str) and _LIST_OF.fullmatch(node[0].strip()):
            return list(self._fill_string(node[0], key))
        out: list[Any] = []
        for item in node:
            if isinstance(item, Mapping) and isinstance(item.get("_list_length"), int):
                n = min(max(item["_list_length"], 0), self.max_list_length)
                out.extend(self.fill(item, key) for _ in range(n))
            else:
                out.append(self.fill(item, key))
        return out

    def _fill_string(self, text: str, key: str) -> Any:
        s = text.strip()
        if s in _LEAVES:
            return self.leaf(s, key)
        if s == "empty list":
            return []
        m = _LIST_OF.fullmatch(s)
        if m:
            kind, n = m.group(1), min(int(m.group(2)), self.max_list_length)
            return [self.leaf(kind, key) for _ in range(n)]
        if s[:1] in ("{", "["):
            parsed = parse_template(s)
            if parsed is not s:
                return self.fill(parsed, key)
        return text

    # leaves -------------------------------------------------------------
    def leaf(self, kind: str, key: str) -> Any:
        if kind == "str":
            return self.string(key)
        if kind == "int":
            return self.integer(key)
        if kind == "float":
            return self.number(key)
        if kind == "bool":
            return self.rng.random() < 0.5
        if kind == "list":
            return []
        if kind == "dict":
            return {}
        return None

    def _echo(self, key: str) -> Any:
        if not key or not self.args:
            return None
        norm = self._norms.get(key)
        if norm is None:
            norm = self._norms[key] = _norm(key)
        return self.args.get(norm)

    def _kind(self, table: str, key: str) -> str:
        memo = self._kinds.setdefault(table, {})
        if key not in memo:
            memo[key] = {"str": _string_kind, "int": _int_kind, "float": _float_kind}[table](key)
        return memo[key]

    def integer(self, key: str) -> int:
        echoed = self._echo(key)
        if isinstance(echoed, (int, float, str)) and not isinstance(echoed, bool):
            try:
                return int(float(echoed))
            except ValueError:
                pass
        kind, r = self._kind("int", key), self.rng
        if kind == "time":
            moment = datetime(self.day.year, self.day.month, self.day.day, tzinfo=UTC)
            return int(moment.timestamp()) + r.randint(0, 86_399)
        lo, hi = _INT_RANGES[kind]
        return r.randint(lo, hi)

    def number(self, key: str) -> float:
        echoed = self._echo(key)
        if isinstance(echoed, (int, float, str)) and not isinstance(echoed, bool):
            try:
                return float(echoed)
            except ValueError:
                pass
        lo, hi, digits = _FLOAT_RANGES[self._kind("float", key)]
        return round(self.rng.uniform(lo, hi), digits)

    def _words(self, lo: int, hi: int) -> list[str]:
        return [self.rng.choice(_WORDS) for _ in range(self.rng.randint(lo, hi))]

    def _token(self, n: int, alphabet: str = string.ascii_lowercase + string.digits) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def string(self, key: str) -> str:
        echoed = self._echo(key)
        if isinstance(echoed, (str, int, float)) and not isinstance(echoed, bool):
            return str(echoed)
        kind, r = self._kind("str", key), self.rng
        if kind in ("url", "image"):
            return f"https://example.com/{r.choice(_WORDS)}/{self._token(10)}{'.jpg' if kind == 'image' else ''}"
        if kind == "email":
            return f"{r.choice(_WORDS)}.{r.choice(_WORDS)}@example.com"
        if kind == "phone":
            return f"+1-555-01{r.randint(0, 99):02d}"
        if kind == "uuid":
            return str(uuid.UUID(int=r.getrandbits(128), version=4))
        if kind == "id":
            return self._token(12)
        if kind == "datetime":
            moment = datetime(self.day.year, self.day.month, self.day.day, tzinfo=UTC)
            return (moment + timedelta(seconds=r.randint(0, 86_399))).strftime("%Y-%m-%dT%H:%M:%SZ")
        if kind == "date":
            return (self.day + timedelta(days=r.randint(0, 30))).isoformat()
        if kind == "username":
            return f"{r.choice(_WORDS)}_{r.randint(10, 9999)}"
        if kind == "name":
            return " ".join(w.capitalize() for w in self._words(1, 3))
        if kind in _CHOICES:
            return r.choice(_CHOICES[kind])
        if kind == "symbol":
            return self._token(r.randint(3, 4), string.ascii_uppercase)
        if kind == "color":
            return "#" + self._token(6, "0123456789abcdef")
        if kind == "text":
            return f"{' '.join(self._words(6, 14)).capitalize()} {r.choice(_NOUNS)}."
        if kind == "address":
            return f"{r.randint(1, 999)} {r.choice(_WORDS).capitalize()} Street"
        if kind == "zip":
            return f"{r.randint(10000, 99999)}"
        if kind == "price":
            return f"{r.uniform(0.5, 1000):.2f}"
        if kind == "coordinate":
            return f"{r.uniform(-60, 70):.5f}"
        if kind == "version":
            return f"{r.randint(1, 5)}.{r.randint(0, 20)}.{r.randint(0, 9)}"
        if kind == "code":
            return self._token(6, string.ascii_uppercase + string.digits)
        if kind == "slug":
            return "-".join(self._words(2, 3))
        if kind == "word":
            return r.choice(_WORDS)
        return " ".join(self._words(1, 3))


_INT_RANGES: dict[str, tuple[int, int]] = {
    "id": (100_000, 99_999_999), "year": (1990, _BASE_DATE.year), "page": (1, 1), "status": (200, 200),
    "age": (18, 80), "rank": (1, 100), "percent": (0, 100), "duration": (30, 7200), "count": (0, 5000),
    "other": (0, 1000),
}
_FLOAT_RANGES: dict[str, tuple[float, float, int]] = {
    "lat": (-60, 70, 5), "lon": (-180, 180, 5), "rating": (1, 5, 1), "ratio": (-10, 10, 2),
    "money": (0.5, 1000, 2), "other": (0, 1000, 3),
}
_CHOICES: dict[str, tuple[str, ...]] = {
    "countrycode": _COUNTRY_CODES, "country": _COUNTRIES, "city": _CITIES, "currency": _CURRENCIES,
    "lang": ("en",), "status": _STATUSES,
}
_IMAGE_PARTS = ("image", "thumbnail", "avatar", "photo", "logo", "icon", "cover", "picture")
_TEXT_PARTS = ("description", "text", "content", "summary", "body", "message", "comment", "bio", "snippet",
               "overview", "review", "caption")


def _int_kind(key: str) -> str:
    n = _norm(key)
    if _is_id_key(key):
        return "id"
    if "year" in n:
        return "year"
    if _has(n, "timestamp", "time", "created", "updated", "date") or key.endswith("_at"):
        return "time"
    if n in ("page", "currentpage"):
        return "page"
    for kind, parts in (("status", ("status", "code")), ("age", ("age",)), ("rank", ("rank", "position", "index",
                        "order")), ("percent", ("percent", "score", "rating")), ("duration", ("duration", "seconds",
                        "length")), ("count", ("count", "total", "num", "views", "likes", "followers", "size",
                                               "limit"))):
        if _has(n, *parts):
            return kind
    return "other"


def _float_kind(key: str) -> str:
    n = _norm(key)
    if n in ("lat", "latitude") or n.endswith("latitude"):
        return "lat"
    if n in ("lon", "lng", "long", "longitude") or n.endswith(("longitude", "lng")):
        return "lon"
    if _has(n, "rating", "stars"):
        return "rating"
    if _has(n, "percent", "change", "ratio", "rate", "yield"):
        return "ratio"
    if _has(n, "price", "amount", "cost", "value", "balance", "close", "open", "high", "low"):
        return "money"
    return "other"


def _string_kind(key: str) -> str:
    n = _norm(key)
    if _has(n, *_IMAGE_PARTS):
        return "image"
    if n.endswith(("url", "link", "href", "uri", "website")):
        return "url"
    if "email" in n:
        return "email"
    if _has(n, "phone", "mobile") or n == "tel":
        return "phone"
    if _has(n, "uuid", "guid"):
        return "uuid"
    if _is_id_key(key):
        return "id"
    if _has(n, "timestamp", "datetime", "time", "created", "updated", "modified") or key.lower().endswith("_at"):
        return "datetime"
    if _has(n, "date", "day", "published", "released"):
        return "date"
    if _has(n, "username", "screenname", "handle", "login", "nickname"):
        return "username"
    if "countrycode" in n or n in ("alpha2", "iso2", "cc"):
        return "countrycode"
    for kind in ("country", "city", "currency"):
        if kind in n:
            return kind
    if _has(n, "name", "title", "label", "author", "artist", "brand", "company"):
        return "name"
    ordered: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("symbol", ("symbol", "ticker")),
        ("color", ("color", "colour")), ("status", ("status", "state")), ("text", _TEXT_PARTS),
        ("address", ("address", "street")), ("zip", ("zip", "postal", "postcode")),
        ("price", ("price", "amount", "cost")), ("coordinate", ("lat", "lng", "lon")), ("version", ("version",)),
        ("code", ("code",)), ("slug", ("slug",)), ("word", ("type", "kind", "category", "genre", "tag")),
    )
    if n in ("lang", "language", "locale", "hl"):
        return "lang"
    for kind, parts in ordered:
        if _has(n, *parts):
            return kind
    return "words"


# ---------------------------------------------------------------- the executor
class TemplateSimulatedExecutor:
    """Offline, deterministic, synthetic responses shaped like the API's documented template."""

    name = "template"

    def __init__(self, seed: int = 0, *, max_list_length: int = 1000) -> None:
        self.seed = seed
        self.max_list_length = max_list_length
        _logger.warning("TemplateSimulatedExecutor: API responses are synthetic (filled from documented templates)")

    def rng_for(self, api: Api, arguments: Mapping[str, Any]) -> random.Random:
        digest = hashlib.sha256(f"{self.seed}\x00{api.id}\x00{canonical_json(arguments)}".encode()).digest()
        return random.Random(int.from_bytes(digest[:16], "big"))

    def simulate(self, api: Api, arguments: Mapping[str, Any]) -> Any:
        """The filled template (or a generic placeholder object when the API documents none)."""
        template = parse_template(api.template_response)
        if template is None or template == "" or template == {}:
            return {
                "simulated": True,
                "note": "This API documents no response template; this placeholder is all the simulator can return.",
                "api": api.name,
                "tool": api.tool_name,
                "arguments": dict(arguments),
            }
        return _Filler(self.rng_for(api, arguments), arguments, self.max_list_length).fill(template)

    async def aexecute(self, api: Api, arguments: dict[str, Any]) -> Observation:
        try:
            content = self.simulate(api, arguments)
        except Exception as e:  # a malformed template must not escape as an exception
            return Observation(api_id=api.id, status=Status.ERROR, simulated=True,
                               error=f"template simulation failed: {type(e).__name__}: {e}")
        return Observation(api_id=api.id, status=Status.OK, content=content, simulated=True,
                           meta={"executor": self.name})

    async def aclose(self) -> None:
        return None
