"""`OfflinePolicyModel`: a deterministic, rule-based stand-in for a chat model — NOT an LLM.

It lets `anytool demo` and the tests run the whole AnyTool graph with no model configured. It plays every role
the graph asks a model to play (meta / category / tool agents, the solvable check, the DFSDT solver, α-UMi's
planner / caller / summarizer, the judge) with heuristics: the catalog's search ranks categories, tools and APIs;
regular expressions pull arguments (numbers, dates, countries, units, names) out of the query; API results are
turned into sentences by a template. Its role is read from the tools bound with `bind_tools` and from the prompt;
its progress from the message history only, so a reply depends on nothing but its input (deterministic and
resumable). Its answers are only as good as these heuristics: configure a real model for real work.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolCall, ToolMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, PrivateAttr

from .catalog import Api, Catalog, Param
from .catalog.errors import UnknownNameError
from .nodes.solver.finish import FINISH_NAME

MODEL_NAME = "offline-policy"
LABEL = "OfflinePolicyModel (rule-based heuristic stand-in, NOT an LLM)"

Role = Literal["meta", "category", "tool", "solvable", "solver", "planner", "caller", "summarizer", "judge", "other"]

# ============================================================================================ text helpers
_STOPWORDS = frozenset((
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "of", "to", "in", "on", "at", "for", "from", "by",
    "with", "and", "or", "as", "it", "its", "this", "that", "these", "those", "what", "which", "who", "whom",
    "whose", "when", "where", "why", "how", "do", "does", "did", "can", "could", "would", "should", "will", "shall",
    "may", "might", "must", "i", "me", "my", "we", "our", "you", "your", "he", "she", "they", "them", "their",
    "there", "here", "please", "tell", "give", "show", "find", "get", "let", "know", "want", "need", "about",
    "into", "than", "then", "also", "any", "some", "all", "each", "much", "many", "more", "most", "if", "not", "no",
    "yes", "up", "down", "over", "out", "look", "far", "between",
))
_WORD = re.compile(r"[a-z0-9]+")


def content_words(text: str) -> set[str]:
    """Lower-case words of a text minus stop words (with a crude plural strip)."""
    out = set()
    for w in _WORD.findall(text.lower()):
        if w in _STOPWORDS or len(w) < 2:
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def _stem_match(a: str, b: str) -> bool:
    """Crude stemming: equal, one a prefix (≥ 4 letters) of the other, or the same first 5 letters."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return (len(short) >= 4 and long_.startswith(short)) or (len(short) >= 5 and short[:5] == long_[:5])


def shares_topic(words: set[str], text: str) -> bool:
    """Whether any of `words` appears (crudely stemmed) among the content words of `text`."""
    other = content_words(text)
    return any(_stem_match(w, o) for w in words for o in other)


def message_text(msg: BaseMessage) -> str:
    """A message's text (content blocks joined)."""
    if isinstance(msg.content, str):
        return msg.content
    return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in msg.content
                   if isinstance(b, str | dict))


# A query ends where the prompt's own text resumes (category line, search hint, pool listing, calls made).
_QUERY = re.compile(r"Query:\s*(.*?)(?:\nYour category:|\nA keyword search|\n\s*\nAPIs in the candidate pool:"
                    r"|\n\s*\nAPI calls made|$)", re.DOTALL)


def find_query(messages: Sequence[BaseMessage]) -> str:
    """The user query of a prompt: a `Query:` line of a human message, else the first human message."""
    humans = [message_text(m) for m in messages if isinstance(m, HumanMessage)]
    for text in humans:
        match = _QUERY.search(text)
        if match and match.group(1).strip():
            return match.group(1).strip()
    if humans:
        return re.sub(r"\s*Begin!\s*$", "", humans[0]).strip()
    return ""


_CLAUSE_SPLIT = re.compile(
    r"(?<=[.?!;])\s+(?=\S)"
    r"|,?\s+(?:and\s+)?(?:then|also)\s+(?=[a-z])"
    r"|,?\s+and\s+(?=(?:also\s+)?(?:tell|what|how|is|are|find|give|convert|list|show|check|get|which|when|where|"
    r"who|calculate|compute|look|let|please|i)\b)",
    re.IGNORECASE,
)


def split_clauses(query: str) -> list[str]:
    """The parts of a multi-part request: sentences, `; `, `, then`, `and <question word>`."""
    parts = [p.strip(" ,;") for p in _CLAUSE_SPLIT.split(query.strip())]
    parts = [p for p in parts if content_words(p)]
    return parts or ([query.strip()] if query.strip() else [])


