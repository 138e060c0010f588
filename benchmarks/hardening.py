"""Bombs and faults (issue 21): per attack class, how many attempts were made, how many held, and the peak RSS.

    python benchmarks/hardening.py [--only CLASS ...] [--timeout 240] [--max-memory-mb 4096] [--list]

Attack classes come from the modules `benchmarks/hardening_attacks/*.py` (files starting with `_` are skipped).
Each module exports `ATTACKS`: a list of `(class_name, callable)`; the callable takes no argument, runs the
class's attempts and returns `(attempts, held)`. Each class runs in a fresh Python process (`--child MODULE
CLASS`), so its peak RSS (`ru_maxrss` of the process, or of a child process it waited for when that is larger)
is its own; the process gets `--timeout` seconds of wall time and an address-space limit of `--max-memory-mb`
(a class that runs out of either is reported as `timeout` / `error`, with nothing counted as held). Attacks use
loopback servers only.

Printed: one row per class (attempts, held, peak RSS in MB, wall seconds), then the totals.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ATTACK_DIR = Path(__file__).resolve().parent / "hardening_attacks"
RESULT_PREFIX = "HARDENING-RESULT "

Attack = tuple[str, Callable[[], tuple[int, int]]]


def attack_modules() -> list[Path]:
    """The attack module files, sorted by name."""
    return sorted(p for p in ATTACK_DIR.glob("*.py") if not p.name.startswith("_"))


def load_module(path: Path) -> ModuleType:
    """Import one attack module from its file (the repository root is on sys.path for `tests.servers`)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    spec = importlib.util.spec_from_file_location(f"hardening_attacks.{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def attacks_of(path: Path) -> list[Attack]:
    """A module's `ATTACKS`, checked for shape."""
    attacks = getattr(load_module(path), "ATTACKS", None)
    if not isinstance(attacks, list) or not all(
            isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], str) and callable(a[1]) for a in attacks):
        raise TypeError(f"{path}: ATTACKS must be a list of (class_name, callable)")
    return attacks


def peak_rss_mb() -> float:
    """The larger of this process's peak RSS and that of any child it waited for, in MB (Linux: KB units)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024


def run_child(module: str, name: str) -> int:
    """`--child`: run one class and print its result line."""
    path = ATTACK_DIR / f"{module}.py"
    fn = dict(attacks_of(path))[name]
    attempts, held = fn()
    print(RESULT_PREFIX + json.dumps({"attempts": attempts, "held": held, "peak_rss_mb": round(peak_rss_mb(), 1)}),
          flush=True)
    return 0


def _limit(max_memory_mb: int) -> Callable[[], None]:
    def apply() -> None:
        if max_memory_mb > 0:
            limit = max_memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        os.setsid()  # its own process group: a timeout ends the class's helper processes too

    return apply


def run_class(module: str, name: str, timeout: float, max_memory_mb: int) -> dict[str, Any]:
    """One class in a fresh process: its result, or the reason it gave none."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--child", module, name],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                            preexec_fn=_limit(max_memory_mb))
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.communicate()
        return {"class": name, "outcome": "timeout", "seconds": time.monotonic() - start}
    seconds = time.monotonic() - start
    for line in out.splitlines():
        if line.startswith(RESULT_PREFIX):
            return {"class": name, "outcome": "ok", "seconds": seconds, **json.loads(line[len(RESULT_PREFIX):])}
    tail = (err.strip().splitlines() or ["no output"])[-1]
    return {"class": name, "outcome": f"error (exit {proc.returncode}): {tail[:120]}", "seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=None, metavar="CLASS", help="run only these classes")
    parser.add_argument("--timeout", type=float, default=240.0, help="wall seconds per class (default 240)")
    parser.add_argument("--max-memory-mb", type=int, default=4096, help="address-space limit per class (0: none)")
    parser.add_argument("--list", action="store_true", help="list the classes and exit")
    parser.add_argument("--child", nargs=2, metavar=("MODULE", "CLASS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return run_child(*args.child)
    plan = [(path.stem, name) for path in attack_modules() for name, _ in attacks_of(path)]
    if args.only:
        unknown = set(args.only) - {name for _, name in plan}
        if unknown:
            parser.error(f"unknown class(es): {', '.join(sorted(unknown))}")
        plan = [(m, n) for m, n in plan if n in args.only]
    if args.list:
        for module, name in plan:
            print(f"{module}: {name}")
        return 0
    print(f"python {sys.version.split()[0]}, {len(plan)} classes from {len(attack_modules())} modules, "
          f"timeout {args.timeout:g} s and {args.max_memory_mb} MB per class")
    header = f"{'class':<36} {'module':<8} {'attempts':>8} {'held':>6} {'peak RSS MB':>12} {'seconds':>8}"
    print(header)
    print("-" * len(header))
    total_attempts = total_held = 0
    broken = 0
    for module, name in plan:
        r = run_class(module, name, args.timeout, args.max_memory_mb)
        if r["outcome"] == "ok":
            total_attempts += r["attempts"]
            total_held += r["held"]
            broken += r["held"] < r["attempts"]
            print(f"{name:<36} {module:<8} {r['attempts']:>8} {r['held']:>6} {r['peak_rss_mb']:>12.1f} "
                  f"{r['seconds']:>8.1f}", flush=True)
        else:
            broken += 1
            print(f"{name:<36} {module:<8} {'-':>8} {'-':>6} {'-':>12} {r['seconds']:>8.1f}  {r['outcome']}",
                  flush=True)
    print("-" * len(header))
    print(f"{'total':<36} {'':<8} {total_attempts:>8} {total_held:>6}")
    print(f"classes with an attempt that did not hold (or no result): {broken}")
    return 0 if broken == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
