"""`anytool index train --tool-pairs` (issue 37, round 5): (query, relevant tool) pairs beside the API pairs, the
tool's text exactly as the dense index embeds it, never a tool the query is not relevant to, no false in-batch
negatives, deterministic for a seed; `--scale` and `--tool-pairs` recorded in the manifest and checked up front."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.search import CatalogSearcher
from langgraph_anytool.cli.app import main
from langgraph_anytool.eval import training
from langgraph_anytool.eval.training import (
    Example,
    TrainSettings,
    make_batches,
    plan_epochs,
    prepare_training_data,
    tool_doc_id,
    tool_examples,
    tool_texts,
)
from tests.tiny_encoder import write_tiny_encoder
from tests.toolbench_tree import write_toolbench_tools

# Two categories; "Flights" and "Hotels" share words with most queries, so BM25 mines other tools as negatives.
LAYOUT = {"Travel": {"Flights": ["search flights", "flight status", "airport list"],
                     "Hotels": ["hotel search", "hotel reviews"],
                     "Trains": ["train times", "train delays"]},
          "Money": {"Fx": ["convert currency", "flight cost in euros"],
                    "Stocks": ["stock quote", "stock news"]}}
QUERIES = [
    {"query_id": 1, "query": "Search flights to Rome. Then show the hotel reviews near the airport.",
     "relevant APIs": [["Flights", "search flights"], ["Hotels", "hotel reviews"]]},
    {"query_id": 2, "query": "What is the flight status and the airport list?",
     "relevant APIs": [["Flights", "flight status"], ["Flights", "airport list"]]},
    {"query_id": 3, "query": "Convert currency for my flight cost in euros.",
     "relevant APIs": [["Fx", "convert currency"]]},
    {"query_id": 4, "query": "Are there train delays? Give me the train times too.",
     "relevant APIs": [["Trains", "train delays"]]},
    {"query_id": 5, "query": "A stock quote and the stock news for my flight company.",
     "relevant APIs": [["Stocks", "stock quote"], ["Stocks", "stock news"]]},
    {"query_id": 6, "query": "Hotel search in Paris with reviews.", "relevant APIs": [["Hotels", "hotel search"]]},
]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("tool-pairs")
    write_toolbench_tools(base / "tools",
                          {c: {t: [(n, f"{n} for travellers.") for n in names] for t, names in tools.items()}
                           for c, tools in LAYOUT.items()},
                          tool_description=lambda tool: f"{tool} data for travellers and flight planners.")
    (base / "q.json").write_text(json.dumps(QUERIES), encoding="utf-8")
    catalog = Catalog.from_toolbench(base / "tools")
    data = prepare_training_data(catalog, [base / "q.json"], negative_depth=10)
    return {"base": base, "catalog": catalog, "data": data, "queries": base / "q.json"}


def _relevant_tools(catalog: Catalog, query: dict[str, Any]) -> set[str]:
    tools = {t.name: t for c in catalog.categories for t in catalog.category(c).tools}
    return {tool_doc_id(tools[t].category, tools[t].key) for t, _ in query["relevant APIs"]}


def test_tool_texts_are_the_dense_index_tool_documents(world: dict[str, Any]) -> None:
    """The text a tool pair trains on is, for every tool, the one the dense index embeds at its tool level."""
    catalog = world["catalog"]
    searcher = CatalogSearcher(catalog, embeddings="none", progress=False)
    embedded = dict(zip((tool_doc_id(t.category, t.key) for t in searcher._tools),
                        searcher._dense_documents("tools"), strict=True))
    assert tool_texts(catalog) == embedded and len(embedded) == catalog.num_tools


def test_tool_pairs_hold_only_relevant_tools(world: dict[str, Any]) -> None:
    """One pair per (query, relevant tool); its negatives never hold a tool relevant to the query; its relevant
    documents are the query's APIs and their tools; a multi-sentence query's tool pair carries a sentence of it."""
    catalog, data = world["catalog"], world["data"]
    pairs = tool_examples(data.examples)
    by_text = {q["query"]: q for q in QUERIES}
    assert sorted((p.query, p.api_id) for p in pairs) == sorted(
        (q["query"], t) for q in QUERIES for t in _relevant_tools(catalog, q))
    for p in pairs:
        tools = _relevant_tools(catalog, by_text[p.query])
        assert p.api_id in tools
        assert not set(p.negatives) & tools, p
        assert all(n.startswith(training.TOOL_DOC) for n in p.negatives)
        apis = {e.api_id for e in data.examples if e.query == p.query}
        assert p.relevant == frozenset(apis | tools)
    assert sum(bool(p.negatives) for p in pairs) >= len(pairs) - 1  # "train delays" retrieves only its own tool
    two = [p for p in pairs if p.query == QUERIES[0]["query"]]
    assert {p.sentence for p in two} == {"Search flights to Rome.",
                                         "Then show the hotel reviews near the airport."}


@pytest.mark.parametrize("per_pair", [1, 3])
@pytest.mark.parametrize("share", [0.5, 1.0])
def test_batches_with_tool_pairs_hold_no_false_negatives(world: dict[str, Any], share: float, per_pair: int) -> None:
    """Every epoch: all API pairs, a share of the tool pairs, each once; no batch holds two pairs of one query, nor
    a document (API, tool, or any of its hard negatives) relevant to another query of the batch."""
    data = world["data"]
    n_tools = len(tool_examples(data.examples))
    for seed in range(8):
        settings = TrainSettings(tool_pairs=share, epochs=3, batch_size=4, seed=seed,
                                 hard_negatives_per_pair=per_pair)
        examples, plans = plan_epochs(data.examples, settings)
        assert len(examples) == len(data.examples) + n_tools
        for batches, negs, _ in plans:
            flat = [i for b in batches for i in b]
            assert len(flat) == len(set(flat)) and set(range(len(data.examples))) <= set(flat)
            if share == 1.0:
                assert sorted(flat) == list(range(len(examples)))
            for batch in batches:
                assert len({examples[i].qhash for i in batch}) == len(batch)
                for i in batch:
                    assert len(set(negs.get(i, ()))) == len(negs.get(i, ())) <= per_pair
                    own = {examples[i].api_id, *negs.get(i, ())}
                    assert not own & examples[i].relevant - {examples[i].api_id}
                    for j in batch:
                        if i != j:
                            assert not own & examples[j].relevant, (seed, batch)


def test_plans_are_deterministic_and_unchanged_without_tool_pairs(world: dict[str, Any]) -> None:
    """The same seed gives the same plans; without tool pairs they are exactly the draws made before tool pairs
    existed (negatives, sentence anchors, then `make_batches`, epoch by epoch, with one generator)."""
    data = world["data"]
    with_tools = TrainSettings(tool_pairs=0.5, epochs=2, batch_size=4, seed=3)
    assert plan_epochs(data.examples, with_tools) == plan_epochs(data.examples, with_tools)
    other = TrainSettings(tool_pairs=0.5, epochs=2, batch_size=4, seed=4)
    assert plan_epochs(data.examples, with_tools)[1] != plan_epochs(data.examples, other)[1]
    plain = TrainSettings(epochs=2, batch_size=4, seed=3, tool_pairs=0.0)
    rng = random.Random(plain.seed)
    before = []
    for _ in range(plain.epochs):
        # one hard negative per pair, as a 1-tuple since several per pair can be drawn (`draw_negatives`)
        negs = {i: (training.draw_negative(ex, plain, rng),) for i, ex in enumerate(data.examples) if ex.negatives}
        by_sentence = {i for i, ex in enumerate(data.examples) if ex.sentence and rng.random() < plain.sentence_pairs}
        before.append((make_batches(data.examples, plain.batch_size, rng, negs), negs, by_sentence))
    assert plan_epochs(data.examples, plain) == (data.examples, before)


def test_tool_pairs_batch_apart_from_queries_they_are_relevant_to() -> None:
    """A tool pair never meets an API pair of another query relevant to that tool (the tool would be a false
    negative of it), whatever the shuffle."""
    pairs = [Example("q1", "h1", "T/a/x", frozenset({"T/a/x"}), negatives=("T/b/y",)),
             Example("q2", "h2", "T/a/z", frozenset({"T/a/z"}), negatives=("T/b/y",)),
             Example("q3", "h3", "T/b/y", frozenset({"T/b/y"}), negatives=("T/a/x",))]
    examples, plans = plan_epochs(pairs, TrainSettings(tool_pairs=1.0, epochs=20, batch_size=8, hard_negatives=False))
    tool_a = tool_doc_id("T", "a")
    assert [e.api_id for e in examples[3:]] == [tool_a, tool_a, tool_doc_id("T", "b")]
    for batches, _, _ in plans:
        for batch in batches:
            docs = {examples[i].api_id for i in batch}
            for i in batch:
                assert not (docs - {examples[i].api_id}) & examples[i].relevant, batch


def test_training_feeds_the_tool_text_and_the_manifest_records_it(world: dict[str, Any], tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A real (tiny) training run with `--tool-pairs 1 --scale 30`: the documents fed to the loss include every
    relevant tool's dense-index text, each beside a query relevant to it; the manifest records both settings and
    the tool-pair count."""
    for mod in ("torch", "sentence_transformers", "onnx", "onnxruntime"):
        pytest.importorskip(mod)
    from sentence_transformers import SentenceTransformer

    tiny = write_tiny_encoder(tmp_path / "tiny", seed=2)
    monkeypatch.setattr(training, "_load_base_model", lambda n: SentenceTransformer(str(tiny), device="cpu"))
    pending: list[list[str]] = []
    steps: list[list[list[str]]] = []  # each step's columns: anchors, positives[, hard negatives]
    real_features, real_mnrl = training._features, training._mnrl

    def record(model: Any, texts: list[str]) -> dict[str, Any]:
        pending.append(list(texts))
        return real_features(model, texts)

    def mnrl(model: Any, scale: float) -> Any:
        loss = real_mnrl(model, scale)
        assert scale == 30.0

        def step(features: Any, labels: Any) -> Any:
            steps.append(pending[:])
            pending.clear()
            return loss(features, labels)
        return step

    monkeypatch.setattr(training, "_features", record)
    monkeypatch.setattr(training, "_mnrl", mnrl)
    out = tmp_path / "model"
    rc = main(["index", "train", "--catalog", str(world["base"] / "tools"), "--queries", str(world["queries"]),
               "--out", str(out), "--epochs", "1", "--batch-size", "4", "--tool-pairs", "1", "--scale", "30",
               "--quiet", "--index-dir", str(tmp_path / "index")])
    assert rc == 0
    catalog = world["catalog"]
    texts = tool_texts(catalog)
    by_text = {q["query"]: q for q in QUERIES}
    sentence_of = {s: q for q in QUERIES for s in q["query"].replace("? ", "?|").replace(". ", ".|").split("|")}
    seen: set[tuple[str, str]] = set()
    for anchors, docs, *_ in steps:
        for anchor, doc in zip(anchors, docs, strict=True):
            tool = next((t for t, text in texts.items() if text == doc), None)
            if tool is not None:
                query = by_text.get(anchor) or sentence_of[anchor]
                assert tool in _relevant_tools(catalog, query)
                seen.add((query["query"], tool))
    assert seen == {(q["query"], t) for q in QUERIES for t in _relevant_tools(catalog, q)}
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["settings"]["tool_pairs"] == 1.0 and manifest["settings"]["scale"] == 30.0
    assert manifest["tool_pairs"] == len(tool_examples(world["data"].examples))


@pytest.mark.parametrize("args, flag", [(["--tool-pairs", "2"], "--tool-pairs"), (["--tool-pairs", "-0.1"], "--tool-pairs"),
                                        (["--tool-pairs", "nan"], "--tool-pairs"), (["--scale", "0"], "--scale"),
                                        (["--scale", "inf"], "--scale"), (["--scale", "5000"], "--scale")])
def test_bad_tool_pairs_or_scale_is_one_line(args: list[str], flag: str, world: dict[str, Any], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    def reached(*_: Any, **__: Any) -> Any:
        pytest.fail("training started with a bad setting")

    monkeypatch.setattr(training, "prepare_training_data", reached)
    monkeypatch.setattr(training, "fine_tune", reached)
    out = tmp_path / "model"
    rc = main(["index", "train", "--catalog", str(world["base"] / "tools"), "--queries", str(world["queries"]),
               "--out", str(out), "--quiet", *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("anytool: error:") and flag in err[0], err
    assert not out.exists()
