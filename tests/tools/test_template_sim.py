"""TemplateSimulatedExecutor: shape fidelity over the whole ToolBench catalog, determinism, plausible values."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.catalog.models import Api, Param
from langgraph_anytool.tools.executors.template import (
    TemplateSimulatedExecutor,
    parse_template,
    repair_truncated_json,
)
from langgraph_anytool.tools.observation import Status
from langgraph_anytool.tools.validation import validate_arguments

TOOLBENCH = Path(__file__).resolve().parents[2].parent / "shared" / "toolbench"
LIST_OF = re.compile(r"list of (\w+) with length (\d+)")
LEAF_TYPES: dict[str, Any] = {"str": str, "float": float, "bool": bool}


def check_leaf(kind: str, value: Any, where: str) -> None:
    if kind == "int":
        assert isinstance(value, int) and not isinstance(value, bool), where
    elif kind == "NoneType":
        assert value is None, where
    elif kind == "list":
        assert value == [], where
    elif kind == "dict":
        assert value == {}, where
    else:
        assert isinstance(value, LEAF_TYPES[kind]), (where, kind, value)


def check_shape(template: Any, value: Any, cap: int, where: str = "$") -> None:
    """`value` has exactly the structure `template` documents (ToolBench's template language)."""
    if isinstance(template, dict):
        assert isinstance(value, dict), where
        assert list(value) == [k for k in template if k != "_list_length"], where
        for k, v in value.items():
            check_shape(template[k], v, cap, f"{where}.{k}")
    elif isinstance(template, list):
        assert isinstance(value, list), where
        if len(template) == 1 and isinstance(template[0], str) and LIST_OF.fullmatch(template[0]):
            check_shape(template[0], value, cap, where)
            return
        expected: list[Any] = []
        for item in template:
            n = item.get("_list_length") if isinstance(item, dict) else None
            expected.extend([item] * (min(n, cap) if isinstance(n, int) else 1))
        assert len(value) == len(expected), (where, len(value), len(expected))
        for i, (t, v) in enumerate(zip(expected, value, strict=True)):
            check_shape(t, v, cap, f"{where}[{i}]")
    elif isinstance(template, str):
        m = LIST_OF.fullmatch(template)
        if template in ("str", "int", "float", "bool", "NoneType"):
            check_leaf(template, value, where)
        elif template == "empty list":
            assert value == [], where
        elif m:
            assert isinstance(value, list) and len(value) == min(int(m.group(2)), cap), where
            for i, v in enumerate(value):
                check_leaf(m.group(1), v, f"{where}[{i}]")
        elif template[:1] in ("{", "[") and parse_template(template) is not template:
            check_shape(parse_template(template), value, cap, where)
        else:
            assert value == template, where
    else:
        assert value == template, where


def sample_arguments(api: Api) -> dict[str, Any]:
    """The API's documented example values, validated (an empty call when they do not validate)."""
    given = {p.name: p.default for p in api.params if p.required and p.default not in (None, "")}
    checked = validate_arguments(api, given)
    return checked.arguments if checked.ok else {}


@pytest.fixture(scope="module")
def toolbench() -> Catalog:
    if not (TOOLBENCH / "tools").is_dir():
        pytest.skip("../shared/toolbench is not available")
    return Catalog.from_toolbench(TOOLBENCH / "tools")


@pytest.mark.toolbench
def test_every_toolbench_api_simulates_in_the_documented_shape(toolbench: Catalog) -> None:
    sim, again, other_seed = TemplateSimulatedExecutor(), TemplateSimulatedExecutor(), TemplateSimulatedExecutor(7)
    differs = templated = 0
    for api in toolbench:
        args = sample_arguments(api)
        out = sim.simulate(api, args)
        json.dumps(out, allow_nan=False)  # JSON-serialisable, no NaN
        template = parse_template(api.template_response)
        if template in (None, "", {}):
            assert out["simulated"] is True and "no response template" in out["note"] and out["arguments"] == args
            continue
        templated += 1
        check_shape(template, out, sim.max_list_length, api.id)
        assert again.simulate(api, args) == out, api.id  # deterministic across instances
        differs += other_seed.simulate(api, args) != out
    assert templated > 1500
    assert differs > 0.9 * templated  # the seed matters (templates of only literals/None cannot differ)


@pytest.mark.toolbench
def test_truncated_string_templates_are_repaired(toolbench: Catalog) -> None:
    texts = [a.template_response for a in toolbench if isinstance(a.template_response, str)]
    assert texts, "the catalog has string (truncated JSON) templates"
    for text in texts:
        parsed = parse_template(text)
        assert isinstance(parsed, dict) and parsed, text[:80]


def test_repair_keeps_complete_values_and_closes_containers() -> None:
    text = '{"a": "str", "b": [{"c": "int", "_list_length": 2}, {"d": 1}], "e": {"f": "float", "g": "bo'
    assert repair_truncated_json(text) == {"a": "str", "b": [{"c": "int", "_list_length": 2}, {"d": 1}],
                                           "e": {"f": "float"}}
    assert repair_truncated_json('{"n": 12, "m": 345') == {"n": 12}  # a trailing number may be cut short
    assert repair_truncated_json('{"k": [1, 2, {"x": ') == {"k": [1, 2, {}]}
    assert repair_truncated_json('{"key_only"') == {}
    assert repair_truncated_json('[{"a": "s\\"q"}, ') == [{"a": 's"q'}]
    with pytest.raises(ValueError):
        repair_truncated_json('"just a string')


WEATHER = Api(
    id="Weather/forecaster/daily",
    name="Daily forecast",
    tool_key="forecaster",
    tool_name="Forecaster",
    category="Weather",
    params=(Param("city", "string", required=True), Param("days", "integer"), Param("start", "date")),
    template_response={
        "city": "str", "days": "int", "forecast": [{"date": "str", "temp": "float", "_list_length": 3}],
        "source_url": "str", "station_id": "str", "updated_at": "str", "tags": ["list of str with length 2"],
        "alerts": "empty list", "latitude": "float", "country_code": "str",
    },
)


def test_values_are_plausible_and_echo_the_arguments() -> None:
    sim = TemplateSimulatedExecutor()
    out = sim.simulate(WEATHER, {"city": "Paris", "days": 3, "start": "2024-07-01"})
    assert out["city"] == "Paris" and out["days"] == 3
    assert len(out["forecast"]) == 3
    assert all(f["date"] >= "2024-07-01" and re.fullmatch(r"\d{4}-\d{2}-\d{2}", f["date"]) for f in out["forecast"])
    assert out["source_url"].startswith("https://example.com/")
    assert re.fullmatch(r"[a-z0-9]{12}", out["station_id"])
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", out["updated_at"])
    assert out["alerts"] == [] and len(out["tags"]) == 2
    assert -90 <= out["latitude"] <= 90
    assert re.fullmatch(r"[A-Z]{2}", out["country_code"])
    assert sim.simulate(WEATHER, {"city": "Lyon", "days": 3, "start": "2024-07-01"})["city"] == "Lyon"
    assert sim.simulate(WEATHER, {"days": 3, "start": "2024-07-01", "city": "Paris"}) == out  # key order irrelevant


async def test_executor_marks_output_simulated_and_never_raises() -> None:
    sim = TemplateSimulatedExecutor()
    obs = await sim.aexecute(WEATHER, {"city": "Oslo"})
    assert obs.status is Status.OK and obs.simulated and obs.content["city"] == "Oslo"
    bare = Api(id="A/b/c", name="c", tool_key="b", tool_name="B", category="A")
    obs = await sim.aexecute(bare, {"q": 1})
    assert obs.simulated and obs.content["simulated"] is True and obs.content["arguments"] == {"q": 1}
    results = await asyncio.gather(*(sim.aexecute(WEATHER, {"city": "Oslo"}) for _ in range(5)))
    assert all(r.content == results[0].content for r in results)


def test_creating_the_simulator_warns(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING"):
        TemplateSimulatedExecutor()
    assert any("synthetic" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    "wrong",
    [
        {"a": "x"},  # a key missing
        {"a": "x", "b": [{"c": 1}], "d": ["p", "q"], "e": None},  # a list one item short
        {"a": "x", "b": [{"c": 1}, {"c": "1"}], "d": ["p", "q"], "e": None},  # "int" leaf holding a string
        {"a": "x", "b": [{"c": 1}, {"c": 2}], "d": ["p"], "e": None},  # "list of str with length 2" with one
        {"a": "x", "b": [{"c": 1}, {"c": 2}], "d": ["p", "q"], "e": 0},  # NoneType leaf holding 0
    ],
)
def test_shape_checker_rejects_wrong_shapes(wrong: dict[str, Any]) -> None:
    template = {"a": "str", "b": [{"c": "int", "_list_length": 2}], "d": ["list of str with length 2"], "e": "NoneType"}
    check_shape(template, {"a": "x", "b": [{"c": 1}, {"c": 2}], "d": ["p", "q"], "e": None}, 1000)
    with pytest.raises(AssertionError):
        check_shape(template, wrong, 1000)
