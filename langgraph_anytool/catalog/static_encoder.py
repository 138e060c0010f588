"""Static (model2vec-style) encoders: a text's vector is the mean of its word pieces' vectors, looked up in a table.

No network and no transformer at query time: encoding a query is a tokenizer call and a table lookup (tens of
microseconds), against milliseconds for MiniLM. The price is quality: a word piece has one vector whatever its
context (docs/benchmarks.md, "Static encoders", has the figures). Two tables:

- ``"minilm:static"`` (`StaticEncoder.distilled`): distilled here, once, from the packaged all-MiniLM-L6-v2
  (``"minilm:static:<DIR>"``: from a model folder instead). Each vocabulary word piece ``t`` is run through our
  ONNX encoder (`onnx_encoder`, fp32, one thread, fixed batches: the same weights give the same bytes) as
  ``[CLS] t [SEP]`` and mean-pooled as MiniLM pools a text; the table is cached under the model dir
  (``$ANYTOOL_MODEL_DIR``) beside the ONNX conversion. At load it is centred, reduced by PCA to `dims` and each
  row scaled by a weight of its token id (`weighting`: ``"zipf"`` log(1 + id), model2vec's rank proxy; ``"none"``).
- ``"wordllama"`` (`StaticEncoder.wordllama`): WordLlama's ``l2_supercat`` 256-d table and tokenizer as shipped
  inside the `wordllama` wheel (MIT), read from its installed files; the package's own code is not imported.

Each has its own `model_id` (recipe included), so its index is never mixed with MiniLM's.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import threading
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ..install.extras import install_hint
from ..sanitize.writes import atomic_file

DISTIL_BATCH = 256  # word pieces per ONNX call when distilling (fixed: part of what makes the bytes)
DISTIL_RECIPE = "cls-t-sep/mean/fp32/threads1/b256"
WEIGHTINGS = ("zipf", "none")
DEFAULT_DIMS = 128  # chosen on the tuning part (docs/benchmarks.md "Static encoders")
DEFAULT_WEIGHTING = "zipf"
STATIC_EXTRA = "static-embeddings"  # the extra that installs `wordllama` (its wheel ships the table)
WORDLLAMA_TABLE = "weights/l2_supercat_256.safetensors"
WORDLLAMA_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
logger = logging.getLogger(__name__)
MAX_TOKENS = 1024  # word pieces of one text (a table lookup has no length limit; this bounds the work)


# ---------------------------------------------------------------------- distillation
def distilled_table_path(model_dir: Path | None = None, cache_dir: Path | None = None) -> Path:
    """Where the distilled table of `model_dir` (default: the packaged MiniLM) is cached."""
    from .minilm_package import packaged_minilm_dir
    from .onnx_encoder import conversion_key, default_model_dir

    folder = model_dir or packaged_minilm_dir()
    key = hashlib.sha256(f"{conversion_key(folder)}\0{DISTIL_RECIPE}".encode()).hexdigest()[:16]
    return (cache_dir or default_model_dir()).expanduser() / f"minilm-static-{key}.npy"


def distil_table(model_dir: Path | None = None, cache_dir: Path | None = None) -> np.ndarray:
    """Every word piece's MiniLM vector (vocab × hidden, float32), distilled once and cached (see the docstring)."""
    target = distilled_table_path(model_dir, cache_dir)
    found = _load_table(target)
    if found is not None:
        return found
    table = compute_table(model_dir, cache_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_file(target, lambda tmp: _save(tmp, table), mode=0o644)
    return table


def _load_table(path: Path) -> np.ndarray | None:
    """A cached table (2-d, float32, finite), or None when missing; a damaged one is removed (made again)."""
    if not path.is_file() or path.is_symlink():
        return None
    try:
        table = np.load(path, allow_pickle=False)
    except (ValueError, EOFError, OSError):
        table = None
    if table is not None and table.ndim == 2 and table.dtype == np.float32 and np.isfinite(table).all():
        return np.asarray(table)
    logger.warning("the cached static table %s is damaged; making it again", path)
    path.unlink()
    return None


def _save(path: Path, table: np.ndarray) -> None:
    with open(path, "wb") as f:  # a handle: `np.save` would add ".npy" to a path
        np.save(f, table, allow_pickle=False)


def compute_table(model_dir: Path | None = None, cache_dir: Path | None = None,
                  progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """The distillation itself (no cache): ``[CLS] t [SEP]`` through the fp32 encoder, mean over the 3 positions."""
    from .minilm_package import packaged_minilm_dir
    from .model_folder import load_tokenizer, load_weights_header, read_config
    from .onnx_encoder import OnnxMiniLMEncoder

    folder = model_dir or packaged_minilm_dir()
    encoder = OnnxMiniLMEncoder(precision="fp32", model_path=model_dir, cache_dir=cache_dir, threads=1,
                                cache_size=0)
    rows = load_weights_header(folder, read_config(folder))  # the embedding table's rows, checked
    tok = load_tokenizer(folder, rows)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    if cls is None or sep is None:
        raise ValueError(f"{folder}/tokenizer.json has no [CLS] or [SEP] token: not a BERT tokenizer")
    table = np.zeros((rows, encoder.dimension), dtype=np.float32)
    for start in range(0, rows, DISTIL_BATCH):
        ids = np.arange(start, min(rows, start + DISTIL_BATCH), dtype=np.int64)
        batch = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], axis=1)
        table[ids] = encoder.hidden_states(batch, np.ones_like(batch)).mean(axis=1)
        if progress is not None:
            progress(int(ids[-1]) + 1, rows)
    return table


