"""Public holidays and business days (the `holidays` package)."""

from __future__ import annotations

import datetime as dt
from types import MappingProxyType
from typing import Any

from ._common import parse_date, require_range
from ._registry import DATE, ENUM, INTEGER, STRING, ApiSpec, CategorySpec, P, ToolSpec

_MARKETS = ("NYSE", "XNAS", "ECB", "XLON", "XETR", "XJPX", "XHKG", "XNSE", "XSHG", "BVMF", "XTSE", "XASX", "IFEU")


def _calendar(country: str, years: int | list[int], subdivision: str = "", language: str = "") -> Any:
    import holidays

    code = str(country).strip().upper()
    supported = holidays.list_supported_countries()
    if code not in supported:
        raise ValueError(f"no holiday calendar for country code {country!r}; use an ISO 3166 alpha-2 code such "
                         f"as 'US', 'DE' or 'JP' (see Supported Countries)")
    kwargs: dict[str, Any] = {"years": years}
    if subdivision:
        sub = str(subdivision).strip().upper()
        if sub not in supported[code]:
            raise ValueError(f"{code} has no subdivision {subdivision!r}; known: {', '.join(supported[code])}")
        kwargs["subdiv"] = sub
    if language:
        langs = holidays.list_localized_countries().get(code, [])
        if language not in langs:
            raise ValueError(f"holiday names for {code} are available in {', '.join(langs) or 'one language only'}")
        kwargs["language"] = language
    return holidays.country_holidays(code, **kwargs)


def _entries(cal: Any) -> list[dict[str, Any]]:
    return [{"date": d.isoformat(), "name": name, "weekday": d.strftime("%A")} for d, name in sorted(cal.items())]


def _year(year: int) -> int:
    require_range(year, "year", 1950, 2100)
    return int(year)


# ------------------------------------------------------------------------------ public holidays
def list_holidays(country: str, year: int, subdivision: str = "", language: str = "") -> dict[str, Any]:
    """All public holidays of a country (and optional state/province) in a year."""
    cal = _calendar(country, _year(year), subdivision, language)
    items = _entries(cal)
    return {"country": country.upper(), "subdivision": subdivision.upper(), "year": int(year), "count": len(items),
            "holidays": items}


def is_holiday(country: str, date: str, subdivision: str = "") -> dict[str, Any]:
    """Whether a date is a public holiday in a country."""
    d = parse_date(date)
    cal = _calendar(country, _year(d.year), subdivision)
    names = cal.get_list(d)
    return {"country": country.upper(), "date": d.isoformat(), "is_holiday": bool(names), "names": names}


def next_holiday(country: str, date: str, subdivision: str = "") -> dict[str, Any]:
    """The first public holiday on or after a date."""
    d = parse_date(date)
    cal = _calendar(country, [_year(d.year), _year(min(d.year + 1, 2100))], subdivision)
    for day, name in sorted(cal.items()):
        if day >= d:
            return {"country": country.upper(), "from_date": d.isoformat(), "date": day.isoformat(), "name": name,
                    "days_away": (day - d).days}
    raise ValueError(f"no holiday found after {d.isoformat()}")


def find_holiday(country: str, year: int, name: str) -> dict[str, Any]:
    """Dates of holidays whose name contains the given text (case-insensitive)."""
    cal = _calendar(country, _year(year))
    needle = str(name).strip().lower()
    if not needle:
        raise ValueError("name must not be empty")
    matches = [e for e in _entries(cal) if needle in e["name"].lower()]
    return {"country": country.upper(), "year": int(year), "query": name, "matches": matches}


def supported_countries() -> dict[str, Any]:
    """Countries that have a holiday calendar, with their names."""
    import holidays
    import pycountry

    out = []
    for code in sorted(holidays.list_supported_countries()):
        if len(code) != 2:  # the package also lists alpha-3 aliases
            continue
        c = pycountry.countries.get(alpha_2=code)
        out.append({"code": code, "name": c.name if c else code})
    return {"count": len(out), "countries": out}


def list_subdivisions(country: str) -> dict[str, Any]:
    """State/province codes that have their own holiday rules."""
    import holidays

    code = str(country).strip().upper()
    supported = holidays.list_supported_countries()
    if code not in supported:
        raise ValueError(f"no holiday calendar for country code {country!r}")
    return {"country": code, "subdivisions": list(supported[code])}


