"""Argument validation: coercion table, and the messages the model gets for each kind of problem."""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any

import pytest

from langgraph_anytool.catalog.models import Api, Param
from langgraph_anytool.tools.observation import Status
from langgraph_anytool.tools.validation import (
    invalid_arguments_message,
    invalid_arguments_observation,
    validate_arguments,
)

API = Api(
    id="Weather/forecaster/daily",
    name="Daily forecast",
    tool_key="forecaster",
    tool_name="Forecaster",
    category="Weather",
    params=(
        Param("city", "string", required=True),
        Param("days", "integer"),
        Param("lat", "number"),
        Param("metric", "boolean"),
        Param("units", "enum", enum=("celsius", "fahrenheit")),
        Param("level", "integer", enum=(1, 2, 3)),
        Param("start", "date"),
        Param("at", "time"),
        Param("fields", "array"),
        Param("filters", "object"),
    ),
)
NO_PARAMS = Api(id="Misc/clock/now", name="Now", tool_key="clock", tool_name="Clock", category="Misc")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"city": "Paris"}, {"city": "Paris"}),
        ('{"city": "Paris", "days": "3"}', {"city": "Paris", "days": 3}),
        ({"city": 75001}, {"city": "75001"}),
        ({"city": True}, {"city": "true"}),
        ({"city": "X", "days": 3.0}, {"city": "X", "days": 3}),
        ({"city": "X", "days": " 7 "}, {"city": "X", "days": 7}),
        ({"city": "X", "lat": "48.85"}, {"city": "X", "lat": 48.85}),
        ({"city": "X", "lat": "3"}, {"city": "X", "lat": 3}),
        ({"city": "X", "lat": 2}, {"city": "X", "lat": 2}),
        ({"city": "X", "metric": "TRUE"}, {"city": "X", "metric": True}),
        ({"city": "X", "metric": "false"}, {"city": "X", "metric": False}),
        ({"city": "X", "metric": 1}, {"city": "X", "metric": 1}),
        ({"city": "X", "metric": "0"}, {"city": "X", "metric": "0"}),
        ({"city": "X", "units": "Celsius"}, {"city": "X", "units": "celsius"}),
        ({"city": "X", "level": "2"}, {"city": "X", "level": 2}),
        ({"city": "X", "start": "2024-02-29"}, {"city": "X", "start": "2024-02-29"}),
        ({"city": "X", "start": dt.date(2024, 1, 5)}, {"city": "X", "start": "2024-01-05"}),
        ({"city": "X", "at": "09:30"}, {"city": "X", "at": "09:30"}),
        ({"city": "X", "at": "23:59:59"}, {"city": "X", "at": "23:59:59"}),
        ({"city": "X", "fields": ["a", "b"]}, {"city": "X", "fields": ["a", "b"]}),
        ({"city": "X", "fields": '["a", 1]'}, {"city": "X", "fields": ["a", 1]}),
        ({"city": "X", "filters": '{"k": [1, 2]}'}, {"city": "X", "filters": {"k": [1, 2]}}),
        ({"city": "X", "days": None}, {"city": "X"}),  # null on an optional parameter = not given
        ({"city": "X", "days": ""}, {"city": "X"}),  # so is "" for a non-string type
    ],
)
def test_valid_arguments_are_coerced_safely(given: Any, expected: dict[str, Any]) -> None:
    result = validate_arguments(API, given)
    assert result.ok, result.problems
    assert result.problems == []
    assert result.arguments == expected
    # the coerced value has the parameter's type (not just an equal value: 3 == 3.0, True == 1)
    assert [type(v) for v in result.arguments.values()] == [type(v) for v in expected.values()]


