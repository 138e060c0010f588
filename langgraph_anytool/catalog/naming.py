"""Keys and model-facing function names: unique, ≤ 64 chars, `[a-zA-Z0-9_-]`, reversible."""

from __future__ import annotations

import hashlib
import re
import unicodedata

MAX_FUNCTION_NAME = 64
_NON_WORD = re.compile(r"[^a-z0-9]+")
_FUNC_OK = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def slugify(text: str, *, fallback: str = "x") -> str:
    """Lower-case ASCII `a-z0-9_` form of a display name (ToolBench's standardisation, made total)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NON_WORD.sub("_", ascii_text.lower()).strip("_")
    if not slug:
        # a name of only emoji or non-latin letters: keep it distinct with a short hash
        slug = f"{fallback}_{hashlib.sha1(text.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
    if slug[0].isdigit():  # ToolBench's standardize(): "111" → "get_111" (keeps ids equal across loaders)
        slug = f"get_{slug}"
    return slug


def is_valid_function_name(name: str) -> bool:
    return bool(_FUNC_OK.match(name))


def function_name(api_key: str, tool_key: str) -> str:
    """The preferred function name `<api>_for_<tool>`; shortened with a hash when too long."""
    name = f"{api_key}_for_{tool_key}"
    if len(name) <= MAX_FUNCTION_NAME:
        return name
    digest = hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    keep = MAX_FUNCTION_NAME - len(digest) - 1
    return f"{name[:keep].rstrip('_')}_{digest}"


class FunctionNamer:
    """Assigns unique function names to API ids and maps them back."""

    def __init__(self) -> None:
        self._by_name: dict[str, str] = {}
        self._by_id: dict[str, str] = {}

    def add(self, api_id: str, api_key: str, tool_key: str, category: str) -> str:
        name = function_name(api_key, tool_key)
        if name in self._by_name:
            # same api/tool key in two categories, or a hash clash: disambiguate by category
            name = function_name(f"{api_key}_{slugify(category)}", tool_key)
            n = 2
            while name in self._by_name:
                name = function_name(f"{api_key}_{n}", tool_key)
                n += 1
        self._by_name[name] = api_id
        self._by_id[api_id] = name
        return name

    def name_of(self, api_id: str) -> str:
        return self._by_id[api_id]

    def id_of(self, name: str) -> str | None:
        return self._by_name.get(name)
