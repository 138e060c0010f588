"""`anytool report` and `eval compare` on hostile or unusual records (issue 34 §4): every field the pages read, given
every wrong type or value, either renders or is refused in one line naming the record and the field; page names
are unique and short enough for any file system; `eval compare --markdown` escapes every value from data; a
pass-rate report nested 100,000 levels deep is one line."""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt

from langgraph_anytool.cli.app import main
from langgraph_anytool.eval.anytool.compare import (
    catalog_of,
    compare_sides,
    comparison_markdown,
    is_passrate_report,
    query_usage,
    side_from_report,
)
from langgraph_anytool.eval.anytool.passrate import answer_process, called_finish
from langgraph_anytool.eval.anytool.results import ResultsRecord
from langgraph_anytool.eval.report import render_run, write_site
from langgraph_anytool.eval.report.index import index_page
from langgraph_anytool.eval.report.page import query_page
from langgraph_anytool.sanitize.files import DataFileError
from langgraph_anytool.sanitize.paths import query_page_name, safe_file_name
from langgraph_anytool.sanitize.schema import check_model
from tests.eval.report.test_report_pages import rich_record

# every wrong type, and every value that breaks arithmetic: a string number, null, lists (a list is unhashable),
# objects, the infinities and NaN (Python's json writes them), a finite count whose sum overflows, a negative
# count, a boolean, a 31-digit integer, an empty string
WRONG: tuple[Any, ...] = ("2", None, [1], [0], {}, {"a": [1]}, math.inf, -math.inf, math.nan, 1.7e308, -1, True,
                          10**30, "")


def full_record() -> dict[str, Any]:
    """The hand-made rich record with every field a page reads present (so each is varied below)."""
    r = rich_record()
    r.update(error="boom", retries=1, model="m", stop_reason="budget", catalog="builtin",
             catalog_fingerprint="abc", attempt=1, pool_recall=0.5, relevant=["Cat/tool/good"])
    r["usage"]["roles"]["meta"].update(cost_usd=0.5, estimated_tokens=3)
    r["usage"].update(agents={"meta": 1, "tool": 1}, estimated_tokens=3)
    r["agents"][0].update(tools=["t"], category="Cat", end_reason="done", tokens=5)
    return r


