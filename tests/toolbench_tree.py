"""A small ToolBench tools folder written for a test: `<root>/<category>/<tool>.json`, the layout the loaders read."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

GET_API = {"method": "GET", "required_parameters": [], "optional_parameters": []}


def write_toolbench_tools(root: Path, layout: Mapping[str, Mapping[str, Sequence[tuple[str, str]]]], *,
                          tool_description: Callable[[str], str] = lambda tool: f"{tool} data.") -> Path:
    """Write `layout` (category → tool → (API name, API description) pairs, GET APIs without parameters) under
    `root`, one `<tool lowercased>.json` per tool; returns `root`."""
    for category, tools in layout.items():
        folder = root / category
        folder.mkdir(parents=True)
        for tool, apis in tools.items():
            doc = {"tool_name": tool, "tool_description": tool_description(tool),
                   "api_list": [{"name": name, "description": text, **GET_API} for name, text in apis]}
            (folder / f"{tool.lower()}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root
