"""Hybrid catalog search: BM25 + dense vectors (faiss) fused by weighted reciprocal-rank fusion.

Three levels are indexed: APIs, tools and categories. A query is searched as a whole and sentence by sentence
(multi-step requests ask for one thing per sentence); at every level each part gets

    score_part(d) = w_bm25 / (c + rank_bm25(d)) + w_dense / (c + rank_dense(d))        (0 beyond `depth`)

An API's part score adds `w_tool` times its tool's part score; the final score is the best sentence's score plus
`w_whole` times the whole query's score. Tools also get the best score of their APIs, categories that of their tools.

Dense vectors are L2-normalised in `IndexFlatIP` indexes persisted under `index_dir` (default: env
``ANYTOOL_INDEX_DIR``, else ``~/.cache/langgraph-anytool/index``) in a folder keyed by the catalog fingerprint, the
embedding model id and the document format version, so a second start does not re-embed. Files are written to a
temporary name and renamed. BM25 indexes are rebuilt in memory (fast).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .documents import (
    DOCUMENT_VERSION,
    api_dense_text,
    api_document,
    category_document,
    split_query,
    tokenize,
    tool_document,
)
from .embeddings import embeddings_id, resolve_embeddings

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from .catalog import Catalog

logger = logging.getLogger(__name__)

ENV_INDEX_DIR = "ANYTOOL_INDEX_DIR"
PROGRESS_THRESHOLD = 1000
_EMBED_CHUNK = 256
_NO_MATCH_TOKEN = "_"  # never produced by `tokenize`: stands in for documents without words


def default_index_dir() -> Path:
    """``$ANYTOOL_INDEX_DIR``, else ``$XDG_CACHE_HOME/langgraph-anytool/index`` (``~/.cache`` by default)."""
    env = os.environ.get(ENV_INDEX_DIR)
    if env:
        return Path(env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(cache).expanduser() / "langgraph-anytool" / "index"


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


@dataclass(frozen=True, slots=True)
class FusionWeights:
    """The few global knobs of the ranking (see the module docstring)."""

    bm25: float = 1.5
    dense: float = 1.0
    tool: float = 0.5
    whole: float = 0.5
    rrf_k: int = 60
    depth: int = 200  # candidates taken from each retriever for each query part


@dataclass
class BuildStats:
    """What the last build did and how long it took (seconds)."""

    bm25_seconds: float = 0.0
    dense_seconds: float = 0.0
    dense_loaded: bool = False  # True when the dense index came from disk
    embedded_documents: int = 0
    index_path: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class _Level:
    """BM25 + optional dense index over one kind of document."""

    def __init__(self, name: str, docs: list[str]) -> None:
        import bm25s

        self.name = name
        self.size = len(docs)
        self.bm25 = bm25s.BM25()
        if docs:
            self.bm25.index([tokenize(d) or [_NO_MATCH_TOKEN] for d in docs], show_progress=False)
        self.dense: Any = None  # faiss.Index

    def part_scores(self, tokens: Sequence[list[str]], vectors: np.ndarray | None, w: FusionWeights) -> np.ndarray:
        """Weighted RRF contributions, shape (parts, size)."""
        out = np.zeros((len(tokens), self.size), dtype=np.float32)
        if not self.size:
            return out
        depth = min(w.depth, self.size)
        for p, toks in enumerate(tokens):
            if not toks:
                continue
            scores = np.asarray(self.bm25.get_scores(toks), dtype=np.float32)
            top = np.argpartition(-scores, depth - 1)[:depth] if depth < self.size else np.arange(self.size)
            top = top[scores[top] > 0]
            top = top[np.argsort(-scores[top], kind="stable")]
            out[p, top] += w.bm25 / (w.rrf_k + 1 + np.arange(len(top), dtype=np.float32))
        if vectors is not None and self.dense is not None:
            _, idx = self.dense.search(vectors, depth)
            ranks = w.dense / (w.rrf_k + 1 + np.arange(depth, dtype=np.float32))
            for p in range(len(tokens)):
                valid = idx[p] >= 0
                out[p, idx[p][valid]] += ranks[valid]
        return out


class CatalogSearcher:
    """Hybrid search over a catalog's APIs, tools and categories; builds lazily and thread-safely.

    `embeddings`: a LangChain `Embeddings`, a spec string (``"minilm"``, ``"openai:<model>"``, ``"none"``) or None
    for the default policy of `embeddings.default_embeddings` (env ``ANYTOOL_EMBEDDINGS``, else MiniLM when
    installed, else BM25 only). `index_dir`: where dense indexes persist (None → `default_index_dir()`).
    """

    def __init__(
        self,
        catalog: Catalog,
        *,
        embeddings: Embeddings | str | None = None,
        index_dir: str | Path | None = None,
        weights: FusionWeights | None = None,
        progress: bool = True,
    ) -> None:
        self.catalog = catalog
        self.embeddings = resolve_embeddings(embeddings)
        self.index_dir = Path(index_dir).expanduser() if index_dir else default_index_dir()
        self.weights = weights or FusionWeights()
        self.progress = progress
        self.stats = BuildStats()
        self._lock = threading.Lock()
        self._built = False
        # APIs in catalog order grouped by tool (contiguous), tools grouped by category.
        self._categories = [catalog.category(c) for c in catalog.categories]
        self._tools = [t for c in self._categories for t in c.tools]
        self._apis = [a for t in self._tools for a in t.apis]
        self._tool_sizes = np.array([len(t.apis) for t in self._tools], dtype=np.int64)
        self._api_tool = np.repeat(np.arange(len(self._tools)), self._tool_sizes)
        self._cat_sizes = np.array([len(c.tools) for c in self._categories], dtype=np.int64)
        self._tool_cat = np.repeat(np.arange(len(self._categories)), self._cat_sizes)
        self._levels: dict[str, _Level] = {}

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

    def build(self) -> BuildStats:
        """Build (or load) every index now; later calls return at once."""
        with self._lock:
            if not self._built:
                self._build()
                self._built = True
        return self.stats

    def _documents(self) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """Per level: the BM25 documents and the (shorter) texts to embed."""
        sparse = {
            "apis": [api_document(a, t.description) for t in self._tools for a in t.apis],
            "tools": [tool_document(t) for t in self._tools],
            "categories": [category_document(c) for c in self._categories],
        }
        dense = {
            "apis": [api_dense_text(a) for a in self._apis],
            "tools": sparse["tools"],
            "categories": sparse["categories"],
        }
        return sparse, dense

    def _build(self) -> None:
        sparse, dense = self._documents()
        t0 = time.perf_counter()
        levels = {name: _Level(name, texts) for name, texts in sparse.items()}
        self.stats.bm25_seconds = time.perf_counter() - t0
        if self.embeddings is not None:
            t0 = time.perf_counter()
            self._attach_dense(levels, dense)
            self.stats.dense_seconds = time.perf_counter() - t0
        self._levels = levels

    def _attach_dense(self, levels: dict[str, _Level], docs: dict[str, list[str]]) -> None:
        import faiss

        path = self.index_path()
        assert path is not None and self.embeddings is not None
        self.stats.index_path = str(path)
        loaded = _load_indexes(path, {name: len(texts) for name, texts in docs.items()})
        if loaded is not None:
            for name, index in loaded.items():
                levels[name].dense = index
            self.stats.dense_loaded = True
            return
        indexes: dict[str, Any] = {}
        for name, texts in docs.items():
            vectors = _embed_documents(self.embeddings, texts, desc=f"embedding {name}", progress=self.progress)
            self.stats.embedded_documents += len(texts)
            index = faiss.IndexFlatIP(vectors.shape[1] if len(vectors) else 1)
            if len(vectors):
                index.add(vectors)
            indexes[name] = index
            levels[name].dense = index
        _save_indexes(path, indexes, {"model": embeddings_id(self.embeddings), "documents": DOCUMENT_VERSION,
                                      "fingerprint": self.catalog.fingerprint(), "catalog": self.catalog.name})

    # ------------------------------------------------------------------ scoring
    def _scores(self, query: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Final API, tool and category scores for a query."""
        if not query or not query.strip():
            raise ValueError("empty query")
        self.build()
        w = self.weights
        parts = [query.strip()]
        sentences = split_query(query)
        if len(sentences) > 1:
            parts += sentences
        tokens = [tokenize(p) for p in parts]
        vectors = None
        if self.embeddings is not None:
            vectors = np.asarray(self._embed_queries(parts), dtype=np.float32)
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        api_p = self._levels["apis"].part_scores(tokens, vectors, w)
        tool_p = self._levels["tools"].part_scores(tokens, vectors, w)
        cat_p = self._levels["categories"].part_scores(tokens, vectors, w)
        api_total = api_p + w.tool * tool_p[:, self._api_tool]
        tool_total = tool_p + self._max_per_group(api_p, self._tool_sizes)
        cat_total = cat_p + self._max_per_group(tool_total, self._cat_sizes)
        return self._combine_parts(api_total), self._combine_parts(tool_total), self._combine_parts(cat_total)

    def _embed_queries(self, parts: list[str]) -> list[list[float]]:
        """One batch when the embeddings offer `embed_queries` (as `MiniLMEmbeddings` does), else one call each."""
        assert self.embeddings is not None
        batch = getattr(self.embeddings, "embed_queries", None)
        if callable(batch):
            return list(batch(parts))
        return [self.embeddings.embed_query(p) for p in parts]

    def _combine_parts(self, per_part: np.ndarray) -> np.ndarray:
        """Best sentence + `whole` × whole query (row 0); one-part queries: (1 + whole) × whole query."""
        if per_part.shape[0] == 1:
            return np.asarray((1.0 + self.weights.whole) * per_part[0])
        return np.asarray(per_part[1:].max(axis=0) + self.weights.whole * per_part[0])

    @staticmethod
    def _max_per_group(values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """Per-part maximum over contiguous groups of columns of the given sizes (0 for empty groups)."""
        out = np.zeros((values.shape[0], len(sizes)), dtype=np.float32)
        nonempty = sizes > 0
        if values.shape[1] and nonempty.any():
            starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
            out[:, nonempty] = np.maximum.reduceat(values, starts[nonempty], axis=1)
        return out

    @staticmethod
    def _top(scores: np.ndarray, k: int, mask: np.ndarray | None = None) -> list[int]:
        if mask is not None:
            scores = np.where(mask, scores, 0.0)
        k = min(k, len(scores))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        return [int(i) for i in top if scores[i] > 0]

    # ------------------------------------------------------------------ public
    def search_apis(self, query: str, k: int = 10) -> list[SearchHit]:
        """The k best APIs for a query, best first."""
        api_s, _, _ = self._scores(query)
        hits = []
        for i in self._top(api_s, k):
            a = self._apis[i]
            hits.append(SearchHit(category=a.category, tool=a.tool_name, api=a.name, api_id=a.id,
                                  score=float(api_s[i]), tool_key=a.tool_key,
                                  function_name=self.catalog.function_name(a.id)))
        return hits

    def search_tools(self, query: str, k: int = 10, category: str | None = None, apis_per_tool: int = 3) -> list[ToolHit]:
        """The k best tools (optionally within one category), each with its best APIs."""
        mask = None
        if category is not None:
            pos = self.catalog.categories.index(self.catalog.category(category).name)
            mask = self._tool_cat == pos
        api_s, tool_s, _ = self._scores(query)
        starts = np.concatenate([[0], np.cumsum(self._tool_sizes)])
        hits = []
        for i in self._top(tool_s, k, mask):
            t = self._tools[i]
            own = api_s[starts[i]:starts[i + 1]]
            best = np.argsort(-own, kind="stable")[:apis_per_tool]
            hits.append(ToolHit(category=t.category, tool=t.name, tool_key=t.key, score=float(tool_s[i]),
                                api_ids=tuple(t.apis[j].id for j in best)))
        return hits

    def search_categories(self, query: str, k: int = 10) -> list[CategoryHit]:
        """The k best categories."""
        _, _, cat_s = self._scores(query)
        return [CategoryHit(category=self._categories[i].name, score=float(cat_s[i])) for i in self._top(cat_s, k)]


# ---------------------------------------------------------------------- dense helpers
def _embed_documents(embeddings: Embeddings, texts: list[str], *, desc: str, progress: bool) -> np.ndarray:
    """Embed in chunks (tqdm on stderr above `PROGRESS_THRESHOLD` documents); L2-normalised float32."""
    from tqdm import tqdm

    rows: list[np.ndarray] = []
    with tqdm(total=len(texts), desc=desc, unit="doc", file=sys.stderr,
              disable=not progress or len(texts) <= PROGRESS_THRESHOLD) as bar:
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


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _save_indexes(path: Path, indexes: dict[str, Any], meta: dict[str, Any]) -> None:
    """Write each index, then `meta.json` last (its presence marks a complete index). Failures only warn."""
    import faiss

    try:
        path.mkdir(parents=True, exist_ok=True)
        for name, index in indexes.items():
            _atomic_write(path / f"{name}.faiss", faiss.serialize_index(index).tobytes())
        meta = {**meta, "counts": {name: int(index.ntotal) for name, index in indexes.items()}}
        _atomic_write(path / "meta.json", json.dumps(meta, indent=1).encode("utf-8"))
    except OSError as exc:
        logger.warning("could not persist the search index under %s: %s", path, exc)


def _load_indexes(path: Path, counts: dict[str, int]) -> dict[str, Any] | None:
    """The persisted indexes when complete and of the expected sizes, else None."""
    import faiss

    try:
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
        if meta.get("counts") != counts:
            return None
        out = {}
        for name in counts:
            raw = np.frombuffer((path / f"{name}.faiss").read_bytes(), dtype=np.uint8)
            out[name] = faiss.deserialize_index(raw)
            if out[name].ntotal != counts[name]:
                return None
        return out
    except (OSError, ValueError, RuntimeError):
        return None
