"""Issue 21, points 5 and 6: every storage fault ends with one line naming the file (no traceback, no silent
garbage), and one writer per results file (two `eval run` processes on one `--out` never run a query twice)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from langgraph_anytool.cli.app import main
from langgraph_anytool.eval.anytool.results import ResultsWriter
from tests.eval.anytool.test_eval_run import write_group

ENV = {**os.environ, "ANYTOOL_EMBEDDINGS": "none", "ANYTOOL_CACHE": "off"}
BWRAP = shutil.which("bwrap")


def _one_line_error(capsys: pytest.CaptureFixture[str], rc: int, *needles: str) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2, err
    assert err and err[-1].startswith("anytool: error: "), err
    assert "Traceback" not in "\n".join(err)
    for needle in needles:
        assert needle in err[-1], err[-1]
    return err[-1]


def _eval(tmp_path: Path, *extra: str) -> int:
    q = write_group(tmp_path / "g.json", 2)
    return main(["eval", "run", "--queries", str(q), "--offline", "--out", str(tmp_path / "r.jsonl"),
                 "--no-progress", *extra])


def _damaged(tmp_path: Path) -> Path:
    """A real checkpoint-like SQLite file with pages overwritten in the middle (a torn disk write)."""
    path = tmp_path / "damaged.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, "x" * 500) for i in range(2000)])
    conn.commit()
    conn.close()
    size = path.stat().st_size
    with path.open("r+b") as fh:
        for off in range(4096 * 2, size, 4096 * 3):
            fh.seek(off + 100)
            fh.write(os.urandom(2000))
    return path


@pytest.mark.parametrize("kind", ["not-sqlite", "damaged"])
def test_eval_run_refuses_a_foreign_or_damaged_db_before_the_first_query(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    """Today: exit 0, every query recorded as error/other "DatabaseError" (never retried by default)."""
    if kind == "not-sqlite":
        db = tmp_path / "junk.sqlite"
        db.write_bytes(os.urandom(8192))
    else:
        db = _damaged(tmp_path)
    line = _one_line_error(capsys, _eval(tmp_path, "--db", str(db)), str(db))
    assert ("not an SQLite database" if kind == "not-sqlite" else "damaged") in line
    assert not (tmp_path / "r.jsonl").exists() or (tmp_path / "r.jsonl").read_text() == ""


def test_anytool_run_on_a_damaged_db_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Today: SQLite's integrity report, one line per bad cell (102 lines)."""
    db = _damaged(tmp_path)
    rc = main(["run", "Convert 5 kilograms to pounds.", "--offline", "--db", str(db), "--no-cache"])
    line = _one_line_error(capsys, rc, str(db), "damaged")
    assert len(line) < 400


@pytest.mark.parametrize(("db", "needle"), [
    ("{tmp}", "is a directory"),
    ("{tmp}/missing/dir/c.sqlite", "does not exist"),
    ("mysql://user@db.example/anytool", "unsupported URL scheme 'mysql'"),
    ("postgresql://user:hunter2@127.0.0.1:9/anytool", "cannot connect"),
])
def test_bad_db_values_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], db: str,
                                    needle: str) -> None:
    if db.startswith("postgresql"):
        pytest.importorskip("psycopg")
    value = db.format(tmp=tmp_path)
    line = _one_line_error(capsys, _eval(tmp_path, "--db", value), needle)
    assert "hunter2" not in line  # a URL's password never reaches the message


@pytest.mark.parametrize("kind", ["not-sqlite", "directory"])
def test_a_bad_api_cache_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    cache = tmp_path / "cache.sqlite"
    if kind == "directory":
        cache.mkdir()
    else:
        cache.write_text("not a database at all, just text\n" * 10)
    _one_line_error(capsys, _eval(tmp_path, "--api-cache", str(cache), "--execution", "template"), str(cache),
                    "directory" if kind == "directory" else "not an SQLite database")


def test_bad_utf8_in_a_query_file_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q = tmp_path / "bad.json"
    q.write_bytes(b'[{"query": "caf\xe9 \xff", "query_id": 1}]')
    rc = main(["eval", "run", "--queries", str(q), "--offline", "--out", str(tmp_path / "r.jsonl"), "--no-progress"])
    _one_line_error(capsys, rc, str(q), "UTF-8")


def test_bad_csv_task_data_names_the_file(tmp_path: Path) -> None:
    from langgraph_anytool.eval.oppo.data import TaskDataError, load_task, sample_dir

    header, first, *_ = (sample_dir() / "task1.csv").read_text(encoding="utf-8").splitlines(True)
    (tmp_path / "task1.csv").write_bytes(header.encode() + b"\xff\xfe" + first.encode())
    with pytest.raises(TaskDataError, match=r"task1\.csv: not UTF-8"):
        load_task(1, tmp_path)
    huge = '"' + "x" * 140_000 + '"'
    (tmp_path / "task1.csv").write_text(header + huge + first[first.index(","):], encoding="utf-8")
    with pytest.raises(TaskDataError, match=r"task1\.csv: not readable as CSV .*field larger"):
        load_task(1, tmp_path)


def _cli(args: list[str], cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "langgraph_anytool.cli", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=300, **kw)  # type: ignore[call-overload]


