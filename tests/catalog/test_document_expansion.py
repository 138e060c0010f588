"""Index-time document expansion (issue 37): each API's documents enriched from what the catalog knows, the same
catalog giving the same documents and index bytes, the recipe stored with the index, and an index built with
another recipe rebuilt with one line saying why (never mixed)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.documents import (
    DEFAULT_RECIPE,
    RECIPES,
    DocumentRecipe,
    alike_recipes,
    api_dense_text,
    api_dense_texts,
    api_document,
    pseudo_queries,
    recipe_named,
    response_keys,
)
from langgraph_anytool.catalog.fusion import FusionWeights
from langgraph_anytool.catalog.search import CatalogSearcher


def _write_catalog(root: Path, *, extra_tool: bool = False) -> Path:
    folder = root / "Travel"
    folder.mkdir(parents=True, exist_ok=True)
    tools = {
        "skyfare": {"tool_name": "SkyFare", "tool_description": "Cheap flight prices between airports worldwide.",
                    "api_list": [
                        {"name": "searchFlights", "description": "Search flights.", "method": "GET",
                         "required_parameters": [{"name": "origin_iata", "type": "STRING", "description": ""}],
                         "optional_parameters": [{"name": "departDate", "type": "DATE", "description": "day"}],
                         "template_response": {"itineraries": [{"carrierName": "str", "_list_length": 3}],
                                               "totalPrice": "float"}},
                        {"name": "airports", "description": "List airports.", "method": "GET",
                         "required_parameters": [], "optional_parameters": []}]},
        "stayfinder": {"tool_name": "StayFinder", "tool_description": "Hotel rooms and guest reviews.",
                       "api_list": [{"name": "hotelReviews", "description": "Reviews of a hotel.", "method": "GET",
                                     "required_parameters": [{"name": "hotel_id", "type": "NUMBER",
                                                              "description": ""}],
                                     "optional_parameters": [],
                                     "template_response": {"reviews": [{"guestName": "str", "rating": "int"}]}}]},
    }
    if extra_tool:
        tools["weatherly"] = {"tool_name": "Weatherly", "tool_description": "Forecasts.",
                              "api_list": [{"name": "forecast", "description": "Weather.", "method": "GET",
                                            "required_parameters": [], "optional_parameters": []}]}
    for key, doc in tools.items():
        (folder / f"{key}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return Catalog.from_toolbench(_write_catalog(tmp_path / "tools"))


def _api(catalog: Catalog, name: str) -> tuple[object, str]:
    for category in catalog.categories:
        for tool in catalog.category(category).tools:
            for api in tool.apis:
                if api.name == name:
                    return api, tool.description
    raise KeyError(name)


def test_expanded_documents_hold_what_the_catalog_knows(catalog: Catalog) -> None:
    """Recipe 4-expanded (and the default after it) adds the response template's keys (humanized, the template's `_` notes skipped) to the
    BM25 document; a recipe's dense sections add the tool's description, parameter names and response keys to the
    embedded text; recipe "3" (the documents before expansion) adds none of them."""
    api, tool_description = _api(catalog, "searchFlights")
    assert response_keys(api.template_response) == ["itineraries", "carrier name", "total price"]  # type: ignore[attr-defined]
    sparse = api_document(api, tool_description, RECIPES["4-expanded"])  # type: ignore[arg-type]
    assert sparse.endswith("Returns: itineraries, carrier name, total price")
    rich = DocumentRecipe("test", dense=("tool_description", "params", "response_keys"), tool_words=3)
    dense = api_dense_text(api, tool_description, rich)  # type: ignore[arg-type]
    assert dense == ("Sky Fare: search Flights. Search flights. Cheap flight prices Inputs: origin iata, depart date. "
                     "Returns: itineraries, carrier name, total price.")
    plain = RECIPES["3"]
    assert api_dense_text(api, tool_description, plain) == "Sky Fare: search Flights. Search flights."  # type: ignore[arg-type]
    assert api_dense_text(api, tool_description, DEFAULT_RECIPE) == api_dense_text(api, tool_description, plain)  # type: ignore[arg-type]
    assert "Returns" not in api_document(api, tool_description, plain)  # type: ignore[arg-type]
    bare, bare_description = _api(catalog, "airports")  # nothing to add: no parameters, no template
    assert api_dense_text(bare, bare_description, rich) == "Sky Fare: airports. List airports. Cheap flight prices"  # type: ignore[arg-type]
    assert api_document(bare, bare_description, RECIPES["4-expanded"]) == api_document(bare, bare_description, plain)  # type: ignore[arg-type]


def test_response_keys_are_bounded_and_never_repeat() -> None:
    deep: dict[str, object] = {"leaf": "str"}
    for level in range(50):
        deep = {f"level{level}": deep, "status": "str"}
    keys = response_keys(deep)
    assert len(keys) == len(set(keys)) <= 30 and keys[:2] == ["level 49", "level 48"]
    assert response_keys(None) == [] and response_keys("str") == [] and response_keys([{"a": 1}] * 1000) == ["a"]


def test_recipes_are_named_and_checked() -> None:
    assert recipe_named(None) is DEFAULT_RECIPE and recipe_named("3") is RECIPES["3"]
    with pytest.raises(ValueError, match=r"unknown document recipe 'v99'.*known: 3, "):
        recipe_named("v99")
    with pytest.raises(ValueError, match="unknown section"):
        DocumentRecipe("x", dense=("examples",))


def _folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_same_catalog_gives_the_same_documents_and_index_bytes(tmp_path: Path) -> None:
    """Expansion is a pure function of the catalog: two catalogs loaded from the same files give the same documents
    and byte-identical BM25 index folders; another catalog gives other documents."""
    first = Catalog.from_toolbench(_write_catalog(tmp_path / "a" / "tools"))
    second = Catalog.from_toolbench(_write_catalog(tmp_path / "b" / "tools"))
    a = CatalogSearcher(first, embeddings="none", index_dir=tmp_path / "ia", progress=False)
    b = CatalogSearcher(second, embeddings="none", index_dir=tmp_path / "ib", progress=False)
    for level in ("apis", "tools", "categories"):
        assert a._sparse_documents(level) == b._sparse_documents(level)
        assert a._dense_documents(level) == b._dense_documents(level)
    a.build()
    b.build()
    assert a.bm25_path().name == b.bm25_path().name
    assert _folder_bytes(a.bm25_path()) == _folder_bytes(b.bm25_path())
    meta = json.loads((a.bm25_path() / "meta.json").read_text(encoding="utf-8"))
    assert meta["documents"] == DEFAULT_RECIPE.id
    other = CatalogSearcher(Catalog.from_toolbench(_write_catalog(tmp_path / "c" / "tools", extra_tool=True)),
                            embeddings="none", index_dir=tmp_path / "ic", progress=False)
    assert other._sparse_documents("apis") != a._sparse_documents("apis")


def test_expansion_changes_the_ranking_where_only_the_template_knows(catalog: Catalog, tmp_path: Path) -> None:
    """A query about a response field ("rating") finds the API whose template returns it only with the
    expanded documents."""
    expanded = CatalogSearcher(catalog, embeddings="none", index_dir=tmp_path / "x", progress=False)
    plain = CatalogSearcher(catalog, embeddings="none", index_dir=tmp_path / "p", progress=False, documents="3")
    assert [h.api for h in expanded.search_apis("rating", 3)] == ["hotelReviews"]
    assert plain.search_apis("rating", 3) == []


def test_an_index_of_another_recipe_is_rebuilt_with_one_line(catalog: Catalog, tmp_path: Path,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    """An index folder written with recipe "3" (what every index built before recipes holds) is not loaded by a
    searcher of the default recipe: it is rebuilt, one warning line naming both recipes, and its meta.json then
    names the new recipe; loading it again says nothing."""
    index_dir = tmp_path / "index"
    old = CatalogSearcher(catalog, embeddings="none", index_dir=index_dir, progress=False, documents="3")
    old.build()
    path = old.bm25_path()
    assert json.loads((path / "meta.json").read_text(encoding="utf-8"))["documents"] == "3"
    with caplog.at_level(logging.WARNING, logger="langgraph_anytool.catalog.index_store"):
        new = CatalogSearcher(catalog, embeddings="none", index_dir=index_dir, progress=False)
        new.build()
    assert new.bm25_path() == path and not new.stats.bm25_loaded
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and "\n" not in lines[0], lines
    assert f"rebuilding the BM25 index {path}" in lines[0]
    assert f"built with document recipe '3' and search now uses '{DEFAULT_RECIPE.id}'" in lines[0]
    assert json.loads((path / "meta.json").read_text(encoding="utf-8"))["documents"] == DEFAULT_RECIPE.id
    assert [h.api for h in new.search_apis("rating", 3)] == ["hotelReviews"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="langgraph_anytool.catalog.index_store"):
        again = CatalogSearcher(catalog, embeddings="none", index_dir=index_dir, progress=False)
        again.build()
    assert again.stats.bm25_loaded and not [r for r in caplog.records if r.levelno >= logging.WARNING]


def _tiny_onnx(tmp_path: Path, name: str = "enc") -> object:
    for mod in ("onnxruntime", "onnx", "tokenizers", "safetensors", "faiss"):
        pytest.importorskip(mod)
    from langgraph_anytool.catalog.onnx_encoder import OnnxMiniLMEncoder
    from tests.tiny_encoder import write_tiny_encoder

    return OnnxMiniLMEncoder(model_path=write_tiny_encoder(tmp_path / name, onnx=True))


# The embedded part of a recipe changed (parameter names in the embedded text), the BM25 part not.
_DENSE_ONLY = DocumentRecipe("test-dense", sparse=RECIPES["4-expanded"].sparse, dense=("params",))


@pytest.mark.parametrize(("first", "second"), [("3", "4-expanded"), ("4-expanded", "3"), ("4-expanded", "6-lean")])
def test_a_recipe_changing_only_the_bm25_documents_keeps_the_dense_index(
        catalog: Catalog, tmp_path: Path, caplog: pytest.LogCaptureFixture, first: str, second: str) -> None:
    """Recipes "3" and "4-expanded" embed the same texts: switching between them rebuilds the BM25 index (one line)
    but loads the dense folder as it is (no re-embedding, its files untouched, no line about it)."""
    encoder = _tiny_onnx(tmp_path)
    index_dir = tmp_path / "index"
    old = CatalogSearcher(catalog, embeddings=encoder, index_dir=index_dir, progress=False, documents=first)  # type: ignore[arg-type]
    old.build()
    dense_path = old.index_path()
    assert dense_path is not None
    before = _folder_bytes(dense_path)
    with caplog.at_level(logging.WARNING, logger="langgraph_anytool.catalog"):
        new = CatalogSearcher(catalog, embeddings=encoder, index_dir=index_dir, progress=False, documents=second)  # type: ignore[arg-type]
        new.build()
    assert new.index_path() == dense_path and new.stats.dense_loaded and new.stats.embedded_documents == 0
    assert _folder_bytes(dense_path) == before
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and "rebuilding the BM25 index" in lines[0], lines
    assert not new.stats.bm25_loaded


def test_a_recipe_changing_the_embedded_text_rebuilds_the_dense_index_with_one_line(
        catalog: Catalog, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A recipe whose embedded text differs rebuilds the dense index, one warning line naming both recipes, and
    keeps the BM25 folder when its BM25 documents are the same; the rebuilt dense folder's bytes equal those of a
    fresh build (deterministic), and loading it again says nothing."""
    encoder = _tiny_onnx(tmp_path)
    index_dir = tmp_path / "index"
    CatalogSearcher(catalog, embeddings=encoder, index_dir=index_dir, progress=False,  # type: ignore[arg-type]
                    documents="4-expanded").build()
    with caplog.at_level(logging.WARNING, logger="langgraph_anytool.catalog"):
        new = CatalogSearcher(catalog, embeddings=encoder, index_dir=index_dir, progress=False,  # type: ignore[arg-type]
                              documents=_DENSE_ONLY)
        new.build()
    dense_path = new.index_path()
    assert dense_path is not None and not new.stats.dense_loaded and new.stats.bm25_loaded
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and "\n" not in lines[0], lines
    assert f"rebuilding the dense index {dense_path}" in lines[0]
    assert "built with document recipe '4-expanded' and search now uses 'test-dense'" in lines[0]
    fresh = CatalogSearcher(catalog, embeddings=encoder, index_dir=tmp_path / "fresh", progress=False,  # type: ignore[arg-type]
                            documents=_DENSE_ONLY)
    fresh.build()
    assert _folder_bytes(dense_path) == _folder_bytes(fresh.index_path())  # type: ignore[arg-type]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="langgraph_anytool.catalog"):
        again = CatalogSearcher(catalog, embeddings=encoder, index_dir=index_dir, progress=False,  # type: ignore[arg-type]
                                documents=_DENSE_ONLY)
        again.build()
    assert again.stats.dense_loaded and again.stats.bm25_loaded
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_recipes_alike_cover_only_their_part() -> None:
    """`alike_recipes` groups recipes by what one index holds: "3" and "4-expanded" share the embedded text, not
    the BM25 documents; a recipe changing the embedded text shares 4-expanded's BM25 documents only."""
    assert {"3", "4-expanded"} <= alike_recipes(RECIPES["3"], "dense")
    assert "4-expanded" not in alike_recipes(RECIPES["3"], "sparse")
    assert "test-dense" not in alike_recipes(RECIPES["3"], "dense")
    assert "4-expanded" in alike_recipes(_DENSE_ONLY, "sparse")
    assert RECIPES["3"].dense_key() != DocumentRecipe("x", dense=("params",)).dense_key()
    assert DocumentRecipe("x", tool_words=5).dense_key() == RECIPES["3"].dense_key()  # unused settings do not count


