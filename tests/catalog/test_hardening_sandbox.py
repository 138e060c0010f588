"""Issue 21, points 3, 4 and 12 (code tools): the sandbox's root is read-only and every writable mount is capped,
only the standard library is importable, `run_python_tests` verdicts cannot be forged by the code under test, and
`code_statistics` reports deep nesting as the other inspectors do. Issue 28, point 7: the verdicts come from a
process the submitted code never ran in (the hostile code here only ever runs under bubblewrap)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from langgraph_anytool.catalog.builtin._sandbox import SandboxLimits, run_python, run_python_with_tests, sandbox_status
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


# Issue 28, point 7: the three forgeries that still passed `assert 1 == 2` (patching runpy after the code ran in the
# test's process, walking the stack to the report descriptor, writing "ok" to every descriptor and exiting 0), and
# the class around them: whatever the code does in its own process or sandbox, no verdict changes.
FORGERIES = {
    "runpy patched": "import runpy\nrunpy.run_path = lambda *a, **k: {}\n",
    "stack and heap walked to the report descriptor": (
        "import gc, os, sys\nfds = set()\nframe = sys._getframe()\nwhile frame is not None:\n"
        "    fds.update(v for v in frame.f_locals.values() if type(v) is int and 2 < v < 1024)\n"
        "    frame = frame.f_back\nfor o in gc.get_objects():\n    if isinstance(o, dict):\n"
        "        fds.update(v for v in o.values() if type(v) is int and 2 < v < 1024)\nfor fd in fds:\n"
        "    try:\n        os.write(fd, b'ok')\n    except OSError:\n        pass\nos._exit(0)\n"),
    "ok written to every descriptor": ("import os\nfor fd in range(256):\n    try:\n        os.write(fd, b'ok')\n"
                                       "    except OSError:\n        pass\nos._exit(0)\n"),
    "protocol replies forged": (
        "import json, os, struct\nfor n in range(1, 5):\n    m = json.dumps({'re': n, 'ok': {'dict': []}}).encode()\n"
        "    for fd in range(3, 64):\n        try:\n            os.write(fd, struct.pack('>I', len(m)) + m)\n"
        "        except OSError:\n            pass\n"),
    "a thread writing during the test": (
        "import os, threading, time\ndef spam():\n    while True:\n        for fd in range(3, 64):\n"
        "            try:\n                os.write(fd, b'ok')\n            except OSError:\n                pass\n"
        "        time.sleep(0.001)\nthreading.Thread(target=spam, daemon=True).start()\ntime.sleep(0.2)\n"),
    "a trace hook": "import os, sys\nsys.settrace(lambda frame, event, arg: os._exit(0))\n",
    "other processes' descriptors and memory": (
        "import os\nfor pid in (p for p in os.listdir('/proc') if p.isdigit()):\n    try:\n"
        "        for fd in os.listdir(f'/proc/{pid}/fd'):\n            try:\n"
        "                with open(f'/proc/{pid}/fd/{fd}', 'wb', buffering=0) as fh:\n"
        "                    fh.write(b'ok')\n            except OSError:\n                pass\n"
        "        with open(f'/proc/{pid}/mem', 'r+b') as fh:\n            pass\n    except OSError:\n"
        "        pass\n"),
    "every process killed": "import posix\ntry:\n    posix.kill(-1, 9)\nexcept OSError:\n    pass\n",
    "AssertionError replaced": "import builtins\nclass Quiet(Exception):\n    pass\nbuiltins.AssertionError = Quiet\n",
    "SystemExit(0)": "raise SystemExit(0)\n",
    "an atexit hook": "import atexit, os\natexit.register(lambda: os._exit(0))\n",
}


@needs_bwrap
@pytest.mark.parametrize("name", list(FORGERIES))
def test_no_verdict_comes_from_a_process_the_code_ran_in(name: str) -> None:
    status = sandbox_status(allow_unsandboxed=False)  # never unsandboxed: some of these end every process they can
    r = run_python_with_tests(FORGERIES[name], ["assert 1 == 2", "assert 1 == 2"], status=status,
                              limits=SandboxLimits(timeout_s=20, cpu_s=20))
    assert [passed for passed, _ in r["verdicts"].values()] == [False, False], r


@needs_bwrap
def test_the_code_cannot_read_the_tests() -> None:
    r = run_python_with_tests("print(sorted(__import__('os').listdir('/sandbox')))", ["assert True"],
                              status=sandbox_status(allow_unsandboxed=False))
    assert "test_0.py" not in r["stdout"] and "main.py" in r["stdout"], r
    assert r["verdicts"] == {0: (True, "")}


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


_RICH = '''
import math
from collections import Counter, namedtuple
from dataclasses import dataclass
from fractions import Fraction


class TooBig(ValueError):
    pass


@dataclass
class Point:
    x: int
    y: int

    def norm(self):
        return math.hypot(self.x, self.y)

    def __add__(self, other):
        return Point(self.x + other.x, self.y + other.y)


Pair = namedtuple("Pair", "a b")
cache = {}


def fib(n):
    if n not in cache:
        cache[n] = n if n < 2 else fib(n - 1) + fib(n - 2)
    return cache[n]


def check(n):
    if n > 10:
        raise TooBig(f"{n} is too big")
    return n


def sort_in_place(xs):
    xs.sort()


def apply(f, x):
    return f(x)


def squares(n):
    for i in range(n):
        yield i * i


class Ctx:
    def __init__(self):
        self.log = []

    def __enter__(self):
        self.log.append("in")
        return self

    def __exit__(self, *exc):
        self.log.append("out")
        return False
'''

_RICH_TESTS = [
    "assert fib(10) == 55",
    "fib(10); assert 10 in cache and cache[10] == 55 and len(cache) == 11",
    "p = Point(3, 4); assert p.x == 3 and p.norm() == 5.0 and Point(1, 2) + Point(3, 4) == Point(4, 6)",
    "assert isinstance(Point(1, 1), Point) and type(Point(1, 1)).__name__ == 'Point'",
    "try:\n    check(11)\nexcept TooBig as e:\n    assert 'too big' in str(e) and isinstance(e, ValueError)\n"
    "else:\n    raise AssertionError('no exception')",
    "xs = [3, 1, 2]; sort_in_place(xs); assert xs == [1, 2, 3]",
    "assert apply(lambda v: v * 10, 4) == 40 and apply(len, [1, 2, 3]) == 3",
    "assert list(squares(4)) == [0, 1, 4, 9] and sum(squares(3)) == 5 and max(squares(5)) == 16",
    "assert Fraction(1, 2) + Fraction(1, 3) == Fraction(5, 6) and Counter('aab') == {'a': 2, 'b': 1}",
    "p = Pair(1, 2); assert p.a == 1 and p == (1, 2)",
    "c = Ctx()\nwith c:\n    pass\nassert c.log == ['in', 'out']",
    "assert math.sqrt(16) == 4.0 and str(Point(1, 2)) == 'Point(x=1, y=2)' and f'{fib(5):03d}' == '005'",
    "assert [fib(i) for i in range(6)] == [0, 1, 1, 2, 3, 5] and all(fib(n) >= 0 for n in range(5))",
    "assert fib(5) == 6",
    "assert undefined_name == 1",
]


@needs_bwrap
def test_tests_use_the_codes_objects_as_they_would_in_one_process() -> None:
    """Through the proxies: classes, exceptions of the code's own classes, in-place changes, functions passed to the
    code, generators, context managers, the code's modules and containers."""
    r = run_python_with_tests(_RICH, _RICH_TESTS, status=sandbox_status(allow_unsandboxed=False),
                              limits=SandboxLimits(timeout_s=30, cpu_s=30))
    verdicts = [r["verdicts"][i] for i in range(len(_RICH_TESTS))]
    assert [passed for passed, _ in verdicts] == [True] * 13 + [False, False], verdicts
    assert verdicts[-2][1] == "AssertionError: " and verdicts[-1][1].startswith("NameError: name 'undefined_name'")
