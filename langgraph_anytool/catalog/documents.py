"""Search documents and query handling: the text that stands for an API, a tool or a category.

Each level has a rich document for BM25 (names, descriptions, category, parameters). APIs also have a short text
for dense embeddings (tool and API names, API description): it embeds several times faster and, fused with BM25,
ranks better than the embedding of the rich text. Tools and categories embed their rich documents.
Everything here is a pure function of catalog data or of the query text; nothing reads relevance labels.
`DOCUMENT_VERSION` is part of the on-disk index key, so changing a document format re-embeds.
"""

from __future__ import annotations

import re

from .models import Api, Category, Tool

DOCUMENT_VERSION = "3"

_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")
_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE_END = re.compile(r"(?<=[.?!;])\s+")
_MAX_PARAM_TEXT = 400

# A standard English stop-word list plus request filler ("please", "also", "need", ...).
_STOPWORD_TEXT = """a about above after again against all am an and any are as at be because been before being below between both
    but by can could did do does doing down during each few for from further had has have having he her here hers
    herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves also please additionally let us like want
    need know im"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())

_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("ies", "y"),
    ("sses", "ss"),
    ("ing", ""),
    ("ed", ""),
    ("es", ""),
    ("s", ""),
)


def humanize(name: str) -> str:
    """Split camelCase, digits and `_`/`-` into words: `GetRelatedPeople_v2` → `Get Related People v 2`."""
    return " ".join(_CAMEL.sub(" ", name).replace("_", " ").replace("-", " ").split())


def stem(word: str) -> str:
    """A light suffix stripper (plural, -ing, -ed), enough to match `videos`/`video`, `searching`/`search`."""
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            return word[: len(word) - len(suffix)] + repl
    return word


def tokenize(text: str) -> list[str]:
    """BM25 tokens: camelCase split, lower-case alphanumerics, stop words removed, lightly stemmed."""
    words = _WORD.findall(_CAMEL.sub(" ", text).lower())
    return [stem(w) for w in words if w not in STOPWORDS]


def split_query(query: str) -> list[str]:
    """The sentences of a request (each usually asks for one thing); the whole query when it has one sentence."""
    parts = [p.strip() for p in _SENTENCE_END.split(query.strip())]
    parts = [p for p in parts if len(_WORD.findall(p.lower())) >= 2]
    return parts if len(parts) > 1 else [query.strip()]


def _params_text(api: Api) -> str:
    bits = [f"{humanize(p.name)} ({p.description.strip()})" if p.description.strip() else humanize(p.name)
            for p in api.params]
    return ", ".join(bits)[:_MAX_PARAM_TEXT]


def api_dense_text(api: Api) -> str:
    """`Tool: API name. API description` (for embeddings)."""
    return f"{humanize(api.tool_name)}: {humanize(api.name)}. {api.description.strip()}".strip()


def api_document(api: Api, tool_description: str = "") -> str:
    """Tool and API names first (they carry the most signal), then descriptions, category and parameters."""
    parts = [f"{humanize(api.tool_name)}: {humanize(api.name)}.", api.description.strip()]
    if tool_description.strip():
        parts.append(f"Tool: {tool_description.strip()}")
    parts.append(f"Category: {api.category}.")
    params = _params_text(api)
    if params:
        parts.append(f"Params: {params}")
    return " ".join(p for p in parts if p)


def tool_document(tool: Tool) -> str:
    """Tool name and description, then its APIs' names and descriptions."""
    apis = "; ".join(f"{humanize(a.name)}: {a.description.strip()}" if a.description.strip() else humanize(a.name)
                     for a in tool.apis)
    return f"{humanize(tool.name)}. {tool.description.strip()} Category: {tool.category}. APIs: {apis}"


def category_document(category: Category) -> str:
    """Category name and description, then its tools' names."""
    tools = ", ".join(humanize(t.name) for t in category.tools)
    desc = f" {category.description.strip()}" if category.description.strip() else ""
    return f"{humanize(category.name)}.{desc} Tools: {tools}"
