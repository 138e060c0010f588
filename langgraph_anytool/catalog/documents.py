"""Search documents and query handling: the text that stands for an API, a tool or a category.

Each level has a rich document for BM25 (names, descriptions, category, parameters). APIs also have a short text
for dense embeddings (tool and API names, API description): it embeds several times faster and, fused with BM25,
ranks better than the embedding of the rich text. Tools and categories embed their rich documents.
Everything here is a pure function of catalog data or of the query text; nothing reads relevance labels.

Index-time expansion: a `DocumentRecipe` names what an API's two texts hold beyond the base ones, all of it taken
from the catalog (the tool's description, parameter names, the keys of the API's response template), built once
when the index is built and stored with it. The recipe's `id` is recorded in every index folder's ``meta.json``
and in a trained encoder's manifest: an index built with another recipe is rebuilt (one line says why), never
mixed with this one. `RECIPES` keeps every recipe an index or a trained encoder may name; `DEFAULT_RECIPE` is the
winner of `benchmarks/retrieval_table.py` (docs/benchmarks.md, "Retrieval quality").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .models import Api, Category, Tool

# Part of the index folders' names (`search.CatalogSearcher.index_path`, `bm25_path`): kept at "3" so that a folder
# built before recipes existed is found, read as recipe "3" and rebuilt with a line saying why.
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


_MAX_RESPONSE_KEYS = 30
_RESPONSE_DEPTH = 4


def response_keys(template: Any, limit: int = _MAX_RESPONSE_KEYS) -> list[str]:
    """The keys of a response template, humanized and lower-cased, first seen first, without repeats.

    ToolBench's ``template_response`` is a nested JSON shape (`{"date": "str", "line_up": [{"link": "str"}]}`);
    keys starting with `_` (`_list_length`) are the template's own notes and are skipped. Depth-bounded."""
    out: list[str] = []

    def walk(node: Any, depth: int) -> Iterator[str]:
        if depth > _RESPONSE_DEPTH:
            return
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, str) and not key.startswith("_"):
                    yield key
                yield from walk(value, depth + 1)
        elif isinstance(node, list):
            for value in node[:2]:
                yield from walk(value, depth + 1)

    for key in walk(template, 0):
        word = humanize(key).lower()
        if word and word not in out:
            out.append(word)
            if len(out) >= limit:
                break
    return out


def _first_words(text: str, n: int) -> str:
    words = text.split()
    return " ".join(words[:n])


@dataclass(frozen=True, slots=True)
class DocumentRecipe:
    """What an API's documents hold beyond the base texts (`api_document`, `api_dense_text`).

    `sparse`: sections added to the BM25 document (``"response_keys"``); `dense`: sections added to the embedded
    text (``"tool_description"``: its first `tool_words` words, ``"params"``: parameter names, ``"response_keys"``:
    the first `dense_keys` response keys). `sparse_tool_description`: whether the API's BM25 document repeats its
    tool's description (the tool level's BM25 document holds it either way, and an API's score adds its tool's).
    `id` names the recipe in index folders and trained encoders' manifests.
    """

    id: str
    sparse: tuple[str, ...] = ()
    dense: tuple[str, ...] = ()
    tool_words: int = 30
    dense_keys: int = 12
    sparse_tool_description: bool = True

    def __post_init__(self) -> None:
        unknown = sorted(set(self.sparse) - _SPARSE_SECTIONS) + sorted(set(self.dense) - _DENSE_SECTIONS)
        if unknown:
            raise ValueError(f"document recipe {self.id!r}: unknown section(s) {', '.join(unknown)}")

    def sparse_key(self) -> tuple[object, ...]:
        """Everything that shapes the BM25 documents (two recipes with equal keys index the same texts)."""
        return (tuple(sorted(self.sparse)),) + (() if self.sparse_tool_description else ("no tool description",))

    def dense_key(self) -> tuple[object, ...]:
        """Everything that shapes the embedded texts, and nothing else: a recipe that changes only the BM25 part
        keeps the dense index (its vectors would be the same)."""
        return (tuple(sorted(self.dense)), self.tool_words if "tool_description" in self.dense else None,
                self.dense_keys if "response_keys" in self.dense else None,
                PSEUDO_QUERY_TEMPLATES if "pseudo_queries" in self.dense else None)


_SPARSE_SECTIONS = frozenset({"response_keys"})
_DENSE_SECTIONS = frozenset({"tool_description", "params", "response_keys", "category", "pseudo_queries"})
# The templates of `pseudo_queries`: part of a recipe's `dense_key`, so that changing them rebuilds the dense index.
PSEUDO_QUERY_TEMPLATES = "1"


def _params_text(api: Api) -> str:
    bits = [f"{humanize(p.name)} ({p.description.strip()})" if p.description.strip() else humanize(p.name)
            for p in api.params]
    return ", ".join(bits)[:_MAX_PARAM_TEXT]


def api_dense_text(api: Api, tool_description: str = "", recipe: DocumentRecipe | None = None) -> str:
    """`Tool: API name. API description` (for embeddings), then the recipe's dense sections."""
    text = f"{humanize(api.tool_name)}: {humanize(api.name)}. {api.description.strip()}".strip()
    if recipe is None or not recipe.dense:
        return text
    parts = [text]
    if "tool_description" in recipe.dense and tool_description.strip():
        parts.append(_first_words(tool_description, recipe.tool_words))
    if "params" in recipe.dense and api.params:
        parts.append("Inputs: " + ", ".join(humanize(p.name).lower() for p in api.params) + ".")
    if "response_keys" in recipe.dense:
        keys = response_keys(api.template_response, recipe.dense_keys)
        if keys:
            parts.append("Returns: " + ", ".join(keys) + ".")
    if "category" in recipe.dense and api.category.strip():
        parts.append(f"Category: {humanize(api.category)}.")
    return " ".join(parts)


def _first_sentence(text: str, words: int) -> str:
    return _first_words(_SENTENCE_END.split(text.strip(), maxsplit=1)[0].strip().rstrip(".?!;"), words)


def pseudo_queries(api: Api) -> list[str]:
    """Requests an API answers, made from its own catalog fields by fixed templates (no model, no labels):

    - what it does, with its tool: `<first sentence of the description> with <tool>` (`<api name> with <tool>`
      when it has no description);
    - what it returns: `Get the <first 5 response keys> for a <first 2 parameter names>.`, when it has a template;
    - what it takes: `<Api name> by <first 3 parameter names>.`, when it has parameters;
    - where it sits: `<tool> <api name> (<category>)`.

    Deterministic: the same API gives the same texts, in this order, without repeats."""
    name = humanize(api.name).lower()
    tool = humanize(api.tool_name)
    params = [humanize(p.name).lower() for p in api.params]
    keys = response_keys(api.template_response, 8)
    what = _first_sentence(api.description, 25)
    out = [f"{what or name} with {tool}"]
    if keys:
        out.append(f"Get the {', '.join(keys[:5])}" + (f" for a {' and '.join(params[:2])}" if params else "") + ".")
    if params:
        out.append(f"{name[:1].upper()}{name[1:]} by {', '.join(params[:3])}.")
    out.append(f"{tool} {name} ({humanize(api.category)})")
    return list(dict.fromkeys(t for t in out if t.strip()))


def api_dense_texts(api: Api, tool_description: str = "", recipe: DocumentRecipe | None = None) -> list[str]:
    """Every text embedded for an API: `api_dense_text`, then the recipe's pseudo-queries (each its own vector;
    search ranks an API at its best one)."""
    text = api_dense_text(api, tool_description, recipe)
    if recipe is None or "pseudo_queries" not in recipe.dense:
        return [text]
    return list(dict.fromkeys([text, *pseudo_queries(api)]))


def api_document(api: Api, tool_description: str = "", recipe: DocumentRecipe | None = None) -> str:
    """Tool and API names first (they carry the most signal), then descriptions (the tool's unless the recipe leaves
    it out), category and parameters, then the recipe's sparse sections."""
    parts = [f"{humanize(api.tool_name)}: {humanize(api.name)}.", api.description.strip()]
    if tool_description.strip() and (recipe is None or recipe.sparse_tool_description):
        parts.append(f"Tool: {tool_description.strip()}")
    parts.append(f"Category: {api.category}.")
    params = _params_text(api)
    if params:
        parts.append(f"Params: {params}")
    if recipe is not None and "response_keys" in recipe.sparse:
        keys = response_keys(api.template_response)
        if keys:
            parts.append("Returns: " + ", ".join(keys))
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


# Every recipe an index folder or a trained encoder may name (never remove one: old trained folders name theirs).
# "3": the documents before recipes existed (DOCUMENT_VERSION 3).
RECIPES: dict[str, DocumentRecipe] = {r.id: r for r in (
    DocumentRecipe("3"),
    # BM25 documents + the response template's keys. On the tuning part of the split (folds 0 and 1, untrained
    # MiniLM, rrf_k 2, whole 1), Recall@10 / NDCG@5 84.7 / 73.8 → 85.5 / 74.1; adding the tool's description to the
    # embedded text instead lost (84.8 / 73.0), so the embedded text stays the short one (docs/benchmarks.md).
    DocumentRecipe("4-expanded", sparse=("response_keys",)),
    # 4-expanded + four template pseudo-queries per API (`pseudo_queries`), each its own vector, max-pooled per
    # API: measured, not the default (docs/benchmarks.md, "Retrieval quality").
    DocumentRecipe("5-pseudo", sparse=("response_keys",), dense=("pseudo_queries",)),
    # 4-expanded without the tool's description in each API's BM25 document (the tool level still indexes it, and an
    # API's score adds half its tool's): a long tool description made every API of the tool match its words alike,
    # pushing the API whose own text matches below its siblings. Embedded texts unchanged (the dense folder is
    # kept). Untrained MiniLM, rrf_k 2 / whole 1, Recall@10 / NDCG@5: tuning part (folds 0-1) 84.5 / 73.9 -> 85.6 /
    # 73.5, fold 2 86.7 / 73.2 -> 88.1 / 74.4, all 519 85.3 / 73.6 -> 86.4 / 73.8 (docs/benchmarks.md,
    # "Query-time levers (issue 37, round 3)").
    DocumentRecipe("6-lean", sparse=("response_keys",), sparse_tool_description=False),
)}
DEFAULT_RECIPE: DocumentRecipe = RECIPES["6-lean"]


def alike_recipes(recipe: DocumentRecipe, part: str) -> frozenset[str]:
    """The ids of the recipes (`RECIPES` and `recipe` itself) whose `part` ("sparse": the BM25 documents, "dense":
    the embedded texts) is `recipe`'s: an index folder built with any of them holds this recipe's index of that part
    and is kept."""
    key = recipe.sparse_key if part == "sparse" else recipe.dense_key
    return frozenset({recipe.id} | {r.id for r in RECIPES.values()
                                    if (r.sparse_key if part == "sparse" else r.dense_key)() == key()})


def recipe_named(name: str | None) -> DocumentRecipe:
    """The recipe of that id (None: `DEFAULT_RECIPE`); `ValueError` naming the known ones otherwise."""
    if name is None:
        return DEFAULT_RECIPE
    try:
        return RECIPES[name]
    except KeyError:
        raise ValueError(f"unknown document recipe {str(name)[:40]!r} (known: {', '.join(RECIPES)})") from None
