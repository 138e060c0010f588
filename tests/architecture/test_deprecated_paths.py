"""Old module paths (before the house redesign) still import for one release, warn, and are the new modules."""

from __future__ import annotations

import importlib
import sys

import pytest

from langgraph_anytool._compat import MOVED


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_path_warns_and_is_the_new_module(old: str, new: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)  # the same object: patching the old path patches the real one


def test_monkeypatching_through_an_old_path_patches_the_real_module(monkeypatch: pytest.MonkeyPatch) -> None:
    from langgraph_anytool.models import llm

    sys.modules.pop("langgraph_anytool.llm", None)
    with pytest.warns(DeprecationWarning):
        old = importlib.import_module("langgraph_anytool.llm")
    monkeypatch.setattr(old, "total_tokens", lambda usage: -1)
    assert llm.total_tokens({}) == -1


def test_the_console_script_target_is_still_a_function() -> None:
    from langgraph_anytool.cli import main

    assert callable(main) and main.__module__ == "langgraph_anytool.cli.app"


def test_an_unknown_old_path_still_fails() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("langgraph_anytool.no_such_module")
