"""`anytool index train --extra-pairs / --pseudo-pairs / --held-out`: more training pairs, LLM-free (issue 37).

AnyToolBench entries whose ground-truth APIs are in the catalog become (query, API) pairs (the others are skipped
and counted); template pseudo-queries give seeded pairs; a training query equal to a held-out one is refused before
anything is trained. Hand-made catalog and AnyToolBench-format files only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.documents import pseudo_queries
from langgraph_anytool.catalog.errors import CatalogError
from langgraph_anytool.cli.app import main
from langgraph_anytool.eval import training
from langgraph_anytool.eval.retrieval import EvalQuery, TrainOverlapError
from tests.tiny_encoder import write_tiny_encoder

TOOLS = {
    "Weather": {"Sky Watch": ["Current Weather", "Hourly Forecast"], "Tide Table": ["High Tides"]},
    "Finance": {"Coin Rates": ["Exchange Rate", "Currency List"], "Stock Ticker": ["Quote"]},
}


def _write_catalog(root: Path) -> Path:
    for category, tools in TOOLS.items():
        folder = root / "tools" / category
        folder.mkdir(parents=True)
        for tool, apis in tools.items():
            doc = {"tool_name": tool, "tool_description": f"{tool} service.",
                   "api_list": [{"name": api, "description": f"{api} of {tool}.", "method": "GET",
                                 "required_parameters": [{"name": "city", "type": "STRING", "description": "a city"}],
                                 "optional_parameters": []} for api in apis]}
            (folder / f"{tool.lower().replace(' ', '_')}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root / "tools"


# AnyToolBench's format: gt_api_list a Python-literal string upstream (or a list), query_id a string
ENTRIES: list[dict[str, Any]] = [
    {"query": "What is the weather in Oslo right now, and the euro to krone rate?", "query_id": "1000001",
     "final_answer": "...", "gt_api_list": str([
         {"category_name": "Weather", "tool_name": "Sky Watch", "api_name": "Current Weather"},
         {"category_name": "Finance", "tool_name": "Coin Rates", "api_name": "Exchange Rate"}])},
    {"query": "When is high tide in Brest? Also book me a taxi.", "query_id": "1000002",
     "gt_api_list": [{"category_name": "Weather", "tool_name": "tide table", "api_name": "high tides"},  # case
                     {"category_name": "Transport", "tool_name": "Taxi Now", "api_name": "Book"}]},  # not in it
    {"query": "Order a pizza to my door.", "query_id": "1000003",
     "gt_api_list": "[{'category_name': 'Food', 'tool_name': 'Pizza Place', 'api_name': 'Order'}]"},
    {"query": "Stock quote for ACME, please.", "query_id": "1000004",  # a wrong category: found by tool name
     "gt_api_list": [{"category_name": "Data", "tool_name": "Stock Ticker", "api_name": "Quote"},
                     {"category_name": "Finance", "tool_name": "Stock Ticker", "api_name": "Dividends"}]},
]


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    tools = _write_catalog(tmp_path)
    atb = tmp_path / "anytoolbench.json"
    atb.write_text(json.dumps(ENTRIES), encoding="utf-8")
    train = tmp_path / "train.json"
    train.write_text(json.dumps([
        {"query_id": 1, "query": "Hourly forecast for Rome.", "relevant APIs": [["Sky Watch", "Hourly Forecast"]]},
        {"query_id": 2, "query": "Which currencies can you convert?", "relevant APIs": [["Coin Rates", "Currency List"]]},
    ]), encoding="utf-8")
    return {"base": tmp_path, "tools": tools, "atb": atb, "train": train}


def test_anytoolbench_pairs_in_the_catalog_are_read_the_rest_counted(world: dict[str, Path]) -> None:
    catalog = Catalog.from_toolbench(world["tools"])
    spec = f"anytoolbench:{world['atb']}"
    queries, record = training.load_extra_pairs(spec, catalog)
    by_id = {q.query_id: q for q in queries}
    assert list(by_id) == ["1000001", "1000002", "1000004"]  # the file's order; 1000003 has nothing in the catalog
    assert by_id["1000001"].relevant == ("Weather/sky_watch/current_weather", "Finance/coin_rates/exchange_rate")
    assert by_id["1000002"].relevant == ("Weather/tide_table/high_tides",)  # names matched as the loaders do
    assert by_id["1000002"].unmapped == (("Taxi Now", "Book"),)
    assert by_id["1000004"].relevant == ("Finance/stock_ticker/quote",)
    assert {q.group for q in queries} == {"AnyToolBench"}
    assert record | {"path": "", "sha256": ""} == {
        "spec": spec, "kind": "anytoolbench", "path": "", "sha256": "", "entries": 4, "used": 3, "skipped": 1,
        "api_refs": 7, "api_refs_not_in_catalog": 3, "pairs": 4}
    assert training.load_extra_pairs(spec, catalog) == (queries, record)  # deterministic


@pytest.mark.parametrize("entry, field", [
    ({"query": "x", "query_id": "9", "gt_api_list": "[{'tool_name': 'Sky Watch', "}, "[1].gt_api_list"),
    ({"query": "x", "query_id": "9", "gt_api_list": [{"tool_name": "Sky Watch"}]}, "[1].gt_api_list[0]"),
    ({"query_id": "9", "gt_api_list": []}, "[1]"),
])
def test_a_malformed_extra_pairs_file_is_one_line_naming_file_and_entry(
        entry: dict[str, Any], field: str, world: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    bad = world["base"] / "bad.json"
    bad.write_text(json.dumps([ENTRIES[0], entry]), encoding="utf-8")
    monkeypatch.setattr(training, "fine_tune", _never)
    out = world["base"] / "model"
    rc = main(["index", "train", "--catalog", str(world["tools"]), "--queries", str(world["train"]), "--out",
               str(out), "--quiet", "--extra-pairs", f"anytoolbench:{bad}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert str(bad) in err[0] and repr(field) in err[0], err
    assert not out.exists()


@pytest.mark.parametrize("spec", ["toolbench:x.json", "anytoolbench:", "no-kind"])
def test_an_unknown_extra_pairs_kind_is_refused(spec: str, world: dict[str, Path],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["index", "train", "--catalog", str(world["tools"]), "--queries", str(world["train"]), "--out",
               str(world["base"] / "model"), "--quiet", "--extra-pairs", spec])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "extra pairs" in err[0] and repr(spec) in err[0], err


def _never(*_: Any, **__: Any) -> Any:
    pytest.fail("training started")


@pytest.mark.parametrize("source", ["extra", "pseudo", "queries"])
def test_a_training_query_equal_to_a_held_out_one_is_refused_before_training(
        source: str, world: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Whatever brings the pair (AnyToolBench, a pseudo-query, the query files), a training text equal to a
    held-out query (up to whitespace) stops the run in one line before any search or training; nothing is written."""
    catalog = Catalog.from_toolbench(world["tools"])
    text = {"extra": ENTRIES[3]["query"], "pseudo": training.pseudo_pairs(catalog, 1, 0)[0].query,
            "queries": "Which currencies can you convert?"}[source]
    held = world["base"] / "held.json"
    held.write_text(json.dumps([{"query_id": 7, "query": "  " + text.replace(" ", "  "),
                                 "relevant APIs": [["Stock Ticker", "Quote"]]}]), encoding="utf-8")
    monkeypatch.setattr(training, "prepare_training_data", _never)
    monkeypatch.setattr(training, "fine_tune", _never)
    out = world["base"] / "model"
    extra = {"extra": ["--extra-pairs", f"anytoolbench:{world['atb']}"], "pseudo": ["--pseudo-pairs", "1"],
             "queries": []}[source]
    rc = main(["index", "train", "--catalog", str(world["tools"]), "--queries", str(world["train"]), "--out",
               str(out), "--quiet", "--held-out", str(held), *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "held-out" in err[0], err
    assert not out.exists()


def test_check_held_out_names_the_first_overlap() -> None:
    queries = [EvalQuery("g", "1", "alpha beta", ("a",)), EvalQuery("AnyToolBench", "77", "gamma  delta", ("b",))]
    training.check_held_out(queries, ["alpha", "delta gamma"])  # no equal text: nothing raised
    with pytest.raises(TrainOverlapError, match=r"1 training query equals a held-out query, first AnyToolBench#77"):
        training.check_held_out(queries, ["gamma delta"])


def test_pseudo_pairs_are_seeded_distinct_and_made_from_the_api(world: dict[str, Path]) -> None:
    catalog = Catalog.from_toolbench(world["tools"])
    first = training.pseudo_pairs(catalog, 4, 0)
    assert first == training.pseudo_pairs(catalog, 4, 0)
    assert len(first) == 4 and len({q.query_id for q in first}) == 4
    for q in first:
        assert q.relevant == (q.query_id,) and q.group == training.PSEUDO_GROUP
        assert q.query in pseudo_queries(catalog.api(q.query_id))
    others = [training.pseudo_pairs(catalog, 4, seed) for seed in range(1, 6)]
    assert any(o != first for o in others)
    assert len(training.pseudo_pairs(catalog, 100, 0)) == len(catalog)
    assert training.pseudo_pairs(catalog, 0, 0) == []


class _TinyModel:
    def save(self, path: str, create_model_card: bool = False) -> None:
        write_tiny_encoder(Path(path), seed=11)


def test_the_manifest_records_the_extra_pairs_and_eval_refuses_them(world: dict[str, Path],
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The pairs reach training (examples of all three sources), the manifest names the source with its counts, and
    the extra queries' hashes join the training ones: evaluating on them is refused like any training query."""
    for mod in ("onnx", "torch", "sentence_transformers"):
        pytest.importorskip(mod)
    seen: dict[str, Any] = {}

    def fake_fine_tune(data: training.TrainingData, *_: Any, **__: Any) -> _TinyModel:
        seen["groups"] = sorted({q.group for q in data.used_queries})
        seen["pairs"] = len(data.examples)
        return _TinyModel()

    monkeypatch.setattr(training, "fine_tune", fake_fine_tune)
    out = world["base"] / "model"
    rc = main(["index", "train", "--catalog", str(world["tools"]), "--queries", str(world["train"]), "--out",
               str(out), "--quiet", "--index-dir", str(world["base"] / "index"), "--pseudo-pairs", "2",
               "--extra-pairs", f"anytoolbench:{world['atb']}"])
    printed = capsys.readouterr()
    assert rc == 0, printed.err
    assert seen == {"groups": ["AnyToolBench", "pseudo-queries", "train"], "pairs": 2 + 4 + 2}
    assert "4 entries, 3 used (4 pairs), 1 skipped" in printed.out
    assert "2 read, 2 used, 0 skipped" in printed.out and "0 relevant pairs not in the catalog" in printed.out
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    (record,) = manifest["extra_pairs"]
    assert record["kind"] == "anytoolbench" and record["pairs"] == 4 and record["skipped"] == 1
    assert manifest["pseudo_pairs"] == 2 and manifest["settings"]["pseudo_pairs"] == 2
    assert manifest["unmapped_pairs"] == 0
    from langgraph_anytool.catalog.encoders import resolve_encoder
    from langgraph_anytool.eval.retrieval import check_train_overlap, load_queries

    encoder = resolve_encoder(f"trained:int8:{out}")
    atb = world["base"] / "atb-as-eval.json"
    atb.write_text(json.dumps([{"query_id": 1, "query": ENTRIES[0]["query"],
                                "relevant APIs": [["Sky Watch", "Current Weather"]]}]), encoding="utf-8")
    catalog = Catalog.from_toolbench(world["tools"])
    with pytest.raises(TrainOverlapError):
        check_train_overlap(encoder, load_queries([atb], catalog), allow=False)


def test_a_missing_extra_pairs_file_is_named(world: dict[str, Path]) -> None:
    catalog = Catalog.from_toolbench(world["tools"])
    with pytest.raises(CatalogError, match=r"missing\.json"):
        training.load_extra_pairs(f"anytoolbench:{world['base'] / 'missing.json'}", catalog)