def finish_table(raw: np.ndarray, dims: int | None, weighting: str) -> np.ndarray:
    """Centre `raw`, keep its first `dims` principal components (None or ≥ width: all, rotated), weight each row."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"unknown static weighting {weighting!r}: use one of {', '.join(WEIGHTINGS)}")
    x = np.asarray(raw, dtype=np.float64)
    x = x - x.mean(axis=0, keepdims=True)
    width = x.shape[1] if dims is None else min(int(dims), x.shape[1])
    values, vectors = np.linalg.eigh(x.T @ x)  # hidden × hidden: far cheaper than an SVD of the whole table
    comps = vectors[:, np.argsort(-values, kind="stable")[:width]].T
    comps *= np.where(comps[np.arange(width), np.abs(comps).argmax(axis=1)] < 0, -1.0, 1.0)[:, None]  # fixed signs
    out = x @ comps.T
    if weighting == "zipf":
        out *= np.log1p(np.arange(out.shape[0], dtype=np.float64))[:, None]
    return np.ascontiguousarray(out, dtype=np.float32)


# ---------------------------------------------------------------------- the encoder
class StaticEncoder:
    """A static encoder (`embed_documents`, `embed_query`, `query_matrix`, `token_means`); loads lazily.

    `load` returns the table (vocab × dimension, weights folded in) and a `tokenizers.Tokenizer`; `model_id` names
    the vectors (it keys the on-disk index). Use `distilled` or `wordllama` to make one.
    """

    def __init__(self, load: Callable[[], tuple[np.ndarray, Any]], model_id: str, *, cache_size: int = 4096) -> None:
        self._loader = load
        self.model_id = model_id
        self.cache_size = cache_size  # kept for the benchmarks' interface; a lookup is cheaper than a cache
        self._table: np.ndarray | None = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    @classmethod
    def distilled(cls, model_path: str | Path | None = None, *, dims: int | None = DEFAULT_DIMS,
                  weighting: str = DEFAULT_WEIGHTING, cache_dir: str | Path | None = None) -> StaticEncoder:
        """The table distilled from the packaged MiniLM (or `model_path`, a MiniLM-shaped model folder)."""
        if weighting not in WEIGHTINGS:
            raise ValueError(f"unknown static weighting {weighting!r}: use one of {', '.join(WEIGHTINGS)}")
        if dims is not None and not 1 <= dims <= 4096:
            raise ValueError(f"static dims must be between 1 and 4096, got {dims}")
        folder = Path(model_path).expanduser().resolve() if model_path else None
        cache = Path(cache_dir) if cache_dir else None
        source = distilled_table_path(folder, cache).stem.removeprefix("minilm-static-")

        def load() -> tuple[np.ndarray, Any]:
            from .minilm_package import packaged_minilm_dir
            from .model_folder import load_tokenizer

            raw = distil_table(folder, cache)
            done = distilled_table_path(folder, cache).with_suffix(f".pca{dims or 'all'}-{weighting}.npy")
            table = _load_table(done)
            if table is None or table.shape[0] != raw.shape[0]:
                table = finish_table(raw, dims, weighting)
                atomic_file(done, lambda tmp: _save(tmp, table), mode=0o644)
            return table, load_tokenizer(folder or packaged_minilm_dir(), raw.shape[0])

        return cls(load, f"minilm-static:{source}:pca{dims or 'all'}:{weighting}")

    @classmethod
    def wordllama(cls) -> StaticEncoder:
        """WordLlama's l2_supercat 256-d table as shipped in the `wordllama` wheel (its code is not imported)."""
        root = wordllama_dir()
        version = metadata.version("wordllama")

        def load() -> tuple[np.ndarray, Any]:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer

            table = load_file(str(root / WORDLLAMA_TABLE))["embedding.weight"].astype(np.float32)
            tok = Tokenizer.from_file(str(root / WORDLLAMA_TOKENIZER))
            return table, tok

        return cls(load, f"wordllama:l2_supercat_256@{version}")

    def _load(self) -> tuple[np.ndarray, Any]:
        with self._lock:
            if self._table is None:
                table, tok = self._loader()
                tok.no_padding()
                tok.no_truncation()
                self._table, self._tokenizer = table, tok
            return self._table, self._tokenizer

    @property
    def dimension(self) -> int:
        table, _ = self._load()
        return int(table.shape[1])

    def token_means(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Each text's mean word-piece vector (not normalised) and its word-piece count."""
        table, tok = self._load()
        means = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
        counts = np.zeros(len(texts), dtype=np.int64)
        for r, enc in enumerate(tok.encode_batch(list(texts), add_special_tokens=False) if texts else []):
            ids = np.asarray(enc.ids[:MAX_TOKENS], dtype=np.int64)
            ids = ids[(ids >= 0) & (ids < table.shape[0])]
            if ids.size:
                means[r] = table[ids].mean(axis=0)
                counts[r] = ids.size
        return means, counts

    def encode(self, texts: list[str]) -> np.ndarray:
        """L2-normalised float32 vectors, shape (len(texts), dimension); a text without word pieces gives zeros."""
        means, _ = self.token_means(texts)
        return np.asarray(means / np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12), dtype=np.float32)

    def query_matrix(self, texts: list[str]) -> np.ndarray:
        return self.encode(texts)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.encode(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.encode([text])[0].tolist()

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self.encode(list(texts)).tolist()


def wordllama_available() -> bool:
    return importlib.util.find_spec("wordllama") is not None


def wordllama_dir() -> Path:
    """The installed `wordllama` package folder (found without importing it), checked to hold the table."""
    spec = importlib.util.find_spec("wordllama")
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    if not places:
        raise ImportError(f"the 'wordllama' encoder needs the package 'wordllama': {install_hint(STATIC_EXTRA)}")
    root = Path(places[0])
    for name in (WORDLLAMA_TABLE, WORDLLAMA_TOKENIZER):
        if not (root / name).is_file():
            raise ImportError(f"{root / name} is missing: this wordllama installation does not ship its table; "
                              f"reinstall it: {install_hint(STATIC_EXTRA)}")
    return root
