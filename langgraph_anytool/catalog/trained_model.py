"""A trained encoder folder (written by `anytool index train`): what it holds and how it is read, without torch.

Layout of ``MODEL_DIR``::

    config.json, model.safetensors, tokenizer.json, ...   the fine-tuned sentence-transformers model (torch path)
    model-int8.onnx                                        the same encoder exported to ONNX, int8 (search path)
    manifest.json                                          what it was trained on (catalog, query files, settings)
    fusion.json                                            the fusion weights search uses with it (fixed or fitted)

The manifest's ``query_hashes`` identify the training queries by their normalised text (`query_hash`), so
`anytool eval retrieval` can refuse to score the model on them (`overlap`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
FUSION = "fusion.json"
MANIFEST_FORMAT = "anytool-trained-encoder/1"
FUSION_FIELDS = ("bm25", "dense", "tool", "whole", "rrf_k", "depth")


def onnx_file(model_dir: Path, precision: str) -> Path:
    """Where a trained folder keeps its ONNX export at `precision`."""
    return model_dir / f"model-{precision}.onnx"


def query_hash(text: str) -> str:
    """A query's identity: sha256 of its whitespace-normalised text (first 16 hex digits)."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()[:16]


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    """The sha256 of a file's bytes (hex)."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


@dataclass(frozen=True)
class TrainedModel:
    """A trained encoder folder as read from disk."""

    path: Path
    manifest: dict[str, Any]
    fusion: dict[str, Any] | None = None
    query_hashes: frozenset[str] = field(default_factory=frozenset)

    @property
    def weights_sha256(self) -> str:
        return str(self.manifest.get("weights_sha256") or "")

    def overlap(self, query_texts: Iterable[str]) -> int:
        """How many of `query_texts` the model was trained on."""
        return sum(1 for t in query_texts if query_hash(t) in self.query_hashes)


def is_model_dir(path: Path) -> bool:
    """True when `path` looks like a local sentence-transformers / BERT folder (config + safetensors)."""
    return (path / "config.json").is_file() and (path / "model.safetensors").is_file()


def read_trained(path: str | Path) -> TrainedModel | None:
    """The folder's manifest and fusion weights, or None when it has no manifest (a plain model folder).

    A manifest or fusion file that is not valid JSON of the expected shape is a `ValueError` naming the file.
    """
    root = Path(path).expanduser()
    man_path = root / MANIFEST
    if not man_path.is_file():
        return None
    manifest = _read_json(man_path)
    if manifest.get("format") != MANIFEST_FORMAT:
        raise ValueError(f"{man_path}: not a trained-encoder manifest (format {manifest.get('format')!r}, "
                         f"expected {MANIFEST_FORMAT!r})")
    hashes = manifest.get("query_hashes", [])
    if not isinstance(hashes, list) or not all(isinstance(h, str) for h in hashes):
        raise ValueError(f"{man_path}: field 'query_hashes' must be a list of strings")
    fusion = None
    fusion_path = root / FUSION
    if fusion_path.is_file():
        fusion = _read_json(fusion_path)
        weights = fusion.get("weights")
        if not isinstance(weights, dict) or not set(weights) <= set(FUSION_FIELDS):
            raise ValueError(f"{fusion_path}: field 'weights' must be an object with keys among "
                             f"{', '.join(FUSION_FIELDS)}")
    return TrainedModel(path=root, manifest=manifest, fusion=fusion, query_hashes=frozenset(hashes))


def weights_digest(model_dir: Path) -> str:
    """A content digest of a model folder's weights: the manifest's when trained here, else sha256 of the file."""
    trained = read_trained(model_dir)
    if trained is not None and trained.weights_sha256:
        return trained.weights_sha256[:16]
    return file_sha256(model_dir / "model.safetensors")[:16]


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read it as JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data
