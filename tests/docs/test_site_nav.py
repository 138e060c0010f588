"""The site's navigation (issue 35 §6): no entry shown twice under one name (a section and its own index page), and
the contributors' pages out of the readers' navigation but built and linked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CONTRIBUTORS = ("writing-docs.md",)


class _Loader(yaml.SafeLoader):
    """mkdocs.yml with its `!!python/name:` tags read as None (only the structure matters here)."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _config() -> dict[str, Any]:
    return dict(yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader))


def _title(page: str) -> str:
    """The title MkDocs gives an untitled nav entry: the page's `#` heading."""
    for line in (ROOT / "docs" / page).read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return page


def _entries(nav: list[Any], section: str = "") -> list[tuple[str, str, str]]:
    """(section, shown title, page) of every page entry, sections walked."""
    out: list[tuple[str, str, str]] = []
    for item in nav:
        if isinstance(item, str):
            out.append((section, _title(item), item))
            continue
        ((title, value),) = item.items()
        if isinstance(value, list):
            out.extend(_entries(value, title))
        else:
            out.append((section, title, value))
    return out


def test_no_section_shows_its_own_name_again() -> None:
    config = _config()
    indexes = "navigation.indexes" in config["theme"].get("features", [])
    for section, title, page in _entries(config["nav"]):
        if not section or title != section:
            continue
        assert indexes and page.endswith("index.md"), (
            f"{page!r} is shown as {title!r} inside the section {section!r}: the name twice in the navigation")
    titles = [(section, title) for section, title, _ in _entries(config["nav"])]
    assert len(titles) == len(set(titles)), "two entries of one section have the same name"


def test_contributors_pages_are_built_linked_and_out_of_the_navigation() -> None:
    config = _config()
    pages = [page for _, _, page in _entries(config["nav"])]
    listed = str(config.get("not_in_nav", ""))
    for page in CONTRIBUTORS:
        assert page not in pages, f"{page} is in the readers' navigation"
        assert f"/{page}" in listed.split(), f"{page} is neither in nav nor in not_in_nav (strict mode fails)"
        linked = [p.name for p in (ROOT / "docs").glob("*.md") if f"]({page}" in p.read_text(encoding="utf-8")]
        assert linked, f"no page links {page}"


# Material's content column is about 800 CSS px wide; a drawn picture wider than this is scaled down until its
# labels (11 px at the drawings' 110 dpi) are too small to read.
MAX_DRAWN_WIDTH = 1000


def test_drawn_pictures_stay_legible_at_page_width() -> None:
    import sys

    sys.path.insert(0, str(ROOT / "notebooks"))
    try:
        from build import EXPORTS
    finally:
        sys.path.remove(str(ROOT / "notebooks"))
    for file_name, _ in (pair for pairs in EXPORTS.values() for pair in pairs):
        png = (ROOT / "docs" / "img" / file_name).read_bytes()
        width = int.from_bytes(png[16:20], "big")
        assert width <= MAX_DRAWN_WIDTH, f"docs/img/{file_name} is {width} px wide: unreadable at page width"
