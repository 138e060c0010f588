"""The structured result of one API call, as the solver and reflection see it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from ..text import shorten


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
        head = shorten(text, max(0, max_chars - len(marker.format(cut=len(text)))), ellipsis="")  # at a word's end
        return head + marker.format(cut=len(text) - len(head))


_TRACEBACK = "Traceback (most recent call last)"
_TEXT_FAILURE = re.compile(r'"(?:ok|success)"\s*:\s*false|"timed_out"\s*:\s*true|"exit_code"\s*:\s*-?[1-9]')


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def reported_error(response: Any) -> str:
    """The failure an API's response reports although the call went through ("" when it reports none): `ok` or
    `success` false, a non-zero `exit_code`, `timed_out` true, a non-empty `error`, or a Python traceback — e.g. the
    code sandbox running a script that raised. Such an output answers nothing: the solver treats it as a failed
    call and the judge does not count it as a success."""
    if isinstance(response, Mapping):
        error = response.get("error")
        detail = error.strip() if isinstance(error, str) and error.strip() else ""
        stderr = response.get("stderr")
        if isinstance(stderr, str) and _TRACEBACK in stderr:
            detail = detail or _last_line(stderr)
        if response.get("timed_out") is True:
            return detail or "timed out"
        for key in ("ok", "success"):
            if response.get(key) is False:
                return detail or f"{key}: false"
        code = response.get("exit_code")
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            return detail or f"exit code {code}"
        return detail
    if isinstance(response, str) and _TRACEBACK in response:
        return _last_line(response) or "a Python traceback"
    return ""


def reported_error_in_text(text: str) -> str:
    """`reported_error` of an observation as the model saw it (`Observation.for_model` JSON, possibly cut)."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, Mapping):
        return reported_error(data.get("response"))
    found = _TEXT_FAILURE.search(text)
    if found:
        return found.group(0)
    return reported_error(text)
