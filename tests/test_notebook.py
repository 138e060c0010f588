"""The quickstart notebook's code cells run, in order, offline (no model configured → the offline stand-in)."""

from __future__ import annotations

import contextlib
import io
import json
import runpy
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "quickstart.ipynb"


def test_quickstart_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANYTOOL_MODEL", raising=False)
    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    script = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    path = tmp_path / "quickstart.py"
    path.write_text(script)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ns = runpy.run_path(str(path))
    assert ns["out"]["status"] == "solved", out.getvalue()[-2000:]
    assert "Distance Between Cities" in out.getvalue() or "distance" in ns["out"]["answer"].lower()
    assert "graph TD" in out.getvalue() or "flowchart" in out.getvalue()
