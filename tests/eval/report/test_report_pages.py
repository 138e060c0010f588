"""`anytool report` pages from hand-made records: what each section shows, escaping of hostile text, masked
secrets, page names kept inside --out, old records ("not recorded"), and `render_run` on a real offline run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.cli.app import main
from langgraph_anytool.eval.intervals import bootstrap_mean
from langgraph_anytool.eval.report import render_run, write_site
from langgraph_anytool.eval.report.page import backtracks, query_page
from langgraph_anytool.sanitize.paths import query_page_name

XSS = "<script>alert('x')</script><img src=x onerror=alert(1)>"
KEY = "sk-live0123456789abcdefSECRET"  # shaped like an API key: masked by its shape
ENV_KEY = "hunter2-plain-looking-value"  # not shaped like a key: masked because the environment names it a secret


def call(cid: str, fn: str, args: dict[str, Any], status: str = "ok", **flags: Any) -> dict[str, Any]:
    return {"tool_call_id": cid, "function": fn, "api_id": f"Cat/tool/{fn}", "arguments": args, "status": status,
            "cached": False, **flags}


def node(i: int, parent: int | None, calls: list[dict[str, Any]], status: str, observations: dict[str, str]
         ) -> dict[str, Any]:
    msgs: list[dict[str, Any]] = []
    if calls:
        msgs.append({"role": "assistant", "content": f"thinking at {i}",
                     "tool_calls": [{"name": c["function"], "args": c["arguments"], "id": c["tool_call_id"]}
                                    for c in calls]})
        msgs += [{"role": "tool", "content": observations.get(c["tool_call_id"], "{}"),
                  "tool_call_id": c["tool_call_id"], "name": c["function"]} for c in calls]
    return {"id": i, "parent": parent, "depth": 0 if parent is None else 1, "status": status, "note": "",
            "calls": calls, "messages": msgs}


def rich_record() -> dict[str, Any]:
    """A run with two rounds: one API pruned at the reflection, a backtrack in attempt 2, a hostile tool name and
    observation, and a key in an observation."""
    entry = {"api_id": "Cat/tool/good", "category": "Cat", "tool": "tool", "api": "good", "function_name": "good_fn",
             "added_by": "meta/Cat/t1", "round": 0}
    bad = {**entry, "api_id": "Cat/tool/bad", "function_name": XSS, "api": "bad"}
    late = {**entry, "api_id": "Cat/tool/late", "function_name": "late_fn", "round": 1}
    attempt1 = {"attempt": 1, "round": 0, "mode": "dfsdt", "finish_type": "give_up", "answer": "", "reason": "no",
                "failed_functions": [XSS], "api_calls": 1, "tree": [
                    node(0, None, [], "open", {}),
                    node(1, 0, [call("c1", XSS, {"q": XSS}, status="error")], "dead",
                         {"c1": json.dumps({"error": f"{XSS} token {KEY} and {ENV_KEY}"})})]}
    attempt2 = {"attempt": 2, "round": 1, "mode": "dfsdt", "finish_type": "give_answer", "answer": "42",
                "reason": "", "failed_functions": [], "api_calls": 2, "tree": [
                    node(0, None, [], "open", {}),
                    node(1, 0, [call("c2", "good_fn", {"x": 1}, cached=True)], "dead", {"c2": "{}"}),
                    node(2, 0, [call("c3", "late_fn", {"x": 2}, simulated=True)], "open", {"c3": "y" * 5000}),
                    node(3, 2, [call("c4", "Finish", {"return_type": "give_answer", "final_answer": "42"},
                                     status="finish:give_answer")], "answer", {})]}
    agents = [
        {"id": "meta", "level": "meta", "parent": None, "status": "finished", "steps": 2, "activations": 1,
         "end_reason": "finish_search", "tokens": 100, "children": ["meta/Cat"],
         "messages": [{"role": "human", "content": "Query"},
                      {"role": "ai", "content": "", "tool_calls": [
                          {"name": "create_agent_category_level", "args": {"category_name": "Cat"}, "id": "m1"}]},
                      {"role": "tool", "content": "Created", "tool_call_id": "m1"}]},
        {"id": "meta/Cat", "level": "category", "parent": "meta", "category": "Cat", "status": "finished",
         "steps": 1, "activations": 1, "messages": []},
        {"id": "meta/Cat/t1", "level": "tool", "parent": "meta/Cat", "tools": ["tool"], "status": "finished",
         "steps": 3, "activations": 2, "messages": [
             {"role": "human", "content": "start"},
             {"role": "ai", "content": "", "tool_calls": [
                 {"name": "add_apis_into_api_pool", "args": {"api_names": ["good", "bad"]}, "id": "a1"}]},
             {"role": "tool", "content": "added", "tool_call_id": "a1"},
             {"role": "human", "content": "The answer failed: try again"}]},
    ]
    events = [
        {"kind": "start", "t": 0.0},
        {"kind": "agent_step", "agent": "meta", "level": "meta", "round": 0, "t0": 0.0, "t": 0.5,
         "functions": ["create_agent_category_level"], "added": []},
        {"kind": "agent_step", "agent": "meta/Cat/t1", "level": "tool", "round": 0, "t0": 0.5, "t": 0.8,
         "functions": ["check_if_request_solvable"], "added": [],
         "solvable": [{"label": "Solvable", "reason": "", "apis": 2}]},
        {"kind": "solve", "t": 0.9, "round": 0, "attempt": 1, "pool": ["Cat/tool/good", "Cat/tool/bad"]},
        {"kind": "judge", "t": 1.5, "t0": 1.4, "attempt": 1, "round": 0, "label": "Unsolved", "by": "answer",
         "reason": f"gave up {XSS}"},
        {"kind": "reflect", "t": 1.6, "request": "new", "round": 1, "level": "tool", "reactivated": ["meta/Cat/t1"],
         "reason": "the API failed", "pruned": [bad]},
        {"kind": "solvable", "by": "gate", "t": 1.9, "round": 1, "label": "Unsure", "reason": ""},
        {"kind": "solve", "t": 2.0, "round": 1, "attempt": 2, "pool": ["Cat/tool/good", "Cat/tool/late"]},
        {"kind": "judge", "t": 2.6, "t0": 2.5, "attempt": 2, "round": 1, "label": "Solved", "by": "answer",
         "reason": "ok"},
        {"kind": "end", "t": 2.7, "status": "solved"},
    ]
    return {"query_id": "../../escape/" + XSS, "group": "G1", "query": f"find {XSS} with {KEY}",
            "status": "solved", "answer": "42", "reason": "", "verdict": {"label": "Solved", "by": "answer"},
            "error_kind": None, "stop_reason": "", "pool": ["Cat/tool/good", "Cat/tool/late"],
            "pool_entries": [entry, late], "removed_apis": ["Cat/tool/bad"], "agents": agents, "events": events,
            "trajectory": [attempt1, attempt2], "wall_time": 2.7,
            "usage": {"roles": {"meta": {"model_calls": 2, "input_tokens": 300, "output_tokens": 20},
                                "solver": {"model_calls": 4, "input_tokens": 900, "output_tokens": 80,
                                           "cost_usd": 0.01},
                                "judge": {"model_calls": 2, "input_tokens": 100, "output_tokens": 10}},
                      "model_calls": 8, "input_tokens": 1300, "output_tokens": 110, "api_calls": 3,
                      "reflections": 1, "solver_attempts": 2, "pool_size": 2, "cost_usd": 0.01}}


OLD = {"query_id": 7, "group": "G1", "query": "old", "status": "unsolved", "answer": "", "pool": ["a/b/c"]}


def scripts_of(html: str) -> list[str]:
    return re.findall(r"<script[^>]*>", html, flags=re.I)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Any]:
    monkeypatch.setenv("MY_SERVICE_TOKEN", ENV_KEY)
    out = tmp_path / "site"
    return out, write_site([rich_record(), OLD, {**OLD, "query_id": 8, "status": "error", "error_kind": "timeout"}],
                           out, sources=["hand-made"])


def test_a_page_shows_every_part_of_the_run(site: tuple[Path, Any]) -> None:
    out, _report = site
    page = (out / query_page_name("G1", "../../escape/" + XSS)).read_text()
    for part in ('id="agents"', 'id="pool"', 'id="search"', 'id="reflections"', 'id="timeline"', 'id="usage"'):
        assert part in page
    assert page.count('class="node n-') >= 3 + 2 + 4  # three agents, two + four search-tree nodes
    assert "backtracks</dt><dd>1 (#1 → #0)" in page  # attempt 2 went back from node 1 to the root
    assert 'stroke-dasharray="4 3"' in page  # node 2 was reached by backtracking
    assert "b-cached" in page and "b-simulated" in page and "finish:give_answer" in page
    assert "round 1" in page and "the API failed" in page  # the pruned API, pruned in round 1, and why
    assert "Unsure</span> by the gate" in page and "Solvable</span> by <code>meta/Cat/t1</code> over 2 APIs" in page
    assert "<details class=\"fold\">" in page and "5,000 characters" in page  # the long observation folds
    assert "The answer failed: try again" in page  # what the re-activated agent was told
    assert "Cost per role" in page and "not recorded" not in page


def test_hostile_text_is_escaped_and_secrets_never_appear(site: tuple[Path, Any]) -> None:
    out, report = site
    for path in [report.index, *report.pages]:
        html = path.read_text()
        assert scripts_of(html) == ["<script>"], path  # the page's own script only
        assert "<img" not in html  # the hostile tag only as text
        assert KEY not in html and ENV_KEY not in html and "0123456789abcdef" not in html
    page = (out / query_page_name("G1", "../../escape/" + XSS)).read_text()
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page  # shown as text
    assert "***" in page


def test_page_names_stay_inside_the_folder_and_follow_the_compare_rule(site: tuple[Path, Any]) -> None:
    out, report = site
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["index.html", query_page_name("G1", "../../escape/" + XSS), query_page_name("G1", 7),
         query_page_name("G1", 8)])
    index = report.index.read_text()
    assert f'href="{query_page_name("G1", 7)}"' in index


def test_old_records_render_saying_not_recorded(site: tuple[Path, Any]) -> None:
    out, _ = site
    page = (out / query_page_name("G1", 7)).read_text()
    for what in ("The agents", "The pool&#x27;s entries", "The solver&#x27;s search trees", "The reflections",
                 "The timeline", "The usage per role", "The judge&#x27;s verdicts"):
        assert f"{what}" in page and "not recorded" in page, what
    assert "<code>a/b/c</code>" in page  # the pool ids it does hold


def test_index_rates_taxonomy_and_table(site: tuple[Path, Any]) -> None:
    _, report = site
    index = report.index.read_text()
    ci = bootstrap_mean([1.0, 0.0, 0.0]).scaled(100)
    assert f"<td>33.3</td><td>[{ci.low:.1f}, {ci.high:.1f}]</td>" in index
    assert 'href="#queries?status=unsolved">1</a>' in index and 'href="#queries?error_kind=timeout">1</a>' in index
    assert 'class="grid sortable" id="queries"' in index and 'id="q-text"' in index
    assert index.count("<svg") >= 4  # the interval chart, tokens, calls and cost per role


def test_backtracks_are_nodes_whose_parent_is_not_the_node_before() -> None:
    nodes = [{"id": 0, "parent": None}, {"id": 1, "parent": 0}, {"id": 2, "parent": 1}, {"id": 3, "parent": 0},
             {"id": 4, "parent": 3}]
    assert backtracks(nodes) == [(2, 0)]


def test_damaged_fields_still_render() -> None:
    html = query_page({"query_id": 1, "events": [{"kind": "agent_step", "t": "soon"}, "x", None],
                       "agents": [None, {"id": "a", "parent": "a"}], "trajectory": [{"tree": [{"id": 0, "parent": 0}]}],
                       "usage": {"roles": {"x": "y"}}, "pool_entries": [1]})
    assert "Timeline: not recorded" in html or "The timeline (timed events): not recorded" in html


def test_render_run_renders_a_graph_invoke_output() -> None:
    from langgraph_anytool import Catalog, create_anytool_graph

    out = create_anytool_graph(Catalog.builtin(), "offline").invoke({"query": "Convert 26.2 miles to kilometers."})
    html = render_run(out)
    assert html.startswith("<!DOCTYPE html>") and "Convert 26.2 miles" in html
    assert 'class="node n-meta"' in html and 'id="search"' in html and "Tokens per role" in html
    assert "not recorded" not in html


def test_cli_report_and_its_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "r.jsonl"
    results.write_text(json.dumps(rich_record()) + "\n" + json.dumps(OLD) + "\n")
    assert main(["report", str(results), "--out", str(tmp_path / "site")]) == 0
    assert "2 query pages" in capsys.readouterr().out
    assert main(["report", "--out", str(tmp_path / "x")]) == 2
    assert "nothing to report" in capsys.readouterr().err
    assert main(["report", str(results), "--thread", "t", "--out", str(tmp_path / "x")]) == 2
    assert "--thread and --db go together" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "x")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_report_of_one_checkpointed_thread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "runs.sqlite")
    assert main(["run", "Convert 26.2 miles to kilometers.", "--offline", "--db", db, "--thread", "t/1",
                 "--quiet", "--no-cache"]) == 0
    assert main(["report", "--thread", "t/1", "--db", db, "--out", str(tmp_path / "one")]) == 0
    page = (tmp_path / "one" / query_page_name("thread", "t/1")).read_text()
    assert "Convert 26.2 miles" in page and 'class="node n-meta"' in page and "not recorded" not in page
    capsys.readouterr()
    assert main(["report", "--thread", "other", "--db", db, "--out", str(tmp_path / "x")]) == 2
    assert "no checkpoint of thread 'other'" in capsys.readouterr().err
