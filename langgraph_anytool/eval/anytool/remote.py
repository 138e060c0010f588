"""Scale-out: run each query as a run on a LangGraph server (`langgraph dev`, LangGraph Platform or a
self-hosted deployment serving this project's `langgraph.json`) through `langgraph-sdk`."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping
from typing import Any

from ...text import shorten

_NS = uuid.UUID("5b0d6f4e-6a55-4c52-9a1e-7d3c0e8f2a11")


class RemoteSolver:
    """Sends one query at a time to a LangGraph server; the final state values come back like a local run's."""

    def __init__(self, url: str, *, assistant: str = "anytool", api_key: str | None = None) -> None:
        from langgraph_sdk import get_client

        self.url = url
        self.assistant = assistant
        self.client = get_client(url=url, api_key=api_key)

    async def served_models(self) -> dict[str, Any] | None:
        """Which model the server's graph runs, as its HTTP app says (`graphs.studio.served_models`); None when the
        server does not say (another graph, or an older version)."""
        from ...graphs.studio import MODEL_ROUTE

        try:
            info = await self.client.http.get(MODEL_ROUTE)
        except Exception:
            return None
        return dict(info) if isinstance(info, Mapping) and "model" in info else None

    async def solve(self, query: str, *, api_ids: list[str] | None, thread_key: str,
                    settings: Mapping[str, Any]) -> dict[str, Any]:
        """One run on a thread named after the query and run settings; `settings` travel as the run's context."""
        thread_id = str(uuid.uuid5(_NS, thread_key))
        await self.client.threads.create(thread_id=thread_id, if_exists="do_nothing",
                                         metadata={"anytool_thread": thread_key})
        inputs: dict[str, Any] = {"query": query} if api_ids is None else {"query": query, "api_ids": api_ids}
        run: dict[str, Any] = {}

        def created(meta: Any) -> None:
            run["id"] = meta.get("run_id") if isinstance(meta, Mapping) else getattr(meta, "run_id", None)

        try:
            out = await self.client.runs.wait(thread_id, self.assistant, input=inputs,
                                              context=dict(settings) or None, on_run_created=created,
                                              multitask_strategy="interrupt")
        except BaseException:
            if run.get("id"):  # timeout or crash of this side: do not leave the run going on the server
                with contextlib.suppress(Exception):
                    await self.client.runs.cancel(thread_id, run["id"])
            raise
        if isinstance(out, Mapping) and "__error__" in out:
            err = out["__error__"]
            raise RuntimeError(f"server run failed: {err.get('error', '')}: {err.get('message', err)}"
                               if isinstance(err, Mapping) else f"server run failed: {err}")
        if not isinstance(out, Mapping):
            raise RuntimeError(f"unexpected server reply: {shorten(str(out), 200)}")
        return dict(out)
