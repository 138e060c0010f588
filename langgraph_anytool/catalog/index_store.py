"""On-disk search indexes: BM25 (bm25s arrays, scored by `bm25_arrays` with numpy alone) and faiss indexes,
written atomically, checked, read memory-mapped.

A folder holds one index per level plus a `meta.json` (the level sizes, the encoder, and the sha256 of every
file). It is written as a whole (`sanitize.writes.write_folder`: a temporary folder beside it, renamed into place at
the end), so a reader sees the old folder, none, or the new one. Loading checks, before anything is used:

- the folder is a folder (a symbolic link is never followed: a link named like an index folder is replaced by a
  real folder on rebuild, its target untouched) and every file a regular file within its size cap;
- `meta.json` field by field (`IndexMeta`), its sizes and encoder the expected ones, and every file's sha256;
- the content: BM25 parameters as this version builds them (backend ``numpy``...), a vocabulary whose ids are
  exactly 0…n-1, CSC arrays of the right types and lengths with `indptr` rising from 0 to the number of entries,
  document ids in range and ascending within a term, finite non-negative scores; faiss indexes of our two kinds,
  of the expected size, inner-product metric and one dimension.

An absent folder (or one of an older format) is built silently; a folder that fails a check is rebuilt with one
warning line saying what was wrong; a sound folder built with another document recipe (`documents.DocumentRecipe`,
recorded as ``documents`` in `meta.json`; "3" before recipes existed) is rebuilt with one line naming both recipes:
its documents are never mixed with this version's. Only the part of the recipe an index holds counts: a dense folder
is kept when the new recipe embeds the same texts (it changed the BM25 documents only), a BM25 folder when the new
recipe indexes the same BM25 documents (`documents.alike_recipes`). Writing failures only warn: search still works from memory.
"""

from __future__ import annotations

import json
import logging
import os
import stat
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import numpy as np
from pydantic import Field

from ..sanitize.files import DataFileError, file_digest, load_json_file
from ..sanitize.schema import FileModel, check_model
from ..sanitize.writes import atomic_write, write_folder
from .bm25_arrays import BUILD_PARAMS, Bm25Arrays
from .dense_index import import_faiss

logger = logging.getLogger(__name__)

IndexFormat = Literal[2]  # 2: meta.json lists every file's sha256 (a bump here rebuilds older indexes)
INDEX_FORMAT: int = get_args(IndexFormat)[0]
MAX_META_BYTES = 1 << 20
MAX_PARAMS_BYTES = 64 << 10
MAX_VOCAB_BYTES = 512 << 20
MAX_LEVEL_SIZE = 100_000_000
BM25_FILES = ("params.index.json", "vocab.index.json", "data.csc.index.npy", "indices.csc.index.npy",
              "indptr.csc.index.npy")


class IndexMeta(FileModel):
    """An index folder's ``meta.json``."""

    format: IndexFormat
    counts: Annotated[dict[str, Annotated[int, Field(ge=0, le=MAX_LEVEL_SIZE)]], Field(max_length=16)]
    files: Annotated[dict[str, Annotated[str, Field(pattern="^[0-9a-f]{64}$")]], Field(max_length=256)]
    model: Annotated[str, Field(max_length=1000)] | None = None
    documents: Annotated[str, Field(max_length=20)] | None = None
    fingerprint: Annotated[str, Field(max_length=200)] | None = None
    catalog: Annotated[str, Field(max_length=10_000)] | None = None


class IndexFault(ValueError):
    """A persisted index folder that fails a check (one line)."""


class IndexOutdated(IndexFault):
    """A sound index folder built with another document recipe than the one asked for (one line)."""


