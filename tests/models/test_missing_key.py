"""A user without a key, or without a provider's LangChain package, gets one line saying what to set or install
(issue 29 point 2): in Python a short traceback ending in that line (not the client's 52-line chain), on the
command line one `anytool: error:` line."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest

from langgraph_anytool import AnyToolConfig, Catalog, create_anytool_graph
from langgraph_anytool.cli.app import main
from langgraph_anytool.models.llm import ModelNotConfiguredError, init_model


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANYTOOL_MODEL", "GROQ_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")
    monkeypatch.setenv("ANYTOOL_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.chdir(tmp_path)


def test_a_missing_key_is_one_line_and_a_short_traceback() -> None:
    with pytest.raises(ModelNotConfiguredError) as err:
        create_anytool_graph(Catalog.builtin(), "openai:gpt-4o-mini", models={"judge": "openai:gpt-4o"})
    message = str(err.value)
    assert "\n" not in message and "OPENAI_API_KEY" in message and "'offline'" in message, message
    assert err.value.__cause__ is None and err.value.__suppress_context__  # not the openai client's chain
    shown = "".join(traceback.format_exception(err.value))
    assert "openai.OpenAIError" not in shown and "direct cause" not in shown, shown
    # the user's frame, create_anytool_graph and the line that raises: no resolver or client frames
    frames = [line for line in shown.splitlines() if line.lstrip().startswith("File ")]
    assert len(frames) <= 3, shown


def test_a_missing_provider_package_names_it_and_the_openai_compatible_way() -> None:
    with pytest.raises(ModelNotConfiguredError) as err:
        init_model("groq:llama-3.3-70b-versatile")
    message = str(err.value)
    assert "\n" not in message and "langchain-groq" in message and "OPENAI_BASE_URL" in message, message
    assert "https://api.groq.com/openai/v1" in message


def test_a_run_time_model_without_its_package_is_one_line() -> None:
    """The Quickstart's former second call (`context={"model": "groq:..."}`): the error, raised from inside the
    run, carries one line and no chained ImportError."""
    graph = create_anytool_graph(Catalog.builtin(), "offline", config=AnyToolConfig(max_reflections=0))
    with pytest.raises(ModelNotConfiguredError) as err:
        graph.invoke({"query": "Convert 26.2 miles to kilometers."}, context={"model": "groq:llama-3.3-70b-versatile"})
    assert "\n" not in str(err.value) and "langchain-groq" in str(err.value)
    assert err.value.__cause__ is None and err.value.__suppress_context__


@pytest.mark.parametrize("argv", [["run", "Convert 26.2 miles to kilometers.", "--model", "openai:gpt-4o-mini",
                                   "--no-cache"],
                                  ["demo", "--model", "openai:gpt-4o-mini", "--no-cache"]])
def test_the_command_line_says_it_in_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(argv)
    err = [line for line in capsys.readouterr().err.splitlines() if "OPENAI_API_KEY" in line or "Traceback" in line]
    assert code == 2
    assert len(err) == 1 and "needs an API key: set OPENAI_API_KEY" in err[0], err
