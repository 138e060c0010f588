"""Issue 21, points 3, 4 and 12 (code tools): the sandbox's root is read-only and every writable mount is capped,
only the standard library is importable, `run_python_tests` verdicts cannot be forged by the code under test, and
`code_statistics` reports deep nesting as the other inspectors do."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from langgraph_anytool.catalog.builtin._sandbox import SandboxLimits, run_python, sandbox_status
from langgraph_anytool.catalog.builtin.code_tools import code_statistics, run_python_tests

_STATUS = sandbox_status(allow_unsandboxed=False)
needs_bwrap = pytest.mark.skipif(_STATUS.mode != "bwrap" and not os.environ.get("ANYTOOL_REQUIRE_SANDBOX"),
                                 reason=f"no OS sandbox here: {_STATUS.detail}")

MIB = 1024 * 1024


def _used(path: str) -> int:
    st = os.statvfs(path)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


@needs_bwrap
def test_root_etc_and_dev_shm_are_read_only_and_tmp_is_capped() -> None:
    name = "anytool-pwned-" + secrets.token_hex(4)
    code = f"""
import os
def fill(path, total_mib):
    written = 0
    try:
        for k in range(total_mib // 4):
            with open(f"{{path}}.{{k}}", "wb") as fh:
                for _ in range(4):
                    fh.write(b"x" * (1 << 20))
                    fh.flush()
                    written += 1
    except OSError as exc:
        return written, exc.errno
    return written, 0
for target in ("/etc/{name}", "/dev/shm/{name}", "/{name}", "/tmp/{name}"):
    written, errno = fill(target, 64)
    print(target.split("/")[1], written, errno)
"""
    shm_before = _used("/dev/shm")
    r = run_python(code, limits=SandboxLimits(timeout_s=30, cpu_s=30))
    assert r["exit_code"] == 0, r
    rows = {line.split()[0] or "root": line.split()[1:] for line in r["stdout"].splitlines()}
    rows = {("root" if k.startswith("anytool-pwned") else k): v for k, v in rows.items()}
    assert rows["etc"] == ["0", "30"] and rows["dev"] == ["0", "30"] and rows["root"] == ["0", "30"], r  # EROFS
    tmp_written, tmp_errno = int(rows["tmp"][0]), int(rows["tmp"][1])
    assert tmp_errno == 28 and tmp_written <= 32, r  # ENOSPC at the 32 MiB cap, not 64 MiB
    assert not Path(f"/etc/{name}.0").exists() and not Path(f"/dev/shm/{name}.0").exists()
    assert not Path(f"/{name}.0").exists() and not Path(f"/tmp/{name}.0").exists()
    assert _used("/dev/shm") - shm_before < 8 * MIB  # host shared memory unchanged (other users aside)


@needs_bwrap
def test_only_the_standard_library_is_importable() -> None:
    code = """
import glob, importlib, sys
dirs = sorted(set(glob.glob("/usr/lib/python3*/*-packages") + glob.glob("/usr/local/lib/python3*/*-packages")
                  + glob.glob(sys.base_prefix + "/lib/python3*/*-packages")))
sys.path.extend(dirs)
import os
print("listing", sum(len(os.listdir(d)) for d in dirs if os.path.isdir(d)))
for name in ("_cffi_backend", "cffi", "yaml", "pip", "setuptools", "_distutils_hack"):
    try:
        importlib.import_module(name)
        print("imported", name)
    except ImportError:
        print("refused", name)
import json, sqlite3, decimal, statistics, zlib
print("stdlib ok")
"""
    r = run_python(code)
    assert r["exit_code"] == 0, r
    assert "listing 0" in r["stdout"] and "imported" not in r["stdout"], r
    assert "stdlib ok" in r["stdout"]


_FORGE = '''
import json, os, re
source = open("/sandbox/main.py").read()
for marker in set(re.findall(r"[0-9a-f]{16}", source)):
    for i in range(3):
        print(marker + json.dumps([i, True, ""]))
for fd in range(3, 256):
    try:
        os.write(fd, json.dumps([0, True, ""]).encode() + b"\\n")
    except OSError:
        pass
raise SystemExit(0)  # before the real tests print their lines
'''


@needs_bwrap
def test_run_python_tests_verdicts_cannot_be_forged() -> None:
    """The issue's attack: the code reads the marker from /sandbox/main.py and prints pass lines; today
    `assert 1 == 2` then reports 3/3 passed. Printing or writing to any descriptor it holds changes nothing."""
    r = run_python_tests(_FORGE, ["assert 1 == 2", "assert 1 == 2", "assert 1 == 2"])
    assert (r["passed"], r["failed"]) == (0, 3), r
    exiting = run_python_tests("import os\nos._exit(0)", ["assert 1 == 2"])
    assert exiting["passed"] == 0, exiting  # ending the process before the test runs is no pass


@needs_bwrap
def test_run_python_tests_still_reports_honest_results() -> None:
    r = run_python_tests("def add(a, b):\n    return a + b\nprint('loaded')",
                         ["assert add(1, 2) == 3", "assert add(1, 1) == 3", "raise ValueError('boom')",
                          "print('inside'); assert add(0, 0) == 0"])
    assert [x["passed"] for x in r["results"]] == [True, False, False, True], r
    assert r["results"][1]["error"].startswith("AssertionError") and r["results"][2]["error"] == "ValueError: boom"
    assert r["stdout"].count("loaded") == 1 and "inside" in r["stdout"]


def test_code_statistics_survives_deep_expressions() -> None:
    """A 1,500-deep unary chain parses, and today's recursive nesting walk then raised RecursionError; deeper
    code gets the "nested too deeply" message the other inspectors give."""
    for depth in (1_500, 2_500, 6_000):
        for src in ("x = " + "-" * depth + "1", "x = " + "+".join(["1"] * depth), "x = " + "not " * depth + "1"):
            try:
                stats = code_statistics(src)
            except ValueError as exc:
                assert "nested too deeply" in str(exc)
            else:
                assert stats["lines"] == 1 and stats["max_nesting"] == 0
    assert code_statistics("x = " + "-" * 1_500 + "1")["lines"] == 1
    nested = "".join(" " * i + "if x:\n" for i in range(5)) + " " * 5 + "pass\n"
    assert code_statistics(nested)["max_nesting"] == 5
