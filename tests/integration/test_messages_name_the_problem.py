"""Messages that name the right problem (issue 29 §10): a file that is no catalog, a model name with a typo, text
shortened for a model or a user (never mid-word)."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import pytest

from langgraph_anytool import Catalog
from langgraph_anytool.catalog.errors import CatalogError
from langgraph_anytool.cli.app import main
from langgraph_anytool.models.llm import ModelNotConfiguredError, init_model
from langgraph_anytool.text import shorten, shorten_counted

ROOT = Path(__file__).resolve().parents[2]
FORMATS = ("a ToolBench tools directory", "an OPPO toolset folder", "a StableToolBench query file",
           "an OpenAPI 3 spec")


@pytest.mark.parametrize(("name", "text", "what"), [
    ("README.md", "# AnyTool\n\n**Find** and call the right APIs.\n", "no JSON or YAML document could be read"),
    ("langgraph.json", json.dumps({"graphs": {"anytool": "./graph.py:make_graph"}}),
     "a JSON/YAML object without an 'openapi' field, with keys graphs"),
    ("results.json", json.dumps([{"query": "q", "status": "solved"}]), "a list whose items are no queries"),
])
def test_a_file_that_is_no_catalog_says_so_and_lists_the_formats(tmp_path: Path, name: str, text: str, what: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(CatalogError) as info:
        Catalog.load(path)
    message = str(info.value)
    assert message.startswith(f"file {path}: not a catalog: ") and what in message
    assert all(f in message for f in FORMATS) and "invalid YAML at line" not in message.split("(")[0]
    assert main(["catalog", "--catalog", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a catalog" in err[0]


def test_a_broken_openapi_spec_keeps_its_own_error(tmp_path: Path) -> None:
    spec = tmp_path / "api.yaml"
    spec.write_text("openapi: 3.0.3\ninfo: {title: Broken\npaths: {}\n")  # an unclosed flow mapping
    with pytest.raises(CatalogError, match="invalid YAML at line") as info:
        Catalog.load(spec)
    assert "not a catalog" not in str(info.value)
    old = tmp_path / "swagger.json"
    old.write_text(json.dumps({"swagger": "2.0", "info": {"title": "Old"}, "paths": {}}))
    with pytest.raises(CatalogError, match=r"Swagger 2\.0 documents are not supported"):
        Catalog.load(old)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CatalogError, match=r"not a catalog: a directory without <Category>/<tool>\.json files"):
        Catalog.load(empty)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are a POSIX feature")
def test_a_named_pipe_given_as_a_catalog_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    pipe = tmp_path / "api.yaml"
    os.mkfifo(pipe)  # opening it for reading would block until something writes
    errors: list[Exception] = []

    def load() -> None:
        try:
            Catalog.load(pipe)
        except Exception as exc:  # the outcome is checked below
            errors.append(exc)

    worker = threading.Thread(target=load, daemon=True)  # a hang must fail this test, not stall the suite
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "Catalog.load blocked on the named pipe"
    assert len(errors) == 1 and isinstance(errors[0], CatalogError) and "not a regular file" in str(errors[0])


@pytest.mark.parametrize(("spec", "hint"), [
    ("offlne", "did you mean 'offline' (the heuristic stand-in, not an LLM)?"),
    ("opnai:gpt-4o-mini", "unknown provider 'opnai'; did you mean 'openai:gpt-4o-mini'?"),
    ("grq:llama-3.3-70b-versatile", "did you mean 'groq:llama-3.3-70b-versatile'?"),
])
def test_a_model_typo_gets_a_suggestion(spec: str, hint: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ModelNotConfiguredError) as info:
        init_model(spec)
    assert hint in str(info.value) and "Supported providers" not in str(info.value)
    assert main(["run", "Convert 26.2 miles to kilometers", "--model", spec, "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and hint in err[0]


def test_a_failure_reason_is_cut_at_a_word() -> None:
    reason = ("Convert Time: missing required parameter time (string, required; one of the 24-hour formats HH:MM or "
              "HH:MM:SS); missing required parameter from_zone (string, required)")
    short = shorten(reason, 60)
    assert short == "Convert Time: missing required parameter time (string…" and len(short) <= 60
    assert shorten("The first sentence is rather long here. A second one is cut.", 45) == (
        "The first sentence is rather long here…")  # a sentence end near the limit wins
    assert shorten("First sentence. Second sentence is cut somewhere in the middle.", 50) == (
        "First sentence. Second sentence is cut somewhere…")  # else the last word end
    assert shorten("short", 60) == "short" and shorten("x" * 50, 10) == "x" * 9 + "…"
    counted = shorten_counted("word " * 40, 32)
    assert counted.startswith("word word word word word word") and counted.endswith("more characters]")
    assert not re.search(r"wor\.\.\.|wo\.\.\.", counted)


def test_no_text_is_cut_mid_word_by_a_slice_anywhere_in_the_package() -> None:
    """A slice followed by an ellipsis (`text[:n] + "…"`) cuts a word in two: `text.shorten` is the one way."""
    pattern = re.compile(r"\[\s*:[^\]]*\]\s*\+\s*f?[\"'](?:…|\.\.\.)")
    found = [f"{path.relative_to(ROOT)}:{i}" for path in sorted((ROOT / "langgraph_anytool").rglob("*.py"))
             for i, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == []
