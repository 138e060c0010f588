"""What a new user reads (issue 19, point 8): one clear line with a suggestion for a catalog folder one level too
high, the exit status in `--help`, the chat answer saying it comes from the offline stand-in, and `make demo`
saying what it installs."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from langgraph_anytool import Catalog, create_anytool_graph
from langgraph_anytool.catalog.errors import CatalogError
from langgraph_anytool.cli.app import main
from langgraph_anytool.models.testing import ScriptedChatModel, ai

ROOT = Path(__file__).resolve().parents[2]


def _data_folder(tmp_path: Path) -> Path:
    """A ToolBench data folder as released: queries/ (lists of queries) beside tools/<Category>/<tool>.json."""
    data = tmp_path / "toolbench"
    (data / "queries").mkdir(parents=True)
    for name in ("G1_instruction", "G2_category", "G3_instruction"):
        (data / "queries" / f"{name}.json").write_text(json.dumps([{"query": "q", "query_id": 1, "api_list": []}]))
    (data / "tools" / "Weather").mkdir(parents=True)
    (data / "tools" / "Weather" / "weather_now.json").write_text(json.dumps(
        {"tool_name": "Weather Now", "api_list": [{"name": "Current", "url": "/current", "method": "GET"}]}))
    return data


def test_a_catalog_folder_one_level_up_gets_one_line_and_a_suggestion(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    data = _data_folder(tmp_path)
    for given in (data, tmp_path):  # the data folder, and the folder above it
        assert main(["catalog", "--catalog", str(given)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        assert "not a ToolBench tools directory" in err[0] and f"did you mean {data / 'tools'}?" in err[0]
        assert "3 of its JSON files are no tool documents" in err[0] or given == tmp_path
    assert main(["catalog", "--catalog", str(data / "tools")]) == 0
    assert "1 tools, 1 APIs" in capsys.readouterr().out
    with pytest.raises(CatalogError, match="did you mean"):
        Catalog.load(data)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CatalogError, match="not a catalog: a directory without"):  # nothing to suggest
        Catalog.load(empty)


@pytest.mark.parametrize("command", ["run", "demo"])
def test_help_gives_the_exit_status(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "exit status: 0 when the run is solved" in text and "1 when it ends otherwise (unsolved" in text
    assert "2 on a usage error" in text


def test_the_chat_answer_says_it_comes_from_the_stand_in() -> None:
    out = create_anytool_graph(Catalog.builtin(), "offline").invoke(
        {"messages": [{"role": "user", "content": "Convert 26.2 miles to kilometers."}]})
    last = out["messages"][-1]
    assert last.content.startswith(out["answer"])
    assert "OfflinePolicyModel (rule-based heuristic stand-in, NOT an LLM)" in last.content
    assert last.response_metadata["anytool_model"].startswith("OfflinePolicyModel")
    # a real model's answer carries no such line
    model = ScriptedChatModel(responder=lambda messages, tools: ai("It is 42.2 km."))
    plain = create_anytool_graph(Catalog.builtin(), model).invoke({"query": "How far is a marathon in km?"})
    assert "stand-in" not in plain["messages"][-1].content
    assert "anytool_model" not in plain["messages"][-1].response_metadata


def test_make_demo_says_what_it_installs(tmp_path: Path) -> None:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    dry = subprocess.run([make, "-n", "demo", f"VENV={tmp_path / 'venv'}"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, check=True).stdout.splitlines()
    installs = [i for i, line in enumerate(dry) if "pip install" in line and "--upgrade pip" not in line]
    assert len(installs) == 1  # the package alone: tests/integration/test_make_progress.py checks what it installs
    for i in installs:  # each long install is announced by the line before it
        assert dry[i - 1].startswith("echo \">> installing"), dry
