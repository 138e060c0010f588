"""Batch and evaluator attack classes of the bomb-and-fault benchmark (issue 34 §2), for `benchmarks/hardening.py`.

- "batch model check": `anytool eval run` against models that cannot answer (no key, an unknown provider, a role's
  own model without a key, loopback endpoints answering 401 / 403 on every path and echoing the key, a port nobody
  listens on). Held: exit 2, one `anytool: error:` line, no results file, the key never printed.
- "batch all errors": the endpoint answers its model list but refuses every chat request (401, 403, 400, 404).
  Held: exit 3, the line saying every query ended in an error, one record per query, the key nowhere.
- "evaluator faults": `eval passrate` (each protocol) and `eval compare` with an evaluator answering 500, 502, 503
  (`Retry-After: 0`), 401, 403, 400 or 404. Held: exit 4, one line naming the evaluator, no pass rate printed, no
  traceback, the key nowhere.
- "report error messages": `anytool report` on error records whose messages carry a key shaped like an API key or
  an environment secret. Held: the index lists each distinct message with its count, and neither secret.

Every server is a loopback one (`tests/servers.py`). Run one class alone:
`python benchmarks/hardening_attacks/batches.py [CLASS ...]`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

KEY = "sk-proj-" + "Hb7" * 12
ENV_KEY = "an-environment-secret-0042"


def _cli(args: list[str]) -> tuple[int, str, str]:
    from langgraph_anytool.cli.app import main

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = main(args)
    return rc, out.getvalue(), err.getvalue()


def _held(attempt: Callable[[], bool]) -> bool:
    try:
        return bool(attempt())
    except Exception:  # a traceback is what the issue reports: it counts against us
        return False


@contextlib.contextmanager
def _env(**values: str | None) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _queries(tmp: Path, n: int = 2) -> Path:
    path = tmp / "g.json"
    path.write_text(json.dumps([{"query": f"Convert {i} miles to kilometers.", "query_id": i,
                                 "relevant APIs": [["Universal Unit Converter", "Convert Units"]]} for i in range(n)]))
    return path


def _servers() -> tuple[Any, Any, Any]:
    from tests.servers import OpenAIChatServer, Request, Response

    class Refusing(OpenAIChatServer):
        """Every path answers `status`, echoing the key it was sent."""

        def __init__(self, status: int, models_ok: bool = False) -> None:
            super().__init__()
            self.status, self.models_ok = status, models_ok

        async def handle(self, request: Request) -> Response:
            if self.models_ok and request.path == "/v1/models":
                return Response.json({"object": "list", "data": [{"id": "m", "object": "model"}]})
            sent = request.headers.get("authorization", "")
            return Response.json({"error": {"message": f"refused: {sent}", "type": "invalid_request_error"}},
                                 self.status)

    return OpenAIChatServer, Refusing, Response


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def model_check() -> tuple[int, int]:
    _, Refusing, _ = _servers()
    results: list[bool] = []
    with tempfile.TemporaryDirectory(prefix="anytool-batches-") as tmp_name:
        tmp = Path(tmp_name)
        queries = _queries(tmp)

        def refused(extra: list[str], out: Path) -> bool:
            rc, stdout, err = _cli(["eval", "run", "--queries", str(queries), "--out", str(out), "--no-progress",
                                    *extra])
            lines = [x for x in err.splitlines() if x.startswith("anytool:")]
            return (rc == 2 and len(lines) == 1 and lines[0].startswith("anytool: error:") and not out.exists()
                    and "Traceback" not in err and KEY not in err + stdout)

        n = iter(range(1000))
        with _env(OPENAI_API_KEY=None, OPENAI_BASE_URL=None, ANYTOOL_MODEL=None):
            for spec in ("openai:gpt-4-turbo", "opnai:gpt-4o", "offlne"):
                results.append(_held(lambda s=spec: refused(["--model", s], tmp / f"r{next(n)}.jsonl")))
            results.append(_held(lambda: refused(["--offline", "--set", 'models={"judge": "openai:gpt-4o"}'],
                                                 tmp / f"r{next(n)}.jsonl")))
        for status in (401, 403):
            with Refusing(status) as server, _env(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.base_url):
                results.append(_held(lambda: refused(["--model", "openai:m"], tmp / f"r{next(n)}.jsonl")))
                results.append(_held(lambda: refused(["--offline", "--set", 'models={"solver": "openai:m"}'],
                                                     tmp / f"r{next(n)}.jsonl")))
        with _env(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=f"http://127.0.0.1:{_free_port()}/v1"):
            results.append(_held(lambda: refused(["--model", "openai:m"], tmp / f"r{next(n)}.jsonl")))
    return len(results), sum(results)


def all_errors() -> tuple[int, int]:
    _, Refusing, _ = _servers()
    results: list[bool] = []
    with tempfile.TemporaryDirectory(prefix="anytool-batches-") as tmp_name:
        tmp = Path(tmp_name)
        queries = _queries(tmp)
        for i, status in enumerate((401, 403, 400, 404)):
            out = tmp / f"r{i}.jsonl"

            def attempt(out: Path = out) -> bool:
                rc, stdout, err = _cli(["eval", "run", "--queries", str(queries), "--out", str(out), "--no-progress",
                                        "--model", "openai:m"])
                records = [json.loads(x) for x in out.read_text().splitlines()]
                return (rc == 3 and "every one of the 2 queries of this batch ended in an error" in err
                        and len(records) == 2 and all(r["status"] == "error" for r in records)
                        and KEY not in err + stdout + out.read_text() and "Traceback" not in err)

            with Refusing(status, models_ok=True) as server, _env(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.base_url):
                results.append(_held(attempt))
    return len(results), sum(results)


def evaluator_faults() -> tuple[int, int]:
    from tests.servers import ChatFault

    OpenAIChatServer, _, _ = _servers()
    results: list[bool] = []
    node = {"calls": [{"tool_call_id": "c0", "function": "f", "arguments": {}, "status": "ok"}],
            "messages": [{"role": "tool", "tool_call_id": "c0", "content": "21"}]}
    with tempfile.TemporaryDirectory(prefix="anytool-batches-") as tmp_name:
        tmp = Path(tmp_name)
        res = tmp / "r.jsonl"
        res.write_text("".join(json.dumps({"group": "G", "query_id": f"q{i}", "query": f"question {i}",
                                           "answer": f"It is {i} degrees.", "status": "solved",
                                           "trajectory": [{"attempt": 1, "finish_type": "give_answer",
                                                           "tree": [node]}]}) + "\n" for i in range(3)))
        for status in (500, 502, 503, 401, 403, 400, 404):
            fault = ChatFault("status", status, retry_after="0")
            for command in (["passrate", "--protocol", "anytool"], ["passrate", "--protocol", "toolllm"],
                            ["passrate", "--protocol", "sopr"], ["compare", str(res)]):
                def attempt(command: list[str] = command, fault: Any = fault) -> bool:
                    with OpenAIChatServer(policy=lambda body: fault) as server, \
                            _env(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=server.base_url):
                        rc, stdout, err = _cli(["eval", command[0], str(res), *command[1:], "--evaluator",
                                                "openai:judge", "--no-cache", "--samples", "1"])
                    lines = [x for x in err.splitlines() if x.startswith("anytool:")]
                    return (rc == 4 and len(lines) == 1 and lines[0].startswith("anytool: evaluator openai:judge")
                            and "%" not in stdout and "Traceback" not in err and KEY not in err + stdout)

                results.append(_held(attempt))
    return len(results), sum(results)


def report_messages() -> tuple[int, int]:
    results: list[bool] = []
    with tempfile.TemporaryDirectory(prefix="anytool-batches-") as tmp_name, _env(MY_SERVICE_TOKEN=ENV_KEY):
        tmp = Path(tmp_name)
        messages = [f"auth: solver model: Error code: 401 - Incorrect API key provided: {KEY}",
                    f"RuntimeError: Authorization: Bearer {KEY}", f"RuntimeError: the proxy said {ENV_KEY}",
                    "ModelNotConfiguredError: model 'openai:m' needs an API key: set OPENAI_API_KEY",
                    f"other: {KEY[:20]}... {json.dumps({'api_key': KEY})}"]
        for i, message in enumerate(messages):
            for copies in (1, 7):
                def attempt(message: str = message, copies: int = copies, i: int = i) -> bool:
                    res = tmp / f"r{i}-{copies}.jsonl"
                    res.write_text("".join(json.dumps({"group": "G", "query_id": q, "query": "q", "status": "error",
                                                       "error_kind": "other", "reason": message}) + "\n"
                                           for q in range(copies)))
                    out = tmp / f"site{i}-{copies}"
                    rc, _, _ = _cli(["report", str(res), "--out", str(out)])
                    html = (out / "index.html").read_text()
                    return (rc == 0 and 'id="errors"' in html and f">{copies}</a>" in html and KEY not in html
                            and ENV_KEY not in html)

                results.append(_held(attempt))
    return len(results), sum(results)


ATTACKS: list[tuple[str, Callable[[], tuple[int, int]]]] = [
    ("batch model check", model_check),
    ("batch all errors", all_errors),
    ("evaluator faults", evaluator_faults),
    ("report error messages", report_messages),
]


def _main(argv: list[str]) -> int:
    root = str(Path(__file__).resolve().parents[2])
    if root not in sys.path:
        sys.path.insert(0, root)
    os.environ.setdefault("ANYTOOL_EMBEDDINGS", "none")
    for name, fn in ATTACKS:
        if not argv or name in argv:
            attempts, held = fn()
            print(f"{name}: {held}/{attempts} held")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
