"""The HTTP app `langgraph dev` serves beside the Studio graph (langgraph.json, "http": {"app": ...}).

It adds one route, `GET /anytool/model`: which model the served graph runs (`served_models`), so that a client
that sends it batches labels its records with the model (`anytool eval run --server`). Its lifespan builds the Studio graph (its catalog and search index too) while the server starts,
in a thread (`langgraph dev` rejects blocking calls on its event loop). Every request then finds the graph built:
without it the first request would wait for the build and the server would log "Slow graph load" for it. A build
that fails (a bad `ANYTOOL_CATALOG`, say) is logged in one line and the server starts anyway: the factory raises the
same error on each request, where Studio shows it.

Its middleware (`ContextCheck`, which the server applies to its own routes too) checks the `context` of every run,
cron and assistant a request creates as the library does (`check_context`): the server keeps only the context
fields its schema lists and drops the others without a word, so `{"no_such_field": 1}` would run as if unset. A
refused context is answered 422 with the library's one-line `ConfigError` (the unknown field, the nearest known
name, the field list), before any run starts.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from langgraph_anytool.config import ConfigError
from langgraph_anytool.context import check_context
from langgraph_anytool.graphs.studio import MODEL_ROUTE, make_graph, served_models

logger = logging.getLogger(__name__)

# the server's routes whose body may carry a run's (or an assistant's) context
CONTEXT_ROUTES = ("/runs", "/assistants", "/crons")
MAX_CHECKED_BODY = 32 * 1024 * 1024  # a larger body is passed on unread (the server has its own limits)


@asynccontextmanager
async def build_at_start(_app: Starlette) -> AsyncIterator[None]:
    """Build the Studio graph before the server answers its first request."""
    try:
        await make_graph()
    except Exception as exc:  # reported again by every request that needs the graph
        logger.error("the AnyTool graph could not be built: %s", exc)
    yield


def context_error(body: bytes) -> str | None:
    """The one-line error of the first context in a request body (a payload, or a list of them) that the library
    refuses, or None."""
    try:
        data = json.loads(body)
    except ValueError:
        return None  # not JSON: the server answers it
    for payload in data if isinstance(data, list) else [data]:
        context = payload.get("context") if isinstance(payload, Mapping) else None
        if isinstance(context, Mapping) and context:
            try:
                check_context(dict(context))
            except ConfigError as exc:
                return str(exc)
    return None


class ContextCheck:
    """ASGI middleware: refuse a request whose context the library would refuse (see the module's docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in ("POST", "PUT", "PATCH") \
                or not any(part in scope.get("path", "") for part in CONTEXT_ROUTES):
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        size, more = 0, True
        while more:
            message = await receive()
            messages.append(message)
            size += len(message.get("body", b""))
            more = message["type"] == "http.request" and message.get("more_body", False) and size <= MAX_CHECKED_BODY
        error = context_error(b"".join(m.get("body", b"") for m in messages)) if size <= MAX_CHECKED_BODY else None
        if error is not None:
            await JSONResponse({"detail": error}, status_code=422)(scope, receive, send)
            return

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


async def model_info(_request: Request) -> JSONResponse:
    """Which model the served graph runs (a run's context may name another for that run)."""
    return JSONResponse(served_models())


app = Starlette(routes=[Route(MODEL_ROUTE, model_info)], lifespan=build_at_start,
                middleware=[Middleware(ContextCheck)])
