"""Re-fusing a query's cached raw rankings (`CatalogSearcher.api_rankings` / `api_scores_from_rankings`, issue 37
round 5): fusion grids over method, offset, rrf_k and depth, not only the weights, without searching again, and a
second encoder's dense rankings as a third retriever. Whatever the setting, the re-fused ranking is the one
`search_apis` gives with the same weights."""

from __future__ import annotations

import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.search import CatalogSearcher, FusionWeights

from .test_search import FakeEmbeddings
from .test_search_fusion import QUERIES


class _Jittered(FakeEmbeddings):
    """`FakeEmbeddings` with a small fixed offset per text, so that cosines rarely tie (as real encoders' do not)."""

    def _vec(self, text: str) -> list[float]:
        base = np.asarray(super()._vec(text))
        noise = np.random.default_rng(zlib.crc32(text.encode())).normal(0, 0.05, len(base))
        v = base + noise
        return [float(x) for x in v / np.linalg.norm(v)]

pytest.importorskip("faiss")

SETTINGS = [
    FusionWeights(method="rrf", rrf_k=1, depth=3),
    FusionWeights(method="rrf", rrf_k=60, depth=200, bm25=1.0, tool=0.0, whole=2.0),
    FusionWeights(method="zscore", offset=0.0, depth=200),
    FusionWeights(method="zscore", offset=1.0, depth=5, bm25=2.5, dense=2.0, tool=0.75, whole=1.5),
    FusionWeights(method="zscore", offset=0.25, depth=40, bm25=0.5, dense=3.0, tool=0.0, whole=0.5),
    FusionWeights(method=None, depth=17),  # the searcher's own method (z-score with a dense retriever)
]


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory) -> CatalogSearcher:
    return CatalogSearcher(Catalog.builtin(), embeddings=_Jittered(), index_dir=tmp_path_factory.mktemp("idx"),
                           progress=False)


def _tie_at_cut(rankings: dict, depth: int) -> bool:
    """Whether some ranking holds equal scores on both sides of `depth` (which of them a shallower search keeps is
    the index's choice: faiss orders equal cosines as it likes)."""
    return any(len(raw) > depth and raw[depth - 1] == raw[depth]
               for level in rankings.values() for retriever in level for _, raw in retriever)


@pytest.mark.parametrize("weights", SETTINGS, ids=lambda w: f"{w.method}-{w.depth}-{w.offset}-{w.rrf_k}")
def test_rankings_cached_once_re_fuse_to_the_searchs_own_ranking_under_any_setting(searcher: CatalogSearcher,
                                                                                 weights: FusionWeights) -> None:
    """Rankings taken once give `search_apis`'s top 10 and scores for every method, offset, rrf_k and depth (the
    old `api_components` could only re-weigh terms fixed at one method, offset and depth): taken at the setting's
    own depth always; taken deeper and cut to it whenever no retriever has a tie across the cut (z-score's mean
    and std are then those of the same candidates)."""
    ids = searcher.api_ids
    deep_checked = 0
    for query in QUERIES:
        searcher.weights = weights
        try:
            hits = searcher.search_apis(query, 10)
        finally:
            searcher.weights = FusionWeights()
        deep = searcher.api_rankings(query, depth=400)
        for cached in (searcher.api_rankings(query, depth=weights.depth), deep):
            if cached is deep:
                if _tie_at_cut(deep, weights.depth):
                    continue
                deep_checked += 1
            scores = searcher.api_scores_from_rankings(cached, weights)
            assert searcher.ranked_api_ids(scores, 10) == [h.api_id for h in hits], (query, weights)
            assert [float(scores[ids.index(h.api_id)]) for h in hits] == pytest.approx([h.score for h in hits],
                                                                                       rel=1e-5)
    assert deep_checked >= len(QUERIES) // 2


def test_a_second_encoders_dense_rankings_count_as_a_third_retriever(searcher: CatalogSearcher, tmp_path: Path) -> None:
    """`extra`: another searcher's rankings of the same query add its dense terms with `extra_weight`. With the same
    encoder as the extra retriever, dense weight d plus extra weight x ranks as dense weight d + x does; weight 0
    (or no extra) is the two-retriever ranking; another encoder moves the ranking."""
    other = CatalogSearcher(Catalog.builtin(), embeddings=FakeEmbeddings(dim=16, model="fake-bow-16"),
                            index_dir=tmp_path, progress=False)
    moved = 0
    for query in QUERIES:
        for w in (FusionWeights(method="zscore", dense=1.0), FusionWeights(method="rrf", dense=1.0, depth=30)):
            mine = searcher.api_rankings(query, depth=200)
            two = searcher.api_scores_from_rankings(mine, w)
            assert searcher.ranked_api_ids(searcher.api_scores_from_rankings(mine, w, extra=mine, extra_weight=0.0),
                                           10) == searcher.ranked_api_ids(two, 10)
            same = searcher.api_scores_from_rankings(mine, w, extra=mine, extra_weight=0.5)
            summed = searcher.api_scores_from_rankings(mine, replace(w, dense=1.5))
            ratio = summed[summed > 0] / same[summed > 0]  # z-score: scaled to 0-1; RRF: the very same scores
            assert np.allclose(ratio, ratio[0], rtol=1e-5) and (same > 0).sum() == (summed > 0).sum()
            assert searcher.ranked_api_ids(same, 10) == searcher.ranked_api_ids(summed, 10)
            three = searcher.api_scores_from_rankings(mine, w, extra=other.api_rankings(query, depth=200),
                                                      extra_weight=2.0)
            moved += searcher.ranked_api_ids(three, 10) != searcher.ranked_api_ids(two, 10)
    assert moved  # a different second encoder changes some ranking


def test_a_fresh_searcher_re_fuses_rankings_taken_by_another(searcher: CatalogSearcher, tmp_path: Path) -> None:
    """Rankings cached by one searcher (a benchmark's file on disk) re-fuse in a new, not yet loaded searcher of the
    same catalog and encoder: it loads its index first."""
    query = QUERIES[0]
    cached = searcher.api_rankings(query, depth=200)
    fresh = CatalogSearcher(Catalog.builtin(), embeddings=_Jittered(), index_dir=searcher.index_dir, progress=False)
    w = FusionWeights(method="zscore")
    assert fresh.ranked_api_ids(fresh.api_scores_from_rankings(cached, w), 10) == searcher.ranked_api_ids(
        searcher.api_scores_from_rankings(cached, w), 10)
