"""Local attack classes of the bomb-and-fault benchmark (issue 21, points 3-6 and 9-12), for `benchmarks/hardening.py`.

Each function makes its class's attempts against this process's code (the CLI's `main`, the sandbox, the batch
runner) or against `anytool` subprocesses, and returns `(attempts, held)`: an attempt holds when the fault ends
the way the issue asks (refused or contained, one line naming the file, nothing run twice, the budget kept).
Run one class alone: `python benchmarks/hardening_attacks/local.py CLASS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `tests.sandbox_isolation` when the file runs alone
    sys.path.insert(0, str(ROOT))
QUERIES = ["Convert 26.2 miles to kilometers.", "What day of the week was 2024-02-29?",
           "What is the geographic midpoint between Paris and Berlin?", "Convert 100 degrees Fahrenheit to Celsius.",
           "What day of the week is 2030-01-01?", "Convert 5 kilograms to pounds."]
ENV = {**os.environ, "ANYTOOL_EMBEDDINGS": "none", "ANYTOOL_CACHE": "off"}


@contextlib.contextmanager
def _workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="anytool-attack-") as tmp:
        yield Path(tmp)


def _group(path: Path, n: int = len(QUERIES), query: str | None = None) -> Path:
    items = [{"query_id": 100 + i, "query": query or QUERIES[i % len(QUERIES)]} for i in range(n)]
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def _cli(args: list[str]) -> tuple[int, str]:
    """`anytool ARGS` in this process (lexical search only, no response cache): exit code and stderr."""
    from langgraph_anytool.cli.app import main

    err, out = io.StringIO(), io.StringIO()
    with _lexical(), contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = main(args)
    return rc, err.getvalue()


@contextlib.contextmanager
def _lexical() -> Iterator[None]:
    """Lexical catalog search and no response cache while the block runs (the embedding model's memory is not
    the attack's)."""
    saved = {k: os.environ.get(k) for k in ("ANYTOOL_EMBEDDINGS", "ANYTOOL_CACHE")}
    os.environ.update(ANYTOOL_EMBEDDINGS="none", ANYTOOL_CACHE="off")
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _one_line(rc: int, err: str, *needles: str) -> bool:
    """Refused with exit code 2, one `anytool: error:` line naming what is wrong, no traceback."""
    lines = err.strip().splitlines()
    return (rc == 2 and bool(lines) and lines[-1].startswith("anytool: error:") and "Traceback" not in err
            and all(n in lines[-1] for n in needles))


def _sandbox_ready() -> bool:
    """Whether hostile code may run: bwrap works and a probe proved it isolates pids (`tests.sandbox_isolation`)."""
    from tests.sandbox_isolation import isolation_problem

    return isolation_problem() is None


# ------------------------------------------------------------------------------------------------ point 3
def sandbox_writes() -> tuple[int, int]:
    """Writes outside the capped /tmp, filling /tmp past its cap, and third-party imports, inside the sandbox."""
    if not _sandbox_ready():
        return 0, 0
    from langgraph_anytool.catalog.builtin._sandbox import SandboxLimits, run_python

    def refused(code: str) -> bool:
        r = run_python(code, limits=SandboxLimits(timeout_s=30, cpu_s=30))
        return r["stdout"].strip().endswith("refused")

    write = ("import os\ntry:\n    with open({path!r}, 'wb') as fh:\n        fh.write(b'x' * (1 << 20))\n"
             "    print('wrote')\nexcept OSError:\n    print('refused')\n")
    targets = ["/etc/pwned", "/dev/shm/pwned", "/pwned", "/usr/lib/pwned", "/sandbox/pwned", "/proc/pwned",
               "/dev/pwned", "/usr/lib/python3/dist-packages/pwned"]
    results = [refused(write.format(path=p)) for p in targets]
    fill = ("try:\n    for k in range(16):\n        with open(f'/tmp/f{k}', 'wb') as fh:\n"
            "            for _ in range(4):\n                fh.write(b'x' * (1 << 20))\n    print('wrote')\n"
            "except OSError:\n    print('refused')\n")
    results.append(refused(fill))  # 64 MiB into a 32 MiB /tmp
    imp = ("import glob, importlib, sys\nsys.path += glob.glob('/usr/lib/python3*/*-packages') + "
           "glob.glob('/usr/local/lib/python3*/*-packages') + glob.glob(sys.base_prefix + '/lib/python3*/*-packages')\n"
           "try:\n    importlib.import_module({name!r})\n    print('imported')\nexcept ImportError:\n    print('refused')\n")
    results += [refused(imp.format(name=n)) for n in ("_cffi_backend", "cffi", "yaml", "pip", "_ctypes")]
    shm = os.statvfs("/dev/shm")
    return len(results), sum(results) if (shm.f_blocks - shm.f_bfree) * shm.f_frsize < (1 << 30) else 0


# ------------------------------------------------------------------------------------------------ point 4
FORGERIES = [
    # print pass lines with every hex marker found in the program, then stop before the real tests
    "import json, re\nfor m in set(re.findall(r'[0-9a-f]{16}', open('/sandbox/main.py').read())):\n"
    "    for i in range(3):\n        print(m + json.dumps([i, True, '']))\nraise SystemExit(0)\n",
    # write verdict-looking lines to every descriptor held
    "import json, os\nfor fd in range(3, 256):\n    try:\n        os.write(fd, json.dumps([0, True, '']).encode() + b'\\n')\n"
    "    except OSError:\n        pass\n",
    # end the process with status 0 before any test runs
    "import os\nos._exit(0)\n",
    # the same through posix, past the friendly guards
    "import posix\nposix._exit(0)\n",
    # replace AssertionError (an assert statement does not look it up)
    "import builtins\nclass Quiet(Exception):\n    pass\nbuiltins.AssertionError = Quiet\n",
    # read the harness and the tests, then print what a pass looks like
    "print(open('/sandbox/bootstrap.py').read()[:100])\nprint(open('/sandbox/test_0.py').read())\nprint('[0, true, \"\"]')\n",
    # kill the harness (its parent)
    "import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGKILL)\nexcept Exception:\n    pass\n",
    # exit with status 0 from an atexit hook after the test failed
    "import atexit, os\natexit.register(lambda: os._exit(0))\n",
]


def forged_tests() -> tuple[int, int]:
    """Code under test that tries to make `assert 1 == 2` pass."""
    if not _sandbox_ready():
        return 0, 0
    from langgraph_anytool.catalog.builtin.code_tools import run_python_tests

    held = 0
    for code in FORGERIES:
        r = run_python_tests(code, ["assert 1 == 2", "assert 1 == 2", "assert 1 == 2"], timeout_seconds=20)
        held += r["passed"] == 0
    return len(FORGERIES), held


# ------------------------------------------------------------------------------------------------ point 5
def _damaged(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, "x" * 500) for i in range(2000)])
    conn.commit()
    conn.close()
    with path.open("r+b") as fh:
        for off in range(4096 * 2, path.stat().st_size, 4096 * 3):
            fh.seek(off + 100)
            fh.write(os.urandom(2000))
    return path


