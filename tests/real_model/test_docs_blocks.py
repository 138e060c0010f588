"""The documentation blocks marked `<!-- docs-test: real-model -->` (docs/writing-docs.md), run as a reader runs them:
`anytool` is the installed command and `OPENAI_BASE_URL` points at a llama-server serving SmolLM2 (`smollm2`) and
Gemma 3 270M (`gemma3-270m`), through the recording proxy."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.docs.test_docs_blocks import all_blocks, bash_script, work_dir
from tests.real_model.checks import within_window
from tests.real_model.harness import GEMMA, SMOLLM2, client_env
from tests.real_model.recorder import RecordingProxy

BLOCKS = [b for b in all_blocks() if "real-model" in b.marks]


def test_some_blocks_are_marked() -> None:
    """The real-model blocks are found (a parser that found none would pass the page)."""
    assert any(b.page.name == "endpoints.md" for b in BLOCKS)


@pytest.mark.slow
@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_block(block, proxy: Callable[..., RecordingProxy], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert block.lang == "bash", f"{block.name}: a real-model block is a bash block"
    p = proxy(SMOLLM2, GEMMA)
    env = {**client_env(p, tmp_path), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", bash_script(block.code)], cwd=work_dir(tmp_path), env=env,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, f"{block.name}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "Traceback (most recent call last)" not in done.stdout + done.stderr
    within_window(p, window=2048)  # the window the block declares
