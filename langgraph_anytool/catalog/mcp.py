"""Catalogs from MCP servers, through `langchain-mcp-adapters` (the `mcp` extra).

One category (default "MCP"), one catalog tool per server (named after its connection key), one API per MCP tool.
Each API is bound to a `LangChainToolExecutor` over the adapter's tool, which opens a session per call, so calls
go through the pipeline's validation and cache like any other API. MCP execution errors (`isError`) become ERROR
observations (the adapter is asked to raise them rather than hand them back as text).

Every step of a session has a deadline, `timeout` seconds: loading a server (starting it, the initialise handshake
and the tools listing) and each call (a session of its own: start, initialise, call). A server that misses it is
named in a `CatalogError` (loading) or a TIMEOUT observation (a call), and its process is killed. The deadlines are
anyio cancel scopes, which cancel every await inside them until they are left: with `asyncio.wait_for`, whose
cancellation is delivered once, the transport's clean-up then waited for ever on a server that ignores the end of
its input and SIGTERM. Loading includes closing the listing session: a server must also shut down in time.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from ..install.extras import install_hint
from .errors import CatalogError
from .models import Category, Tool

if TYPE_CHECKING:
    from .models import Executor

C = TypeVar("C")  # a Catalog (class given by Catalog.from_mcp: mcp.py does not import catalog.py)



def step_deadline(timeout: object) -> float:
    """`timeout` as a number of seconds; ValueError when it is not a positive finite number (there is no MCP step
    without a deadline)."""
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < math.inf:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}: every step of an MCP "
                         "session (start, initialise, list, call) has a deadline")
    return float(timeout)


async def aload_mcp_categories(
    connections: Mapping[str, Mapping[str, Any]], *, category: str, timeout: float,
) -> tuple[list[Category], dict[str, Executor]]:
    """The category (one tool per server) and the executors bound to its APIs."""
    deadline = step_deadline(timeout)
    try:
        from langchain_mcp_adapters.client import MultiServerMCPClient
    except ImportError as exc:
        raise ImportError(f"Catalog.from_mcp needs langchain-mcp-adapters: {install_hint('mcp')}") from exc
    from .lc_tools import bind_langchain_tools

    if not connections:
        raise CatalogError("no MCP connections given", source="mcp")
    for server, conn in connections.items():
        if not isinstance(conn, Mapping) or "transport" not in conn:
            raise CatalogError("an MCP connection must be a mapping with a 'transport' key "
                               "(stdio | streamable_http | sse | websocket)", source=f"mcp:{server}", field="transport")
    client = MultiServerMCPClient({k: dict(v) for k, v in connections.items()},  # type: ignore[misc]
                                  handle_tool_errors=False)
    tools: list[Tool] = []
    executors: dict[str, Executor] = {}
    for server in connections:
        try:
            with anyio.fail_after(deadline):  # level-triggered: the transport's clean-up cannot wait for ever either
                server_tools = await client.get_tools(server_name=server)
        except TimeoutError:
            raise CatalogError(f"MCP server {server!r} did not start, initialise and list its tools within "
                               f"{deadline:g} s (timeout=)", source=f"mcp:{server}") from None
        except Exception as exc:
            raise CatalogError(f"cannot list the tools of MCP server {server!r}: {type(exc).__name__}: {exc}",
                               source=f"mcp:{server}") from exc
        if not server_tools:
            raise CatalogError(f"MCP server {server!r} offers no tools", source=f"mcp:{server}")
        cats, bound = bind_langchain_tools(server_tools, category=category, tool_name=server, timeout=deadline)
        tools.extend(cats[0].tools)
        executors.update(bound)
    return [Category(name=category, description=f"tools of MCP servers: {', '.join(connections)}",
                     tools=tuple(tools))], executors


async def aload_mcp_catalog(cls: Callable[..., C], connections: Mapping[str, Mapping[str, Any]], *, category: str,
                            timeout: float, **kwargs: Any) -> C:
    categories, executors = await aload_mcp_categories(connections, category=category, timeout=timeout)
    return cls(categories, name="mcp", executors=executors, **kwargs)


def load_mcp_catalog(cls: Callable[..., C], connections: Mapping[str, Mapping[str, Any]], *, category: str,
                     timeout: float, **kwargs: Any) -> C:
    """Blocking `aload_mcp_catalog`; from inside a running loop it runs in a worker thread."""
    coro = aload_mcp_catalog(cls, connections, category=category, timeout=timeout, **kwargs)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()
