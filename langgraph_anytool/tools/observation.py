"""The structured result of one API call, as the solver and reflection see it."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    """Outcome classes that matter to the solver and to reflection."""

    OK = "ok"
    # our schema check (tools/validation.py) refused the arguments and nothing was sent: a content fault of the
    # model (the solver counts the turn as malformed)
    INVALID_ARGUMENTS = "invalid_arguments"
    # the API received the call and rejected a value (a builtin's ValueError, HTTP 400 / 422, a simulated or virtual
    # server's "invalid parameter"): an API error observation like any other, which the model may correct
    REJECTED = "rejected"
    NOT_FOUND = "not_found"
    UNAUTHORIZED = "unauthorized"  # also: not subscribed, forbidden
    RATE_LIMITED = "rate_limited"
    TIMEOUT = "timeout"
    SERVER_ERROR = "server_error"
    ERROR = "error"  # anything else (a local callable raised, malformed response, ...)


@dataclass(frozen=True, slots=True)
class Observation:
    """One call's outcome. Never raised: every failure is an Observation with a non-ok status."""

    api_id: str
    status: Status
    content: Any = None
    error: str = ""
    cached: bool = False
    simulated: bool = False
    latency_ms: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = self.status.value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Observation:
        return cls(**{**d, "status": Status(d["status"])})

    def for_model(self, max_chars: int = 2048) -> str:
        """Compact JSON for the model, truncated with a marker saying how much was cut.

        Fields come in the order status, cached, simulated, error, response, so truncation cuts the
        response first and never the flags.
        """
        body: dict[str, Any] = {"status": self.status.value}
        if self.cached:
            body["cached"] = True
        if self.simulated:
            body["simulated"] = True
        if self.error:
            body["error"] = self.error
        if self.content is not None:
            body["response"] = self.content
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str)
        if len(text) <= max_chars:
            return text
        marker = f"... [truncated {{cut}} of {len(text)} characters]"
        keep = max(0, max_chars - len(marker.format(cut=len(text))))
        return text[:keep] + marker.format(cut=len(text) - keep)