@pytest.mark.parametrize(
    ("given", "fragments"),
    [
        ({}, ["missing required parameter city (string, required)"]),
        ({"city": None}, ["city (string, required) is required but was null"]),
        ({"city": "X", "dayz": 3}, ["unknown parameter 'dayz'", "did you mean 'days'?"]),
        ({"city": "X", "CITY": "Y"}, ["unknown parameter 'CITY'", "did you mean 'city'?"]),
        ({"city": "X", "zzz": 1}, ["unknown parameter 'zzz' (parameters: city, days, lat"]),
        ({"city": "X", "days": "three"}, ["days (integer, optional)", "expected an integer, got the string 'three'"]),
        ({"city": "X", "days": 2.5}, ["expected an integer, got 2.5"]),
        ({"city": "X", "days": True}, ["expected an integer, got a boolean"]),
        ({"city": "X", "lat": "NaN"}, ["lat (number, optional)", "expected a number"]),
        ({"city": "X", "lat": float("nan")}, ["NaN and infinities are not allowed"]),
        ({"city": "X", "lat": math.inf}, ["NaN and infinities are not allowed"]),
        ({"city": "X", "filters": {"v": [1.0, float("inf")]}}, ["filters (object, optional)", "NaN and infinities"]),
        ({"city": ["Paris"]}, ["city (string, required)", "expected a string, got an array"]),
        ({"city": "X", "metric": "maybe"}, ["metric (boolean, optional)", "expected a boolean (true or false)"]),
        ({"city": "X", "units": "kelvin"}, ['one of ["celsius", "fahrenheit"]', '"kelvin" is not an allowed value']),
        ({"city": "X", "level": 4}, ["level (integer, optional; one of [1, 2, 3])", "4 is not an allowed value"]),
        ({"city": "X", "start": "15/06/2024"}, ["start (date YYYY-MM-DD, optional)", "expected a date YYYY-MM-DD"]),
        ({"city": "X", "start": "2023-02-30"}, ["'2023-02-30' is not a valid calendar date"]),
        ({"city": "X", "at": "25:00"}, ["at (time HH:MM or HH:MM:SS, optional)", "expected a time HH:MM"]),
        ({"city": "X", "fields": "a,b"}, ["fields (array, optional)", "expected an array (JSON list)"]),
        ({"city": "X", "fields": '{"a": 1}'}, ["expected an array, got a string holding an object"]),
        ({"city": "X", "filters": "[1]"}, ["expected an object, got a string holding an array"]),
        ({"city": "X", "filters": 5}, ["expected an object (JSON object), got a number 5"]),
        ({"city": "X", "filters": "{oops"}, ["expected an object, got a string that is not JSON"]),
        ("not json", ["arguments must be a JSON object; the string given is not valid JSON"]),
        ("[1, 2]", ["arguments must be a JSON object mapping parameter names to values, got an array"]),
        (42, ["arguments must be a JSON object mapping parameter names to values, got a number"]),
    ],
)
def test_each_problem_is_reported_with_what_to_fix(given: Any, fragments: list[str]) -> None:
    result = validate_arguments(API, given)
    assert not result.ok
    assert len(result.problems) == 1, result.problems
    for fragment in fragments:
        assert fragment in result.problems[0], (fragment, result.problems[0])


def test_several_problems_are_all_reported() -> None:
    result = validate_arguments(API, {"days": "x", "unit": "celsius"})
    assert not result.ok
    assert len(result.problems) == 3
    text = "\n".join(result.problems)
    assert "unknown parameter 'unit'; did you mean 'units'?" in text
    assert "days (integer, optional)" in text
    assert "missing required parameter city" in text


def test_no_argument_forms_for_an_api_without_parameters() -> None:
    empties: tuple[Any, ...] = (None, "", "  ", "{}", {})
    for empty in empties:
        result = validate_arguments(NO_PARAMS, empty)
        assert result.ok and result.arguments == {}
    bad = validate_arguments(NO_PARAMS, {"x": 1})
    assert not bad.ok
    assert "parameters: none (call it with {})" in bad.problems[0]


def test_invalid_observation_tells_the_model_everything() -> None:
    result = validate_arguments(API, {"days": "many", "units": "kelvin"})
    obs = invalid_arguments_observation(API, result)
    assert obs.status is Status.INVALID_ARGUMENTS
    assert obs.api_id == API.id
    assert obs.content is None
    msg = obs.error
    assert msg == invalid_arguments_message(API, result)
    assert msg.startswith("Invalid arguments for Forecaster / Daily forecast; nothing was sent.")
    for problem in result.problems:
        assert f"- {problem}" in msg
    assert "Required parameters: city." in msg
    assert "units (string, optional; one of [\"celsius\", \"fahrenheit\"])" in msg
    assert "start (date YYYY-MM-DD, optional)" in msg
    assert obs.meta["problems"] == result.problems
    # the model-facing rendering keeps the message intact
    assert json.loads(obs.for_model(10_000))["error"] == msg


def test_input_mapping_is_not_mutated() -> None:
    given = {"city": 1, "days": "2"}
    validate_arguments(API, given)
    assert given == {"city": 1, "days": "2"}


def test_long_enums_are_shortened_with_a_count_and_booleans_stay_strict() -> None:
    from langgraph_anytool.tools.validation import describe_param, validate_arguments

    many = Param("colour", "enum", enum=tuple(f"c{i}" for i in range(25)))
    text = describe_param(many)
    assert '"c19"' in text and '"c20"' not in text and "... 5 more" in text
    flag = Api(id="C/t/f", name="f", tool_key="t", tool_name="T", category="C", params=(Param("on", "boolean"),))
    for bad in (2, -1, "yes", 0.5):
        assert not validate_arguments(flag, {"on": bad}).ok, bad
    long = validate_arguments(flag, {"on": "x" * 100})
    assert not long.ok and "…" in long.problems[0] and "x" * 59 not in long.problems[0]