def _digests(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder`, by relative path."""
    return {p.relative_to(folder).as_posix(): file_digest(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def _write_meta(folder: Path, meta: Mapping[str, Any], counts: Mapping[str, int]) -> None:
    full = {**meta, "format": INDEX_FORMAT, "counts": dict(counts), "files": _digests(folder)}
    atomic_write(folder / "meta.json", json.dumps(full, indent=1).encode("utf-8"))


def _regular(path: Path, file: str) -> Path:
    """`path / file`, a regular file (not a symbolic link) inside the folder."""
    target = path / file
    try:
        st = os.lstat(target)
    except OSError:
        raise IndexFault(f"{file} is missing") from None
    if not stat.S_ISREG(st.st_mode):
        raise IndexFault(f"{file} is not a regular file (a symbolic link or a folder)")
    return target


def _checked_meta(path: Path, counts: Mapping[str, int], files: set[str], model: str | None,
                  documents: str | None = None, alike: Collection[str] = ()) -> IndexMeta | None:
    """The folder's checked `meta.json`; None when the folder is absent or of an older format (rebuilt silently);
    `IndexFault` when it fails a check; `IndexOutdated` when `documents` is given and the folder's recipe is
    neither it nor one of `alike` (recipes whose documents of this index are the same)."""
    if path.is_symlink():
        raise IndexFault("it is a symbolic link")
    if not path.exists():
        return None
    if not path.is_dir():
        raise IndexFault("it is not a folder")
    meta_path = _regular(path, "meta.json")
    try:
        raw = load_json_file(meta_path, max_bytes=MAX_META_BYTES, what="index description")
        if isinstance(raw, dict) and raw.get("format") in (None, 1) and "files" not in raw:
            return None  # written before checksums existed: rebuilt once, without a warning
        meta = check_model(IndexMeta, raw, source=str(meta_path))
    except DataFileError as exc:
        raise IndexFault(str(exc)) from None
    if meta.counts != dict(counts):
        raise IndexFault(f"meta.json records sizes {meta.counts}, the catalog has {dict(counts)}")
    if model is not None and meta.model != model:
        raise IndexFault(f"meta.json names encoder {str(meta.model)[:80]!r}, not {model[:80]!r}")
    if documents is not None and meta.documents != documents and meta.documents not in alike:
        raise IndexOutdated(f"it was built with document recipe {str(meta.documents)[:20]!r} and search now uses "
                            f"{documents!r}")
    if set(meta.files) != files:
        raise IndexFault("meta.json does not list exactly the index's files")
    for name in sorted(files):
        if file_digest(_regular(path, name)) != meta.files[name]:
            raise IndexFault(f"{name} does not match its checksum")
    return meta


def _warn_rebuild(kind: str, path: Path, exc: Exception) -> None:
    reason = " ".join(str(exc).split())[:300]
    if isinstance(exc, IndexOutdated):
        logger.warning("rebuilding the %s index %s: %s", kind, path, reason)
        return
    logger.warning("the persisted %s index %s is damaged (%s); rebuilding it", kind, path, reason)


# ---------------------------------------------------------------------- faiss
def save_faiss(path: Path, indexes: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
    """Each index as `<level>.faiss`, then `meta.json` with the level sizes and checksums, as one folder."""
    faiss = import_faiss()

    def fill(tmp: Path) -> None:
        for name, index in indexes.items():
            (tmp / f"{name}.faiss").write_bytes(faiss.serialize_index(index).tobytes())
        _write_meta(tmp, meta, {name: int(index.ntotal) for name, index in indexes.items()})

    try:
        write_folder(path, fill)
    except OSError as exc:
        logger.warning("could not persist the search index under %s: %s", path, exc)


def _read_index(file: Path) -> Any:
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


def _check_faiss(index: Any, name: str, n: int, dimension: int | None) -> None:
    faiss = import_faiss()

    if index.metric_type != faiss.METRIC_INNER_PRODUCT:
        raise IndexFault(f"{name}.faiss ranks by another metric than inner product")
    if not isinstance(index, (faiss.IndexFlatIP, faiss.IndexIVFScalarQuantizer)):
        raise IndexFault(f"{name}.faiss is a {type(index).__name__}, not one of the kinds search builds")
    if int(index.ntotal) != n:
        raise IndexFault(f"{name}.faiss holds {index.ntotal} vectors, not {n}")
    if not 1 <= int(index.d) <= 65_536 or (dimension is not None and int(index.d) != dimension):
        raise IndexFault(f"{name}.faiss holds vectors of dimension {index.d}"
                         + (f", the encoder's are {dimension}" if dimension is not None else ""))


def load_faiss(path: Path, counts: Mapping[str, int], model: str | None = None,
               dimension: int | None = None, documents: str | None = None,
               alike: Collection[str] = ()) -> dict[str, Any] | None:
    """The persisted faiss indexes (memory-mapped where faiss can) when complete, checked (see the module
    docstring) and, when `model` is given, built by that encoder (and when `dimension` is given, of vectors of
    that length; when `documents` is given, from that recipe's documents or those of a recipe in `alike`); None
    otherwise (one warning line when damaged or built from other documents)."""
    try:
        if _checked_meta(path, counts, {f"{name}.faiss" for name in counts}, model, documents, alike) is None:
            return None
        out: dict[str, Any] = {}
        for name, n in counts.items():
            try:
                out[name] = _read_index(path / f"{name}.faiss")
            except (OSError, RuntimeError, ValueError) as exc:
                raise IndexFault(f"{name}.faiss does not load ({str(exc).splitlines()[0][:120]})") from None
            _check_faiss(out[name], name, n, dimension)
        if len({int(index.d) for index in out.values()}) > 1:
            raise IndexFault("the levels' vectors have different dimensions")
    except IndexFault as exc:
        _warn_rebuild("dense", path, exc)
        return None
    return out


# ---------------------------------------------------------------------- BM25
def save_bm25(path: Path, models: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
    """Each bm25s model in its own sub-folder (numpy arrays + vocabulary), then `meta.json`, as one folder."""
    def fill(tmp: Path) -> None:
        for name, model in models.items():
            model.save(str(tmp / name), show_progress=False)
        _write_meta(tmp, meta, {name: int(model.scores["num_docs"]) for name, model in models.items()})

    try:
        write_folder(path, fill)
    except OSError as exc:
        logger.warning("could not persist the BM25 index under %s: %s", path, exc)


def _check_bm25_level(folder: Path, name: str, n: int) -> Bm25Arrays:
    """One level's parameters, vocabulary and CSC arrays (see the module docstring), as `Bm25Arrays`."""
    level = folder / name
    try:
        params = load_json_file(level / "params.index.json", max_bytes=MAX_PARAMS_BYTES, what="BM25 parameters")
        vocab = load_json_file(level / "vocab.index.json", max_bytes=MAX_VOCAB_BYTES, what="BM25 vocabulary")
    except DataFileError as exc:
        raise IndexFault(str(exc)) from None
    if not isinstance(params, dict) or params.get("num_docs") != n:
        raise IndexFault(f"{name}/params.index.json does not record {n} documents")
    for key, value in params.items():  # the parameters every index of ours is built with
        if key not in ("num_docs", "version") and BUILD_PARAMS.get(key, object()) != value:
            raise IndexFault(f"{name}/params.index.json: {key} is {str(value)[:40]!r}, not what search builds")
    if not isinstance(vocab, dict) or not all(type(v) is int for v in vocab.values()):
        raise IndexFault(f"{name}/vocab.index.json is not a map of words to integer ids")
    ids = np.fromiter(vocab.values(), dtype=np.int64, count=len(vocab))
    if len(ids) and (ids.min() < 0 or ids.max() >= len(ids) or len(np.unique(ids)) != len(ids)):
        raise IndexFault(f"{name}/vocab.index.json: the word ids are not exactly 0 to {len(ids) - 1}")
    try:
        data, indices, indptr = (np.load(level / f"{part}.csc.index.npy", mmap_mode="r", allow_pickle=False)
                                 for part in ("data", "indices", "indptr"))
    except (OSError, ValueError) as exc:
        raise IndexFault(f"{name}: an array does not load ({str(exc).splitlines()[0][:120]})") from None
    want = {"data": (data, str(BUILD_PARAMS["dtype"])), "indices": (indices, str(BUILD_PARAMS["int_dtype"])),
            "indptr": (indptr, "int64")}
    for part, (arr, dtype) in want.items():
        if arr.ndim != 1 or arr.dtype != np.dtype(dtype):
            raise IndexFault(f"{name}/{part}.csc.index.npy is {arr.dtype} of {arr.ndim} dimension(s), not {dtype}")
    nnz = len(data)
    columns = len(ids) - (1 if vocab.get("") == len(ids) - 1 else 0)  # bm25s keeps "" (no column) as the last id
    if len(indices) != nnz:
        raise IndexFault(f"{name}: indices.csc.index.npy and data.csc.index.npy differ in length")
    if len(indptr) != columns + 1:
        raise IndexFault(f"{name}/indptr.csc.index.npy has {len(indptr)} entries for {columns} words")
    steps = np.diff(indptr)
    if indptr[0] != 0 or indptr[-1] != nnz or (steps < 0).any():
        raise IndexFault(f"{name}/indptr.csc.index.npy does not rise from 0 to {nnz}")
    if nnz and (indices.min() < 0 or indices.max() >= n):
        raise IndexFault(f"{name}/indices.csc.index.npy holds document ids outside 0 to {n - 1}")
    starts = np.zeros(nnz, dtype=bool)
    starts[indptr[:-1][steps > 0]] = True  # the first entry of each term
    if nnz > 1 and (np.diff(indices.astype(np.int64))[~starts[1:]] <= 0).any():
        raise IndexFault(f"{name}/indices.csc.index.npy: document ids do not ascend within a term")
    if nnz and (not np.isfinite(data).all() or data.min() < 0):
        raise IndexFault(f"{name}/data.csc.index.npy holds negative or non-finite scores")
    return Bm25Arrays(data, indices, indptr, vocab, n, str(BUILD_PARAMS["dtype"]))


def load_bm25(path: Path, counts: Mapping[str, int], documents: str | None = None,
              alike: Collection[str] = ()) -> dict[str, Any] | None:
    """The persisted BM25 indexes as `Bm25Arrays` (memory-mapped; numpy alone, no bm25s or SciPy import) when
    complete and checked (see the module docstring) and, when `documents` is given, built from that recipe's
    documents or those of a recipe in `alike`; None otherwise (one warning line when damaged or built from other
    documents)."""
    files = {f"{name}/{f}" for name in counts for f in BM25_FILES}
    out: dict[str, Any] = {}
    try:
        if _checked_meta(path, counts, files, None, documents, alike) is None:
            return None
        for name, n in counts.items():
            out[name] = _check_bm25_level(path, name, n)
    except IndexFault as exc:
        _warn_rebuild("BM25", path, exc)
        return None
    return out
