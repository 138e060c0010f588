"""Dates, times, time zones and calendars (zoneinfo + tzdata, dateutil, calendar)."""

from __future__ import annotations

import calendar
import datetime as dt
import re
import time
import zoneinfo
from types import MappingProxyType
from typing import Any

from ._common import clean_number, parse_date, require_range
from ._registry import BOOLEAN, DATE, ENUM, INTEGER, NUMBER, STRING, ApiSpec, CategorySpec, P, ToolSpec

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _zone(name: str) -> zoneinfo.ZoneInfo:
    key = str(name).strip()
    if key.upper() in ("UTC", "Z", "GMT"):
        key = "UTC"
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*", key) or len(key) > 64:
        raise ValueError(f"unknown time zone {name!r}; use an IANA name such as 'Europe/Paris'")
    try:
        return zoneinfo.ZoneInfo(key)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"unknown time zone {name!r}; use an IANA name such as 'Europe/Paris'") from None


def _parse_datetime(value: str, name: str = "datetime") -> dt.datetime:
    text = str(value).strip().replace("Z", "+00:00")
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{name} must look like 'YYYY-MM-DD HH:MM[:SS]', got {value!r}") from None


def _offset_text(offset: dt.timedelta | None) -> str:
    total = int((offset or dt.timedelta()).total_seconds())
    sign = "+" if total >= 0 else "-"
    total = abs(total)
    return f"{sign}{total // 3600:02d}:{total % 3600 // 60:02d}"


def _describe(moment: dt.datetime) -> dict[str, Any]:
    return {"datetime": moment.isoformat(timespec="seconds"), "date": moment.date().isoformat(),
            "time": moment.strftime("%H:%M:%S"), "weekday": _WEEKDAYS[moment.weekday()],
            "utc_offset": _offset_text(moment.utcoffset()), "abbreviation": moment.tzname() or ""}


# ------------------------------------------------------------------------------ world clock
def current_time(timezone: str) -> dict[str, Any]:
    """The current local time in a time zone (depends on the clock by design)."""
    zone = _zone(timezone)
    return {"timezone": zone.key, **_describe(dt.datetime.now(zone))}


def convert_time(datetime: str, from_timezone: str, to_timezone: str) -> dict[str, Any]:
    """A wall-clock time in one zone expressed in another."""
    src, dst = _zone(from_timezone), _zone(to_timezone)
    moment = _parse_datetime(datetime).replace(tzinfo=src)
    out = moment.astimezone(dst)
    return {"from_timezone": src.key, "to_timezone": dst.key, "source": _describe(moment), "target": _describe(out)}


def timezone_details(timezone: str, date: str) -> dict[str, Any]:
    """Offset, abbreviation and daylight-saving status of a zone at noon on a date."""
    zone = _zone(timezone)
    moment = dt.datetime.combine(parse_date(date), dt.time(12), tzinfo=zone)
    dst = moment.dst()
    return {"timezone": zone.key, "date": moment.date().isoformat(), "utc_offset": _offset_text(moment.utcoffset()),
            "abbreviation": moment.tzname() or "", "is_dst": bool(dst and dst.total_seconds()),
            "offset_hours": clean_number((moment.utcoffset() or dt.timedelta()).total_seconds() / 3600)}


def list_timezones(region: str = "") -> dict[str, Any]:
    """IANA time zone names, optionally only those starting with `region` (e.g. 'Europe')."""
    prefix = str(region).strip().lower()
    names = sorted(z for z in zoneinfo.available_timezones() if z.lower().startswith(prefix)
                   and not z.startswith(("Etc/", "SystemV/")) and "/" in z)
    if not names:
        raise ValueError(f"no time zone starts with {region!r}")
    return {"region": region, "count": len(names), "timezones": names}


