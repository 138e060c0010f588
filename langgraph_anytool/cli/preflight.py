"""Checks and executor choice before a run: fail fast when the chosen execution cannot call the catalog's APIs."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..catalog.models import Api

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..tools.pipeline import ApiExecutor

EXECUTION_FIX = ("use --execution template (offline: responses simulated from the documented templates), "
                 "--execution llm (a model plays the APIs) or --execution virtual (a StableToolBench-compatible "
                 "server: --virtual-url or $ANYTOOL_VIRTUAL_URL)")


class ExecutionError(ValueError):
    """The execution chosen for a run cannot work with its catalog; the message says what to pass instead."""


def has_url(catalog: Catalog, api: Api) -> bool:
    """True when the HTTP executor can build an absolute URL for the API (an absolute path or a tool base URL)."""
    if api.path.startswith(("http://", "https://")):
        return True
    try:
        return bool(catalog.tool(api.category, api.tool_key).base_url)
    except KeyError:
        return False


def urlless_apis(catalog: Catalog) -> list[Api]:
    """APIs an `auto` run would send over HTTP (no bound executor, not builtin) but that have no URL."""
    if catalog.name == "builtin":
        return []
    return [a for a in catalog.unbound_apis() if not has_url(catalog, a)]


def check_execution(catalog: Catalog, kind: str) -> str:
    """Raise `ExecutionError` when `auto` would call no API at all; return a warning (or "") when only some lack URLs."""
    if kind not in ("auto", "http"):
        return ""
    unbound = [] if catalog.name == "builtin" else catalog.unbound_apis()
    missing = urlless_apis(catalog)
    if unbound and len(missing) == len(unbound):
        raise ExecutionError(f"catalog {catalog.name!r} has no URL for any of its {len(missing)} APIs (ToolBench and "
                             f"query-file catalogs carry none), so --execution {kind} (HTTP) cannot call them; "
                             + EXECUTION_FIX)
    if missing:
        return (f"warning: {len(missing)} of {len(unbound)} APIs have no URL and will fail over HTTP "
                f"(e.g. {missing[0].id}); {EXECUTION_FIX}")
    return ""


def build_executor(catalog: Catalog, kind: str, *, model: Any = None, virtual_url: str | None = None,
                   max_observation_chars: int = 2048, persistent_cache: bool = False) -> ApiExecutor:
    """The run's executor: `virtual` needs a server URL, `llm` a chat model (not the offline stand-in);
    `persistent_cache`: the on-disk response cache in the user cache dir (see tools/cache_defaults.py)."""
    from ..tools.cache_defaults import default_cache_path
    from ..tools.pipeline import ApiExecutor

    options: dict[str, Any] = {"cache_path": default_cache_path(kind, catalog.fingerprint(), enabled=persistent_cache)}
    if kind == "virtual":
        url = virtual_url or os.environ.get("ANYTOOL_VIRTUAL_URL", "").strip()
        if not url:
            raise ExecutionError("--execution virtual needs the server's URL: pass --virtual-url URL or set "
                                 "ANYTOOL_VIRTUAL_URL")
        options["url"] = url
    elif kind == "llm":
        from ..models.llm import init_model
        from .labels import is_stand_in

        if model is None or is_stand_in(model):
            raise ExecutionError("--execution llm needs a real chat model to play the APIs: pass --model "
                                 "provider:model or set ANYTOOL_MODEL (the offline stand-in cannot)")
        options["model"] = model if not isinstance(model, str) else init_model(model)
    return ApiExecutor.for_catalog(catalog, kind=kind, max_observation_chars=max_observation_chars, **options)
