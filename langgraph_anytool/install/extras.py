"""How to install one of the package's extras here: the `pip install` line an error message gives.

The package is not on PyPI, so a `pip install` of its name with an extra would find nothing. pip records where an
installed distribution came from (`direct_url.json`, PEP 610): a checkout (editable or not), a wheel file or a git
URL; the hint names that source with the extra, and otherwise says where the Quickstart explains the choices.
"""

from __future__ import annotations

import json
from importlib import metadata
from urllib.parse import unquote, urlparse

DISTRIBUTION = "langgraph-anytool"
INSTALL_DOCS = "docs/quickstart.md, 'Install into your own environment'"


def install_source(dist: str = DISTRIBUTION) -> str:
    """Where pip installed `dist` from, as pip takes it back: a local path (`-e PATH` for an editable checkout),
    `git+URL@commit`, or "" when unknown (a registry or wheelhouse install, or no record)."""
    # the first record of `dist` that says where it came from: a checkout's own `*.egg-info` (which an editable
    # install leaves there) comes first on the path when the checkout is the current folder, and has no such record
    raw = next((text for found in metadata.distributions(name=dist)
                if (text := found.read_text("direct_url.json"))), None)
    if raw is None:
        return ""
    try:
        info = json.loads(raw or "")
    except ValueError:
        return ""
    url = str(info.get("url", "")) if isinstance(info, dict) else ""
    vcs = info.get("vcs_info") if isinstance(info, dict) else None
    if isinstance(vcs, dict) and url:
        commit = str(vcs.get("commit_id", ""))
        return f"{vcs.get('vcs', 'git')}+{url}" + (f"@{commit}" if commit else "")
    if url.startswith("file://"):
        editable = isinstance(info.get("dir_info"), dict) and info["dir_info"].get("editable") is True
        return ("-e " if editable else "") + unquote(urlparse(url).path)
    return ""


def install_hint(extra: str, dist: str = DISTRIBUTION) -> str:
    """The one-line `pip install` command adding `extra` to this installation."""
    source = install_source(dist)
    if source.startswith(("git+", "hg+", "svn+", "bzr+")):
        return f"pip install '{dist}[{extra}] @ {source}'"
    if source.startswith("-e "):
        return f"pip install -e '{source[3:]}[{extra}]'"
    if source:
        return f"pip install '{source}[{extra}]'"
    return (f"pip install '<your {dist} checkout or wheel>[{extra}]' ({dist} is not on PyPI; see {INSTALL_DOCS})")
