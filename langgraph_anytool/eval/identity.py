"""The identity of an evaluator model: what must match for a cached verdict to be reused.

A verdict depends on the model, on the endpoint that serves it (the same model name on two servers — a local vLLM
and a hosted API, or two quantisations — gives different verdicts) and on the sampling settings. The identity holds
the chat model's class, its model name, its endpoint's base URL (credentials and query string removed) and its
sampling settings. It never holds an API key: only the fields named here are read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..models.profiles import model_name, unwrap

# Request settings that change what the model answers (LangChain field names across providers).
SAMPLING_FIELDS: tuple[str, ...] = (
    "temperature", "top_p", "top_k", "n", "seed", "max_tokens", "max_completion_tokens", "max_output_tokens",
    "num_predict", "frequency_penalty", "presence_penalty", "repeat_penalty", "repetition_penalty", "min_p", "stop",
    "stop_sequences", "reasoning_effort", "reasoning", "thinking", "verbosity", "logit_bias", "response_format")
# Where chat model classes keep their endpoint (the client's own base URL first: it includes env defaults).
_URL_FIELDS: tuple[str, ...] = ("openai_api_base", "base_url", "anthropic_api_url", "api_base", "endpoint",
                                "azure_endpoint", "endpoint_url")


def clean_url(url: str) -> str:
    """`url` without user info, query string or fragment (where a key could sit), and without a trailing slash."""
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def _base_url(layer: Any) -> str:
    client = getattr(layer, "root_client", None)
    url = getattr(client, "base_url", None) if client is not None else None
    if url:
        return clean_url(str(url))
    for attr in _URL_FIELDS:
        value = getattr(layer, attr, None)
        if isinstance(value, str) and value.strip():
            return clean_url(value)
    return ""


def _plain(value: Any) -> Any:
    """A JSON-safe copy of a setting (objects such as a response-format class become their name)."""
    try:
        json.dumps(value)
    except TypeError:
        return getattr(value, "__name__", type(value).__name__)
    return value


def evaluator_identity(model: Any) -> dict[str, Any]:
    """{"class", "model", "base_url", "sampling"} of a chat model (or of the model a binding wraps).

    `sampling` holds the `SAMPLING_FIELDS` the model sets (not None), also those given through `model_kwargs` or
    `extra_body` (vLLM's `top_k`, `repetition_penalty`, ...); `bind(...)` keyword arguments of a binding override
    the model's. Nothing else is read from those mappings. A string (e.g. the offline label) is its
    own identity."""
    if isinstance(model, str):
        return {"class": "label", "model": model, "base_url": "", "sampling": {}}
    layers = list(unwrap(model))
    base = next((x for x in reversed(layers) if model_name(x) or _base_url(x)), layers[-1] if layers else model)
    sampling: dict[str, Any] = {}
    for layer in reversed(layers):
        sources = [getattr(layer, name, None) for name in ("model_kwargs", "extra_body", "kwargs")]
        for name in SAMPLING_FIELDS:
            value = getattr(layer, name, None) if not isinstance(getattr(type(layer), name, None), property) else None
            if value is not None and not callable(value):
                sampling[name] = _plain(value)
            for src in sources:
                if isinstance(src, Mapping) and src.get(name) is not None:
                    sampling[name] = _plain(src[name])
    return {"class": type(base).__name__, "model": model_name(model), "base_url": _base_url(base),
            "sampling": dict(sorted(sampling.items()))}


def evaluator_key(model: Any) -> str:
    """The identity as one canonical string (the evaluator part of a cache key)."""
    return json.dumps(evaluator_identity(model), sort_keys=True, ensure_ascii=False)