def storage_faults() -> tuple[int, int]:
    """Damaged, foreign, missing and unusable storage named on the command line; bad bytes in input files; a full
    disk, a read-only file system and the file-size limit during `eval run`."""
    results: list[bool] = []
    with _workdir() as tmp:
        q = _group(tmp / "g.json", 2)
        run = ["eval", "run", "--queries", str(q), "--offline", "--out", str(tmp / "r.jsonl"), "--no-progress"]
        junk = tmp / "junk.sqlite"
        junk.write_bytes(os.urandom(8192))
        damaged = _damaged(tmp / "damaged.sqlite")
        (tmp / "dir.sqlite").mkdir()
        for db, needle in ((junk, "not an SQLite database"), (damaged, "damaged"), (tmp / "dir.sqlite", "directory"),
                           (tmp / "no" / "such" / "c.sqlite", "does not exist"),
                           ("mysql://u@db.example/x", "unsupported URL scheme"),
                           ("postgresql://u:pw@127.0.0.1:9/x", "cannot connect")):
            rc, err = _cli([*run, "--db", str(db)])
            results.append(_one_line(rc, err, str(db).replace(":pw@", ":***@"), needle))
        rc, err = _cli(["run", "Convert 5 kilograms to pounds.", "--offline", "--db", str(damaged), "--no-cache"])
        results.append(_one_line(rc, err, str(damaged), "damaged") and len(err.strip().splitlines()[-1]) < 400)
        for cache, needle in ((junk, "not an SQLite database"), (tmp / "dir.sqlite", "directory")):
            rc, err = _cli([*run, "--api-cache", str(cache), "--execution", "template"])
            results.append(_one_line(rc, err, str(cache), needle))
        bad = tmp / "bad.json"
        bad.write_bytes(b'[{"query": "caf\xe9 \xff", "query_id": 1}]')
        rc, err = _cli(["eval", "run", "--queries", str(bad), "--offline", "--out", str(tmp / "b.jsonl"), "--no-progress"])
        results.append(_one_line(rc, err, str(bad), "UTF-8"))
        results += _csv_faults(tmp)
        results += _disk_faults(tmp, q)
    return len(results), sum(results)


