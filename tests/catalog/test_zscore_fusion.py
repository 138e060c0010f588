"""z-score fusion (issue 37, round 4): each retriever's raw scores standardised over its own candidates, instead of
reciprocal ranks. On a hand-made catalog whose scores are derived by hand, it ranks a retriever's far-ahead first
above an API two retrievers rank well, where RRF does the opposite; its scores read as a 0–1 relevance (1.0 = first
everywhere); trained folders' older `fusion.json` (no method) keep ranking by RRF; an unknown method is refused in
one line naming the file."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.fusion import FusionWeights, weights_from_file
from langgraph_anytool.catalog.search import CatalogSearcher, _fitted_weights, max_api_score, relevance

from .test_search import FakeEmbeddings
from .test_search_fusion import QUERIES

pytest.importorskip("faiss")

# Four tools of one API each. BM25 matches "tide" in two APIs (tideTable twice, headlines once); the dense vectors
# are set by hand (`_Vectors`): moonPhase's cosine with the query stands far above the other three's.
_TOOLS = {
    "almanac": ("Almanac", "Sky facts.", "moonPhase", "Phase of the moon on a date."),
    "port_guide": ("PortGuide", "Harbor information.", "tideTable", "Tide times and tide heights for a harbor."),
    "news": ("News", "Stories.", "headlines", "A tide of news stories from many papers today."),
    "weather": ("Weather", "Forecasts.", "forecast", "Weather forecast for a city."),
}
COSINE = {"moonPhase": 0.9, "tideTable": 0.5, "headlines": 0.45, "forecast": 0.4}


class _Vectors(Embeddings):
    """Query "tide": e0. An API's embedded text: cos(e0) = `COSINE[api]`, each API in its own other direction.
    Query "harbor": exactly tideTable's vector. Every other text (tools, categories): one shared vector at 0 to both
    queries, so the tool level's dense ranking is a tie."""

    DIM = 7

    def _api_vector(self, name: str) -> list[float]:
        v = [0.0] * self.DIM
        c = COSINE[name]
        v[0], v[1 + list(COSINE).index(name)] = c, math.sqrt(1 - c * c)
        return v

    def _vec(self, text: str) -> list[float]:
        if "APIs:" not in text and "Tools:" not in text:  # an API's text ("Tool: api Name. description")
            return self._api_vector(next(name for name in COSINE if name in text.replace(" ", "")))
        v = [0.0] * self.DIM
        v[-1] = 1.0
        return v

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        if "harbor" in text:
            return self._api_vector("tideTable")
        return [1.0] + [0.0] * (self.DIM - 1)


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    folder = tmp_path / "tools" / "Misc"
    folder.mkdir(parents=True)
    for key, (tool, tool_description, api, description) in _TOOLS.items():
        doc = {"tool_name": tool, "tool_description": tool_description, "api_list": [
            {"name": api, "description": description, "method": "GET", "required_parameters": [],
             "optional_parameters": []}]}
        (folder / f"{key}.json").write_text(json.dumps(doc), encoding="utf-8")
    return Catalog.from_toolbench(tmp_path / "tools")


def _searcher(catalog: Catalog, tmp_path: Path, **weights: object) -> CatalogSearcher:
    return CatalogSearcher(catalog, embeddings=_Vectors(), index_dir=tmp_path / "index", progress=False,
                           weights=FusionWeights(**weights))  # type: ignore[arg-type]


def test_the_preconditions_of_the_hand_made_catalog(catalog: Catalog, tmp_path: Path) -> None:
    """BM25 ranks tideTable then headlines (nothing else has "tide"); the dense index moonPhase, tideTable,
    headlines, forecast, at the cosines set by hand."""
    s = _searcher(catalog, tmp_path)
    s.build()
    tokens, vectors = s._query_parts("tide")
    (bm25,), (dense,) = s._levels["apis"].scored(tokens, vectors, s.weights)
    assert [s._apis[int(i)].name for i in bm25[0]] == ["tideTable", "headlines"]
    assert [s._apis[int(i)].name for i in dense[0]] == list(COSINE)
    assert np.allclose(dense[1], list(COSINE.values()), atol=1e-6)


