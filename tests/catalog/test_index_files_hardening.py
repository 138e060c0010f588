"""Persisted search indexes as untrusted files (issue 28, points 10, 11 and 14).

A damaged index folder used to give tracebacks (a deep or out-of-range `meta.json`), wrong rankings with exit 0
(a reversed `indptr`), or a search that failed until the folder was deleted by hand (word ids of 10⁹, `backend:
numba`); a symbolic link named like an index folder was followed on rebuild. Now every file carries a checksum
and its content is checked on load; a bad folder is rebuilt with one warning line, and the results are those of a
fresh index.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.catalog.search import CatalogSearcher

QUERY = "convert miles to kilometers"


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.builtin()


def _ranked(searcher: CatalogSearcher) -> list[tuple[str, float]]:
    return [(h.api_id, round(h.score, 6)) for h in searcher.search_apis(QUERY, 10)]


def _bm25(catalog: Catalog, index_dir: Path) -> CatalogSearcher:
    return CatalogSearcher(catalog, embeddings="none", index_dir=index_dir, progress=False)


def _rehash(folder: Path) -> None:
    """Recompute meta.json's checksums, as someone editing the arrays on purpose would."""
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    meta["files"] = {name: file_digest(folder / name) for name in meta.get("files", ())}
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")


def _npy(name: str, change: Callable[[np.ndarray], np.ndarray], rehash: bool = True) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        path = folder / "apis" / f"{name}.csc.index.npy"
        np.save(path, change(np.load(path)))
        if rehash:
            _rehash(folder)
    return apply


