"""With `prompts_from`, the agents see the catalog as the authors' code reads it (issue 36 §3): a category's tools in
`tool_data.json` order, and descriptions as the tool documents write them. Expectations derived from dyabel/AnyTool:

- `anytool/api_database_function.py` `get_tools_in_category`: `list(database[category_name].keys())`, `database`
  being `tool_data.json`, which `preprocess/extract_tool_database.py` writes in the order `os.walk` meets the files
  (a directory's listing, unsorted); `scripts/main.py` `Category_Agent.category_search` puts `self.tools` in the first
  user message and, for a small category, hands them to `create_agent_tool_level` in that order;
- `preprocess/extract_api_details.py`: an API's `description[:100]` as written (a description of ' ' stays ' ');
  `preprocess/extract_category_tool_details.py`: the tool's `tool_description` as written; `query_all_tool_info`
  and `get_tools_descriptions` give them so, and `main.py` sends `str()` of the result.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool import AnyToolConfig
from langgraph_anytool.catalog import Catalog, Category
from langgraph_anytool.catalog.loaders import load_toolbench_dir
from langgraph_anytool.catalog.parse import parse_tool
from langgraph_anytool.models.llm import ModelSet
from langgraph_anytool.nodes import category_agent
from langgraph_anytool.nodes.agents import new_agent_record
from langgraph_anytool.nodes.agents.context import CallContext
from langgraph_anytool.nodes.category_agent.handlers import authors_describe_tools, authors_list_tools, authors_tools
from langgraph_anytool.nodes.meta_agent.handlers import create_agent_category_level
from langgraph_anytool.nodes.tool_agent import tools_info
from langgraph_anytool.nodes.tool_agent.handlers import authors_pool_listing
from langgraph_anytool.paper_prompts import anytool_book
from langgraph_anytool.paper_prompts.testing import write_fake_checkout
from langgraph_anytool.runtime import Deps, RunSignals
from langgraph_anytool.tools.agent_functions import CategoryArgs


def _doc(name: str, description: str = "", api_description: str = "does things") -> dict[str, Any]:
    return {"tool_name": name, "tool_description": description or f"{name} tool",
            "api_list": [{"name": f"{name} api", "description": api_description, "required_parameters": []}]}


def _deps(catalog: Catalog, root: Path | None) -> Deps:
    config = AnyToolConfig.paper(prompts_from=str(root)) if root else AnyToolConfig.paper()
    return Deps(catalog=catalog, models=ModelSet(default=None, by_role={}), executor=None,  # type: ignore[arg-type]
                config=config, signals=RunSignals())


def test_descriptions_reach_the_agents_as_the_documents_write_them(tmp_path: Path) -> None:
    tool = parse_tool(_doc("Spaced", " Padded tool \n", api_description=" "), category="C", source="t")
    api = tool.apis[0]
    assert (api.description, tool.description) == ("", "Padded tool")  # the catalog itself is unchanged
    assert (api.as_written, tool.as_written) == (" ", " Padded tool \n")
    catalog = Catalog([Category("C", tools=(tool,))])
    deps = _deps(catalog, write_fake_checkout(tmp_path / "AnyTool", "anytool"))
    record = new_agent_record("meta/C/t1", "tool", category="C", tools=["Spaced"])
    # query_all_tool_info: api_details.json's entry (description[:100]) and category_tool_details.json's description
    assert tools_info(record, deps) == {"Spaced": {
        "api_list": [{"name": "Spaced api", "description": " ", "required_parameters": [], "optional_parameters": []}],
        "description": " Padded tool \n"}}
    # check_task_solvable_by_function's list (main.py add_apis_into_api_pool: api_details['description'])
    assert authors_pool_listing([api])[0]["api_description"] == " "
    # get_tools_descriptions: {tool_name: tool_description}, sent as str() of the dict
    assert authors_describe_tools(deps, "C", ["Spaced"]) == str({"Spaced": " Padded tool \n"})
    assert authors_describe_tools(deps, "C", ["Nope"]) == "tool name Nope not found"
    assert authors_describe_tools(_deps(catalog, None), "C", ["Spaced"]) is None  # ours without prompts_from


def test_a_categorys_tools_in_the_clones_tool_data_order(tmp_path: Path) -> None:
    catalog = Catalog([Category("C", tools=tuple(parse_tool(_doc(n), category="C", source="t")
                                                 for n in ("Alpha", "Mid", "Zeta")))])
    root = write_fake_checkout(tmp_path / "AnyTool", "anytool")
    (root / "tool_data.json").write_text(json.dumps(
        {"C": {n: {"api_list_names": [f"{n} api"]} for n in ("Zeta", "Alpha", "Mid")}}))
    deps, order = _deps(catalog, root), ["Zeta", "Alpha", "Mid"]
    assert [t.name for t in authors_tools(deps, catalog.category("C"))] == order
    assert authors_list_tools(deps, "C") == str(order)  # get_tools_in_category, sent as str()
    record = new_agent_record("meta/C", "category", category="C")
    assert category_agent.first_message("Q", record, deps) == anytool_book(root).fill(
        "category_first", query="Q", tools=str(order))
    # the small-category shortcut hands the tools over in the same order (category_search → create_agent_tool_level)
    meta = new_agent_record("meta", "meta")
    ctx = CallContext(deps, "Q", "r", 0, 0, meta, [], [])
    create_agent_category_level(ctx, CategoryArgs(category_name="C"))
    assert ctx.children["meta/C/t1"]["tools"] == order
    # without prompts_from: the catalog's order
    assert [t.name for t in catalog.category("C").tools] == ["Alpha", "Mid", "Zeta"]


def test_without_tool_data_the_order_os_walk_meets_the_files(tmp_path: Path) -> None:
    folder = tmp_path / "tools" / "C"
    folder.mkdir(parents=True)
    names = [f"t{i}" for i in range(8)]
    for n in names:
        (folder / f"{n}.json").write_text(json.dumps(_doc(n)))
    listed = [f.removesuffix(".json") for f in os.listdir(folder)]  # extract_tool_database.py: os.walk's `files`
    if listed == sorted(listed):  # e.g. a file system that lists names sorted: this case cannot be told apart
        pytest.skip("the file system lists the folder sorted")
    catalog = Catalog(load_toolbench_dir(tmp_path / "tools"))
    assert [t.name for t in catalog.category("C").tools] == sorted(names)  # the catalog's order stays sorted
    deps = _deps(catalog, write_fake_checkout(tmp_path / "AnyTool", "anytool"))
    assert [t.name for t in authors_tools(deps, catalog.category("C"))] == listed
