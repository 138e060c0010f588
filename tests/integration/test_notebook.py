"""Both notebooks run in a real Jupyter kernel, offline, through the documented command (`python notebooks/build.py
--execute`, nbclient: no `jupyter` command), with no warnings in their outputs; the quickstart shows PNG pictures of
the graph, the agent tree and the search tree, and the command exports them for the docs; the saved notebooks carry
those outputs too and hold the cells build.py writes."""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
DOCS = NOTEBOOKS.parent / "docs"


def _build_module() -> Any:
    spec = importlib.util.spec_from_file_location("notebooks_build", NOTEBOOKS / "build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _outputs(nb: Any) -> list[tuple[int, dict[str, Any]]]:
    return [(i, o) for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code" for o in c.get("outputs", [])]


def _no_warnings(nb: Any, name: str) -> None:
    for i, o in _outputs(nb):
        assert o["output_type"] != "error", f"{name} cell {i}: {o.get('ename')}: {o.get('evalue')}"
        assert not (o["output_type"] == "stream" and o.get("name") == "stderr"), f"{name} cell {i}: {o.get('text')}"
        text = "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
        assert "Warning" not in text, f"{name} cell {i}: {text[:300]}"


def _pngs(nb: Any, source_has: str) -> list[bytes]:
    out = []
    for c in nb["cells"]:
        if c["cell_type"] == "code" and source_has in "".join(c["source"]):
            out += [base64.b64decode(o["data"]["image/png"]) for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    return out


def _execute(name: str, tmp_path: Path) -> Any:
    """The documented command, writing the notebook and its pictures into `tmp_path` (never into the repository)."""
    env = {**os.environ, "ANYTOOL_EMBEDDINGS": "none", "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    env.pop("ANYTOOL_MODEL", None)
    done = subprocess.run([sys.executable, str(NOTEBOOKS / "build.py"), "--execute", name, "--out", str(tmp_path),
                           "--pictures", str(tmp_path / "img")], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr  # e.g. the kernel's, once per notebook
    for file_name, _ in _build_module().EXPORTS[name]:
        assert (tmp_path / "img" / file_name).read_bytes().startswith(b"\x89PNG"), file_name
    return nbformat.read(tmp_path / f"{name}.ipynb", as_version=4)


def _without_pictures(nb: Any) -> str:
    """The notebook's JSON with each PNG replaced by its size class (a font or library version may move a pixel)."""
    copy = json.loads(json.dumps(nb))
    for _, o in _outputs(copy):
        if "image/png" in o.get("data", {}):
            o["data"]["image/png"] = "PNG"
    return json.dumps(copy, indent=1, sort_keys=True)


def _same_as_saved(nb: Any, name: str) -> None:
    """Issue 29 point 12: a re-run without changes writes the saved notebook again (stable ids, no timestamps, no
    addresses, the same lines in the same order), so `git status` stays clean."""
    saved = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    assert [c.id for c in nb.cells] == [f"{name}-{i:02d}" for i in range(len(nb.cells))]
    assert "version" not in nb.metadata.get("language_info", {})
    assert not any("execution" in c.metadata for c in nb.cells)
    assert _without_pictures(nb) == _without_pictures(saved), f"a re-run changes notebooks/{name}.ipynb"


def test_build_command_line_without_names() -> None:
    """`build.py --execute` with no notebook names (Python 3.11's argparse refused it: "invalid choice: []")."""
    build = _build_module()
    args = build.parse_args(["--execute"])
    assert args.execute and args.names == []
    assert build.parse_args(["quickstart"]).names == ["quickstart"]
    with pytest.raises(SystemExit):
        build.parse_args(["nosuch"])


def test_saved_notebooks_hold_the_cells_build_py_writes() -> None:
    build = _build_module()
    for name, cells in (("quickstart", build.QUICKSTART), ("evaluate", build.EVALUATE)):
        saved = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
        assert [c.source for c in saved.cells] == [c.source for c in cells], \
            f"notebooks/{name}.ipynb is stale: run python notebooks/build.py --execute {name}"


def test_docs_pictures_come_from_the_notebooks() -> None:
    """Every picture the notebooks export is in docs/img and shown on a docs page."""
    pages = "".join(p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md"))
    for exports in _build_module().EXPORTS.values():
        for file_name, _ in exports:
            assert (DOCS / "img" / file_name).read_bytes().startswith(b"\x89PNG"), file_name
            assert f"img/{file_name}" in pages, f"docs/img/{file_name} is on no page"


@pytest.mark.slow
def test_quickstart_notebook_executes_with_pictures(tmp_path: Path) -> None:
    nb = _execute("quickstart", tmp_path)
    _no_warnings(nb, "quickstart")
    _same_as_saved(nb, "quickstart")
    for source in ("\ngraph", "draw_agent_tree", "draw_search_tree", "draw_usage"):
        pngs = _pngs(nb, source)
        assert pngs and pngs[0].startswith(b"\x89PNG") and len(pngs[0]) > 5000, source
    text = json.dumps(nb["cells"])
    assert "solved" in text and "distance_between_cities_for_geo_distance_calculator" in text
    # α-UMi with a text-mode caller and the alpha_umi prompt profile, played offline by the stand-in
    (umi,) = [c for c in nb["cells"] if c["cell_type"] == "code" and "text_mode_roles" in "".join(c["source"])]
    said = "".join(o.get("text", "") for o in umi.get("outputs", []) if o["output_type"] == "stream")
    assert said.startswith("solved — ") and "879.7" in said and "Next: conclusion." in said, said


@pytest.mark.slow
def test_evaluate_notebook_executes(tmp_path: Path) -> None:
    nb = _execute("evaluate", tmp_path)
    _no_warnings(nb, "evaluate")
    _same_as_saved(nb, "evaluate")
    assert _pngs(nb, "plot.bar")
    assert "Recall@5" in json.dumps(nb["cells"]) and "Pass rate and consumption" in json.dumps(nb["cells"])


def test_saved_notebooks_carry_their_pictures() -> None:
    for name, needles in (("quickstart", ("\ngraph", "draw_agent_tree", "draw_search_tree")), ("evaluate", ("plot.bar",))):
        nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())
        _no_warnings(nb, name)
        for source in needles:
            assert _pngs(nb, source), f"{name}: no saved PNG for {source!r}"
