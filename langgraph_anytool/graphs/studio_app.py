"""The HTTP app `langgraph dev` serves beside the Studio graph (langgraph.json, "http": {"app": ...}).

It adds no route: its lifespan builds the Studio graph (its catalog and search index too) while the server starts,
in a thread (`langgraph dev` rejects blocking calls on its event loop). Every request then finds the graph built:
without it the first request would wait for the build and the server would log "Slow graph load" for it. A build
that fails (a bad `ANYTOOL_CATALOG`, say) is logged in one line and the server starts anyway: the factory raises the
same error on each request, where Studio shows it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette

from langgraph_anytool.graphs.studio import make_graph

logger = logging.getLogger(__name__)


@asynccontextmanager
async def build_at_start(_app: Starlette) -> AsyncIterator[None]:
    """Build the Studio graph before the server answers its first request."""
    try:
        await make_graph()
    except Exception as exc:  # reported again by every request that needs the graph
        logger.error("the AnyTool graph could not be built: %s", exc)
    yield


app = Starlette(lifespan=build_at_start)