def zone_difference(timezone_a: str, timezone_b: str, date: str) -> dict[str, Any]:
    """How many hours zone B is ahead of zone A on a date (noon UTC)."""
    za, zb = _zone(timezone_a), _zone(timezone_b)
    moment = dt.datetime.combine(parse_date(date), dt.time(12), tzinfo=dt.UTC)
    off_a = moment.astimezone(za).utcoffset() or dt.timedelta()
    off_b = moment.astimezone(zb).utcoffset() or dt.timedelta()
    hours = (off_b - off_a).total_seconds() / 3600
    return {"timezone_a": za.key, "timezone_b": zb.key, "date": moment.date().isoformat(),
            "hours_b_ahead_of_a": clean_number(hours), "offset_a": _offset_text(off_a),
            "offset_b": _offset_text(off_b)}


# ------------------------------------------------------------------------------ date calculator
def add_to_date(date: str, years: int = 0, months: int = 0, weeks: int = 0, days: int = 0) -> dict[str, Any]:
    """Add (or subtract, with negative numbers) calendar years, months, weeks and days to a date."""
    from dateutil.relativedelta import relativedelta

    start = parse_date(date)
    try:
        out = start + relativedelta(years=years, months=months, weeks=weeks, days=days)
    except (OverflowError, ValueError) as exc:
        raise ValueError(f"resulting date is out of range: {exc}") from None
    return {"start_date": start.isoformat(), "result_date": out.isoformat(), "weekday": _WEEKDAYS[out.weekday()]}


def date_difference(start_date: str, end_date: str) -> dict[str, Any]:
    """Days between two dates, and the same span in years/months/days."""
    from dateutil.relativedelta import relativedelta

    a, b = parse_date(start_date, "start_date"), parse_date(end_date, "end_date")
    rd = relativedelta(b, a)
    days = (b - a).days
    return {"start_date": a.isoformat(), "end_date": b.isoformat(), "days": days,
            "weeks": clean_number(days / 7, 6), "years": rd.years, "months": rd.months, "remaining_days": rd.days}


def day_of_week(date: str) -> dict[str, Any]:
    """The weekday of a date."""
    d = parse_date(date)
    return {"date": d.isoformat(), "weekday": _WEEKDAYS[d.weekday()], "iso_weekday": d.isoweekday(),
            "is_weekend": d.weekday() >= 5}


def age_on(birth_date: str, on_date: str) -> dict[str, Any]:
    """Age in years/months/days on a date, and days until the next birthday."""
    from dateutil.relativedelta import relativedelta

    born, on = parse_date(birth_date, "birth_date"), parse_date(on_date, "on_date")
    if on < born:
        raise ValueError("on_date is before birth_date")
    rd = relativedelta(on, born)
    nxt = born + relativedelta(years=rd.years + 1)
    if rd.months == 0 and rd.days == 0:
        nxt = on
    return {"birth_date": born.isoformat(), "on_date": on.isoformat(), "years": rd.years, "months": rd.months,
            "days": rd.days, "total_days": (on - born).days, "next_birthday": nxt.isoformat(),
            "days_until_next_birthday": (nxt - on).days}


def parse_date_text(text: str, day_first: bool = False) -> dict[str, Any]:
    """Read a free-form date/time string ('March 5th 2024 3pm', '05/03/2024') into ISO form."""
    from dateutil import parser

    default = dt.datetime(2000, 1, 1)
    try:
        out = parser.parse(str(text), dayfirst=day_first, default=default)
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"cannot read a date in {text!r}: {exc}") from None
    return {"text": text, "datetime": out.isoformat(), "date": out.date().isoformat(),
            "weekday": _WEEKDAYS[out.weekday()], "has_timezone": out.tzinfo is not None}


def count_weekdays(start_date: str, end_date: str, include_end: bool = True) -> dict[str, Any]:
    """Monday-to-Friday days between two dates (no holiday calendar)."""
    a, b = parse_date(start_date, "start_date"), parse_date(end_date, "end_date")
    if b < a:
        a, b = b, a
    span = (b - a).days + (1 if include_end else 0)
    full, rest = divmod(span, 7)
    weekdays = full * 5 + sum(1 for i in range(rest) if (a.weekday() + i) % 7 < 5)
    return {"start_date": a.isoformat(), "end_date": b.isoformat(), "calendar_days": span, "weekdays": weekdays,
            "weekend_days": span - weekdays}