# ============================================================================================ mentions
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH_RE = (r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
             r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_TEXT_DATE = re.compile(
    rf"\b(?:(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_RE})\.?,?\s+(\d{{4}})|({_MONTH_RE})\.?\s+(\d{{1,2}})"
    rf"(?:st|nd|rd|th)?,?\s+(\d{{4}}))\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?<![\w.])(-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?!\w|\.\d)")
_QUOTED = re.compile(r"[\"“]([^\"”]{1,300})[\"”]|(?:^|(?<=\s))'([^']{1,300})'(?=[\s.,;:?!]|$)")
_CAPS = re.compile(r"[A-ZÀ-Ý][\w'’.-]*(?:\s+(?:(?:de|da|do|del|la|le|upon|am|of)\s+)?[A-ZÀ-Ý][\w'’.-]*)*")
_SENTENCE_START = re.compile(r"(?:^|[.?!;:]\s+)$")
_ZONE = re.compile(r"\b(?:UTC|GMT|[A-Z][a-z]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?)\b")
_TARGET_BEFORE = re.compile(r"\b(?:to|into|in|as|how many)\s+(?:the\s+)?$", re.IGNORECASE)
_SOURCE_BEFORE = re.compile(r"\b(?:from)\s+(?:the\s+)?$", re.IGNORECASE)
# Capitalised words that start questions or commands, not names.
_CAP_STOP = frozenset((
    "how", "what", "which", "who", "when", "where", "why", "is", "are", "was", "were", "does", "do", "did", "can",
    "could", "would", "should", "will", "convert", "calculate", "compute", "tell", "give", "show", "find", "get",
    "list", "check", "please", "i", "the", "a", "an", "and", "also", "then", "in", "on", "at", "of", "for", "from",
    "to", "by", "my", "our", "me", "let", "look",
))

# Units: (spellings regex, pint name, enum codes it may appear as). Longer spellings come first.
_UNIT_TABLE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (r"miles? per hour|mph", "mile/hour", ("mph",)),
    (r"kilomet(?:er|re)s? per hour|km/h|kph|kmh", "kilometer/hour", ("km/h", "kmh", "kph")),
    (r"met(?:er|re)s? per second|m/s", "meter/second", ("m/s",)),
    (r"nautical miles?|nmi", "nautical_mile", ("nmi",)),
    (r"square kilomet(?:er|re)s?|km2|km²", "kilometer**2", ("km2",)),
    (r"square met(?:er|re)s?|m2|m²", "meter**2", ("m2",)),
    (r"square f(?:ee|oo)t|sq ?ft|ft2", "foot**2", ("ft2",)),
    (r"square miles?|mi2", "mile**2", ("mi2",)),
    (r"fluid ounces?|fl ?oz", "fluid_ounce", ("fl_oz",)),
    (r"miles?|mi", "mile", ("mi", "mile")),
    (r"kilomet(?:er|re)s?|km", "kilometer", ("km", "kilometer")),
    (r"centimet(?:er|re)s?|cm", "centimeter", ("cm",)),
    (r"millimet(?:er|re)s?|mm", "millimeter", ("mm",)),
    (r"met(?:er|re)s?", "meter", ("m", "meter")),
    (r"inch(?:es)?", "inch", ("in", "inch")),
    (r"f(?:ee|oo)t|ft", "foot", ("ft", "foot")),
    (r"yards?|yd", "yard", ("yd", "yard")),
    (r"kilograms?|kilos?|kg", "kilogram", ("kg", "kilogram")),
    (r"milligrams?|mg", "milligram", ("mg",)),
    (r"grams?", "gram", ("g", "gram")),
    (r"pounds?|lbs?", "pound", ("lb", "pound")),
    (r"ounces?|oz", "ounce", ("oz", "ounce")),
    (r"stones?", "stone", ("st", "stone")),
    (r"tonnes?|metric tons?", "metric_ton", ("t", "tonne")),
    (r"millilit(?:er|re)s?|ml", "milliliter", ("ml",)),
    (r"lit(?:er|re)s?", "liter", ("l", "liter")),
    (r"gallons?|gal", "gallon", ("gal", "gallon")),
    (r"cups?", "cup", ("cup",)),
    (r"tablespoons?|tbsp", "tablespoon", ("tbsp",)),
    (r"teaspoons?|tsp", "teaspoon", ("tsp",)),
    (r"pints?", "pint", ("pt", "pint")),
    (r"quarts?", "quart", ("qt", "quart")),
    (r"degrees? celsius|celsius|centigrade|°c", "degC", ("C", "degC", "celsius")),
    (r"degrees? fahrenheit|fahrenheit|°f", "degF", ("F", "degF", "fahrenheit")),
    (r"kelvins?", "kelvin", ("K", "kelvin")),
    (r"knots?", "knot", ("knot",)),
    (r"acres?", "acre", ("acre",)),
    (r"hectares?", "hectare", ("ha", "hectare")),
    (r"gibibytes?|gib", "gibibyte", ("GiB",)),
    (r"mebibytes?|mib", "mebibyte", ("MiB",)),
    (r"terabytes?|tb", "terabyte", ("TB",)),
    (r"gigabytes?|gb", "gigabyte", ("GB",)),
    (r"megabytes?|mb", "megabyte", ("MB",)),
    (r"kilobytes?|kb", "kilobyte", ("KB",)),
    (r"bytes?", "byte", ("B", "byte")),
    (r"joules?", "joule", ("J", "joule")),
    (r"kilowatt[- ]hours?|kwh", "kilowatt_hour", ("kWh",)),
    (r"calories?", "calorie", ("cal", "calorie")),
    (r"horsepower|hp", "horsepower", ("hp",)),
    (r"watts?", "watt", ("W", "watt")),
    (r"psi", "psi", ("psi",)),
    (r"bars?", "bar", ("bar",)),
    (r"pascals?", "pascal", ("Pa", "pascal")),
)
_COUNTRY_ALIASES: tuple[tuple[str, str], ...] = (
    ("USA", "US"), ("U.S.", "US"), ("US", "US"), ("United States", "US"), ("America", "US"), ("UK", "GB"),
    ("U.K.", "GB"), ("Britain", "GB"), ("Great Britain", "GB"), ("England", "GB"), ("Scotland", "GB"),
    ("Wales", "GB"), ("Russia", "RU"), ("South Korea", "KR"), ("Korea", "KR"), ("North Korea", "KP"),
    ("Iran", "IR"), ("Vietnam", "VN"), ("Syria", "SY"), ("Laos", "LA"), ("Bolivia", "BO"), ("Venezuela", "VE"),
    ("Tanzania", "TZ"), ("Moldova", "MD"), ("Czech Republic", "CZ"), ("Czechia", "CZ"), ("Taiwan", "TW"),
    ("Holland", "NL"), ("The Netherlands", "NL"), ("Ivory Coast", "CI"), ("Turkey", "TR"),
)
_CURRENCY_WORDS: tuple[tuple[str, str], ...] = (
    ("euros?", "EUR"), ("us dollars?|dollars?", "USD"), ("japanese yen|yen", "JPY"), ("british pounds?|sterling",
    "GBP"), ("swiss francs?", "CHF"), ("canadian dollars?", "CAD"), ("australian dollars?", "AUD"),
    ("yuan|renminbi", "CNY"), ("rupees?", "INR"), ("pesos?", "MXN"), ("won", "KRW"), ("rubles?|roubles?", "RUB"),
)


@functools.lru_cache(maxsize=1)
def _country_patterns() -> tuple[tuple[re.Pattern[str], str, str], ...]:
    """(pattern, alpha-2, English name) for every country name and alias, longest names first."""
    import pycountry

    rows: dict[str, tuple[str, str]] = {}
    for c in pycountry.countries:
        for name in (getattr(c, "common_name", None), c.name):
            if name and "," not in name and "(" not in name:
                rows.setdefault(name, (c.alpha_2, getattr(c, "common_name", None) or c.name))
    for alias, code in _COUNTRY_ALIASES:
        known = pycountry.countries.get(alpha_2=code)
        full = (getattr(known, "common_name", None) or known.name) if known is not None else alias
        rows.setdefault(alias, (code, full))
    ordered = sorted(rows.items(), key=lambda kv: -len(kv[0]))
    return tuple((re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w])"), code, full) for name, (code, full) in ordered)


@functools.lru_cache(maxsize=1)
def _unit_patterns() -> tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...]:
    return tuple((re.compile(rf"(?<![\w/°])(?:{spell})(?![\w/²])", re.IGNORECASE), pint_name, codes)
                 for spell, pint_name, codes in _UNIT_TABLE)


