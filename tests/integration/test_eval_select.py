"""Which queries `anytool eval run` runs (issue 19, point 5): `--skip-uncovered` drops uncovered queries before
`--limit` keeps the first N, and a selection of zero queries is an error that says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langgraph_anytool.cli.app import main
from langgraph_anytool.eval.anytool.results import read_results

UNCOVERED = [f"What is the weather in city {i}?" for i in range(3)]  # no weather API in the builtin catalog
COVERED = ["Convert 26.2 miles to kilometers.", "Convert 5 kilograms to pounds.", "Convert 10 feet to meters."]


def _group(path: Path) -> Path:
    items = [{"query": q, "query_id": i, "api_list": [{"tool_name": "Weather Now", "api_name": "Current"}],
              "relevant APIs": [["Weather Now", "Current"]]} for i, q in enumerate(UNCOVERED)]
    items += [{"query": q, "query_id": 10 + i,
               "api_list": [{"tool_name": "Universal Unit Converter", "api_name": "Convert Units"}],
               "relevant APIs": [["Universal Unit Converter", "Convert Units"]]} for i, q in enumerate(COVERED)]
    path.write_text(json.dumps(items))
    return path


def test_limit_counts_covered_queries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries, out = _group(tmp_path / "G1_mixed.json"), tmp_path / "r.jsonl"
    code = main(["eval", "run", "--queries", str(queries), "--offline", "--skip-uncovered", "--limit", "2",
                 "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 0, err
    # the three uncovered queries come first in the file: before the fix --limit 2 kept them, and then all went
    assert sorted(r["query_id"] for r in read_results(out)) == ["10", "11"]
    # the file is read only as far as --limit needs: the 3 uncovered and the 2 covered queries, not the last one
    assert "3 of 5 queries have relevant APIs missing" in err and "skipped" in err
    assert "reading stopped at --limit" in err
    assert "2 queries | catalog builtin" in err


def test_selecting_no_query_is_an_error_that_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = [{"query": q, "query_id": i, "relevant APIs": [["Weather Now", "Current"]]} for i, q in enumerate(UNCOVERED)]
    queries, out = tmp_path / "G2_weather.json", tmp_path / "r.jsonl"
    queries.write_text(json.dumps(items))
    code = main(["eval", "run", "--queries", str(queries), "--offline", "--skip-uncovered", "--limit", "5",
                 "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert "no queries selected" in err and "3 of 3 queries have relevant APIs missing" in err
    assert not out.exists()
