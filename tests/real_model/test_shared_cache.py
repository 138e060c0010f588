"""Issue 38 §2 on the real server: two queries at once (`eval run --concurrency 2`) against one llama-server
started as docs/endpoints.md used to start it, without `--parallel`: 4 slots over one unified cache of `-c` tokens
(verified: `total_slots` 4, each slot's `n_ctx` all of `-c`, `kv_unified = 'true'` in its log), the client
declaring that whole window. Before, both queries' requests overflowed the cache together ("Context size has been
exceeded" inside an HTTP 200 stream) and were retried blindly; now they are admitted so that they fit, and no
request meets a full cache.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from langgraph_anytool.integrations.local_models import LlamaServer, LocalModelError, gguf_path
from tests.real_model.checks import documented_status, settings
from tests.real_model.harness import SMOLLM2, THREADS, anytool, unavailable

pytestmark = pytest.mark.slow

CTX = 2048  # the server's -c, shared by its slots, and the window the client declares
FULL = "context size has been exceeded"


@pytest.fixture
def shared_cache_server(llama_binary: Path, tmp_path: Path) -> Iterator[LlamaServer]:
    try:
        model = gguf_path(SMOLLM2)
    except LocalModelError as exc:
        unavailable(str(exc))
    # --parallel -1: llama-server's default (what it runs without the option): 4 slots, one unified cache
    server = LlamaServer(model, ctx=CTX, alias=SMOLLM2, binary=llama_binary, threads=THREADS, parallel=-1,
                         log_path=tmp_path / "llama-server.log", extra=("--temp", "0", "--seed", "1"))
    with server:
        yield server


def test_two_queries_at_once_share_the_cache_without_overflowing_it(shared_cache_server: LlamaServer,
                                                                     tmp_path: Path) -> None:
    log = shared_cache_server.log_tail(400)
    assert "kv_unified = 'true'" in log and "n_slots = 4" in log, log[-2000:]
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps([{"query": "Convert 26.2 miles to kilometers.", "query_id": 1},
                                   {"query": "What is 15% of 240 US dollars in euros?", "query_id": 2}]))
    profile = json.dumps({SMOLLM2: {"context_window": CTX, "tool_calling": False, "input_price": 0,
                                    "output_price": 0, "max_tokens": 128}})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANYTOOL_MODEL"))}
    env.update(OPENAI_BASE_URL=shared_cache_server.base_url, OPENAI_API_KEY="sk-local-unused",
               ANYTOOL_CACHE_DIR=str(tmp_path / "responses"))
    out = tmp_path / "records.jsonl"
    done = anytool(["eval", "run", "--queries", str(queries), "--model", f"openai:{SMOLLM2}", "--concurrency", "2",
                    "--out", str(out), "--no-progress", "--quiet",
                    *settings("retriever=search", "max_run_seconds=300", f"model_profiles={profile}")],
                   env, timeout=1200, cwd=tmp_path)
    assert "Traceback" not in done.err, done.err[-3000:]
    records = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    assert len(records) == 2, (done.code, done.err[-2000:])
    for record in records:
        documented_status(record)
        assert FULL not in json.dumps(record).lower(), record.get("reason")
        roles = (record.get("usage") or {}).get("roles") or {}
        assert not any(v.get("capacity_faults") for v in roles.values() if isinstance(v, dict)), roles
    assert FULL not in shared_cache_server.log_tail(100_000).lower()