def test_zscore_ranks_a_far_ahead_first_above_what_rrf_prefers(catalog: Catalog, tmp_path: Path) -> None:
    """By hand, weights bm25 1, dense 1, tool 0 (the API level alone), one query part:

    RRF (rrf_k 2): tideTable 1/3 (BM25 first) + 1/4 (dense second) = 0.583; headlines 1/4 + 1/5 = 0.45;
    moonPhase 1/3 (dense first only); forecast 1/6.
    z-score (offset 0): BM25's two candidates standardise to +1 and −1 whatever their scores, so tideTable gets 1
    and headlines 0 (clipped); the cosines 0.9, 0.5, 0.45, 0.4 have mean 0.5625 and std 0.19804, so moonPhase gets
    (0.9 − 0.5625) / 0.19804 = 1.7041 and the three others fall below the mean (0). moonPhase 1.7041 > tideTable
    1 > nothing else (score 0 is never a hit). Scaled by the best possible score 1 + 1.7041 = 2.7041: 0.630 and
    0.370."""
    rrf = _searcher(catalog, tmp_path, bm25=1.0, dense=1.0, tool=0.0, method="rrf")
    assert [h.api for h in rrf.search_apis("tide", 10)] == ["tideTable", "headlines", "moonPhase", "forecast"]
    assert [round(h.score / 2, 3) for h in rrf.search_apis("tide", 10)] == [0.583, 0.45, 0.333, 0.167]  # (1+whole)
    z = _searcher(catalog, tmp_path, bm25=1.0, dense=1.0, tool=0.0, method="zscore")
    hits = z.search_apis("tide", 10)
    assert [h.api for h in hits] == ["moonPhase", "tideTable"]
    assert [round(h.score, 3) for h in hits] == [0.630, 0.370]
    assert [relevance(h.score, z) for h in hits] == [0.630, 0.370]
    # the offset lets candidates below their mean count: with offset 1 headlines gets 0 + 1·0 (BM25 −1 + 1) and
    # (0.45 − 0.5625) / 0.19804 + 1 = 0.4319 from the dense side
    off = _searcher(catalog, tmp_path, bm25=1.0, dense=1.0, tool=0.0, method="zscore", offset=1.0)
    by_name = {h.api: h.score for h in off.search_apis("tide", 10)}
    top = 2.0 + 2.7041
    assert by_name["headlines"] == pytest.approx(0.4319 / top, abs=1e-3)
    assert by_name["moonPhase"] == pytest.approx(2.7041 / top, abs=1e-3)


def test_relevance_is_one_for_an_api_first_everywhere_and_lower_below(catalog: Catalog, tmp_path: Path) -> None:
    """"harbor": tideTable is first for BM25 and for the dense index, and its tool first at the tool level (BM25:
    its description; dense: every tool ties), so its relevance is 1.0 under z-score fusion; every other hit's is
    lower. The relevance is the hit's score, in 0–1."""
    s = _searcher(catalog, tmp_path, method="zscore")
    hits = s.search_apis("harbor", 10)
    assert hits[0].api == "tideTable" and relevance(hits[0].score, s) == 1.0 == max_api_score(s)
    assert len(hits) > 1 and all(0 < relevance(h.score, s) < 1.0 for h in hits[1:])


@pytest.mark.parametrize("method", ["rrf", "zscore"])
def test_relevance_reads_the_same_on_any_catalog(tmp_path: Path, method: str) -> None:
    """On the builtin catalog, for every test query: relevance lies in 0–1 and never rises down the ranking. Under
    z-score fusion the top hit's is 1.0 when it is first (or tied first) for both retrievers in every query part
    and its tool is too at the tool level, and below 1.0 when some retriever ranks another API or tool above it
    for the whole query (that part always counts, `whole` > 0)."""
    s = CatalogSearcher(Catalog.builtin(), embeddings=FakeEmbeddings(), index_dir=tmp_path, progress=False,
                        weights=FusionWeights(method=method))  # type: ignore[arg-type]
    seen = set()
    for query in QUERIES:
        hits = s.search_apis(query, 10)
        values = [relevance(h.score, s) for h in hits]
        assert all(0.0 <= v <= 1.0 for v in values) and values == sorted(values, reverse=True), (query, values)
        if method != "zscore" or not hits:
            continue
        tokens, vectors = s._query_parts(query)
        api = next(i for i, a in enumerate(s._apis) if a.id == hits[0].api_id)
        first_in: list[bool] = []  # per ranking (level, retriever, part) that ranks something
        whole_first = True
        for level, own in (("apis", api), ("tools", int(s._api_tool[api]))):
            for ranking in s._levels[level].scored(tokens, vectors, s.weights):
                for part, (ids, raw) in enumerate(ranking):
                    if len(ids):
                        first = own in ids and bool(raw[list(ids).index(own)] == raw[0])
                        first_in.append(first)
                        whole_first &= first or part > 0
        if all(first_in):
            assert values[0] == 1.0, query
            seen.add("first")
        if not whole_first:
            assert values[0] < 1.0, query
            seen.add("not first")
    assert method != "zscore" or seen == {"first", "not first"}


