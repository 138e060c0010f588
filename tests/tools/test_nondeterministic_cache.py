"""Issue 7 A13 / issue 11 §4: non-deterministic APIs are never cached; the CLI, the demo and Studio cache on disk."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.catalog.errors import CatalogError
from langgraph_anytool.catalog.parse import parse_tool
from langgraph_anytool.cli.app import main
from langgraph_anytool.tools.cache import ResponseCache
from langgraph_anytool.tools.cache_defaults import default_cache_path
from langgraph_anytool.tools.executors import LocalExecutor
from langgraph_anytool.tools.pipeline import ApiExecutor

CLOCK = "Date_Time/unix_time_converter/current_unix_timestamp"
PASSWORD = "Text_Utilities/password_and_id_generator/generate_password"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.builtin()


def test_builtin_flags_clock_random_and_sandbox_apis(catalog: Catalog) -> None:
    flagged = {a.id for a in catalog._apis.values() if not a.deterministic}
    assert {CLOCK, PASSWORD, "Date_Time/world_clock/current_time_in_zone",
            "Text_Utilities/password_and_id_generator/generate_uuid"} <= flagged
    units = [a for a in catalog._apis.values() if a.category == "Units_Conversion"]
    assert units and all(a.deterministic for a in units)
    assert len(flagged) < len(catalog) // 10  # only the few that depend on the clock or randomness


def test_a_cached_clock_call_is_fresh(catalog: Catalog) -> None:
    cache = ResponseCache.memory()
    pipe = ApiExecutor(catalog, default=LocalExecutor(_impls()), cache=cache)
    try:
        first = pipe.call(CLOCK, {})
        time.sleep(0.02)
        second = pipe.call(CLOCK, {})
        assert first.ok and second.ok
        assert not first.cached and not second.cached
        assert second.content["timestamp_ms"] > first.content["timestamp_ms"]
        assert len(cache) == 0
        deterministic = next(a.id for a in catalog._apis.values() if a.deterministic and not a.required_params)
        pipe.call(deterministic, {})
        again = pipe.call(deterministic, {})
        assert again.cached  # the cache itself works
    finally:
        pipe.close()


def test_generated_passwords_never_reach_the_disk(catalog: Catalog, tmp_path: Path) -> None:
    pipe = ApiExecutor(catalog, default=LocalExecutor(_impls()), cache=ResponseCache(tmp_path / "c.sqlite"))
    try:
        obs = pipe.call(PASSWORD, {"length": 24})
    finally:
        pipe.close()
    password = obs.content["password"]
    assert obs.ok and len(password) == 24
    for f in tmp_path.iterdir():
        assert password.encode() not in f.read_bytes(), f


def test_other_catalogs_declare_the_flag() -> None:
    doc = {"tool_name": "Dice", "tool_description": "d", "api_list": [
        {"name": "roll", "url": "/roll", "method": "GET", "deterministic": False},
        {"name": "faces", "url": "/faces", "method": "GET"}]}
    tool = parse_tool(doc, category="Games", source="dice.json")
    assert [a.deterministic for a in tool.apis] == [False, True]
    bad = {**doc, "api_list": [{"name": "roll", "url": "/roll", "deterministic": "no"}]}
    with pytest.raises(CatalogError, match="deterministic"):
        parse_tool(bad, category="Games", source="dice.json")


def test_openapi_extension_marks_an_operation(tmp_path: Path) -> None:
    spec = {"openapi": "3.0.0", "info": {"title": "Clock", "version": "1"}, "servers": [{"url": "https://c.example"}],
            "paths": {"/now": {"get": {"operationId": "now", "x-deterministic": False, "responses": {}}},
                      "/zones": {"get": {"operationId": "zones", "responses": {}}}}}
    path = tmp_path / "clock.json"
    path.write_text(json.dumps(spec))
    cat = Catalog.load(path)
    assert sorted((a.name, a.deterministic) for a in cat._apis.values()) == [("now", False), ("zones", True)]


def test_default_cache_path_and_switches(tmp_path: Path) -> None:
    env = {"ANYTOOL_CACHE_DIR": str(tmp_path)}
    path = default_cache_path("local", "abc123", environ=env)
    assert path == tmp_path / "local-abc123.sqlite"
    assert default_cache_path("local", "abc123", environ={**env, "ANYTOOL_CACHE": "off"}) is None
    assert default_cache_path("local", "abc123", enabled=False, environ=env) is None
    xdg = default_cache_path("http", "f", environ={"XDG_CACHE_HOME": str(tmp_path)})
    assert xdg == tmp_path / "langgraph-anytool" / "responses" / "http-f.sqlite"


def test_cli_run_caches_on_disk_unless_told_not_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ANYTOOL_CACHE_DIR", str(tmp_path / "off"))
    assert main(["run", "Convert 26.2 miles to kilometers", "--offline", "--no-cache"]) == 0
    assert not (tmp_path / "off").exists()
    monkeypatch.setenv("ANYTOOL_CACHE_DIR", str(tmp_path / "on"))
    assert main(["run", "Convert 26.2 miles to kilometers", "--offline"]) == 0
    files = list((tmp_path / "on").glob("*.sqlite"))  # one file per executor kind and catalog
    assert len(files) == 1
    with ResponseCache(files[0]) as cache:
        assert len(cache) >= 1
        assert all(r["api_id"] != CLOCK for r in cache.records())
    capsys.readouterr()


def _impls() -> dict[str, Callable[..., Any]]:
    from langgraph_anytool.catalog.builtin import builtin_implementations

    return builtin_implementations()
