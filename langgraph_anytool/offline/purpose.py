"""Whether an API serves a request's purpose: the request's action and object (its topic words and identifiers, the
words that are not values) against the API's own words (name, description, tool, category, enum values).

The judge asks this of the API(s) an answer came from, so that an answer from an API with another purpose (a
number spelled in words for "Compute the SHA-256 hash of hello") is not Solved merely because it repeats a value of
the request. Independent of argument extraction and of the catalog search (the solver's signals), so a wrong pick
of the solver is not confirmed by the same mistake.

Weights: a request word weighs its inverse document frequency over the catalog's APIs (a word every API has, such
as "number", says little about a purpose; "hash" says much). The head of a request part (before its first
argument-introducing preposition: "the SHA-256 hash" of "… of the word hello") names the purpose; words after it
count half, and only when some API of the catalog has them (an unknown word there is an argument: "hello"); an
unknown word in the head counts half (a purpose no API has, "weather" in a catalog without a weather API; or a verb
of the request, "leave" a tip).
An API serves a part when it covers `PURPOSE_SHARE` of the part's weight and no other API of the catalog covers
more than `PURPOSE_LEAD` times as much; and, among the APIs that pass both, its name shares a purpose word with the
part when another's does: an API's name says what it is for, its description and response fields also say what it
works on ("Next Public Holiday" returns a date and the days until it, but "What date is 45 days after …" names
"date", a word of "Add to Date", and nothing of the holiday API's name).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..catalog import Api, Catalog
from .mentions import loose, mentions_of
from .text import content_words, stem_match

PURPOSE_SHARE = 0.5  # the share of a request part's purpose weight an API must cover
PURPOSE_LEAD = 2.0  # an API covering less than 1/PURPOSE_LEAD of the best API's cover does not serve the part
TAIL_WEIGHT = 0.5  # words after the head
UNIT_TERM = "unit:"  # a unit mention as a term: any of its codes, loosely
# Request verbs that say "do it", not what: they name no purpose.
GENERIC = frozenset((
    "compute", "calculate", "calculation", "determine", "figure", "work", "return", "make", "provide", "say",
    "use", "using", "like", "help", "result", "answer", "value", "kind", "type", "thing", "way", "long", "exactly",
    "now", "today", "current", "currently", "right", "quick", "quickly", "used", "called", "named", "written",
    "known", "after", "before", "since", "until", "per", "via", "using", "worth",
))
# The preposition (or "word"/"text" naming the argument) that ends a request part's head.
_HEAD_END = re.compile(r"\b(?:of|for|in|from|to|into|between|on|at|with|by|after|before|since|until|per|using|"
                       r"via|about|as)\b", re.IGNORECASE)
_CONTAINER = frozenset(("list", "number", "count", "name", "set", "total", "amount", "sum", "share", "part"))


@dataclass(frozen=True)
class PurposeIndex:
    """The catalog's APIs as word sets (content words, and the loose forms of identifiers and enum values)."""

    words: dict[str, frozenset[str]]  # api id → words
    vocabulary: dict[str, frozenset[str]]  # word → ids of the APIs that have it
    names: dict[str, frozenset[str]] = field(default_factory=dict)  # api id → the purpose words of its name
    _having: dict[str, frozenset[str]] = field(default_factory=dict, repr=False, compare=False)  # memo of `having`

    @classmethod
    def of(cls, catalog: Catalog) -> PurposeIndex:
        words: dict[str, frozenset[str]] = {}
        names: dict[str, frozenset[str]] = {}
        vocab: dict[str, set[str]] = {}
        for api in catalog:
            found = api_words(api)
            words[api.id] = found
            names[api.id] = name_words(api.name)
            for w in found:
                vocab.setdefault(w, set()).add(api.id)
        return cls(words, {w: frozenset(ids) for w, ids in vocab.items()}, names)

    def named(self, api_id: str, terms: Iterable[str]) -> bool:
        """Whether the API's name has one of `terms` (crudely stemmed, or loosely the same identifier)."""
        name = self.names.get(api_id, frozenset())
        return any(t == w or stem_match(t, w) for t in terms for w in name)

    def having(self, term: str) -> frozenset[str]:
        """The ids of the APIs whose words match `term` (crudely stemmed, or loosely the same identifier)."""
        cached = self._having.get(term)
        if cached is None and term.startswith(UNIT_TERM):  # any of the unit's codes, as an exact word
            cached = self._having[term] = frozenset().union(
                *(self.vocabulary.get(code, frozenset()) for code in term.removeprefix(UNIT_TERM).split("|")))
        if cached is None:
            out: set[str] = set()
            for word, ids in self.vocabulary.items():
                if word == term or stem_match(term, word):
                    out |= ids
            cached = self._having[term] = frozenset(out)
        return cached


def _keys(response: object, depth: int = 0) -> list[str]:
    """The field names of a documented response (nested objects and lists of objects too, two levels deep)."""
    if depth > 2:
        return []
    if isinstance(response, dict):
        return [str(k) for k in response] + [k for v in response.values() for k in _keys(v, depth + 1)]
    if isinstance(response, list):
        return [k for v in response[:3] for k in _keys(v, depth + 1)]
    return []


def api_words(api: Api) -> frozenset[str]:
    """An API's purpose words: its name, description, tool name and documented response fields (what it returns);
    plus the loose forms of its identifiers and enum values ("sha256", "utf8"). Not its tool's description nor its
    category: they tell what the API's neighbours do (a number-words API's tool also writes Roman numerals; a hash
    API's category, Data Encoding, "encodes")."""
    fields = " ".join(_keys(api.template_response)).replace("_", " ")
    text = f"{api.name} {api.description} {api.tool_name} {fields}"
    found = set(content_words(text)) | {i.codes[0] for i in mentions_of(text).identifiers}
    for p in api.params:
        found |= {loose(str(v)) for v in p.enum if v is not None and loose(str(v))}
    return frozenset(found)


