"""The suite's defaults (tests/conftest.py) reach fixtures wider than a test, not only the tests themselves."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

KEYS = ("ANYTOOL_EMBEDDINGS", "ANYTOOL_INDEX_DIR", "ANYTOOL_CACHE_DIR")


@pytest.fixture(scope="module")
def seen_by_a_module_fixture() -> dict[str, str | None]:
    return {k: os.environ.get(k) for k in KEYS}


def test_a_module_fixture_sees_the_suites_defaults(seen_by_a_module_fixture: dict[str, str | None],
                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    seen = seen_by_a_module_fixture
    assert seen == {k: os.environ.get(k) for k in KEYS}  # the same as a test sees
    base = tmp_path_factory.getbasetemp().resolve()
    assert Path(str(seen["ANYTOOL_CACHE_DIR"])).resolve().is_relative_to(base)
    if "ANYTOOL_INDEX_DIR" not in os.environ or Path(os.environ["ANYTOOL_INDEX_DIR"]).resolve().is_relative_to(base):
        assert Path(str(seen["ANYTOOL_INDEX_DIR"])).resolve().is_relative_to(base)
    assert seen["ANYTOOL_EMBEDDINGS"] is not None


def test_a_test_that_changes_the_environment_by_hand_does_not_leak() -> None:
    os.environ.pop("ANYTOOL_EMBEDDINGS", None)  # undone by the next test's defaults


def test_the_next_test_has_its_defaults_again() -> None:
    assert os.environ.get("ANYTOOL_EMBEDDINGS") is not None
