"""Geography: an offline city table, geodesic distances, coordinate formats and travel estimates."""

from __future__ import annotations

import datetime as dt
import itertools
import math
import re
import unicodedata
import zoneinfo
from types import MappingProxyType
from typing import Any

from . import _geodesy as g
from ._common import as_float, parse_date, require_range
from ._registry import ARRAY, DATE, ENUM, INTEGER, NUMBER, STRING, ApiSpec, CategorySpec, P, ToolSpec
from .cities_data import CITIES, CityRow

_KM_PER = MappingProxyType({"km": 1.0, "mi": 1.609344, "nmi": 1.852, "m": 0.001})
_UNITS = tuple(_KM_PER)


def _fold(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return " ".join(re.sub(r"[^a-z0-9]+", " ", ascii_text.lower()).split())


def _city_dict(row: CityRow) -> dict[str, Any]:
    name, country, lat, lon, pop, tz = row
    return {"name": name, "country": country, "latitude": lat, "longitude": lon, "population": pop, "timezone": tz}


def _find_city(query: str) -> CityRow:
    """A city by name, optionally 'Name, CC' or 'Name, Country'; the largest one wins a tie."""
    text = str(query).strip()
    if not text:
        raise ValueError("city name must not be empty")
    name, _, country = text.partition(",")
    country_code = ""
    if country.strip():
        from .countries import _country

        country_code = _country(country.strip()).alpha_2
    rows = [r for r in CITIES if not country_code or r[1] == country_code]
    exact = [r for r in rows if r[0].lower() == name.strip().lower()]
    folded = [r for r in rows if _fold(r[0]) == _fold(name)]
    hits = exact or folded
    if not hits:
        near = [r[0] for r in rows if _fold(name) in _fold(r[0])][:5]
        hint = f"; did you mean {', '.join(near)}?" if near else " (only major world cities are known)"
        raise ValueError(f"unknown city {query!r}{hint}")
    return max(hits, key=lambda r: r[4])


def _km(value: float, unit: str) -> float:
    return value * _KM_PER[unit]


def _point(lat: float, lon: float) -> tuple[float, float]:
    la, lo = as_float(lat, "latitude"), as_float(lon, "longitude")
    g.check_point(la, lo)
    return la, lo


def _distance(lat1: float, lon1: float, lat2: float, lon2: float, method: str) -> float:
    if method == "great_circle":
        return g.haversine_km(lat1, lon1, lat2, lon2)
    return g.vincenty_inverse(lat1, lon1, lat2, lon2)[0]


# ------------------------------------------------------------------------------ world cities
def search_city(name: str, country: str = "", limit: int = 10) -> dict[str, Any]:
    """Cities whose name contains the text (accent-insensitive), largest first."""
    needle = _fold(name)
    if not needle:
        raise ValueError("name must not be empty")
    code = ""
    if country:
        from .countries import _country

        code = _country(country).alpha_2
    rows = [r for r in CITIES if needle in _fold(r[0]) and (not code or r[1] == code)]
    rows.sort(key=lambda r: (not _fold(r[0]).startswith(needle), -r[4]))
    return {"query": name, "count": len(rows), "cities": [_city_dict(r) for r in rows[: max(1, limit)]]}


def largest_cities(country: str = "", limit: int = 10) -> dict[str, Any]:
    """The most populous cities of the table, worldwide or in one country."""
    require_range(limit, "limit", 1, 100)
    code = ""
    if country:
        from .countries import _country

        code = _country(country).alpha_2
    rows = sorted((r for r in CITIES if not code or r[1] == code), key=lambda r: -r[4])
    return {"country": code, "cities": [{"rank": i + 1, **_city_dict(r)} for i, r in enumerate(rows[:limit])]}


def cities_near(latitude: float, longitude: float, radius_km: float = 300, limit: int = 10) -> dict[str, Any]:
    """Known cities within a radius of a point, nearest first."""
    la, lo = _point(latitude, longitude)
    require_range(radius_km, "radius_km", 0, 20100)
    found = sorted(((g.haversine_km(la, lo, r[2], r[3]), r) for r in CITIES), key=lambda t: t[0])
    items = [{**_city_dict(r), "distance_km": round(d, 1)} for d, r in found if d <= radius_km][: max(1, limit)]
    return {"latitude": la, "longitude": lo, "radius_km": radius_km, "cities": items}


def city_details(city: str, date: str) -> dict[str, Any]:
    """Coordinates, population, time zone and UTC offset (on a date) of a city."""
    row = _find_city(city)
    moment = dt.datetime.combine(parse_date(date), dt.time(12), tzinfo=zoneinfo.ZoneInfo(row[5]))
    off = (moment.utcoffset() or dt.timedelta()).total_seconds() / 3600
    return {**_city_dict(row), "date": moment.date().isoformat(), "utc_offset_hours": off,
            "abbreviation": moment.tzname() or ""}


def compare_cities(city_a: str, city_b: str) -> dict[str, Any]:
    """Population, distance and direction between two cities."""
    a, b = _find_city(city_a), _find_city(city_b)
    km, bearing = g.vincenty_inverse(a[2], a[3], b[2], b[3])
    return {"city_a": _city_dict(a), "city_b": _city_dict(b), "distance_km": round(km, 1),
            "bearing_from_a": round(bearing, 1), "direction_from_a": g.compass_point(bearing),
            "population_ratio": round(a[4] / b[4], 3), "same_timezone": a[5] == b[5]}


# ------------------------------------------------------------------------------ distance calculator
def distance_between_points(lat1: float, lon1: float, lat2: float, lon2: float, unit: str = "km",
                            method: str = "geodesic") -> dict[str, Any]:
    """Distance between two coordinates on the WGS-84 ellipsoid (or a sphere)."""
    p1, p2 = _point(lat1, lon1), _point(lat2, lon2)
    km = _distance(*p1, *p2, method)
    return {"distance": round(km / _KM_PER[unit], 3), "unit": unit, "method": method, "distance_km": round(km, 3)}


def distance_between_cities(city_a: str, city_b: str, unit: str = "km") -> dict[str, Any]:
    """Geodesic distance between two cities of the offline city table."""
    a, b = _find_city(city_a), _find_city(city_b)
    km = g.vincenty_inverse(a[2], a[3], b[2], b[3])[0]
    return {"from": f"{a[0]}, {a[1]}", "to": f"{b[0]}, {b[1]}", "distance": round(km / _KM_PER[unit], 1),
            "unit": unit}


def initial_bearing(lat1: float, lon1: float, lat2: float, lon2: float) -> dict[str, Any]:
    """Initial compass bearing to follow from point 1 to reach point 2 along the geodesic."""
    p1, p2 = _point(lat1, lon1), _point(lat2, lon2)
    bearing = g.vincenty_inverse(*p1, *p2)[1]
    return {"bearing_degrees": round(bearing, 2), "compass": g.compass_point(bearing)}


def geo_midpoint(lat1: float, lon1: float, lat2: float, lon2: float) -> dict[str, Any]:
    """Point halfway along the great circle between two points."""
    p1, p2 = _point(lat1, lon1), _point(lat2, lon2)
    la, lo = g.midpoint(*p1, *p2)
    return {"latitude": round(la, 6), "longitude": round(lo, 6)}


def destination_point(latitude: float, longitude: float, bearing: float, distance: float,
                      unit: str = "km") -> dict[str, Any]:
    """Where you arrive after travelling a distance along an initial bearing."""
    la, lo = _point(latitude, longitude)
    d = as_float(distance, "distance")
    require_range(d, "distance", 0, 20000 / _KM_PER[unit])
    lat2, lon2, final = g.vincenty_direct(la, lo, as_float(bearing, "bearing") % 360, _km(d, unit))
    return {"latitude": round(lat2, 6), "longitude": round(lon2, 6), "final_bearing": round(final, 2)}


# ------------------------------------------------------------------------------ coordinates
def _dms(value: float, pos: str, neg: str) -> str:
    hemi = pos if value >= 0 else neg
    v = abs(value)
    deg = int(v)
    minutes_full = (v - deg) * 60
    minutes = int(minutes_full)
    seconds = round((minutes_full - minutes) * 60, 2)
    if seconds >= 60:
        seconds, minutes = 0.0, minutes + 1
    if minutes >= 60:
        minutes, deg = 0, deg + 1
    return f"{deg}°{minutes:02d}'{seconds:05.2f}\"{hemi}"


def decimal_to_dms(latitude: float, longitude: float) -> dict[str, Any]:
    """Decimal degrees → degrees, minutes and seconds."""
    la, lo = _point(latitude, longitude)
    return {"latitude": _dms(la, "N", "S"), "longitude": _dms(lo, "E", "W")}


_DMS_RE = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?)\s*(?:°|d|deg|\s)\s*(?:(\d+(?:\.\d+)?)\s*(?:'|′|m|\s)\s*)?"
                     r"(?:(\d+(?:\.\d+)?)\s*(?:\"|″|''|s)?\s*)?([NSEWnsew])?\s*$")


def dms_to_decimal(dms: str) -> dict[str, Any]:
    """Degrees/minutes/seconds text such as 48°51'24\"N → decimal degrees."""
    m = _DMS_RE.match(str(dms))
    if not m:
        raise ValueError(f"cannot read {dms!r}; write e.g. 48°51'24\"N or 2 21 03 E")
    deg, minutes, seconds, hemi = m.groups()
    value = abs(float(deg)) + float(minutes or 0) / 60 + float(seconds or 0) / 3600
    negative = deg.startswith("-") or (hemi or "").upper() in ("S", "W")
    if float(minutes or 0) >= 60 or float(seconds or 0) >= 60:
        raise ValueError("minutes and seconds must be below 60")
    axis = "latitude" if (hemi or "").upper() in ("N", "S") else ("longitude" if hemi else "unknown")
    if value > (90 if axis == "latitude" else 180):
        raise ValueError(f"{dms!r} is out of range for a {axis}")
    return {"input": dms, "decimal": round(-value if negative else value, 7), "axis": axis}


def encode_geohash(latitude: float, longitude: float, precision: int = 9) -> dict[str, Any]:
    """Geohash of a point (precision 1-12 characters)."""
    require_range(precision, "precision", 1, 12)
    la, lo = _point(latitude, longitude)
    return {"geohash": g.geohash_encode(la, lo, precision), "precision": precision}


def decode_geohash(geohash: str) -> dict[str, Any]:
    """Centre and error margins of a geohash cell."""
    code = str(geohash).strip()
    if not 1 <= len(code) <= 12:
        raise ValueError("geohash must have 1-12 characters")
    la, lo, e_la, e_lo = g.geohash_decode(code)
    return {"geohash": code.lower(), "latitude": round(la, 7), "longitude": round(lo, 7),
            "latitude_error": round(e_la, 7), "longitude_error": round(e_lo, 7)}


def bounding_box(latitude: float, longitude: float, radius_km: float) -> dict[str, Any]:
    """South-west and north-east corners of a box enclosing a circle around a point."""
    la, lo = _point(latitude, longitude)
    r = as_float(radius_km, "radius_km")
    require_range(r, "radius_km", 0, 5000)
    dlat = math.degrees(r / g.EARTH_RADIUS_KM)
    cos_lat = math.cos(math.radians(la))
    dlon = 180.0 if cos_lat < 1e-9 else min(180.0, math.degrees(r / (g.EARTH_RADIUS_KM * cos_lat)))
    return {"min_latitude": round(max(-90.0, la - dlat), 6), "min_longitude": round(max(-180.0, lo - dlon), 6),
            "max_latitude": round(min(90.0, la + dlat), 6), "max_longitude": round(min(180.0, lo + dlon), 6)}


# ------------------------------------------------------------------------------ travel estimates
def flight_time(from_city: str, to_city: str, cruise_speed_kmh: float = 800) -> dict[str, Any]:
    """Rough flight time: great-circle distance at cruise speed plus 30 minutes for take-off and landing."""
    speed = as_float(cruise_speed_kmh, "cruise_speed_kmh")
    require_range(speed, "cruise_speed_kmh", 100, 3000)
    a, b = _find_city(from_city), _find_city(to_city)
    km = g.vincenty_inverse(a[2], a[3], b[2], b[3])[0]
    minutes = round(km / speed * 60 + 30)
    return {"from": a[0], "to": b[0], "distance_km": round(km, 1), "estimated_minutes": minutes,
            "estimated_hours": f"{minutes // 60}h{minutes % 60:02d}"}


def route_distance(cities: list[Any], unit: str = "km") -> dict[str, Any]:
    """Total straight-line length of a route through several cities, leg by leg."""
    if not isinstance(cities, list) or len(cities) < 2:
        raise ValueError("cities must list at least two city names")
    if len(cities) > 50:
        raise ValueError("at most 50 cities")
    rows = [_find_city(str(c)) for c in cities]
    legs, total = [], 0.0
    for a, b in itertools.pairwise(rows):
        km = g.vincenty_inverse(a[2], a[3], b[2], b[3])[0]
        total += km
        legs.append({"from": a[0], "to": b[0], "distance": round(km / _KM_PER[unit], 1)})
    return {"unit": unit, "total": round(total / _KM_PER[unit], 1), "legs": legs}


def local_time_difference(city_a: str, city_b: str, date: str) -> dict[str, Any]:
    """Hours between the local clocks of two cities on a date."""
    a, b = _find_city(city_a), _find_city(city_b)
    moment = dt.datetime.combine(parse_date(date), dt.time(12), tzinfo=dt.UTC)
    off_a = (moment.astimezone(zoneinfo.ZoneInfo(a[5])).utcoffset() or dt.timedelta()).total_seconds() / 3600
    off_b = (moment.astimezone(zoneinfo.ZoneInfo(b[5])).utcoffset() or dt.timedelta()).total_seconds() / 3600
    return {"city_a": a[0], "timezone_a": a[5], "city_b": b[0], "timezone_b": b[5], "date": moment.date().isoformat(),
            "hours_b_ahead_of_a": off_b - off_a}


# ------------------------------------------------------------------------------ declarations
_CITY = MappingProxyType({
    "name": "str", "country": "str", "latitude": "float", "longitude": "float", "population": "int",
    "timezone": "str",
})


def category() -> CategorySpec:
    """The Geography category."""
    unit = P("unit", ENUM, "Distance unit: km, mi (statute miles), nmi (nautical miles) or m.", None, _UNITS)
    lat1, lon1 = P("lat1", NUMBER, "Latitude of point 1.", 48.8566), P("lon1", NUMBER, "Longitude of point 1.", 2.3522)
    lat2, lon2 = P("lat2", NUMBER, "Latitude of point 2.", 51.5074), P("lon2", NUMBER, "Longitude of point 2.", -0.1278)
    lat, lon = P("latitude", NUMBER, "Latitude in decimal degrees.", 40.7128), P(
        "longitude", NUMBER, "Longitude in decimal degrees.", -74.006)
    cities = ToolSpec(
        name="World Cities Database",
        key="world_cities_database",
        description=f"Offline table of {len(CITIES)} major world cities with coordinates, approximate urban "
                    "population, country and time zone: search by name, largest cities, cities near a point.",
        apis=(
            ApiSpec(search_city, "Search City",
                    "Find cities whose name contains the text (accents ignored), optionally within a country.",
                    (P("name", STRING, "City name or part of it.", "san"),
                     P("country", STRING, "Optional ISO code or country name."),
                     P("limit", INTEGER, "Maximum results.")),
                    {"query": "str", "count": "int", "cities": [{**_CITY, "_list_length": 10}]}),
            ApiSpec(largest_cities, "Largest Cities",
                    "The most populous cities in the table, worldwide or for one country.",
                    (P("country", STRING, "Optional ISO code or country name."),
                     P("limit", INTEGER, "How many (1-100).")),
                    {"country": "str", "cities": [{"rank": "int", **_CITY, "_list_length": 10}]}),
            ApiSpec(cities_near, "Cities Near Point",
                    "Known major cities within a radius of a latitude/longitude, nearest first.",
                    (lat, lon, P("radius_km", NUMBER, "Search radius in km."), P("limit", INTEGER, "Maximum results.")),
                    {"latitude": "float", "longitude": "float", "radius_km": "float",
                     "cities": [{**_CITY, "distance_km": "float", "_list_length": 5}]}),
            ApiSpec(city_details, "City Details",
                    "Coordinates, population, country, time zone and its UTC offset on a date for a city "
                    "('Paris' or 'Paris, FR').",
                    (P("city", STRING, "City name, optionally ', country'.", "Sydney"),
                     P("date", DATE, "Date for the UTC offset.", "2024-01-15")),
                    {**_CITY, "date": "str", "utc_offset_hours": "float", "abbreviation": "str"}),
            ApiSpec(compare_cities, "Compare Cities",
                    "Compare two cities: populations, distance, compass direction and whether they share a time zone.",
                    (P("city_a", STRING, "First city.", "Tokyo"), P("city_b", STRING, "Second city.", "Seoul")),
                    {"city_a": _CITY, "city_b": _CITY, "distance_km": "float", "bearing_from_a": "float",
                     "direction_from_a": "str", "population_ratio": "float", "same_timezone": "bool"}),
        ),
    )
    distance = ToolSpec(
        name="Geo Distance Calculator",
        key="geo_distance_calculator",
        description="Geodesic computations on the WGS-84 ellipsoid (Vincenty) or a sphere (haversine): "
                    "distance between coordinates or cities, bearing, midpoint, and destination point.",
        apis=(
            ApiSpec(distance_between_points, "Distance Between Coordinates",
                    "Distance between two latitude/longitude points in km, miles, nautical miles or metres.",
                    (lat1, lon1, lat2, lon2, unit,
                     P("method", ENUM, "Earth model: 'geodesic' (ellipsoid) or 'great_circle' (sphere).", None,
                       ("geodesic", "great_circle"))),
                    {"distance": "float", "unit": "str", "method": "str", "distance_km": "float"}),
            ApiSpec(distance_between_cities, "Distance Between Cities",
                    "Straight-line (geodesic) distance between two major cities given by name.",
                    (P("city_a", STRING, "First city ('Paris' or 'Paris, FR').", "Paris"),
                     P("city_b", STRING, "Second city.", "London"), unit),
                    {"from": "str", "to": "str", "distance": "float", "unit": "str"}),
            ApiSpec(initial_bearing, "Initial Bearing",
                    "The compass bearing to start on to travel from point 1 to point 2.",
                    (lat1, lon1, lat2, lon2), {"bearing_degrees": "float", "compass": "str"}),
            ApiSpec(geo_midpoint, "Geographic Midpoint", "The point halfway between two coordinates.",
                    (lat1, lon1, lat2, lon2), {"latitude": "float", "longitude": "float"}),
            ApiSpec(destination_point, "Destination Point",
                    "The coordinates reached from a start point after travelling a distance on a bearing.",
                    (lat, lon, P("bearing", NUMBER, "Initial bearing in degrees (0 = north).", 90),
                     P("distance", NUMBER, "Distance to travel.", 100), unit),
                    {"latitude": "float", "longitude": "float", "final_bearing": "float"}),
        ),
    )
    coords = ToolSpec(
        name="Coordinate Toolkit",
        key="coordinate_toolkit",
        description="Coordinate formats and areas: decimal degrees ↔ degrees/minutes/seconds, geohash encoding "
                    "and decoding, bounding boxes around a point.",
        apis=(
            ApiSpec(decimal_to_dms, "Decimal to DMS", "Convert decimal degrees to degrees, minutes, seconds.",
                    (lat, lon), {"latitude": "str", "longitude": "str"}),
            ApiSpec(dms_to_decimal, "DMS to Decimal",
                    "Convert one degrees/minutes/seconds coordinate (e.g. 48°51'24\"N) to decimal degrees.",
                    (P("dms", STRING, "Coordinate text.", "48°51'24\"N"),),
                    {"input": "str", "decimal": "float", "axis": "str"}),
            ApiSpec(encode_geohash, "Geohash Encode", "The geohash string of a point.",
                    (lat, lon, P("precision", INTEGER, "Number of characters (1-12).")),
                    {"geohash": "str", "precision": "int"}),
            ApiSpec(decode_geohash, "Geohash Decode", "The centre point and error margins of a geohash.",
                    (P("geohash", STRING, "Geohash string.", "u09tvw0f6"),),
                    {"geohash": "str", "latitude": "float", "longitude": "float", "latitude_error": "float",
                     "longitude_error": "float"}),
            ApiSpec(bounding_box, "Bounding Box Around Point",
                    "Min/max latitude and longitude of a box enclosing a radius around a point.",
                    (lat, lon, P("radius_km", NUMBER, "Radius in km.", 10)),
                    {"min_latitude": "float", "min_longitude": "float", "max_latitude": "float",
                     "max_longitude": "float"}),
        ),
    )
    travel = ToolSpec(
        name="Travel Distance Estimator",
        key="travel_distance_estimator",
        description="Quick travel planning between major cities: estimated flight time, total length of a "
                    "multi-city route, and the clock difference between two cities on a date.",
        apis=(
            ApiSpec(flight_time, "Estimate Flight Time",
                    "Approximate non-stop flight time between two cities (distance / cruise speed + 30 min).",
                    (P("from_city", STRING, "Departure city.", "New York"),
                     P("to_city", STRING, "Arrival city.", "Los Angeles"),
                     P("cruise_speed_kmh", NUMBER, "Average cruise speed.")),
                    {"from": "str", "to": "str", "distance_km": "float", "estimated_minutes": "int",
                     "estimated_hours": "str"}),
            ApiSpec(route_distance, "Route Distance",
                    "Total straight-line distance of a route visiting cities in order, with each leg.",
                    (P("cities", ARRAY, "City names in visiting order.", ["Rome", "Florence", "Venice", "Milan"]),
                     unit),
                    {"unit": "str", "total": "float",
                     "legs": [{"from": "str", "to": "str", "distance": "float", "_list_length": 3}]}),
            ApiSpec(local_time_difference, "City Time Difference",
                    "How many hours city B's clock is ahead of city A's on a date.",
                    (P("city_a", STRING, "First city.", "London"), P("city_b", STRING, "Second city.", "Singapore"),
                     P("date", DATE, "Date (daylight saving matters).", "2024-07-01")),
                    {"city_a": "str", "timezone_a": "str", "city_b": "str", "timezone_b": "str", "date": "str",
                     "hours_b_ahead_of_a": "float"}),
        ),
    )
    return CategorySpec(name="Geography", description="Cities, geodesic distances, coordinates and travel estimates.",
                        tools=(cities, distance, coords, travel))