def _json_file(rel: str, change: Callable[[object], object], rehash: bool = True) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        path = folder / rel
        path.write_text(json.dumps(change(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8")
        if rehash:
            _rehash(folder)
    return apply


def _meta_text(text: Callable[[dict], str]) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        (folder / "meta.json").write_text(text(meta), encoding="utf-8")
    return apply


def _vocab_huge(vocab: object) -> object:
    assert isinstance(vocab, dict)
    word = next(iter(vocab))
    return {**vocab, word: 10**9}


def _swap_scores(arr: np.ndarray) -> np.ndarray:
    out = arr.copy()
    out[[0, 1]] = arr[[1, 0]] + 1.0  # other scores, same shape: only the checksum tells
    return out


def _link_out(folder: Path) -> None:
    """Replace a file by a link to an identical copy outside the folder."""
    target = folder.parent / "outside-vocab.json"
    shutil.copy(folder / "apis" / "vocab.index.json", target)
    (folder / "apis" / "vocab.index.json").unlink()
    (folder / "apis" / "vocab.index.json").symlink_to(target)


def _truncate(folder: Path) -> None:
    path = folder / "apis" / "data.csc.index.npy"
    path.write_bytes(path.read_bytes()[:100])
    _rehash(folder)


BM25_DAMAGE: list[tuple[str, Callable[[Path], None], str]] = [
    ("indptr-reversed", _npy("indptr", lambda a: a[::-1].copy(), rehash=False), "checksum"),
    ("indptr-reversed-rehashed", _npy("indptr", lambda a: a[::-1].copy()), "indptr"),
    ("indptr-falling-rehashed", _npy("indptr", lambda a: np.concatenate([a[:1], a[2:3], a[1:2], a[3:]])),
     "indptr"),
    ("scores-swapped", _npy("data", _swap_scores, rehash=False), "checksum"),
    ("scores-nan", _npy("data", lambda a: np.where(np.arange(len(a)) == 3, np.float32("nan"), a)), "non-finite"),
    ("scores-negative", _npy("data", lambda a: -a), "negative"),
    ("doc-ids-out-of-range", _npy("indices", lambda a: a + 10**6), "document ids"),
    ("doc-ids-unsorted", _npy("indices", lambda a: a[::-1].copy()), "ascend"),
    ("indices-int64", _npy("indices", lambda a: a.astype(np.int64)), "int32"),
    ("vocab-ids-1e9", _json_file("apis/vocab.index.json", _vocab_huge), "word ids"),
    ("vocab-ids-strings", _json_file("apis/vocab.index.json", lambda v: {k: str(i) for k, i in v.items()}),  # type: ignore[attr-defined]
     "integer ids"),
    ("backend-numba", _json_file("apis/params.index.json", lambda p: {**p, "backend": "numba"}), "backend"),  # type: ignore[dict-item]
    ("k1-infinite", _json_file("apis/params.index.json", lambda p: {**p, "k1": 1e308}), "k1"),  # type: ignore[dict-item]
    ("method-other", _json_file("apis/params.index.json", lambda p: {**p, "method": "bm25l"}), "method"),  # type: ignore[dict-item]
    ("truncated-array", _truncate, "does not load"),
    ("file-linked-out", _link_out, "not a regular file"),
    ("file-missing", lambda f: (f / "tools" / "indptr.csc.index.npy").unlink(), "missing"),
    ("meta-deep", _meta_text(lambda m: '{"format": 2, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"), "nesting"),
    ("meta-counts-negative", _meta_text(lambda m: json.dumps({**m, "counts": {**m["counts"], "apis": -1}})),
     "counts.apis"),
    ("meta-counts-huge", _meta_text(lambda m: json.dumps({**m, "counts": {**m["counts"], "apis": 10**12}})),
     "counts.apis"),
    ("meta-nan", _meta_text(lambda m: json.dumps(m)[:-1] + ', "documents": NaN}'), "NaN"),
    ("meta-files-type", _meta_text(lambda m: json.dumps({**m, "files": "all of them"})), "files"),
    ("meta-list", _meta_text(lambda m: "[]"), "expected a JSON object"),
    ("meta-not-json", _meta_text(lambda m: "{"), "invalid JSON"),
]


@pytest.mark.parametrize("damage, reason", [pytest.param(d, r, id=i) for i, d, r in BM25_DAMAGE])
def test_a_damaged_bm25_index_is_rebuilt_with_one_warning(damage: Callable[[Path], None], reason: str,
                                                          catalog: Catalog, tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    """Points 10 and 11: any damage to a persisted BM25 folder gives the fresh index's results, one warning naming
    the folder and what is wrong, and a repaired folder that loads silently the next time."""
    fresh = _bm25(catalog, tmp_path / "index")
    expected = _ranked(fresh)
    folder = fresh.bm25_path()
    damage(folder)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        damaged = _bm25(catalog, tmp_path / "index")
        assert _ranked(damaged) == expected
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    message = warnings[0].getMessage()
    assert "\n" not in message and str(folder) in message and "rebuilding it" in message
    assert reason in message, message
    assert not damaged.stats.bm25_loaded
    caplog.clear()
    again = _bm25(catalog, tmp_path / "index")
    assert _ranked(again) == expected and again.stats.bm25_loaded
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_folder_of_the_older_format_is_rebuilt_silently(catalog: Catalog, tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    """A folder written before checksums existed is no damage: rebuilt once, no warning."""
    fresh = _bm25(catalog, tmp_path / "index")
    expected = _ranked(fresh)
    meta_path = fresh.bm25_path() / "meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    del meta["files"], meta["format"]
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    caplog.clear()
    again = _bm25(catalog, tmp_path / "index")
    assert _ranked(again) == expected and not again.stats.bm25_loaded
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


# ---------------------------------------------------------------- dense (faiss) folders
@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> str:
    for mod in ("onnxruntime", "onnx", "tokenizers", "safetensors", "faiss"):
        pytest.importorskip(mod)
    from tests.tiny_encoder import write_tiny_encoder

    folder = write_tiny_encoder(tmp_path_factory.mktemp("encoder") / "m", seed=5, onnx=True)
    return f"minilm:{folder}"


def _faiss_swap(build: Callable[[int, int], object]) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        import faiss

        path = folder / "apis.faiss"
        old = faiss.read_index(str(path))
        path.write_bytes(faiss.serialize_index(build(old.d, old.ntotal)).tobytes())
        _rehash(folder)
    return apply


def _flat(d: int, n: int, metric: str = "ip") -> object:
    import faiss

    index = faiss.IndexFlatIP(d) if metric == "ip" else faiss.IndexFlatL2(d)
    index.add(np.random.default_rng(0).normal(size=(n, d)).astype(np.float32))
    return index


DENSE_DAMAGE: list[tuple[str, Callable[[Path], None], str]] = [
    ("random-bytes", lambda f: ((f / "apis.faiss").write_bytes(os.urandom(2048)), _rehash(f)), "does not load"),
    ("random-bytes-no-rehash", lambda f: (f / "apis.faiss").write_bytes(os.urandom(2048)), "checksum"),
    ("other-dimension", _faiss_swap(lambda d, n: _flat(16, n)), "dimension"),
    ("other-metric", _faiss_swap(lambda d, n: _flat(d, n, "l2")), "metric"),
    ("other-size", _faiss_swap(lambda d, n: _flat(d, n - 1)), "vectors"),
    ("other-encoder", _meta_text(lambda m: json.dumps({**m, "model": "local:0000@128+onnx-int8"})), "encoder"),
]


@pytest.mark.parametrize("damage, reason", [pytest.param(d, r, id=i) for i, d, r in DENSE_DAMAGE])
def test_a_damaged_dense_index_is_rebuilt_with_one_warning(damage: Callable[[Path], None], reason: str,
                                                           encoder: str, catalog: Catalog, tmp_path: Path,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    """Points 10 and 11 for the faiss folder: rebuilt with one warning, same results as fresh."""
    index_dir = tmp_path / "index"
    fresh = CatalogSearcher(catalog, embeddings=encoder, index_dir=index_dir, progress=False)
    expected = _ranked(fresh)
    folder = fresh.index_path()
    assert folder is not None
    damage(folder)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        damaged = CatalogSearcher(catalog, embeddings=encoder, index_dir=index_dir, progress=False)
        assert _ranked(damaged) == expected
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and str(folder) in warnings[0] and reason in warnings[0], warnings
    assert not damaged.stats.dense_loaded
    again = CatalogSearcher(catalog, embeddings=encoder, index_dir=index_dir, progress=False)
    assert _ranked(again) == expected and again.stats.dense_loaded


# ---------------------------------------------------------------- point 14: links named like index folders
@pytest.mark.parametrize("which", ["bm25", "dense"])
def test_a_symlinked_index_folder_is_replaced_never_followed(which: str, encoder: str, catalog: Catalog,
                                                             tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Point 14: an index folder that is a link to another folder (here a stand-in for /etc) is neither read nor
    written through: the link is replaced by a real folder, its target keeps exactly what it held."""
    index_dir = tmp_path / "index"
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "passwd").write_text("root:x:0:0\n", encoding="utf-8")
    probe = CatalogSearcher(catalog, embeddings=encoder if which == "dense" else "none", index_dir=index_dir,
                            progress=False)
    folder = probe.index_path() if which == "dense" else probe.bm25_path()
    assert folder is not None
    index_dir.mkdir()
    folder.symlink_to(etc, target_is_directory=True)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        _ranked(probe)
    assert sorted(p.name for p in etc.iterdir()) == ["passwd"]
    assert (etc / "passwd").read_text(encoding="utf-8") == "root:x:0:0\n"
    assert folder.is_dir() and not folder.is_symlink()
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "symbolic link" in warnings[0]


# ---------------------------------------------------------------- point 10: written whole
def test_a_failed_rewrite_leaves_the_old_folder_whole(catalog: Catalog, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """An index folder is replaced as a whole: a writer that fails half-way leaves the previous folder exactly
    as it was (and no temporary folder behind)."""
    import bm25s

    from langgraph_anytool.catalog.index_store import save_bm25

    fresh = _bm25(catalog, tmp_path / "index")
    _ranked(fresh)
    folder = fresh.bm25_path()
    before = {p.relative_to(folder): file_digest(p) for p in folder.rglob("*") if p.is_file()}
    other = {name: bm25s.BM25() for name in ("apis", "tools", "categories")}
    for name, model in other.items():
        model.index([["other", "words"]] * fresh._counts()[name], show_progress=False)
    calls = {"n": 0}
    real_save = bm25s.BM25.save

    def failing_save(self: object, *args: object, **kwargs: object) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        real_save(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(bm25s.BM25, "save", failing_save)
    save_bm25(folder, other, {"documents": "3"})
    after = {p.relative_to(folder): file_digest(p) for p in folder.rglob("*") if p.is_file()}
    assert after == before
    assert [p.name for p in folder.parent.iterdir() if p.name.startswith(".")] == []
    again = _bm25(catalog, tmp_path / "index")
    again.build()
    assert again.stats.bm25_loaded


def test_the_cli_prints_one_warning_line_and_the_fresh_results(tmp_path: Path) -> None:
    """What a user sees: `anytool search` on a damaged index prints the fresh results and one warning line."""
    env = {**os.environ, "ANYTOOL_EMBEDDINGS": "none", "ANYTOOL_CACHE": "off", "ANYTOOL_INDEX_DIR": str(tmp_path)}
    cmd = [sys.executable, "-m", "langgraph_anytool.cli", "search", QUERY, "--json"]
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == 0, first.stderr
    (folder,) = [p for p in tmp_path.iterdir() if p.name.endswith("-bm25-v3")]
    _npy("indptr", lambda a: a[::-1].copy())(folder)
    second = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert second.returncode == 0 and second.stdout == first.stdout
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and "rebuilding it" in lines[0] and "indptr" in lines[0], second.stderr
