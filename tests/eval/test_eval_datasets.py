"""Benchmark loaders: ToolBench groups, AnyToolBench (gt_api_list as a Python literal), the filtered ToolBench,
coverage, reference-mode API mapping and catalog subsampling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.catalog.errors import CatalogError
from langgraph_anytool.eval.datasets import (
    api_ids,
    coverage_report,
    filter_excluded,
    is_covered,
    load_anytoolbench,
    load_exclusion_list,
    load_queries,
    parse_gt_api_list,
    sample_catalog,
)

SHARED = Path(__file__).parents[2] / ".." / "shared"
needs_shared = pytest.mark.skipif(not (SHARED / "anytoolbench").is_dir() or not (SHARED / "toolbench").is_dir(),
                                  reason="../shared is absent")


def test_gt_api_list_is_parsed_as_a_literal_never_evaluated() -> None:
    refs = parse_gt_api_list("[{'category_name': 'Data', 'tool_name': 'T', 'api_name': 'a b'}]")
    assert refs == (("Data", "T", "a b"),)
    with pytest.raises(CatalogError, match="not a Python literal"):
        parse_gt_api_list("__import__('os').system('true')")
    with pytest.raises(CatalogError, match="must be a list"):
        parse_gt_api_list("{'tool_name': 'T'}")


def test_bad_query_files_name_the_place(tmp_path: Path) -> None:
    f = tmp_path / "g.json"
    f.write_text(json.dumps([{"query": "ok", "query_id": 1, "relevant APIs": [["T", "a"]]}, {"query_id": 2}]))
    with pytest.raises(CatalogError, match=r"\[1\]"):
        load_queries(f)
    f.write_text(json.dumps([{"query": "q", "query_id": 1, "relevant APIs": [["T"]]}]))
    with pytest.raises(CatalogError, match="relevant APIs"):
        load_queries(f)


def test_reference_mapping_and_coverage_on_the_builtin_catalog(tmp_path: Path) -> None:
    cat = Catalog.builtin()
    f = tmp_path / "b.json"
    f.write_text(json.dumps([
        {"query": "q1", "query_id": 1, "api_list": [{"tool_name": "Universal Unit Converter", "api_name": "Convert Units"},
                                                     {"tool_name": "Date Calculator", "api_name": "Day of Week"}],
         "relevant APIs": [["Universal Unit Converter", "Convert Units"]]},
        {"query": "q2", "query_id": 2, "api_list": [{"tool_name": "Nope", "api_name": "x"}],
         "relevant APIs": [["Nope", "x"]]}]))
    q1, q2 = load_queries(f)
    ids, missing = api_ids(cat, q1.api_list)
    assert ids == ["Units_Conversion/universal_unit_converter/convert_units", "Date_Time/date_calculator/day_of_week"]
    assert missing == []
    assert api_ids(cat, q2.api_list) == ([], [(None, "Nope", "x")])
    assert is_covered(cat, q1) and not is_covered(cat, q2)
    (cov,) = coverage_report(cat, [q1, q2])
    assert (cov.group, cov.queries, cov.uncovered, cov.missing_refs, cov.examples) == ("b", 2, 1, 1, ["2"])


def test_sample_catalog_is_seeded_and_uniform_over_apis() -> None:
    cat = Catalog.builtin()
    a, b, c = sample_catalog(cat, 50, seed=1), sample_catalog(cat, 50, seed=1), sample_catalog(cat, 50, seed=2)
    assert len(a) == 50 and sorted(x.id for x in a) == sorted(x.id for x in b) != sorted(x.id for x in c)
    assert {x.id for x in a} <= {x.id for x in cat}
    assert all(t.apis for t in a.tools())  # empty tools dropped
    assert sample_catalog(cat, 10_000) is cat


@needs_shared
def test_shared_benchmarks_match_their_documented_counts() -> None:
    atb = load_anytoolbench(SHARED / "anytoolbench" / "anytoolbench.json")
    assert len(atb) == 407 and all(q.relevant for q in atb) and atb[0].final_answer is not None
    excluded = load_exclusion_list(SHARED / "anytoolbench" / "unsolvable.json")
    assert len(excluded) == 626
    groups = sorted((SHARED / "toolbench" / "queries").glob("*.json"))
    dev = [q for g in groups for q in load_queries(g)]
    kept = [q for g in groups for q in filter_excluded(load_queries(g), excluded)]
    assert len(dev) == 519 and len(dev) - len(kept) == 225  # as the shared README states
    cat = Catalog.from_toolbench(SHARED / "toolbench" / "tools")
    assert sum(is_covered(cat, q) for q in atb) == 47
    assert all(c.uncovered == 0 for c in coverage_report(cat, dev))
