"""Process-level attack classes of issue 28 (points 1, 3, 7, 8, 15) for `benchmarks/hardening.py`.

Each function makes its class's attempts and returns `(attempts, held)`:
- worker start-up: booby-trapped packages in the current directory of every entry point that starts a child
  interpreter; held when the run answers and nothing of the trap ran;
- builtin arithmetic: numbers as text that take minutes to compute, called directly (no worker, the interpreter's
  digit limit off) and through the builtin executor beside a ticking event loop; a callable asking for 1.5 GB in a
  worker; held when refused at once, the loop never stalls and the worker's memory stays capped;
- MCP session deadlines: stdio servers that hang at start, initialise, list or call (and some that ignore SIGTERM);
  held when the step ends at its deadline and the server's process is gone;
- sandbox verdict forgeries: code that tries to make `assert 1 == 2` pass (under bubblewrap only: some of these end
  every process they can reach; without bwrap the class makes no attempt);
- secret spellings: a server reflecting the key upper-cased, base64, URL-encoded, hex or split; held when no
  observation, cache byte or log record keeps it.
Run one class alone: `python benchmarks/hardening_attacks/proc.py CLASS`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
TRAPS = ("multiprocessing", "json", "encodings", "langgraph_anytool", "sitecustomize", "pint")
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "ANYTOOL_EMBEDDINGS": "none",
       "ANYTOOL_CACHE": "off"}


# ------------------------------------------------------------------------------------------------ point 1
def _trap(folder: Path, names: tuple[str, ...] = TRAPS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).mkdir(exist_ok=True)
        (folder / name / "__init__.py").write_text(f"open({str(folder / f'PWNED-{name}')!r}, 'w').write('x')\n")
    return folder


def _clean(folder: Path) -> bool:
    return not list(folder.glob("PWNED-*"))


def worker_startup() -> tuple[int, int]:
    """`anytool run`, `anytool eval run` and a script from elsewhere, each from a folder holding every trap; then a
    worker pool whose parent has '' on sys.path, importing each trapped name."""
    from langgraph_anytool.tools.executors.worker_pool import WorkerPool

    results: list[bool] = []
    anytool = str(Path(sys.executable).with_name("anytool"))
    with tempfile.TemporaryDirectory(prefix="anytool-attack-") as tmp:
        base = Path(tmp)
        queries = base / "q.json"
        queries.write_text(json.dumps([{"query_id": 1, "query": "Convert 26.2 miles to kilometers."}]))
        script = base / "convert.py"
        script.write_text(
            "from langgraph_anytool import Catalog\nfrom langgraph_anytool.tools.pipeline import ApiExecutor\n"
            "with ApiExecutor.for_catalog(Catalog.builtin(), kind='local') as ex:\n"
            "    print(ex.call('Units_Conversion/universal_unit_converter/convert_units',\n"
            "                  {'value': 26.2, 'from_unit': 'mile', 'to_unit': 'km'}).content['result'])\n")
        runs = [([anytool, "run", "Convert 26.2 miles to kilometers.", "--offline", "--no-cache"], "42.16"),
                ([anytool, "eval", "run", "--queries", str(queries), "--offline", "--out", "r.jsonl",
                  "--no-progress"], ""),
                ([sys.executable, str(script)], "42.1648128")]
        for i, (cmd, needle) in enumerate(runs):
            folder = _trap(base / f"entry{i}")
            done = subprocess.run(cmd, cwd=folder, env=ENV, capture_output=True, text=True, timeout=300,
                                  check=False)
            results.append(done.returncode == 0 and needle in done.stdout and _clean(folder))
        folder = _trap(base / "pool")
        saved_cwd, saved_path = os.getcwd(), list(sys.path)
        os.chdir(folder)
        sys.path.insert(0, "")
        pool = WorkerPool(1)
        try:
            for name in TRAPS:
                try:
                    where = pool.call(_module_file, {"name": name}, 60)
                except Exception:  # a module that is not installed (sitecustomize): nothing was imported
                    where = ""
                results.append(not where.startswith(str(folder)) and _clean(folder))
        finally:
            pool.close()
            os.chdir(saved_cwd)
            sys.path[:] = saved_path
    return len(results), sum(results)


def _module_file(name: str) -> str:
    import importlib

    return str(importlib.import_module(name).__file__)


# ------------------------------------------------------------------------------------------------ point 3
_DIRECT = """
import json, sys, time
sys.set_int_max_str_digits(0)
from langgraph_anytool.catalog.builtin import builtin_implementations
impls = builtin_implementations()
for api_id, args in json.loads(sys.argv[1]):
    start = time.monotonic()
    try:
        impls[api_id](**args)
        refused = False
    except ValueError:
        refused = True
    print(json.dumps([refused, time.monotonic() - start]), flush=True)
