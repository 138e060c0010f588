"""Model-folder and index-file attack classes of the bomb-and-fault benchmark (issue 28, points 6, 10, 11, 12, 14,
16), for `benchmarks/hardening.py`.

Each class builds tiny encoder folders (`tests/tiny_encoder.py`) or a persisted index of the builtin catalog,
damages them the ways the tests enumerate (`tests/catalog/test_model_folder_hardening.py`,
`tests/catalog/test_index_files_hardening.py`, `tests/eval/test_train_hardening.py`), and counts an attempt as
held when it ends as the issue asks: one `anytool: error:` line naming the file (exit 2), nothing read or written
outside the folder, no shared identity; for an index, the fresh index's results with one warning line.
Run one class alone: `python benchmarks/hardening_attacks/models.py [CLASS ...]`.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

QUERY = "convert miles to kilometers"


@contextlib.contextmanager
def _scene() -> Iterator[Path]:
    """A scratch folder; the ONNX conversion cache and the response cache kept inside it."""
    import pytest

    with tempfile.TemporaryDirectory(prefix="anytool-models-attack-") as tmp, pytest.MonkeyPatch.context() as env:
        env.setenv("ANYTOOL_MODEL_DIR", str(Path(tmp) / "onnx-cache"))
        env.setenv("ANYTOOL_CACHE", "off")
        env.setenv("ANYTOOL_EMBEDDINGS", "none")
        yield Path(tmp)


def _cli(args: list[str]) -> tuple[int, str, str]:
    from langgraph_anytool.cli.app import main

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = main(args)
    return rc, out.getvalue(), err.getvalue()


def _refused(rc: int, err: str, *needles: str) -> bool:
    lines = err.strip().splitlines()
    return (rc == 2 and len(lines) == 1 and lines[0].startswith("anytool: error:") and "Traceback" not in err
            and all(n in lines[0] for n in needles))


def _held(attempt: Callable[[], bool]) -> bool:
    """One attempt's verdict; an exception that escapes is an attempt that did not hold."""
    try:
        return bool(attempt())
    except Exception:  # a traceback is what the issue reports, so it counts against us
        return False


def _search(folder: Path, index_dir: Path, prefix: str = "minilm:") -> tuple[int, str, str]:
    return _cli(["search", QUERY, "--embeddings", f"{prefix}{folder}", "--index-dir", str(index_dir), "--json"])


# ------------------------------------------------------------------------------------------ model folders
def model_folders() -> tuple[int, int]:
    """Bad files of every kind, foreign ONNX graphs, claimed identities, links out, fusion weights, train settings."""
    from tests.catalog import test_model_folder_hardening as t
    from tests.tiny_encoder import write_tiny_encoder

    held: list[bool] = []
    with _scene() as tmp:
        src = {"trained": write_tiny_encoder(tmp / "src" / "trained", seed=1, onnx=True, manifest=True,
                                             fusion=t.FUSION),
               "plain": write_tiny_encoder(tmp / "src" / "plain", seed=2),
               "other": write_tiny_encoder(tmp / "src" / "other", seed=3, onnx=True, manifest=True, fusion=t.FUSION)}
        count = iter(range(10**6))

        def fresh(kind: str) -> Path:
            target = tmp / f"case{next(count)}" / kind
            shutil.copytree(src[kind], target)
            return target

        index = tmp / "index"
        def bad_file(kind: str, change: Callable[[Path], None], words: tuple[str, ...]) -> bool:
            folder = fresh(kind)
            change(folder)
            rc, _, err = _search(folder, index)
            return _refused(rc, err, *words)

        def graph(case: str) -> bool:
            folder = fresh("trained")
            t._graph_case(case)(folder)
            rc, _, err = _search(folder, index)
            return _refused(rc, err, "model-int8.onnx")

        def weights(text: str, field: str) -> bool:
            folder = fresh("trained")
            (folder / "fusion.json").write_text(text, encoding="utf-8")
            rc, out, err = _search(folder, index)
            return _refused(rc, err, "fusion.json", field) and out == ""

        def link(kind: str, name: str) -> bool:
            folder = fresh(kind)
            t.link_out(folder, name, folder.parent / "elsewhere")
            rc, out, err = _search(folder, index)
            return _refused(rc, err, name, "symbolic link") and "SECRET-VALUE" not in out + err

        def big_manifest() -> bool:
            folder = fresh("trained")
            with (folder / "manifest.json").open("r+b") as fh:
                fh.truncate(65 << 20)
            rc, _, err = _search(folder, index)
            return _refused(rc, err, "manifest.json", "at most")

        held += [_held(lambda k=k, c=c, w=w: bad_file(k, c, w)) for k, _, c, w in t.BAD_FOLDERS]  # point 10
        held += [_held(lambda c=c: graph(c)) for c in ["loop", *(c for c, _ in t.GRAPH_CASES)]]  # point 12
        held += [_held(lambda x=x, f=f: weights(x, f)) for x, f in t.FUSION_CASES]  # point 11
        held += [_held(lambda k=k, n=n: link(k, n)) for k, n in t.LINK_CASES]  # point 14
        held += _identities(fresh, t, tmp)  # point 6
        held.append(_held(big_manifest))  # point 12
        held += _sentence_transformers(fresh)  # point 16
        held += _train_settings(tmp)  # points 10 and 12
    return len(held), sum(held)


