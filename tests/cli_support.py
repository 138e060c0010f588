"""Test helper: run `anytool` in this process and take its one-line error."""

from __future__ import annotations

import pytest

from langgraph_anytool.cli.app import main


def cli_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """`anytool ARGS` must fail with exit 2 and one `anytool: error:` line, no traceback; that line."""
    assert main(list(args)) == 2, args
    err = capsys.readouterr().err.strip().splitlines()
    assert err and err[-1].startswith("anytool: error:"), err
    assert not any("Traceback" in line for line in err)
    return err[-1]
