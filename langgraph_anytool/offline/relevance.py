"""How well an API fits one part of a request: catalog search rank, arguments the part gives, values it uses,
topic words; plus the knobs every role's policy shares (`Heuristics`)."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..catalog import Api, Catalog
from .arguments import extract
from .mentions import topic_words
from .purpose import PurposeIndex
from .text import content_words, shares_topic

MEMO_LIMIT = 20_000  # memoised search hits / relevance values per instance


@dataclass
class Heuristics:
    """The catalog, the policy's knobs, and memoised (pure) search hits and relevance values.

    `relevance_ratio`: an API fits a request part when its relevance reaches this share of the best;
    `solver_ratio`: the solver also tries APIs a little below that (× relevance_ratio);
    `max_failures`: failed calls per request part before it is given up."""

    catalog: Catalog
    max_categories: int = 3
    max_tools_per_agent: int = 5
    max_apis_per_agent: int = 4
    search_depth: int = 30
    relevance_ratio: float = 0.8
    solver_ratio: float = 0.85
    max_failures: int = 3
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _memo: dict[tuple[str, ...], Any] = field(default_factory=dict, repr=False, compare=False)

    def _remember(self, key: tuple[str, ...], value: Any) -> None:
        with self._lock:
            if len(self._memo) >= MEMO_LIMIT:
                self._memo.clear()
            self._memo[key] = value

    def hits(self, text: str) -> list[Any]:
        """Catalog search hits for a text (memoised: the search is deterministic)."""
        with self._lock:
            cached = self._memo.get(("hits", text))
        if cached is None:
            cached = list(self.catalog.search(text, k=min(len(self.catalog), self.search_depth)))
            self._remember(("hits", text), cached)
        return list(cached)

    def purpose_index(self) -> PurposeIndex:
        """The catalog's APIs as purpose words (`purpose.PurposeIndex`; memoised)."""
        with self._lock:
            cached = self._memo.get(("purpose-index",))
        if cached is None:
            cached = PurposeIndex.of(self.catalog)
            self._remember(("purpose-index",), cached)
        return cached

    def relevance(self, api: Api, clause: str) -> float:
        """How well an API fits one request part: its search score relative to the part's best hit, plus the
        share of its required parameters the part gives, plus the share of the part's values it uses, plus a
        little for words its name shares with the part."""
        key = ("rel", api.id, clause)
        with self._lock:
            cached = self._memo.get(key)
        if cached is not None:
            return float(cached)
        hits = self.hits(clause)
        top = max((float(h.score) for h in hits), default=0.0)
        search = next((float(h.score) / top for h in hits if h.api_id == api.id), 0.0) if top > 0 else 0.0
        ex = extract(api, clause)
        overlap = len(content_words(clause) & content_words(api.name))
        value = search + 1.5 * ex.fit + ex.coverage + 0.25 * min(overlap, 2)
        self._remember(key, value)
        return value

    def ranked_apis(self, clause: str, apis: Iterable[Api] | None = None) -> list[tuple[float, Api]]:
        """(relevance, API), best first: the given APIs, or the part's top search hits."""
        pool = list(apis) if apis is not None else [self.catalog.api(h.api_id) for h in self.hits(clause)]
        scored = [(self.relevance(a, clause), i, a) for i, a in enumerate(pool)]
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [(r, a) for r, _, a in scored]

    @staticmethod
    def on_topic(api: Api, clause: str) -> bool:
        """Whether the API's text shares a topic word with the part (words that are not values such as
        numbers, dates, places or units); parts made of values only accept any API."""
        words = topic_words(clause)
        return not words or shares_topic(words, f"{api.name} {api.tool_name} {api.category} {api.description}")

    def best_relevance(self, clause: str, among: Iterable[Api] | None = None) -> float:
        """The relevance of the best on-topic API for a request part: among the catalog's top search hits, or
        among `among`."""
        return next((r for r, a in self.ranked_apis(clause, among) if self.on_topic(a, clause)), 0.0)

    def relevant(self, clause: str, apis: Iterable[Api], ratio: float | None = None, *,
                 relative_to_given: bool = False) -> list[Api]:
        """The given on-topic APIs whose relevance reaches `ratio` × the best for the part (the catalog's best,
        or with `relative_to_given` the best of the given APIs), best first."""
        given = list(apis)
        floor = (self.relevance_ratio if ratio is None else ratio) * self.best_relevance(
            clause, given if relative_to_given else None)
        return [a for r, a in self.ranked_apis(clause, given) if r > 0 and r >= floor and self.on_topic(a, clause)]
