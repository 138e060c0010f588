"""On-disk search indexes: BM25 (bm25s arrays, read by `bm25_arrays`) and faiss indexes, written atomically, read memory-mapped.

A folder holds one index per level plus a `meta.json` written last (its presence marks a complete folder) with
the level sizes; a folder whose sizes disagree, or any file that fails to read, counts as absent (rebuilt by the
caller). Writing failures only warn: search still works from memory.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to a temporary file beside `path`, then rename it over `path`."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read_meta(path: Path, counts: Mapping[str, int], model: str | None = None) -> dict[str, Any] | None:
    try:
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("counts") != dict(counts):
        return None
    if model is not None and meta.get("model") != model:
        return None
    return meta


# ---------------------------------------------------------------------- faiss
def save_faiss(path: Path, indexes: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
    """Each index as `<level>.faiss`, then `meta.json` with the level sizes."""
    from .dense_index import import_faiss

    faiss = import_faiss()

    try:
        path.mkdir(parents=True, exist_ok=True)
        for name, index in indexes.items():
            atomic_write(path / f"{name}.faiss", faiss.serialize_index(index).tobytes())
        full = {**meta, "counts": {name: int(index.ntotal) for name, index in indexes.items()}}
        atomic_write(path / "meta.json", json.dumps(full, indent=1).encode("utf-8"))
    except OSError as exc:
        logger.warning("could not persist the search index under %s: %s", path, exc)


def _read_index(file: Path) -> Any:
    from .dense_index import import_faiss

    faiss = import_faiss()

    for flag_name in ("IO_FLAG_MMAP_IFC", "IO_FLAG_MMAP"):
        flag = getattr(faiss, flag_name, None)
        if flag is None:
            continue
        try:
            return faiss.read_index(str(file), flag)
        except RuntimeError:
            continue
    return faiss.read_index(str(file))


def load_faiss(path: Path, counts: Mapping[str, int], model: str | None = None) -> dict[str, Any] | None:
    """The persisted faiss indexes (memory-mapped where faiss can) when complete, of the expected sizes and, when
    `model` is given, built by that encoder (the `model` its `meta.json` records; another encoder → rebuilt)."""
    if _read_meta(path, counts, model) is None:
        return None
    out: dict[str, Any] = {}
    try:
        for name, n in counts.items():
            out[name] = _read_index(path / f"{name}.faiss")
            if out[name].ntotal != n:
                return None
    except (OSError, RuntimeError, ValueError):
        return None
    return out


# ---------------------------------------------------------------------- BM25
def save_bm25(path: Path, models: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
    """Each bm25s model in its own sub-folder (numpy arrays + vocabulary), then `meta.json`."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        for name, model in models.items():
            tmp = Path(tempfile.mkdtemp(dir=path, prefix=f".{name}."))
            try:
                model.save(str(tmp), show_progress=False)
                final = path / name
                if final.exists():
                    shutil.rmtree(final)
                os.replace(tmp, final)
            finally:
                if tmp.exists():
                    shutil.rmtree(tmp, ignore_errors=True)
        full = {**meta, "counts": {name: int(model.scores["num_docs"]) for name, model in models.items()}}
        atomic_write(path / "meta.json", json.dumps(full, indent=1).encode("utf-8"))
    except OSError as exc:
        logger.warning("could not persist the BM25 index under %s: %s", path, exc)


def load_bm25(path: Path, counts: Mapping[str, int]) -> dict[str, Any] | None:
    """The persisted BM25 indexes (arrays memory-mapped) when complete and of the expected sizes: `Bm25Arrays`
    (numpy only), or a bm25s model for a method that needs more than the saved weights."""
    from .bm25_arrays import Bm25Arrays

    if _read_meta(path, counts) is None:
        return None
    out: dict[str, Any] = {}
    try:
        for name, n in counts.items():
            model: Any = Bm25Arrays.load(path / name)
            if model is None:
                import bm25s

                model = bm25s.BM25.load(str(path / name), mmap=True, show_progress=False, verbosity=0)
            if int(model.scores["num_docs"]) != n:
                return None
            out[name] = model
    except (OSError, ValueError, KeyError, RuntimeError):
        return None
    return out
