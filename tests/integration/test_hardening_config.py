"""Issue 21, points 10 and 12 (CLI side): ANYTOOL_MODEL_PROFILES reaches the command line (a price set there
satisfies --max-cost), a malformed value is an error naming the variable, a ToolBench API whose method is not a
method name is refused naming file, tool, API and field, and `anytool run --json` carries `error_kind`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.catalog.errors import CatalogError
from langgraph_anytool.cli.app import main
from langgraph_anytool.config import AnyToolConfig, ConfigError
from tests.servers import ChatFault, ChatReply, OpenAIChatServer

PRICE = json.dumps({"house-model": {"input_price": 0.1, "output_price": 0.2}})


def _serve(monkeypatch: pytest.MonkeyPatch, server: OpenAIChatServer) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-config")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("ANYTOOL_CACHE", "off")


def test_a_price_from_anytool_model_profiles_satisfies_max_cost(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Today the variable is never read by the CLI: --max-cost refuses the model as unpriced."""
    with OpenAIChatServer([ChatReply("Hello.")] * 30, model="house-model") as server:
        _serve(monkeypatch, server)
        monkeypatch.delenv("ANYTOOL_MODEL_PROFILES", raising=False)
        args = ["run", "Say hello.", "--model", "openai:house-model", "--max-cost", "1", "--json",
                "--set", "route_tools=true"]
        assert main(args) == 2
        assert "price of model 'house-model'" in capsys.readouterr().err
        monkeypatch.setenv("ANYTOOL_MODEL_PROFILES", PRICE)
        main(args)
        out = capsys.readouterr()
        assert "price of model" not in out.err and server.chat_requests, out.err[-1500:]
        data = json.loads(out.out)
        assert data["usage"] is not None


@pytest.mark.parametrize("value", ["{bad", "/nonexistent/profiles.json", '{"m": {"input_price": "cheap"}}', "[1, 2]"])
def test_a_malformed_anytool_model_profiles_is_an_error_naming_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str) -> None:
    monkeypatch.setenv("ANYTOOL_MODEL_PROFILES", value)
    q = tmp_path / "q.json"
    q.write_text(json.dumps([{"query_id": 1, "query": "Convert 5 kilograms to pounds."}]))
    for args in (["run", "Convert 5 kilograms to pounds.", "--offline", "--no-cache"],
                 ["eval", "run", "--queries", str(q), "--offline", "--out", str(tmp_path / "r.jsonl"), "--no-progress"]):
        rc = main(args)
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2 and err[-1].startswith("anytool: error: ANYTOOL_MODEL_PROFILES="), err
    with pytest.raises(ConfigError, match="ANYTOOL_MODEL_PROFILES="):
        AnyToolConfig.from_env({"ANYTOOL_MODEL_PROFILES": value})


def test_from_env_names_the_variable_of_a_bad_value() -> None:
    with pytest.raises(ConfigError, match="ANYTOOL_MAX_API_POOL='many'"):
        AnyToolConfig.from_env({"ANYTOOL_MAX_API_POOL": "many"})


def test_a_toolbench_method_that_is_no_method_name_is_refused(tmp_path: Path) -> None:
    """Today `"method": 42` loads as method "42"."""
    cat = tmp_path / "tools" / "Finance"
    cat.mkdir(parents=True)
    tool = {"tool_name": "Quotes", "tool_description": "Stock quotes.", "home_url": "", "host": "quotes.example",
            "api_list": [{"name": "Quote", "url": "https://quotes.example/quote", "description": "A quote.",
                          "method": "get", "required_parameters": [], "optional_parameters": []},
                         {"name": "History", "url": "https://quotes.example/history", "description": "History.",
                          "method": 42, "required_parameters": [], "optional_parameters": []}]}
    (cat / "quotes.json").write_text(json.dumps(tool))
    with pytest.raises(CatalogError) as err:
        Catalog.load(str(tmp_path / "tools"))
    text = str(err.value)
    assert "quotes.json" in text and "'Quotes'" in text and "'History'" in text and "method" in text and "42" in text
    tool["api_list"][1]["method"] = "post"
    (cat / "quotes.json").write_text(json.dumps(tool))
    methods = sorted(api.method for api in Catalog.load(str(tmp_path / "tools")))
    assert methods == ["GET", "POST"]


def test_run_json_carries_error_kind(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A run that ends in `error` (the endpoint refuses the key): `--json` names the kind, as eval records do."""
    with OpenAIChatServer([ChatFault("status", 401)] * 10) as server:
        _serve(monkeypatch, server)
        main(["run", "Convert 5 kilograms to pounds.", "--model", "openai:gpt-test", "--json",
              "--set", "model_retries=0"])
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "error" and data["error_kind"] == "auth", data
