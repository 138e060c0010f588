"""The built docs site as an offline reader sees it, in headless Chromium (issue 29 point 8): every ```mermaid
block of Concepts and Architecture is drawn as an <svg>, with no network (every host name resolves to nothing)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser import Chromium, require_chromium

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("concepts", "architecture")


def _mermaid_script() -> Path:
    """The pinned Mermaid script from the docs hook's cache (or npm); skip without either (CI=true: fail)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import mkdocs_mermaid
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    try:
        return mkdocs_mermaid.fetch()
    except mkdocs_mermaid.MermaidUnavailable as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI must ship the Mermaid script: {exc}")
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_chromium()
    _mermaid_script()
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--quiet", "--site-dir", str(out)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return out


def _diagrams(html: str) -> list[str]:
    """The rendered content of each <div class="mermaid"> (Material draws into a closed shadow root)."""
    return [part.split("</shadow-root>", 1)[0] for part in html.split('<div class="mermaid">')[1:]]


def test_the_site_ships_mermaid_and_loads_it_from_itself(site: Path) -> None:
    script = site / "assets" / "javascripts" / "mermaid.min.js"
    assert script.stat().st_size > 1_000_000
    for page in PAGES:
        html = (site / page / "index.html").read_text()
        assert '<script src="../assets/javascripts/mermaid.min.js">' in html, page
        assert 'class="mermaid"' in html, f"{page}: no mermaid block left to draw"


@pytest.mark.parametrize("page", PAGES)
def test_mermaid_diagrams_are_drawn_offline(site: Path, page: str, tmp_path: Path) -> None:
    expected = (site / page / "index.html").read_text().count('class="mermaid"')  # <pre class="mermaid"> each
    with Chromium.start() as browser:
        browser.open((site / page / "index.html").as_uri())
        for _ in range(100):  # Material draws the diagrams after the page has loaded
            drawn = [d for d in _diagrams(browser.html()) if "<svg" in d]
            if len(drawn) >= expected:
                break
            browser.evaluate("new Promise(r => setTimeout(r, 200))")
        picture = browser.screenshot(tmp_path / f"{page}.png")
        errors = browser.console_errors()
    assert len(drawn) == expected, f"{page}: {len(drawn)} of {expected} diagrams drawn (raw text left); {errors}"
    for svg in drawn:
        assert 'aria-roledescription="flowchart' in svg and "Syntax error" not in svg, svg[:300]
        assert len(re.findall(r'class="[^"]*\bnode\b', svg)) >= 3, "a diagram with almost no nodes"
    assert errors == [], errors
    assert picture.stat().st_size > 10_000


@pytest.mark.slow
def test_a_strict_build_that_cannot_ship_mermaid_fails(tmp_path: Path) -> None:
    """Offline, with no cached script and no npm, the site would draw no diagram: `--strict` (what `make test` and
    mkdocs.yml's `strict: true` use) fails saying so and how to fix it; a plain build warns and goes on."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from without_programs import path_without
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(NO_MKDOCS_2_WARNING="1", ANYTOOL_DOCS_CACHE=str(tmp_path / "empty-cache"),
               PATH=path_without({"npm"}, tmp_path / "bin", os.environ.get("PATH", "")))
    build = [sys.executable, "-m", "mkdocs", "build", "--site-dir", str(tmp_path / "site")]
    strict = subprocess.run([*build, "--strict"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert strict.returncode != 0
    (line,) = [ln for ln in strict.stderr.splitlines() if "mermaid:" in ln]
    assert line.startswith("WARNING") and "no npm" in line and "scripts/mkdocs_mermaid.py" in line, line
    plain = subprocess.run([*build, "--no-strict"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert plain.returncode == 0, plain.stderr[-2000:]
    assert "WARNING" in plain.stderr and not (tmp_path / "site" / "assets" / "javascripts" / "mermaid.min.js").exists()