def _csv_faults(tmp: Path) -> list[bool]:
    from langgraph_anytool.eval.oppo.data import TaskDataError, load_task, sample_dir

    header, first, *_ = (sample_dir() / "task1.csv").read_text(encoding="utf-8").splitlines(True)
    out = []
    for body, needle in ((header.encode() + b"\xff\xfe" + first.encode(), "not UTF-8"),
                         ((header + '"' + "x" * 140_000 + '"' + first[first.index(","):]).encode(), "field larger")):
        (tmp / "task1.csv").write_bytes(body)
        try:
            load_task(1, tmp)
            out.append(False)
        except TaskDataError as exc:
            out.append("task1.csv" in str(exc) and needle in str(exc))
        except Exception:
            out.append(False)
    return out


def _disk_faults(tmp: Path, q: Path) -> list[bool]:
    bwrap = shutil.which("bwrap")
    cli = [sys.executable, "-m", "langgraph_anytool.cli"]
    out = []

    def ended(done: subprocess.CompletedProcess[str], *needles: str) -> bool:
        return _one_line(done.returncode, done.stderr, *needles)

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))

    done = subprocess.run([*cli, "eval", "run", "--queries", str(q), "--offline", "--out", "r.jsonl", "--db", "c.sqlite",
                           "--no-progress"], cwd=tmp, env=ENV, capture_output=True, text=True, timeout=300,
                          preexec_fn=limit)  # EFBIG
    out.append(ended(done, "c.sqlite") or (done.returncode == 0 and "Traceback" not in done.stderr))
    if bwrap is None:
        return out
    full = tmp / "full"
    full.mkdir()
    for where in ("db", "out"):
        args = [*cli, "eval", "run", "--queries", str(q), "--offline", "--no-progress",
                "--out", str(full / "r.jsonl") if where == "out" else str(tmp / "r2.jsonl")]
        args += ["--db", str(full / "c.sqlite")] if where == "db" else []
        fill = "" if where == "db" else f"head -c 1048576 /dev/zero > {full}/filler 2>/dev/null; "
        size = "400000" if where == "db" else "1048576"
        done = subprocess.run([bwrap, "--bind", "/", "/", "--dev", "/dev", "--size", size, "--tmpfs", str(full), "--",
                               "sh", "-c", fill + " ".join(f"'{a}'" for a in args)],
                              cwd=tmp, env=ENV, capture_output=True, text=True, timeout=300)
        out.append(ended(done, "disk is full", str(full)))
    ro = tmp / "ro"
    ro.mkdir()
    done = subprocess.run([bwrap, "--bind", "/", "/", "--dev", "/dev", "--ro-bind", str(ro), str(ro), "--", *cli,
                           "eval", "run", "--queries", str(q), "--offline", "--no-progress", "--out", str(ro / "r.jsonl")],
                          cwd=tmp, env=ENV, capture_output=True, text=True, timeout=300)
    out.append(ended(done, "read-only", str(ro)))
    return out