@functools.lru_cache(maxsize=1)
def _languages() -> tuple[tuple[re.Pattern[str], str], ...]:
    """(pattern, ISO 639-1 code) for language names (with an alpha-2 code)."""
    import pycountry

    out = []
    for lang in pycountry.languages:
        code = getattr(lang, "alpha_2", None)
        if code and " " not in lang.name and "(" not in lang.name and len(lang.name) > 3:
            out.append((re.compile(rf"\b{re.escape(lang.name)}\b"), code))
    return tuple(out)


@dataclass(frozen=True)
class Mention:
    """A value found in a text: where it is and what it means."""

    start: int
    end: int
    value: Any
    text: str = ""
    codes: tuple[str, ...] = ()


def _overlaps(span: tuple[int, int], taken: Iterable[tuple[int, int]]) -> bool:
    return any(span[0] < e and s < span[1] for s, e in taken)


def _collect(text: str, patterns: Iterable[tuple[re.Pattern[str], Any, Any]], taken: list[tuple[int, int]]
             ) -> list[Mention]:
    """Non-overlapping matches of (pattern, value, codes) triples; earlier patterns win (pass longest first)."""
    found: list[Mention] = []
    for pattern, value, codes in patterns:
        for m in pattern.finditer(text):
            span = (m.start(), m.end())
            if _overlaps(span, taken):
                continue
            taken.append(span)
            found.append(Mention(m.start(), m.end(), value, m.group(0), tuple(codes) if codes else ()))
    return sorted(found, key=lambda x: x.start)


def _to_number(raw: str) -> int | float:
    value = float(raw.replace(",", ""))
    return int(value) if value.is_integer() and "." not in raw else value


@dataclass
class Mentions:
    """Everything argument extraction can use from one request text."""

    text: str
    dates: list[Mention] = field(default_factory=list)
    numbers: list[Mention] = field(default_factory=list)
    quoted: list[Mention] = field(default_factory=list)
    countries: list[Mention] = field(default_factory=list)
    units: list[Mention] = field(default_factory=list)
    names: list[Mention] = field(default_factory=list)  # capitalised phrases (places, people, holidays)
    languages: list[Mention] = field(default_factory=list)
    currencies: list[Mention] = field(default_factory=list)
    zones: list[Mention] = field(default_factory=list)

    def salient(self) -> list[tuple[int, int]]:
        """Spans of the values a request carries (overlapping mentions merged)."""
        spans = sorted((m.start, m.end) for group in (self.dates, self.numbers, self.quoted, self.countries,
                                                      self.units, self.names, self.currencies, self.zones)
                       for m in group)
        merged: list[tuple[int, int]] = []
        for start, end in spans:
            if merged and start < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return merged

    @classmethod
    def of(cls, text: str) -> Mentions:
        me = cls(text)
        for m in _QUOTED.finditer(text):
            me.quoted.append(Mention(m.start(), m.end(), m.group(1) or m.group(2), m.group(0)))
        date_spans: list[tuple[int, int]] = []
        for m in _ISO_DATE.finditer(text):
            y, mo, d = (int(g) for g in m.groups())
            me.dates.append(Mention(m.start(), m.end(), f"{y:04d}-{mo:02d}-{d:02d}", m.group(0)))
            date_spans.append((m.start(), m.end()))
        for m in _TEXT_DATE.finditer(text):
            if _overlaps((m.start(), m.end()), date_spans):
                continue
            day, month, year = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(5), m.group(4),
                                                                                        m.group(6))
            mo = next(i for i, name in enumerate(_MONTHS, 1) if name.startswith(month.lower()[:3]))
            me.dates.append(Mention(m.start(), m.end(), f"{int(year):04d}-{mo:02d}-{int(day):02d}", m.group(0)))
            date_spans.append((m.start(), m.end()))
        me.dates.sort(key=lambda x: x.start)
        quoted_spans = [(q.start, q.end) for q in me.quoted]
        for m in _NUMBER.finditer(text):
            if not _overlaps((m.start(), m.end()), date_spans + quoted_spans):
                me.numbers.append(Mention(m.start(), m.end(), _to_number(m.group(1)), m.group(1)))
        taken = list(quoted_spans)
        me.countries = _collect(text, ((p, code, (name,)) for p, code, name in _country_patterns()), list(taken))
        me.zones = [Mention(m.start(), m.end(), m.group(0), m.group(0)) for m in _ZONE.finditer(text)]
        unit_taken = list(date_spans) + [(c.start, c.end) for c in me.countries]
        me.units = _collect(text, _unit_patterns(), unit_taken)
        me.languages = _collect(text, ((p, code, ()) for p, code in _languages()), list(taken))
        me.currencies = _collect(text, ((re.compile(rf"\b(?:{w})\b", re.IGNORECASE), code, ()) for w, code in
                                        _CURRENCY_WORDS), list(taken))
        me.currencies += [Mention(m.start(), m.end(), m.group(0), m.group(0)) for m in
                          re.finditer(r"\b[A-Z]{3}\b", text) if _is_currency(m.group(0))]
        me.currencies.sort(key=lambda x: x.start)
        skip = {name for name in _MONTHS} | set(_WEEKDAYS)
        for m in _CAPS.finditer(text):
            words = m.group(0).split()
            start = m.start()
            while words and (words[0].lower().strip(".") in _CAP_STOP):
                start = text.index(words[1], start + len(words[0])) if len(words) > 1 else m.end()
                words = words[1:]
            phrase = " ".join(words).rstrip(".'’")
            if not phrase or phrase.lower() in skip or _overlaps((start, m.end()), [(u.start, u.end) for u in me.units]):
                continue
            if len(words) == 1 and start == m.start() and _SENTENCE_START.search(text[:start]):
                continue  # one capitalised word opening a sentence is most likely not a name
            me.names.append(Mention(start, start + len(phrase), phrase, phrase))
        return me


@functools.lru_cache(maxsize=1)
def _zones_by_place() -> dict[str, str]:
    """Lower-case place name (last part of an IANA zone, e.g. "tokyo", "new york") → zone."""
    import zoneinfo

    out: dict[str, str] = {}
    for zone in sorted(zoneinfo.available_timezones()):
        if "/" in zone and not zone.startswith(("Etc/", "SystemV/", "US/")):
            out.setdefault(zone.rsplit("/", 1)[1].replace("_", " ").lower(), zone)
    return out


def _zone_of_place(mention: Mention) -> Mention | None:
    zone = _zones_by_place().get(str(mention.value).lower())
    return Mention(mention.start, mention.end, zone, mention.text) if zone else None


