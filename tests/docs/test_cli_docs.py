"""The command line page says what `--help` says (issue 29 point 11): its synopsis and option tables are generated
from the parser by scripts/cli_docs.py, and this test fails when they drift; the help itself names every exit code
and describes every command."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.cli.app import build_parser

REPO = Path(__file__).resolve().parents[2]


def _cli_docs() -> Any:
    spec = importlib.util.spec_from_file_location("cli_docs", REPO / "scripts" / "cli_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_page_is_what_the_parser_generates() -> None:
    cli_docs = _cli_docs()
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    parts = [f"{m['kind']} {m['command']}" for m in cli_docs.PART.finditer(text)]
    assert "synopsis anytool" in parts and "options anytool index train" in parts, parts
    assert not cli_docs.stale(text, build_parser()), "run: python scripts/cli_docs.py"


def test_a_drifted_page_is_caught(tmp_path: Path) -> None:
    """An option added to the parser, or a page edited by hand, is a stale part; regenerating repairs it."""
    cli_docs = _cli_docs()
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    parser = build_parser()
    dict(cli_docs.parsers(parser))["anytool index build"].add_argument("--new-option", help="a new option")
    assert cli_docs.stale(text, parser) == ["synopsis anytool", "options anytool index build"]
    assert not cli_docs.stale(cli_docs.render(text, parser), parser)
    edited = text.replace("| `--json` | print the build statistics as JSON |", "| `--json` | JSON |")
    assert edited != text and cli_docs.stale(edited, build_parser()) == ["options anytool index build"]


def test_the_page_states_what_help_states() -> None:
    """The drifts the issue found: 130 in `run`/`demo --help`, a description for `index build`, and `index train
    --catalog` optional in both places (the builtin catalog is its default)."""
    commands = dict(_cli_docs().parsers(build_parser()))
    for name in ("anytool run", "anytool demo"):
        assert "130 when interrupted" in " ".join(commands[name].format_help().split()), name
    for name, parser in commands.items():
        assert parser.description, f"{name} --help has no description"
    train = commands["anytool index train"]
    catalog = next(a for a in train._actions if "--catalog" in a.option_strings)
    assert not catalog.required
    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "anytool index train --catalog DIR" not in page and "anytool index train [-h] [--catalog PATH]" in page


@pytest.mark.parametrize("bad", ["a|b", "<model>", "*all*"])
def test_help_text_is_escaped_for_a_table_cell(bad: str) -> None:
    cell = _cli_docs().cell(bad)
    assert bad not in cell and "\n" not in cell
    parser = argparse.ArgumentParser(prog="x")
    parser.add_argument("--y", help=bad)
    assert cell in _cli_docs().options_table(parser)
