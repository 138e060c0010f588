"""The catalog package: ToolBench loading, navigation, function names, fingerprints and error reporting."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.catalog import Catalog, CatalogError, CatalogLoadError, Category, UnknownNameError
from langgraph_anytool.catalog.naming import MAX_FUNCTION_NAME, is_valid_function_name, slugify
from langgraph_anytool.catalog.parse import parse_tool

TOOLBENCH = Path(__file__).resolve().parents[2].parent / "shared" / "toolbench"
FUNC_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _api(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": f"does {name}", "method": "GET",
            "required_parameters": [{"name": "q", "type": "STRING", "description": "query"}],
            "optional_parameters": [], **extra}


def _tool_doc(name: str, apis: list[dict[str, Any]], description: str = "") -> dict[str, Any]:
    return {"tool_name": name, "tool_description": description or f"about {name}", "api_list": apis}


def _catalog(spec: dict[str, list[dict[str, Any]]]) -> Catalog:
    """Categories → ToolBench tool documents, parsed the way the directory loader parses them."""
    cats = [Category(name=c, tools=tuple(parse_tool(d, category=c, source=f"test:{c}/{d['tool_name']}") for d in docs))
            for c, docs in spec.items()]
    return Catalog(cats, name="test")


def _write_tree(root: Path, files: dict[str, Any]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return root


def _assert_names_sound(cat: Catalog) -> list[str]:
    """Every function name is valid, unique and maps back to its API; returns the names."""
    names = [cat.function_name(a.id) for a in cat]
    assert len(set(names)) == len(names) == len(cat)
    for api, name in zip(cat, names, strict=True):
        assert FUNC_RE.match(name), name
        assert len(name) <= MAX_FUNCTION_NAME
        assert is_valid_function_name(name)
        assert cat.api_for_function(name) is api
    return names


# --------------------------------------------------------------------- ToolBench data
@pytest.fixture(scope="module")
def toolbench() -> Catalog:
    tools = TOOLBENCH / "tools"
    if not tools.is_dir():
        pytest.skip("../shared/toolbench is absent")
    return Catalog.from_toolbench(tools)


@pytest.mark.toolbench
def test_toolbench_counts(toolbench: Catalog) -> None:
    files = list((TOOLBENCH / "tools").glob("*/*.json"))
    assert len(toolbench.categories) == 47
    assert toolbench.num_tools == 814 == len(files)
    assert len(toolbench) == 2490
    assert len(toolbench.tools()) == 814
    assert sum(len(toolbench.tools(c)) for c in toolbench.categories) == 814
    # every API of every file is present, with its declared parameters
    total = 0
    for f in files[:60]:
        doc = json.loads(f.read_text(encoding="utf-8"))
        tool = toolbench.tool(f.parent.name, f.stem)
        assert tool.name == doc["tool_name"].strip()
        assert [a.name for a in tool.apis] == [a["name"].strip() for a in doc["api_list"]]
        total += len(doc["api_list"])
    assert total > 0


@pytest.mark.toolbench
def test_toolbench_cross_category_duplicates_are_distinct(toolbench: Catalog) -> None:
    counts = Counter(t.name for t in toolbench.tools())
    dupes = sorted(n for n, c in counts.items() if c > 1)
    assert dupes == sorted(["👋 Demo Project", "Currency Converter_v2"])
    for name in dupes:
        found = [t for t in toolbench.find_tools(name) if t.name == name]
        assert len(found) == counts[name]
        assert len({t.id for t in found}) == len(found)
        assert len({t.category for t in found}) == len(found)
        for t in found:
            assert toolbench.tool(t.category, name) is t
            for api in t.apis:
                assert toolbench.find_api(name, api.name, category=t.category) is api
                assert api.id.startswith(f"{t.category}/")


@pytest.mark.toolbench
def test_toolbench_function_names(toolbench: Catalog) -> None:
    names = _assert_names_sound(toolbench)
    # deterministic: a second load gives the same names and fingerprint
    again = Catalog.from_toolbench(TOOLBENCH / "tools")
    assert [again.function_name(a.id) for a in again] == names
    assert again.fingerprint() == toolbench.fingerprint()
    # ToolBench's `endswith` matching would resolve a suffix; we do not
    for name in names[:200]:
        if name[1:] not in set(names):
            with pytest.raises(UnknownNameError):
                toolbench.api_for_function(name[1:])


@pytest.mark.toolbench
def test_query_files_catalog() -> None:
    files = sorted((TOOLBENCH / "queries").glob("*.json"))
    if not files:
        pytest.skip("../shared/toolbench/queries is absent")
    cat = Catalog.from_query_files(files)
    triples: set[tuple[str, str, str]] = set()
    relevant: set[tuple[str, str]] = set()
    for f in files:
        for q in json.loads(f.read_text(encoding="utf-8")):
            triples.update((e["category_name"], e["tool_name"], e["api_name"]) for e in q["api_list"])
            relevant.update((t, a) for t, a in q["relevant APIs"])
    assert len(cat) == len(triples)
    assert set(cat.categories) == {c for c, _, _ in triples}
    assert {(a.category, a.tool_name, a.name) for a in cat} == {(c, t.strip(), a.strip()) for c, t, a in triples}
    for tool_name, api_name in relevant:
        assert cat.find_api(tool_name, api_name).name == api_name.strip()
    _assert_names_sound(cat)
    # the same tool gets the same id whichever ToolBench loader read it
    full = Catalog.from_toolbench(TOOLBENCH / "tools")
    shared = [a for a in cat if a.id in full]
    assert len(shared) >= 0.99 * len(cat)
    for a in shared:
        assert full.api(a.id).name == a.name


# --------------------------------------------------------------------- navigation
@pytest.fixture
def small() -> Catalog:
    return _catalog({
        "Weather": [_tool_doc("Open Weather", [_api("Current Weather"), _api("Forecast 5 Days")]),
                    _tool_doc("Air Quality", [_api("AQI by City")])],
        "Finance": [_tool_doc("Currency Converter_v2", [_api("Convert"), _api("Symbols")])],
    })


def test_navigation(small: Catalog) -> None:
    assert small.categories == ["Weather", "Finance"]
    assert len(small) == 5 and small.num_tools == 3
    assert [t.name for t in small.tools("Weather")] == ["Open Weather", "Air Quality"]
    assert len(small.tools()) == 3
    tool = small.tool("Weather", "Open Weather")
    assert tool.key == "open_weather" and tool.id == "Weather/open_weather"
    assert small.tool("weather", "  open   WEATHER ") is tool  # case and spacing insensitive
    assert small.tool("Weather", "open_weather") is tool  # by key
    assert small.category("weather").name == "Weather"
    api = small.find_api("Open Weather", "Forecast 5 Days")
    assert api.id == "Weather/open_weather/forecast_5_days"
    assert small.api(api.id) is api and api.id in small
    assert small.find_api("open_weather", "forecast_5_days", category="Weather") is api
    assert api.tool_name == "Open Weather" and api.category == "Weather"
    assert [p.name for p in api.required_params] == ["q"]
    details = api.details()
    assert details["api_name"] == "Forecast 5 Days" and details["required_parameters"][0]["name"] == "q"
    assert [t.id for t in small.find_tools("currency converter_v2")] == ["Finance/currency_converter_v2"]
    assert set(iter(small)) == {small.api(a.id) for a in small}


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda c: c.category("Sports"), "Sports"),
        (lambda c: c.tools("Sports"), "Sports"),
        (lambda c: c.tool("Weather", "Rain Radar"), "Rain Radar"),
        (lambda c: c.api("Weather/open_weather/nope"), "Weather/open_weather/nope"),
        (lambda c: c.find_api("Open Weather", "Tomorrow"), "Tomorrow"),
        (lambda c: c.find_api("Nope Tool", "Convert"), "Nope Tool"),
        (lambda c: c.find_api("Open Weather", "Convert", category="Finance"), "Open Weather"),
        (lambda c: c.api_for_function("current_weather_for_open"), "current_weather_for_open"),
        (lambda c: c.function_name("Weather/x/y"), "Weather/x/y"),
    ],
)
def test_unknown_names_raise(small: Catalog, call: Any, needle: str) -> None:
    with pytest.raises(UnknownNameError) as info:
        call(small)
    err = info.value
    assert isinstance(err, KeyError) and isinstance(err, CatalogError)
    assert needle in str(err)
    assert not str(err).startswith('"')  # not KeyError's quoted repr


def test_unknown_category_lists_known(small: Catalog) -> None:
    with pytest.raises(UnknownNameError, match=r"Finance.*Weather"):
        small.category("Sports")


# --------------------------------------------------------------------- function names
def test_function_names_hard_cases() -> None:
    long_head = "Retrieve the complete historical record of every transaction for an account "  # > 64 chars
    long_tail = " and return it grouped by merchant category code with totals per calendar month"
    emoji_a, emoji_b = "🚀🚀", "🌧️⛅"
    cat = _catalog({
        "Finance": [
            _tool_doc("Bank", [
                _api(long_head + "in USD"), _api(long_head + "in EUR"),  # share a long prefix
                _api("Version A" + long_tail), _api("Version B" + long_tail),  # share a long suffix
                _api(emoji_a), _api(emoji_b),  # emoji only
                _api("get-user"), _api("Get User"), _api("get_user!"),  # differ only in punctuation
                _api("111 numbers"),
            ]),
            _tool_doc("🏦", [_api("Balance")]),  # emoji-only tool name
            _tool_doc("T" * 80, [_api("A" * 80), _api("A" * 80 + "B")]),  # tool name alone is over 64
        ],
        # the same tool key and API names in another category
        "Banking": [_tool_doc("Bank", [_api(long_head + "in USD"), _api("get-user")])],
    })
    assert len(cat) == 15
    names = _assert_names_sound(cat)
    assert len(set(n[:64] for n in names)) == len(names)
    assert len(set(n[-20:] for n in names)) == len(names)  # no reliance on a shared tail either

    # every API is reachable by its display name, including the punctuation variants
    for api in cat:
        assert cat.find_api(api.tool_name, api.name, category=api.category) is api
    keys = [a.id.rsplit("/", 1)[1] for a in cat.tool("Finance", "Bank").apis]
    assert len(set(keys)) == len(keys)
    assert {k for k in keys if k.startswith("get_user")} == {"get_user", "get_user_2", "get_user_3"}
    assert cat.find_api("Bank", "111 numbers", category="Finance").id == "Finance/bank/get_111_numbers"
    # emoji-only names get distinct, valid keys
    emoji_ids = [cat.find_api("Bank", e, category="Finance").id for e in (emoji_a, emoji_b)]
    assert len(set(emoji_ids)) == 2
    assert cat.tool("Finance", "🏦").key != ""
    # same key in two categories: both kept, different function names, both reversible
    a1 = cat.find_api("Bank", "get-user", category="Finance")
    a2 = cat.find_api("Bank", "get-user", category="Banking")
    assert a1 is not a2
    assert cat.function_name(a1.id) != cat.function_name(a2.id)
    assert cat.api_for_function(cat.function_name(a2.id)) is a2


def test_slugify_is_total_and_safe() -> None:
    for text in ["Hello, World!", "Ünïcödé café", "🚀", "  ", "123", "a--b__c", "东京天气", "x" * 200]:
        slug = slugify(text)
        assert re.fullmatch(r"[a-z_][a-z0-9_]*", slug), (text, slug)
    assert slugify("🚀") != slugify("🌧")
    assert slugify("Get-User") == slugify("get user") == "get_user"
    assert slugify("111") == "get_111"


# --------------------------------------------------------------------- fingerprint
def _fp_spec(**changes: str) -> dict[str, list[dict[str, Any]]]:
    api = _api("Current Weather")
    api["description"] = changes.get("api_description", api["description"])
    api["required_parameters"][0]["description"] = changes.get("param_description", "query")
    return {"Weather": [_tool_doc(changes.get("tool", "Open Weather"), [api, _api(changes.get("api", "Forecast"))],
                                  description=changes.get("tool_description", "weather data"))]}


def test_fingerprint_stable_and_sensitive() -> None:
    base = _catalog(_fp_spec()).fingerprint()
    assert base == _catalog(_fp_spec()).fingerprint()
    assert re.fullmatch(r"[0-9a-f]{16}", base)
    for change in ({"api_description": "other"}, {"param_description": "city name"}, {"tool": "Open Weather 2"},
                   {"api": "Forecast 7"}, {"tool_description": "weather and climate data"}):
        assert _catalog(_fp_spec(**change)).fingerprint() != base, change


# --------------------------------------------------------------------- errors
def test_bad_files_all_reported(tmp_path: Path) -> None:
    good = _tool_doc("Fine", [_api("Ping")])
    root = _write_tree(tmp_path / "tools", {
        "Alpha/fine.json": good,
        "Alpha/broken.json": '{"tool_name": "Broken", "api_list": [',
        "Alpha/no_apis.json": {"tool_name": "No Apis"},
        "Beta/bad_type.json": _tool_doc("Bad Type", [
            {"name": "x", "required_parameters": [{"name": "p", "type": "COLOUR"}]}]),
        "Beta/no_name.json": _tool_doc("No Name", [
            _api("ok"), {"name": "y", "optional_parameters": [{"name": "a"}, {"type": "STRING"}]}]),
    })
    with pytest.raises(CatalogLoadError) as info:
        Catalog.from_toolbench(root)
    err = info.value
    assert len(err.errors) == 4
    text = str(err)
    assert "4 catalog file(s)" in text
    by_file = {Path(str(e.source)).name: e for e in err.errors}
    assert set(by_file) == {"broken.json", "no_apis.json", "bad_type.json", "no_name.json"}
    assert "invalid JSON at line 1" in str(by_file["broken.json"])
    assert by_file["no_apis.json"].field == "api_list"
    assert by_file["bad_type.json"].field == "api_list[0].required_parameters[0].type"
    assert "COLOUR" in str(by_file["bad_type.json"])
    assert by_file["no_name.json"].field == "api_list[1].optional_parameters[1].name"
    for e in err.errors:
        assert str(e.source) in text and (e.field is None or e.field in text)


def test_single_bad_file_is_plain_catalog_error(tmp_path: Path) -> None:
    root = _write_tree(tmp_path / "tools", {
        "Alpha/fine.json": _tool_doc("Fine", [_api("Ping")]),
        "Alpha/bad.json": _tool_doc("Bad", [{"name": "x", "required_parameters": [{"name": "p", "type": 5}]}]),
    })
    with pytest.raises(CatalogError) as info:
        Catalog.from_toolbench(root)
    err = info.value
    assert not isinstance(err, CatalogLoadError)
    assert err.source == str(root / "Alpha" / "bad.json")
    assert err.field == "api_list[0].required_parameters[0].type"
    assert str(root / "Alpha" / "bad.json") in str(err) and "api_list[0].required_parameters[0].type" in str(err)


def test_toolbench_dir_loads_types_and_defaults(tmp_path: Path) -> None:
    doc = _tool_doc("Typed", [{
        "name": "Search",
        "required_parameters": [{"name": "when", "type": "DATE (YYYY-MM-DD)", "default": "2024-01-01"}],
        "optional_parameters": [{"name": "n", "type": "NUMBER", "default": 5}, {"name": "mode", "type": "ENUM"},
                                {"name": "t", "type": "TIME (24-hour HH:MM)"}, {"name": "flag", "type": "boolean"}],
        "template_response": {"items": [{"id": "int", "_list_length": 2}]},
    }])
    cat = Catalog.load(_write_tree(tmp_path / "tools", {"Misc/typed.json": doc}))
    api = cat.find_api("Typed", "Search")
    assert [(p.name, p.type, p.required) for p in api.params] == [
        ("when", "date", True), ("n", "number", False), ("mode", "enum", False), ("t", "time", False),
        ("flag", "boolean", False)]
    assert api.param("n") is not None and api.param("n").default == 5  # type: ignore[union-attr]
    assert api.template_response == {"items": [{"id": "int", "_list_length": 2}]}


def test_load_missing_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(CatalogError, match="does not exist") as info:
        Catalog.load(missing)
    assert info.value.source == str(missing)
    with pytest.raises(CatalogError, match="does not exist"):
        Catalog.from_toolbench(missing)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CatalogError, match="not a catalog: a directory without"):
        Catalog.load(empty)


def test_duplicate_tool_key_in_a_category(tmp_path: Path) -> None:
    cat = Category(name="C", tools=(parse_tool(_tool_doc("Same", [_api("a")]), category="C", source="one"),
                                   parse_tool(_tool_doc("same!", [_api("b")]), category="C", source="two")))
    with pytest.raises(CatalogError, match="duplicate tool 'same'"):
        Catalog([cat])
