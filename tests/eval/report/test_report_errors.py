"""`anytool report`'s index lists the distinct error messages with their counts (issue 34 §2): a batch of missing-key
errors is one line saying so (today they showed only as `error_kind: other`), messages are grouped and ranked, and a
key inside a message never reaches the page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from langgraph_anytool.cli.app import main

KEY = "sk-proj-" + "Zq8" * 12  # shaped like an OpenAI key
ENV_KEY = "a-secret-value-of-the-environment-42"
MISSING = ("ModelNotConfiguredError: model 'openai:gpt-4-turbo' needs an API key: set OPENAI_API_KEY, or pass a "
           "BaseChatModel made with api_key=...")


def rec(qid: int, status: str = "error", **fields: object) -> dict[str, object]:
    return {"query_id": qid, "group": "G1", "query": f"q{qid}", "status": status, "answer": "", **fields}


def write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def errors_section(html: str) -> str:
    found = re.search(r'<section id="errors">.*?</section>', html, re.DOTALL)
    assert found, "no error-messages section"
    return found.group(0)


def test_the_index_lists_each_distinct_message_with_its_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", ENV_KEY)
    records = [rec(i, error_kind="other", error=MISSING, reason=MISSING) for i in range(47)]
    records += [rec(100 + i, error_kind="auth", reason=f"auth: solver model: Error code: 401 - Incorrect API key "
                                                       f"provided: {KEY}") for i in range(3)]
    records += [rec(200, error_kind="other", reason=f"RuntimeError: the proxy said {ENV_KEY}"),
                rec(300, status="solved", answer="42"), rec(301, status="timeout", reason="timed out after 5 s")]
    out = tmp_path / "site"
    assert main(["report", str(write(tmp_path / "r.jsonl", records)), "--out", str(out)]) == 0
    capsys.readouterr()
    html = (out / "index.html").read_text()
    section = errors_section(html)
    rows = re.findall(r"<tr><td>(.*?)</td><td><code>(.*?)</code></td><td><a [^>]*>(\d+)</a></td></tr>", section)
    assert [(re.sub("<[^>]+>", "", k), n) for k, _, n in rows] == [("configuration", "47"), ("auth", "3"),
                                                                   ("other", "1")]
    assert "needs an API key: set OPENAI_API_KEY" in rows[0][1]  # the missing-key message itself, once
    assert "51 queries ended in an error, with 3 distinct messages" in section  # the timeout is no error
    assert KEY not in html and ENV_KEY not in html and "***" in section


def test_no_section_without_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    assert main(["report", str(write(tmp_path / "r.jsonl", [rec(1, status="solved")])), "--out", str(out)]) == 0
    capsys.readouterr()
    assert 'id="errors"' not in (out / "index.html").read_text()


def test_many_distinct_messages_are_capped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = [rec(i, error_kind="other", reason=f"RuntimeError: failure number {i}") for i in range(45)]
    records += [rec(100 + i, error_kind="bad_request", reason="bad_request: x") for i in range(2)]
    out = tmp_path / "site"
    assert main(["report", str(write(tmp_path / "r.jsonl", records)), "--out", str(out)]) == 0
    capsys.readouterr()
    section = errors_section((out / "index.html").read_text())
    assert section.count("<tr><td>") == 30 and "the 30 most frequent are listed (16 more)" in section
    assert section.index("bad_request: x") < section.index("failure number")  # the most frequent first