@functools.lru_cache(maxsize=256)
def _mentions(text: str) -> Mentions:
    """`Mentions.of`, memoised (treat the result as read-only)."""
    return Mentions.of(text)


@functools.lru_cache(maxsize=512)
def _is_currency(code: str) -> bool:
    import pycountry

    return pycountry.currencies.get(alpha_3=code) is not None


# ============================================================================================ arguments
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
    for u in me.units:
        hit = next((v for v in values if str(v) in u.codes), None)
        if hit is None:
            hit = next((v for v in values if str(v).lower() in {c.lower() for c in u.codes}), None)
        if hit is not None and not any(o.start == u.start for o in out):
            out.append(Mention(u.start, u.end, hit, u.text))
    out.sort(key=lambda m: (m.start, -(m.end - m.start)))
    dedup: list[Mention] = []
    for mention in out:
        if not _overlaps((mention.start, mention.end), [(d.start, d.end) for d in dedup]):
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
        free = [m for m in found if not _overlaps((m.start, m.end), self.spans)]
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


def _value_for(param: Param, ex: _Extraction) -> Any:
    """The argument for one parameter, or None when the text gives nothing for it."""
    me, name, desc = ex.me, param.name.lower(), param.description.lower()
    direction = _direction(param.name)
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
            for i, month in enumerate(_MONTHS, 1):
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
        m = ex.take(me.zones + [z for z in (_zone_of_place(n) for n in me.names) if z], direction)
        return m.value if m else None
    if _has(name, "locale", "language", "lang"):
        m = ex.take(me.languages, direction)
        return m.value if m else None
    m = ex.take(me.quoted)
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


def extract(api: Api, text: str) -> Extraction:
    """Arguments for `api` read from a request text (see `extract_arguments`), with fit and coverage."""
    ex = _Extraction(_mentions(text))
    args: dict[str, Any] = {}
    given = 0.0
    for param in sorted(api.params, key=lambda p: not p.required):
        value = _value_for(param, ex)
        given += int(value is not None and param.required)
        if value is None and param.required:
            value = param.default if param.default is not None else (param.enum[0] if param.enum else None)
        if value is not None:
            args[param.name] = value
    required = len(api.required_params)
    given -= sum(0.5 for p in api.required_params if p.name in ex.weak)
    salient = ex.me.salient()
    used = ex.spans + ex.touched
    coverage = sum(1 for span in salient if _overlaps(span, used)) / len(salient) if salient else 0.0
    return Extraction({p.name: args[p.name] for p in api.params if p.name in args},
                      given / required if required else 0.5, coverage)


def extract_arguments(api: Api, text: str) -> dict[str, Any]:
    """Arguments for `api` read from a request text; required parameters fall back to their documented default.

    enum → a value mentioned (units spelled out count) else the default; number/integer → the numbers of the
    text in order (years go to `year` parameters); date → YYYY-MM-DD (or "14 July 2025"); string → by the
    parameter's name: country (ISO code or name), unit, currency, time zone, language, else a quoted string,
    else a capitalised name (cities, places). to_/from_ and _a/_b pairs take mentions in their order, a target
    preferring the one introduced by "to"/"into"/"in".
    """
    return extract(api, text).args


def topic_words(text: str) -> set[str]:
    """The content words of a request that are not values (numbers, dates, names, units, ...)."""
    spans = _mentions(text).salient()
    kept, pos = [], 0
    for start, end in spans:
        kept.append(text[pos:start])
        pos = end
    kept.append(text[pos:])
    return content_words(" ".join(kept))


# ============================================================================================ results
def _scalar(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}" if abs(value) < 1e15 else str(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def describe_response(response: Any, limit: int = 8) -> str:
    """A short readable text of an API response (its `text`/`summary` field, else its key facts)."""
    if isinstance(response, dict):
        for key in ("text", "summary", "answer", "message", "result_text"):
            if isinstance(response.get(key), str) and response[key].strip():
                return response[key].strip()
        parts = []
        for key, value in response.items():
            if isinstance(value, dict | list):
                if isinstance(value, list) and value:
                    items = ", ".join(_brief(v) for v in value[:3])
                    parts.append(f"{key}: {items}" + (f" (+{len(value) - 3} more)" if len(value) > 3 else ""))
                elif isinstance(value, dict) and value:
                    parts.append(f"{key}: {_brief(value)}")
                continue
            if value is not None and value != "":
                parts.append(f"{key.replace('_', ' ')}: {_scalar(value)}")
            if len(parts) >= limit:
                break
        return "; ".join(parts)
    if isinstance(response, list):
        return f"{len(response)} result(s): " + ", ".join(_brief(v) for v in response[:5])
    return _scalar(response) if response is not None else ""


def _brief(value: Any) -> str:
    if isinstance(value, dict):
        for key in ("name", "title", "text", "date", "value", "id"):
            if key in value and not isinstance(value[key], dict | list):
                extra = next((f" ({_scalar(value[k])})" for k in ("date", "value", "code") if k != key and k in value
                              and not isinstance(value[k], dict | list)), "")
                return f"{_scalar(value[key])}{extra}"
        return ", ".join(f"{k}={_scalar(v)}" for k, v in list(value.items())[:3] if not isinstance(v, dict | list))
    return _scalar(value)


# ============================================================================================ solver policy
@dataclass(frozen=True)
class Step:
    """One API call of a trajectory and its outcome."""

    function: str
    args: Any
    ok: bool
    response: Any = None
    error: str = ""


_RAW_CHARS = 300  # of a response that is not valid JSON (e.g. truncated), quoted in an answer


