"""Values a request text carries (mentions): dates, numbers, quoted strings, countries, units, names, languages,
currencies, time zones; each with its span, so argument extraction can give a span to one parameter only."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .text import content_words

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
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
_ONE_OF = re.compile(r"(?<![\w'’])(an?|one)\s+$", re.IGNORECASE)  # the article right before a unit
# Identifiers: names written with letters and digits (SHA-256, MD5, base64, UTF-8, ISO-8601, IPv4, H2O, COVID-19, mp3,
# sha3_256). They name algorithms, formats, standards, compounds: values, but never numbers or units. A token starts
# with a letter and holds a digit; its parts are joined by "-" or "_" (no space).
_IDENT = re.compile(r"(?<![\w@/.-])[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*(?![\w/]|-\w)")
_LOOSE = re.compile(r"[\W_]+")
_ZONE = re.compile(r"\b(?:UTC|GMT|[A-Z][a-z]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?)\b")
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
    (r"half[- ]marathons?", "half_marathon", ("half_marathon",)),
    (r"marathons?", "marathon", ("marathon",)),
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


def overlaps(span: tuple[int, int], taken: Iterable[tuple[int, int]]) -> bool:
    return any(span[0] < e and s < span[1] for s, e in taken)


def _collect(text: str, patterns: Iterable[tuple[re.Pattern[str], Any, Any]], taken: list[tuple[int, int]]
             ) -> list[Mention]:
    """Non-overlapping matches of (pattern, value, codes) triples; earlier patterns win (pass longest first)."""
    found: list[Mention] = []
    for pattern, value, codes in patterns:
        for m in pattern.finditer(text):
            span = (m.start(), m.end())
            if overlaps(span, taken):
                continue
            taken.append(span)
            found.append(Mention(m.start(), m.end(), value, m.group(0), tuple(codes) if codes else ()))
    return sorted(found, key=lambda x: x.start)


def loose(text: str) -> str:
    """An identifier's loose form: lower case, separators dropped ("SHA-256", "sha256", "SHA_256" → "sha256")."""
    return _LOOSE.sub("", text).lower()


def same_identifier(a: str, b: str) -> bool:
    """Whether two spellings name the same identifier (case, hyphens and separators ignored)."""
    return bool(loose(a)) and loose(a) == loose(b)


def _is_identifier(token: str) -> bool:
    """A token with letters and digits that is a name: not a unit spelled with a digit ("km2") and not a month's
    or a long word's hyphenated number ("Jan-2024", "before-2020" read as a date or a number)."""
    if not any(c.isdigit() for c in token) or any(p.fullmatch(token) for p, _, _ in _unit_patterns()):
        return False
    for word, _number in re.findall(r"(?:^|[-_])([A-Za-z]+)[-_](\d+)(?=$|[-_])", token):
        if word.lower()[:3] in {m[:3] for m in MONTHS} or (not word.isupper() and len(word) > 5):
            return False
    return True


def identifiers_in(text: str) -> list[Mention]:
    """The identifiers of a text (`_IDENT`), each with its loose form as its code."""
    return [Mention(m.start(), m.end(), m.group(0), m.group(0), (loose(m.group(0)),))
            for m in _IDENT.finditer(text) if _is_identifier(m.group(0))]


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
    identifiers: list[Mention] = field(default_factory=list)  # SHA-256, UTF-8, IPv4, H2O: names, not numbers

    def salient(self) -> list[tuple[int, int]]:
        """Spans of the values a request carries (overlapping mentions merged)."""
        spans = sorted((m.start, m.end) for group in (self.dates, self.numbers, self.quoted, self.countries,
                                                      self.units, self.names, self.currencies, self.zones,
                                                      self.identifiers)
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
            if overlaps((m.start(), m.end()), date_spans):
                continue
            day, month, year = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(5), m.group(4),
                                                                                        m.group(6))
            mo = next(i for i, name in enumerate(MONTHS, 1) if name.startswith(month.lower()[:3]))
            me.dates.append(Mention(m.start(), m.end(), f"{int(year):04d}-{mo:02d}-{int(day):02d}", m.group(0)))
            date_spans.append((m.start(), m.end()))
        me.dates.sort(key=lambda x: x.start)
        quoted_spans = [(q.start, q.end) for q in me.quoted]
        me.identifiers = [i for i in identifiers_in(text) if not overlaps((i.start, i.end), date_spans + quoted_spans)]
        ident_spans = [(i.start, i.end) for i in me.identifiers]
        for m in _NUMBER.finditer(text):
            if not overlaps((m.start(), m.end()), date_spans + quoted_spans + ident_spans):
                me.numbers.append(Mention(m.start(), m.end(), _to_number(m.group(1)), m.group(1)))
        taken = list(quoted_spans)
        me.countries = _collect(text, ((p, code, (name,)) for p, code, name in _country_patterns()), list(taken))
        me.zones = [Mention(m.start(), m.end(), m.group(0), m.group(0)) for m in _ZONE.finditer(text)]
        unit_taken = list(date_spans) + ident_spans + [(c.start, c.end) for c in me.countries]
        me.units = _collect(text, _unit_patterns(), unit_taken)
        for u in me.units:  # "a marathon", "one mile": a quantity of 1 of that unit
            article = _ONE_OF.search(text, 0, u.start)
            if article is not None and not any(n.end == article.end(1) or n.start == u.start for n in me.numbers):
                me.numbers.append(Mention(article.start(1), article.end(1), 1, article.group(1)))
        me.numbers.sort(key=lambda x: x.start)
        me.languages = _collect(text, ((p, code, ()) for p, code in _languages()), list(taken))
        me.currencies = _collect(text, ((re.compile(rf"\b(?:{w})\b", re.IGNORECASE), code, ()) for w, code in
                                        _CURRENCY_WORDS), list(taken))
        me.currencies += [Mention(m.start(), m.end(), m.group(0), m.group(0)) for m in
                          re.finditer(r"\b[A-Z]{3}\b", text) if _is_currency(m.group(0))
                          and not overlaps((m.start(), m.end()), ident_spans)]
        me.currencies.sort(key=lambda x: x.start)
        skip = {name for name in MONTHS} | set(_WEEKDAYS)
        for m in _CAPS.finditer(text):
            words = m.group(0).split()
            start = m.start()
            while words and (words[0].lower().strip(".") in _CAP_STOP):
                start = text.index(words[1], start + len(words[0])) if len(words) > 1 else m.end()
                words = words[1:]
            phrase = " ".join(words).rstrip(".'’")
            if (not phrase or phrase.lower() in skip or overlaps((start, m.end()), [(u.start, u.end) for u in me.units])
                    or overlaps((start, start + len(phrase)), ident_spans)):
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


