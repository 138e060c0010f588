"""A new user's first hour, timed: `make demo` from a fresh clone, the CLI's start-up, the Studio graph factory.

    python benchmarks/first_hour.py [demo] [cli] [studio] [--runs 5] [--source REPO] [--keep] [--against REV]

Every figure is printed with the command that produced it. The machine may be shared: besides wall time, each
figure gives the CPU time (user + sys) of the processes it ran, from `resource.getrusage(RUSAGE_CHILDREN)` (or of
this process, for the in-process Studio factory), which a loaded machine stretches far less than wall time.

- demo: `git clone REPO` (default: this checkout's committed HEAD) into a temporary folder, then `make demo` there
  (a cold virtual environment; pip's cache as it is). Prints the wall and CPU time, the longest silence between two
  output lines (the goal: a line at least every 20 s), the size of the virtual environment and whether torch is in
  it. Goals (issue 29): under 2 minutes, under 600 MB, no torch.
- cli: `anytool --help`, an argument error and `anytool search` (warm: its indexes built by a first run) in child
  processes, the median of `--runs`; then `python -X importtime` of `anytool --help` (the slowest imports), and the
  phases of one warm search in a child (imports, catalog load, index load, encoder load, the query). Goals:
  `--help` under 0.5 s CPU, a warm search under 1 s. With `--against REV`, also a warm search with the code of git
  revision REV (extracted into a temporary folder, run with this venv) and with this checkout, interleaved run by run,
  so that a machine whose speed drifts stretches both alike.
- studio: the graph factory of `langgraph.json` (`graphs/studio.py:make_graph`), called as `langgraph dev` calls it on
  each request: the first call (build) and the median of the next ones. Goal: under 100 ms after the first call.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(cmd: Sequence[str], **kw: object) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """(wall s, CPU s of the child and its children, the finished process)."""
    cpu0, t0 = children_cpu(), time.perf_counter()
    proc = subprocess.run(list(cmd), capture_output=True, text=True, check=False, **kw)  # type: ignore[call-overload]
    return time.perf_counter() - t0, children_cpu() - cpu0, proc


def dir_mb(path: Path) -> float:
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            p = Path(root, f)
            if not p.is_symlink():
                total += p.stat().st_size
    return total / 1e6


def minutes(s: float) -> str:
    return f"{s:.1f} s" if s < 60 else f"{int(s // 60)} min {s % 60:04.1f} s"


# ------------------------------------------------------------------------------------------------ demo
def bench_demo(source: str, keep: bool) -> None:
    where = Path(tempfile.mkdtemp(prefix="first-hour-"))
    clone = where / "repo"
    subprocess.run(["git", "clone", "-q", source, str(clone)], check=True)
    head = subprocess.run(["git", "-C", str(clone), "log", "-1", "--format=%h %s"], capture_output=True, text=True,
                          check=True).stdout.strip()
    print(f"\n== make demo, cold: git clone {source} ({head}); cd {clone}; make demo")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "ANYTOOL_MODEL")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(BIN)))
    cpu0, t0 = children_cpu(), time.perf_counter()
    proc = subprocess.Popen(["make", "demo"], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, bufsize=1)
    assert proc.stdout is not None
    last, gaps, lines = t0, [], []
    for line in proc.stdout:
        now = time.perf_counter()
        gaps.append((now - last, line.rstrip()[:100]))
        last = now
        lines.append(line)
        print(f"  {now - t0:6.1f} s | {line.rstrip()}")
    code = proc.wait()
    wall, cpu = time.perf_counter() - t0, children_cpu() - cpu0
    venv = clone / ".venv"
    site = next(venv.glob("lib/python*/site-packages"), venv)
    longest = max(gaps, default=(0.0, ""))
    print(f"\nexit status {code}")
    print(f"wall time      {minutes(wall)}   (goal: under 2 min)")
    print(f"CPU time       {minutes(cpu)}   (user + sys of make and everything it ran)")
    print(f"venv size      {dir_mb(venv):.0f} MB   (goal: under 600 MB)")
    print(f"torch in venv  {'yes' if (site / 'torch').exists() else 'no'}")
    print(f"longest silence {longest[0]:.1f} s, before the line: {longest[1]!r}   (goal: at most 20 s)")
    print(f"output lines   {len(lines)}")
    if keep:
        print(f"kept: {clone}")
    else:
        shutil.rmtree(where, ignore_errors=True)


# ------------------------------------------------------------------------------------------------ cli
_PHASES = r"""
import resource, sys, time
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_utime + r.ru_stime
marks = [("start", time.perf_counter(), cpu())]
def mark(name): marks.append((name, time.perf_counter(), cpu()))
from langgraph_anytool.cli.app import import_numpy_one_blas_thread
import_numpy_one_blas_thread()  # as `anytool search` does
from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.search import CatalogSearcher
mark("import catalog and search (numpy, pydantic; no LangChain)")
catalog = Catalog.load(None)
mark("load the builtin catalog")
searcher = CatalogSearcher(catalog)
searcher.build()
mark("load the indexes (BM25, dense) from disk")
emb = searcher.embeddings
if emb is not None:
    emb.embed_query("warm the encoder")