def parse_observation(text: str) -> tuple[bool, Any, str]:
    """(ok, response, error) of an observation text (`{"status": ..., "response": ..., "error": ...}`)."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        status = str(data.get("status", "")).lower()
        if "error" in data and status in ("", "error") and "response" not in data:
            return False, None, str(data["error"])
        ok = status == "ok" or (not status and "error" not in data)
        return ok, data.get("response", data if not status else None), str(data.get("error", ""))
    ok = bool(re.search(r'"status"\s*:\s*"ok"', text))
    if not ok:
        return False, None, text[:300]
    body = re.sub(r'^\{"status"\s*:\s*"ok"\s*,\s*"response"\s*:\s*', "", text.strip())  # truncated JSON
    body = re.sub(r"\.\.\. \[truncated \d+ of \d+ characters\]$", "", body)
    return True, body if len(body) <= _RAW_CHARS else body[:_RAW_CHARS] + "…", ""


def steps_from_messages(messages: Sequence[BaseMessage]) -> list[Step]:
    """API calls (not Finish) and their observations, from AIMessage tool calls + ToolMessages."""
    calls: dict[str, tuple[str, Any]] = {}
    steps: list[Step] = []
    for m in messages:
        if isinstance(m, AIMessage):
            for tc in m.tool_calls:
                calls[str(tc.get("id"))] = (tc["name"], tc.get("args"))
        elif isinstance(m, ToolMessage):
            name, args = calls.get(str(m.tool_call_id), (m.name or "", None))
            if name == FINISH_NAME:
                continue
            ok, response, error = parse_observation(message_text(m))
            steps.append(Step(name, args, ok and m.status != "error", response, error))
    return steps


_HISTORY_LINE = re.compile(r"^(Action|Action Input|Observation \(([^)]*)\)):\s?(.*)$")


def steps_from_history(history: str) -> list[Step]:
    """API calls and observations from α-UMi's rendered history (`Action:` / `Observation (name):` lines)."""
    steps: list[Step] = []
    pending: list[tuple[str, Any]] = []
    for line in history.splitlines():
        m = _HISTORY_LINE.match(line.strip())
        if not m:
            continue
        if m.group(1) == "Action":
            pending.append((m.group(3).strip(), None))
        elif m.group(1) == "Action Input" and pending:
            try:
                pending[-1] = (pending[-1][0], json.loads(m.group(3)))
            except ValueError:
                pending[-1] = (pending[-1][0], m.group(3))
        else:
            name = m.group(2)
            idx = next((i for i, (n, _) in enumerate(pending) if n == name), None)
            args = pending.pop(idx)[1] if idx is not None else None
            if name == FINISH_NAME:
                continue
            ok, response, error = parse_observation(m.group(3))
            steps.append(Step(name, args, ok, response, error))
    return steps


@dataclass(frozen=True)
class CallApi:
    function: str
    args: dict[str, Any]
    clause: str


@dataclass(frozen=True)
class Answer:
    text: str
    failed: list[str]


@dataclass(frozen=True)
class GiveUp:
    reason: str
    failed: list[str]


Decision = CallApi | Answer | GiveUp


# ============================================================================================ the model
# (marker, where it must appear: the prompt's opening or anywhere, role); the first match wins. α-UMi prompts
# embed the trajectory (any text), so their markers are read from the opening only.
_ROLE_MARKERS: tuple[tuple[str, Literal["head", "any"], Role], ...] = (
    ("Make a conclusion", "head", "summarizer"),
    ("Next: caller", "any", "planner"),
    ('"label"', "any", "judge"),
    ("solvable", "head", "solvable"),
)
_HEAD = 300
_MEMO_LIMIT = 20_000  # memoised search hits / relevance values per model instance


