"""The HTTP app `langgraph dev` serves beside the Studio graph (langgraph.json, "http": {"app": ...}).

It adds no route: its lifespan builds the Studio graph (its catalog and search index too) while the server starts,
in a thread (`langgraph dev` rejects blocking calls on its event loop). Every request then finds the graph built:
without it the first request would wait for the build and the server would log "Slow graph load" for it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette

from langgraph_anytool.graphs.studio import make_graph


@asynccontextmanager
async def _build_at_start(_app: Starlette) -> AsyncIterator[None]:
    await make_graph()
    yield


app = Starlette(lifespan=_build_at_start)
