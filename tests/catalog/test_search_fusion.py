"""Fusion over the candidates only: the same scores and rankings as the formula over the whole catalog."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.dense_index import build_dense_index, nearest, top_indices
from langgraph_anytool.catalog.search import CatalogSearcher, FusionWeights

from .test_search import FakeEmbeddings

QUERIES = [
    "Convert 100 dollars to euros. Then tell me the weather in Paris tomorrow.",
    "I need a random joke, and the definition of the word serendipity.",
    "What time is it in Tokyo? Also compute the square root of 2.",
    "Translate hello into French.",
    "Encode this text in base64 and hash it with sha256. Then count its words.",
    "Find the distance between two coordinates. Convert 5 miles to kilometers. Is 97 a prime number?",
    "zzz qqq",  # no word any document has: nothing but the dense half ranks anything
]


def _max_per_group(values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    out = np.zeros((values.shape[0], len(sizes)), dtype=np.float32)
    start = 0
    for g, size in enumerate(sizes):
        if size:
            out[:, g] = values[:, start:start + size].max(axis=1)
        start += size
    return out


def _whole_catalog(s: CatalogSearcher, query: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """API, tool and category scores by the formula of `search`'s docstring over every API, tool and category."""
    w = s.weights
    tokens, vectors = s._query_parts(query)
    per_level, best = {}, {}
    for name, level in s._levels.items():
        sparse, dense = level.components(tokens, vectors, w)
        per_level[name] = w.bm25 * sparse + w.dense * dense
        best[name] = w.bm25 * sparse.max(axis=1) + w.dense * dense.max(axis=1)  # its retrievers' firsts
    tool_sizes = np.array([len(t.apis) for t in s._tools])
    cat_sizes = np.array([len(c.tools) for c in s._categories])
    api_tool = np.repeat(np.arange(len(tool_sizes)), tool_sizes)
    api_total = per_level["apis"] + w.tool * per_level["tools"][:, api_tool]
    tool_total = per_level["tools"] + _max_per_group(per_level["apis"], tool_sizes)
    cat_total = per_level["categories"] + _max_per_group(tool_total, cat_sizes)
    api_scores = s._combine_parts(api_total, w)
    if w.method == "zscore":  # scaled by the score of an API first everywhere, its tool first too
        top = s._combine_parts((best["apis"] + w.tool * best["tools"])[:, None], w)[0]
        api_scores = (api_scores / top).astype(np.float32)
    return (api_scores, s._combine_parts(tool_total, w), s._combine_parts(cat_total, w))


def _ranked(scores: np.ndarray, k: int) -> list[int]:
    order = [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > 0]  # equal scores: catalog order
    return order[:k]


@pytest.fixture(scope="module")
def builtin() -> Catalog:
    return Catalog.builtin()


@pytest.mark.parametrize("method", ["rrf", "zscore"])
@pytest.mark.parametrize("depth", [3, 40, 200])
def test_candidate_fusion_equals_the_formula_over_the_whole_catalog(builtin: Catalog, tmp_path: Path,
                                                                    depth: int, method: str) -> None:
    """A shallow depth leaves most of the catalog out of every ranking: APIs that score through their tool only,
    tools that score through one API only; every score and ranking matches the whole-catalog formula (either
    fusion method: z-score's mean and std are those of the candidates, the same in both computations)."""
    s = CatalogSearcher(builtin, embeddings=FakeEmbeddings(), index_dir=tmp_path,
                        weights=FusionWeights(depth=depth, method=method))  # type: ignore[arg-type]
    apis, tools = s._apis, s._tools
    for query in QUERIES:
        api_ref, tool_ref, cat_ref = _whole_catalog(s, query)
        fused = s._fused(query)
        full_api = np.zeros(len(apis), dtype=np.float32)
        full_api[fused.apis] = fused.api_scores
        full_tool = np.zeros(len(tools), dtype=np.float32)
        full_tool[fused.tools] = fused.tool_scores
        assert np.array_equal(full_api, api_ref) and np.array_equal(full_tool, tool_ref)
        assert np.array_equal(fused.category_scores, cat_ref)
        if depth == 3:
            assert 0 < len(fused.apis) < len(apis) / 2  # candidates only
        k = 25
        assert [h.api_id for h in s.search_apis(query, k)] == [apis[i].id for i in _ranked(api_ref, k)]
        assert [h.score for h in s.search_apis(query, k)] == [float(api_ref[i]) for i in _ranked(api_ref, k)]
        hits = s.search_tools(query, 8, apis_per_tool=2)
        assert [h.tool_key for h in hits] == [tools[i].key for i in _ranked(tool_ref, 8)]
        for hit in hits:
            i = next(j for j, t in enumerate(tools) if t.key == hit.tool_key and t.category == hit.category)
            start = sum(len(t.apis) for t in tools[:i])
            own = api_ref[start:start + len(tools[i].apis)]
            assert hit.api_ids == tuple(tools[i].apis[j].id for j in np.argsort(-own, kind="stable")[:2])
        category = s._categories[int(np.argmax(cat_ref))].name
        mask = np.array([t.category == category for t in tools])
        inside = s.search_tools(query, 5, category=category)
        assert [h.tool_key for h in inside] == [tools[i].key for i in _ranked(np.where(mask, tool_ref, 0), 5)]
        assert [c.category for c in s.search_categories(query, 4)] == [
            s._categories[i].name for i in _ranked(cat_ref, 4)]
        assert s.ranked_api_ids(s.api_scores_from(s.api_components(query), s.weights), k) == [
            h.api_id for h in s.search_apis(query, k)]