class OfflinePolicyModel(BaseChatModel):
    """A deterministic heuristic policy that answers every AnyTool role — a stand-in, NOT an LLM.

    Needs the catalog the graph runs on (its search ranks categories, tools and APIs). Replies carry
    `usage_metadata` estimated as characters / 4, flagged by `response_metadata["estimated_usage"]`.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    catalog: Catalog
    max_categories: int = 3
    max_tools_per_agent: int = 5
    max_apis_per_agent: int = 4
    search_depth: int = 30  # search hits considered per request part
    relevance_ratio: float = 0.8  # an API fits a request part when its relevance reaches this share of the best
    solver_ratio: float = 0.85  # the solver also tries APIs a little below that (× relevance_ratio)
    max_failures: int = 3  # failed calls per request part before it is given up

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _memo: dict[tuple[str, ...], Any] = PrivateAttr(default_factory=dict)  # search hits and relevance (pure)

    @property
    def _llm_type(self) -> str:
        return MODEL_NAME

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": MODEL_NAME, "catalog": self.catalog.name}

    def bind_tools(self, tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool], *,
                   tool_choice: str | None = None, **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        """Record the tool schemas (OpenAI form); the role is read from their names."""
        schemas = [t if isinstance(t, dict) and "function" in t else convert_to_openai_tool(t) for t in tools]
        kwargs.pop("parallel_tool_calls", None)
        return self.bind(tools=schemas, **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        reply = self.respond(messages, kwargs.get("tools") or [])
        return ChatResult(generations=[ChatGeneration(message=reply)])

    # ------------------------------------------------------------------------------------- dispatch
    def role_of(self, messages: Sequence[BaseMessage], tool_names: Sequence[str]) -> Role:
        """Which AnyTool role a call is, from the bound tools and the prompt."""
        names = set(tool_names)
        if "create_agent_category_level" in names:
            return "meta"
        if "create_agent_tool_level" in names:
            return "category"
        if "add_apis_into_api_pool" in names:
            return "tool"
        if FINISH_NAME in names:
            return "solver"
        if names:
            return "caller"
        system = "\n".join(message_text(m) for m in messages if isinstance(m, SystemMessage))
        for marker, where, role in _ROLE_MARKERS:
            if marker.lower() in (system[:_HEAD] if where == "head" else system).lower():
                return role
        return "other"

    def respond(self, messages: Sequence[BaseMessage], tools: Sequence[dict[str, Any]]) -> AIMessage:
        """The reply to one call (the whole policy; pure function of its input)."""
        names = [t["function"]["name"] for t in tools]
        role = self.role_of(messages, names)
        handler = {
            "meta": self._meta, "category": self._category, "tool": self._tool, "solver": self._solver,
            "caller": self._caller, "planner": self._planner, "summarizer": self._summarizer,
            "judge": self._judge, "solvable": self._solvable,
        }.get(role)
        if handler is None:
            text = f"[{LABEL}] This prompt is not one of the AnyTool roles this heuristic policy can play."
            reply = AIMessage(content=text)
        else:
            reply = handler(list(messages), names)
        return self._finish_reply(reply, messages, role)

    def _finish_reply(self, reply: AIMessage, messages: Sequence[BaseMessage], role: str) -> AIMessage:
        seed = "\x00".join(message_text(m) for m in messages)
        calls: list[ToolCall] = []
        for i, tc in enumerate(reply.tool_calls):
            digest = hashlib.sha1(f"{seed}\x01{i}\x01{tc['name']}".encode()).hexdigest()[:16]
            calls.append(ToolCall(name=tc["name"], args=tc["args"], id=f"call_{digest}", type="tool_call"))
        chars_in = sum(len(message_text(m)) for m in messages)
        chars_out = len(message_text(reply)) + sum(len(json.dumps(tc["args"], ensure_ascii=False)) + len(tc["name"])
                                                   for tc in calls)
        tokens_in, tokens_out = chars_in // 4, max(1, chars_out // 4)
        usage = UsageMetadata(input_tokens=tokens_in, output_tokens=tokens_out, total_tokens=tokens_in + tokens_out)
        return AIMessage(content=reply.content, tool_calls=calls, usage_metadata=usage,
                         response_metadata={"model_name": MODEL_NAME, "estimated_usage": True, "role": role})

    # ------------------------------------------------------------------------------------- relevance
    def _remember(self, key: tuple[str, ...], value: Any) -> None:
        with self._lock:
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            self._memo[key] = value

    def _hits(self, text: str) -> list[Any]:
        """Catalog search hits for a text (memoised: the search is deterministic)."""
        with self._lock:
            cached = self._memo.get(("hits", text))
        if cached is None:
            cached = list(self.catalog.search(text, k=min(len(self.catalog), self.search_depth)))
            self._remember(("hits", text), cached)
        return list(cached)

    def relevance(self, api: Api, clause: str) -> float:
        """How well an API fits one request part: its search score relative to the part's best hit, plus the
        share of its required parameters the part gives, plus the share of the part's values it uses, plus a
        little for words its name shares with the part."""
        key = ("rel", api.id, clause)
        with self._lock:
            cached = self._memo.get(key)
        if cached is not None:
            return float(cached)
        hits = self._hits(clause)
        top = max((float(h.score) for h in hits), default=0.0)
        search = next((float(h.score) / top for h in hits if h.api_id == api.id), 0.0) if top > 0 else 0.0
        ex = extract(api, clause)
        overlap = len(content_words(clause) & content_words(api.name))
        value = search + 1.5 * ex.fit + ex.coverage + 0.25 * min(overlap, 2)
        self._remember(key, value)
        return value

    def ranked_apis(self, clause: str, apis: Iterable[Api] | None = None) -> list[tuple[float, Api]]:
        """(relevance, API), best first: the given APIs, or the part's top search hits."""
        pool = list(apis) if apis is not None else [self.catalog.api(h.api_id) for h in self._hits(clause)]
        scored = [(self.relevance(a, clause), i, a) for i, a in enumerate(pool)]
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [(r, a) for r, _, a in scored]

    def on_topic(self, api: Api, clause: str) -> bool:
        """Whether the API's text shares a topic word with the part (words that are not values such as
        numbers, dates, places or units); parts made of values only accept any API."""
        words = topic_words(clause)
        return not words or shares_topic(words, f"{api.name} {api.tool_name} {api.category} {api.description}")

    def best_relevance(self, clause: str) -> float:
        """The relevance of the catalog's best on-topic API for a request part (among its top search hits)."""
        return next((r for r, a in self.ranked_apis(clause) if self.on_topic(a, clause)), 0.0)

    def relevant(self, clause: str, apis: Iterable[Api], ratio: float | None = None) -> list[Api]:
        """The given on-topic APIs whose relevance reaches `ratio` × the catalog's best for the part, best first."""
        floor = (self.relevance_ratio if ratio is None else ratio) * self.best_relevance(clause)
        return [a for r, a in self.ranked_apis(clause, apis) if r > 0 and r >= floor and self.on_topic(a, clause)]

    # ------------------------------------------------------------------------------------- meta agent
    def _meta(self, messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        query = find_query(messages)
        made = [str(c) for c in _called_args(messages, "create_agent_category_level", "category_name")]
        reactivated = _pending_reactivation(messages)
        if made and not reactivated:
            return _calls("The relevant categories have agents; the search is done.", ("finish_search", {}))
        want = 2 if reactivated else max(self.max_categories, min(5, len(split_clauses(query))))
        todo = [c for c in self.rank_categories(query) if c not in made][:want]
        if not todo:
            return _calls("No further category looks relevant.", ("finish_search", {}))
        return _calls(f"The categories {', '.join(todo)} match the query best; one agent each.",
                      *(("create_agent_category_level", {"category_name": c}) for c in todo))

    def rank_categories(self, query: str) -> list[str]:
        """Categories: that of each request part's best API first, then those of other fitting APIs, then the
        category search's ranking of the whole query."""
        clauses = split_clauses(query) or [query]
        out: list[str] = []
        per_clause = [[a.category for a in self.relevant(c, [a for _, a in self.ranked_apis(c)])] for c in clauses]
        for depth in range(max((len(p) for p in per_clause), default=0)):
            for cats in per_clause:
                if depth < len(cats) and cats[depth] not in out:
                    out.append(cats[depth])
        for hit in self.catalog.search_categories(query, k=len(self.catalog.categories)):
            if hit.category not in out:
                out.append(hit.category)
        return out

    # ------------------------------------------------------------------------------------- category agent
    def _category(self, messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        query = find_query(messages)
        category = self._find_category(messages)
        if category is None:
            return _calls("I cannot tell which category is mine.", ("finish_search", {}))
        assigned = {str(n) for names in _called_args(messages, "create_agent_tool_level", "tool_names")
                    for n in (names if isinstance(names, list) else [names])}
        reactivated = _pending_reactivation(messages)
        if assigned and not reactivated:
            return _calls("The relevant tools have agents; the search is done.", ("finish_search", {}))
        limit = _tool_limit(messages, self.max_tools_per_agent)
        ranked = [t for t in self.rank_tools(query, category, more=reactivated) if t not in assigned][:limit]
        if not ranked:
            return _calls(f"No (further) tool of {category} looks relevant.", ("finish_search", {}))
        return _calls(f"These tools of {category} fit the query.", ("create_agent_tool_level", {"tool_names": ranked}))

    def _find_category(self, messages: Sequence[BaseMessage]) -> str | None:
        texts = [message_text(m) for m in messages if isinstance(m, SystemMessage | HumanMessage)]
        for text in texts:
            m = re.search(r"Your category: (.+?) \(\d+ tools?\)", text) or re.search(r"the '(.+?)' category", text)
            if m:
                try:
                    return self.catalog.category(m.group(1)).name
                except UnknownNameError:
                    pass
        joined = "\n".join(texts)
        found = [c for c in self.catalog.categories if re.search(rf"(?<!\w){re.escape(c)}(?!\w)", joined)]
        return max(found, key=len) if found else None

    def rank_tools(self, query: str, category: str, more: bool = False) -> list[str]:
        """Tool names of a category: the tools of its fitting APIs, then each part's best tools by tool search."""
        apis = [a for t in self.catalog.tools(category) for a in t.apis]
        ratio = self.relevance_ratio * (0.7 if more else 1.0)
        out: list[str] = []
        for clause in split_clauses(query) or [query]:
            for api in self.relevant(clause, apis, ratio):
                if api.tool_name not in out:
                    out.append(api.tool_name)
        for clause in [query, *split_clauses(query)]:
            for hit in self.catalog.search_tools(clause, k=3 if more else 1, category=category):
                if hit.tool not in out:
                    out.append(hit.tool)
        return out

    # ------------------------------------------------------------------------------------- tool agent
    def _tool(self, messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        query = find_query(messages)
        own = self._own_apis(messages)
        added = {(a.get("tool_name"), a.get("api_name")) for apis in _called_args(messages, "add_apis_into_api_pool",
                                                                                   "apis")
                 for a in (apis if isinstance(apis, list) else []) if isinstance(a, dict)}
        if _last_call(messages) == "add_apis_into_api_pool":
            return _calls("Check whether the pool now suffices.", ("check_if_request_solvable", {}))
        reactivated = _pending_reactivation(messages)
        if added and not reactivated:
            return _calls("My relevant APIs are in the pool.", ("finish_search", {}))
        picks = [a for a in self.pick_apis(query, own, more=reactivated) if (a.tool_name, a.name) not in added]
        if not picks:
            return _calls("None of my tools has (further) APIs relevant to the query.", ("finish_search", {}))
        apis = [{"tool_name": a.tool_name, "api_name": a.name} for a in picks]
        return _calls(f"Adding {len(apis)} relevant API(s).", ("add_apis_into_api_pool", {"apis": apis}))

    def _own_apis(self, messages: Sequence[BaseMessage]) -> list[Api]:
        """The APIs of the tools named in the prompt (`Your tools:` lines, else names found in it)."""
        system = "\n".join(message_text(m) for m in messages if isinstance(m, SystemMessage))
        category = self._find_category(messages)
        names = re.findall(r"^- (.+?): ", system.split("Your tools:", 1)[1], re.MULTILINE) if "Your tools:" in \
            system else []
        pool = self.catalog.tools(category) if category else self.catalog.tools()
        if names:
            chosen = [t for t in pool if t.name in names or t.key in names]
        else:
            chosen = [t for t in pool if re.search(rf"(?<!\w){re.escape(t.name)}(?!\w)", system)]
        return [a for t in chosen for a in t.apis]

    def pick_apis(self, query: str, apis: Sequence[Api], more: bool = False) -> list[Api]:
        """Own APIs that fit some request part (round-robin over the parts), at most `max_apis_per_agent`."""
        ratio = self.relevance_ratio * (0.7 if more else 1.0)
        per_clause = [self.relevant(c, apis, ratio) for c in split_clauses(query) or [query]]
        out: list[Api] = []
        for depth in range(max((len(p) for p in per_clause), default=0)):
            for found in per_clause:
                if depth < len(found) and found[depth] not in out:
                    out.append(found[depth])
        return out[: self.max_apis_per_agent]

    # ------------------------------------------------------------------------------------- solvable check
    def _solvable(self, messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        query = find_query(messages)
        listing = "\n".join(message_text(m) for m in messages if isinstance(m, HumanMessage))
        pool: list[Api] = []
        for line in listing.splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict) and "api" in item:
                try:
                    pool.append(self.catalog.find_api(str(item.get("tool", "")), str(item["api"])))
                except UnknownNameError:
                    continue
        if not pool:
            return AIMessage(content="Unsolvable: the pool lists no API of the catalog.")
        missing = [c for c in split_clauses(query) or [query] if not self.relevant(c, pool)]
        if not missing:
            return AIMessage(content="Solvable")
        return AIMessage(content="Unsolvable: no API in the pool fits " + "; ".join(repr(c) for c in missing))

    # ------------------------------------------------------------------------------------- solver
    def decide(self, query: str, functions: Sequence[str], steps: Sequence[Step], avoid: Iterable[str] = ()
               ) -> Decision:
        """The next solver move: call an API for the first unanswered request part, answer, or give up."""
        avoided = set(avoid)
        apis: dict[str, Api] = {}
        for fn in functions:
            try:
                apis[fn] = self.catalog.api_for_function(fn)
            except UnknownNameError:
                continue
        by_id = {a.id: fn for fn, a in apis.items()}
        answered: list[tuple[str, Step]] = []
        unanswered: list[tuple[str, list[str]]] = []
        used_ok: set[int] = set()
        for clause in split_clauses(query) or [query]:
            ratio = self.relevance_ratio * self.solver_ratio
            candidates = [by_id[a.id] for a in self.relevant(clause, apis.values(), ratio)]
            ok = next((i for i, s in enumerate(steps) if s.ok and i not in used_ok and s.function in candidates), None)
            if ok is not None:
                used_ok.add(ok)
                answered.append((clause, steps[ok]))
                continue
            tried = list(dict.fromkeys(s.function for s in steps if not s.ok and s.function in candidates))
            left = [c for c in candidates if c not in tried and c not in avoided]
            if left and len(tried) < self.max_failures:
                return CallApi(left[0], extract_arguments(apis[left[0]], clause), clause)
            unanswered.append((clause, tried))
        failed = list(dict.fromkeys(s.function for s in steps if not s.ok))
        if not answered:
            detail = "; ".join(f"{s.function}: {s.error[:120] or 'failed'}" for s in steps if not s.ok)
            why = f"No API call succeeded ({detail})." if detail else "None of the available functions fits the query."
            return GiveUp(why, failed)
        parts = [self._sentence(apis.get(s.function), s) for _, s in answered]
        text = " ".join(p if p.endswith((".", "!", "?")) else p + "." for p in parts)
        if unanswered:
            text += " I could not answer: " + "; ".join(
                repr(c) + (f" (failed: {', '.join(t)})" if t else " (no suitable API)") for c, t in unanswered) + "."
        return Answer(text, failed)

    @staticmethod
    def _sentence(api: Api | None, step: Step) -> str:
        body = describe_response(step.response) or "done"
        label = api.name if api else step.function
        return f"{label}: {body}"

    def _solver(self, messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        query = find_query(messages)
        functions = [t for t in tools if t != FINISH_NAME]
        avoid = {fn for m in messages if isinstance(m, HumanMessage) and m.name == "diversity_prompt"
                 for fn in functions if fn in message_text(m)}
        decision = self.decide(query, functions, steps_from_messages(messages), avoid)
        if isinstance(decision, CallApi):
            return _calls(f"For {decision.clause!r} I call {decision.function}.", (decision.function, decision.args))
        if isinstance(decision, Answer):
            return _calls("I have the results.", (FINISH_NAME, {"return_type": "give_answer",
                                                               "final_answer": decision.text, "reason": "",
                                                               "failed_functions": decision.failed}))
        return _calls(decision.reason, (FINISH_NAME, {"return_type": "give_up", "final_answer": "",
                                                      "reason": decision.reason, "failed_functions": decision.failed}))

    # ------------------------------------------------------------------------------------- α-UMi
    @staticmethod
    def _umi_parts(messages: Sequence[BaseMessage]) -> tuple[str, list[str], str, str]:
        """(query, function names from the API doc, history text, thought) of an α-UMi prompt."""
        system = "\n".join(message_text(m) for m in messages if isinstance(m, SystemMessage))
        functions = re.findall(r"^\d+\. (\S+) \(tool ", system, re.MULTILINE)
        history = ""
        m = re.search(r"The conversation history is:\n(.*?)(?:\n\nThe thought of this step is:|\n\nYou are the|$)",
                      system, re.DOTALL) or re.search(r"based on the conversation history:\n(.*?)"
                                                      r"(?:\n\nThe thought of this step is:|$)", system, re.DOTALL)
        if m:
            history = m.group(1)
        t = re.search(r"The thought of this step is:\n(.*?)(?:\n\n|$)", system, re.DOTALL)
        return find_query(messages), functions, history, t.group(1).strip() if t else ""

    def _planner(self, messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        query, functions, history, _ = self._umi_parts(messages)
        decision = self.decide(query, functions, steps_from_history(history))
        if isinstance(decision, CallApi):
            text = (f"For {decision.clause!r} the caller should call {decision.function} with "
                    f"{json.dumps(decision.args, ensure_ascii=False)}. Next: caller")
        elif isinstance(decision, Answer):
            text = "The API results cover the query; time to write the answer. Next: summarizer"
        else:
            failed = f" Failed functions: {', '.join(decision.failed)}." if decision.failed else ""
            text = f"{decision.reason}{failed} Next: give up"
        return AIMessage(content=text)

    def _caller(self, messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        query, _, history, thought = self._umi_parts(messages)
        decision = self.decide(query, tools, steps_from_history(history))
        named = next((t for t in sorted(tools, key=len, reverse=True) if t in thought), None)
        if isinstance(decision, CallApi) and (named is None or named == decision.function):
            return _calls("", (decision.function, decision.args))
        if named is not None:
            api = self.catalog.api_for_function(named)
            clause = decision.clause if isinstance(decision, CallApi) else query
            return _calls("", (named, extract_arguments(api, clause)))
        return AIMessage(content="No function fits the thought.")

    def _summarizer(self, messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        query, _, history, _ = self._umi_parts(messages)
        steps = steps_from_history(history)
        functions = list(dict.fromkeys(s.function for s in steps))
        decision = self.decide(query, functions, steps, avoid=functions)
        if isinstance(decision, Answer):
            return AIMessage(content=decision.text)
        return AIMessage(content=f"I could not answer the query: {decision.reason if isinstance(decision, GiveUp) else ''}"
                         .strip())

    # ------------------------------------------------------------------------------------- judge
    def _judge(self, messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        text = "\n".join(message_text(m) for m in messages if isinstance(m, HumanMessage))
        answer = text.split("Final answer:", 1)[1].strip() if "Final answer:" in text else ""
        calls = re.findall(r"^- (\S+) → (\S+)$", text, re.MULTILINE)
        ok = [fn for fn, status in calls if status == "ok"]
        missed = [c for c in split_clauses(find_query(messages)) if not addresses(answer, c)]
        if not answer:
            verdict = {"label": "Unsolved", "reason": "The final answer is empty."}
        elif not ok:
            verdict = {"label": "Unsolved", "reason": "No API call succeeded, so the answer rests on no observation."}
        elif _GAVE_UP.search(answer):
            verdict = {"label": "Unsolved", "reason": "The answer says part of the query could not be answered."}
        elif missed:
            verdict = {"label": "Unsolved",
                       "reason": "The answer does not address " + "; ".join(repr(c) for c in missed) + "."}
        else:
            verdict = {"label": "Solved", "reason": f"Every part of the query is answered from {len(ok)} successful "
                                                    f"API call(s): {', '.join(ok)}."}
        return AIMessage(content=json.dumps(verdict, ensure_ascii=False))


_GAVE_UP = re.compile(r"\bcould not answer\b|\bno suitable api\b|\bnext:\s*give up\b|\bnone of the available functions\b",
                      re.IGNORECASE)


def addresses(answer: str, clause: str) -> bool:
    """Whether an answer speaks to one request part: it repeats one of the part's values (numbers, dates, names,
    units; any when the part has none) and shares one of its topic words (any when it has none)."""
    me = _mentions(clause)
    values = [m.text for group in (me.dates, me.numbers, me.quoted, me.countries, me.names) for m in group]
    low = answer.lower()
    value_ok = not values or any(v.lower() in low for v in values)
    words = topic_words(clause)
    return value_ok and (not words or shares_topic(words, answer))


# ============================================================================================ history helpers
def _calls(text: str, *calls: tuple[str, dict[str, Any]]) -> AIMessage:
    return AIMessage(content=text, tool_calls=[{"name": n, "args": a, "id": "", "type": "tool_call"}
                                               for n, a in calls])


def _called_args(messages: Sequence[BaseMessage], function: str, arg: str) -> list[Any]:
    """The value of `arg` in every earlier call of `function`."""
    return [tc.get("args", {}).get(arg) for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls
            if tc["name"] == function]


def _last_call(messages: Sequence[BaseMessage]) -> str | None:
    """The function name of the last tool call made, if the conversation ended on its answer."""
    for m in reversed(messages):
        if isinstance(m, AIMessage):
            return m.tool_calls[-1]["name"] if m.tool_calls else None
        if isinstance(m, HumanMessage):
            return None
    return None


def _pending_reactivation(messages: Sequence[BaseMessage]) -> bool:
    """Whether the agent was re-activated (a user message after its earlier moves) and has not acted since."""
    if not messages or not isinstance(messages[-1], HumanMessage):
        return False
    return any(isinstance(m, AIMessage) for m in messages[:-1])


def _tool_limit(messages: Sequence[BaseMessage], default: int) -> int:
    system = "\n".join(message_text(m) for m in messages if isinstance(m, SystemMessage))
    m = re.search(r"no more than (\d+) tools", system)
    return int(m.group(1)) if m else default
