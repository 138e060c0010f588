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
from typing import Any

from ..sanitize.files import Field, check_object, check_value, load_json_file
from .fusion import FUSION_WEIGHT_FIELDS, FusionWeights
from .model_folder import HEX64, model_file, read_model_json

MANIFEST = "manifest.json"
FUSION = "fusion.json"
MANIFEST_FORMAT = "anytool-trained-encoder/1"


def onnx_file(model_dir: Path, precision: str) -> Path:
    """Where a trained folder keeps its ONNX export at `precision`."""
    return model_dir / f"model-{precision}.onnx"


def query_hash(text: str) -> str:
    """A query's identity: sha256 of its whitespace-normalised text (first 16 hex digits)."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()[:16]


MAX_MANIFEST_BYTES = 64 << 20  # query hashes and ids of ~190k training queries fit in about 20 MB
MANIFEST_FIELDS: dict[str, Field] = {
    "format": Field("str", required=True, max_len=100),
    "weights_sha256": Field("str", pattern=HEX64),  # recorded for people; the encoder's identity is computed
    "query_hashes": Field("list", default=[], max_len=5_000_000, items=Field("str", pattern="[0-9a-f]{16}")),
    "query_ids": Field("list", max_len=5_000_000, items=Field("str", max_len=1000)),
    "fusion": Field("str", nullable=True, choices=(FUSION,)),
    "onnx": Field("object", nullable=True, fields={"file": Field("str", max_len=200),
                                                   "precision": Field("str", choices=("int8", "fp32")),
                                                   "sha256": Field("str", pattern=HEX64)}),
    "created": Field("str", max_len=64),
    "queries": Field("int", low=0, high=1 << 40),
    "queries_used": Field("int", low=0, high=1 << 40),
    "pairs": Field("int", low=0, high=1 << 40),
}
FUSION_FILE_FIELDS: dict[str, Field] = {
    "weights": Field("object", required=True),  # checked against fusion.FUSION_WEIGHT_FIELDS
    "objective": Field("str", max_len=1000),
    "train_scores": Field("object", items=Field("float", low=0.0, high=1.0)),
    "seconds": Field("float", low=0.0),
}


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
    manifest = check_object(raw, MANIFEST_FIELDS, source=str(man_path))
    fusion = None
    fusion_path = model_file(root, FUSION)
    if fusion_path.is_file():
        fusion = read_model_json(root, FUSION, FUSION_FILE_FIELDS, what="fusion weights")
        fusion["weights"] = check_value(fusion["weights"], Field("object", fields=FUSION_WEIGHT_FIELDS, extra=False),
                                        source=str(fusion_path), field="weights")
        try:
            FusionWeights(**fusion["weights"])
        except ValueError as exc:
            raise ValueError(f"{fusion_path}: {exc}") from None
    return TrainedModel(path=root, manifest=manifest, fusion=fusion,
                        query_hashes=frozenset(manifest["query_hashes"]))
