"""Bad input gets one clear line (issue 11, section 3): deep JSON, control characters, NaN in --json output,
undecodable queries, unusable --db files and a disk that fills up mid-run (then resumes)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.catalog.errors import CatalogError
from langgraph_anytool.cli.app import main
from langgraph_anytool.sanitize import check_query, clean_query, nesting_depth, terminal_safe
from langgraph_anytool.tools import dbfile

DEEP = 200_000
QUERY = "Convert 26.2 miles to kilometers. Is 2025-07-14 a public holiday in France? How far is Paris from Berlin?"


@pytest.fixture(autouse=True)
def _offline_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ANYTOOL_MODEL", raising=False)
    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")
    monkeypatch.setenv("ANYTOOL_INDEX_DIR", str(tmp_path / "index"))


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("anytool: error: "), err
    assert "Traceback" not in err[0]
    return err[0]


# ------------------------------------------------------------------------------ deep nesting
@pytest.mark.parametrize("kind", ["toolbench", "openapi-json", "openapi-yaml"])
def test_deeply_nested_files_give_one_line(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep = "[" * DEEP + "]" * DEEP
    if kind == "toolbench":
        (tmp_path / "Cat").mkdir()
        bad = tmp_path / "Cat" / "deep.json"
        bad.write_text(deep)
        target = tmp_path
    elif kind == "openapi-json":
        bad = target = tmp_path / "spec.json"
        bad.write_text('{"openapi": "3.0.0", "x": ' + deep + "}")
    else:
        bad = target = tmp_path / "spec.yaml"
        bad.write_text("openapi: 3.0.0\nx: " + deep + "\n")
    assert main(["catalog", "--catalog", str(target)]) == 2
    line = one_error_line(capsys)
    assert str(bad) in line and "nesting too deep" in line


def test_deep_query_file_and_cache_import(tmp_path: Path) -> None:
    from langgraph_anytool.catalog.catalog import Catalog
    from langgraph_anytool.eval.retrieval import load_queries
    from langgraph_anytool.tools.cache import ResponseCache

    deep = tmp_path / "q.json"
    deep.write_text("[" * DEEP + "]" * DEEP)
    with pytest.raises(CatalogError, match="nesting too deep"):
        load_queries([deep], Catalog.builtin())
    lines = tmp_path / "c.jsonl"
    lines.write_text('{"api_id": "a", "arguments": ' + "[" * DEEP + "]" * DEEP + "}\n")
    with ResponseCache.memory() as cache, pytest.raises(ValueError, match="nesting too deep"):
        cache.import_jsonl(lines)
    assert nesting_depth({"a": [[1]]}) == 3 and nesting_depth(5) == 0


# ------------------------------------------------------------------------------ terminal and JSON output
@pytest.fixture
def evil_catalog(tmp_path: Path) -> Path:
    (tmp_path / "Evil").mkdir()
    doc = {"tool_name": "Evil\x1b[2J\x1b]0;pwned\x07Tool", "tool_description": "wipes \x1b[31mthe screen\x00\u202e",
           "api_list": [{"name": "nan_api", "url": "/a", "method": "GET", "description": "x\x9b31m",
                         "required_parameters": [{"name": "x", "type": "NUMBER", "description": "d",
                                                  "default": float("nan")}],
                         "optional_parameters": [{"name": "y", "type": "NUMBER", "description": "d",
                                                  "default": float("inf")}]}]}
    (tmp_path / "Evil" / "evil.json").write_text(json.dumps(doc))  # json.dumps writes NaN/Infinity literals
    return tmp_path


def test_control_characters_are_escaped_on_the_terminal(evil_catalog: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--category", "Evil"], ["--tool", "evil"]):
        assert main(["catalog", "--catalog", str(evil_catalog), *argv]) == 0
        out = capsys.readouterr().out
        assert not any(c in out for c in "\x1b\x00\x07\x9b\u202e"), repr(out)
        assert "\\u001b[2J" in out
    assert terminal_safe("a\x1bb\nc\td\re") == "a\\u001bb\nc\td\re"


def test_catalog_json_is_valid_json(evil_catalog: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def no_constants(name: str) -> Any:
        raise ValueError(f"invalid JSON constant {name}")

    assert main(["catalog", "--catalog", str(evil_catalog), "--tool", "evil", "--json"]) == 0
    data = json.loads(capsys.readouterr().out, parse_constant=no_constants)
    api = data["apis"][0]
    assert api["required_parameters"][0]["default"] is None and api["optional_parameters"][0]["default"] is None
    assert data["tool"].startswith("Evil\x1b")  # the text itself survives, escaped as JSON requires


# ------------------------------------------------------------------------------ queries
def test_undecodable_query_bytes_are_repaired_with_a_note(capsys: pytest.CaptureFixture[str]) -> None:
    argv_text = b"convert 26.2 \xff\xfe miles to kilometers".decode("utf-8", "surrogateescape")  # as Python's argv
    assert main(["search", argv_text, "--k", "3"]) == 0
    captured = capsys.readouterr()
    assert "2 undecodable character(s)" in captured.err and "convert" in captured.out.lower()
    text, notes = clean_query("a\ud800b\x00c")  # lone surrogate (e.g. from JSON) and NUL via graph.invoke
    assert text == "a\ufffdbc" and len(notes) == 2
    assert text.encode("utf-8")  # now encodable
    assert clean_query("fine query") == ("fine query", [])
    for bad in ("", " \x00 ", 3, "x" * 20_001):
        with pytest.raises(ValueError):
            check_query(bad)


def test_undecodable_query_runs_to_an_answer(capsys: pytest.CaptureFixture[str]) -> None:
    query = b"Convert 26.2 miles to kilometers \xff".decode("utf-8", "surrogateescape")
    assert main(["run", query, "--offline", "--no-cache"]) == 0
    captured = capsys.readouterr()
    assert "undecodable" in captured.err and "status: solved" in captured.out


# ------------------------------------------------------------------------------ --db
def test_unusable_db_files_give_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("hello, not a database")
    good = tmp_path / "good.sqlite"
    assert main(["run", "Convert 26.2 miles to kilometers", "--offline", "--db", str(good), "--no-cache"]) == 0
    capsys.readouterr()
    data = good.read_bytes()
    truncated = tmp_path / "truncated.sqlite"
    truncated.write_bytes(data[: len(data) // 2])
    cases = {tmp_path / "missing" / "db.sqlite": "does not exist", tmp_path: "is a directory",
             not_sqlite: "is not an SQLite database", truncated: "damaged"}
    for path, problem in cases.items():
        assert main(["run", "Convert 1 km to miles", "--offline", "--db", str(path), "--no-cache"]) == 2
        line = one_error_line(capsys)
        assert str(path) in line and problem in line, line


def _full_after(pages: int) -> Any:
    real = dbfile.open_sqlite

    def opener(path: str | Path, *, what: str = "database") -> sqlite3.Connection:
        conn = real(path, what=what)
        conn.execute(f"PRAGMA max_page_count={pages}")  # SQLite reports SQLITE_FULL past this size
        return conn

    return opener


def test_a_full_disk_stops_the_run_with_one_line_and_it_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "ck.sqlite"
    with monkeypatch.context() as m:
        m.setattr(dbfile, "open_sqlite", _full_after(40))
        argv = ["run", QUERY, "--offline", "--db", str(db), "--no-cache", "--thread", "t-full"]
        assert main(argv) == 2
    line = one_error_line(capsys)
    assert str(db) in line and "disk is full" in line
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "resuming the interrupted run on thread t-full" in out and "status: solved" in out


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 300 KiB tmpfs (a real full disk), where this process may mount one (root with CAP_SYS_ADMIN)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(mnt)], capture_output=True,
                          check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_really_full_tmpfs_then_freed_space(small_tmpfs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = small_tmpfs / "ck.sqlite"
    argv = ["run", QUERY, "--offline", "--db", str(db), "--no-cache", "--thread", "t-tmpfs"]
    assert main(argv) == 2
    line = one_error_line(capsys)
    assert str(db) in line and "disk is full" in line
    subprocess.run(["mount", "-o", "remount,size=20m", str(small_tmpfs)], check=True)
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "resuming the interrupted run on thread t-tmpfs" in out and "status: solved" in out