def name_words(name: str) -> frozenset[str]:
    """The purpose words of an API's name: its content words but generic ones, and its identifiers, loosely."""
    return frozenset((content_words(name) - GENERIC) | {i.codes[0] for i in mentions_of(name).identifiers})


def purpose_terms(clause: str) -> list[tuple[str, bool, bool]]:
    """(term, in the head, named) for a request part: its content words outside values, and its identifiers
    (loosely, always in the head: "SHA-256", "base64" name what is wanted); generic request verbs left out. Words
    of capitalised names are kept as `named` ("Fibonacci", "Roman"): they count only when some API has them (else
    they are arguments: "Paris")."""
    me = mentions_of(clause)
    values = [(m.start, m.end) for group in (me.dates, me.numbers, me.quoted, me.countries, me.units, me.currencies,
                                             me.zones, me.identifiers) for m in group]
    names = [(m.start, m.end) for m in me.names]
    found: list[tuple[int, str, bool]] = []
    for m in re.finditer(r"[A-Za-z0-9]+", clause):
        if not any(s <= m.start() < e for s, e in values):
            named = any(s <= m.start() < e for s, e in names)
            found += [(m.start(), w, named) for w in content_words(m.group(0)) if w not in GENERIC and not w.isdigit()]
    found.sort()
    head_end = _head_end(clause, [(pos, t) for pos, t, _ in found])
    terms: dict[str, tuple[bool, bool]] = {}
    for pos, term, named in found:
        head, was_named = terms.get(term, (False, True))
        terms[term] = (head or pos < head_end, was_named and named)
    for ident in me.identifiers:
        terms[ident.codes[0]] = (True, False)
    for _ in me.languages[:1]:  # "in French": an API about languages (a name's words are no purpose of their own)
        terms.setdefault("language", (False, False))
    for unit in me.units:  # a unit is wanted from an API that knows it (an enum value): "Fahrenheit" → "degF"
        terms[UNIT_TERM + "|".join(sorted({loose(c) for c in unit.codes if loose(c)}))] = (False, False)
    return [(t, head, named) for t, (head, named) in terms.items()]


def _head_end(clause: str, terms: list[tuple[int, str]]) -> int:
    """Where a request part's head ends: at its first argument-introducing preposition after a purpose term,
    unless the head so far names only a container ("the list of holidays", "the number of days": the purpose
    follows "of")."""
    for m in _HEAD_END.finditer(clause):
        before = {t for pos, t in terms if pos < m.start()}
        if before - _CONTAINER or (before and m.group(0).lower() != "of"):
            return m.start()
    return len(clause)


@dataclass(frozen=True)
class PurposeFit:
    """How much of a request part's purpose an API covers (`share`), and the best share of any catalog API."""

    share: float
    best: float
    missing: tuple[str, ...] = ()  # the head's terms the API lacks
    rival: str = ""  # an API serving the part whose name has a word of the part, when none of the given APIs' has

    @property
    def serves(self) -> bool:
        return self.share >= PURPOSE_SHARE and self.share * PURPOSE_LEAD >= self.best and not self.rival


def purpose_fit(index: PurposeIndex, apis: Iterable[Api], clause: str) -> PurposeFit | None:
    """How well the given APIs together serve a request part (None when the part names no purpose: values only)."""
    terms = purpose_terms(clause)
    n = max(1, len(index.words))
    weights: list[tuple[str, bool, float, frozenset[str]]] = []
    for term, head, named in terms:
        having = index.having(term)
        if not having and (named or not head):
            continue  # an unknown word after the head, or an unknown name, is an argument ("hello", "Paris")
        idf = math.log((n + 1) / (len(having) + 1)) + 0.1
        # an unknown word of the head may be a verb of the request ("leave" a tip) or a purpose no API has
        # ("weather"), and a name may be an example in some API's description ("Paris"): they count, but as a
        # word after the head does
        weights.append((term, head and not named, idf * (1.0 if head and having and not named else TAIL_WEIGHT),
                        having))
    total = sum(w for _, _, w, _ in weights)
    if total <= 0 or all(named for _, _, named in terms):
        return None  # values and names only ("How far is Paris from Berlin?"): no purpose word to check
    ids = {a.id for a in apis}
    share = sum(w for _, _, w, having in weights if having & ids) / total
    per_api: dict[str, float] = {}
    for _, _, w, having in weights:
        for api_id in having:
            per_api[api_id] = per_api.get(api_id, 0.0) + w
    best = max(per_api.values(), default=0.0) / total
    missing = tuple(t for t, head, _, having in weights if head and not having & ids)
    return PurposeFit(share, max(best, share), missing, _rival(index, ids, per_api, total, max(best, share),
                                                              [t for t, _, _, _ in weights]))


def _rival(index: PurposeIndex, ids: set[str], per_api: dict[str, float], total: float, best: float,
           terms: list[str]) -> str:
    """An API serving the part whose name has one of its terms, when none of the given APIs' names has any ("" if
    a given name has one, or no serving API's has): the given APIs then serve another purpose with the same words."""
    words = [t for t in terms if not t.startswith(UNIT_TERM)]
    if any(index.named(api_id, words) for api_id in ids):
        return ""
    serving = sorted((-w, api_id) for api_id, w in per_api.items()
                     if api_id not in ids and w / total >= PURPOSE_SHARE and w / total * PURPOSE_LEAD >= best)
    return next((api_id for _, api_id in serving if index.named(api_id, words)), "")
