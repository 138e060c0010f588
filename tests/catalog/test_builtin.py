"""The builtin offline toolset: catalog shape, docs ↔ code agreement, and every API run for real."""

from __future__ import annotations

import inspect
import json
import math
import re
from collections.abc import Callable
from typing import Any

import pytest

from langgraph_anytool import Catalog
from langgraph_anytool.catalog.builtin import (
    builtin_api_specs,
    builtin_categories,
    builtin_implementations,
    category_specs,
)
from langgraph_anytool.catalog.builtin._registry import ApiSpec, P, ToolSpec, check_api, tool_document
from langgraph_anytool.catalog.models import Api
from langgraph_anytool.catalog.naming import slugify
from tests.servers import loopback_listener

SPECS = builtin_api_specs()
API_IDS = sorted(SPECS)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.builtin()


@pytest.fixture(scope="module")
def impls() -> dict[str, Callable[..., Any]]:
    return builtin_implementations()


# ------------------------------------------------------------------------------ template conformance
_SCALARS: dict[str, tuple[type, ...]] = {"str": (str,), "int": (int,), "float": (int, float), "bool": (bool,),
                                         "NoneType": (type(None),), "list": (list,)}
_LIST_OF = re.compile(r"^list of (\w+) with length \d+$")


def _scalar_problem(value: Any, kind: str, path: str) -> list[str]:
    types = _SCALARS[kind]
    if isinstance(value, bool) and bool not in types:
        return [f"{path}: expected {kind}, got bool"]
    return [] if isinstance(value, types) else [f"{path}: expected {kind}, got {type(value).__name__}"]


def conformance_problems(value: Any, template: Any, path: str = "$") -> list[str]:
    """Where `value` differs from a ToolBench-style template (None is accepted anywhere)."""
    if value is None:
        return []
    if isinstance(template, str):
        return _scalar_problem(value, template, path)
    if isinstance(template, dict):
        if not isinstance(value, dict):
            return [f"{path}: expected object, got {type(value).__name__}"]
        keys = {k for k in template if k != "_list_length"}
        if not keys:  # {} documents "some object"
            return []
        problems = [f"{path}: undocumented key {k!r}" for k in value if k not in keys]
        problems += [f"{path}: missing key {k!r}" for k in keys if k not in value]
        for k in keys & set(value):
            problems += conformance_problems(value[k], template[k], f"{path}.{k}")
        return problems
    if isinstance(template, list):
        if not isinstance(value, list):
            return [f"{path}: expected array, got {type(value).__name__}"]
        if not template:
            return []
        item = template[0]
        problems = []
        if isinstance(item, str):
            m = _LIST_OF.match(item)
            assert m, f"bad list template {item!r}"
            for i, v in enumerate(value):
                problems += _scalar_problem(v, m.group(1), f"{path}[{i}]")
        else:
            for i, v in enumerate(value):
                problems += conformance_problems(v, item, f"{path}[{i}]")
        return problems
    raise AssertionError(f"bad template node {template!r} at {path}")


def example_args(api: Api) -> dict[str, Any]:
    """The arguments documented for a demonstration call: each required parameter's `default`."""
    return {p.name: p.default for p in api.required_params}


def test_conformance_checker_rejects_mismatches() -> None:
    tpl = {"a": "int", "items": [{"n": "str", "_list_length": 2}], "tags": ["list of str with length 2"]}
    assert conformance_problems({"a": 1, "items": [{"n": "x"}], "tags": ["p"]}, tpl) == []
    assert conformance_problems({"a": "1", "items": [], "tags": []}, tpl)
    assert conformance_problems({"a": 1, "items": [{"n": 2}], "tags": []}, tpl)
    assert conformance_problems({"a": 1, "items": [], "tags": [3]}, tpl)
    assert conformance_problems({"a": 1, "items": [], "tags": [], "extra": 0}, tpl)
    assert conformance_problems({"a": True, "items": [], "tags": []}, tpl)


# ------------------------------------------------------------------------------ catalog shape
def test_counts_meet_the_floor(catalog: Catalog) -> None:
    cats = builtin_categories()
    tools = [t for c in cats for t in c.tools]
    assert len(cats) >= 8
    assert len(tools) >= 30
    assert len(catalog) >= 100
    assert len(catalog) == sum(len(t.apis) for t in tools) == len(SPECS)
    assert len(catalog.categories) == len(cats)
    assert all(c.description for c in cats)
    assert all(t.description and t.apis for t in tools)