def zone_of_place(mention: Mention) -> Mention | None:
    zone = _zones_by_place().get(str(mention.value).lower())
    return Mention(mention.start, mention.end, zone, mention.text) if zone else None


@functools.lru_cache(maxsize=256)
def mentions_of(text: str) -> Mentions:
    """`Mentions.of`, memoised (treat the result as read-only)."""
    return Mentions.of(text)


@functools.lru_cache(maxsize=512)
def _is_currency(code: str) -> bool:
    import pycountry

    return pycountry.currencies.get(alpha_3=code) is not None


def topic_words(text: str) -> set[str]:
    """The content words of a request that are not values (numbers, dates, names, units, ...)."""
    spans = mentions_of(text).salient()
    kept, pos = [], 0
    for start, end in spans:
        kept.append(text[pos:start])
        pos = end
    kept.append(text[pos:])
    return content_words(" ".join(kept))


# ------------------------------------------------------------------------------------------ code snippets
_FENCED = re.compile(r"```[a-zA-Z]*[ \t]*\n?(.*?)```|`([^`\n]+)`", re.DOTALL)
_CODE_INTRO = re.compile(r"\b(?:code|script|program|snippet|expression|statement|python)s?\s*:\s*", re.IGNORECASE)
_CODE_MARK = re.compile(r"[()\[\]{}*/%=<>+\-]")  # an operator, a call, an index: prose has none of these
_MAX_CODE_WORDS = 60


def _parses(code: str, mode: str) -> bool:
    """Whether `code` is Python (`mode` "eval": one expression; "exec": statements) that does something: a call, an
    arithmetic operation, a comparison, an index, a statement. Prose that happens to parse is no code: words in
    parentheses ("(km)"), joined by the words Python shares with English ("(a) or (b)", "(not latin-1)"), and
    identifiers ("SHA-256", "UTF-8": names, not subtractions; each is read as one name). Parsed, never run."""
    import ast

    named = _IDENT.sub(lambda m: "_name" if _is_identifier(m.group(0)) and "-" in m.group(0) else m.group(0), code)
    try:
        ast.parse(code, mode=mode)
        tree = ast.parse(named, mode=mode)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    prose = (ast.Name, ast.Constant, ast.Tuple, ast.List, ast.Load, ast.Expr, ast.Expression, ast.Module, ast.BoolOp,
             ast.And, ast.Or, ast.Not, ast.Is, ast.IsNot, ast.In, ast.NotIn)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_name":
            continue  # "UTF-8 (not latin-1)": an identifier before parentheses is no call
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            continue
        if isinstance(node, ast.Compare) and all(isinstance(op, ast.Is | ast.IsNot | ast.In | ast.NotIn)
                                                 for op in node.ops):
            continue
        if not isinstance(node, prose):
            return True
    return False


def _trimmed(text: str, start: int, end: int, mode: str) -> Mention | None:
    """The span as code, with the sentence's closing punctuation dropped when the code needs that."""
    for stop in (end, end - 1):
        code = text[start:stop].strip()
        if code and _parses(code, mode):
            return Mention(start, stop, code, code)
        if stop <= start or text[stop - 1] not in ".?!;,":
            break
    return None


def code_of(text: str, mode: str = "exec") -> Mention | None:
    """The Python code a request carries, for a code or expression parameter (`mode` "exec" or "eval"): a fenced
    or backticked snippet; else what follows "code:" / "expression:" ("Run this Python code: print(sum(range(10)))");
    else the longest run of words that parses as Python and holds an operator, a call or an index ("Evaluate the
    Python expression 2**10"). Parsed with `ast`, never run."""
    for m in _FENCED.finditer(text):
        group = 1 if m.group(1) is not None else 2
        found = _trimmed(text, m.start(group), m.end(group), mode)
        if found is not None:
            return found
    intro = _CODE_INTRO.search(text)
    if intro is not None:
        found = _trimmed(text, intro.end(), len(text.rstrip()), mode)
        if found is not None and _CODE_MARK.search(found.value):
            return found
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)][:_MAX_CODE_WORDS]
    # a run starts and ends with a word holding a digit or an operator: "What is 3 + 4" parses (an `is` test) but
    # "What" is prose
    codey = [bool(_CODE_MARK.search(text, s, e) or re.search(r"\d", text[s:e])) for s, e in words]
    best: Mention | None = None
    for i in range(len(words)):
        if not codey[i]:
            continue
        for j in range(len(words), i, -1):
            start, end = words[i][0], words[j - 1][1]
            if best is not None and end - start <= best.end - best.start:
                break
            if not codey[j - 1] or not _CODE_MARK.search(text, start, end):
                continue
            found = _trimmed(text, start, end, mode)
            if found is not None:
                best = found
                break
    return best