# ------------------------------------------------------------------------------ business days
def _is_working(d: dt.date, cal: Any) -> bool:
    return d.weekday() < 5 and d not in cal


def working_days_between(country: str, start_date: str, end_date: str, subdivision: str = "") -> dict[str, Any]:
    """Working days (Mon-Fri, not a public holiday) between two dates, both included."""
    a, b = parse_date(start_date, "start_date"), parse_date(end_date, "end_date")
    if b < a:
        a, b = b, a
    if (b - a).days > 3660:
        raise ValueError("the range may span at most 10 years")
    cal = _calendar(country, list(range(_year(a.year), _year(b.year) + 1)), subdivision)
    days = [a + dt.timedelta(days=i) for i in range((b - a).days + 1)]
    holidays_on_weekdays = [d.isoformat() for d in days if d.weekday() < 5 and d in cal]
    working = sum(1 for d in days if _is_working(d, cal))
    return {"country": country.upper(), "start_date": a.isoformat(), "end_date": b.isoformat(),
            "calendar_days": len(days), "working_days": working, "holidays_on_weekdays": holidays_on_weekdays}


def add_working_days(country: str, date: str, days: int, subdivision: str = "") -> dict[str, Any]:
    """The date that is `days` working days after (or before, if negative) a date."""
    require_range(days, "days", -2000, 2000)
    d = parse_date(date)
    cal = _calendar(country, list(range(_year(max(1950, d.year - 9)), _year(min(2100, d.year + 9)) + 1)),
                    subdivision)
    step = 1 if days >= 0 else -1
    left, cur, skipped = abs(days), d, []
    while left:
        cur += dt.timedelta(days=step)
        if _is_working(cur, cal):
            left -= 1
        elif cur in cal:
            skipped.append(cur.isoformat())
    return {"country": country.upper(), "start_date": d.isoformat(), "working_days": days,
            "result_date": cur.isoformat(), "skipped_holidays": skipped}


def is_working_day(country: str, date: str, subdivision: str = "") -> dict[str, Any]:
    """Whether a date is a working day (not a weekend, not a public holiday)."""
    d = parse_date(date)
    cal = _calendar(country, _year(d.year), subdivision)
    reason = "weekend" if d.weekday() >= 5 else ("holiday: " + "; ".join(cal.get_list(d)) if d in cal else "")
    return {"country": country.upper(), "date": d.isoformat(), "is_working_day": not reason, "reason": reason}


def market_holidays(market: str, year: int) -> dict[str, Any]:
    """Closing days of a stock exchange or settlement system."""
    import holidays

    if market not in _MARKETS:
        raise ValueError(f"unknown market {market!r}; known: {', '.join(_MARKETS)}")
    if market not in holidays.list_supported_financial():
        raise ValueError(f"market {market!r} needs a newer version of the 'holidays' package")
    cal = holidays.financial_holidays(market, years=_year(year))
    items = _entries(cal)
    return {"market": market, "year": int(year), "count": len(items), "holidays": items}


# ------------------------------------------------------------------------------ declarations
_HOLIDAY_LIST = (MappingProxyType({"date": "str", "name": "str", "weekday": "str", "_list_length": 11}),)


