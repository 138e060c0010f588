"""A trained encoder folder (written by `anytool index train`): what it holds and how it is read, without torch.

Layout of ``MODEL_DIR``::

    config.json, model.safetensors, tokenizer.json, ...   the fine-tuned sentence-transformers model (torch path)
    model-int8.onnx                                        the same encoder exported to ONNX, int8 (search path)
    manifest.json                                          what it was trained on (catalog, query files, settings)
    fusion.json                                            the fusion weights search uses with it (fixed or fitted)

Every file is read as untrusted input (`model_folder`): the encoder's identity, which keys its persisted search
indexes and its ONNX conversion, is computed from the files' bytes, never taken from the manifest's
``weights_sha256`` (a record for people). The manifest's ``query_hashes`` identify the training queries by their
normalised text (`query_hash`), so `anytool eval retrieval` can refuse to score the model on them (`overlap`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import Field

from ..sanitize.files import load_json_file
from ..sanitize.schema import Count, FileModel, Fraction, check_model, fields_model
from .fusion import FusionWeights
from .model_folder import Sha256Hex, model_file, read_model_json

MANIFEST = "manifest.json"
FusionName = Literal["fusion.json"]
FUSION: str = get_args(FusionName)[0]
MANIFEST_FORMAT = "anytool-trained-encoder/1"


def onnx_file(model_dir: Path, precision: str) -> Path:
    """Where a trained folder keeps its ONNX export at `precision`."""
    return model_dir / f"model-{precision}.onnx"


def query_hash(text: str) -> str:
    """A query's identity: sha256 of its whitespace-normalised text (first 16 hex digits)."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()[:16]


MAX_MANIFEST_BYTES = 64 << 20  # query hashes and ids of ~190k training queries fit in about 20 MB
MAX_QUERIES = 5_000_000
Hex16 = Annotated[str, Field(pattern="^[0-9a-f]{16}$")]


class _OnnxRecord(FileModel):
    file: Annotated[str, Field(max_length=200)] | None = None
    precision: Literal["int8", "fp32"] | None = None
    sha256: Sha256Hex | None = None


class Manifest(FileModel):
    """``manifest.json``: the fields read back (the others are a record for people)."""

    format: Annotated[str, Field(max_length=100)]
    encoder: Annotated[str, Field(max_length=100)] | None = None  # the family `trained:<DIR>` loads (encoders)
    weights_sha256: Sha256Hex | None = None  # recorded for people; the encoder's identity is computed
    query_hashes: Annotated[list[Hex16], Field(max_length=MAX_QUERIES)] = Field(default_factory=list)
    query_ids: Annotated[list[Annotated[str, Field(max_length=1000)]], Field(max_length=MAX_QUERIES)] | None = None
    fusion: FusionName | None = None
    onnx: _OnnxRecord | None = None
    created: Annotated[str, Field(max_length=64)] | None = None
    queries: Annotated[int, Field(ge=0, le=1 << 40)] | None = None
    queries_used: Annotated[int, Field(ge=0, le=1 << 40)] | None = None
    pairs: Annotated[int, Field(ge=0, le=1 << 40)] | None = None


class FusionFile(FileModel):
    """``fusion.json``: the weights (checked as `FusionWeights`' fields) and how they were chosen."""

    weights: dict[str, Any]
    objective: Annotated[str, Field(max_length=1000)] | None = None
    train_scores: dict[str, Fraction] | None = None
    seconds: Count | None = None


@dataclass(frozen=True)
class TrainedModel:
    """A trained encoder folder as read from disk (every field used checked)."""

    path: Path
    manifest: dict[str, Any]
    fusion: dict[str, Any] | None = None
    query_hashes: frozenset[str] = field(default_factory=frozenset)

    def overlap(self, query_texts: Iterable[str]) -> int:
        """How many of `query_texts` the model was trained on."""
        return sum(1 for t in query_texts if query_hash(t) in self.query_hashes)


def is_model_dir(path: Path) -> bool:
    """True when `path` looks like a local sentence-transformers / BERT folder (config + safetensors)."""
    return (path / "config.json").is_file() and (path / "model.safetensors").is_file()


def read_trained(path: str | Path) -> TrainedModel | None:
    """The folder's manifest and fusion weights, or None when it has no manifest (a plain model folder).

    Both files are read from inside the folder (a symbolic link leading out is refused), bounded, and checked
    field by field: a fault is a `ValueError` naming the file and the field.
    """
    root = Path(path).expanduser().resolve()
    man_path = model_file(root, MANIFEST)
    if not man_path.is_file():
        return None
    raw = load_json_file(man_path, max_bytes=MAX_MANIFEST_BYTES, what="manifest")
    if not isinstance(raw, dict) or raw.get("format") != MANIFEST_FORMAT:
        shown = raw.get("format") if isinstance(raw, dict) else None
        raise ValueError(f"{man_path}: not a trained-encoder manifest (format {str(shown)[:40]!r}, "
                         f"expected {MANIFEST_FORMAT!r})")
    manifest = check_model(Manifest, raw, source=str(man_path))
    fusion = None
    fusion_path = model_file(root, FUSION)
    if fusion_path.is_file():
        fusion = read_model_json(root, FUSION, FusionFile, what="fusion weights")
        check_model(fields_model(FusionWeights), fusion.weights, source=str(fusion_path), prefix="weights")
        try:
            FusionWeights(**fusion.weights)
        except ValueError as exc:
            raise ValueError(f"{fusion_path}: {exc}") from None
    return TrainedModel(path=root, manifest=raw, fusion=fusion.model_dump() if fusion is not None else None,
                        query_hashes=frozenset(manifest.query_hashes))
