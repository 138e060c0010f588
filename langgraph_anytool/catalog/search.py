"""Hybrid catalog search: BM25 + dense vectors (faiss) fused by weighted reciprocal-rank or z-score fusion.

Three levels are indexed: APIs, tools and categories. A query is searched as a whole and sentence by sentence
(multi-step requests ask for one thing per sentence); at every level each part gets

    score_part(d) = w_bm25 · term_bm25(d) + w_dense · term_dense(d)                  (a term is 0 beyond `depth`)

where a retriever's term is, by `FusionWeights.method`, "rrf": 1 / (c + rank(d)) (c = `rrf_k`, rank from 1), or
"zscore": max(0, (s(d) − mean) / std + `offset`), s being its raw score (BM25's, or the cosine) and mean / std those
of the scores of its own candidates for that part (its `depth` best; BM25's with a positive score; every candidate
counts as 1 when the scores do not spread). An API's part score adds `w_tool` times its tool's part score;
the final score is the best sentence's score plus `w_whole` times the whole query's score. Tools also get the best
score of their APIs, categories that of their tools. Under "zscore" an API's final score is divided by the score an
API first for every retriever (its tool first too) would get for that query, so it lies in 0–1 (`relevance`).

Query vectors: a multi-sentence query encodes its sentences; with an encoder that gives token means (MiniLM on ONNX
Runtime, each text run alone) the whole query's vector is the mean over all their tokens, so the whole text is not
encoded a second time (`FusionWeights.encode_whole`); recent texts come from the encoder's LRU cache when it has one.

Every index persists under `index_dir` (default: env ``ANYTOOL_INDEX_DIR``, else ``~/.cache/langgraph-anytool/
index``): BM25 in a folder keyed by the catalog fingerprint and the document format version, dense vectors in one
keyed also by the embedding model id, so a second start neither re-tokenises nor re-embeds; both are read memory-
mapped (`index_store`); the dense folder is kept when only the BM25 part of the document recipe changes, and the
BM25 folder when only the embedded part does. A recipe with pseudo-queries (`documents.pseudo_queries`) gives an API
several vectors: the dense ranking lists each API once, at its best vector (max-pooling). A level's dense index is
exact up to `dense_index.ANN_THRESHOLD` documents, IVF + 8-bit SQ above (the tool level too: at 200k APIs its 66k
tools took 128 ms per exact search on the busy machine, 16 ms as IVF, which kept 98.0 % of the exact top-200).
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..sanitize.paths import user_cache_dir
from .dense_index import ANN_THRESHOLD, build_dense_index, nearest_scored, top_indices
from .documents import (
    DOCUMENT_VERSION,
    DocumentRecipe,
    alike_recipes,
    api_dense_texts,
    api_document,
    category_document,
    recipe_named,
    split_query,
    tokenize,
    tool_document,
)
from .encoders import Encoder, embeddings_id, resolve_encoder
from .fusion import FusionWeights, resolved, weights_from_file
from .index_store import load_bm25, load_faiss, save_bm25, save_faiss
from .models import Category

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings


ENV_INDEX_DIR = "ANYTOOL_INDEX_DIR"
PROGRESS_THRESHOLD = 1000
_EMBED_CHUNK = 256
_NO_MATCH_TOKEN = "_"  # never produced by `tokenize`: stands in for documents without words


def default_index_dir() -> Path:
    """``$ANYTOOL_INDEX_DIR``, else ``$XDG_CACHE_HOME/langgraph-anytool/index`` (``~/.cache`` by default)."""
    return user_cache_dir("index", ENV_INDEX_DIR)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked API. `tool`/`api` are display names (ToolBench's original tool_name / API name)."""

    category: str
    tool: str
    api: str
    api_id: str
    score: float
    tool_key: str
    function_name: str


@dataclass(frozen=True, slots=True)
class ToolHit:
    """One ranked tool, with the ids of its best-matching APIs (best first)."""

    category: str
    tool: str
    tool_key: str
    score: float
    api_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CategoryHit:
    """One ranked category."""

    category: str
    score: float


@dataclass
class BuildStats:
    """What the last build did and how long it took (seconds)."""

    bm25_seconds: float = 0.0
    dense_seconds: float = 0.0
    bm25_loaded: bool = False  # True when the BM25 index came from disk
    dense_loaded: bool = False  # True when the dense index came from disk
    embedded_documents: int = 0
    index_path: str | None = None
    bm25_path: str | None = None
    dense_kind: str = ""  # "flat" or the IVF parameters of the API level
    extra: dict[str, Any] = field(default_factory=dict)


