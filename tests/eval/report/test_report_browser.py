"""`anytool report` in a real browser: a batch of the offline stand-in over the builtin catalog, reported, then the
index and a query page opened in headless Chromium from the file system, with every host name unresolvable. Checked
from the DOM: the agent tree, the pool rounds, the search tree and the usage plots are there, the filters and the
sorting work, no request leaves the machine, no console error; a screenshot of each page is taken."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from langgraph_anytool.cli.app import main
from langgraph_anytool.sanitize.paths import query_page_name
from tests.browser import Chromium

QUERIES = [
    ("Convert 26.2 miles to kilometers.", "Universal Unit Converter", "Convert Units"),
    ("Is 2025-07-14 a public holiday in France?", "Public Holidays", "Is Public Holiday"),
    ("What is the capital of Australia and its population?", "", ""),  # unsolved: a reflection round
    ("Book me a flight to Mars <script>alert(1)</script> next week.", "", ""),
]


def batch(tmp_path: Path) -> Path:
    q = tmp_path / "queries.json"
    q.write_text(json.dumps([{"query": text, "query_id": i, "api_list": [{"tool_name": t, "api_name": a}] if t else [],
                              "relevant APIs": [[t, a]] if t else []} for i, (text, t, a) in enumerate(QUERIES)]))
    out = tmp_path / "results.jsonl"
    assert main(["eval", "run", "--queries", str(q), "--offline", "--out", str(out), "--no-progress", "--quiet"]) == 0
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("report")
    # a module-scoped fixture runs before conftest's per-test settings: the same ones here (BM25-only search,
    # indexes and responses under the temporary folder), else the batch would search with the default encoder and
    # build its index in the user's cache
    with pytest.MonkeyPatch.context() as env:
        env.setenv("ANYTOOL_EMBEDDINGS", "none")
        env.setenv("ANYTOOL_INDEX_DIR", str(tmp / "index"))
        env.setenv("ANYTOOL_CACHE_DIR", str(tmp / "response-cache"))
        results = batch(tmp)
        assert main(["report", str(results), "--out", str(tmp / "site")]) == 0
    yield tmp / "site"


def requests_leaving(browser: Chromium) -> list[str]:
    return [u for u in browser.requests() if not u.startswith(("file:", "data:", "about:"))]


def test_index_page_in_chromium(site: Path, tmp_path: Path) -> None:
    with Chromium.start() as browser:
        browser.open((site / "index.html").as_uri())
        assert browser.evaluate("document.querySelectorAll('#queries tbody tr').length") == len(QUERIES)
        assert browser.evaluate("document.querySelectorAll('#rates svg circle').length") == 2  # the group, overall
        assert browser.evaluate("document.querySelectorAll('#usage svg rect').length") > 5
        # a failure-taxonomy count filters the table to its queries
        link = "document.querySelector('a[href=\"#queries?status=unsolved\"]')"
        unsolved = int(browser.evaluate(f"{link}.textContent"))
        browser.evaluate(f"{link}.click()")
        browser.open((site / "index.html").as_uri() + "#queries?status=unsolved",
                     until="document.querySelectorAll('#queries tbody tr:not(.hidden)').length > 0")
        shown = browser.evaluate("Array.from(document.querySelectorAll('#queries tbody tr:not(.hidden)'))"
                                 ".map(r => r.getAttribute('data-status'))")
        assert shown == ["unsolved"] * unsolved
        # sorting by tokens, twice: ascending then descending
        browser.evaluate("location.hash = ''; document.querySelectorAll('select[data-field]')"
                         ".forEach(s => { s.value = ''; s.dispatchEvent(new Event('change')); })")
        browser.evaluate("document.querySelectorAll('#queries th')[5].click()")
        up = browser.evaluate("Array.from(document.querySelectorAll('#queries tbody tr'))"
                              ".map(r => Number(r.cells[5].dataset.v))")
        assert up == sorted(up)
        browser.evaluate("document.querySelectorAll('#queries th')[5].click()")
        down = browser.evaluate("Array.from(document.querySelectorAll('#queries tbody tr'))"
                                ".map(r => Number(r.cells[5].dataset.v))")
        assert down == sorted(up, reverse=True)
        browser.screenshot(tmp_path / "index.png")
        assert (tmp_path / "index.png").stat().st_size > 10_000
        assert requests_leaving(browser) == []
        assert browser.console_errors() == []


def test_query_page_in_chromium(site: Path, tmp_path: Path) -> None:
    page = site / query_page_name("queries", 2)  # the unsolved query: two rounds, a reflection
    with Chromium.start() as browser:
        browser.open(page.as_uri())
        has = {name: browser.evaluate(f"document.querySelectorAll({json.dumps(sel)}).length") for name, sel in {
            "agent tree": "#agents svg .node.n-meta", "tool agents": "#agents svg .node.n-tool",
            "pool rounds": "#pool-rounds tbody tr", "search tree": "#search svg .node",
            "usage plot": "#usage svg rect", "timeline": "#timeline svg rect", "reflection": "#reflections tbody tr",
            "calls": "#search .call"}.items()}
        assert all(n > 0 for n in has.values()), has
        # one row per round the run had (round 0, then one per reflection), as its record says
        record = next(r for r in map(json.loads, (site.parent / "results.jsonl").read_text().splitlines())
                      if str(r["query_id"]) == "2")
        rounds = {e["round"] for e in record["events"] if "round" in e} | {e["round"] for e in record["pool_entries"]}
        assert len(rounds) >= 2 and has["pool rounds"] == len(rounds), (has, sorted(rounds))
        assert browser.evaluate("document.querySelector('#search .call.finish code').textContent") == "Finish"
        # folding: everything opens and closes
        browser.evaluate("document.querySelector('[data-fold=open]').click()")
        assert browser.evaluate("Array.from(document.querySelectorAll('details.box')).every(d => d.open)")
        browser.screenshot(tmp_path / "query.png")
        assert requests_leaving(browser) == []
        assert browser.console_errors() == []
    hostile = (site / query_page_name("queries", 3)).read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in hostile and hostile.count("<script>") == 1


def test_a_failure_link_whose_value_holds_url_characters_filters_to_its_query(tmp_path: Path) -> None:
    # a record's error_kind is text of the record: `&`, `=`, `%` and `#` must survive the link and the page's script
    results = batch(tmp_path)
    records = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    kind = "quota & rate=limit 100% #1"
    records[0]["error_kind"] = kind
    results.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["report", str(results), "--out", str(tmp_path / "site")]) == 0
    with Chromium.start() as browser:
        browser.open((tmp_path / "site" / "index.html").as_uri())
        hrefs = browser.evaluate("Array.from(document.querySelectorAll('a.filter-link')).map(a => a.getAttribute('href'))")
        link = next(h for h in hrefs if h.startswith("#queries?error_kind="))
        assert link == "#queries?error_kind=quota%20%26%20rate%3Dlimit%20100%25%20%231"
        browser.open((tmp_path / "site" / "index.html").as_uri() + link,
                     until="document.querySelectorAll('#queries tbody tr:not(.hidden)').length < "
                           f"{len(records)}")
        shown = browser.evaluate("Array.from(document.querySelectorAll('#queries tbody tr:not(.hidden)'))"
                                 ".map(r => r.getAttribute('data-error_kind'))")
        assert shown == [kind]
        assert browser.console_errors() == []
