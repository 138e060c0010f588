"""Both notebooks run in a real Jupyter kernel (nbclient), offline, with no warnings in their outputs; the quickstart
shows PNG pictures of the graph, the agent tree and the search tree; the saved notebooks carry those outputs too."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


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


def _execute(name: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv("ANYTOOL_MODEL", raising=False)
    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    for c in nb.cells:
        c.outputs = [] if c.cell_type == "code" else getattr(c, "outputs", None)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    return nb


@pytest.mark.slow
def test_quickstart_notebook_executes_with_pictures(monkeypatch: pytest.MonkeyPatch) -> None:
    nb = _execute("quickstart", monkeypatch)
    _no_warnings(nb, "quickstart")
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
def test_evaluate_notebook_executes(monkeypatch: pytest.MonkeyPatch) -> None:
    nb = _execute("evaluate", monkeypatch)
    _no_warnings(nb, "evaluate")
    assert _pngs(nb, "plot.bar")
    assert "Recall@5" in json.dumps(nb["cells"]) and "Pass rate and consumption" in json.dumps(nb["cells"])


def test_saved_notebooks_carry_their_pictures() -> None:
    for name, needles in (("quickstart", ("\ngraph", "draw_agent_tree", "draw_search_tree")), ("evaluate", ("plot.bar",))):
        nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())
        _no_warnings(nb, name)
        for source in needles:
            assert _pngs(nb, source), f"{name}: no saved PNG for {source!r}"