class _Level:
    """BM25 + optional dense index over one kind of document."""

    def __init__(self, name: str, size: int, bm25: Any = None) -> None:
        self.name = name
        self.size = size
        self.bm25 = bm25  # bm25s.BM25 when built, Bm25Arrays when loaded (None when the level is empty)
        self.dense: Any = None  # faiss.Index
        # the document of each dense vector when a document has several (an API's pseudo-queries), else None
        self.owners: np.ndarray | None = None

    @staticmethod
    def index_bm25(tokens: list[list[str]]) -> Any:
        import bm25s

        from .bm25_arrays import BUILD_PARAMS

        model = bm25s.BM25(**BUILD_PARAMS)
        model.index([t or [_NO_MATCH_TOKEN] for t in tokens], show_progress=False)
        return model

    def ranked(self, tokens: Sequence[list[str]], vectors: np.ndarray | None,
               w: FusionWeights) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per query part, the positions of BM25's and of the dense index's `depth` best documents, best first
        (BM25: positive scores only; ties by lower position; an empty array where a retriever has nothing)."""
        sparse, dense = self.scored(tokens, vectors, w)
        return [ids for ids, _ in sparse], [ids for ids, _ in dense]

    def scored(self, tokens: Sequence[list[str]], vectors: np.ndarray | None, w: FusionWeights) -> _Scored:
        """`ranked`'s positions with their raw scores (BM25 scores, inner products), per retriever and part."""
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
        sparse = [empty] * len(tokens)
        dense = [empty] * len(tokens)
        if not self.size:
            return sparse, dense
        depth = min(w.depth, self.size)
        if self.bm25 is not None:
            for p, scores in enumerate(self._bm25_scores(tokens)):
                if scores is not None:
                    ids = top_indices(scores, depth, np.flatnonzero(scores > 0))
                    sparse[p] = (ids, scores[ids])
        if vectors is not None and self.dense is not None and self.dense.ntotal:
            if vectors.shape[1] != self.dense.d:
                raise ValueError(f"the {self.name} dense index holds {self.dense.d}-dimensional vectors and the "
                                 f"encoder gives {vectors.shape[1]}: rebuild it with `anytool index build`")
            if self.owners is None:
                dense = nearest_scored(self.dense, vectors, depth)
            else:  # max-pooled per document: a document ranks at its best vector
                fanout = int(np.bincount(self.owners).max())
                dense = [_first_per_owner(ids, sims, self.owners, depth)
                         for ids, sims in nearest_scored(self.dense, vectors, depth * fanout)]
        return sparse, dense

    def _bm25_scores(self, tokens: Sequence[list[str]]) -> list[np.ndarray | None]:
        """BM25 scores of every document per query part (None for a part without tokens).

        A BM25 score is a sum over the query's tokens, so when the whole query's tokens (part 0) are its sentences'
        tokens one after another (512 of the 517 multi-sentence dev queries), its scores are the sum of theirs:
        the catalog's postings are read once, not twice (the whole query's pass read the same postings as all its
        sentences' passes together). The sum adds in another order than token by token, so a score may differ in
        its last bit (float32); the 519 dev queries rank the same."""
        assert self.bm25 is not None
        out: list[np.ndarray | None] = [None] * len(tokens)
        reuse = len(tokens) > 2 and list(tokens[0]) == [t for toks in tokens[1:] for t in toks]
        for p, toks in enumerate(tokens):
            if toks and not (p == 0 and reuse):
                out[p] = np.asarray(self.bm25.get_scores(toks), dtype=np.float32)
        if reuse:
            total = np.zeros(self.size, dtype=np.float32)
            for scores in out[1:]:
                if scores is not None:
                    total += scores
            out[0] = total
        return out

    def components(self, tokens: Sequence[list[str]], vectors: np.ndarray | None,
                   w: FusionWeights) -> tuple[np.ndarray, np.ndarray]:
        """Unweighted terms (`w.method`'s) of BM25 and of the dense index, each of shape (parts, size)."""
        return self.terms(self.scored(tokens, vectors, w), np.arange(self.size), w)

    def terms(self, scored: _Scored, columns: np.ndarray, w: FusionWeights) -> tuple[np.ndarray, np.ndarray]:
        """Unweighted terms of BM25 and of the dense index at `columns` (ascending, holding every ranked position),
        each of shape (parts, len(columns)); 0 elsewhere."""
        sparse, dense = scored
        return _terms(sparse, columns, w), _terms(dense, columns, w)


class SearchableCatalog(Protocol):
    """What the searcher reads of a `Catalog` (search.py does not import catalog.py: catalog.py imports it)."""

    name: str

    @property
    def categories(self) -> list[str]: ...

    def category(self, name: str) -> Category: ...

    def fingerprint(self) -> str: ...

    def function_name(self, api_id: str) -> str: ...


