"""Test-wide defaults: BM25-only search unless a test asks for embeddings (fast, writes nothing to ~/.cache)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _bm25_only_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    if "ANYTOOL_EMBEDDINGS" not in os.environ:
        monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")


@pytest.fixture(autouse=True)
def _response_cache_in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The CLI/demo/Studio on-disk response cache goes to a per-session temporary directory, never ~/.cache."""
    monkeypatch.setenv("ANYTOOL_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "response-cache"))


@pytest.fixture(scope="session")
def _session_index_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("anytool-index"))


@pytest.fixture(autouse=True)
def _indexes_in_a_temporary_dir(monkeypatch: pytest.MonkeyPatch, _session_index_dir: str) -> None:
    """Search indexes (BM25 included) persist under a per-session temporary folder, not ~/.cache."""
    if "ANYTOOL_INDEX_DIR" not in os.environ:
        monkeypatch.setenv("ANYTOOL_INDEX_DIR", _session_index_dir)