def test_a_new_encoder_beside_another_ones_index_says_why(catalog: Catalog, tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    """When the encoder changes (a new default, or another chosen), its dense index is built in its own folder with
    one line naming the encoder whose index is already there; the other folder is kept, never mixed."""
    for mod in ("onnxruntime", "onnx", "tokenizers", "safetensors", "faiss"):
        pytest.importorskip(mod)
    from langgraph_anytool.catalog.onnx_encoder import OnnxMiniLMEncoder
    from tests.tiny_encoder import write_tiny_encoder

    first = OnnxMiniLMEncoder(model_path=write_tiny_encoder(tmp_path / "a", onnx=True, seed=1))
    second = OnnxMiniLMEncoder(model_path=write_tiny_encoder(tmp_path / "b", onnx=True, seed=2))
    index_dir = tmp_path / "index"
    old = CatalogSearcher(catalog, embeddings=first, index_dir=index_dir, progress=False)
    old.build()
    old_bytes = _folder_bytes(old.index_path())  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="langgraph_anytool.catalog.search"):
        new = CatalogSearcher(catalog, embeddings=second, index_dir=index_dir, progress=False)
        new.build()
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1, lines
    assert f"building the dense index {new.index_path()} for encoder {second.model_id}" in lines[0]
    assert f"were built by {first.model_id} (kept, never mixed)" in lines[0]
    assert _folder_bytes(old.index_path()) == old_bytes  # type: ignore[arg-type]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="langgraph_anytool.catalog.search"):
        CatalogSearcher(catalog, embeddings=second, index_dir=index_dir, progress=False).build()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


