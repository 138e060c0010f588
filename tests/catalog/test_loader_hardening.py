"""Issue 28, the catalog loaders' part: the OPPO toolset's config.yml and docs are read bounded (point 4), its tool
names are names, never paths (point 5), every loader repairs lone surrogates naming the file and the field and the
fingerprint never fails (point 9), and a wrongly shaped OPPO document is one line naming the file and the field
(point 10)."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from langgraph_anytool import Catalog
from langgraph_anytool.catalog.errors import CatalogError
from langgraph_anytool.catalog.models import Api, Category, Param, Tool
from tests.cli_support import cli_error

TOOLSET = Path(__file__).parents[1] / "data" / "oppo_toolset"
BOMB = "\n".join(["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
                 + [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]) + "\n"


@pytest.fixture
def toolset(tmp_path: Path) -> Path:
    root = tmp_path / "toolset"
    shutil.copytree(TOOLSET, root)
    return root




def _set_tools(root: Path, key: str, names: list[str]) -> None:
    cfg = root / "config.yml"
    text = cfg.read_text()
    start = text.index(f"{key}:")
    end = text.index("\n\n", start)
    cfg.write_text(text[:start] + f"{key}:\n" + "".join(f"  - {json.dumps(n)}\n" for n in names) + text[end:])


# ------------------------------------------------------------------------------------------- point 4
def test_a_yaml_alias_bomb_in_config_yml_is_refused_at_once(toolset: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    (toolset / "config.yml").write_text((toolset / "config.yml").read_text() + BOMB)
    line = cli_error(capsys, "catalog", "--catalog", str(toolset))
    assert "config.yml" in line and "expands to more than" in line


def test_an_oversized_or_special_config_is_refused(toolset: Path) -> None:
    cfg = toolset / "config.yml"
    cfg.write_text(cfg.read_text() + "# " + "x" * 2_000_000 + "\n")
    with pytest.raises(CatalogError, match=r"config\.yml.*at most"):
        Catalog.load(toolset)


def test_a_deep_oppo_doc_is_one_line(toolset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = toolset / "rapidapi" / "docs" / "fx_rates.json"
    doc.write_text('{"tool_name": "fx_rates", "APIs": ' + "[" * 100_000 + "]" * 100_000 + "}")
    line = cli_error(capsys, "catalog", "--catalog", str(toolset))
    assert "fx_rates.json" in line and "nesting too deep" in line


# ------------------------------------------------------------------------------------------- point 5
@pytest.mark.parametrize("key", ["RAPIDAPI_TOOLS", "DEV_TOOLS"])
def test_tool_names_are_never_paths(toolset: Path, tmp_path: Path, key: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "secret.json"  # a tool document outside the toolset, whose strings must never load
    secret.write_text(json.dumps({"tool_name": "leak", "tool_description": "TOP-SECRET-4242",
                                  "APIs": [{"type": "function", "function": {"name": "x", "description": "y"}}]}))
    depth = len((toolset / "rapidapi" / "docs").resolve().parts)
    for name in ["../" * depth + str(secret.with_suffix(""))[1:], str(secret.with_suffix("")), "../../secret",
                 "docs/../../secret", "..", "~/secret"]:
        _set_tools(toolset, key, [name])
        line = cli_error(capsys, "catalog", "--catalog", str(toolset), "--json")
        assert "not a tool name" in line and f"{key}[0]" in line and "config.yml" in line
        assert "TOP-SECRET" not in line


def test_a_symlink_leaving_the_toolset_is_refused(toolset: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text((toolset / "rapidapi" / "docs" / "fx_rates.json").read_text()
                       .replace('"fx_rates"', '"TOP-SECRET-4242"'))
    link = toolset / "rapidapi" / "docs" / "fx_rates.json"
    link.unlink()
    link.symlink_to(outside)
    with pytest.raises(CatalogError, match="outside") as info:
        Catalog.load(toolset)
    assert "TOP-SECRET" not in str(info.value)
    link.unlink()
    shutil.copy(outside, link)
    cfg = toolset / "config.yml"
    moved = tmp_path / "config.yml"
    shutil.move(cfg, moved)
    cfg.symlink_to(moved)
    with pytest.raises(CatalogError, match=r"config\.yml.*outside"):
        Catalog.load(toolset)


def test_a_symlink_inside_the_toolset_still_loads(toolset: Path) -> None:
    docs = toolset / "rapidapi" / "docs"
    (toolset / "shared.json").write_text((docs / "fx_rates.json").read_text())
    (docs / "fx_rates.json").unlink()
    (docs / "fx_rates.json").symlink_to(toolset / "shared.json")
    assert Catalog.load(toolset).find_api("fx_rates", "convert")


# ------------------------------------------------------------------------------------------- point 10
@pytest.mark.parametrize("patch, field", [
    ({"parameters": "abc"}, "APIs[0].function.parameters"),
    ({"parameters": {"properties": {"amount": "NUMBER"}}}, "APIs[0].function.parameters.properties.amount"),
    ({"parameters": {"properties": {}, "required": "amount"}}, "APIs[0].function.parameters.required"),
    ({"name": ["convert"]}, "APIs[0].function.name"),
    ({"description": {"text": 1}}, "APIs[0].function.description"),
])
def test_a_wrongly_typed_oppo_doc_is_one_line_naming_the_field(toolset: Path, patch: dict[str, object], field: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    doc_path = toolset / "rapidapi" / "docs" / "fx_rates.json"
    doc = json.loads(doc_path.read_text())
    doc["APIs"][0]["function"].update(patch)
    doc_path.write_text(json.dumps(doc))
    line = cli_error(capsys, "catalog", "--catalog", str(toolset))
    assert "fx_rates.json" in line and f"field {field!r}" in line


@pytest.mark.parametrize("doc, field", [
    ({"tool_name": "fx_rates", "APIs": "all"}, "APIs"),
    ({"tool_name": "fx_rates", "APIs": []}, "APIs"),
    ({"tool_name": 7, "APIs": [{"function": {"name": "x"}}]}, "tool_name"),
    ({"tool_name": "fx_rates", "APIs": [{"function": "x"}]}, "APIs[0].function"),
    ({"tool_name": "fx_rates", "APIs": [7]}, "APIs[0]"),
])
def test_a_wrongly_shaped_oppo_doc_names_the_field(toolset: Path, doc: dict[str, object], field: str) -> None:
    (toolset / "rapidapi" / "docs" / "fx_rates.json").write_text(json.dumps(doc))
    with pytest.raises(CatalogError) as info:
        Catalog.load(toolset)
    assert f"field {field!r}" in str(info.value) and "\n" not in str(info.value)


# ------------------------------------------------------------------------------------------- point 9
def _surrogate_json(value: object) -> str:
    """JSON text holding `value` with every "@@" written as the escape of a lone surrogate."""
    return json.dumps(value).replace("@@", "\\ud800")


def _usable(catalog: Catalog) -> None:
    catalog.fingerprint()
    assert catalog.search("currency") is not None
    json.dumps([a.details() for a in catalog], ensure_ascii=False).encode("utf-8")


def test_oppo_docs_and_config_with_lone_surrogates_are_repaired_and_named(
        toolset: Path, caplog: pytest.LogCaptureFixture) -> None:
    doc_path = toolset / "rapidapi" / "docs" / "fx_rates.json"
    doc = json.loads(doc_path.read_text())
    doc["APIs"][0]["function"]["description"] = "convert @@ money"
    doc_path.write_text(_surrogate_json(doc))
    cfg = toolset / "config.yml"
    cfg.write_text(cfg.read_text().replace('name: "Ada"', 'name: "Ada\\ud800"'))
    with caplog.at_level(logging.WARNING):
        catalog = Catalog.load(toolset, embeddings=None)
    _usable(catalog)
    assert catalog.find_api("fx_rates", doc["APIs"][0]["function"]["name"]).description == "convert \ufffd money"
    text = caplog.text
    assert "fx_rates.json" in text and "APIs[0].function.description" in text
    assert "config.yml" in text and "USER.name" in text


def test_toolbench_and_query_files_with_lone_surrogates_are_repaired_and_named(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    tools = tmp_path / "tools" / "Finance"
    tools.mkdir(parents=True)
    (tools / "fx.json").write_text(_surrogate_json({
        "tool_name": "fx", "tool_description": "rates @@", "api_list": [
            {"name": "rate", "description": "a rate @@", "required_parameters": [
                {"name": "base", "type": "STRING", "description": "currency @@"}]}]}))
    query_file = tmp_path / "G1_query.json"
    query_file.write_text(_surrogate_json([{"query": "q", "query_id": 1, "api_list": [
        {"category_name": "Finance", "tool_name": "fx", "api_name": "rate", "api_description": "@@"}]}]))
    with caplog.at_level(logging.WARNING):
        for path in (tmp_path / "tools", query_file):
            _usable(Catalog.load(path, embeddings=None))
    assert "fx.json" in caplog.text and "api_list[0].required_parameters[0].description" in caplog.text
    assert "G1_query.json" in caplog.text and "[0].api_list[0].api_description" in caplog.text


def test_openapi_specs_with_lone_surrogates_are_repaired_and_named(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    spec = {"openapi": "3.0.3", "info": {"title": "Pets @@"}, "paths": {"/pets": {"get": {
        "operationId": "list", "summary": "list pets @@"}}}}
    path = tmp_path / "pets.json"
    path.write_text(_surrogate_json(spec))
    yaml_path = tmp_path / "pets.yaml"
    yaml_path.write_text(_surrogate_json(spec))  # JSON is YAML; its "\ud800" escape too
    with caplog.at_level(logging.WARNING):
        for p in (path, yaml_path):
            _usable(Catalog.load(p, embeddings=None))
        _usable(Catalog.from_openapi([json.loads(_surrogate_json(spec))], embeddings=None))
    assert "pets.json" in caplog.text and "info.title" in caplog.text and "<spec #0>" in caplog.text


def test_langchain_tools_with_lone_surrogates_are_repaired_and_named(caplog: pytest.LogCaptureFixture) -> None:
    from langchain_core.tools import StructuredTool

    def rate(base: str) -> str:
        return base

    tool = StructuredTool.from_function(rate, name="rate", description="currency rate \ud800")
    with caplog.at_level(logging.WARNING):
        catalog = Catalog.from_langchain_tools([tool], embeddings=None)
    _usable(catalog)
    assert "langchain:" in caplog.text and "api_list[0].description" in caplog.text
    bad_name = StructuredTool.from_function(rate, name="rate", description="x")
    bad_name.name = "rate\ud800"
    with pytest.raises(CatalogError, match=r"tools\[0\]\.name.*lone surrogates"):
        Catalog.from_langchain_tools([bad_name])


def test_a_catalog_built_in_code_never_breaks_the_fingerprint(caplog: pytest.LogCaptureFixture) -> None:
    api = Api(id="Cat/tool/api", name="api", tool_key="tool", tool_name="Tool \udc00", category="Cat",
              description="bad \ud800", params=(Param("p", description="x\udfff", enum=("a\ud800",)),),
              template_response={"k\ud800": ["v\udbff"]})
    with caplog.at_level(logging.WARNING):
        catalog = Catalog([Category("Cat", tools=(Tool("tool", "Tool \udc00", "Cat", apis=(api,), source="mine"),))],
                          embeddings=None)
    _usable(catalog)
    assert len(catalog.fingerprint()) == 16
    assert "mine" in caplog.text and "apis[0].params[0].description" in caplog.text
    # the fingerprint itself never fails, even on data that bypassed the constructor's repair
    raw = object.__new__(Catalog)
    raw.__dict__.update(catalog.__dict__, _fingerprint=None,
                        _apis={api.id: api}, _categories={"Cat": Category("Cat", tools=(Tool("t", "t\ud800", "Cat"),))})
    assert len(raw.fingerprint()) == 16
