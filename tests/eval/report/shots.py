"""The report screenshots of the docs' Evaluation page (`docs/img/report-index.png`, `docs/img/report-query.png`):

    python tests/eval/report/shots.py docs/img

Runs the demo batch of the Evaluation page (the offline stand-in over the builtin catalog), writes its report and
photographs the index and the page of the query that needed a reflection, in headless Chromium (`tests/browser.py`).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the checkout's root on the path, for `tests.browser`
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from langgraph_anytool.cli.app import main
from langgraph_anytool.sanitize.paths import query_page_name
from tests.browser import Chromium

DEMO = ["Convert 26.2 miles to kilometers.", "Is 2025-07-14 a public holiday in France?",
        "What is the capital of Australia and its population?",
        "What is the next prime after 1000, and is 2024 a leap year?", "Convert 100 degrees Fahrenheit to Celsius.",
        "Book me a flight to Mars next week."]
REFLECTED = 2  # the query whose first answer was judged Unsolved


def demo_site(folder: Path) -> Path:
    """The demo batch's report folder (`report.html` pages of group `demo`)."""
    queries = folder / "demo.json"
    queries.write_text(json.dumps([{"query": q, "query_id": i} for i, q in enumerate(DEMO)]))
    results = folder / "results.jsonl"
    assert main(["eval", "run", "--queries", str(queries), "--offline", "--out", str(results), "--no-progress",
                 "--quiet"]) == 0
    assert main(["report", str(results), "--out", str(folder / "report")]) == 0
    return folder / "report"


def shoot(site: Path, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    with Chromium.start() as browser:
        browser.open((site / "index.html").as_uri())
        index = browser.screenshot(out / "report-index.png", width=1100)
        browser.open((site / query_page_name("demo", REFLECTED)).as_uri())
        query = browser.screenshot(out / "report-query.png", width=1100, height=1900, full_page=False)
        if browser.console_errors():
            raise SystemExit(f"console errors: {browser.console_errors()}")
    return [index, query]


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        for path in shoot(demo_site(Path(tmp)), Path(sys.argv[1] if len(sys.argv) > 1 else "docs/img")):
            print(path)