_PSEUDO = RECIPES["5-pseudo"]  # the template pseudo-queries, measured in docs/benchmarks.md


def test_pseudo_queries_are_made_from_the_apis_own_fields(catalog: Catalog) -> None:
    """Template pseudo-queries: what the API does with its tool, what it returns for which inputs, what it takes,
    where it sits; an API without parameters or template gets only the templates it has fields for; the embedded
    texts are the API's text first, then its pseudo-queries, and a recipe without them embeds one text."""
    api, tool_description = _api(catalog, "searchFlights")
    assert pseudo_queries(api) == [  # type: ignore[arg-type]
        "Search flights with Sky Fare",
        "Get the itineraries, carrier name, total price for a origin iata and depart date.",
        "Search flights by origin iata, depart date.",
        "Sky Fare search flights (Travel)"]
    texts = api_dense_texts(api, tool_description, _PSEUDO)  # type: ignore[arg-type]
    assert texts == [api_dense_text(api, tool_description, _PSEUDO), *pseudo_queries(api)]  # type: ignore[arg-type]
    bare, _ = _api(catalog, "airports")
    assert pseudo_queries(bare) == ["List airports with Sky Fare", "Sky Fare airports (Travel)"]  # type: ignore[arg-type]
    assert api_dense_texts(api, tool_description, RECIPES["4-expanded"]) == [  # type: ignore[arg-type]
        api_dense_text(api, tool_description, RECIPES["4-expanded"])]  # type: ignore[arg-type]


