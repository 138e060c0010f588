"""Words of a request: content words, crude stemming, topic overlap (the parts of a multi-part request: `clauses`)."""

from __future__ import annotations

import re

from langchain_core.messages import BaseMessage

_STOPWORDS = frozenset((
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "of", "to", "in", "on", "at", "for", "from", "by",
    "with", "and", "or", "as", "it", "its", "this", "that", "these", "those", "what", "which", "who", "whom",
    "whose", "when", "where", "why", "how", "do", "does", "did", "can", "could", "would", "should", "will", "shall",
    "may", "might", "must", "i", "me", "my", "we", "our", "you", "your", "he", "she", "they", "them", "their",
    "there", "here", "please", "tell", "give", "show", "find", "get", "let", "know", "want", "need", "about",
    "into", "than", "then", "also", "any", "some", "all", "each", "much", "many", "more", "most", "if", "not", "no",
    "yes", "up", "down", "over", "out", "look", "far", "between",
))
_WORD = re.compile(r"[a-z0-9]+")


def content_words(text: str) -> set[str]:
    """Lower-case words of a text minus stop words (with a crude plural strip)."""
    out = set()
    for w in _WORD.findall(text.lower()):
        if w in _STOPWORDS or len(w) < 2:
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def stem_match(a: str, b: str) -> bool:
    """Crude stemming: equal, one a prefix (≥ 4 letters) of the other, or the same first 5 letters."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return (len(short) >= 4 and long_.startswith(short)) or (len(short) >= 5 and short[:5] == long_[:5])


def shares_topic(words: set[str], text: str) -> bool:
    """Whether any of `words` appears (crudely stemmed) among the content words of `text`."""
    other = content_words(text)
    return any(stem_match(w, o) for w in words for o in other)


def message_text(msg: BaseMessage) -> str:
    """A message's text (content blocks joined)."""
    if isinstance(msg.content, str):
        return msg.content
    return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in msg.content
                   if isinstance(b, str | dict))
