"""The docs keep up with the code: every setting has its row, every command its page, and the README stays a
front page (the blocks themselves run in test_docs_blocks.py; `mkdocs build --strict` checks links)."""

from __future__ import annotations

import argparse
import re
from dataclasses import fields
from pathlib import Path

from langgraph_anytool.cli.app import build_parser
from langgraph_anytool.config import AnyToolConfig

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"


def test_every_setting_has_a_row_on_the_configuration_page() -> None:
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    table = page.split("## Every setting", 1)[1].split("\n## ", 1)[0]
    rows = set(re.findall(r"^\| `(\w+)` \|", table, flags=re.MULTILINE))
    missing = [f.name for f in fields(AnyToolConfig) if f.name not in rows]
    assert not missing, f"docs/configuration.md has no row for AnyToolConfig.{', '.join(missing)}"
    unknown = rows - {f.name for f in fields(AnyToolConfig)}
    assert not unknown, f"docs/configuration.md has rows for settings that do not exist: {sorted(unknown)}"


def _commands(parser: argparse.ArgumentParser, prefix: str = "anytool") -> list[str]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.append(f"{prefix} {name}")
                out += _commands(sub, f"{prefix} {name}")
    return out


def test_every_command_is_on_a_page() -> None:
    text = "".join(p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md"))
    missing = [c for c in _commands(build_parser()) if c not in text]
    assert not missing, f"no docs page shows {missing}"


def test_readme_is_a_front_page() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 150, f"README.md has {len(lines)} lines; the details belong in docs/"
    links = set(re.findall(r"\(docs/([\w/-]+\.md)\)", "\n".join(lines)))
    assert links and all((DOCS / link).is_file() for link in links), links
