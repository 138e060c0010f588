"""Issue 38 §4: `anytool serve MODEL` starts a packaged model on a loopback llama-server with the docs' flags,
prints the OPENAI_BASE_URL to use, and stops it on Ctrl-C; without a binary, one line says how to build it.

The flags and the stop are checked with a stand-in `llama-server` (a script that answers /health and writes down
its command line), and for real with llama.cpp's binary when one is built (skipped otherwise, saying so)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

from langgraph_anytool.cli.app import main
from langgraph_anytool.cli.serve_command import machine_threads
from langgraph_anytool.integrations.local_models import LocalModelError, find_llama_server, gguf_path
from tests.signals import default_sigint

FAKE = textwrap.dedent("""\
    import json, os, sys
    from http.server import BaseHTTPRequestHandler, HTTPServer
    with open(os.environ["FAKE_LLAMA_ARGV"], "w") as f:
        json.dump(sys.argv[1:], f)
    port = int(sys.argv[sys.argv.index("--port") + 1])

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/health" else 404)
            self.end_headers()
            self.wfile.write(b'{"status": "ok"}')

        def log_message(self, *args):
            pass

    HTTPServer(("127.0.0.1", port), Handler).serve_forever()
""")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def model_file(name: str) -> Path:
    try:
        return gguf_path(name)
    except LocalModelError as exc:
        pytest.skip(str(exc))


def serve(argv: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], list[str]]:
    """`anytool serve ...` in a child process, read until it says how to use the server (or ends)."""
    child = subprocess.Popen([sys.executable, "-m", "langgraph_anytool.cli", "serve", *argv], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_sigint)
    lines: list[str] = []
    assert child.stdout is not None
    for line in child.stdout:
        lines.append(line.rstrip("\n"))
        if line.startswith("Ctrl-C"):
            break
    return child, lines


def interrupt(child: subprocess.Popen[str]) -> tuple[int, str, str]:
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    return child.returncode, out, err


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        return True
    return False


def test_without_a_binary_one_line_says_how_to_build_it(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    monkeypatch.setenv("ANYTOOL_LLAMA_SERVER", str(tmp_path / "missing" / "llama-server"))
    assert main(["serve", "smollm2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("anytool: error: ANYTOOL_LLAMA_SERVER=")
    assert "make llama-server" in err[0] and "no such file" in err[0]


def test_bad_numbers_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "smollm2", "--ctx", "10"]) == 2
    assert capsys.readouterr().err.strip() == "anytool: error: --ctx 10: out of range"


@pytest.mark.parametrize("name", ["smollm2", "gemma3-270m"])
def test_serve_runs_the_docs_command_prints_the_base_url_and_stops_on_ctrl_c(tmp_path: Path, name: str) -> None:
    model = model_file(name)
    fake = tmp_path / "llama-server"
    fake.write_text(f"#!{sys.executable}\n{FAKE}")
    fake.chmod(0o755)
    argv_file, port = tmp_path / "argv.json", free_port()
    env = {**os.environ, "ANYTOOL_LLAMA_SERVER": str(fake), "FAKE_LLAMA_ARGV": str(argv_file)}
    child, lines = serve([name, "--port", str(port), "--log", str(tmp_path / "server.log")], env)
    try:
        text = "\n".join(lines)
        assert f"export OPENAI_BASE_URL=http://127.0.0.1:{port}/v1 OPENAI_API_KEY=unused" in text, text
        assert f"--model openai:{name}" in text
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
            assert r.status == 200
    finally:
        code, out, err = interrupt(child)
    assert code == 0 and "stopped the server" in out and not err.strip(), err
    argv = json.loads(argv_file.read_text())
    assert argv[argv.index("-m") + 1] == str(model) and "--jinja" in argv
    flags = {argv[i]: argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--host", "--port", "-c", "--alias",
                                                                            "--parallel", "--threads")}
    assert flags == {"--host": "127.0.0.1", "--port": str(port), "-c": "8192", "--alias": name, "--parallel": "1",
                     "--threads": str(machine_threads())}
    assert refused(port)  # the server was stopped with the command


def test_a_server_that_ends_by_itself_is_an_error_with_its_log(tmp_path: Path) -> None:
    model_file("smollm2")
    fake = tmp_path / "llama-server"
    fake.write_text("#!/bin/sh\necho 'error: unknown model architecture' >&2\nexit 3\n")
    fake.chmod(0o755)
    child = subprocess.run([sys.executable, "-m", "langgraph_anytool.cli", "serve", "smollm2", "--port",
                            str(free_port())], env={**os.environ, "ANYTOOL_LLAMA_SERVER": str(fake)}, text=True,
                           capture_output=True, timeout=60)
    assert child.returncode == 1 and "unknown model architecture" in child.stderr
    assert "Traceback" not in child.stderr


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    model_file("smollm2")
    fake = tmp_path / "llama-server"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        child = subprocess.run([sys.executable, "-m", "langgraph_anytool.cli", "serve", "smollm2", "--port",
                                str(taken.getsockname()[1])], env={**os.environ, "ANYTOOL_LLAMA_SERVER": str(fake)},
                               text=True, capture_output=True, timeout=60)
    assert child.returncode == 1 and "is in use" in child.stderr and len(child.stderr.strip().splitlines()) == 1


def test_serve_with_the_real_llama_server(tmp_path: Path) -> None:
    """A real start: the model answers a chat request at the printed base URL; Ctrl-C stops it."""
    binary = find_llama_server()
    if binary is None:
        pytest.skip("no llama-server binary (build it: `make llama-server`, or set ANYTOOL_LLAMA_SERVER)")
    model_file("smollm2")
    env = {**os.environ, "ANYTOOL_LLAMA_SERVER": str(binary)}
    child, lines = serve(["smollm2", "--port", "0", "--ctx", "2048", "--threads", "1"], env)
    try:
        found = re.search(r"OPENAI_BASE_URL=(\S+)", "\n".join(lines))
        assert found, (lines, child.stderr.read() if child.poll() is not None and child.stderr else "")
        body = json.dumps({"model": "smollm2", "max_tokens": 4,
                           "messages": [{"role": "user", "content": "Say hi."}]}).encode()
        request = urllib.request.Request(f"{found.group(1)}/chat/completions", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as r:
            reply = json.loads(r.read())
        assert reply["usage"]["completion_tokens"] >= 1 and reply["model"] == "smollm2"
        port = int(found.group(1).rsplit(":", 1)[1].split("/")[0])
    finally:
        started = time.monotonic()
        code, out, err = interrupt(child)
    assert code == 0 and "stopped the server" in out, err
    assert time.monotonic() - started < 15 and refused(port)
