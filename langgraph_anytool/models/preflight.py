"""The check of a batch's models before its first query: each distinct model answers one short request.

Resolving the models (`ModelSet`) already refuses a missing API key, an absent provider package and an unknown
provider (`ModelNotConfiguredError`). What resolving cannot see is whether the endpoint answers and takes the key:
`check_models` sends each distinct model's endpoint one request that spends no tokens — the model list of an
OpenAI-compatible endpoint (`GET {base_url}/models`: OpenAI, Groq, vLLM, llama.cpp, Ollama's `/v1`), or Ollama's
`GET /api/tags` — and raises `ModelCheckError` (one line naming the role, the model, the endpoint and the fault)
when the endpoint refuses the key (HTTP 401/403: kind `auth`), cannot be reached (`connection`) or does not answer
within `timeout` seconds (`timeout`). Any other answer (a 404 from a server without a model list, a 5xx, a 429)
shows the endpoint is there: the batch starts, and each query records what its own calls meet. A model without
such an endpoint (another provider's client, a scripted or stand-in model) is not sent anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .guard import classify, describe_error, model_secrets
from .profiles import model_name, unwrap

STOPPING_KINDS = ("auth", "connection", "timeout")  # the faults that stop a batch before its first query
SKIP_HINT = "pass --no-model-check to start without this check"


class ModelCheckError(ValueError):
    """A model of the run cannot answer (its key is refused, its endpoint unreachable); `kind` says which."""

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def _openai_client(model: Any) -> Any:
    """The `openai.OpenAI` client a chat model (or a binding of one) sends its requests with, if any."""
    for layer in unwrap(model):
        client = getattr(layer, "root_client", None)
        if client is not None and hasattr(client, "models") and hasattr(client, "with_options"):
            return client
    return None


def probe(model: Any, *, timeout: float) -> str | None:
    """Send `model`'s endpoint one request that spends no tokens; the endpoint it asked (None: nothing was sent).
    Raises what the client raised when the request failed with one of `STOPPING_KINDS` (or an unknown fault)."""
    from .endpoint import endpoint_of

    client = _openai_client(model)
    endpoint = endpoint_of(model)
    try:
        if client is not None:
            client.with_options(timeout=timeout, max_retries=0).models.list()
            return str(client.base_url)
        if endpoint is not None and endpoint.client == "ollama":
            import httpx

            httpx.get(f"{endpoint.root}/api/tags", timeout=timeout).raise_for_status()
            return endpoint.root
    except Exception as exc:
        if classify(exc) in (*STOPPING_KINDS, None):
            raise
        return str(client.base_url) if client is not None else (endpoint.root if endpoint is not None else None)
    return None


def check_models(models: Iterable[tuple[str, Any]], *, timeout: float = 15.0) -> list[str]:
    """Probe each distinct model of `(role, model)` pairs once (see the module's docstring); the endpoints asked.
    `ModelCheckError` at the first model whose key is refused or whose endpoint does not answer."""
    by_model: dict[int, tuple[list[str], Any]] = {}
    for role, model in models:
        by_model.setdefault(id(model), ([], model))[0].append(role)
    asked: list[str] = []
    for roles, model in by_model.values():
        try:
            where = probe(model, timeout=timeout)
        except Exception as exc:
            kind = classify(exc) or "connection"
            if kind not in STOPPING_KINDS:
                kind = "connection"
            name = model_name(model) or type(model).__name__
            what = {"auth": "refused the API key", "connection": "cannot be reached",
                    "timeout": f"did not answer within {timeout:g} s"}[kind]
            from .endpoint import endpoint_of

            endpoint = endpoint_of(model)
            at = f" at {endpoint.base_url}" if endpoint is not None else ""
            raise ModelCheckError(
                f"model check: the endpoint of model {name!r}{at} (role{'s' if len(roles) > 1 else ''} "
                f"{', '.join(roles)}) {what} ({kind}: {describe_error(exc, model_secrets(model), 200)}); no query was "
                f"run; {'set a valid API key' if kind == 'auth' else 'start the server or fix the base URL'}, or "
                f"{SKIP_HINT}", kind=kind) from None
        if where is not None:
            asked.append(where)
    return asked
