"""Countries, currencies, languages and locale formatting (pycountry + babel CLDR data)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from types import MappingProxyType
from typing import Any, cast

from ._common import as_float, check_number_text, parse_date
from ._registry import ARRAY, DATE, ENUM, NUMBER, STRING, ApiSpec, CategorySpec, P, ToolSpec

_ALIASES = MappingProxyType({
    "uk": "GB", "britain": "GB", "great britain": "GB", "england": "GB", "usa": "US", "america": "US",
    "united states of america": "US", "russia": "RU", "south korea": "KR", "north korea": "KP", "iran": "IR",
    "vietnam": "VN", "syria": "SY", "laos": "LA", "bolivia": "BO", "venezuela": "VE", "tanzania": "TZ",
    "moldova": "MD", "taiwan": "TW", "czechia": "CZ", "holland": "NL", "uae": "AE",
})


def _country(value: str) -> Any:
    import pycountry

    text = str(value).strip()
    if not text:
        raise ValueError("country must not be empty")
    alias = _ALIASES.get(text.lower())
    try:
        return pycountry.countries.lookup(alias or text)
    except LookupError:
        pass
    try:
        hits = pycountry.countries.search_fuzzy(text)
    except LookupError:
        hits = []
    if len(hits) == 1 or (hits and hits[0].name.lower().startswith(text.lower())):
        return hits[0]
    raise ValueError(f"unknown country {value!r}; give an ISO 3166 code (e.g. 'FR', 'FRA', '250') or an English name")


def _locale(value: str) -> Any:
    from babel import Locale, UnknownLocaleError

    try:
        return Locale.parse(str(value).strip().replace("-", "_"))
    except (UnknownLocaleError, ValueError, TypeError):
        raise ValueError(f"unknown locale {value!r}; use a code such as 'en_US', 'de_DE', 'fr' or 'ja_JP'") from None


def _language(value: str) -> Any:
    import pycountry

    try:
        return pycountry.languages.lookup(str(value).strip())
    except LookupError:
        raise ValueError(f"unknown language {value!r}; give an ISO 639 code ('de', 'deu') or English name") from None


def _currency(value: str) -> Any:
    import pycountry

    try:
        return pycountry.currencies.lookup(str(value).strip())
    except LookupError:
        raise ValueError(f"unknown currency {value!r}; give an ISO 4217 code such as 'EUR' or 'JPY'") from None


def _currencies_on(alpha_2: str, on: dt.date) -> list[str]:
    from babel import numbers

    return list(numbers.get_territory_currencies(alpha_2, on, tender=True))


# ------------------------------------------------------------------------------ country profile
def get_country(country: str) -> dict[str, Any]:
    """ISO codes, names, flag, official languages and subdivisions count of a country."""
    import pycountry
    from babel import languages

    c = _country(country)
    subs = pycountry.subdivisions.get(country_code=c.alpha_2) or []
    return {"alpha_2": c.alpha_2, "alpha_3": c.alpha_3, "numeric": c.numeric, "name": c.name,
            "official_name": getattr(c, "official_name", c.name), "common_name": getattr(c, "common_name", c.name),
            "flag": getattr(c, "flag", ""), "official_languages": list(languages.get_official_languages(c.alpha_2)),
            "subdivision_count": len(subs)}


def search_countries(query: str, limit: int = 10) -> dict[str, Any]:
    """Countries whose names match a free-text query (fuzzy, also matches subdivisions' countries)."""
    import pycountry

    text = str(query).strip()
    if not text:
        raise ValueError("query must not be empty")
    try:
        hits = pycountry.countries.search_fuzzy(text)
    except LookupError:
        hits = []
    return {"query": text, "results": [{"alpha_2": c.alpha_2, "name": c.name} for c in hits[: max(1, limit)]]}


def list_countries(name_starts_with: str = "") -> dict[str, Any]:
    """All ISO 3166 countries (optionally only names starting with a prefix)."""
    import pycountry

    prefix = str(name_starts_with).strip().lower()
    items = [{"alpha_2": c.alpha_2, "alpha_3": c.alpha_3, "name": c.name} for c in pycountry.countries
             if c.name.lower().startswith(prefix)]
    items.sort(key=lambda d: d["name"])
    return {"count": len(items), "countries": items}


def country_subdivisions(country: str, type: str = "") -> dict[str, Any]:
    """States, provinces, regions... of a country with their ISO 3166-2 codes."""
    import pycountry

    c = _country(country)
    subs = pycountry.subdivisions.get(country_code=c.alpha_2) or []
    wanted = str(type).strip().lower()
    items = sorted(({"code": s.code, "name": s.name, "type": s.type} for s in subs
                    if not wanted or s.type.lower() == wanted), key=lambda d: d["code"])
    return {"country": c.alpha_2, "count": len(items), "types": sorted({s.type for s in subs}), "subdivisions": items}


def country_name_in_language(country: str, locale: str) -> dict[str, Any]:
    """The name of a country written in another language (CLDR)."""
    c = _country(country)
    loc = _locale(locale)
    name = loc.territories.get(c.alpha_2)
    if not name:
        raise ValueError(f"no {loc} name for {c.name}")
    return {"alpha_2": c.alpha_2, "english_name": c.name, "locale": str(loc), "name": name}


# ------------------------------------------------------------------------------ currencies
def currency_details(currency: str) -> dict[str, Any]:
    """Name, numeric code, symbol, minor-unit digits and current users of a currency."""
    import pycountry
    from babel import numbers
    from babel.core import get_global

    cur = _currency(currency)
    users = sorted(t for t, entries in get_global("territory_currencies").items()
                   if pycountry.countries.get(alpha_2=t) is not None
                   and any(code == cur.alpha_3 and end is None and tender for code, _s, end, tender in entries))
    return {"code": cur.alpha_3, "name": cur.name, "numeric": cur.numeric,
            "symbol": numbers.get_currency_symbol(cur.alpha_3, locale="en_US"),
            "decimal_digits": numbers.get_currency_precision(cur.alpha_3), "used_in": users}


def country_currencies(country: str, date: str) -> dict[str, Any]:
    """Legal-tender currencies of a country on a date (historical changes such as DEM → EUR included)."""
    c = _country(country)
    d = parse_date(date)
    codes = _currencies_on(c.alpha_2, d)
    return {"country": c.alpha_2, "name": c.name, "date": d.isoformat(), "currencies": codes}


def format_money(amount: float, currency: str, locale: str = "en_US") -> dict[str, Any]:
    """An amount written the way a locale writes money (symbol position, separators)."""
    from babel import numbers

    cur = _currency(currency)
    loc = _locale(locale)
    x = as_float(amount, "amount")
    if abs(x) >= 1e15:
        raise ValueError("amount must be below 10^15 in magnitude")
    text = numbers.format_currency(x, cur.alpha_3, locale=loc)
    return {"amount": amount, "currency": cur.alpha_3, "locale": str(loc), "formatted": text}


def list_currencies() -> dict[str, Any]:
    """All ISO 4217 currencies."""
    import pycountry

    items = sorted(({"code": c.alpha_3, "name": c.name} for c in pycountry.currencies), key=lambda d: d["code"])
    return {"count": len(items), "currencies": items}


# ------------------------------------------------------------------------------ languages
def language_details(language: str) -> dict[str, Any]:
    """ISO 639 codes, English and native names, and writing direction of a language."""
    from babel import Locale, UnknownLocaleError

    lang = _language(language)
    code = getattr(lang, "alpha_2", None) or lang.alpha_3
    native, direction = "", ""
    try:
        loc = Locale.parse(code)
        native = loc.get_display_name(loc) or ""
        direction = loc.text_direction
    except (UnknownLocaleError, ValueError):
        pass
    return {"alpha_2": getattr(lang, "alpha_2", ""), "alpha_3": lang.alpha_3, "name": lang.name,
            "native_name": native, "text_direction": direction, "scope": getattr(lang, "scope", ""),
            "type": getattr(lang, "type", "")}


def country_languages(country: str) -> dict[str, Any]:
    """Languages spoken in a country with population share and official status (CLDR estimates)."""
    from babel import Locale
    from babel.core import get_global

    c = _country(country)
    names = Locale.parse("en").languages
    data = get_global("territory_languages").get(c.alpha_2, {})
    items = [{"code": code, "name": names.get(code, code), "population_percent": info.get("population_percent"),
              "official_status": info.get("official_status") or ""}
             for code, info in sorted(data.items(), key=lambda kv: -(kv[1].get("population_percent") or 0))]
    return {"country": c.alpha_2, "name": c.name, "languages": items}


def language_name_in(language: str, locale: str) -> dict[str, Any]:
    """The name of a language written in another language (e.g. German in Japanese)."""
    lang = _language(language)
    loc = _locale(locale)
    code = getattr(lang, "alpha_2", None) or lang.alpha_3
    name = loc.languages.get(code)
    if not name:
        raise ValueError(f"no {loc} name for language {lang.name}")
    return {"language": code, "english_name": lang.name, "locale": str(loc), "name": name}


def list_locales(language: str = "") -> dict[str, Any]:
    """Locale identifiers available for formatting (optionally for one language)."""
    from babel.localedata import locale_identifiers

    prefix = str(language).strip().lower()
    ids = sorted(i for i in locale_identifiers() if not prefix or i.lower() == prefix
                 or i.lower().startswith(prefix + "_"))
    if not ids:
        raise ValueError(f"no locale for language {language!r}")
    return {"language": language, "count": len(ids), "locales": ids}


# ------------------------------------------------------------------------------ locale formatting
def format_number(number: float, locale: str = "en_US", style: str = "decimal") -> dict[str, Any]:
    """A number written the way a locale writes it (decimal, percent, scientific or compact)."""
    from babel import numbers

    loc = _locale(locale)
    x = as_float(number, "number")
    if abs(x) >= 1e15 and style != "scientific":
        raise ValueError("number must be below 10^15 in magnitude (use style 'scientific' for larger ones)")
    fmt: dict[str, Callable[..., str]] = {"decimal": numbers.format_decimal, "percent": numbers.format_percent,
                                          "scientific": numbers.format_scientific,
                                          "compact": numbers.format_compact_decimal}
    return {"number": number, "locale": str(loc), "style": style, "formatted": fmt[style](x, locale=loc)}


def format_date_localized(date: str, locale: str = "en_US", format: str = "long") -> dict[str, Any]:
    """A date written in a locale's language and style."""
    from babel import dates

    d = parse_date(date)
    loc = _locale(locale)
    return {"date": d.isoformat(), "locale": str(loc), "format": format,
            "formatted": dates.format_date(d, format=format, locale=loc)}


def month_and_day_names(locale: str, width: str = "wide") -> dict[str, Any]:
    """Month and weekday names in a locale's language."""
    from babel import dates

    loc = _locale(locale)
    if width not in ("wide", "abbreviated", "narrow"):
        raise ValueError("width must be wide, abbreviated or narrow")
    months = dates.get_month_names(cast(Any, width), locale=loc)
    days = dates.get_day_names(cast(Any, width), locale=loc)
    return {"locale": str(loc), "width": width, "months": [months[i] for i in range(1, 13)],
            "weekdays": [days[i] for i in range(7)]}


def parse_localized_number(text: str, locale: str) -> dict[str, Any]:
    """Read a number written in a locale's style ('1.234,5' in German → 1234.5)."""
    from babel import numbers

    loc = _locale(locale)
    try:
        value = numbers.parse_decimal(check_number_text(str(text), "text"), locale=loc, strict=True)
    except numbers.NumberFormatError as exc:
        raise ValueError(f"{text!r} is not a number in locale {loc}: {exc}") from None
    return {"text": text, "locale": str(loc), "value": as_float(value, "text")}


def format_list(items: list[Any], locale: str = "en_US", style: str = "standard") -> dict[str, Any]:
    """Join items the way a locale does ('a, b, and c' / 'a, b et c')."""
    from babel import lists

    loc = _locale(locale)
    if not isinstance(items, list) or not items:
        raise ValueError("items must be a non-empty list")
    text = lists.format_list([str(i) for i in items], style=cast(Any, style), locale=loc)
    return {"locale": str(loc), "style": style, "formatted": text}


# ------------------------------------------------------------------------------ declarations
def category() -> CategorySpec:
    """The Country_Data category."""
    profile = ToolSpec(
        name="Country Profile",
        key="country_profile",
        description="ISO 3166 country reference: codes (alpha-2, alpha-3, numeric), official and common names, "
                    "flag emoji, official languages, states/provinces, and country names in other languages.",
        apis=(
            ApiSpec(get_country, "Get Country",
                    "Look up a country by ISO code or English name and return its codes, names, flag, official "
                    "languages and number of subdivisions.",
                    (P("country", STRING, "ISO code (alpha-2/alpha-3/numeric) or English name.", "Switzerland"),),
                    {"alpha_2": "str", "alpha_3": "str", "numeric": "str", "name": "str", "official_name": "str",
                     "common_name": "str", "flag": "str", "official_languages": ["list of str with length 3"],
                     "subdivision_count": "int"}),
            ApiSpec(search_countries, "Search Countries", "Fuzzy search of countries by (part of) their name.",
                    (P("query", STRING, "Name or part of a name.", "guinea"),
                     P("limit", "INTEGER", "Maximum results.")),
                    {"query": "str", "results": [{"alpha_2": "str", "name": "str", "_list_length": 4}]}),
            ApiSpec(list_countries, "List Countries", "All countries with ISO codes, optionally filtered by prefix.",
                    (P("name_starts_with", STRING, "Optional name prefix."),),
                    {"count": "int", "countries": [{"alpha_2": "str", "alpha_3": "str", "name": "str",
                                                    "_list_length": 249}]}),
            ApiSpec(country_subdivisions, "Country Subdivisions",
                    "States, provinces, regions or districts of a country with ISO 3166-2 codes.",
                    (P("country", STRING, "ISO code or English name.", "CA"),
                     P("type", STRING, "Optional subdivision type filter, e.g. 'Province' or 'State'.")),
                    {"country": "str", "count": "int", "types": ["list of str with length 2"],
                     "subdivisions": [{"code": "str", "name": "str", "type": "str", "_list_length": 13}]}),
            ApiSpec(country_name_in_language, "Country Name in Language",
                    "The name of a country written in another language, e.g. Germany in French → 'Allemagne'.",
                    (P("country", STRING, "ISO code or English name.", "DE"),
                     P("locale", STRING, "Language/locale code, e.g. 'fr', 'ja', 'es_MX'.", "fr")),
                    {"alpha_2": "str", "english_name": "str", "locale": "str", "name": "str"}),
        ),
    )
    money = ToolSpec(
        name="Currency Reference",
        key="currency_reference",
        description="ISO 4217 currency metadata (no exchange rates): names, symbols, decimal places, which "
                    "countries use a currency, a country's currency on any date, and locale-aware money formatting.",
        apis=(
            ApiSpec(currency_details, "Currency Details",
                    "Name, numeric code, symbol, number of decimals and the countries currently using a currency.",
                    (P("currency", STRING, "ISO 4217 code.", "EUR"),),
                    {"code": "str", "name": "str", "numeric": "str", "symbol": "str", "decimal_digits": "int",
                     "used_in": ["list of str with length 30"]}),
            ApiSpec(country_currencies, "Currencies of Country",
                    "The legal-tender currency (or currencies) of a country on a given date.",
                    (P("country", STRING, "ISO code or English name.", "Germany"),
                     P("date", DATE, "Date (currencies change over time).", "1995-06-01")),
                    {"country": "str", "name": "str", "date": "str", "currencies": ["list of str with length 1"]}),
            ApiSpec(format_money, "Format Money",
                    "Write an amount of money in a locale's style, e.g. 1234.5 EUR in de_DE → '1.234,50 €'.",
                    (P("amount", NUMBER, "Amount.", 1234.5), P("currency", STRING, "ISO 4217 code.", "EUR"),
                     P("locale", STRING, "Locale code.")),
                    {"amount": "float", "currency": "str", "locale": "str", "formatted": "str"}),
            ApiSpec(list_currencies, "List Currencies", "All ISO 4217 currency codes and names.", (),
                    {"count": "int", "currencies": [{"code": "str", "name": "str", "_list_length": 180}]}),
        ),
    )
    language = ToolSpec(
        name="Language Reference",
        key="language_reference",
        description="ISO 639 languages: codes, English and native names, script direction, languages spoken "
                    "in each country with population shares, and language names translated into other languages.",
        apis=(
            ApiSpec(language_details, "Language Details",
                    "Codes, English name, native name and text direction of a language.",
                    (P("language", STRING, "ISO 639 code or English name.", "Arabic"),),
                    {"alpha_2": "str", "alpha_3": "str", "name": "str", "native_name": "str",
                     "text_direction": "str", "scope": "str", "type": "str"}),
            ApiSpec(country_languages, "Languages of Country",
                    "Languages spoken in a country, with estimated population percentage and official status.",
                    (P("country", STRING, "ISO code or English name.", "India"),),
                    {"country": "str", "name": "str",
                     "languages": [{"code": "str", "name": "str", "population_percent": "float",
                                    "official_status": "str", "_list_length": 10}]}),
            ApiSpec(language_name_in, "Language Name in Another Language",
                    "The name of a language written in another language, e.g. German in Spanish → 'alemán'.",
                    (P("language", STRING, "ISO 639 code or English name.", "German"),
                     P("locale", STRING, "Language to write the name in.", "es")),
                    {"language": "str", "english_name": "str", "locale": "str", "name": "str"}),
            ApiSpec(list_locales, "List Locales", "Locale codes available (e.g. all variants of Spanish).",
                    (P("language", STRING, "Optional language code to filter by, e.g. 'es'."),),
                    {"language": "str", "count": "int", "locales": ["list of str with length 20"]}),
        ),
    )
    fmt = ToolSpec(
        name="Locale Formatter",
        key="locale_formatter",
        description="Internationalisation helpers from CLDR: format numbers, percentages and dates for a "
                    "locale, month/day names in any language, parse localized numbers, join lists.",
        apis=(
            ApiSpec(format_number, "Format Number",
                    "Write a number in a locale's style (decimal, percent, scientific or compact like '1.2M').",
                    (P("number", NUMBER, "Number to format.", 1234567.891), P("locale", STRING, "Locale code."),
                     P("style", ENUM, "Number style.", None, ("decimal", "percent", "scientific", "compact"))),
                    {"number": "float", "locale": "str", "style": "str", "formatted": "str"}),
            ApiSpec(format_date_localized, "Format Date for Locale",
                    "Write a date in a locale's language and conventions.",
                    (P("date", DATE, "Date.", "2024-03-05"), P("locale", STRING, "Locale code."),
                     P("format", ENUM, "Length of the format.", None, ("short", "medium", "long", "full"))),
                    {"date": "str", "locale": "str", "format": "str", "formatted": "str"}),
            ApiSpec(month_and_day_names, "Month and Day Names", "Month and weekday names in a locale's language.",
                    (P("locale", STRING, "Locale code.", "it"),
                     P("width", ENUM, "Name length.", None, ("wide", "abbreviated", "narrow"))),
                    {"locale": "str", "width": "str", "months": ["list of str with length 12"],
                     "weekdays": ["list of str with length 7"]}),
            ApiSpec(parse_localized_number, "Parse Localized Number",
                    "Read a number written in a locale's style, e.g. '1.234,5' in German → 1234.5.",
                    (P("text", STRING, "Number text.", "1.234,5"), P("locale", STRING, "Locale code.", "de_DE")),
                    {"text": "str", "locale": "str", "value": "float"}),
            ApiSpec(format_list, "Format List",
                    "Join items into a phrase in a locale's style ('a, b, and c').",
                    (P("items", ARRAY, "Items to join.", ["apples", "pears", "plums"]),
                     P("locale", STRING, "Locale code."),
                     P("style", ENUM, "List style.", None, ("standard", "or", "unit"))),
                    {"locale": "str", "style": "str", "formatted": "str"}),
        ),
    )
    return CategorySpec(name="Country_Data",
                        description="Countries, currencies, languages and locale-aware formatting.",
                        tools=(profile, money, language, fmt))
