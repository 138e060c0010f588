"""`anytool --help` and argument errors start fast: parsing the command line imports no heavy library.

Timings live in benchmarks/first_hour.py (`cli` section); this test keeps the cause away: LangGraph, LangChain,
torch, ONNX Runtime, faiss and numpy are imported by the subcommands that run, never to build the parser.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

# top-level packages that cost seconds of CPU to import (or hundreds of milliseconds, for numpy and faiss)
HEAVY = ("langgraph", "langchain", "langchain_core", "langchain_openai", "langsmith", "torch", "onnxruntime",
         "transformers", "sentence_transformers", "faiss", "numpy", "openai", "httpx", "pydantic")

# every parser the user can reach: `--help` of the command and of each (nested) subcommand, found by walking the
# parser (a subcommand added later is covered), then usage errors
_CHILD = """
import argparse, contextlib, io, json, sys
from langgraph_anytool.cli.app import build_parser, main

def paths(parser, prefix):
    yield prefix
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from paths(child, [*prefix, name])

helps = [[*p, "--help"] for p in paths(build_parser(), [])]
assert len(helps) > 15, helps
argvs = [*helps, [], ["search"], ["run", "q", "--k", "3"], ["search", "q", "--k", "zero"], ["nope"]]
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


_SEARCH = """
import contextlib, io, json, sys
from langgraph_anytool.cli.app import main

out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["search", "convert 26.2 miles to kilometers", "--k", "3"])
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def test_a_warm_search_imports_no_langchain_no_graph_and_no_index_builder(tmp_path: Path) -> None:
    # `anytool search` needs the catalog, the saved indexes and the query encoder: not LangGraph (the relevance
    # column came from the LangChain retriever's module), nor LangChain (the encoder's `Embeddings` base cost a
    # third of a warm search: search runs the plain encoder), nor bm25s / SciPy (they build the BM25 index; a saved
    # one is read with numpy), nor torch
    from langgraph_anytool.catalog.encoders import onnx_minilm_available

    dense = onnx_minilm_available()  # the default encoder, which the suite turns off elsewhere
    env = {**os.environ, "ANYTOOL_INDEX_DIR": str(tmp_path / "index"), "ANYTOOL_EMBEDDINGS": "default" if dense else "none"}
    runs = []
    for _ in range(2):  # the first run builds the indexes, the second loads them
        proc = subprocess.run([sys.executable, "-I", "-c", _SEARCH], capture_output=True, text=True, timeout=600,
                              check=False, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    warm = runs[1]
    assert warm["code"] == 0 and "Convert" in warm["out"] and warm["out"] == runs[0]["out"]
    assert set(warm["modules"]) & {"langgraph", "langchain", "langchain_core", "langsmith", "langchain_openai", "bm25s",
                                   "scipy", "torch", "transformers", "sentence_transformers"} == set()
    if dense:  # the dense half ran, on the plain ONNX encoder
        assert "onnxruntime" in warm["modules"]


_THREADS = """
import contextlib, io, json, os
from langgraph_anytool.cli.app import main

with contextlib.redirect_stdout(io.StringIO()):
    code = main(["search", "convert miles to kilometers", "--k", "3"])
print(json.dumps({"code": code, "threads": len(os.listdir("/proc/self/task")),
                  "env": os.environ.get("OPENBLAS_NUM_THREADS")}))
"""


def test_search_starts_numpy_with_one_blas_thread_unless_the_user_chose(tmp_path: Path) -> None:
    # a BLAS pool only spins while one query is ranked; the variable is put back, and a user's own count is kept
    if not Path("/proc/self/task").is_dir():
        pytest.skip("threads are counted through Linux's /proc")
    base = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                             "MKL_NUM_THREADS")}
    base.update(ANYTOOL_INDEX_DIR=str(tmp_path / "index"), ANYTOOL_EMBEDDINGS="none")  # BM25: no encoder threads
    results = []
    for extra in ({}, {}, {"OPENBLAS_NUM_THREADS": "2"}):  # the first run builds the index (SciPy's BLAS too)
        proc = subprocess.run([sys.executable, "-I", "-c", _THREADS], capture_output=True, text=True, timeout=600,
                              check=False, env={**base, **extra})
        assert proc.returncode == 0, proc.stderr[-3000:]
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert results[1] == {"code": 0, "threads": 1, "env": None}
    assert results[2] == {"code": 0, "threads": 2, "env": "2"}


# `anytool run` up to its first model request (issue 38 §4; timings: benchmarks/first_request.py): the catalog, the
# category search that seeds the meta-agent, the graph and the endpoint's discovery. Third-party modules that cost
# CPU there and that the request does not need: the `onnx` package (with protobuf and ml_dtypes) checks our own
# ONNX conversion once, and its kept verdict serves the runs after; torch, sentence-transformers, SciPy and bm25s
# build or train indexes; pandas and matplotlib draw; tqdm draws the bars of an index build (a saved index is read
# without it); multiprocessing.connection talks to a local tool's worker, started at the first local tool call
_RUN = """
import contextlib, io, json, sys
from langgraph_anytool.cli.app import main