def category() -> CategorySpec:
    """The Holidays category."""
    country = P("country", STRING, "ISO 3166-1 alpha-2 country code, e.g. 'US', 'GB', 'DE', 'JP'.", "US")
    subdiv = P("subdivision", STRING, "Optional state/province code (e.g. 'CA' for California, 'BY' for Bavaria).")
    public = ToolSpec(
        name="Public Holidays",
        key="public_holidays",
        description="Official public holidays for about 200 countries and their states/provinces, for any "
                    "year from 1950 to 2100: full lists, checks for a date, the next holiday, search by name.",
        apis=(
            ApiSpec(list_holidays, "List Public Holidays",
                    "All public holidays of a country (optionally a subdivision) in a year, with dates and names.",
                    (country, P("year", INTEGER, "Year 1950-2100.", 2024), subdiv,
                     P("language", STRING, "Optional language of holiday names, e.g. 'en_US' (country dependent).")),
                    {"country": "str", "subdivision": "str", "year": "int", "count": "int",
                     "holidays": _HOLIDAY_LIST}),
            ApiSpec(is_holiday, "Is Public Holiday", "Whether a date is a public holiday in a country, and which.",
                    (P("country", STRING, "ISO alpha-2 country code.", "GB"),
                     P("date", DATE, "Date to check.", "2024-12-26"), subdiv),
                    {"country": "str", "date": "str", "is_holiday": "bool", "names": ["list of str with length 1"]}),
            ApiSpec(next_holiday, "Next Public Holiday", "The first public holiday on or after a given date.",
                    (P("country", STRING, "ISO alpha-2 country code.", "FR"),
                     P("date", DATE, "Start date.", "2024-05-02"), subdiv),
                    {"country": "str", "from_date": "str", "date": "str", "name": "str", "days_away": "int"}),
            ApiSpec(find_holiday, "Find Holiday by Name",
                    "Find the date(s) of a named holiday (e.g. 'Thanksgiving', 'Christmas') in a year.",
                    (country, P("year", INTEGER, "Year 1950-2100.", 2025),
                     P("name", STRING, "Part of the holiday's English name.", "Thanksgiving")),
                    {"country": "str", "year": "int", "query": "str",
                     "matches": [{"date": "str", "name": "str", "weekday": "str", "_list_length": 1}]}),
            ApiSpec(supported_countries, "Supported Countries",
                    "Country codes and names for which holiday calendars are available.", (),
                    {"count": "int", "countries": [{"code": "str", "name": "str", "_list_length": 200}]}),
            ApiSpec(list_subdivisions, "List Subdivisions",
                    "The state/province codes of a country that have their own holidays.",
                    (P("country", STRING, "ISO alpha-2 country code.", "AU"),),
                    {"country": "str", "subdivisions": ["list of str with length 8"]}),
        ),
    )
    business = ToolSpec(
        name="Business Day Calculator",
        key="business_day_calculator",
        description="Working-day arithmetic that skips weekends AND national public holidays: count working "
                    "days, deadlines N business days ahead, working-day checks, stock-exchange closing days.",
        apis=(
            ApiSpec(working_days_between, "Working Days Between Dates",
                    "Number of working days between two dates (inclusive), excluding weekends and public holidays "
                    "of the country.",
                    (P("country", STRING, "ISO alpha-2 country code.", "DE"),
                     P("start_date", DATE, "First date.", "2024-12-01"),
                     P("end_date", DATE, "Last date.", "2024-12-31"), subdiv),
                    {"country": "str", "start_date": "str", "end_date": "str", "calendar_days": "int",
                     "working_days": "int", "holidays_on_weekdays": ["list of str with length 2"]}),
            ApiSpec(add_working_days, "Add Working Days",
                    "The date N working days after (or before, when negative) a date, skipping weekends and "
                    "public holidays.",
                    (P("country", STRING, "ISO alpha-2 country code.", "US"),
                     P("date", DATE, "Start date.", "2024-12-20"),
                     P("days", INTEGER, "Working days to add (negative to go back).", 5), subdiv),
                    {"country": "str", "start_date": "str", "working_days": "int", "result_date": "str",
                     "skipped_holidays": ["list of str with length 1"]}),
            ApiSpec(is_working_day, "Is Working Day",
                    "Whether a date is a working day in a country; gives the reason when it is not.",
                    (P("country", STRING, "ISO alpha-2 country code.", "JP"),
                     P("date", DATE, "Date.", "2024-05-03"), subdiv),
                    {"country": "str", "date": "str", "is_working_day": "bool", "reason": "str"}),
            ApiSpec(market_holidays, "Financial Market Holidays",
                    "Days a stock exchange or settlement system is closed: NYSE, XNAS (Nasdaq), ECB (TARGET2), "
                    "XLON (London), XETR (Xetra), XJPX (Japan), XHKG (Hong Kong), XNSE (NSE India), XSHG (Shanghai), "
                    "BVMF (B3 Brazil), XTSE (Toronto), XASX (Australia), IFEU (ICE Futures Europe).",
                    (P("market", ENUM, "Market code.", "NYSE", _MARKETS),
                     P("year", INTEGER, "Year 1950-2100.", 2024)),
                    {"market": "str", "year": "int", "count": "int", "holidays": _HOLIDAY_LIST}),
        ),
    )
    return CategorySpec(name="Holidays", description="Public holidays, business days and market closing days.",
                        tools=(public, business))
