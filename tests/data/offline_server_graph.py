"""A graph factory for `langgraph dev` in tests: AnyTool with the offline policy model on the builtin catalog."""

from __future__ import annotations

from typing import Any

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.config import AnyToolConfig
from langgraph_anytool.graphs.anytool import create_anytool_graph
from langgraph_anytool.offline import OfflinePolicyModel


def make_graph() -> Any:
    catalog = Catalog.builtin()
    return create_anytool_graph(catalog, OfflinePolicyModel(catalog=catalog), config=AnyToolConfig(execution="local"))
