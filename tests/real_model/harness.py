"""The real-model tier's harness: its settings, the skip-or-fail rule, and running `anytool` as a user does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.real_model.recorder import RecordingProxy

REQUIRED = os.environ.get("ANYTOOL_REQUIRE_REAL_MODEL", "") == "1"
SERVER_CTX = 4096  # the server's window (-c)
WINDOW = 2048  # the window the client declares: every request must keep within it, as the server counts
THREADS = 1  # the server's threads: the client needs the other core (CI has 2)
MAX_TOKENS = 256  # every call's max_tokens (model_profiles): short replies keep the tier's CPU time small
SMOLLM2, GEMMA = "smollm2", "gemma3-270m"  # the model names the servers answer to (and the packages' local names)
# what a run may end with (docs/endpoints.md, "What a record's status means"); `error` is not among them here: the
# servers are healthy and local, so an error is a fault of the client
ENDED = ("solved", "unsolved", "gave_up", "no_apis", "budget_exhausted", "time_limit", "timeout")



def unavailable(reason: str) -> None:
    """Skip the tier, saying why; a failure when the tier is required (CI)."""
    if REQUIRED:
        pytest.fail(f"ANYTOOL_REQUIRE_REAL_MODEL=1, but {reason}", pytrace=False)
    pytest.skip(reason)



# --- running the CLI as a user does --------------------------------------------------------------------------------

ANYTOOL = Path(sys.executable).with_name("anytool")


@dataclass
class Done:
    """A finished `anytool` command."""

    code: int
    out: str
    err: str
    seconds: float

    def json(self) -> Any:
        return json.loads(self.out)


def client_env(proxy: RecordingProxy, home: Path) -> dict[str, str]:
    """The environment of an `anytool` command talking to `proxy` (no key of anyone's, nothing in ~/.cache)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANYTOOL_MODEL"))}
    env.update(OPENAI_BASE_URL=proxy.base_url, OPENAI_API_KEY="sk-local-unused",
               ANYTOOL_CACHE_DIR=str(home / "responses"))
    return env


def anytool(args: Sequence[str], env: dict[str, str], *, timeout: float, cwd: Path | None = None) -> Done:
    """Run `anytool ARGS` (the installed command) to its end."""
    start = time.monotonic()
    done = subprocess.run([str(ANYTOOL), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    return Done(done.returncode, done.stdout, done.stderr, time.monotonic() - start)
