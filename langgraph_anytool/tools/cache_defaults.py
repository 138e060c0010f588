"""Where the CLI, the demo and Studio keep their on-disk response cache (on by default, OPPO's caching).

`ANYTOOL_CACHE_DIR` (default `$XDG_CACHE_HOME/langgraph-anytool/responses`, i.e. `~/.cache/...`) holds one SQLite
file per executor kind and catalog fingerprint, so simulated responses never answer a real (http) run and two
catalogs sharing API ids never share entries. `ANYTOOL_CACHE=off` (or `--no-cache`) turns the cache off.
Non-deterministic APIs (`Api.deterministic=False`: clock, randomness, sandboxed code) are never stored.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..sanitize.paths import safe_file_name, user_cache_dir

ENV_CACHE = "ANYTOOL_CACHE"
ENV_CACHE_DIR = "ANYTOOL_CACHE_DIR"
_OFF = frozenset({"0", "off", "no", "false", "none", "disabled"})


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$ANYTOOL_CACHE_DIR`, else `$XDG_CACHE_HOME/langgraph-anytool/responses` (`~/.cache` by default)."""
    return user_cache_dir("responses", ENV_CACHE_DIR, environ)


def cache_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """False when `ANYTOOL_CACHE` says off (0, off, no, false, none)."""
    env = os.environ if environ is None else environ
    return env.get(ENV_CACHE, "").strip().lower() not in _OFF


def default_cache_path(kind: str, catalog_fingerprint: str, *, enabled: bool = True,
                       environ: Mapping[str, str] | None = None) -> Path | None:
    """The cache file for an executor kind and a catalog, or None when caching is off."""
    if not enabled or not cache_enabled(environ):
        return None
    kind_name = safe_file_name(kind.lower(), fallback="default")
    catalog_name = safe_file_name(catalog_fingerprint[:32], fallback="catalog")
    return default_cache_dir(environ) / f"{kind_name}-{catalog_name}.sqlite"
