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


PAPERS = {  # title → arXiv id (None: no arXiv id known; cited by title and venue)
    "AnyTool: Self-Reflective, Hierarchical Agents for Large-Scale API Calls": "2402.04253",
    "Small LLMs Are Weak Tool Learners: A Multi-LLM Agent": "2401.07324",
    "An Evaluation Mechanism of LLM-based Agents on Manipulating APIs": None,
}


def test_papers_are_cited_by_title_and_arxiv_id() -> None:
    """Issue 29 point 12: a reader cannot look up "seed 000" (our folder of paper texts); pages cite papers by
    title and arXiv id, and the Concepts page lists the three."""
    pages = [REPO / "README.md", *DOCS.rglob("*.md")]
    seeds = [f"{p.relative_to(REPO)}: {m.group(0)!r}" for p in pages
             for m in re.finditer(r"\bseeds?\W{0,3}`?0\d\d`?", p.read_text(encoding="utf-8"))]
    assert not seeds, f"cite the paper, not our seed file: {seeds}"
    concepts = " ".join((DOCS / "concepts.md").read_text(encoding="utf-8").split())
    for title, arxiv in PAPERS.items():
        assert title in concepts, title
        if arxiv:
            assert f"{title}*, arXiv {arxiv}" in concepts or f"{title}*. arXiv {arxiv}" in concepts, title
    for parser in _parsers(build_parser()):
        assert not re.search(r"\bseed 0\d\d\b", parser.format_help()), parser.prog


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parser and all its sub-parsers, depth first."""
    out = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += _parsers(sub)
    return out


def _written_files(code: str) -> list[str]:
    """The files a bash block writes by name: `cat > F <<...` here-documents and `--out F` outputs."""
    heredocs = re.findall(r"^cat > (\S+) <<", code, flags=re.MULTILINE)
    outs = re.findall(r"^anytool .*--out (\S+\.\w+)\b", code, flags=re.MULTILINE)
    return heredocs + outs


def test_a_page_never_writes_two_different_files_under_one_name() -> None:
    """Issue 29 point 12: the blocks of a page share one folder, so a name written twice (the Evaluation page's
    `results.jsonl`: a run's results, then two hand-made answers, then one more) reads, later on, whatever the
    last block put there."""
    from tests.docs.test_docs_blocks import all_blocks

    seen: dict[tuple[Path, str], str] = {}
    clashes = []
    for block in all_blocks():
        if block.lang != "bash":
            continue
        for name in dict.fromkeys(_written_files(block.code)):
            first = seen.setdefault((block.page, name), block.name)
            if first != block.name:
                clashes.append(f"{name}: written by {first} and by {block.name}")
    assert not clashes, clashes
    assert _written_files("cat > a.json <<'JSON'\nanytool eval run --out r.jsonl --quiet\n") == ["a.json", "r.jsonl"]