# ------------------------------------------------------------------------------------------------ point 6
def concurrent_writers() -> tuple[int, int]:
    """Two `eval run` processes on one --out (without and with a shared --db): every query recorded once."""
    held = 0
    cases = ([], ["--db", "c.sqlite"])
    for extra in cases:
        with _workdir() as tmp:
            q = _group(tmp / "twenty.json", 20)
            cmd = [sys.executable, "-m", "langgraph_anytool.cli", "eval", "run", "--queries", str(q), "--offline",
                   "--concurrency", "2", "--out", "r.jsonl", "--no-progress", *extra]
            procs = [subprocess.Popen(cmd, cwd=tmp, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                     for _ in range(2)]
            errs = [p.communicate(timeout=600)[1] for p in procs]
            ids = Counter(json.loads(line)["query_id"] for line in (tmp / "r.jsonl").read_text().splitlines())
            refusals_clean = all("Traceback" not in e for e in errs)
            held += len(ids) == 20 and max(ids.values()) == 1 and refusals_clean
    return len(cases), held


# ------------------------------------------------------------------------------------------------ point 9
def budgets() -> tuple[int, int]:
    """A 1 MB query, token budgets a long query would pass, and --timeout values that are no number of seconds."""
    results: list[bool] = []
    with _workdir() as tmp:
        big = "Convert 5 kilograms to pounds. " + "lorem ipsum dolor sit amet " * 38_000
        out = tmp / "big.jsonl"
        rc, _ = _cli(["eval", "run", "--queries", str(_group(tmp / "big.json", 1, big)), "--offline", "--out", str(out),
                      "--no-progress"])
        rec = json.loads(out.read_text().splitlines()[0]) if out.exists() else {}
        results.append(rc == 0 and "the limit is" in rec.get("reason", "") and not rec.get("usage"))
        query = "Convert 5 kilograms to pounds. " + "Please be precise about the conversion factor. " * 250
        for budget in (6_000, 15_000, 30_000, 60_000):
            out = tmp / f"b{budget}.jsonl"
            _cli(["eval", "run", "--queries", str(_group(tmp / "long.json", 1, query)), "--offline", "--out", str(out),
                  "--no-progress", "--max-tokens-per-query", str(budget), "--set", "solver=cot"])
            u = json.loads(out.read_text().splitlines()[0])["usage"]
            results.append(u.get("input_tokens", 0) <= budget)
        for value in ("nan", "inf", "-1", "-inf"):
            rc, err = _cli(["eval", "run", "--queries", str(tmp / "long.json"), "--offline", "--out",
                            str(tmp / "t.jsonl"), f"--timeout={value}"])
            results.append(rc == 2 and "--timeout" in err and not (tmp / "t.jsonl").exists())
    return len(results), sum(results)


# ------------------------------------------------------------------------------------------------ points 10, 12
def configuration() -> tuple[int, int]:
    """Malformed ANYTOOL_MODEL_PROFILES values, a ToolBench method that is no method name, a deeply nested
    expression for code_statistics."""
    from langgraph_anytool.catalog.builtin.code_tools import code_statistics
    from langgraph_anytool.catalog.catalog import Catalog
    from langgraph_anytool.catalog.errors import CatalogError

    results: list[bool] = []
    saved = os.environ.get("ANYTOOL_MODEL_PROFILES")
    try:
        for value in ("{bad", "/nonexistent/profiles.json", '{"m": {"input_price": "cheap"}}', "[1, 2]"):
            os.environ["ANYTOOL_MODEL_PROFILES"] = value
            rc, err = _cli(["run", "Convert 5 kilograms to pounds.", "--offline", "--no-cache"])
            results.append(_one_line(rc, err, "ANYTOOL_MODEL_PROFILES="))
    finally:
        if saved is None:
            os.environ.pop("ANYTOOL_MODEL_PROFILES", None)
        else:
            os.environ["ANYTOOL_MODEL_PROFILES"] = saved
    with _workdir() as tmp:
        cat = tmp / "tools" / "Finance"
        cat.mkdir(parents=True)
        for method in (42, ["GET"], {"x": 1}, "GET /x", True):
            api = {"name": "Quote", "url": "https://q.example/q", "method": method, "required_parameters": [],
                   "optional_parameters": []}
            (cat / "quotes.json").write_text(json.dumps({"tool_name": "Quotes", "api_list": [api]}))
            try:
                Catalog.load(str(tmp / "tools"))
                results.append(False)
            except CatalogError as exc:
                results.append("quotes.json" in str(exc) and "method" in str(exc))
    for depth in (1_500, 3_000, 20_000):
        for src in ("x = " + "-" * depth + "1", "x = " + "+".join(["1"] * depth), "x = " + "not " * depth + "1"):
            try:
                code_statistics(src)
                results.append(True)
            except ValueError as exc:
                results.append("nested too deeply" in str(exc))
            except RecursionError:
                results.append(False)
    return len(results), sum(results)


# ------------------------------------------------------------------------------------------------ point 11
def checkpoint_growth() -> tuple[int, int]:
    """A 12-query batch with a SQLite --db: each finished thread must keep one checkpoint, no writes, no free pages."""
    from langgraph_anytool.catalog.catalog import Catalog
    from langgraph_anytool.eval.anytool.persistence import async_checkpointer
    from langgraph_anytool.eval.anytool.results import ResultsWriter
    from langgraph_anytool.eval.anytool.runner import BatchOptions, run_batch
    from langgraph_anytool.eval.datasets import load_queries
    from langgraph_anytool.offline import OfflinePolicyModel

    with _workdir() as tmp, _lexical():
        catalog = Catalog.builtin()
        queries = load_queries(_group(tmp / "g.json", 12))
        db = tmp / "c.sqlite"

        async def go() -> None:
            async with async_checkpointer(str(db)) as saver:
                with ResultsWriter(tmp / "r.jsonl") as writer:
                    await run_batch(queries, catalog, OfflinePolicyModel(catalog=catalog), writer,
                                    BatchOptions(concurrency=4, db=str(db)), checkpointer=saver)

        asyncio.run(go())
        with sqlite3.connect(db) as conn:
            per_thread = [n for _, n in conn.execute("SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id")]
            writes = conn.execute("SELECT count(*) FROM writes").fetchone()[0]
            free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    checks = [len(per_thread) == 12, all(n == 1 for n in per_thread), writes == 0, free == 0]
    return len(checks), sum(checks)


ATTACKS: list[tuple[str, Callable[[], tuple[int, int]]]] = [
    ("sandbox writes and imports", sandbox_writes),
    ("forged test verdicts", forged_tests),
    ("storage faults", storage_faults),
    ("concurrent writers on one --out", concurrent_writers),
    ("budgets and sizes", budgets),
    ("configuration and small ones", configuration),
    ("checkpoint growth", checkpoint_growth),
]


def _main(argv: list[str]) -> int:
    chosen = [a for a in ATTACKS if not argv or a[0] in argv]
    for name, fn in chosen:
        attempts, held = fn()
        print(f"{name}: {held}/{attempts} held")
    return 0


if __name__ == "__main__":
    logging_off: Any = __import__("logging")
    logging_off.disable(logging_off.WARNING)
    sys.exit(_main(sys.argv[1:]))