# ------------------------------------------------------------------------------ calendar facts
_FIRST_DAY = MappingProxyType({"monday": calendar.MONDAY, "sunday": calendar.SUNDAY})


def month_calendar(year: int, month: int, first_weekday: str = "monday") -> dict[str, Any]:
    """The weeks of a month as rows of day numbers (0 = day outside the month)."""
    require_range(year, "year", 1, 9999)
    require_range(month, "month", 1, 12)
    cal = calendar.Calendar(firstweekday=_FIRST_DAY[first_weekday])
    weeks = cal.monthdayscalendar(year, month)
    order = [_WEEKDAYS[(cal.firstweekday + i) % 7] for i in range(7)]
    return {"year": year, "month": month, "month_name": calendar.month_name[month], "weekday_order": order,
            "weeks": weeks}


def leap_year(year: int) -> dict[str, Any]:
    """Whether a (proleptic Gregorian) year is a leap year."""
    require_range(year, "year", 1, 9999)
    return {"year": year, "is_leap": calendar.isleap(year), "days_in_year": 366 if calendar.isleap(year) else 365}


def days_in_month(year: int, month: int) -> dict[str, Any]:
    """Number of days of a month and the weekday it starts on."""
    require_range(year, "year", 1, 9999)
    require_range(month, "month", 1, 12)
    first, n = calendar.monthrange(year, month)
    return {"year": year, "month": month, "days": n, "first_weekday": _WEEKDAYS[first],
            "last_date": dt.date(year, month, n).isoformat()}


def easter_date(year: int, method: str = "western") -> dict[str, Any]:
    """Easter Sunday of a year (western, orthodox or original Julian computation)."""
    from dateutil import easter

    require_range(year, "year", 1583, 4099)
    code = {"julian": easter.EASTER_JULIAN, "orthodox": easter.EASTER_ORTHODOX, "western": easter.EASTER_WESTERN}
    d = easter.easter(year, code[method])
    return {"year": year, "method": method, "date": d.isoformat(),
            "good_friday": (d - dt.timedelta(days=2)).isoformat(),
            "pentecost": (d + dt.timedelta(days=49)).isoformat()}


def date_facts(date: str) -> dict[str, Any]:
    """Day of year, ISO week, quarter, weekday and days left in the year for a date."""
    d = parse_date(date)
    iso = d.isocalendar()
    year_end = dt.date(d.year, 12, 31)
    return {"date": d.isoformat(), "weekday": _WEEKDAYS[d.weekday()], "day_of_year": d.timetuple().tm_yday,
            "iso_year": iso.year, "iso_week": iso.week, "quarter": (d.month - 1) // 3 + 1,
            "is_leap_year": calendar.isleap(d.year), "days_left_in_year": (year_end - d).days}


def nth_weekday(year: int, month: int, weekday: str, n: int = 1) -> dict[str, Any]:
    """The n-th given weekday of a month (n = -1 for the last one), e.g. the 4th Thursday of November."""
    require_range(year, "year", 1, 9999)
    require_range(month, "month", 1, 12)
    wd = _WEEKDAYS.index(weekday)
    days = [d for d in range(1, calendar.monthrange(year, month)[1] + 1) if dt.date(year, month, d).weekday() == wd]
    if n == 0 or not -len(days) <= n <= len(days):
        raise ValueError(f"{calendar.month_name[month]} {year} has {len(days)} {weekday}s; n={n} is out of range")
    d = dt.date(year, month, days[n - 1 if n > 0 else n])
    return {"year": year, "month": month, "weekday": weekday, "n": n, "date": d.isoformat()}


# ------------------------------------------------------------------------------ unix time
def timestamp_to_date(timestamp: float, timezone: str = "UTC") -> dict[str, Any]:
    """A Unix timestamp (seconds; milliseconds are detected) as a local date and time."""
    ts = float(timestamp)
    if abs(ts) > 1e11:  # milliseconds
        ts /= 1000.0
    try:
        moment = dt.datetime.fromtimestamp(ts, tz=_zone(timezone))
    except (OverflowError, OSError, ValueError):
        raise ValueError(f"timestamp {timestamp} is out of range") from None
    return {"timestamp": clean_number(ts), "timezone": _zone(timezone).key, **_describe(moment)}


