"""Mutation testing (cosmic-ray) over modules whose bugs the suite must catch; prints the kill rate per module.

    python benchmarks/mutation.py [netguard validation cache ...] [--sample N] [--seed S]

Each target is a module and the tests that guard it. The project's tracked files are copied to a temporary
directory (cosmic-ray rewrites source files on disk while it runs, so the working tree is never touched); in the
copy, `cosmic-ray init` lists the mutants, `--sample N` keeps a random N of them per target (0 = all), `cosmic-ray
exec` runs the target's tests against each, and the session is read back: killed / survived / incompetent (a
mutant that cannot even be imported) and the kill rate = killed / (killed + survived). Surviving mutants are listed
so the next test is easy to write. The lead adds targets (judge, reflection, reducers) to `TARGETS`.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Target:
    module: str
    tests: tuple[str, ...]
    timeout: float = 120.0


TARGETS: dict[str, Target] = {
    "netguard": Target("langgraph_anytool/tools/netguard.py", ("tests/tools/test_netguard.py",)),
    "validation": Target("langgraph_anytool/tools/validation.py", (
        "tests/tools/test_validation.py", "tests/tools/test_arg_caps_and_workers.py::test_default_cap_is_documented_and_enforced",
        "tests/tools/test_arg_caps_and_workers.py::test_nested_and_oversized_argument_strings_are_refused")),
    "cache": Target("langgraph_anytool/tools/cache.py", ("tests/tools/test_cache.py",)),  # keys, TTLs, storage
    "judge": Target("langgraph_anytool/nodes/judge/tooleval.py", (  # ToolEval's two stages and reply parsing
        "tests/nodes/test_tooleval.py", "tests/nodes/test_reflection_judge.py")),
    "reflection": Target("langgraph_anytool/nodes/reflection/__init__.py", (
        "tests/nodes/test_reflection_judge.py", "tests/graphs/test_anytool_graph.py")),
    "reducers": Target("langgraph_anytool/state.py", ("tests/nodes/test_reflection_judge.py", "tests/integrations/test_retriever.py")),
}


def _copy_project(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.splitlines()
    for rel in files:
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def _sample(session: Path, keep: int, seed: int) -> None:
    """Keep a random `keep` of the session's pending mutants."""
    with sqlite3.connect(session) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        work = "work_items" if "work_items" in tables else next(t for t in tables if "work" in t and "result" not in t)
        ids = [r[0] for r in db.execute(f"SELECT job_id FROM {work}")]
        if len(ids) <= keep:
            return
        drop = set(ids) - set(random.Random(seed).sample(ids, keep))
        for table in tables:
            cols = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
            if "job_id" in cols:
                db.executemany(f"DELETE FROM {table} WHERE job_id=?", [(i,) for i in drop])


def _annotation_spans(module: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) positions of every annotation: with postponed evaluation (`from __future__ import
    annotations`) a mutated annotation changes nothing at run time, so those mutants are equivalent."""
    spans = []
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        notes: list[ast.expr | None] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            notes.append(node.returns)
        elif isinstance(node, (ast.arg, ast.AnnAssign)):
            notes.append(node.annotation)
        for n in notes:
            if n is not None and n.end_lineno is not None and n.end_col_offset is not None:
                spans.append(((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset)))
    return spans


def _drop_equivalent(session: Path, module: Path) -> int:
    """Remove mutants inside annotations; returns how many."""
    spans = _annotation_spans(module)
    with sqlite3.connect(session) as db:
        rows = db.execute("SELECT job_id, start_pos_row, start_pos_col FROM mutation_specs").fetchall()
        drop = [job for job, row, col in rows if any(a <= (row, col) < b for a, b in spans)]
        for table in ("mutation_specs", "work_results", "work_items"):
            db.executemany(f"DELETE FROM {table} WHERE job_id=?", [(j,) for j in drop])
    return len(drop)


def run_target(name: str, target: Target, work: Path, sample: int, seed: int) -> dict[str, object]:
    cfg = work / f"{name}.toml"
    session = work / f"{name}.sqlite"
    tests = " ".join(target.tests)
    cfg.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{target.module}"\n'
        f"timeout = {target.timeout}\n"
        "excluded-modules = []\n"
        f'test-command = "{sys.executable} -m pytest -x -q -p no:cacheprovider {tests}"\n'
        "[cosmic-ray.distributor]\n"
        'name = "local"\n', encoding="utf-8")
    cr = [sys.executable, "-m", "cosmic_ray.cli"]
    subprocess.run([*cr, "init", str(cfg), str(session)], cwd=work, check=True)
    equivalent = _drop_equivalent(session, work / target.module)
    if sample:
        _sample(session, sample, seed)
    started = time.monotonic()
    subprocess.run([*cr, "exec", str(cfg), str(session)], cwd=work, check=True)
    dump = subprocess.run([*cr, "dump", str(session)], cwd=work, check=True, capture_output=True, text=True).stdout
    counts = {"killed": 0, "survived": 0, "incompetent": 0}
    survivors: list[str] = []
    for line in dump.splitlines():
        item, result = json.loads(line)
        outcome = str((result or {}).get("test_outcome") or "pending").lower()
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome == "survived":
            m = item["mutations"][0]
            survivors.append(f"{m['module_path']}:{m['start_pos'][0]} {m['operator_name']} #{m['occurrence']}")
    judged = counts["killed"] + counts["survived"]
    return {"target": name, **counts, "equivalent_dropped": equivalent, "kill_rate": round(counts["killed"] / judged, 3) if judged else None,
            "seconds": round(time.monotonic() - started, 1), "survivors": survivors}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", default=list(TARGETS), help=f"of {', '.join(TARGETS)}")
    parser.add_argument("--sample", type=int, default=0, help="mutants per target (0 = all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    unknown = [t for t in args.targets if t not in TARGETS]
    if unknown:
        parser.error(f"unknown target(s) {unknown}; known: {', '.join(TARGETS)}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="anytool-mutation-") as tmp:
        work = Path(tmp)
        _copy_project(work)
        for name in args.targets:
            rows.append(run_target(name, TARGETS[name], work, args.sample, args.seed))
    print(f"\n{'target':<12} {'killed':>6} {'survived':>8} {'incompetent':>11} {'kill rate':>9} {'seconds':>8} "
          f"{'in annotations (dropped)':>24}")
    for r in rows:
        rate = f"{r['kill_rate']:.1%}" if r["kill_rate"] is not None else "-"
        print(f"{r['target']:<12} {r['killed']:>6} {r['survived']:>8} {r['incompetent']:>11} {rate:>9} "
              f"{r['seconds']:>8} {r['equivalent_dropped']:>24}")
    killed = sum(int(str(r["killed"])) for r in rows)
    judged = killed + sum(int(str(r["survived"])) for r in rows)
    print(f"{'total':<12} {killed:>6} {judged - killed:>8} {'':>11} "
          f"{(killed / judged if judged else 0):>9.1%}")
    for r in rows:
        for s in r["survivors"]:  # type: ignore[attr-defined]
            print(f"survived: {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