with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main(["run", "Convert 26.2 miles to kilometers.", "--model", "openai:bench-model", "--quiet"])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""
NOT_BEFORE_FIRST_REQUEST = ("onnx", "google.protobuf", "ml_dtypes", "torch", "sentence_transformers", "transformers",
                            "scipy", "bm25s", "pandas", "matplotlib", "tqdm", "multiprocessing.connection")


def _stand_in() -> tuple[Any, list[str]]:
    """A loopback OpenAI-compatible server: discovery 404, every chat request 401 (the run ends at its first)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, status: int) -> None:
            body = json.dumps({"error": {"message": "stand-in", "code": "invalid_api_key"}}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            seen.append(f"GET {self.path.split('?')[0]}")
            self._reply(404)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append(f"POST {self.path}")
            self._reply(401 if self.path.endswith("/chat/completions") else 404)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, seen


def test_a_run_up_to_its_first_request_imports_nothing_it_does_not_need(tmp_path: Path) -> None:
    from langgraph_anytool.catalog.encoders import onnx_minilm_available
    from langgraph_anytool.catalog.minilm_package import packaged_minilm_dir
    from langgraph_anytool.catalog.onnx_encoder import ensure_onnx_model

    if not onnx_minilm_available():
        pytest.skip("onnxruntime / MiniLM weights not installed (the default encoder)")
    models = tmp_path / "models"
    models.mkdir()
    converted = ensure_onnx_model(packaged_minilm_dir(), "int8")  # the conversion other tests share (made once)
    shutil.copy(converted, models / converted.name)  # ... checked here as a first run checks it
    server, seen = _stand_in()
    env = {**os.environ, "OPENAI_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1",
           "OPENAI_API_KEY": "sk-test", "ANYTOOL_MODEL": "", "ANYTOOL_CACHE": "off", "ANYTOOL_EMBEDDINGS": "default",
           "ANYTOOL_MODEL_DIR": str(models), "ANYTOOL_INDEX_DIR": str(tmp_path / "index"),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    runs = []
    try:
        for _ in range(2):  # the first run builds the indexes and checks the conversion; the second reuses both
            seen.clear()
            proc = subprocess.run([sys.executable, "-I", "-c", _RUN], capture_output=True, text=True, timeout=600,
                                  check=False, env=env)
            assert proc.returncode == 0, proc.stderr[-3000:]
            runs.append({**json.loads(proc.stdout.strip().splitlines()[-1]), "seen": list(seen)})
    finally:
        server.shutdown()
        server.server_close()
    first, warm = runs
    for run in runs:  # each run ended at its first model request (401), after one round of discovery
        assert run["code"] == 1 and run["seen"].count("POST /v1/chat/completions") == 1, run["seen"]
        assert run["seen"][-1] == "POST /v1/chat/completions", run["seen"]
        assert len(run["seen"]) == len(set(run["seen"])), f"a discovery request was made twice: {run['seen']}"
        assert "onnxruntime" in run["modules"]  # the category search ran on the default encoder
    assert "onnx" in first["modules"]  # the check ran in full once, and its verdict was kept
    assert sorted(p.name for p in models.iterdir()) == [converted.name, converted.name + ".checked.json"]

    def loaded(run: dict[str, Any]) -> list[str]:
        return sorted(m for m in run["modules"] if any(m == h or m.startswith(h + ".") for h in NOT_BEFORE_FIRST_REQUEST))

    assert loaded(warm) == [], f"imported before the first model request: {loaded(warm)[:10]}"