def test_file_size_limit_during_eval_run_names_the_file(tmp_path: Path) -> None:
    """EFBIG (RLIMIT_FSIZE, as `ulimit -f`): the checkpoint database stops growing mid-batch."""
    q = write_group(tmp_path / "g.json")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))

    done = _cli(["eval", "run", "--queries", str(q), "--offline", "--out", "r.jsonl", "--db", "c.sqlite",
                 "--no-progress"], tmp_path, preexec_fn=limit)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert lines[-1].startswith("anytool: error: checkpoint database c.sqlite"), lines[-1]
    records = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert all(r["status"] != "error" for r in records)  # the fault is no query's error


@pytest.mark.skipif(BWRAP is None, reason="bubblewrap mounts the small and the read-only file systems")
@pytest.mark.parametrize("where", ["db", "out", "cache"])
def test_a_full_disk_during_eval_run_names_the_file(tmp_path: Path, where: str) -> None:
    """ENOSPC: a 1 MB file system holds the checkpoint database, the results file or the response cache."""
    q = write_group(tmp_path / "g.json")
    full = tmp_path / "full"
    full.mkdir()
    args = ["eval", "run", "--queries", str(q), "--offline", "--no-progress",
            "--out", str(full / "r.jsonl") if where == "out" else str(tmp_path / "r.jsonl")]
    if where == "db":
        args += ["--db", str(full / "c.sqlite")]
    env = dict(ENV)
    if where == "cache":
        args = ["run", "Convert 5 kilograms to pounds.", "--offline", "--execution", "template"]
        env.pop("ANYTOOL_CACHE")
        env["ANYTOOL_CACHE_DIR"] = str(full / "cache")
    fill = "" if where == "db" else f"head -c 1048576 /dev/zero > {full}/filler 2>/dev/null; "
    size = 1_000_000 if where == "db" else 1_048_576
    done = subprocess.run([str(BWRAP), "--bind", "/", "/", "--dev", "/dev", "--size", str(size), "--tmpfs", str(full),
                           "--", "sh", "-c", fill + " ".join([f"'{sys.executable}'", "-m", "langgraph_anytool.cli",
                                                               *(f"'{a}'" for a in args)])],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "disk is full" in lines[-1] and str(full) in lines[-1], lines[-1]


@pytest.mark.skipif(BWRAP is None, reason="bubblewrap mounts the small and the read-only file systems")
@pytest.mark.parametrize("target", ["db", "out"])
def test_a_read_only_file_system_is_one_line(tmp_path: Path, target: str) -> None:
    q = write_group(tmp_path / "g.json", 1)
    ro = tmp_path / "ro"
    ro.mkdir()
    args = ["eval", "run", "--queries", str(q), "--offline", "--no-progress"]
    args += ["--db", str(ro / "c.sqlite"), "--out", str(tmp_path / "r.jsonl")] if target == "db" else \
        ["--out", str(ro / "r.jsonl")]
    done = subprocess.run([str(BWRAP), "--bind", "/", "/", "--dev", "/dev", "--ro-bind", str(ro), str(ro), "--",
                           sys.executable, "-m", "langgraph_anytool.cli", *args],
                          cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "read-only" in lines[-1] and str(ro) in lines[-1], lines[-1]


# ------------------------------------------------------------------------------------------------ point 6
def _many(path: Path, n: int = 20) -> Path:
    base = json.loads(write_group(path).read_text())
    items = [{**base[i % len(base)], "query_id": 500 + i} for i in range(n)]
    path.write_text(json.dumps(items))
    return path


@pytest.mark.parametrize("shared_db", [False, True])
def test_two_eval_runs_on_one_out_never_run_a_query_twice(tmp_path: Path, shared_db: bool) -> None:
    """Today both processes run all 20 queries: 40 records. Now the second is refused with one line (or, when
    it starts after the first has finished, finds every query done)."""
    q = _many(tmp_path / "twenty.json")
    cmd = [sys.executable, "-m", "langgraph_anytool.cli", "eval", "run", "--queries", str(q), "--offline",
           "--concurrency", "2", "--out", "r.jsonl", "--no-progress"] + (["--db", "c.sqlite"] if shared_db else [])
    procs = [subprocess.Popen(cmd, cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    codes = sorted(p.returncode for p in procs)
    ids = Counter(json.loads(line)["query_id"] for line in (tmp_path / "r.jsonl").read_text().splitlines())
    assert len(ids) == 20 and max(ids.values()) == 1, (ids, [e[-800:] for _, e in outs])
    refused = [e for p, (_, e) in zip(procs, outs, strict=True) if p.returncode != 0]
    assert codes in ([0, 0], [0, 2]), [e[-800:] for _, e in outs]
    for err in refused:
        last = err.strip().splitlines()[-1]
        assert "another process is writing it" in last and "r.jsonl" in last and "Traceback" not in err


def test_results_writer_is_exclusive_unless_shared(tmp_path: Path) -> None:
    from langgraph_anytool.eval.anytool.results import ResultsInUse

    out = tmp_path / "r.jsonl"
    with ResultsWriter(out):
        with pytest.raises(ResultsInUse, match="another process is writing it"):
            ResultsWriter(out)
        with pytest.raises(ResultsInUse):
            ResultsWriter(out, shared=True)
    with ResultsWriter(out, shared=True), ResultsWriter(out, shared=True), pytest.raises(ResultsInUse):
        ResultsWriter(out)  # claims-sharing workers hold the file together; an exclusive writer is refused
    with ResultsWriter(out):  # released on close
        pass
