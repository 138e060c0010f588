"""OPPO's `toolset/` folder as a catalog (repository OPPO-Mente-Lab/agent_eval: `toolset/__init__.py` `Toolset`,
`toolset/{rapidapi,dev_tools}/__init__.py` `get_docs`, `eval_scripts/agent_interface.py`
`convert_doc_to_openai_format`), on a hand-made folder in the release's layout (tests/data/oppo_toolset)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from langgraph_anytool import Catalog
from langgraph_anytool.catalog.errors import CatalogError
from langgraph_anytool.catalog.oppo_toolset import authors_param_type, is_oppo_toolset, read_oppo_config
from langgraph_anytool.tools.pipeline import ApiExecutor

TOOLSET = Path(__file__).parents[1] / "data" / "oppo_toolset"


def test_loads_the_tools_config_turns_on() -> None:
    cat = Catalog.load(TOOLSET)
    assert is_oppo_toolset(TOOLSET)
    assert cat.categories == ["rapidapi", "dev_tools"]
    # get_docs reads only the names in RAPIDAPI_TOOLS / DEV_TOOLS: unused_tool.json is present but off
    assert sorted(t.name for t in cat.tools()) == ["access_user_info", "agent_equipments", "calendar", "fx_rates",
                                                   "web_finder"]
    convert = cat.find_api("fx_rates", "convert")
    assert convert.id == "rapidapi/fx_rates/convert" and convert.name == "convert"
    # convert_doc_to_openai_format: lower-case; JSON types kept; INT → integer; DATE (...) / ENUM → string
    types = {p.name: p.type for p in convert.params}
    assert types == {"source": "string", "target": "string", "amount": "number", "on_date": "string",
                     "rounding": "string"}
    assert convert.param("rounding").enum == ("up", "down")  # type: ignore[union-attr]
    assert [p.name for p in convert.required_params] == ["source", "target", "amount"]
    assert cat.find_api("web_finder", "web_search").param("count").type == "integer"  # type: ignore[union-attr]


def test_authors_type_mapping() -> None:
    assert [authors_param_type(t) for t in ("STRING", "INT", "NUMBER", "BOOLEAN", "ARRAY", "OBJECT", "FLOAT",
                                            "ENUM", "DATE (YYYY-MM-DD)", "TIME (24-hour HH:MM)", None)] == \
        ["string", "integer", "number", "boolean", "array", "object", "string", "string", "string", "string",
         "string"]


def test_config_profile_and_location_served_by_the_dev_tools() -> None:
    cat = Catalog.load(TOOLSET)
    cfg = read_oppo_config(TOOLSET)
    assert cfg.user["name"] == "Ada" and cfg.agent_location == "Porto, Portugal"
    assert cfg.rapidapi_tools == ("fx_rates", "web_finder")
    executor = ApiExecutor.for_catalog(cat, kind="auto")  # bound dev tools run locally
    try:
        profile = executor.call(cat.find_api("access_user_info", "get_user_profile").id, {})
        where = executor.call(cat.find_api("agent_equipments", "get_my_location").id, {})
        days = executor.call(cat.find_api("calendar", "days_of_month").id, {"year": 2024, "month": 2})
        now = executor.call(cat.find_api("agent_equipments", "get_current_time").id, {})
    finally:
        executor.close()
    assert profile.ok and profile.content == {"name": "Ada", "age": 36, "sex": "Female",
                                              "location": "Lisbon, Portugal", "language": "Portuguese"}
    assert where.ok and where.content == {"location": "Porto, Portugal"}
    # 2024 is a leap year and 1 Feb 2024 was a Thursday
    assert days.ok and len(days.content) == 29 and days.content[0] == "2024-02-01 Thursday"
    assert now.ok and set(now.content) == {"current_time"}


def test_the_rapidapi_key_is_not_kept(tmp_path: Path) -> None:
    root = tmp_path / "toolset"
    shutil.copytree(TOOLSET, root)
    cfg = root / "config.yml"
    cfg.write_text(cfg.read_text().replace('X-RapidAPI-Key: ""', 'X-RapidAPI-Key: "sk-do-not-keep-4242"'))
    assert "sk-do-not-keep-4242" not in repr(read_oppo_config(root))
    cat = Catalog.load(root)
    assert "sk-do-not-keep-4242" not in repr(vars(cat))


def test_errors_name_the_file_and_field(tmp_path: Path) -> None:
    root = tmp_path / "toolset"
    shutil.copytree(TOOLSET, root)
    cfg = root / "config.yml"
    text = cfg.read_text()
    cfg.write_text(text.replace("  - web_finder\n", "  - web_finder\n  - missing_tool\n"))
    with pytest.raises(CatalogError, match=r"config\.yml.*RAPIDAPI_TOOLS.*missing_tool.*does not exist"):
        Catalog.load(root)
    cfg.write_text(text.replace("DEV_TOOLS:\n  - access_user_info", "DEV_TOOLS: 7\nX:\n  - access_user_info"))
    with pytest.raises(CatalogError, match=r"field 'DEV_TOOLS'.*list of tool names"):
        Catalog.load(root)
    cfg.write_text(text)
    doc = root / "rapidapi" / "docs" / "fx_rates.json"
    doc.write_text(doc.read_text().replace('"tool_name": "fx_rates",', ""))
    with pytest.raises(CatalogError, match=r"fx_rates\.json, field 'tool_name'"):
        Catalog.load(root)