def test_a_fusion_file_without_method_keeps_ranking_by_rrf(tmp_path: Path) -> None:
    """Trained folders' `fusion.json` written before z-score fusion hold RRF weights and no method: they rank as
    before (RRF), whatever the default method; a file naming a method gets it."""
    old = {"bm25": 1.5, "dense": 2.0, "tool": 0.5, "whole": 1.0, "rrf_k": 2, "depth": 200}
    assert weights_from_file(old) == FusionWeights(method="rrf", **old)  # type: ignore[arg-type]
    assert weights_from_file({"rrf_k": 5}) == FusionWeights(method="rrf", dense=1.0, rrf_k=5)  # RRF's old dense
    assert weights_from_file({**old, "method": "zscore", "offset": 1.0}).method == "zscore"

    class Trained(FakeEmbeddings):
        fusion_weights = old

    assert _fitted_weights(Trained()) == FusionWeights(method="rrf", **old)  # type: ignore[arg-type]
    fitted = CatalogSearcher(Catalog.builtin(), embeddings=Trained(), index_dir=tmp_path, progress=False)
    explicit = CatalogSearcher(Catalog.builtin(), embeddings=FakeEmbeddings(), index_dir=tmp_path, progress=False,
                               weights=FusionWeights(method="rrf", **old))  # type: ignore[arg-type]
    for query in QUERIES:
        assert [(h.api_id, h.score) for h in fitted.search_apis(query, 20)] == [
            (h.api_id, h.score) for h in explicit.search_apis(query, 20)]


@pytest.mark.parametrize("bad", [{"method": "borda"}, {"method": 1}, {"offset": -1.0}, {"offset": float("nan")}])
def test_an_unknown_fusion_method_in_code_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="fusion weights"):
        FusionWeights(**bad)  # type: ignore[arg-type]


def test_fit_fusion_fits_the_method_of_the_weights_it_starts_from(tmp_path: Path) -> None:
    """`fit_fusion` (``anytool index train --fit-fusion``) keeps the starting weights' method: from z-score
    weights it fits `offset` (not `rrf_k`) and returns z-score weights, whose scores are those that search with
    them gives (the terms are re-fused, not re-searched); from RRF weights it fits RRF as before."""
    from langgraph_anytool.eval.metrics import ndcg_at_k, recall_at_k
    from langgraph_anytool.eval.retrieval import EvalQuery
    from langgraph_anytool.eval.training import FUSION_GRID, fit_fusion

    s = CatalogSearcher(Catalog.builtin(), embeddings=FakeEmbeddings(), index_dir=tmp_path, progress=False)
    # relevant: each query's 3rd hit under one z-score setting, so the weights matter
    probe = FusionWeights(method="zscore", offset=0.5, bm25=2.0, tool=0.0)
    s.weights = probe
    queries = [EvalQuery("g", str(i), q, (s.search_apis(q, 3)[-1].api_id,)) for i, q in enumerate(QUERIES)
               if len(s.search_apis(q, 3)) == 3]
    for method in ("zscore", "rrf"):
        s.weights = FusionWeights(method=method)  # type: ignore[arg-type]
        fitted, scores = fit_fusion(s, queries, progress=False)
        assert fitted.method == method and s.weights == FusionWeights(method=method)  # type: ignore[arg-type]
        if method == "zscore":
            assert fitted.offset in FUSION_GRID["offset"] and fitted.rrf_k == FusionWeights().rrf_k
        else:
            assert fitted.rrf_k in FUSION_GRID["rrf_k"] and fitted.offset == 0.0
        s.weights = fitted
        ranked = [[h.api_id for h in s.search_apis(q.query, 10)] for q in queries]
        assert scores["Recall@10"] == pytest.approx(
            sum(recall_at_k(r, q.relevant, 10) for r, q in zip(ranked, queries, strict=True)) / len(queries))
        assert scores["NDCG@5"] == pytest.approx(
            sum(ndcg_at_k(r, q.relevant, 5) for r, q in zip(ranked, queries, strict=True)) / len(queries))


def test_the_default_method_is_zscore_for_hybrid_search_and_rrf_for_bm25_alone(tmp_path: Path) -> None:
    """`FusionWeights()` leaves the method to the searcher: z-score with a dense retriever, RRF for BM25-only search,
    whose scores, rankings and relevances are exactly those of the previous default (RRF, bm25 1.5; the dense weight
    plays no part there). Weights set later are made concrete the same way."""
    builtin = Catalog.builtin()
    hybrid = CatalogSearcher(builtin, embeddings=FakeEmbeddings(), index_dir=tmp_path, progress=False)
    assert hybrid.weights.method == "zscore" and FusionWeights().method is None
    bm25 = CatalogSearcher(builtin, embeddings="none", index_dir=tmp_path, progress=False)
    before = CatalogSearcher(builtin, embeddings="none", index_dir=tmp_path, progress=False,
                             weights=FusionWeights(method="rrf", dense=1.0))
    assert bm25.weights.method == "rrf"
    for query in QUERIES:
        now, then = bm25.search_apis(query, 30), before.search_apis(query, 30)
        assert [(h.api_id, h.score) for h in now] == [(h.api_id, h.score) for h in then]
        assert [relevance(h.score, bm25) for h in now] == [relevance(h.score, before) for h in then]
    hybrid.weights = FusionWeights(method=None, tool=0.25)
    bm25.weights = FusionWeights(tool=0.25)
    assert (hybrid.weights.method, bm25.weights.method, hybrid.weights.tool) == ("zscore", "rrf", 0.25)