def test_ids_and_function_names(catalog: Catalog) -> None:
    names = set()
    for api in catalog:
        tool = catalog.tool(api.category, api.tool_key)
        assert api.id == f"{api.category}/{tool.key}/{slugify(api.name)}"
        assert tool.source.startswith("builtin:")
        fn = catalog.function_name(api.id)
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", fn), fn
        assert catalog.api_for_function(fn).id == api.id
        names.add(fn)
    assert len(names) == len(catalog)


def test_every_api_is_documented(catalog: Catalog) -> None:
    # every API owns its template (no object shared between APIs that a caller could mutate for all)
    assert len({id(api.template_response) for api in catalog}) == len(catalog)
    for api in catalog:
        assert api.description, api.id
        assert isinstance(api.template_response, (dict, list)) and api.template_response, api.id
        for p in api.params:
            assert p.description, f"{api.id}.{p.name}"
            if p.required:
                assert p.default is not None, f"{api.id}.{p.name} has no example value"
            if p.type == "enum":
                assert p.enum and (p.default is None or p.default in p.enum), f"{api.id}.{p.name}"


def test_docs_match_signatures(catalog: Catalog, impls: dict[str, Callable[..., Any]]) -> None:
    assert set(impls) == {api.id for api in catalog}
    for api in catalog:
        sig = inspect.signature(impls[api.id]).parameters
        assert set(sig) == {p.name for p in api.params}, api.id
        for p in api.params:
            has_default = sig[p.name].default is not inspect.Parameter.empty
            assert has_default == (not p.required), f"{api.id}.{p.name}"
            if has_default and sig[p.name].default is not None:
                assert p.default == sig[p.name].default, f"{api.id}.{p.name}"


def test_overlapping_tools_exist(catalog: Catalog) -> None:
    # several tools overlap in purpose, so choosing among them is real work
    def has(tool_key: str) -> bool:
        return any(t.key == tool_key for t in catalog.tools())

    for pair in (("universal_unit_converter", "quick_metric_converter"), ("date_calculator", "calendar_facts"),
                 ("geo_distance_calculator", "travel_distance_estimator"), ("quick_calculator",
                                                                            "descriptive_statistics"),
                 ("base64_toolkit", "multi_encoder"), ("public_holidays", "business_day_calculator")):
        assert all(has(k) for k in pair), pair


def test_check_api_rejects_drift() -> None:
    def f(a: int, b: int = 2) -> dict[str, Any]:
        return {"s": a + b}

    good = ApiSpec(f, "F", "d", (P("a", "INTEGER", "a", 1), P("b", "INTEGER", "b")), {"s": "int"})
    check_api(good)
    with pytest.raises(TypeError, match="accepted but not documented"):
        check_api(ApiSpec(f, "F", "d", (P("a", "INTEGER", "a", 1),), {"s": "int"}))
    with pytest.raises(TypeError, match="documented but not accepted"):
        check_api(ApiSpec(f, "F", "d", (*good.params, P("c", "STRING", "c")), {"s": "int"}))
    with pytest.raises(TypeError, match="example"):
        check_api(ApiSpec(f, "F", "d", (P("a", "INTEGER", "a"), P("b", "INTEGER", "b")), {"s": "int"}))
    with pytest.raises(TypeError, match="template"):
        check_api(ApiSpec(f, "F", "d", good.params, None))
    doc = tool_document(ToolSpec("T", "t", (good,)))
    assert doc["api_list"][0]["required_parameters"] == [{"name": "a", "type": "INTEGER", "description": "a",
                                                         "default": 1}]
    assert doc["api_list"][0]["optional_parameters"][0]["default"] == 2


def test_category_modules_are_pure() -> None:
    # building the declarations twice gives equal documents (no hidden mutable state)
    first = [(m, [tool_document(t) for t in c.tools]) for m, c in category_specs()]
    second = [(m, [tool_document(t) for t in c.tools]) for m, c in category_specs()]
    assert json.dumps(first, sort_keys=True, default=str) == json.dumps(second, sort_keys=True, default=str)


