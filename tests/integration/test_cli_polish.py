"""CLI polish: query files as catalogs, fail-fast execution checks, the offline-model label, --quiet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langgraph_anytool import Catalog
from langgraph_anytool.cli.app import main
from langgraph_anytool.cli.preflight import ExecutionError, check_execution
from langgraph_anytool.integrations.retriever import relevance

QUERIES = [{"query": "weather in Paris", "query_id": 1, "api_list": [
    {"category_name": "Weather", "tool_name": "Open Weather", "api_name": "Daily Forecast",
     "api_description": "Seven day forecast", "required_parameters": [{"name": "city", "type": "STRING",
                                                                       "description": "a city"}],
     "optional_parameters": [], "method": "GET"}], "relevant APIs": [["Open Weather", "Daily Forecast"]]}]


@pytest.fixture
def query_file(tmp_path: Path) -> Path:
    path = tmp_path / "G1_demo.json"
    path.write_text(json.dumps(QUERIES), encoding="utf-8")
    return path


def test_query_file_is_accepted_as_catalog(query_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cat = Catalog.load(query_file)
    assert cat.name == "queries" and [a.id for a in cat] == ["Weather/open_weather/daily_forecast"]
    assert main(["catalog", "--catalog", str(query_file)]) == 0
    assert "1 categories, 1 tools, 1 APIs" in capsys.readouterr().out


def test_urlless_catalog_fails_fast_under_auto(query_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cat = Catalog.load(query_file)
    with pytest.raises(ExecutionError, match="--execution template"):
        check_execution(cat, "auto")
    assert check_execution(cat, "template") == ""
    assert check_execution(Catalog.builtin(), "auto") == ""
    code = main(["run", "weather in Paris", "--catalog", str(query_file), "--offline"])
    err = capsys.readouterr().err
    assert code == 2 and "no URL for any of its 1 APIs" in err and "--execution llm" in err
    code = main(["run", "weather in Paris", "--catalog", str(query_file), "--offline", "--execution", "virtual"])
    assert code == 2 and "--virtual-url" in capsys.readouterr().err
    code = main(["run", "weather in Paris", "--catalog", str(query_file), "--offline", "--execution", "llm"])
    assert code == 2 and "needs a real chat model" in capsys.readouterr().err


def test_offline_run_is_labelled_and_quiet(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANYTOOL_MODEL", raising=False)
    main(["run", "How far is Paris from Berlin?", "--offline", "--quiet"])
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("model: OfflinePolicyModel (rule-based heuristic stand-in, NOT an LLM)")
    assert "[pool" not in out  # no progress lines
    assert "note: answers and token counts come from OfflinePolicyModel" in out
    main(["run", "How far is Paris from Berlin?", "--offline", "--json", "--quiet"])
    captured = capsys.readouterr()
    assert json.loads(captured.out)["model"].startswith("OfflinePolicyModel")
    assert "[pool" not in captured.err


def test_relevance_is_one_over_effective_rank() -> None:
    searcher = Catalog.builtin().searcher()
    w = searcher.weights
    first = (1 + w.whole) * (1 + w.tool) * w.bm25 / (w.rrf_k + 1)
    assert relevance(first, searcher) == 1.0
    second = (1 + w.whole) * (1 + w.tool) * w.bm25 / (w.rrf_k + 2)  # second everywhere
    assert relevance(second, searcher) == 0.5
    assert relevance(0.0, searcher) == 0.0