mark("load the encoder (first query embedding)")
searcher.search_apis(sys.argv[1], 10)
mark("search the query")
from langgraph_anytool.catalog.search import relevance
mark("import the relevance score (`anytool search` prints it)")
for (_, w0, c0), (name, w1, c1) in zip(marks, marks[1:]):
    print(f"  {name:<58} {w1 - w0:6.2f} s wall {c1 - c0:6.2f} s CPU")
heavy = ("langgraph", "langchain_core", "langsmith", "torch", "onnxruntime", "faiss", "numpy", "pydantic")
print(f"  heavy packages a warm search imports: {sorted({m.split('.')[0] for m in sys.modules} & set(heavy))}")
"""


def bench_cli(runs: int) -> None:
    anytool = str(BIN / "anytool")
    query = "convert miles to kilometers"
    cases = [("anytool --help", [anytool, "--help"]),
             ("anytool search (an argument error: no query)", [anytool, "search"]),
             ("anytool search --help", [anytool, "search", "--help"])]
    timed([anytool, "search", query])  # warm: the indexes are built (or loaded) by this first run
    cases.append((f"anytool search {query!r} (warm)", [anytool, "search", query]))
    print(f"\n== CLI start-up: median of {runs} runs (child processes; CPU = user + sys)")
    for label, cmd in cases:
        walls, cpus = [], []
        for _ in range(runs):
            wall, cpu, proc = timed(cmd)
            walls.append(wall)
            cpus.append(cpu)
        print(f"  {label:<52} {statistics.median(cpus):6.2f} s CPU  {statistics.median(walls):6.2f} s wall  "
              f"(exit {proc.returncode})")
    print("  goals: --help under 0.5 s CPU; a warm search under 1 s")

    print("\n== python -X importtime -c 'from langgraph_anytool.cli import main; main([\"--help\"])': slowest imports")
    proc = subprocess.run([sys.executable, "-I", "-X", "importtime", "-c",
                           "from langgraph_anytool.cli import main; main(['--help'])"],
                          capture_output=True, text=True, check=False)
    rows = []
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
        if m:
            rows.append((int(m.group(2)), len(m.group(3)) // 2, m.group(4)))
    total = sum(c for c, depth, _ in rows if depth == 0)
    tops = sorted({n.split(".")[0] for _, _, n in rows})
    print(f"  all imports: {total / 1e3:.0f} ms (wall, cumulative); {len(tops)} top-level modules")
    for cum, depth, name in sorted(rows, reverse=True)[:12]:
        print(f"  {cum / 1e3:8.1f} ms  {'  ' * depth}{name}")
    heavy = [t for t in tops if t in ("langgraph", "langchain_core", "torch", "onnxruntime", "numpy", "faiss")]
    print(f"  heavy packages imported by --help: {heavy or 'none'}")

    print(f"\n== one warm `anytool search {query!r}`, phase by phase (a child process)")
    proc = subprocess.run([sys.executable, "-I", "-c", _PHASES, query], capture_output=True, text=True, check=False)
    print(proc.stdout.rstrip() or proc.stderr[-2000:])


# the child that runs `anytool` from a given source folder, not from the venv's editable install of this checkout
_FROM_SOURCE = """
import sys
root = sys.argv.pop(1)
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path.insert(0, root)
import langgraph_anytool
assert langgraph_anytool.__file__.startswith(root), langgraph_anytool.__file__
from langgraph_anytool.cli import main
sys.exit(main(sys.argv[1:]))
"""


def bench_against(rev: str, runs: int) -> None:
    query = "convert miles to kilometers"
    with tempfile.TemporaryDirectory(prefix="first-hour-") as tmp:
        old = Path(tmp) / "old"
        old.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "langgraph_anytool"], capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        sources = {f"at {rev}": str(old), "this checkout": str(ROOT)}
        cpus: dict[str, list[float]] = {name: [] for name in sources}
        walls: dict[str, list[float]] = {name: [] for name in sources}
        for _ in range(runs + 1):  # the first round warms both (indexes, conversion caches) and is not counted
            for name, root in sources.items():
                wall, cpu, proc = timed([sys.executable, "-I", "-c", _FROM_SOURCE, root, "search", query])
                if proc.returncode:
                    raise SystemExit(f"{name}: anytool search exited {proc.returncode}: {proc.stderr[-500:]}")
                cpus[name].append(cpu)
                walls[name].append(wall)
    print(f"\n== a warm `anytool search {query!r}`, {runs} interleaved runs of each (CPU = user + sys)")
    for name in sources:
        c, w = cpus[name][1:], walls[name][1:]
        print(f"  {name:<28} median {statistics.median(c):5.2f} s CPU (min {min(c):.2f}, max {max(c):.2f})  "
              f"{statistics.median(w):5.2f} s wall")


# ------------------------------------------------------------------------------------------------ studio
def bench_studio(runs: int) -> None:
    import asyncio

    os.environ.pop("ANYTOOL_MODEL", None)
    sys.path.insert(0, str(ROOT))
    from langgraph_anytool.graphs.studio import make_graph

    async def calls() -> list[tuple[float, float]]:
        out = []
        for _ in range(runs + 1):
            c0, t0 = self_cpu(), time.perf_counter()
            await make_graph()
            out.append((time.perf_counter() - t0, self_cpu() - c0))
        return out

    times = asyncio.run(calls())
    first, rest = times[0], times[1:]
    print("\n== Studio graph factory (graphs/studio.py:make_graph, as `langgraph dev` calls it per request)")
    print(f"  first call (builds)        {first[0] * 1e3:8.1f} ms wall  {first[1] * 1e3:8.1f} ms CPU")
    print(f"  later calls, median of {runs:<3} {statistics.median(t for t, _ in rest) * 1e3:8.2f} ms wall  "
          f"{statistics.median(c for _, c in rest) * 1e3:8.2f} ms CPU  (max {max(t for t, _ in rest) * 1e3:.2f} ms "
          "wall; goal: under 100 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sections", nargs="*", choices=("demo", "cli", "studio"), default=[],
                        help="what to measure (default: cli and studio; demo takes minutes)")
    parser.add_argument("--runs", type=int, default=5, help="repetitions of each CLI command and factory call")
    parser.add_argument("--source", default=str(ROOT), help="the repository `demo` clones (default: this checkout)")
    parser.add_argument("--keep", action="store_true", help="keep the demo's clone")
    parser.add_argument("--against", metavar="REV", help="cli: also time a warm search with the code of git revision "
                        "REV and with this checkout, interleaved")
    args = parser.parse_args()
    sections = args.sections or ["cli", "studio"]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if "demo" in sections:
        bench_demo(args.source, args.keep)
    if "cli" in sections:
        bench_cli(args.runs)
        if args.against:
            bench_against(args.against, max(args.runs, 9))
    if "studio" in sections:
        bench_studio(args.runs)


if __name__ == "__main__":
    main()
