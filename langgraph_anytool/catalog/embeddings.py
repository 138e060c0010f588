"""Embedding models for the dense half of catalog search, as LangChain `Embeddings`.

Any LangChain `Embeddings` works with `Catalog.search`. This module gives our MiniLM encoders a LangChain face,
for use in a user's own LangChain code (vector stores, retrievers):

- `OnnxMiniLMEmbeddings`: all-MiniLM-L6-v2 on ONNX Runtime (`onnx_encoder.OnnxMiniLMEncoder`);
- `MiniLMEmbeddings`: all-MiniLM-L6-v2 on sentence-transformers (`st_encoder.MiniLMEncoder`);
- `StaticEmbeddings`: the static encoders ``minilm:static`` and ``wordllama`` (`static_encoder.StaticEncoder`);
- `resolve_embeddings(spec)` / `default_embeddings()` / `minilm()`: the specs and default policy of `encoders`,
  building these classes.

Catalog search itself resolves specs with `encoders.resolve_encoder`, which builds the plain encoders and so
imports no LangChain; both give the same vectors and share one on-disk index.
"""

from __future__ import annotations

from pathlib import Path

from langchain_core.embeddings import Embeddings

from .encoders import MiniLMClasses, minilm_encoder, resolve_encoder
from .onnx_encoder import OnnxMiniLMEncoder
from .st_encoder import MiniLMEncoder
from .static_encoder import StaticEncoder


class OnnxMiniLMEmbeddings(OnnxMiniLMEncoder, Embeddings):
    """`OnnxMiniLMEncoder` as a LangChain `Embeddings` (the same arguments, vectors and `model_id`)."""


class MiniLMEmbeddings(MiniLMEncoder, Embeddings):
    """`MiniLMEncoder` (sentence-transformers) as a LangChain `Embeddings`."""


class StaticEmbeddings(StaticEncoder, Embeddings):
    """`StaticEncoder` (``minilm:static``, ``wordllama``) as a LangChain `Embeddings`."""


LANGCHAIN_CLASSES = MiniLMClasses(onnx=OnnxMiniLMEmbeddings, st=MiniLMEmbeddings, static=StaticEmbeddings)


def _checked(value: object) -> Embeddings | None:
    if value is not None and not isinstance(value, Embeddings):
        raise TypeError(f"embeddings must be a spec string or a LangChain Embeddings, got {type(value).__name__}")
    return value


def resolve_embeddings(spec: str | Embeddings | None) -> Embeddings | None:
    """A LangChain `Embeddings` for a spec (see `encoders`), or None for BM25-only search."""
    return _checked(resolve_encoder(spec, classes=LANGCHAIN_CLASSES))


def default_embeddings() -> Embeddings | None:
    """`ANYTOOL_EMBEDDINGS` when set; else MiniLM when importable; else None (BM25 only)."""
    return resolve_embeddings(None)


def minilm(precision: str | None = None, model_path: str | Path | None = None) -> Embeddings:
    """MiniLM on ONNX Runtime (`precision` int8 | fp32) when available, else on sentence-transformers.

    `model_path`: a fine-tuned model folder instead of the packaged weights.
    """
    embeddings = minilm_encoder(precision, model_path, classes=LANGCHAIN_CLASSES)
    assert isinstance(embeddings, Embeddings)
    return embeddings
