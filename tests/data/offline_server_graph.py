"""A graph factory for `langgraph dev` in tests: AnyTool with the offline policy model on the builtin catalog."""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.config import AnyToolConfig
from langgraph_anytool.graphs.anytool import create_anytool_graph
from langgraph_anytool.offline import OfflinePolicyModel


def build_graph() -> Any:
    catalog = Catalog.builtin()
    return create_anytool_graph(catalog, OfflinePolicyModel(catalog=catalog), config=AnyToolConfig(execution="local"))


async def make_graph() -> Any:
    """Built in a thread: `langgraph dev` rejects blocking I/O (reading the catalog, the sandbox probe) on its loop."""
    return await asyncio.to_thread(build_graph)