def test_an_api_with_several_vectors_ranks_at_its_best_one(catalog: Catalog, tmp_path: Path) -> None:
    """With pseudo-queries the API level holds one vector per text; the dense ranking lists each API once, at the
    place of its best vector (max-pooling), and never more than `depth` APIs."""
    pytest.importorskip("faiss")
    from tests.catalog.test_search import FakeEmbeddings

    searcher = CatalogSearcher(catalog, embeddings=FakeEmbeddings(), index_dir=tmp_path / "i", progress=False,
                               documents=_PSEUDO)
    searcher.build()
    level = searcher._levels["apis"]
    n_texts = len(searcher._dense_documents("apis"))
    assert level.owners is not None and level.dense.ntotal == n_texts > level.size == 3
    # a query equal to one of hotelReviews' pseudo-queries and to none of its own text's words but "reviews"
    vector = np.asarray([FakeEmbeddings().embed_query("Get the reviews, guest name, rating for a hotel id.")],
                        dtype=np.float32)
    for depth in (1, 2, 3, 50):
        _, dense = level.ranked([["x"]], vector, FusionWeights(depth=depth))
        ranked = [searcher._apis[int(i)].name for i in dense[0]]
        assert ranked[0] == "hotelReviews" and len(ranked) == len(set(ranked)) == min(depth, 3), ranked
    assert [h.api for h in searcher.search_apis("guest name rating for a hotel", 1)] == ["hotelReviews"]


