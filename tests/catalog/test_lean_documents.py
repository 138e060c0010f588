"""Recipe "6-lean" (issue 37, round 3): an API's BM25 document no longer repeats its tool's description. The tool
level indexes that description and every API of the tool inherits half its tool's score, so the words of a tool's
description lift all its APIs alike, and among them an API ranks by its own text."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.documents import (
    DEFAULT_RECIPE,
    RECIPES,
    alike_recipes,
    api_document,
    tool_document,
)
from langgraph_anytool.catalog.search import CatalogSearcher

# A tool whose description speaks of tides (at length) although none of its APIs does, beside a tool whose one API
# is about tide times in its own words.
_TOOLS = {
    "sea_almanac": {"tool_name": "SeaAlmanac",
                    "tool_description": "Tide times, tide heights and tide tables: tide times for every coast.",
                    "api_list": [
                        {"name": "moonPhase", "description": "Phase of the moon on a date.", "method": "GET",
                         "required_parameters": [], "optional_parameters": []},
                        {"name": "sunrise", "description": "Sunrise and sunset for a place.", "method": "GET",
                         "required_parameters": [], "optional_parameters": []}]},
    "port_guide": {"tool_name": "PortGuide", "tool_description": "Information about ports and harbors.",
                   "api_list": [
                       {"name": "tideTable", "description": "High and low tide times for a harbor.", "method": "GET",
                        "required_parameters": [], "optional_parameters": []},
                       {"name": "portList", "description": "Every port of a country.", "method": "GET",
                        "required_parameters": [], "optional_parameters": []}]},
}


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    folder = tmp_path / "tools" / "Travel"
    folder.mkdir(parents=True)
    for key, doc in _TOOLS.items():
        (folder / f"{key}.json").write_text(json.dumps(doc), encoding="utf-8")
    return Catalog.from_toolbench(tmp_path / "tools")


def test_the_default_api_document_leaves_the_tool_description_to_the_tool_level(catalog: Catalog) -> None:
    """For every API: the default recipe's BM25 document holds the API's own fields and not its tool's description,
    which recipe 4-expanded repeated in each; the tool's own document still holds it."""
    assert DEFAULT_RECIPE is RECIPES["6-lean"]
    for category in catalog.categories:
        for tool in catalog.category(category).tools:
            assert tool.description in tool_document(tool)
            for api in tool.apis:
                lean = api_document(api, tool.description, DEFAULT_RECIPE)
                assert tool.description not in lean and api.description in lean
                assert tool.description in api_document(api, tool.description, RECIPES["4-expanded"])
                assert lean == api_document(api, tool.description, RECIPES["4-expanded"]).replace(
                    f" Tool: {tool.description}", "")


def test_an_api_ranks_by_its_own_text_among_apis_its_tool_lifts_alike(catalog: Catalog, tmp_path: Path) -> None:
    """"tide times": the API whose own description says it ranks first; the almanac's two APIs, which only their
    tool's description matches, get the same score (their tool's share). With 4-expanded the almanac's repeated
    tide words outranked it."""
    lean = CatalogSearcher(catalog, embeddings="none", index_dir=tmp_path / "lean", progress=False)
    hits = lean.search_apis("tide times", 4)
    assert hits[0].api == "tideTable", [(h.api, h.score) for h in hits]
    almanac = {h.api: h.score for h in hits if h.tool == "SeaAlmanac"}
    assert set(almanac) == {"moonPhase", "sunrise"} and almanac["moonPhase"] == almanac["sunrise"]
    old = CatalogSearcher(catalog, embeddings="none", index_dir=tmp_path / "old", progress=False,
                          documents="4-expanded")
    assert old.search_apis("tide times", 1)[0].api != "tideTable"  # the rule is what changed the ranking


def test_an_index_of_the_previous_default_is_rebuilt_with_one_line(catalog: Catalog, tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """A BM25 folder built with 4-expanded (the previous default) is rebuilt by a default searcher with one line
    naming both recipes, never read as this recipe's; the embedded texts are the same, so a dense folder of
    4-expanded (or 3) is kept."""
    index_dir = tmp_path / "index"
    CatalogSearcher(catalog, embeddings="none", index_dir=index_dir, progress=False, documents="4-expanded").build()
    with caplog.at_level(logging.WARNING, logger="langgraph_anytool.catalog"):
        new = CatalogSearcher(catalog, embeddings="none", index_dir=index_dir, progress=False)
        new.build()
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and "built with document recipe '4-expanded' and search now uses '6-lean'" in lines[0]
    assert not new.stats.bm25_loaded and new.search_apis("tide times", 1)[0].api == "tideTable"
    assert {"3", "4-expanded", "5-pseudo"} & alike_recipes(DEFAULT_RECIPE, "dense") == {"3", "4-expanded"}
    assert "4-expanded" not in alike_recipes(DEFAULT_RECIPE, "sparse")
    assert RECIPES["4-expanded"].sparse_key() == (("response_keys",),)  # older recipes' keys are unchanged