def _identities(fresh: Callable[[str], Path], t: Any, tmp: Path) -> list[bool]:
    """Point 6: claimed digests, another export or tokenizer under the same weights; a traversal claim."""
    from langgraph_anytool.catalog.embeddings import MiniLMEmbeddings, resolve_embeddings

    def differ(poison: Callable[[Path, Path], None]) -> bool:
        victim, attacker = fresh("trained"), fresh("other")
        poison(victim, attacker)
        ids = [getattr(resolve_embeddings(f"minilm:{f}"), "model_id", "") for f in (victim, attacker)]
        return ids[0] != ids[1]

    def differ_torch() -> bool:
        victim, attacker = fresh("trained"), fresh("other")
        t._poison_claim(victim, attacker)
        return MiniLMEmbeddings(model_path=victim).model_id != MiniLMEmbeddings(model_path=attacker).model_id

    def stays_in_cache() -> bool:
        cache = Path(os.environ["ANYTOOL_MODEL_DIR"])
        (cache / "minilm-t").mkdir(parents=True, exist_ok=True)
        folder = fresh("plain")
        (folder / "manifest.json").write_text(json.dumps({"format": "anytool-trained-encoder/1",
                                                          "weights_sha256": "/../../x00000000"}), encoding="utf-8")
        before = set(tmp.rglob("*"))
        _search(folder, tmp / "index")
        return not [p for p in set(tmp.rglob("*")) - before
                    if p.is_file() and cache not in p.parents and (tmp / "index") not in p.parents]

    out = [_held(lambda p=p: differ(p)) for p in (t._poison_claim, t._poison_onnx, t._poison_tokenizer)]
    return [*out, _held(differ_torch), _held(stays_in_cache)]


def _sentence_transformers(fresh: Callable[[str], Path]) -> list[bool]:
    """Point 16: a modules.json naming a foreign class; an older sentence-transformers."""
    try:
        import sentence_transformers
    except ImportError:
        return []
    from langgraph_anytool.catalog.embeddings import resolve_embeddings

    def foreign_class() -> bool:
        folder = fresh("plain")
        canary = folder.parent / "IMPORTED"
        (folder / "evilmod.py").write_text(f"open({str(canary)!r}, 'w').write('x')\nclass Evil: pass\n",
                                           encoding="utf-8")
        (folder / "modules.json").write_text(json.dumps([{"idx": 0, "name": "0", "path": "",
                                                          "type": "evilmod.Evil"}]), encoding="utf-8")
        sys.path.insert(0, str(folder))
        try:
            resolve_embeddings(f"minilm:torch:{folder}").embed_query("x")
            return False
        except ValueError as exc:
            return "modules.json" in str(exc) and not canary.exists()
        finally:
            sys.path.remove(str(folder))

    def old_version() -> bool:
        saved = sentence_transformers.__version__
        sentence_transformers.__version__ = "5.1.0"
        try:
            resolve_embeddings(f"minilm:torch:{fresh('plain')}").embed_query("x")
            return False
        except ImportError as exc:
            return ">= 6.0" in str(exc)
        finally:
            sentence_transformers.__version__ = saved

    return [_held(foreign_class), _held(old_version)]


def _train_settings(tmp: Path) -> list[bool]:
    """Points 10 and 12: every bad `index train` setting refused before the queries are mined or a model trained."""
    from langgraph_anytool.eval import training
    from tests.eval.test_train_hardening import BAD_ARGUMENTS

    queries = tmp / "train.json"
    queries.write_text(json.dumps([{"query_id": 1, "query": QUERY,
                                    "relevant APIs": [["universal_unit_converter", "convert_units"]]}]),
                       encoding="utf-8")
    reached: list[str] = []

    def started(*_: Any, **__: Any) -> Any:
        reached.append("x")
        raise RuntimeError("training started")

    saved = training.prepare_training_data, training.fine_tune
    training.prepare_training_data = training.fine_tune = started  # type: ignore[assignment]
    target = tmp / "trained-out"

    def refused(args: list[str], flag: str) -> bool:
        reached.clear()
        rc, _, err = _cli(["index", "train", "--queries", str(queries), "--out", str(target), "--quiet", *args])
        return _refused(rc, err, flag) and not reached and not target.exists()

    try:
        out = [_held(lambda a=a, f=f: refused(a, f)) for a, f in BAD_ARGUMENTS]
    finally:
        training.prepare_training_data, training.fine_tune = saved
    return out