def test_the_same_catalog_gives_the_same_pseudo_query_index_bytes(tmp_path: Path) -> None:
    """Pseudo-queries are built at index time from the catalog alone: two catalogs loaded from the same files give
    byte-identical dense and BM25 folders with a real (tiny) encoder; the folder loads again as it is."""
    encoder = _tiny_onnx(tmp_path)
    folders = []
    for name in ("a", "b"):
        searcher = CatalogSearcher(Catalog.from_toolbench(_write_catalog(tmp_path / name / "tools")),
                                   embeddings=encoder, index_dir=tmp_path / f"i{name}", progress=False,  # type: ignore[arg-type]
                                   documents=_PSEUDO)
        searcher.build()
        assert searcher.stats.embedded_documents == len(searcher._dense_documents("apis")) + 2 + 1
        folders.append((searcher.index_path(), searcher.bm25_path()))
    (dense_a, bm25_a), (dense_b, bm25_b) = folders
    assert _folder_bytes(dense_a) == _folder_bytes(dense_b) and _folder_bytes(bm25_a) == _folder_bytes(bm25_b)  # type: ignore[arg-type]
    again = CatalogSearcher(Catalog.from_toolbench(tmp_path / "a" / "tools"), embeddings=encoder,  # type: ignore[arg-type]
                            index_dir=tmp_path / "ia", progress=False, documents=_PSEUDO)
    again.build()
    assert again.stats.dense_loaded and again._levels["apis"].owners is not None
