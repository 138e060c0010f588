"""Secrets never reach a report page: every string of a record (keys included) passes through the project's one
masking rule, `models.guard.mask_secrets` (anything shaped like an API key or bearer token, and the given secret
values in every spelling `tools/executors/secret_masking` knows), before any HTML is built."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ...models.guard import mask_secrets

# environment variables whose values are secrets (OPENAI_API_KEY, GROQ_API_KEY, HF_TOKEN, DB_PASSWORD, ...)
SECRET_ENV = re.compile(r"(?i)(key|token|secret|password|passwd|credential)")
MIN_SECRET_CHARS = 8  # shorter values would mask ordinary words


def env_secrets(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values of the environment's secret-named variables (at least `MIN_SECRET_CHARS` long)."""
    env = os.environ if environ is None else environ
    return tuple(sorted({v for k, v in env.items() if SECRET_ENV.search(k) and len(v) >= MIN_SECRET_CHARS}))


def scrub(value: Any, secrets: Iterable[str] = ()) -> Any:
    """`value` (JSON-like data) with every string masked; other leaves unchanged."""
    known = tuple(secrets)
    memo: dict[str, str] = {}

    def one(s: str) -> str:
        if s not in memo:
            memo[s] = mask_secrets(s, known)
        return memo[s]

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return one(v)
        if isinstance(v, Mapping):
            return {one(str(k)): walk(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [walk(x) for x in v]
        return v

    return walk(value)