class CatalogSearcher:
    """Hybrid search over a catalog's APIs, tools and categories; builds lazily and thread-safely.

    `embeddings`: a LangChain `Embeddings`, a spec string (``"minilm"``, ``"openai:<model>"``, ``"none"``) or None
    for the default policy of `encoders` (env ``ANYTOOL_EMBEDDINGS``, else MiniLM when installed, else BM25
    only). The attribute `embeddings` holds the encoder in use: a given `Embeddings` as is; for a spec, our plain
    encoder (`encoders.resolve_encoder`, no LangChain import; `embeddings.resolve_embeddings` gives its
    LangChain face). `index_dir`: where indexes persist (None → `default_index_dir()`).
    `ann_threshold`: document count above which a level's dense index (APIs, tools) is IVF + SQ8 instead of exact.
    `weights`: the fusion weights; default: those fitted beside a trained encoder (``anytool index train
    --fit-fusion``, exposed as its `fusion_weights`), else `FusionWeights()`.
    `documents`: the document recipe (`documents.DocumentRecipe` or its id); default: the one a trained encoder was
    trained with (its manifest), else `documents.DEFAULT_RECIPE`. The recipe is stored with the indexes: a folder
    built with another one is rebuilt, with one line saying why, unless that recipe gives the same documents for
    that index (the dense index depends on the embedded texts alone, the BM25 one on the BM25 documents alone).
    """

    def __init__(
        self,
        catalog: SearchableCatalog,
        *,
        embeddings: Embeddings | str | None = None,
        index_dir: str | Path | None = None,
        weights: FusionWeights | None = None,
        progress: bool = True,
        ann_threshold: int = ANN_THRESHOLD,
        documents: DocumentRecipe | str | None = None,
    ) -> None:
        self.catalog = catalog
        self.embeddings: Encoder | None = resolve_encoder(embeddings)
        self.recipe = documents if isinstance(documents, DocumentRecipe) else recipe_named(
            documents if documents is not None else _trained_recipe(self.embeddings))
        self.index_dir = Path(index_dir).expanduser() if index_dir else default_index_dir()
        self.weights = weights or _fitted_weights(self.embeddings) or FusionWeights()  # method made concrete
        self.progress = progress
        self.ann_threshold = ann_threshold
        self.stats = BuildStats()
        self._lock = threading.Lock()
        self._built = False
        # APIs in catalog order grouped by tool (contiguous), tools grouped by category.
        self._categories = [catalog.category(c) for c in catalog.categories]
        self._tools = [t for c in self._categories for t in c.tools]
        self._apis = [a for t in self._tools for a in t.apis]
        self._tool_sizes = np.array([len(t.apis) for t in self._tools], dtype=np.int64)
        self._api_tool = np.repeat(np.arange(len(self._tools)), self._tool_sizes)
        self._tool_starts = np.concatenate([[0], np.cumsum(self._tool_sizes)[:-1]]).astype(np.int64)
        self._cat_sizes = np.array([len(c.tools) for c in self._categories], dtype=np.int64)
        self._tool_cat = np.repeat(np.arange(len(self._categories)), self._cat_sizes)
        self._levels: dict[str, _Level] = {}

    @property
    def weights(self) -> FusionWeights:
        """The fusion weights in use; set any `FusionWeights`: a `method` of None becomes this searcher's own
        (`fusion.resolved`: z-score with a dense retriever, RRF without)."""
        return self._weights

    @weights.setter
    def weights(self, value: FusionWeights) -> None:
        self._weights = resolved(value, dense=self.embeddings is not None)

    # ------------------------------------------------------------------ build
    @property
    def dense(self) -> bool:
        """Whether dense vectors take part in the ranking."""
        return self.embeddings is not None

    def index_path(self) -> Path | None:
        """The folder of this catalog's dense index (None for BM25-only search)."""
        if self.embeddings is None:
            return None
        model = embeddings_id(self.embeddings)
        key = hashlib.sha256(f"{model}\x00{DOCUMENT_VERSION}".encode()).hexdigest()[:12]
        return self.index_dir / f"{self.catalog.fingerprint()}-{key}"

    def bm25_path(self) -> Path:
        """The folder of this catalog's BM25 index."""
        return self.index_dir / f"{self.catalog.fingerprint()}-bm25-v{DOCUMENT_VERSION}"

    def _counts(self) -> dict[str, int]:
        return {"apis": len(self._apis), "tools": len(self._tools), "categories": len(self._categories)}

    def build(self) -> BuildStats:
        """Build (or load) every index now; later calls return at once."""
        with self._lock:
            if not self._built:
                self._build()
                self._built = True
        return self.stats

    def _sparse_documents(self, name: str) -> list[str]:
        if name == "apis":
            return [api_document(a, t.description, self.recipe) for t in self._tools for a in t.apis]
        if name == "tools":
            return [tool_document(t) for t in self._tools]
        return [category_document(c) for c in self._categories]

    def _dense_documents(self, name: str) -> list[str]:
        """The texts to embed: short API texts (with the recipe's pseudo-queries, several per API, in API order),
        the tools' and categories' BM25 documents."""
        if name == "apis":
            return [text for t in self._tools for a in t.apis for text in api_dense_texts(a, t.description, self.recipe)]
        return self._sparse_documents(name)

    def _dense_owners(self) -> np.ndarray | None:
        """The API position of each embedded API text when some API has several (pseudo-queries), else None."""
        per_api = np.array([len(api_dense_texts(a, t.description, self.recipe)) for t in self._tools for a in t.apis],
                           dtype=np.int64)
        if not len(per_api) or int(per_api.max()) <= 1:
            return None
        return np.repeat(np.arange(len(per_api)), per_api)

    def _build(self) -> None:
        counts = self._counts()
        t0 = time.perf_counter()
        levels = self._bm25_levels(counts)
        self.stats.bm25_seconds = time.perf_counter() - t0
        if self.embeddings is not None:
            t0 = time.perf_counter()
            self._attach_dense(levels, counts)
            self.stats.dense_seconds = time.perf_counter() - t0
        self._levels = levels

    def _bm25_levels(self, counts: dict[str, int]) -> dict[str, _Level]:
        """BM25 per level: loaded from `bm25_path()` when present, else tokenised, indexed and saved."""
        path = self.bm25_path()
        self.stats.bm25_path = str(path)
        nonempty = {name: n for name, n in counts.items() if n}
        loaded = load_bm25(path, nonempty, self.recipe.id, alike_recipes(self.recipe, "sparse")) if nonempty else {}
        if loaded is not None:
            self.stats.bm25_loaded = True
            return {name: _Level(name, n, loaded.get(name)) for name, n in counts.items()}
        from tqdm import tqdm  # only to build: a run that loads the index does not import it

        models: dict[str, Any] = {}
        with tqdm(total=sum(nonempty.values()), desc="BM25 index", unit="doc", file=sys.stderr,
                  disable=not self.progress or counts["apis"] <= PROGRESS_THRESHOLD) as bar:
            for name in nonempty:
                tokens = []
                for doc in self._sparse_documents(name):
                    tokens.append(tokenize(doc))
                    if len(tokens) % 2048 == 0:
                        bar.update(2048)
                bar.update(len(tokens) % 2048)
                models[name] = _Level.index_bm25(tokens)
        save_bm25(path, models, {"documents": self.recipe.id, "fingerprint": self.catalog.fingerprint(),
                                 "catalog": self.catalog.name})
        return {name: _Level(name, n, models.get(name)) for name, n in counts.items()}

    def _attach_dense(self, levels: dict[str, _Level], counts: dict[str, int]) -> None:
        from .dense_index import describe

        path = self.index_path()
        assert path is not None and self.embeddings is not None
        self.stats.index_path = str(path)
        model = embeddings_id(self.embeddings)
        dimension = getattr(self.embeddings, "dimension", None)  # known without embedding for our encoders
        owners = self._dense_owners()
        if owners is not None:  # several vectors per API: the API level holds one per text
            counts = {**counts, "apis": len(owners)}
            levels["apis"].owners = owners
        loaded = load_faiss(path, counts, model=model, dimension=dimension if isinstance(dimension, int) else None,
                            documents=self.recipe.id, alike=alike_recipes(self.recipe, "dense"))
        if loaded is None:
            _say_why_new_encoder(path, self.catalog.fingerprint(), model)
            loaded = {}
            for name in counts:
                vectors = _embed_documents(self.embeddings, self._dense_documents(name), desc=f"embedding {name}",
                                           progress=self.progress and counts["apis"] > PROGRESS_THRESHOLD)
                self.stats.embedded_documents += len(vectors)
                loaded[name] = build_dense_index(vectors, ann_threshold=self.ann_threshold)
            save_faiss(path, loaded, {"model": model, "documents": self.recipe.id,
                                      "fingerprint": self.catalog.fingerprint(), "catalog": self.catalog.name})
        else:
            self.stats.dense_loaded = True
        for name, index in loaded.items():
            levels[name].dense = index
        self.stats.dense_kind = describe(loaded["apis"])

    # ------------------------------------------------------------------ scoring
    def _fused(self, query: str) -> _Fused:
        """The final scores of a query, computed for the candidates only (see `_Fused`)."""
        w = self.weights
        tokens, vectors = self._query_parts(query)
        scored = {name: level.scored(tokens, vectors, w) for name, level in self._levels.items()}
        api_hits, tool_hits = _union(scored["apis"]), _union(scored["tools"])
        tools = np.union1d(tool_hits, self._api_tool[api_hits])
        apis = np.union1d(api_hits, self._apis_of(tool_hits))
        api_terms = self._levels["apis"].terms(scored["apis"], apis, w)
        tool_terms = self._levels["tools"].terms(scored["tools"], tools, w)
        api_p, tool_p = _weighted(api_terms, w), _weighted(tool_terms, w)
        cat_p = _weighted(self._levels["categories"].terms(scored["categories"], np.arange(len(self._categories)), w), w)
        tool_of_api = np.searchsorted(tools, self._api_tool[apis])  # each candidate API's column in `tools`
        api_total = api_p + w.tool * tool_p[:, tool_of_api]
        tool_total = tool_p + _max_per_group(api_p, tool_of_api, len(tools))
        cat_total = cat_p + _max_per_group(tool_total, self._tool_cat[tools], len(self._categories))
        api_scores = self._scaled(self._combine_parts(api_total, w), (*api_terms, *tool_terms), w)
        return _Fused(apis=apis, api_scores=api_scores, tools=tools,
                      tool_scores=self._combine_parts(tool_total, w), category_scores=self._combine_parts(cat_total, w))

    def _apis_of(self, tools: np.ndarray) -> np.ndarray:
        """The positions of the APIs of `tools` (positions, ascending), ascending."""
        sizes = self._tool_sizes[tools]
        if not sizes.sum():
            return np.zeros(0, dtype=np.int64)
        ends = np.cumsum(sizes)
        return np.arange(int(ends[-1])) - np.repeat(ends - sizes, sizes) + np.repeat(self._tool_starts[tools], sizes)

    def _query_parts(self, query: str) -> tuple[list[list[str]], np.ndarray | None]:
        """BM25 tokens and dense vectors of the query's parts (whole query, then its sentences)."""
        if not query or not query.strip():
            raise ValueError(f"empty query {query!r}: a search needs some text to rank the APIs by")
        self.build()
        parts = [query.strip()]
        sentences = split_query(query)
        if len(sentences) > 1:
            parts += sentences
        tokens = [tokenize(p) for p in parts]
        vectors = self._query_vectors(parts) if self.embeddings is not None else None
        return tokens, vectors

    def api_components(self, query: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Unweighted terms of a query: BM25 and dense at the API level, then at the tool level (parts × size).

        `api_scores_from` turns them into the API scores `search_apis` ranks by, for any bm25/dense/tool/whole
        weights (`method`, `rrf_k`, `offset` and `depth` are this searcher's): fusion weights are fitted this way
        without re-searching.
        """
        tokens, vectors = self._query_parts(query)
        api_s, api_d = self._levels["apis"].components(tokens, vectors, self.weights)
        tool_s, tool_d = self._levels["tools"].components(tokens, vectors, self.weights)
        return api_s, api_d, tool_s, tool_d

    def api_scores_from(self, components: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                        weights: FusionWeights) -> np.ndarray:
        """The final API scores of `api_components` under `weights` (the same formula as `search_apis`)."""
        return self._scaled(self._unscaled_scores(components, weights), components, weights)

    def _unscaled_scores(self, components: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], weights: FusionWeights,
               extra: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """The unscaled API scores: each level's weighted retrievers (plus `extra`'s API and tool terms, already
        weighted), the tool level spread to its APIs, the query parts combined."""
        api_s, api_d, tool_s, tool_d = components
        api_p = weights.bm25 * api_s + weights.dense * api_d
        tool_p = weights.bm25 * tool_s + weights.dense * tool_d
        if extra is not None:
            api_p, tool_p = api_p + extra[0], tool_p + extra[1]
        return self._combine_parts(api_p + weights.tool * tool_p[:, self._api_tool], weights)

    def api_rankings(self, query: str, depth: int | None = None) -> Rankings:
        """A query's raw rankings at the API and tool levels, `depth` deep (default: the weights' `depth`): per level
        ("apis", "tools"), per retriever (BM25, dense), per query part, (positions best first, raw scores).

        `api_scores_from_rankings` re-fuses them under any weights (method, offset, rrf_k and depth included, up to
        this depth) without searching again, and adds another encoder's dense rankings of the same query as a
        third retriever: fusion grids re-fuse cached rankings (`benchmarks/fusion_grid.py`).
        """
        tokens, vectors = self._query_parts(query)
        w = self.weights if depth is None else replace(self.weights, depth=depth)
        return {name: self._levels[name].scored(tokens, vectors, w) for name in ("apis", "tools")}

    def api_scores_from_rankings(self, rankings: Rankings, weights: FusionWeights, *, extra: Rankings | None = None,
                                 extra_weight: float = 0.0) -> np.ndarray:
        """The API scores (`api_ids` order) `search_apis` ranks by under `weights`, from `api_rankings` at least
        `weights.depth` deep (deeper rankings are cut to it). `extra`: the `api_rankings` of the same query by
        another searcher over the same catalog, whose dense rankings count as a third retriever weighted
        `extra_weight` (its BM25 rankings are ignored); with it the scores are not scaled to 0-1 (the order is
        the same: z-score's scaling divides every score of a query by one number)."""
        self.build()  # the levels' sizes (rankings may come from another process, e.g. a cache on disk)
        w = resolved(weights, dense=self.embeddings is not None)
        cut = w.depth

        def terms(ranked: Rankings, level: str, retriever: int) -> np.ndarray:
            kept = [(ids[:cut], raw[:cut]) for ids, raw in ranked[level][retriever]]
            return _terms(kept, np.arange(self._levels[level].size), w)

        components = (terms(rankings, "apis", 0), terms(rankings, "apis", 1), terms(rankings, "tools", 0),
                      terms(rankings, "tools", 1))
        if extra is None or not extra_weight:
            return self.api_scores_from(components, w)
        return self._unscaled_scores(components, w, (extra_weight * terms(extra, "apis", 1), extra_weight * terms(extra, "tools", 1)))

    def _scaled(self, api_scores: np.ndarray, terms: tuple[np.ndarray, ...], w: FusionWeights) -> np.ndarray:
        """RRF: the scores as they are. z-score: divided by the score an API first for every retriever in every
        part, its tool first too, would get (`terms`: the API level's BM25 and dense terms, then the tool level's;
        a term's maximum is its retriever's first document's), so they lie in 0–1."""
        if w.method != "zscore":
            return api_scores
        api_s, api_d, tool_s, tool_d = (t.max(axis=1) if t.shape[1] else np.zeros(t.shape[0], dtype=np.float32)
                                        for t in terms)
        best = self._combine_parts((w.bm25 * api_s + w.dense * api_d + w.tool * (w.bm25 * tool_s + w.dense * tool_d)
                                    )[:, None], w)
        top = float(best[0])
        return np.asarray(api_scores / top if top > 0 else api_scores, dtype=np.float32)

    @property
    def api_ids(self) -> list[str]:
        """API ids in index order (the columns of `api_components`)."""
        return [a.id for a in self._apis]

    def _query_vectors(self, parts: list[str]) -> np.ndarray:
        """L2-normalised vectors of the query parts (row 0: whole query, then its sentences).

        A multi-sentence query encodes its sentences only, unless `weights.encode_whole` is True (or None with an
        encoder that gives no token means): its whole-query vector is then the mean over all the sentences'
        tokens (`token_means`), else the normalised mean of the sentence vectors.
        """
        whole_mode = self.weights.encode_whole
        token_means = getattr(self.embeddings, "token_means", None)
        if len(parts) == 1 or whole_mode is True or (whole_mode is None and not callable(token_means)):
            return _normalised(self._embed_queries(parts))
        if callable(token_means):
            means, counts = token_means(parts[1:])
            means = np.asarray(means, dtype=np.float32)
            weights = np.asarray(counts, dtype=np.float32)[:, None]
            whole = (means * weights).sum(axis=0, keepdims=True) / max(float(weights.sum()), 1.0)
            return _normalised(np.vstack([whole, means]))
        vectors = _normalised(self._embed_queries(parts[1:]))
        return _normalised(np.vstack([vectors.mean(axis=0, keepdims=True), vectors]))

    def _embed_queries(self, parts: list[str]) -> np.ndarray:
        """One call when the embeddings offer `query_matrix`/`embed_queries` (the MiniLM encoders do)."""
        assert self.embeddings is not None
        for method in ("query_matrix", "embed_queries"):
            batch = getattr(self.embeddings, method, None)
            if callable(batch):
                return np.array(batch(parts), dtype=np.float32)
        return np.array([self.embeddings.embed_query(p) for p in parts], dtype=np.float32)

    @staticmethod
    def _combine_parts(per_part: np.ndarray, w: FusionWeights) -> np.ndarray:
        """Best sentence + `whole` × whole query (row 0); one-part queries: (1 + whole) × whole query."""
        if per_part.shape[0] == 1:
            return np.asarray((1.0 + w.whole) * per_part[0])
        return np.asarray(per_part[1:].max(axis=0) + w.whole * per_part[0])

    # ------------------------------------------------------------------ public
    def search_apis(self, query: str, k: int = 10) -> list[SearchHit]:
        """The k best APIs for a query, best first (equal scores: catalog order)."""
        fused = self._fused(query)
        hits = []
        for j in _best(fused.api_scores, k):
            a = self._apis[int(fused.apis[j])]
            hits.append(SearchHit(category=a.category, tool=a.tool_name, api=a.name, api_id=a.id,
                                  score=float(fused.api_scores[j]), tool_key=a.tool_key,
                                  function_name=self.catalog.function_name(a.id)))
        return hits

    def search_tools(self, query: str, k: int = 10, category: str | None = None, apis_per_tool: int = 3) -> list[ToolHit]:
        """The k best tools (optionally within one category), each with its best APIs."""
        pos = None
        if category is not None:
            pos = self.catalog.categories.index(self.catalog.category(category).name)
        fused = self._fused(query)
        scores = fused.tool_scores
        if pos is not None:
            scores = np.where(self._tool_cat[fused.tools] == pos, scores, 0.0)
        hits = []
        for j in _best(scores, k):
            i = int(fused.tools[j])
            t = self._tools[i]
            own = np.arange(self._tool_starts[i], self._tool_starts[i] + self._tool_sizes[i])
            at = np.minimum(np.searchsorted(fused.apis, own), max(len(fused.apis) - 1, 0))
            found = (fused.apis[at] == own) if len(fused.apis) else np.zeros(len(own), dtype=bool)
            own_scores = np.where(found, fused.api_scores[at] if len(fused.apis) else 0.0, 0.0)
            best = np.argsort(-own_scores, kind="stable")[:apis_per_tool]
            hits.append(ToolHit(category=t.category, tool=t.name, tool_key=t.key, score=float(scores[j]),
                                api_ids=tuple(t.apis[b].id for b in best)))
        return hits

    def search_categories(self, query: str, k: int = 10) -> list[CategoryHit]:
        """The k best categories."""
        cat_s = self._fused(query).category_scores
        return [CategoryHit(category=self._categories[i].name, score=float(cat_s[i])) for i in _best(cat_s, k)]

    def ranked_api_ids(self, scores: np.ndarray, k: int) -> list[str]:
        """The ids of the `k` best APIs by `api_scores_from` scores, best first, as `search_apis` ranks them."""
        return [self._apis[i].id for i in _best(scores, k)]


def max_api_score(searcher: CatalogSearcher) -> float:
    """The highest fused score an API can get: first for every retriever, in every query part, with its tool
    first too (1.0 under z-score fusion, whose scores are scaled by that score, above)."""
    w = searcher.weights
    if w.method == "zscore":
        return 1.0
    per_rank1 = (w.bm25 + (w.dense if searcher.embeddings is not None else 0.0)) / (w.rrf_k + 1)
    return (1.0 + w.whole) * (1.0 + w.tool) * per_rank1


def relevance(score: float, searcher: CatalogSearcher) -> float:
    """A fused score as a 0–1 relevance: 1 / the API's effective rank.

    Reciprocal-rank fusion gives rank r a weight 1/(rrf_k + r), so the scores of ranks 1, 2, 3 differ by ~2 % and
    mean little to a reader. Inverting that curve turns the fused score back into the rank a single retriever would
    have given: effective rank = (rrf_k + 1) · max / score − rrf_k. Relevance 1.0 = first for every retriever (and
    its tool first too); 0.5 ≈ second; 0.1 ≈ tenth; a hit one retriever missed drops further.

    Under z-score fusion a score is already the share of the best score the query allows (1.0 = first for every
    retriever, its tool first too), so it is the relevance as it is.
    """
    top = max_api_score(searcher)
    if top <= 0 or score <= 0:
        return 0.0
    if searcher.weights.method == "zscore":
        return round(min(score / top, 1.0), 3)
    k = searcher.weights.rrf_k
    effective_rank = max((k + 1) * top / score - k, 1.0)
    return round(1.0 / effective_rank, 3)


def _say_why_new_encoder(path: Path, fingerprint: str, model: str) -> None:
    """Before a dense index is built into an absent folder: one line when the same catalog already has dense indexes
    of other encoders beside it (the default encoder changed, or another was chosen): they are left as they are,
    never mixed with this one's vectors."""
    import logging

    if path.exists():
        return  # a damaged or outdated folder: `index_store` said why
    others = []
    for sibling in sorted(path.parent.glob(f"{fingerprint}-*")):
        meta = sibling / "meta.json"
        if sibling == path or "-bm25-" in sibling.name or sibling.is_symlink() or not meta.is_file():
            continue
        try:
            if meta.stat().st_size > 1 << 20:
                continue
            named = json.loads(meta.read_text(encoding="utf-8")).get("model")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(named, str) and named != model:
            others.append(named[:80])
    if others:
        logging.getLogger(__name__).warning(
            "building the dense index %s for encoder %s: this catalog's other dense indexes here were built by %s "
            "(kept, never mixed)", path, model[:80], ", ".join(others[:3]) + (" ..." if len(others) > 3 else ""))


def _trained_recipe(embeddings: Encoder | None) -> str | None:
    """The document recipe a trained encoder's manifest names (``documents.recipe``; "3", the documents of its
    time, for a manifest written before recipes existed); None for other encoders."""
    trained = getattr(embeddings, "trained", None)
    manifest = getattr(trained, "manifest", None)
    if not isinstance(manifest, dict):
        return None
    documents = manifest.get("documents")
    if not isinstance(documents, dict):
        return None
    recipe = documents.get("recipe", documents.get("version"))
    return recipe if isinstance(recipe, str) else None


def _fitted_weights(embeddings: Encoder | None) -> FusionWeights | None:
    """The fusion weights a trained encoder carries (`fusion_weights`, a dict of `FusionWeights` fields), if any."""
    fitted = getattr(embeddings, "fusion_weights", None)
    if not isinstance(fitted, dict) or not fitted:
        return None
    return weights_from_file(fitted)


# ---------------------------------------------------------------------- fusion helpers
# one level's rankings: per retriever (BM25, dense), per query part, (positions best first, their raw scores)
_Scored = tuple[list[tuple[np.ndarray, np.ndarray]], list[tuple[np.ndarray, np.ndarray]]]
# `CatalogSearcher.api_rankings`: the API and tool levels' rankings of one query
Rankings = dict[str, _Scored]


@dataclass(frozen=True, slots=True)
class _Fused:
    """A query's final scores. Only APIs and tools some retriever ranked (at any level) can score above 0, so the
    scores are computed for those candidates alone, never over the whole catalog: `apis` / `tools` are their
    positions (ascending) and `api_scores` / `tool_scores` their scores; every other API or tool scores 0, as the
    formula over the whole catalog gives it. Categories are few: `category_scores` holds all of them."""

    apis: np.ndarray
    api_scores: np.ndarray
    tools: np.ndarray
    tool_scores: np.ndarray
    category_scores: np.ndarray


def _union(scored: _Scored) -> np.ndarray:
    """Every position in one level's rankings (BM25's and the dense index's, all parts), ascending."""
    every = [ids for ids, _ in (*scored[0], *scored[1])]
    return np.unique(np.concatenate(every)).astype(np.int64) if every else np.zeros(0, dtype=np.int64)


def _terms(ranking: list[tuple[np.ndarray, np.ndarray]], columns: np.ndarray, w: FusionWeights) -> np.ndarray:
    """(parts, len(columns)) unweighted terms of one retriever's rankings (positions best first, raw scores);
    `columns` ascending, holding every ranked position (0 elsewhere)."""
    out = np.zeros((len(ranking), len(columns)), dtype=np.float32)
    for p, (ids, raw) in enumerate(ranking):
        if len(ids):
            out[p, np.searchsorted(columns, ids)] = (
                _zscore_terms(raw, w.offset) if w.method == "zscore"
                else 1.0 / (w.rrf_k + 1 + np.arange(len(ids), dtype=np.float32)))
    return out


def _zscore_terms(raw: np.ndarray, offset: float) -> np.ndarray:
    """max(0, (s − mean) / std + offset) for each of one ranking's raw scores `raw`, mean and (population) std being
    theirs; 1 + offset for every score when they do not spread (one candidate, or all equal).

    The mean and std are of the candidates alone: counting the documents BM25 does not match as 0s (as many as the
    ranking falls short of `depth`) gave 85.6 / 74.1 against 86.2 / 74.3 on the tuning part (docs/benchmarks.md,
    "Score fusion")."""
    values = np.asarray(raw, dtype=np.float64)
    mean = float(values.mean())
    std = float(values.std())
    if std <= 1e-9 * max(1.0, abs(mean)):
        return np.full(len(values), 1.0 + offset, dtype=np.float32)
    return np.maximum((values - mean) / std + offset, 0.0).astype(np.float32)


def _weighted(terms: tuple[np.ndarray, np.ndarray], w: FusionWeights) -> np.ndarray:
    """A level's part scores from its BM25 and dense terms, shape (parts, columns)."""
    return np.asarray(w.bm25 * terms[0] + w.dense * terms[1], dtype=np.float32)


def _max_per_group(values: np.ndarray, groups: np.ndarray, size: int) -> np.ndarray:
    """(parts, size): per part, the maximum of `values`' columns in each group (`groups`: each column's group,
    ascending), 0 for groups without a column (scores are never negative)."""
    out = np.zeros((values.shape[0], size), dtype=np.float32)
    if values.shape[1]:
        starts = np.flatnonzero(np.concatenate([[True], groups[1:] != groups[:-1]]))
        out[:, groups[starts]] = np.maximum.reduceat(values, starts, axis=1)
    return out


def _first_per_owner(ids: np.ndarray, sims: np.ndarray, owners: np.ndarray,
                     depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The documents of ranked vector positions `ids` (scores `sims`), each at its first (best) place, the `depth`
    first, with those places' scores."""
    docs = owners[ids]
    _, first = np.unique(docs, return_index=True)
    keep = np.sort(first)[:depth]
    return docs[keep], sims[keep]


def _best(scores: np.ndarray, k: int) -> list[int]:
    """The positions of the (at most) `k` best positive `scores`, best first; equal scores in position order."""
    return [int(i) for i in top_indices(scores, k, np.flatnonzero(scores > 0))] if k > 0 else []


# ---------------------------------------------------------------------- dense helpers
def _normalised(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (all-zero rows stay zero), float32 and C-contiguous (as faiss wants them)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    return np.ascontiguousarray(vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12))


def _embed_documents(embeddings: Encoder, texts: list[str], *, desc: str, progress: bool) -> np.ndarray:
    """Embed in chunks (a tqdm bar on stderr when `progress`); L2-normalised float32."""
    from tqdm import tqdm

    rows: list[np.ndarray] = []
    with tqdm(total=len(texts), desc=desc, unit="doc", file=sys.stderr,
              disable=not progress) as bar:
        for start in range(0, len(texts), _EMBED_CHUNK):
            chunk = texts[start:start + _EMBED_CHUNK]
            vecs = np.asarray(embeddings.embed_documents(chunk), dtype=np.float32)
            if vecs.ndim != 2 or vecs.shape[0] != len(chunk):
                raise ValueError(f"embeddings returned shape {vecs.shape} for {len(chunk)} documents")
            rows.append(vecs)
            bar.update(len(chunk))
    if not rows:
        return np.zeros((0, 1), dtype=np.float32)
    matrix = np.ascontiguousarray(np.vstack(rows), dtype=np.float32)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return matrix