def date_to_timestamp(datetime: str, timezone: str = "UTC") -> dict[str, Any]:
    """Seconds since 1970-01-01T00:00Z of a wall-clock time in a zone."""
    moment = _parse_datetime(datetime)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_zone(timezone))
    ts = moment.timestamp()
    return {"datetime": moment.isoformat(timespec="seconds"), "timestamp": clean_number(ts),
            "timestamp_ms": round(ts * 1000)}


def format_datetime(datetime: str, pattern: str = "%A, %d %B %Y %H:%M") -> dict[str, Any]:
    """Format a date/time with a C strftime pattern (e.g. '%d/%m/%Y')."""
    moment = _parse_datetime(datetime)
    if len(pattern) > 200:
        raise ValueError("pattern is too long")
    return {"datetime": moment.isoformat(), "pattern": pattern, "formatted": moment.strftime(pattern)}


def current_timestamp() -> dict[str, Any]:
    """The current Unix time (depends on the clock by design)."""
    now = time.time()
    return {"timestamp": int(now), "timestamp_ms": int(now * 1000),
            "utc": dt.datetime.fromtimestamp(now, tz=dt.UTC).isoformat(timespec="seconds")}


# ------------------------------------------------------------------------------ declarations
_DESCRIBED = MappingProxyType({
    "datetime": "str", "date": "str", "time": "str", "weekday": "str", "utc_offset": "str", "abbreviation": "str",
})


