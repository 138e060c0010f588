"""The `anytool` command line: catalog browsing, search, retrieval evaluation and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langgraph_anytool.cli.app import SUBCOMMANDS, build_parser, main

# category -> tool key -> (tool name, description, [(api, api description, [(param, required)])])
LAYOUT: dict[str, dict[str, tuple[str, str, list[tuple[str, str, list[tuple[str, bool]]]]]]] = {
    "Finance": {
        "currency_converter": ("Currency Converter", "Convert world currencies", [
            ("Convert", "Convert an amount between two currencies", [("from", True), ("to", True), ("amount", False)]),
            ("Symbols", "List currency symbols", []),
        ]),
        "demo_project": ("Demo Project", "A demo finance tool", [("Ping", "Check the service", [])]),
    },
    "Weather": {
        "open_weather": ("Open Weather", "Weather for any city", [
            ("Daily Forecast", "Seven day weather forecast for a city", [("city", True)]),
        ]),
    },
    "Other": {
        "demo_project": ("Demo Project", "A demo tool elsewhere", [("Ping", "Check the other service", [])]),
    },
}


@pytest.fixture(scope="module")
def tb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli") / "tools"
    for cat, tools in LAYOUT.items():
        (root / cat).mkdir(parents=True)
        for key, (name, desc, apis) in tools.items():
            doc = {"tool_name": name, "tool_description": desc, "api_list": [
                {"name": a, "description": d, "method": "GET",
                 "required_parameters": [{"name": p, "type": "STRING", "description": f"{p} value"}
                                         for p, req in params if req],
                 "optional_parameters": [{"name": p, "type": "NUMBER", "description": ""}
                                         for p, req in params if not req]} for a, d, params in apis]}
            (root / cat / f"{key}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


@pytest.fixture(autouse=True)
def _bm25_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")
    monkeypatch.setenv("ANYTOOL_INDEX_DIR", str(tmp_path / "index"))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("anytool: error: ")
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0]


# ---------------------------------------------------------------- catalog
def test_catalog_counts(tb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "catalog", "--catalog", str(tb))
    assert code == 0
    assert out.splitlines()[0] == "catalog tools: 3 categories, 4 tools, 5 APIs"
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[4:]}
    assert rows == {"Finance": ["2", "3"], "Other": ["1", "1"], "Weather": ["1", "1"]}


def test_catalog_counts_json(tb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "catalog", "--catalog", str(tb), "--json")
    data = json.loads(out)
    assert code == 0 and (data["categories"], data["tools"], data["apis"]) == (3, 4, 5)
    assert {c["category"]: c["apis"] for c in data["per_category"]} == {"Finance": 3, "Other": 1, "Weather": 1}


def test_catalog_category(tb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "catalog", "--catalog", str(tb), "--category", "finance")
    assert code == 0
    assert out.startswith("category Finance: 2 tools, 3 APIs")
    assert "Currency Converter" in out and "Convert world currencies" in out and "Demo Project" in out
    code, out, _ = run(capsys, "catalog", "--catalog", str(tb), "--category", "Finance", "--json")
    data = json.loads(out)
    assert [(t["tool"], t["apis"]) for t in data["tools"]] == [("Currency Converter", 2), ("Demo Project", 1)]


def test_catalog_tool(tb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "catalog", "--catalog", str(tb), "--tool", "Currency Converter")
    assert code == 0
    assert out.startswith("Currency Converter  [Finance/currency_converter]  2 APIs")
    assert "- Convert  (GET, function convert_for_currency_converter)" in out
    assert "· from (string, required): from value" in out
    assert "· amount (number, optional)" in out
    code, out, _ = run(capsys, "catalog", "--catalog", str(tb), "--tool", "Demo Project", "--category", "Other", "--json")
    data = json.loads(out)
    assert data["category"] == "Other" and [a["api_name"] for a in data["apis"]] == ["Ping"]
    assert data["apis"][0]["api_id"] == "Other/demo_project/ping"


def test_catalog_errors(tb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert_one_line_error(*run(capsys, "catalog", "--catalog", str(tmp_path / "nope"))[::2], "does not exist")
    assert_one_line_error(*run(capsys, "catalog", "--catalog", str(tb), "--category", "Nope")[::2],
                          "unknown category 'Nope'")
    assert_one_line_error(*run(capsys, "catalog", "--catalog", str(tb), "--tool", "Nope")[::2], "unknown tool 'Nope'")
    assert_one_line_error(*run(capsys, "catalog", "--catalog", str(tb), "--category", "Weather", "--tool", "Nope")[::2],
                          "no tool 'Nope' in category 'Weather'")
    assert_one_line_error(*run(capsys, "catalog", "--catalog", str(tb), "--tool", "Demo Project")[::2],
                          "several categories (Finance, Other)", "--category")


def test_catalog_builtin(capsys: pytest.CaptureFixture[str]) -> None:
    from langgraph_anytool.catalog import Catalog

    cat = Catalog.builtin()
    code, out, _ = run(capsys, "catalog")
    assert code == 0
    assert out.splitlines()[0] == f"catalog builtin: {len(cat.categories)} categories, {cat.num_tools} tools, {len(cat)} APIs"


# ---------------------------------------------------------------- search
def test_search_table_and_json(tb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "search", "weather forecast for Paris", "--catalog", str(tb), "--k", "2")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["rank", "relevance", "api", "tool", "category"]
    assert lines[2].split()[2:] == ["Daily", "Forecast", "Open", "Weather", "Weather"]
    assert 0 < float(lines[2].split()[1]) <= 1
    assert len(lines) <= 6 and lines[-1].startswith("relevance: 1 / effective rank")
    code, out, _ = run(capsys, "search", "convert currencies", "--catalog", str(tb), "--json", "--embeddings", "none")
    hits = json.loads(out)
    assert code == 0 and hits[0]["api"] == "Convert" and hits[0]["api_id"] == "Finance/currency_converter/convert"
    assert {"category", "tool", "api", "api_id", "score", "tool_key", "function_name", "rank", "relevance"} <= set(hits[0])
    assert [h["rank"] for h in hits] == list(range(1, len(hits) + 1))
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_search_errors(tb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert_one_line_error(*run(capsys, "search", "  ", "--catalog", str(tb))[::2], "the query is empty")
    assert_one_line_error(*run(capsys, "search", "x", "--catalog", str(tmp_path / "missing"))[::2], "does not exist")
    assert_one_line_error(*run(capsys, "search", "x", "--catalog", str(tb), "--embeddings", "word2vec")[::2],
                          "unknown embeddings spec")
    code, _, err = run(capsys, "search", "x", "--catalog", str(tb), "--k", "0")
    assert code == 2 and "must be positive" in err


def test_search_no_match(tb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "search", "zzzqqq", "--catalog", str(tb))
    assert code == 0 and out.strip() == "no matching API"


# ---------------------------------------------------------------- eval retrieval
def test_eval_retrieval(tb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qfile = tmp_path / "G9_demo.json"
    qfile.write_text(json.dumps([
        {"query_id": 1, "query": "seven day weather forecast", "relevant APIs": [["Open Weather", "Daily Forecast"]]},
        {"query_id": 2, "query": "convert an amount of currency", "relevant APIs": [["Currency Converter", "Convert"],
                                                                                   ["Gone", "Missing"]]},
    ]), encoding="utf-8")
    code, out, _ = run(capsys, "eval", "retrieval", "--catalog", str(tb), "--queries", str(qfile))
    assert code == 0
    lines = out.splitlines()
    head = next(line for line in lines if line.startswith("group"))
    assert head.split() == ["group", "queries", "Recall@5", "Recall@10", "Recall@64", "NDCG@5", "NDCG@10", "unmapped"]
    row = next(line for line in lines if line.startswith("G9_demo")).split()
    assert row == ["G9_demo", "2", "100.0", "100.0", "100.0", "100.0", "100.0", "1"]
    assert "none (BM25 only)" in out
    code, out, _ = run(capsys, "eval", "retrieval", "--catalog", str(tb), "--queries", str(qfile), "--k", "1", "--json")
    data = json.loads(out)
    assert data["metrics"] == ["Recall@1", "NDCG@1"]
    assert data["overall"]["metrics"] == {"Recall@1": 1.0, "NDCG@1": 1.0}
    assert data["overall"]["unmapped_pairs"] == 1


def test_eval_errors(tb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert_one_line_error(*run(capsys, "eval", "retrieval", "--catalog", str(tb),
                               "--queries", str(tmp_path / "none.json"))[::2], "query file does not exist")
    code, _, err = run(capsys, "eval", "retrieval", "--catalog", str(tb))
    assert code == 2 and "--queries" in err
    code, _, err = run(capsys, "eval")
    assert code == 2


# ---------------------------------------------------------------- structure
def test_subcommand_table_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert [c.name for c in SUBCOMMANDS] == ["run", "demo", "catalog", "search", "index", "eval", "report", "serve"]
    assert "catalog" in build_parser().format_help()
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "search" in out
    code, _, err = run(capsys)
    assert code == 2 and "COMMAND" in err
