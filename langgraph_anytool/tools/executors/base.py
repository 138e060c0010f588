"""The executor interface: one API call with already-validated arguments → Observation."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import weakref
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from ...catalog.models import Api
from ..observation import Observation


@runtime_checkable
class Executor(Protocol):
    """Runs a call. Must not raise for call failures: return an Observation with a non-ok status.

    `simulated` on the returned Observation must be True for any executor that does not call the real API.
    """

    name: str

    async def aexecute(self, api: Api, arguments: dict[str, Any]) -> Observation: ...

    async def aclose(self) -> None: ...


S = TypeVar("S")


def _cut_utf8(text: str, limit: int) -> str:
    """The longest beginning of `text` whose UTF-8 encoding has at most `limit` bytes (reads at most `limit` chars)."""
    return text[:limit].encode("utf-8", "replace")[:limit].decode("utf-8", "ignore")


def cap_observation(obs: Observation, limit: int) -> Observation:
    """`obs` with its content cut to `limit` bytes of UTF-8 (compact JSON for structures) when it is larger.

    The same cap as the network executors' `max_response_bytes`, for executors whose output does not come over a
    capped socket (local callables, LangChain and MCP tools, simulators). A cut content becomes a string ending in
    a marker and `meta["truncated"]` is set. The check reads at most `limit` + 1 characters of JSON.
    """
    content = obs.content
    if content is None or isinstance(content, (bool, int, float)):
        return obs
    if isinstance(content, str):
        kept = _cut_utf8(content, limit)
        if len(kept) == len(content):
            return obs
    else:
        parts: list[str] = []
        size = 0
        for chunk in json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).iterencode(content):
            parts.append(chunk)
            size += len(chunk)
            if size > limit:
                break
        if size <= limit and len("".join(parts).encode("utf-8", "replace")) <= limit:
            return obs
        kept = _cut_utf8("".join(parts), limit)
    marker = f"... [response truncated: kept the first {len(kept.encode('utf-8', 'replace')):,} bytes]"
    return dataclasses.replace(obs, content=kept + marker, meta={**obs.meta, "truncated": True})


class PerLoop(Generic[S]):
    """One state object (clients, semaphores) per running event loop: asyncio objects must not cross loops."""

    def __init__(self, factory: Callable[[], S]) -> None:
        self._factory = factory
        self._states: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, S] = weakref.WeakKeyDictionary()

    def get(self) -> S:
        """The running loop's state, created on first use."""
        loop = asyncio.get_running_loop()
        state = self._states.get(loop)
        if state is None:
            state = self._states[loop] = self._factory()
        return state

    def take(self) -> S | None:
        """For closing: the running loop's state (None outside a loop); states of other loops are dropped."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._states.clear()
            return None
        state = self._states.pop(loop, None)
        self._states.clear()
        return state
