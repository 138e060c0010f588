"""The README's example request (issue 19, point 7): "How far is a marathon in kilometers?" returned `no_apis`
offline. The builtin unit converter now knows road-race distances (World Athletics: 42.195 km), its documentation
says so, and the offline stand-in reads "a <unit>" as one of that unit; the answer is pint's conversion."""

from __future__ import annotations

import pytest

from langgraph_anytool import Catalog, create_anytool_tool
from langgraph_anytool.catalog.builtin.units import convert_units
from langgraph_anytool.offline.arguments import extract_arguments
from langgraph_anytool.offline.mentions import mentions_of

QUERY = "How far is a marathon in kilometers?"


def test_race_distances_are_length_units() -> None:
    assert convert_units(1, "marathon", "km")["result"] == pytest.approx(42.195)
    assert convert_units(2, "half_marathon", "marathon")["result"] == pytest.approx(1.0)
    # 42195 m / 1609.344 m per mile = 26.2188 mi (hand computation)
    assert convert_units(1, "marathon", "mile")["result"] == pytest.approx(26.2188, abs=1e-4)


def test_a_unit_after_an_article_is_a_quantity_of_one() -> None:
    me = mentions_of(QUERY)
    assert [(n.text, n.value) for n in me.numbers] == [("a", 1)]
    assert [u.value for u in me.units] == ["marathon", "kilometer"]
    assert [n.value for n in mentions_of("Convert 3 marathons to miles.").numbers] == [3]  # a number wins
    api = Catalog.builtin().find_api("Universal Unit Converter", "Convert Units")
    assert extract_arguments(api, QUERY) == {"value": 1, "from_unit": "marathon", "to_unit": "kilometer"}


@pytest.mark.parametrize("embeddings", ["none", None])
def test_the_readme_request_is_answered_offline(embeddings: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if embeddings is None:
        pytest.importorskip("onnxruntime")
        monkeypatch.delenv("ANYTOOL_EMBEDDINGS", raising=False)  # the default search (minilm when installed)
    result = create_anytool_tool(Catalog.builtin(), "offline").invoke(
        {"type": "tool_call", "id": "c1", "name": "anytool", "args": {"request": QUERY}}).artifact
    assert result["status"] == "solved", result
    assert "42.195 km" in result["answer"]
    assert [(s["tool"], s["api"], s["status"]) for s in result["sources"]] == [
        ("Universal Unit Converter", "Convert Units", "ok")]