"""


def builtin_arithmetic() -> tuple[int, int]:
    from langgraph_anytool.tools.executors import LocalExecutor
    from langgraph_anytool.tools.observation import Status
    from tests import slow_impl
    from tests.catalog.test_builtin_arithmetic_bounds import HOSTILE, _api, hostile_calls

    results: list[bool] = []
    try:
        done = subprocess.run([sys.executable, "-c", _DIRECT, json.dumps(HOSTILE)], capture_output=True, text=True,
                              timeout=120, check=False, cwd=ROOT)
        lines = [json.loads(line) for line in done.stdout.splitlines()]
    except subprocess.TimeoutExpired:
        lines = []
    results += [refused and seconds < 5 for refused, seconds in lines] + [False] * (len(HOSTILE) - len(lines))
    calls = asyncio.run(hostile_calls())
    results += [obs.status is Status.REJECTED and stall < 0.5 for obs, stall in calls]

    async def memory() -> bool:
        executor = LocalExecutor({"X/t/allocate": slow_impl.allocate}, isolated={"X/t/allocate"}, isolated_timeout=60)
        try:
            big = await executor.aexecute(_api("allocate"), {"megabytes": 1500})
        finally:
            await executor.aclose()
        return big.status is Status.ERROR and "memory limit" in big.error

    results.append(asyncio.run(memory()))
    return len(results), sum(results)


# ------------------------------------------------------------------------------------------------ point 8
def mcp_deadlines() -> tuple[int, int]:
    from tests.catalog.test_mcp_deadlines import _CHILD, SERVER, _alive

    server = SERVER
    results: list[bool] = []
    with tempfile.TemporaryDirectory(prefix="anytool-attack-") as tmp:
        for step in ("start", "initialize", "list", "call"):
            for extra in ((), ("--ignore-term",)):
                pidfile = Path(tmp) / f"{step}{len(extra)}.pid"
                try:
                    done = subprocess.run([sys.executable, "-c", _CHILD, str(server), step, str(pidfile), *extra],
                                          capture_output=True, text=True, timeout=60, check=False, cwd=ROOT)
                    out = json.loads(done.stdout.strip().splitlines()[-1])
                except (subprocess.TimeoutExpired, IndexError, ValueError):
                    out = {}
                pid = int(pidfile.read_text()) if pidfile.exists() else 0
                deadline = time.monotonic() + 10
                while pid and _alive(pid) and time.monotonic() < deadline:
                    time.sleep(0.1)
                gone = not (pid and _alive(pid))
                if not gone:
                    os.kill(pid, signal.SIGKILL)
                # a server that ignores the end of its input fails the load's shutdown: the loader's deadline ends it
                ended = out.get("raised") == "CatalogError" or (step == "call" and out.get("status") == "timeout")
                results.append(ended and gone and float(out.get("seconds", 99)) < 10)
    return len(results), sum(results)


# ------------------------------------------------------------------------------------------------ point 7
def verdict_forgeries() -> tuple[int, int]:
    from langgraph_anytool.catalog.builtin._sandbox import SandboxLimits, run_python_with_tests, sandbox_status
    from tests.catalog.test_hardening_sandbox import FORGERIES

    status = sandbox_status(allow_unsandboxed=False)
    if status.mode != "bwrap":  # never unsandboxed: some forgeries end every process they can signal
        return 0, 0
    held = 0
    for code in FORGERIES.values():
        r = run_python_with_tests(code, ["assert 1 == 2"] * 3, status=status, limits=SandboxLimits(timeout_s=20, cpu_s=20))
        held += not any(passed for passed, _ in r["verdicts"].values())
    return len(FORGERIES), held


# ------------------------------------------------------------------------------------------------ point 15
def secret_spellings() -> tuple[int, int]:
    """Each spelling reflected in a body, an error message, a header and a log record, through the pipeline with a
    SQLite response cache; held when none of it keeps any spelling of the key."""
    import io

    from langgraph_anytool.catalog.catalog import Catalog
    from langgraph_anytool.catalog.models import Category, Tool
    from langgraph_anytool.tools.pipeline import ApiExecutor
    from tests.integration.test_secret_spellings import KEY, _api, _leaks, spelled
    from tests.servers import FunctionServer, Request, Response

    async def reflect(req: Request) -> Response:
        name = req.path.strip("/")
        text = spelled(req.headers.get("x-rapidapi-key", ""))[name.removeprefix("err-")]
        if name.startswith("err-"):
            return Response.json({"message": f"key {text} refused"}, 403, headers=[("X-Echo", text.replace("\n", " "))])
        return Response.json({"echo": text})

    stream = io.StringIO()
    logging.basicConfig(level=logging.DEBUG, stream=stream, force=True)
    names = list(spelled(KEY))
    apis = tuple(_api(n) for n in (*names, *(f"err-{n}" for n in names)))
    catalog = Catalog([Category("Cat", tools=(Tool("tool", "Tool", "Cat", apis=apis),))])
    held = 0
    with tempfile.TemporaryDirectory(prefix="anytool-attack-") as tmp, FunctionServer(reflect) as srv:
        pipe = ApiExecutor.for_catalog(catalog, kind="http", cache_path=Path(tmp) / "calls.sqlite",
                                       cache_errors=True, base_urls={"Cat/tool": srv.url},
                                       headers_from_env={"X-RapidAPI-Key": "RK"}, environ={"RK": KEY},
                                       allow_private=True)

        async def calls(name: str) -> str:
            outs = []
            for api_id in (f"Cat/tool/{name}", f"Cat/tool/err-{name}"):
                obs = await pipe.acall(api_id, {"q": "x"})
                logging.getLogger("bench.app").warning("observation %s", obs.to_dict())
                outs.append(json.dumps(obs.to_dict()))
            return "\n".join(outs)

        for name in names:
            text = asyncio.run(calls(name))
            held += not _leaks(text)
        pipe.close()
        stored = "\n".join(f.read_bytes().decode("utf-8", "replace") for f in Path(tmp).iterdir())
    logging.basicConfig(level=logging.WARNING, force=True)
    clean = not _leaks(stored) and not _leaks(stream.getvalue())
    return len(names), held if clean else 0


ATTACKS: list[tuple[str, Callable[[], tuple[int, int]]]] = [
    ("worker start-up (trapped cwd)", worker_startup),
    ("builtin arithmetic", builtin_arithmetic),
    ("MCP session deadlines", mcp_deadlines),
    ("sandbox verdict forgeries", verdict_forgeries),
    ("secret spellings", secret_spellings),
]


def _main(argv: list[str]) -> int:
    for name, fn in (a for a in ATTACKS if not argv or a[0] in argv):
        attempts, held = fn()
        print(f"{name}: {held}/{attempts} held")
    return 0


if __name__ == "__main__":
    quiet: Any = logging
    quiet.disable(logging.WARNING)
    sys.exit(_main(sys.argv[1:]))
