"""Test-wide defaults: BM25-only search unless a test asks for embeddings (fast, writes nothing to ~/.cache).

The settings hold for the whole session (so module- and session-scoped fixtures, which run before any test's own
fixtures, see them too) and are set again before every test (so a test that changed `os.environ` by hand does not
leak its change into the next one).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


def _apply_defaults(monkeypatch: pytest.MonkeyPatch, index_dir: str, cache_dir: str) -> None:
    if "ANYTOOL_EMBEDDINGS" not in os.environ:
        monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")
    # the CLI/demo/Studio on-disk response cache goes to a per-session temporary directory, never ~/.cache
    monkeypatch.setenv("ANYTOOL_CACHE_DIR", cache_dir)
    # search indexes (BM25 included) persist under a per-session temporary folder, not ~/.cache
    if "ANYTOOL_INDEX_DIR" not in os.environ:
        monkeypatch.setenv("ANYTOOL_INDEX_DIR", index_dir)


@pytest.fixture(scope="session")
def _session_dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    return str(tmp_path_factory.mktemp("anytool-index")), str(tmp_path_factory.getbasetemp() / "response-cache")


@pytest.fixture(scope="session", autouse=True)
def _session_defaults(_session_dirs: tuple[str, str]) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        _apply_defaults(mp, *_session_dirs)
        yield


@pytest.fixture(autouse=True)
def _test_defaults(monkeypatch: pytest.MonkeyPatch, _session_dirs: tuple[str, str]) -> None:
    _apply_defaults(monkeypatch, *_session_dirs)