# ------------------------------------------------------------------------------------------ index files
class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def index_files() -> tuple[int, int]:
    """Damaged BM25 and faiss folders, folders linked elsewhere, a writer failing half-way."""
    from langgraph_anytool.catalog.catalog import Catalog
    from langgraph_anytool.catalog.search import CatalogSearcher
    from tests.catalog import test_index_files_hardening as t
    from tests.tiny_encoder import write_tiny_encoder

    held: list[bool] = []
    catalog = Catalog.builtin()
    handler = _Warnings()
    logging.getLogger("langgraph_anytool").addHandler(handler)
    try:
        with _scene() as tmp:
            encoder = f"minilm:{write_tiny_encoder(tmp / 'encoder', seed=5, onnx=True)}"
            cases = [("none", d, r) for _, d, r in t.BM25_DAMAGE] + [(encoder, d, r) for _, d, r in t.DENSE_DAMAGE]
            def rebuilt(n: int, spec: str, damage: Callable[[Path], None], reason: str) -> bool:
                def searcher() -> CatalogSearcher:
                    return CatalogSearcher(catalog, embeddings=spec, index_dir=tmp / f"index{n}", progress=False)

                fresh = searcher()
                expected = t._ranked(fresh)
                folder = fresh.bm25_path() if spec == "none" else fresh.index_path()
                assert folder is not None
                damage(folder)
                handler.lines.clear()
                ok = t._ranked(searcher()) == expected
                ok = ok and len(handler.lines) == 1 and reason in handler.lines[0]
                handler.lines.clear()
                return ok and t._ranked(searcher()) == expected and not handler.lines

            def not_followed(n: int, spec: str) -> bool:  # point 14: a link named like an index folder
                index_dir, etc = tmp / f"linked{n}", tmp / f"etc{n}"
                etc.mkdir()
                (etc / "passwd").write_text("root:x:0:0\n", encoding="utf-8")
                probe = CatalogSearcher(catalog, embeddings=spec, index_dir=index_dir, progress=False)
                folder = probe.bm25_path() if spec == "none" else probe.index_path()
                assert folder is not None
                index_dir.mkdir()
                folder.symlink_to(etc, target_is_directory=True)
                t._ranked(probe)
                return sorted(p.name for p in etc.iterdir()) == ["passwd"] and not folder.is_symlink()

            held += [_held(lambda n=n, c=c: rebuilt(n, *c)) for n, c in enumerate(cases)]
            held += [_held(lambda n=n, s=s: not_followed(n, s)) for n, s in enumerate(("none", encoder))]
            held.append(_held(lambda: _half_written(catalog, tmp)))
    finally:
        logging.getLogger("langgraph_anytool").removeHandler(handler)
    return len(held), sum(held)


def _half_written(catalog: Any, tmp: Path) -> bool:
    """A BM25 writer that fails on its second file leaves the previous folder byte for byte."""
    import bm25s

    from langgraph_anytool.catalog.index_store import save_bm25
    from langgraph_anytool.catalog.search import CatalogSearcher
    from langgraph_anytool.sanitize.files import file_digest

    searcher = CatalogSearcher(catalog, embeddings="none", index_dir=tmp / "half", progress=False)
    searcher.build()
    folder = searcher.bm25_path()
    before = {p: file_digest(p) for p in folder.rglob("*") if p.is_file()}
    counts = {"apis": len(catalog), "tools": catalog.num_tools, "categories": len(catalog.categories)}
    models = {}
    for name, n in counts.items():
        models[name] = bm25s.BM25()
        models[name].index([["other"]] * n, show_progress=False)
    real = bm25s.BM25.save
    calls = [0]

    def failing(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == 2:
            raise OSError(28, "No space left on device")
        return real(self, *args, **kwargs)

    bm25s.BM25.save = failing  # type: ignore[method-assign]
    try:
        save_bm25(folder, models, {"documents": "3"})
    finally:
        bm25s.BM25.save = real  # type: ignore[method-assign]
    after = {p: file_digest(p) for p in folder.rglob("*") if p.is_file()}
    return after == before and not [p for p in folder.parent.iterdir() if p.name.startswith(".")]


ATTACKS: list[tuple[str, Callable[[], tuple[int, int]]]] = [
    ("model folder files", model_folders),
    ("index files", index_files),
]


def _main(argv: list[str]) -> int:
    for name, fn in ATTACKS:
        if not argv or name in argv:
            attempts, held = fn()
            print(f"{name}: {held}/{attempts} held")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
