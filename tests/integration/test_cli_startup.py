"""`anytool --help` and argument errors start fast: parsing the command line imports no heavy library.

Timings live in benchmarks/first_hour.py (`cli` section); this test keeps the cause away: LangGraph, LangChain,
torch, ONNX Runtime, faiss and numpy are imported by the subcommands that run, never to build the parser.
"""

from __future__ import annotations

import json
import subprocess
import sys

# top-level packages that cost seconds of CPU to import (or hundreds of milliseconds, for numpy and faiss)
HEAVY = ("langgraph", "langchain", "langchain_core", "langchain_openai", "langsmith", "torch", "onnxruntime",
         "transformers", "sentence_transformers", "faiss", "numpy", "openai", "httpx", "pydantic")

# every parser the user can reach: `--help` of the command and of each (nested) subcommand, then usage errors
_CHILD = """
import contextlib, io, json, sys
from langgraph_anytool.cli.app import SUBCOMMANDS, main

argvs = [["--help"], *[[c.name, "--help"] for c in SUBCOMMANDS],
         ["index", "build", "--help"], ["index", "train", "--help"],
         *[["eval", e, "--help"] for e in ("retrieval", "run", "passrate", "stats", "convert", "steps", "tasks")],
         [], ["search"], ["run", "q", "--k", "3"], ["search", "q", "--k", "zero"], ["nope"]]
codes = []
for argv in argvs:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        codes.append(main(argv))
    assert out.getvalue() or err.getvalue(), argv
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1].split(",")))
print(json.dumps({"codes": codes, "heavy": heavy}))
"""


def test_help_and_usage_errors_import_no_heavy_library() -> None:
    # -I: an isolated child (no PYTHON* variables, no current directory on the path), as a user's shell runs it
    proc = subprocess.run([sys.executable, "-I", "-c", _CHILD, ",".join(HEAVY)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["heavy"] == [], f"imported while parsing the command line: {result['heavy']}"
    helps, errors = result["codes"][:-5], result["codes"][-5:]
    assert set(helps) == {0} and set(errors) == {2}, result["codes"]