# ------------------------------------------------------------------------------ every API, for real
@pytest.mark.parametrize("api_id", API_IDS)
def test_api_example_call(api_id: str, catalog: Catalog, impls: dict[str, Callable[..., Any]]) -> None:
    api = catalog.api(api_id)
    result = impls[api_id](**example_args(api))
    json.dumps(result, allow_nan=False)
    assert conformance_problems(result, api.template_response) == []
    if SPECS[api_id].deterministic:
        assert impls[api_id](**example_args(api)) == result


# ------------------------------------------------------------------------------ targeted values
def call(impls: dict[str, Callable[..., Any]], catalog: Catalog, tool: str, api: str, **kwargs: Any) -> Any:
    return impls[catalog.find_api(tool, api).id](**kwargs)


def test_units(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    r = call(impls, catalog, "Universal Unit Converter", "Convert Units", value=1, from_unit="mile", to_unit="km")
    assert r["result"] == pytest.approx(1.609344, rel=1e-12)
    r = call(impls, catalog, "Universal Unit Converter", "Convert Units", value=100, from_unit="degC",
             to_unit="degF")
    assert r["result"] == pytest.approx(212)
    r = call(impls, catalog, "Universal Unit Converter", "Convert Quantity Expression", expression="3 ft + 2 in",
             to_unit="inch")
    assert r["result"] == pytest.approx(38)
    with pytest.raises(ValueError, match="cannot convert"):
        call(impls, catalog, "Universal Unit Converter", "Convert Units", value=1, from_unit="m", to_unit="s")
    with pytest.raises(ValueError, match="unknown unit"):
        call(impls, catalog, "Universal Unit Converter", "Convert Units", value=1, from_unit="blorp", to_unit="m")
    # the two converters agree where they overlap
    pairs = {"Convert Length": [("mi", "mile", "km", "kilometer"), ("ft", "foot", "cm", "centimeter")],
             "Convert Weight": [("lb", "pound", "kg", "kilogram"), ("st", "stone", "g", "gram")],
             "Convert Volume": [("gal", "gallon", "l", "liter"), ("cup", "cup", "ml", "milliliter")],
             "Convert Speed": [("knot", "knot", "km/h", "km/hour")], "Convert Area": [("ft2", "foot ** 2", "ha",
                                                                                       "hectare")]}
    for api_name, rows in pairs.items():
        for a, pa, b, pb in rows:
            quick = call(impls, catalog, "Quick Metric Converter", api_name, value=3.5, from_unit=a, to_unit=b)
            general = call(impls, catalog, "Universal Unit Converter", "Convert Units", value=3.5, from_unit=pa,
                           to_unit=pb)
            assert quick["result"] == pytest.approx(general["result"], rel=1e-6), (api_name, a, b)
    r = call(impls, catalog, "Quick Metric Converter", "Convert Temperature", value=-40, from_scale="C",
             to_scale="F")
    assert r["result"] == -40
    with pytest.raises(ValueError, match="absolute zero"):
        call(impls, catalog, "Quick Metric Converter", "Convert Temperature", value=-500, from_scale="C",
             to_scale="K")
    r = call(impls, catalog, "Data Size Calculator", "Convert Data Size", value=1, from_unit="GiB", to_unit="MB")
    assert r["result"] == pytest.approx(1073.741824)


def test_dates_and_zones(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    r = call(impls, catalog, "World Clock", "Convert Time Between Zones", datetime="2024-03-15 09:30",
             from_timezone="America/New_York", to_timezone="Europe/Berlin")
    assert r["target"]["time"] == "14:30:00" and r["source"]["abbreviation"] == "EDT"
    r = call(impls, catalog, "World Clock", "Time Difference Between Zones", timezone_a="America/Los_Angeles",
             timezone_b="Asia/Kolkata", date="2024-01-15")
    assert r["hours_b_ahead_of_a"] == 13.5
    with pytest.raises(ValueError, match="time zone"):
        call(impls, catalog, "World Clock", "Current Time in Zone", timezone="Mars/Olympus")
    r = call(impls, catalog, "Date Calculator", "Add to Date", date="2024-01-31", months=1)
    assert r["result_date"] == "2024-02-29"
    r = call(impls, catalog, "Date Calculator", "Difference Between Dates", start_date="2024-01-01",
             end_date="2025-01-01")
    assert r["days"] == 366 and r["years"] == 1
    r = call(impls, catalog, "Calendar Facts", "Nth Weekday of Month", year=2024, month=11, weekday="Thursday", n=4)
    assert r["date"] == "2024-11-28"
    r = call(impls, catalog, "Calendar Facts", "Nth Weekday of Month", year=2024, month=5, weekday="Monday", n=-1)
    assert r["date"] == "2024-05-27"
    easter = {m: call(impls, catalog, "Calendar Facts", "Easter Date", year=2024, method=m)["date"]
              for m in ("western", "orthodox")}
    assert easter == {"western": "2024-03-31", "orthodox": "2024-05-05"}
    assert call(impls, catalog, "Calendar Facts", "Leap Year Check", year=1900)["is_leap"] is False
    assert call(impls, catalog, "Calendar Facts", "Leap Year Check", year=2000)["is_leap"] is True
    r = call(impls, catalog, "Calendar Facts", "Date Facts", date="2024-12-30")
    assert (r["iso_year"], r["iso_week"], r["quarter"]) == (2025, 1, 4)
    assert call(impls, catalog, "Unix Time Converter", "Timestamp to Date", timestamp=0)["datetime"] == (
        "1970-01-01T00:00:00+00:00")
    r = call(impls, catalog, "Unix Time Converter", "Date to Timestamp", datetime="2024-01-01 09:00",
             timezone="Asia/Tokyo")
    assert r["timestamp"] == 1704067200
    # weekday counting agrees with a day-by-day count
    import datetime as dt

    a, b = dt.date(2024, 2, 3), dt.date(2024, 4, 17)
    brute = sum(1 for i in range((b - a).days + 1) if (a + dt.timedelta(days=i)).weekday() < 5)
    r = call(impls, catalog, "Date Calculator", "Count Weekdays Between Dates", start_date=a.isoformat(),
             end_date=b.isoformat())
    assert r["weekdays"] == brute
    r = call(impls, catalog, "Date Calculator", "Age Calculator", birth_date="2000-02-29", on_date="2024-02-28")
    assert r["years"] == 23


def test_holidays(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    r = call(impls, catalog, "Public Holidays", "List Public Holidays", country="US", year=2024)
    by_date = {h["date"]: h["name"] for h in r["holidays"]}
    assert by_date["2024-07-04"].startswith("Independence Day")
    assert "Thanksgiving" in by_date["2024-11-28"]
    assert "Christmas" in by_date["2024-12-25"]
    assert call(impls, catalog, "Public Holidays", "Is Public Holiday", country="GB",
                date="2024-12-26")["is_holiday"] is True
    assert call(impls, catalog, "Public Holidays", "Is Public Holiday", country="GB",
                date="2024-12-27")["is_holiday"] is False
    r = call(impls, catalog, "Business Day Calculator", "Working Days Between Dates", country="DE",
             start_date="2024-12-01", end_date="2024-12-31")
    assert r["working_days"] == 20 and r["holidays_on_weekdays"] == ["2024-12-25", "2024-12-26"]
    r = call(impls, catalog, "Business Day Calculator", "Add Working Days", country="US", date="2024-12-20", days=5)
    assert r["result_date"] == "2024-12-30"
    with pytest.raises(ValueError, match="country code"):
        call(impls, catalog, "Public Holidays", "List Public Holidays", country="XX", year=2024)
    bavaria = call(impls, catalog, "Public Holidays", "List Public Holidays", country="DE", year=2024,
                   subdivision="BY")
    berlin = call(impls, catalog, "Public Holidays", "List Public Holidays", country="DE", year=2024,
                  subdivision="BE")
    assert "2024-01-06" in {h["date"] for h in bavaria["holidays"]} - {h["date"] for h in berlin["holidays"]}


def test_countries(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    for query in ("DE", "DEU", "276", "Germany", "germany"):
        assert call(impls, catalog, "Country Profile", "Get Country", country=query)["alpha_2"] == "DE"
    assert call(impls, catalog, "Country Profile", "Get Country", country="UK")["alpha_2"] == "GB"
    with pytest.raises(ValueError, match="unknown country"):
        call(impls, catalog, "Country Profile", "Get Country", country="Atlantis")
    cur = {d: call(impls, catalog, "Currency Reference", "Currencies of Country", country="DE", date=d)["currencies"]
           for d in ("1995-06-01", "2024-06-01")}
    assert cur == {"1995-06-01": ["DEM"], "2024-06-01": ["EUR"]}
    r = call(impls, catalog, "Currency Reference", "Format Money", amount=1234.5, currency="EUR", locale="de_DE")
    assert r["formatted"].startswith("1.234,50")
    r = call(impls, catalog, "Currency Reference", "Currency Details", currency="JPY")
    assert r["decimal_digits"] == 0 and "JP" in r["used_in"]
    assert call(impls, catalog, "Locale Formatter", "Parse Localized Number", text="1.234,5",
                locale="de_DE")["value"] == 1234.5


def test_geography(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    r = call(impls, catalog, "Geo Distance Calculator", "Distance Between Cities", city_a="Paris", city_b="London")
    assert 340 < r["distance"] < 348
    miles = call(impls, catalog, "Geo Distance Calculator", "Distance Between Cities", city_a="Paris",
                 city_b="London", unit="mi")["distance"]
    assert miles == pytest.approx(r["distance"] / 1.609344, abs=0.1)
    sphere = call(impls, catalog, "Geo Distance Calculator", "Distance Between Coordinates", lat1=0, lon1=0, lat2=0,
                  lon2=90, method="great_circle")
    assert sphere["distance_km"] == pytest.approx(math.pi / 2 * 6371.0088, abs=1e-3)
    ellipsoid = call(impls, catalog, "Geo Distance Calculator", "Distance Between Coordinates", lat1=0, lon1=0,
                     lat2=0, lon2=90)
    assert ellipsoid["distance_km"] == pytest.approx(6378.137 * math.pi / 2, abs=1e-3)  # along the equator
    # destination then distance back: a round trip
    dest = call(impls, catalog, "Geo Distance Calculator", "Destination Point", latitude=40.0, longitude=-74.0,
                bearing=60, distance=1234.5)
    back = call(impls, catalog, "Geo Distance Calculator", "Distance Between Coordinates", lat1=40.0, lon1=-74.0,
                lat2=dest["latitude"], lon2=dest["longitude"])
    assert back["distance_km"] == pytest.approx(1234.5, abs=0.01)
    assert call(impls, catalog, "Coordinate Toolkit", "Geohash Encode", latitude=57.64911, longitude=10.40744,
                precision=11)["geohash"] == "u4pruydqqvj"
    dms = call(impls, catalog, "Coordinate Toolkit", "Decimal to DMS", latitude=-33.8688, longitude=151.2093)
    assert call(impls, catalog, "Coordinate Toolkit", "DMS to Decimal", dms=dms["latitude"])["decimal"] == (
        pytest.approx(-33.8688, abs=1e-5))
    with pytest.raises(ValueError, match="latitude"):
        call(impls, catalog, "Geo Distance Calculator", "Initial Bearing", lat1=91, lon1=0, lat2=0, lon2=0)
    with pytest.raises(ValueError, match="unknown city"):
        call(impls, catalog, "World Cities Database", "City Details", city="Atlantis", date="2024-01-01")
    assert call(impls, catalog, "World Cities Database", "City Details", city="São Paulo",
                date="2024-01-01")["country"] == "BR"
    assert call(impls, catalog, "World Cities Database", "City Details", city="Sao Paulo, Brazil",
                date="2024-01-01")["timezone"] == "America/Sao_Paulo"


def test_vincenty_matches_geopy() -> None:
    geopy_distance = pytest.importorskip("geopy.distance")
    from langgraph_anytool.catalog.builtin import _geodesy

    for a, b in (((48.8566, 2.3522), (51.5074, -0.1278)), ((-33.87, 151.21), (40.71, -74.01)),
                 ((64.1, -21.9), (-54.8, -68.3))):
        assert _geodesy.vincenty_inverse(*a, *b)[0] == pytest.approx(geopy_distance.geodesic(a, b).km, abs=1e-6)


def test_city_table_integrity() -> None:
    import zoneinfo

    import pycountry

    from langgraph_anytool.catalog.builtin.cities_data import CITIES

    assert len(CITIES) >= 300
    assert len({(r[0], r[1]) for r in CITIES}) == len(CITIES)
    for name, country, lat, lon, pop, tz in CITIES:
        assert name and pycountry.countries.get(alpha_2=country) is not None, name
        assert -90 <= lat <= 90 and -180 <= lon <= 180 and pop > 0, name
        zoneinfo.ZoneInfo(tz)


def test_math(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    def ev(expr: str, **kw: Any) -> Any:
        return call(impls, catalog, "Quick Calculator", "Evaluate Expression", expression=expr, **kw)["result"]

    assert ev("2^10") == 1024
    assert ev("(3 + 4) * 2 ** 5 - sqrt(16)") == 220
    assert ev("sin(30)", angle_unit="degrees") == pytest.approx(0.5)
    for bad in ("__import__('os')", "(1).__class__", "lambda: 1", "[1, 2]", "9 ** 9 ** 9", "1 / 0", "x + 1",
                "open('f')"):
        with pytest.raises(ValueError):
            ev(bad)
    data = [3.5, 9, 12.25, 4, 7]
    quick = call(impls, catalog, "Quick Calculator", "Average of Numbers", numbers=data)["mean"]
    stats = call(impls, catalog, "Descriptive Statistics", "Summary Statistics", data=data)["mean"]
    assert quick == stats == pytest.approx(sum(data) / len(data))
    for n in (2, 97, 360, 600851475143, 2**59 - 1, 2**31 - 1, 10**18 - 11):
        f = call(impls, catalog, "Number Theory Toolkit", "Prime Factorization", n=n)["factors"]
        assert math.prod(f) == n
        for p in set(f):
            assert call(impls, catalog, "Number Theory Toolkit", "Prime Check", n=p)["is_prime"]
    assert call(impls, catalog, "Number Theory Toolkit", "Prime Check", n=561)["is_prime"] is False  # Carmichael
    assert call(impls, catalog, "Fraction Calculator", "Fraction to Decimal", fraction="1/7")["decimal"] == (
        "0.(142857)")
    r = call(impls, catalog, "Fraction Calculator", "Fraction Arithmetic", a="1 1/2", operation="divide", b="3/4")
    assert r["fraction"] == "2"
    for n in (1, 4, 9, 14, 40, 90, 400, 1994, 2024, 3999):
        roman = call(impls, catalog, "Number Notation Converter", "To Roman Numerals", number=n)["roman"]
        assert call(impls, catalog, "Number Notation Converter", "From Roman Numerals", roman=roman)["number"] == n
    with pytest.raises(ValueError):
        call(impls, catalog, "Number Notation Converter", "From Roman Numerals", roman="IIII")
    r = call(impls, catalog, "Number Notation Converter", "Convert Number Base", number="ff", from_base=16,
             to_base=2)
    assert r["result"] == "11111111"
    assert call(impls, catalog, "Number Notation Converter", "Number to Words", number=-1015)["words"] == (
        "minus one thousand fifteen")


def test_algebra(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    a, b = [[2, 1, -1], [-3, -1, 2], [-2, 1, 2]], [8, -11, -3]
    x = call(impls, catalog, "Equation Solver", "Solve Linear System", coefficients=a, constants=b)["solution"]
    assert x == [2, 3, -1]
    singular = call(impls, catalog, "Equation Solver", "Solve Linear System", coefficients=[[1, 2], [2, 4]],
                    constants=[1, 2])
    assert singular["solvable"] is False
    assert call(impls, catalog, "Equation Solver", "Matrix Determinant", matrix=[[1, 2], [2, 4]])["determinant"] == 0
    r = call(impls, catalog, "Equation Solver", "Solve Quadratic Equation", a=1, b=0, c=1)
    assert r["root_type"] == "two complex" and sorted(r["roots"]) == ["0+1i", "0-1i"]
    r = call(impls, catalog, "Geometry Calculator", "Triangle from Sides", a=3, b=4, c=5)
    assert r["area"] == 6 and r["kind_by_angles"] == "right"
    with pytest.raises(ValueError, match="triangle inequality"):
        call(impls, catalog, "Geometry Calculator", "Triangle from Sides", a=1, b=2, c=5)


def test_statistics_and_finance(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    r = call(impls, catalog, "Descriptive Statistics", "Summary Statistics", data=[2, 4, 4, 4, 5, 5, 7, 9],
             sample=False)
    assert r["std_dev"] == 2 and r["modes"] == [4]
    r = call(impls, catalog, "Correlation and Regression", "Linear Regression", x=[1, 2, 3, 4], y=[3, 5, 7, 9],
             predict_at=10)
    assert (r["slope"], r["intercept"], r["prediction"]) == (2, 1, 21)
    q = call(impls, catalog, "Probability Calculator", "Normal Quantile", probability=0.975)["value"]
    assert q == pytest.approx(1.959964, abs=1e-6)
    r = call(impls, catalog, "Probability Calculator", "Binomial Probability", n=10, k=5, p=0.5)
    assert r["p_exactly"] == pytest.approx(252 / 1024)
    pay = call(impls, catalog, "Loan Calculator", "Loan Payment", principal=100000, annual_rate_percent=6,
               years=30)["payment"]
    assert pay == pytest.approx(599.55, abs=0.01)
    flows = [-1000, 300, 400, 500]
    irr = call(impls, catalog, "Investment Calculator", "Internal Rate of Return", cash_flows=flows)["irr_percent"]
    npv = call(impls, catalog, "Investment Calculator", "Net Present Value", rate_percent=irr, cash_flows=flows)
    assert npv["npv"] == pytest.approx(0, abs=0.01)


def test_text(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    r = call(impls, catalog, "Text Analyzer", "Word Count", text="One two three. Four five!\n\nSix.")
    assert (r["words"], r["sentences"], r["paragraphs"]) == (6, 3, 2)
    assert call(impls, catalog, "String Transformer", "Change Case", text="parseHTTPResponse code",
                case="snake")["result"] == "parse_http_response_code"
    assert call(impls, catalog, "String Transformer", "Slugify", text="Héllo, Wörld!")["slug"] == "hello-world"
    assert call(impls, catalog, "Text Similarity", "Levenshtein Distance", a="kitten", b="sitting")["distance"] == 3
    r = call(impls, catalog, "Regex Tester", "Regex Find All", pattern=r"(?P<y>\d{4})", text="1999 and 2024")
    assert [m["named_groups"]["y"] for m in r["matches"]] == ["1999", "2024"]
    with pytest.raises(ValueError, match="invalid regular expression"):
        call(impls, catalog, "Regex Tester", "Regex Find All", pattern="(", text="x")
    assert call(impls, catalog, "Regex Tester", "Validate Regex", pattern="(")["valid"] is False


def test_regex_timeout(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    import time

    start = time.monotonic()
    with pytest.raises(ValueError, match="longer than"):
        call(impls, catalog, "Regex Tester", "Regex Find All", pattern=r"(a|aa)+$", text="a" * 60 + "b")
    assert time.monotonic() - start < 15


def test_encodings(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    import random

    rng = random.Random(7)
    alphabet = "abcXYZ019 -_/?&=+%é€漢字🙂\n\t\"'<>"
    samples = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(30)]
    for s in samples:
        for url_safe in (False, True):
            enc = call(impls, catalog, "Base64 Toolkit", "Base64 Encode", text=s, url_safe=url_safe)["encoded"]
            assert call(impls, catalog, "Base64 Toolkit", "Base64 Decode", data=enc, url_safe=url_safe)["decoded"] == s
        for scheme in catalog.find_api("Multi Encoder", "Encode Text").param("scheme").enum:  # type: ignore[union-attr]
            if scheme == "punycode" and ("\n" in s or "." in s):
                continue
            enc = call(impls, catalog, "Multi Encoder", "Encode Text", text=s, scheme=scheme)["encoded"]
            dec = call(impls, catalog, "Multi Encoder", "Decode Text", data=enc, scheme=scheme)["decoded"]
            assert dec == s, (scheme, s)
        enc = call(impls, catalog, "URL Toolkit", "URL Encode", text=s)["encoded"]
        assert call(impls, catalog, "URL Toolkit", "URL Decode", text=enc)["decoded"] == s
    with pytest.raises(ValueError, match="Base64"):
        call(impls, catalog, "Base64 Toolkit", "Base64 Decode", data="not base64!")
    assert call(impls, catalog, "Hash Generator", "Hash Text", text="abc", algorithm="md5")["hex"] == (
        "900150983cd24fb0d6963f7d28e17f72")
    assert call(impls, catalog, "Hash Generator", "Checksum", text="123456789")["crc32_hex"] == "cbf43926"
    assert call(impls, catalog, "Color Converter", "Contrast Ratio", foreground="black",
                background="#fff")["ratio"] == 21
    with pytest.raises(KeyError):
        call(impls, catalog, "JSON Toolkit", "JSON Path Get", json_text='{"a": [1]}', path="a[3]")


# ------------------------------------------------------------------------------ the sandbox
def _no_sandbox_reason() -> str:
    import os

    from langgraph_anytool.catalog.builtin._sandbox import sandbox_status

    status = sandbox_status()
    return "" if status.available or os.environ.get("ANYTOOL_REQUIRE_SANDBOX") else status.detail


_NO_SANDBOX = _no_sandbox_reason()  # CI sets ANYTOOL_REQUIRE_SANDBOX=1: there these tests run (and fail without bwrap)
needs_sandbox = pytest.mark.skipif(bool(_NO_SANDBOX), reason=_NO_SANDBOX)


@needs_sandbox
def test_sandbox_runs_code_with_stdin(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    r = call(impls, catalog, "Python Sandbox", "Run Python Code", code="import sys\nprint(sys.stdin.read()[::-1])",
             stdin="abc")
    assert (r["stdout"], r["exit_code"], r["timed_out"]) == ("cba\n", 0, False)
    r = call(impls, catalog, "Python Sandbox", "Run Python Code", code="import os\nprint(sorted(os.environ))")
    assert "PATH" not in r["stdout"] and "HOME" not in r["stdout"]


@needs_sandbox
def test_sandbox_timeout_kills(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    r = call(impls, catalog, "Python Sandbox", "Run Python Code", code="import time\ntime.sleep(30)",
             timeout_seconds=1)
    assert r["timed_out"] is True and r["exit_code"] != 0 and r["duration_s"] < 10


@needs_sandbox
def test_sandbox_cpu_limit(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    r = call(impls, catalog, "Python Sandbox", "Run Python Code", code="while True:\n    pass", timeout_seconds=1)
    assert r["exit_code"] != 0 and (r["timed_out"] or r["signal"] == "SIGXCPU")


@needs_sandbox
def test_sandbox_memory_limit(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    r = call(impls, catalog, "Python Sandbox", "Run Python Code", code="b = bytearray(3 * 1024 ** 3)\nprint('got')")
    assert r["exit_code"] != 0 and "got" not in r["stdout"] and "MemoryError" in r["stderr"]


@needs_sandbox
def test_sandbox_blocks_network(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    with loopback_listener(3.0) as (port, accepted):
        code = (f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=2)\nprint('connected')")
        r = call(impls, catalog, "Python Sandbox", "Run Python Code", code=code)
        raw = call(impls, catalog, "Python Sandbox", "Run Python Code",
                   code=f"import _socket\ns = _socket.socket()\ns.connect(('127.0.0.1', {port}))\nprint('connected')")
    for run in (r, raw):
        assert run["exit_code"] != 0 and "connected" not in run["stdout"]
        assert "network access is disabled" in run["stderr"]
    assert accepted == []


@needs_sandbox
def test_sandbox_blocks_processes_and_ctypes(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    for code in ("import subprocess\nsubprocess.run(['true'])", "import os\nos.system('true')", "import ctypes"):
        r = call(impls, catalog, "Python Sandbox", "Run Python Code", code=code)
        assert r["exit_code"] != 0, code


@needs_sandbox
def test_sandbox_output_cap(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    r = call(impls, catalog, "Python Sandbox", "Run Python Code", code="print('x' * 100000)")
    assert r["stdout_truncated"] is True and len(r["stdout"]) <= 20000


@needs_sandbox
def test_sandbox_expression_and_tests(impls: dict[str, Callable[..., Any]], catalog: Catalog) -> None:
    r = call(impls, catalog, "Python Sandbox", "Evaluate Python Expression", expression="sorted({3, 1, 2})")
    assert (r["ok"], r["type"], r["value"]) == (True, "list", "[1, 2, 3]")
    with pytest.raises(ValueError, match="syntax"):
        call(impls, catalog, "Python Sandbox", "Evaluate Python Expression", expression="1)\nimport os\n(1")
    r = call(impls, catalog, "Python Sandbox", "Run Python Tests", code="def sq(x):\n    return x * x",
             tests=["assert sq(3) == 9", "assert sq(2) == 5, 'wrong'", "raise KeyError('k')"])
    assert (r["passed"], r["failed"]) == (1, 2)
    assert r["results"][1]["error"] == "AssertionError: wrong"
    r = call(impls, catalog, "Python Sandbox", "Check Python Syntax", code="x = (1,\n")
    assert r["valid"] is False and r["line"] >= 1


def test_no_eval_or_exec_in_package_code() -> None:
    from pathlib import Path

    import langgraph_anytool.catalog.builtin as pkg

    for path in Path(pkg.__file__).parent.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\b(eval|exec)\(", text), path.name