def field_paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every field and list item of a record, one per shape (the first item of each list stands for the others)."""
    seen: set[tuple[Any, ...]] = set()

    def walk(v: Any, p: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        shape = tuple("#" if isinstance(k, int) else k for k in p)
        if p and shape in seen:
            return
        seen.add(shape)
        if p:
            yield p
        children = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, x in children:
            yield from walk(x, (*p, k))

    yield from walk(value, path)


def with_value(record: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(record)
    node: Any = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def test_every_field_the_pages_read_with_every_wrong_value_renders_or_is_one_line() -> None:
    base = full_record()
    paths = list(field_paths(base))
    assert len(paths) > 100  # the whole record: usage, agents and their messages, trees, calls, events, pool
    refused = rendered = 0
    broken: list[str] = []
    for path in paths:
        for value in WRONG:
            record = with_value(base, path, value)
            try:
                check_model(ResultsRecord, record, source="r.jsonl", line=1)
            except DataFileError as exc:
                refused += 1
                assert "\n" not in str(exc) and str(exc).startswith("r.jsonl, line 1, field '")
                continue
            try:
                query_page(record)
                index_page([record], title="t", sources=[])
                query_usage(record)  # eval compare's reader of a results file
                catalog_of(record)
                answer_process(record)  # what compare's evaluator is shown (eval passrate's inputs)
                called_finish(record)
                rendered += 1
            except Exception as exc:
                broken.append(f"{path} = {value!r}: {type(exc).__name__}: {exc}")
    assert not broken, f"{len(broken)} tracebacks, e.g. {broken[:5]}"
    assert refused and rendered


@pytest.mark.parametrize(("path", "value", "field"), [
    (("agents", 0, "activations"), "2", "agents[0].activations"),
    (("usage", "input_tokens"), 1.7e308, "usage.input_tokens"),
    (("usage", "roles", "solver", "cost_usd"), [1], "usage.roles.solver.cost_usd"),
    (("usage", "roles", "solver", "cost_usd"), math.inf, "usage.roles.solver.cost_usd"),
    (("trajectory", 1, "tree", 2, "id"), [0], "trajectory[1].tree[2].id"),
    (("events", 4, "attempt"), {}, "events[4].attempt"),
    (("usage", "roles", "meta", "output_tokens"), 1.7e308, "usage.roles.meta.output_tokens"),
])
def test_cli_report_names_the_line_and_field_of_a_hostile_record(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], path: tuple[Any, ...], value: Any, field: str) -> None:
    results = tmp_path / "r.jsonl"
    results.write_text(json.dumps(rich_record()) + "\n" + json.dumps(with_value(rich_record(), path, value)) + "\n")
    assert main(["report", str(results), "--out", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert f"line 2, field '{field}'" in err


def test_write_site_and_render_run_check_records_given_in_code(tmp_path: Path) -> None:
    bad = with_value(rich_record(), ("agents", 0, "activations"), "2")
    with pytest.raises(DataFileError, match=r"record 2 \(group 'G1', query_id .*\), field 'agents\[0\]\.activations'"):
        write_site([rich_record(), bad], tmp_path / "site")
    with pytest.raises(DataFileError, match="field 'agents"):
        render_run(bad)


# ------------------------------------------------------------------------------------------------ page names
def test_page_names_stay_under_the_file_system_limit_and_the_site_writes(tmp_path: Path) -> None:
    for n in (1, 99, 100, 101, 130, 255, 256, 1000, 5000):
        for ch in ("g", "é", "/", "😀", "."):
            name = query_page_name(ch * n, ch * n)
            assert len(name.encode()) <= 240 and "/" not in name and not name.startswith("."), (n, ch)
    long = {**rich_record(), "group": "g" * 130, "query_id": "q" * 130}
    site = write_site([long, {**long, "query_id": "é" * 130}], tmp_path / "site")
    assert len(site.pages) == 2 and all(p.is_file() for p in site.pages)
    assert main(["report", "--out", str(tmp_path / "cli"), str(tmp_path / "r.jsonl")]) == 2  # missing: one line
    (tmp_path / "r.jsonl").write_text(json.dumps(long) + "\n")
    assert main(["report", str(tmp_path / "r.jsonl"), "--out", str(tmp_path / "cli")]) == 0


def test_page_names_never_meet_even_when_a_name_looks_like_a_digested_one() -> None:
    tricky = ["a b", "a_b", "a/b", "a\\b", ".a", "a", "A", "é", "e", "", "group", "query", "1", 1]
    tricky += [safe_file_name(t) for t in list(tricky)]  # a plain name spelled as another's digested name
    tricky += [safe_file_name(safe_file_name("a b"))]
    names = {query_page_name("G", t) for t in tricky}
    assert len(names) == len({str(t) for t in tricky})


def test_two_queries_sharing_a_page_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from langgraph_anytool.eval.report import site as site_module

    monkeypatch.setattr(site_module, "page_name", lambda record: "same.html")  # stands in for a digest collision
    with pytest.raises(DataFileError, match=r"would share the page 'same\.html'"):
        write_site([rich_record(), {**rich_record(), "query_id": "other"}], tmp_path / "site")
    assert not (tmp_path / "site" / "same.html").exists()
    # the same query twice is one page (the later record), as `read_results` keeps it
    monkeypatch.undo()
    site = write_site([{**rich_record(), "answer": "old"}, rich_record()], tmp_path / "twice")
    assert len(site.pages) == 1 and "old" not in site.pages[0].read_text().split("Final answer")[1][:200]


# ------------------------------------------------------------------------------------------------ compare
HOSTILE_IDS = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "[x](javascript:alert(1))",
               "<!-- hidden", "a\rb", "a\r\n## heading", "![i](http://x/y.png)", "`code`", "**bold** _em_",
               "a|b", "&lt;script&gt;", "\\<script>", "<https://x.y>", "$x$", "~~s~~", "a\u2028b"]


def passrate_report(path: Path, values: list[float]) -> Path:
    queries = [{"group": g, "query_id": q, "value": v} for (g, q), v in
               zip([(h, h) for h in HOSTILE_IDS], values, strict=True)]
    path.write_text(json.dumps({"protocol": "anytool", "samples": 1, "evaluator": "<b>ev</b>", "queries": queries}))
    return path


def test_compare_markdown_escapes_every_value_from_data(tmp_path: Path) -> None:
    n = len(HOSTILE_IDS)
    a = side_from_report(passrate_report(tmp_path / "<a>[x](javascript:1).json", [1.0] * n))
    b = side_from_report(passrate_report(tmp_path / "b.json", [0.0] * (n // 2) + [1.0] * (n - n // 2)))
    report = tmp_path / "rep (1)<x>"
    report.mkdir()
    for h in HOSTILE_IDS:
        (report / query_page_name(h, h)).write_text("x")
    md = comparison_markdown(compare_sides(a, b, report=[str(report)], resamples=100))
    assert "\r" not in md and "\u2028" not in md
    html = MarkdownIt("commonmark").enable("table").render(md)
    assert not re.search(r"<(script|img|h\d|code|s|del|math)\b", html), html
    assert "<!--" not in html and "**bold** _em_" in html and "`code`" in html  # shown, not applied
    assert html.count("<strong>") == 4  # the two file names and the two lists' titles: ours only
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert len(hrefs) == 2 * (n // 2)  # A's and B's page of each lost query, and no other link
    assert all(Path(unquote(h)).parent == report and Path(unquote(h)).is_file() for h in hrefs), hrefs
    for h in HOSTILE_IDS:  # each id shown as text: the group cell and the flipped query's line
        shown = " ".join(h.splitlines())
        assert shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in html or h in ("a|b",), h


def test_a_passrate_report_nested_100000_deep_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"protocol": "anytool", "queries": ' + "[" * 100_000 + "]" * 100_000 + "}")
    one_line = tmp_path / "deep-line.json"  # the sniff reads the first line: here the whole nesting
    one_line.write_text('{"query_id": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    indented = tmp_path / "deep-indented.json"  # a report as `--json` prints it: the first line is `{`
    indented.write_text('{\n "protocol": "anytool",\n "overall": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001)
    for path in (deep, one_line, indented):
        assert is_passrate_report(path) in (True, False)
        code = main(["eval", "compare", str(path), str(path), "--evaluator", "openai:gpt-test", "--samples", "1",
                     "--no-cache"])
        err = capsys.readouterr().err.strip()
        assert code == 2 and "\n" not in err and "Traceback" not in err and "nesting too deep" in err, err


@pytest.mark.parametrize("field", ["tokens", "model_calls", "cost_usd"])
@pytest.mark.parametrize("value", [1.7e308, 1e16, -1, "2", [1]])
def test_a_passrate_report_with_an_unusable_count_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              field: str, value: Any) -> None:
    for side, v in (("a", value), ("b", 0.0)):
        queries = [{"group": "g", "query_id": str(i), "value": float(i % 2), field: v} for i in range(4)]
        (tmp_path / f"{side}.json").write_text(json.dumps({"protocol": "anytool", "samples": 1, "queries": queries}))
    code = main(["eval", "compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--resamples", "50"])
    out = capsys.readouterr()
    assert code == 2 and "inf" not in out.out and "nan" not in out.out
    assert out.err.count("\n") == 1 and f"field 'queries[0].{field}'" in out.err