def test_bm25_only_candidate_fusion_equals_the_whole_catalog_formula(builtin: Catalog, tmp_path: Path) -> None:
    s = CatalogSearcher(builtin, embeddings="none", index_dir=tmp_path, weights=FusionWeights(depth=5))
    for query in QUERIES:
        api_ref, _, _ = _whole_catalog(s, query)
        assert [h.api_id for h in s.search_apis(query, 30)] == [s._apis[i].id for i in _ranked(api_ref, 30)]
    assert s.search_apis("zzz qqq", 5) == []


def test_equal_scores_rank_in_catalog_order() -> None:
    """Ties are common in fused ranks (APIs scored through their tool alone get one score): the order among equal
    scores is the catalog's, whatever order a partial sort happened to leave them in."""
    rng = np.random.default_rng(5)
    for size, depth in [(1000, 10), (50, 50), (7, 3), (300, 299)]:
        scores = rng.integers(0, 4, size).astype(np.float32)  # few values: ties everywhere
        expected = np.argsort(-scores, kind="stable")[:depth]
        assert top_indices(scores, depth).tolist() == expected.tolist()
        positive = [i for i in np.argsort(-scores, kind="stable").tolist() if scores[i] > 0]
        assert top_indices(scores, depth, np.flatnonzero(scores > 0)).tolist() == positive[:depth]
    assert top_indices(np.ones(3, dtype=np.float32), 0).tolist() == []


def test_nearest_on_a_flat_index_is_the_exact_top() -> None:
    rng = np.random.default_rng(3)
    base = rng.standard_normal((500, 16)).astype(np.float32)
    base[10] = base[20] = base[30]  # equal vectors: equal scores, catalog order
    queries = np.vstack([base[30], rng.standard_normal((3, 16))]).astype(np.float32)
    index = build_dense_index(base, ann_threshold=10_000)
    found = nearest(index, queries, 40)
    for sims, ids in zip(queries @ base.T, found, strict=True):
        exact = np.lexsort((np.arange(500), -sims))[:40]
        assert np.allclose(sims[ids], sims[exact], atol=1e-5)  # the exact top scores
        assert all(sims[a] > sims[b] + 1e-6 or a < b for a, b in itertools.pairwise(ids))
    assert found[0][:3].tolist() == [10, 20, 30]
    assert [len(x) for x in nearest(index, queries, 10_000)] == [500] * 4


class _CountingBm25:
    """A level's BM25 index that counts its `get_scores` calls (each one reads the postings of its tokens)."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.calls: list[list[str]] = []

    def get_scores(self, tokens: list[str]) -> np.ndarray:
        self.calls.append(list(tokens))
        return np.asarray(self.inner.get_scores(tokens), dtype=np.float32)  # type: ignore[attr-defined]


@pytest.mark.parametrize("loaded", [False, True])
def test_the_whole_querys_bm25_scores_are_its_sentences_sum(builtin: Catalog, tmp_path: Path, loaded: bool) -> None:
    """A multi-sentence query whose tokens are its sentences' tokens in turn reads each level's postings once per
    sentence, not once more for the whole query: its whole-query BM25 scores are the sum of its sentences' (equal
    to token-by-token scores up to float32 rounding), and its rankings are those of the token-by-token scores; a
    query whose whole text tokenises otherwise is scored token by token. Built (bm25s) and loaded (numpy arrays)
    indexes alike."""
    index_dir = tmp_path / "i"
    CatalogSearcher(builtin, embeddings="none", index_dir=index_dir, progress=False).build()
    s = CatalogSearcher(builtin, embeddings="none", index_dir=index_dir if loaded else tmp_path / "fresh",
                        progress=False)
    s.build()
    reuses = 0
    for query in QUERIES:
        tokens, _ = s._query_parts(query)
        reuses += len(tokens) > 2 and tokens[0] == [t for toks in tokens[1:] for t in toks]
        for level in s._levels.values():
            counting = _CountingBm25(level.bm25)
            level.bm25 = counting
            try:
                level.ranked(tokens, None, s.weights)
            finally:
                level.bm25 = counting.inner
            reused = len(tokens) > 2 and tokens[0] == [t for toks in tokens[1:] for t in toks]
            assert counting.calls == [t for p, t in enumerate(tokens) if t and not (p == 0 and reused)]
            scores = level._bm25_scores(tokens)
            for p, toks in enumerate(tokens):
                direct = np.asarray(level.bm25.get_scores(toks), dtype=np.float32) if toks else None
                if direct is None:
                    assert scores[p] is None or not scores[p].any()
                    continue
                assert scores[p] is not None
                np.testing.assert_allclose(scores[p], direct, rtol=1e-5, atol=1e-6)
                assert np.array_equal(top_indices(scores[p], 200, np.flatnonzero(scores[p] > 0)),
                                      top_indices(direct, 200, np.flatnonzero(direct > 0)))
    assert reuses >= 4  # the multi-sentence queries above take the shortcut
