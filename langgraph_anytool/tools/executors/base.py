"""The executor interface: one API call with already-validated arguments → Observation."""

from __future__ import annotations

import asyncio
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