def category() -> CategorySpec:
    """The Date_Time category."""
    tz_p = P("timezone", STRING, "IANA time zone name, e.g. 'Asia/Tokyo' or 'UTC'.", "Asia/Tokyo")
    clock = ToolSpec(
        name="World Clock",
        key="world_clock",
        description="Time zones of the world from the IANA tz database: current local time anywhere, "
                    "converting a meeting time between zones, UTC offsets and daylight saving.",
        apis=(
            ApiSpec(current_time, "Current Time in Zone", "The current local date and time in a time zone.",
                    (tz_p,), {"timezone": "str", **_DESCRIBED}, deterministic=False),
            ApiSpec(convert_time, "Convert Time Between Zones",
                    "Convert a local date and time in one time zone to the local time in another.",
                    (P("datetime", STRING, "Local time 'YYYY-MM-DD HH:MM'.", "2024-03-15 09:30"),
                     P("from_timezone", STRING, "IANA zone of the given time.", "America/New_York"),
                     P("to_timezone", STRING, "IANA zone to convert to.", "Europe/Berlin")),
                    {"from_timezone": "str", "to_timezone": "str", "source": dict(_DESCRIBED),
                     "target": dict(_DESCRIBED)}),
            ApiSpec(timezone_details, "Time Zone Details",
                    "UTC offset, abbreviation and daylight-saving status of a time zone on a given date.",
                    (P("timezone", STRING, "IANA time zone name.", "Europe/London"),
                     P("date", DATE, "Date of interest.", "2024-07-01")),
                    {"timezone": "str", "date": "str", "utc_offset": "str", "abbreviation": "str", "is_dst": "bool",
                     "offset_hours": "float"}),
            ApiSpec(list_timezones, "List Time Zones",
                    "List IANA time zone names, optionally filtered by region prefix such as 'Europe', "
                    "'America/Argentina' or 'Asia'.",
                    (P("region", STRING, "Region prefix; empty for all zones."),),
                    {"region": "str", "count": "int", "timezones": ["list of str with length 60"]}),
            ApiSpec(zone_difference, "Time Difference Between Zones",
                    "How many hours one time zone is ahead of another on a given date.",
                    (P("timezone_a", STRING, "First IANA zone.", "America/Los_Angeles"),
                     P("timezone_b", STRING, "Second IANA zone.", "Asia/Kolkata"),
                     P("date", DATE, "Date (offsets change with daylight saving).", "2024-01-15")),
                    {"timezone_a": "str", "timezone_b": "str", "date": "str", "hours_b_ahead_of_a": "float",
                     "offset_a": "str", "offset_b": "str"}),
        ),
    )
    calc = ToolSpec(
        name="Date Calculator",
        key="date_calculator",
        description="Date arithmetic: add or subtract years, months, weeks and days, count days between dates, "
                    "compute ages, find the day of the week, parse free-form dates and count weekdays.",
        apis=(
            ApiSpec(add_to_date, "Add to Date",
                    "Add or subtract (negative values) years, months, weeks and days to a date; month ends are "
                    "clipped (Jan 31 + 1 month = Feb 29/28).",
                    (P("date", DATE, "Start date.", "2024-01-31"),
                     P("years", INTEGER, "Years to add."), P("months", INTEGER, "Months to add."),
                     P("weeks", INTEGER, "Weeks to add."), P("days", INTEGER, "Days to add.")),
                    {"start_date": "str", "result_date": "str", "weekday": "str"}),
            ApiSpec(date_difference, "Difference Between Dates",
                    "Number of days and weeks between two dates, and the span as years, months and days.",
                    (P("start_date", DATE, "Earlier date.", "2000-02-29"),
                     P("end_date", DATE, "Later date.", "2024-06-15")),
                    {"start_date": "str", "end_date": "str", "days": "int", "weeks": "float", "years": "int",
                     "months": "int", "remaining_days": "int"}),
            ApiSpec(day_of_week, "Day of Week", "The day of the week a date falls on.",
                    (P("date", DATE, "Date.", "1969-07-20"),),
                    {"date": "str", "weekday": "str", "iso_weekday": "int", "is_weekend": "bool"}),
            ApiSpec(age_on, "Age Calculator",
                    "Exact age on a given date (years, months, days) and days until the next birthday.",
                    (P("birth_date", DATE, "Date of birth.", "1990-08-25"),
                     P("on_date", DATE, "Date at which to compute the age.", "2024-03-01")),
                    {"birth_date": "str", "on_date": "str", "years": "int", "months": "int", "days": "int",
                     "total_days": "int", "next_birthday": "str", "days_until_next_birthday": "int"}),
            ApiSpec(parse_date_text, "Parse Date Text",
                    "Read a free-form date or date-time written in English ('March 5th, 2024 3pm', "
                    "'05/03/2024', '2024-03-05T15:00') and return it in ISO form.",
                    (P("text", STRING, "Date text.", "March 5th, 2024 3pm"),
                     P("day_first", BOOLEAN, "Read ambiguous numeric dates as day/month (European style).")),
                    {"text": "str", "datetime": "str", "date": "str", "weekday": "str", "has_timezone": "bool"}),
            ApiSpec(count_weekdays, "Count Weekdays Between Dates",
                    "Count Monday-Friday days between two dates (weekends excluded; public holidays NOT "
                    "excluded).",
                    (P("start_date", DATE, "First date.", "2024-05-01"),
                     P("end_date", DATE, "Last date.", "2024-05-31"),
                     P("include_end", BOOLEAN, "Count the end date itself.")),
                    {"start_date": "str", "end_date": "str", "calendar_days": "int", "weekdays": "int",
                     "weekend_days": "int"}),
        ),
    )
    facts = ToolSpec(
        name="Calendar Facts",
        key="calendar_facts",
        description="Calendar lookups: printable month calendars, leap years, month lengths, Easter and "
                    "Pentecost dates, ISO week numbers and quarters, and rules like 'the 4th Thursday of November'.",
        apis=(
            ApiSpec(month_calendar, "Month Calendar",
                    "The weeks of a month as rows of day numbers, 0 for days of neighbouring months.",
                    (P("year", INTEGER, "Year.", 2024), P("month", INTEGER, "Month 1-12.", 2),
                     P("first_weekday", ENUM, "First column of each week.", None, ("monday", "sunday"))),
                    {"year": "int", "month": "int", "month_name": "str", "weekday_order": ["list of str with length 7"],
                     "weeks": ["list of list with length 5"]}),
            ApiSpec(leap_year, "Leap Year Check", "Whether a year is a leap year and how many days it has.",
                    (P("year", INTEGER, "Year.", 2100),), {"year": "int", "is_leap": "bool", "days_in_year": "int"}),
            ApiSpec(days_in_month, "Days in Month", "How many days a month has and the weekday it starts on.",
                    (P("year", INTEGER, "Year.", 2024), P("month", INTEGER, "Month 1-12.", 2)),
                    {"year": "int", "month": "int", "days": "int", "first_weekday": "str", "last_date": "str"}),
            ApiSpec(easter_date, "Easter Date",
                    "Date of Easter Sunday (with Good Friday and Pentecost) for a year, western or orthodox.",
                    (P("year", INTEGER, "Year 1583-4099.", 2025),
                     P("method", ENUM, "Computation.", None, ("western", "orthodox", "julian"))),
                    {"year": "int", "method": "str", "date": "str", "good_friday": "str", "pentecost": "str"}),
            ApiSpec(date_facts, "Date Facts",
                    "Facts about a date: weekday, day of year, ISO week number, quarter, leap year, days left "
                    "in the year.",
                    (P("date", DATE, "Date.", "2024-12-30"),),
                    {"date": "str", "weekday": "str", "day_of_year": "int", "iso_year": "int", "iso_week": "int",
                     "quarter": "int", "is_leap_year": "bool", "days_left_in_year": "int"}),
            ApiSpec(nth_weekday, "Nth Weekday of Month",
                    "The date of the n-th given weekday of a month, e.g. the 4th Thursday of November 2024 or "
                    "the last Monday of May (n = -1).",
                    (P("year", INTEGER, "Year.", 2024), P("month", INTEGER, "Month 1-12.", 11),
                     P("weekday", ENUM, "Weekday.", "Thursday", _WEEKDAYS),
                     P("n", INTEGER, "Which occurrence: 1-5, or -1 for the last.")),
                    {"year": "int", "month": "int", "weekday": "str", "n": "int", "date": "str"}),
        ),
    )
    unix = ToolSpec(
        name="Unix Time Converter",
        key="unix_time_converter",
        description="Epoch time utilities: Unix timestamps (seconds or milliseconds) to readable dates in any "
                    "time zone and back, strftime formatting, and the current epoch time.",
        apis=(
            ApiSpec(timestamp_to_date, "Timestamp to Date",
                    "Convert a Unix timestamp (seconds, or milliseconds when larger than 1e11) to a local "
                    "date and time.",
                    (P("timestamp", NUMBER, "Seconds since 1970-01-01 UTC.", 1700000000),
                     P("timezone", STRING, "IANA time zone of the result.")),
                    {"timestamp": "float", "timezone": "str", **_DESCRIBED}),
            ApiSpec(date_to_timestamp, "Date to Timestamp",
                    "Convert a local date and time in a zone to a Unix timestamp.",
                    (P("datetime", STRING, "Date and time 'YYYY-MM-DD HH:MM[:SS]'.", "2024-01-01 00:00"),
                     P("timezone", STRING, "IANA zone of the given time (ignored if it has an offset).")),
                    {"datetime": "str", "timestamp": "float", "timestamp_ms": "int"}),
            ApiSpec(format_datetime, "Format Date",
                    "Format a date/time with a strftime pattern such as '%d/%m/%Y' or '%B %d, %Y'.",
                    (P("datetime", STRING, "Date or date-time in ISO form.", "2024-07-04 18:30"),
                     P("pattern", STRING, "strftime pattern.")),
                    {"datetime": "str", "pattern": "str", "formatted": "str"}),
            ApiSpec(current_timestamp, "Current Unix Timestamp", "The current Unix time in seconds and milliseconds.",
                    (), {"timestamp": "int", "timestamp_ms": "int", "utc": "str"}, deterministic=False),
        ),
    )
    return CategorySpec(
        name="Date_Time",
        description="Dates, times, time zones and calendars.",
        tools=(clock, calc, facts, unix),
    )
