"""Secrets never reach a report page: every string of a record (keys included) passes through the project's one
masking rule, `models.guard.mask_secrets` (anything shaped like an API key or bearer token, and the given secret
values in every spelling `tools/executors/secret_masking` knows), before any HTML is built."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ...models.guard import mask_secrets
from ...tools.executors.secret_masking import MIN_EXACT

# environment variables whose values are secrets (OPENAI_API_KEY, GROQ_API_KEY, HF_TOKEN, DB_PASSWORD, ...)
SECRET_ENV = re.compile(r"(?i)(key|token|secret|password|passwd|credential)")
MIN_SECRET_CHARS = 8  # shorter values would mask ordinary words
MIN_MASKED_CHARS = MIN_EXACT  # a shorter string is left as it is


def env_secrets(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values of the environment's secret-named variables (at least `MIN_SECRET_CHARS` long)."""
    env = os.environ if environ is None else environ
    return tuple(sorted({v for k, v in env.items() if SECRET_ENV.search(k) and len(v) >= MIN_SECRET_CHARS}))


class Scrubber:
    """Masks every string of JSON-like data (keys included); remembers each string it masked, so the texts that
    recur across the runs of a batch (prompts, tool names, field names) are masked once."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = tuple(secrets)
        self._memo: dict[str, str] = {}

    def text(self, s: str) -> str:
        if len(s) < MIN_MASKED_CHARS:  # too short to hold a secret (`secret_masking.MIN_EXACT`) or a key's shape
            return s
        out = self._memo.get(s)
        if out is None:
            out = self._memo[s] = mask_secrets(s, self.secrets)
        return out

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(str(k)): self(x) for k, x in value.items()}
        if isinstance(value, list | tuple):
            return [self(x) for x in value]
        return value


def scrub(value: Any, secrets: Iterable[str] = ()) -> Any:
    """`value` (JSON-like data) with every string masked; other leaves unchanged."""
    return Scrubber(secrets)(value)
