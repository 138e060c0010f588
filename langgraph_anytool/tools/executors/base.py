"""The executor interface: one API call with already-validated arguments → Observation."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

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
