"""MkDocs hook: ship the Mermaid script with the site, so that its diagrams are drawn offline (issue 29 point 8).

Material for MkDocs draws ```mermaid blocks with the `mermaid` it finds on the page, and fetches one from a CDN
(unpkg) at view time only when there is none. This hook adds the npm package's `dist/mermaid.min.js` (pinned
below, 2.9 MB: not committed) to the site as `assets/javascripts/mermaid.min.js`, which `mkdocs.yml` loads as
`extra_javascript`. The file comes from a cache (`$ANYTOOL_DOCS_CACHE`, default
`~/.cache/langgraph-anytool/docs`); on a miss, from the npm registry through `npm pack`, checked against the
registry's integrity hash, then cached.

Without the cache and without npm (an offline machine that never built the site), the site has no diagram offline:
the build says so as a WARNING, so `mkdocs build --strict` (the `strict: true` of mkdocs.yml, `make test`) fails,
and a plain `mkdocs build`/`mkdocs serve` goes on without the file (its diagrams then come from the CDN where there
is a network). With `CI=true` it is an error even without strict mode: CI must ship the script. The warning says
how to fill the cache.

    python scripts/mkdocs_mermaid.py     # fetch into the cache now (prints the cached file's path)
"""

from __future__ import annotations

import base64
import hashlib
import io
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from langgraph_anytool.sanitize.paths import user_cache_dir
from langgraph_anytool.sanitize.writes import atomic_write

VERSION = "11.12.3"  # Material 9.x expects mermaid 11 (it would fetch unpkg.com/mermaid@11 otherwise)
# `npm view mermaid@11.12.3 dist.integrity`, and the sha256 of the file taken from that tarball
INTEGRITY = "sha512-wN5ZSgJQIC+CHJut9xaKWsknLxaFBwCPwPkGTSUYrTiHORWvpT8RxGk849HPnpUAQ+/9BPRqYb80jTpearrHzQ=="
SCRIPT_SHA256 = "71dc54e481779b526de5e615c2eb00c99fa5acb75da9c5524d02e333d2fda89a"
MEMBER = "package/dist/mermaid.min.js"
SITE_PATH = "assets/javascripts/mermaid.min.js"  # keep in step with extra_javascript in mkdocs.yml

log = logging.getLogger("mkdocs.hooks.mermaid")


class MermaidUnavailable(RuntimeError):
    """Neither the cache nor npm gave the script."""


def cache_dir() -> Path:
    return user_cache_dir("docs", "ANYTOOL_DOCS_CACHE")


def cached_script() -> Path:
    return cache_dir() / f"mermaid-{VERSION}.min.js"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(timeout: float = 300) -> Path:
    """The cached script, fetched with `npm pack` on a miss (or a cached file that does not match its hash)."""
    target = cached_script()
    if target.is_file() and _sha256(target) == SCRIPT_SHA256:
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise MermaidUnavailable(f"no cached {target.name} in {target.parent} and no npm to fetch mermaid@{VERSION}")
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([npm, "pack", f"mermaid@{VERSION}", "--pack-destination", tmp, "--silent"],
                              capture_output=True, text=True, timeout=timeout, cwd=tmp)
        tarballs = list(Path(tmp).glob("mermaid-*.tgz"))
        if done.returncode != 0 or len(tarballs) != 1:
            last = (done.stderr.strip().splitlines() or ["no tarball"])[-1]
            raise MermaidUnavailable(f"npm pack mermaid@{VERSION} failed: {last}")
        data = tarballs[0].read_bytes()
    algorithm, _, expected = INTEGRITY.partition("-")
    if base64.b64encode(hashlib.new(algorithm, data).digest()).decode() != expected:
        raise MermaidUnavailable(f"mermaid@{VERSION} from npm does not match its integrity hash {INTEGRITY}")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        member = tar.extractfile(MEMBER)
        if member is None:
            raise MermaidUnavailable(f"mermaid@{VERSION}'s tarball has no {MEMBER}")
        script = member.read()
    if hashlib.sha256(script).hexdigest() != SCRIPT_SHA256:
        raise MermaidUnavailable(f"{MEMBER} of mermaid@{VERSION} does not match its sha256 {SCRIPT_SHA256}")
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, script, mode=0o644)  # a public script, not a secret
    return target


def on_files(files: Any, config: Any) -> Any:
    """Add the script to the site's files (MkDocs hook)."""
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import File

    try:
        script = fetch()
    except (MermaidUnavailable, OSError, subprocess.TimeoutExpired) as exc:
        if os.environ.get("CI", "").lower() == "true":
            raise PluginError(f"mermaid: {exc}") from None
        log.warning("mermaid: %s: the site would draw no diagram offline (they would load mermaid from its CDN when "
                    "viewed); fill the cache with `python scripts/mkdocs_mermaid.py` where npm reaches its registry, "
                    "or copy mermaid-%s.min.js (sha256 %s) into %s", exc, VERSION, SCRIPT_SHA256, cache_dir())
        return files
    files.append(File.generated(config, SITE_PATH, abs_src_path=str(script)))
    return files


if __name__ == "__main__":
    try:
        print(fetch())
    except MermaidUnavailable as exc:
        sys.exit(f"mermaid: {exc}")
