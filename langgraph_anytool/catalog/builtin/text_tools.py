"""Text utilities: statistics, readability, case and slug transforms, regex with a time limit, similarity."""

from __future__ import annotations

import difflib
import itertools
import math
import random
import re
import secrets
import string
import unicodedata
import uuid
from collections import Counter
from types import MappingProxyType
from typing import Any

from ..naming import slugify as _slug_key
from ._common import require_range
from ._registry import ARRAY, BOOLEAN, ENUM, INTEGER, NUMBER, STRING, ApiSpec, CategorySpec, P, ToolSpec

MAX_TEXT = 200_000
REGEX_TIMEOUT_S = 1.0
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[\"'“(\[]?[A-Z0-9À-ÖØ-Þ])")
_STOPWORDS = frozenset((
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at", "be",
    "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do",
    "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having",
    "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it",
    "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on",
    "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so",
    "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these",
    "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what",
    "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
    "yourself", "yourselves"
))


def _text(value: Any, name: str = "text", *, allow_empty: bool = False) -> str:
    s = value if isinstance(value, str) else str(value)
    if len(s) > MAX_TEXT:
        raise ValueError(f"{name} is longer than {MAX_TEXT} characters")
    if not allow_empty and not s.strip():
        raise ValueError(f"{name} must not be empty")
    return s


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def _syllables(word: str) -> int:
    w = re.sub(r"[^a-z]", "", word.lower())
    if not w:
        return 0
    groups = re.findall(r"[aeiouy]+", w)
    count = len(groups)
    if w.endswith("e") and not w.endswith(("le", "ee")) and count > 1:
        count -= 1
    return max(1, count)


# ------------------------------------------------------------------------------ analyzer
def word_count(text: str) -> dict[str, Any]:
    """Words, characters, sentences, paragraphs and estimated reading time."""
    t = _text(text, allow_empty=True)
    words = _words(t)
    paragraphs = [p for p in re.split(r"\n\s*\n", t) if p.strip()]
    return {"words": len(words), "characters": len(t), "characters_no_spaces": len(re.sub(r"\s", "", t)),
            "sentences": len(_sentences(t)), "paragraphs": len(paragraphs),
            "unique_words": len({w.lower() for w in words}),
            "reading_time_minutes": round(len(words) / 200, 2)}


def readability(text: str) -> dict[str, Any]:
    """Flesch reading ease and Flesch-Kincaid grade level of English text."""
    t = _text(text)
    words = _words(t)
    if not words:
        raise ValueError("text has no words")
    sentences = max(1, len(_sentences(t)))
    syllables = sum(_syllables(w) for w in words)
    wps, spw = len(words) / sentences, syllables / len(words)
    ease = 206.835 - 1.015 * wps - 84.6 * spw
    grade = 0.39 * wps + 11.8 * spw - 15.59
    level = ("very easy" if ease >= 90 else "easy" if ease >= 80 else "fairly easy" if ease >= 70 else
             "standard" if ease >= 60 else "fairly difficult" if ease >= 50 else "difficult" if ease >= 30 else
             "very difficult")
    return {"flesch_reading_ease": round(ease, 2), "flesch_kincaid_grade": round(grade, 2), "level": level,
            "words": len(words), "sentences": sentences, "syllables": syllables}


def keyword_frequency(text: str, top_n: int = 10, ignore_stopwords: bool = True) -> dict[str, Any]:
    """Most frequent words (case-insensitive), optionally without English stop words."""
    require_range(top_n, "top_n", 1, 500)
    words = [w.lower() for w in _words(_text(text))]
    if ignore_stopwords:
        words = [w for w in words if w not in _STOPWORDS]
    total = len(words) or 1
    return {"total_words": len(words), "keywords": [{"word": w, "count": c, "share": round(c / total, 6)}
                                                    for w, c in Counter(words).most_common(top_n)]}


def character_frequency(text: str, case_sensitive: bool = False, letters_only: bool = True) -> dict[str, Any]:
    """How often each character occurs."""
    t = _text(text)
    if not case_sensitive:
        t = t.lower()
    chars = [c for c in t if c.isalpha()] if letters_only else [c for c in t if not c.isspace()]
    return {"total": len(chars), "characters": [{"char": c, "count": n} for c, n in Counter(chars).most_common()]}


def split_sentences(text: str) -> dict[str, Any]:
    """The sentences of a text."""
    sentences = _sentences(_text(text))
    return {"count": len(sentences), "sentences": sentences}


# ------------------------------------------------------------------------------ transformer
def _tokens(text: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [t for t in re.split(r"[^0-9A-Za-zÀ-ÖØ-öø-ÿ]+", spaced) if t]


def change_case(text: str, case: str) -> dict[str, Any]:
    """Rewrite text in upper, lower, title, sentence, snake, camel, pascal, kebab or constant case."""
    t = _text(text)
    tokens = _tokens(t)
    conv = {
        "upper": lambda: t.upper(),
        "lower": lambda: t.lower(),
        "title": lambda: string.capwords(t),
        "sentence": lambda: t[:1].upper() + t[1:].lower(),
        "snake": lambda: "_".join(w.lower() for w in tokens),
        "kebab": lambda: "-".join(w.lower() for w in tokens),
        "constant": lambda: "_".join(w.upper() for w in tokens),
        "camel": lambda: "".join(w.lower() if i == 0 else w.capitalize() for i, w in enumerate(tokens)),
        "pascal": lambda: "".join(w.capitalize() for w in tokens),
    }
    return {"case": case, "result": conv[case]()}


def slugify_text(text: str, separator: str = "-", max_length: int = 80) -> dict[str, Any]:
    """URL slug of a text: ASCII, lower case, words joined by a separator."""
    if separator not in ("-", "_", "."):
        raise ValueError("separator must be '-', '_' or '.'")
    require_range(max_length, "max_length", 1, 500)
    t = _text(text)
    ascii_text = unicodedata.normalize("NFKD", t).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", separator, ascii_text.lower()).strip(separator)
    if len(slug) > max_length:
        slug = slug[:max_length].rsplit(separator, 1)[0] or slug[:max_length]
    return {"text": t, "slug": slug, "identifier": _slug_key(t)}


def reverse_text(text: str, mode: str = "characters") -> dict[str, Any]:
    """Reverse the characters, or the order of the words, of a text."""
    t = _text(text)
    result = " ".join(reversed(t.split())) if mode == "words" else t[::-1]
    return {"mode": mode, "result": result}


def normalize_text(text: str, remove_accents: bool = False, collapse_whitespace: bool = True) -> dict[str, Any]:
    """Unicode-normalise (NFC), optionally strip accents and collapse runs of whitespace."""
    t = unicodedata.normalize("NFC", _text(text, allow_empty=True))
    if remove_accents:
        t = "".join(c for c in unicodedata.normalize("NFKD", t) if not unicodedata.combining(c))
    if collapse_whitespace:
        t = " ".join(t.split())
    return {"result": t, "length": len(t)}


def truncate_text(text: str, max_length: int, ellipsis: str = "…", whole_words: bool = True) -> dict[str, Any]:
    """Shorten text to at most max_length characters (ellipsis included)."""
    t = _text(text)
    require_range(max_length, "max_length", 1, MAX_TEXT)
    if len(t) <= max_length:
        return {"result": t, "truncated": False, "length": len(t)}
    room = max(0, max_length - len(ellipsis))
    cut = t[:room]
    if whole_words and " " in cut and not t[room:room + 1].isspace():
        cut = cut.rsplit(" ", 1)[0]
    out = (cut.rstrip() + ellipsis)[:max_length]
    return {"result": out, "truncated": True, "length": len(out)}


def palindrome_check(text: str) -> dict[str, Any]:
    """Whether text reads the same backwards (ignoring case, spaces and punctuation)."""
    t = _text(text)
    core = [c.lower() for c in unicodedata.normalize("NFKD", t) if c.isalnum()]
    return {"text": t, "normalized": "".join(core), "is_palindrome": bool(core) and core == core[::-1]}


# ------------------------------------------------------------------------------ regex (time-limited)
def _compile(pattern: str, ignore_case: bool, multiline: bool) -> Any:
    import regex

    if len(pattern) > 2000:
        raise ValueError("pattern is longer than 2000 characters")
    flags = (regex.IGNORECASE if ignore_case else 0) | (regex.MULTILINE if multiline else 0)
    try:
        return regex.compile(pattern, flags | regex.VERSION0)
    except regex.error as exc:
        raise ValueError(f"invalid regular expression: {exc}") from None


def _timed(func: Any, *args: Any, limit: int | None = None, **kwargs: Any) -> Any:
    """Call a `regex` method with the time limit; iterators are consumed (up to `limit` items) inside it."""
    try:
        result = func(*args, timeout=REGEX_TIMEOUT_S, **kwargs)
        if limit is not None:
            return list(itertools.islice(result, limit))
        return result
    except TimeoutError:
        raise ValueError(f"the regular expression took longer than {REGEX_TIMEOUT_S}s (catastrophic "
                         "backtracking?) and was stopped") from None


def regex_find_all(pattern: str, text: str, ignore_case: bool = False, multiline: bool = False,
                   max_matches: int = 100) -> dict[str, Any]:
    """All matches of a regular expression with positions and groups (1 s time limit)."""
    require_range(max_matches, "max_matches", 1, 10000)
    rx = _compile(pattern, ignore_case, multiline)
    matches = [{"match": m.group(0), "start": m.start(), "end": m.end(),
                "groups": [g if g is not None else "" for g in m.groups()],
                "named_groups": {k: v or "" for k, v in m.groupdict().items()}}
               for m in _timed(rx.finditer, _text(text, allow_empty=True), limit=max_matches)]
    return {"pattern": pattern, "count": len(matches), "matches": matches}


def regex_replace(pattern: str, replacement: str, text: str, ignore_case: bool = False,
                  count: int = 0) -> dict[str, Any]:
    """Replace matches of a regular expression (\\1 or \\g<name> refer to groups; 1 s time limit)."""
    require_range(count, "count", 0, 1_000_000)
    rx = _compile(pattern, ignore_case, False)
    try:
        result, n = _timed(rx.subn, replacement, _text(text, allow_empty=True), count=count)
    except (IndexError, KeyError) as exc:
        raise ValueError(f"bad group reference in replacement: {exc}") from None
    except Exception as exc:  # regex.error for bad escapes in the replacement
        if type(exc).__name__ == "error":
            raise ValueError(f"invalid replacement: {exc}") from None
        raise
    return {"result": result, "replacements": n}


def regex_split(pattern: str, text: str, max_split: int = 0) -> dict[str, Any]:
    """Split text on a regular expression (1 s time limit)."""
    require_range(max_split, "max_split", 0, 100_000)
    rx = _compile(pattern, False, False)
    parts = _timed(rx.split, _text(text, allow_empty=True), maxsplit=max_split)
    return {"count": len(parts), "parts": [p if p is not None else "" for p in parts]}


def validate_regex(pattern: str) -> dict[str, Any]:
    """Whether a pattern compiles, with its number of groups and group names, or the error."""
    try:
        rx = _compile(pattern, False, False)
    except ValueError as exc:
        return {"valid": False, "groups": 0, "group_names": [], "error": str(exc)}
    return {"valid": True, "groups": rx.groups, "group_names": sorted(rx.groupindex), "error": ""}


_EXTRACTORS = MappingProxyType({
    "email": r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}", "url": r"https?://[^\s<>\"')\]]+",
    "phone": r"\+?\d[\d\s().-]{6,}\d", "number": r"[-+]?\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?", "hashtag": r"#\w+",
    "mention": r"@\w+", "date": r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b",
    "ipv4": r"\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b",
})


def extract_patterns(text: str, kind: str) -> dict[str, Any]:
    """Extract e-mail addresses, URLs, phone numbers, numbers, hashtags, mentions, dates or IPv4 addresses."""
    found = re.findall(_EXTRACTORS[kind], _text(text))
    unique = list(dict.fromkeys(s.strip() for s in found))
    return {"kind": kind, "count": len(unique), "items": unique}


# ------------------------------------------------------------------------------ similarity
def levenshtein(a: str, b: str) -> dict[str, Any]:
    """Edit distance (insertions, deletions, substitutions) between two strings."""
    s, t = _text(a, "a", allow_empty=True), _text(b, "b", allow_empty=True)
    if len(s) * len(t) > 25_000_000:
        raise ValueError("strings are too long for an edit-distance computation")
    prev = list(range(len(t) + 1))
    for i, cs in enumerate(s, 1):
        cur = [i]
        for j, ct in enumerate(t, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (cs != ct)))
        prev = cur
    dist = prev[-1]
    longest = max(len(s), len(t)) or 1
    return {"distance": dist, "similarity": round(1 - dist / longest, 6)}


def similarity_ratio(a: str, b: str) -> dict[str, Any]:
    """Sequence similarity (difflib ratio) and word-set Jaccard similarity of two texts."""
    s, t = _text(a, "a", allow_empty=True), _text(b, "b", allow_empty=True)
    wa, wb = {w.lower() for w in _words(s)}, {w.lower() for w in _words(t)}
    jac = len(wa & wb) / len(wa | wb) if wa | wb else 1.0
    return {"sequence_ratio": round(difflib.SequenceMatcher(None, s, t).ratio(), 6), "word_jaccard": round(jac, 6),
            "common_words": sorted(wa & wb)}


def unified_diff(a: str, b: str, context_lines: int = 3) -> dict[str, Any]:
    """Line-by-line unified diff between two texts."""
    require_range(context_lines, "context_lines", 0, 100)
    la = _text(a, "a", allow_empty=True).splitlines()
    lb = _text(b, "b", allow_empty=True).splitlines()
    lines = list(difflib.unified_diff(la, lb, "a", "b", n=context_lines, lineterm=""))
    added = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
    removed = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
    return {"identical": la == lb, "added": added, "removed": removed, "diff": "\n".join(lines)}


def closest_matches(word: str, candidates: list[Any], n: int = 3, cutoff: float = 0.6) -> dict[str, Any]:
    """The candidates most similar to a word (spelling suggestions)."""
    require_range(n, "n", 1, 100)
    require_range(cutoff, "cutoff", 0, 1)
    if not isinstance(candidates, list) or not candidates:
        raise ValueError("candidates must be a non-empty list")
    pool = [str(c) for c in candidates]
    hits = difflib.get_close_matches(str(word), pool, n=n, cutoff=cutoff)
    return {"word": word, "matches": [{"candidate": h, "score": round(difflib.SequenceMatcher(None, word, h).ratio(),
                                                                        6)} for h in hits]}


# ------------------------------------------------------------------------------ generators
_LOREM = (
    "lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do", "eiusmod", "tempor",
    "incididunt", "ut", "labore", "et", "dolore", "magna", "aliqua", "enim", "ad", "minim", "veniam", "quis",
    "nostrud", "exercitation", "ullamco", "laboris", "nisi", "aliquip", "ex", "ea", "commodo", "consequat", "duis",
    "aute", "irure", "in", "reprehenderit", "voluptate", "velit", "esse", "cillum", "fugiat", "nulla", "pariatur",
    "excepteur", "sint", "occaecat", "cupidatat", "non", "proident", "sunt", "culpa", "qui", "officia", "deserunt",
    "mollit", "anim", "id", "est", "laborum"
)


def generate_password(length: int = 16, digits: bool = True, symbols: bool = True, seed: int = -1) -> dict[str, Any]:
    """A random password (cryptographically random unless a seed ≥ 0 asks for a reproducible one)."""
    require_range(length, "length", 4, 256)
    pools = [string.ascii_lowercase, string.ascii_uppercase] + ([string.digits] if digits else []) + (
        ["!@#$%^&*()-_=+[]{};:,.?"] if symbols else [])
    rng: Any = random.Random(seed) if seed >= 0 else secrets.SystemRandom()
    chars = [rng.choice(p) for p in pools] + [rng.choice("".join(pools)) for _ in range(length - len(pools))]
    rng.shuffle(chars)
    alphabet = sum(len(p) for p in pools)
    return {"password": "".join(chars), "length": length, "entropy_bits": round(length * math.log2(alphabet), 1)}


def password_strength(password: str) -> dict[str, Any]:
    """Estimated entropy, a 0-4 score and advice for a password."""
    pw = str(password)
    if not pw:
        raise ValueError("password must not be empty")
    classes = [any(c.islower() for c in pw), any(c.isupper() for c in pw), any(c.isdigit() for c in pw),
               any(not c.isalnum() for c in pw)]
    alphabet = 26 * classes[0] + 26 * classes[1] + 10 * classes[2] + 33 * classes[3]
    unique_ratio = len(set(pw)) / len(pw)
    entropy = len(pw) * math.log2(max(alphabet, 2)) * min(1.0, 0.5 + unique_ratio / 2)
    feedback = []
    if len(pw) < 12:
        feedback.append("use at least 12 characters")
    if sum(classes) < 3:
        feedback.append("mix lower case, upper case, digits and symbols")
    if unique_ratio < 0.5:
        feedback.append("avoid repeated characters")
    if pw.lower() in {"password", "123456", "qwerty", "letmein", "admin", "welcome", "iloveyou"}:
        feedback.append("this is a very common password")
        entropy = min(entropy, 10)
    score = 0 if entropy < 28 else 1 if entropy < 36 else 2 if entropy < 60 else 3 if entropy < 80 else 4
    return {"length": len(pw), "entropy_bits": round(entropy, 1), "score": score,
            "rating": ("very weak", "weak", "fair", "strong", "very strong")[score], "feedback": feedback}


def generate_uuid(version: str = "4", name: str = "", namespace: str = "dns") -> dict[str, Any]:
    """A UUID: version 4 (random) or version 5 (deterministic from a name in a namespace)."""
    if version == "5":
        if not name:
            raise ValueError("version 5 needs a name")
        ns = {"dns": uuid.NAMESPACE_DNS, "url": uuid.NAMESPACE_URL, "oid": uuid.NAMESPACE_OID,
              "x500": uuid.NAMESPACE_X500}[namespace]
        u = uuid.uuid5(ns, name)
    else:
        u = uuid.uuid4()
    return {"uuid": str(u), "version": u.version, "hex": u.hex}


def lorem_ipsum(paragraphs: int = 1, words_per_paragraph: int = 50, seed: int = 0) -> dict[str, Any]:
    """Placeholder text (reproducible for a given seed)."""
    require_range(paragraphs, "paragraphs", 1, 50)
    require_range(words_per_paragraph, "words_per_paragraph", 1, 1000)
    rng = random.Random(seed)
    out = []
    for _ in range(paragraphs):
        words = [rng.choice(_LOREM) for _ in range(words_per_paragraph)]
        out.append(" ".join(words).capitalize() + ".")
    return {"paragraphs": out, "word_count": paragraphs * words_per_paragraph}


# ------------------------------------------------------------------------------ declarations
_SAMPLE = ("The quick brown fox jumps over the lazy dog. The dog sleeps in the sun! "
           "Foxes are quick and clever animals.")


def category() -> CategorySpec:
    """The Text_Utilities category."""
    text_p = P("text", STRING, "Text.", _SAMPLE)
    analyzer = ToolSpec(
        name="Text Analyzer",
        key="text_analyzer",
        description="Statistics about a text: word, character, sentence and paragraph counts, reading time, "
                    "Flesch readability, most frequent keywords, letter frequencies and sentence splitting.",
        apis=(
            ApiSpec(word_count, "Word Count",
                    "Count words, characters (with and without spaces), sentences, paragraphs and unique words; "
                    "estimate reading time at 200 words per minute.",
                    (text_p,),
                    {"words": "int", "characters": "int", "characters_no_spaces": "int", "sentences": "int",
                     "paragraphs": "int", "unique_words": "int", "reading_time_minutes": "float"}),
            ApiSpec(readability, "Readability Score",
                    "Flesch reading ease and Flesch-Kincaid grade level of English text.",
                    (text_p,),
                    {"flesch_reading_ease": "float", "flesch_kincaid_grade": "float", "level": "str", "words": "int",
                     "sentences": "int", "syllables": "int"}),
            ApiSpec(keyword_frequency, "Keyword Frequency",
                    "The most frequent words of a text, optionally ignoring English stop words.",
                    (text_p, P("top_n", INTEGER, "How many keywords."),
                     P("ignore_stopwords", BOOLEAN, "Skip words such as 'the', 'and'.")),
                    {"total_words": "int", "keywords": [{"word": "str", "count": "int", "share": "float",
                                                         "_list_length": 10}]}),
            ApiSpec(character_frequency, "Character Frequency", "How often each letter (or character) occurs.",
                    (P("text", STRING, "Text.", "Mississippi"), P("case_sensitive", BOOLEAN, "Distinguish case."),
                     P("letters_only", BOOLEAN, "Count letters only.")),
                    {"total": "int", "characters": [{"char": "str", "count": "int", "_list_length": 4}]}),
            ApiSpec(split_sentences, "Split Sentences", "Split a text into sentences.",
                    (text_p,), {"count": "int", "sentences": ["list of str with length 3"]}),
        ),
    )
    transformer = ToolSpec(
        name="String Transformer",
        key="string_transformer",
        description="Reshape strings: change case (upper, title, snake_case, camelCase, kebab-case...), make URL "
                    "slugs, reverse, normalise whitespace and accents, truncate, check palindromes.",
        apis=(
            ApiSpec(change_case, "Change Case",
                    "Rewrite text in upper, lower, title, sentence, snake, camel, pascal, kebab or constant case.",
                    (P("text", STRING, "Text.", "Hello wonderful World"),
                     P("case", ENUM, "Target case.", "snake",
                       ("upper", "lower", "title", "sentence", "snake", "camel", "pascal", "kebab", "constant"))),
                    {"case": "str", "result": "str"}),
            ApiSpec(slugify_text, "Slugify", "Make a URL slug ('Héllo, World!' → 'hello-world').",
                    (P("text", STRING, "Text.", "Crème Brûlée: The 10 Best Recipes!"),
                     P("separator", STRING, "Word separator: '-', '_' or '.'."),
                     P("max_length", INTEGER, "Maximum slug length.")),
                    {"text": "str", "slug": "str", "identifier": "str"}),
            ApiSpec(reverse_text, "Reverse Text", "Reverse the characters or the word order of a text.",
                    (P("text", STRING, "Text.", "stressed desserts"),
                     P("mode", ENUM, "What to reverse.", None, ("characters", "words"))),
                    {"mode": "str", "result": "str"}),
            ApiSpec(normalize_text, "Normalize Text",
                    "Unicode-normalise text, optionally remove accents and collapse whitespace.",
                    (P("text", STRING, "Text.", "  Ça   va  très\tbien  "),
                     P("remove_accents", BOOLEAN, "Strip diacritics."),
                     P("collapse_whitespace", BOOLEAN, "Turn whitespace runs into single spaces.")),
                    {"result": "str", "length": "int"}),
            ApiSpec(truncate_text, "Truncate Text", "Shorten a text to a maximum length with an ellipsis.",
                    (text_p, P("max_length", INTEGER, "Maximum length.", 40),
                     P("ellipsis", STRING, "Suffix marking the cut."),
                     P("whole_words", BOOLEAN, "Cut at a word boundary.")),
                    {"result": "str", "truncated": "bool", "length": "int"}),
            ApiSpec(palindrome_check, "Palindrome Check",
                    "Whether a word or phrase is a palindrome, ignoring case, spaces and punctuation.",
                    (P("text", STRING, "Text.", "A man, a plan, a canal: Panama"),),
                    {"text": "str", "normalized": "str", "is_palindrome": "bool"}),
        ),
    )
    rx = ToolSpec(
        name="Regex Tester",
        key="regex_tester",
        description="Test regular expressions safely (every match runs with a 1-second time limit): find all "
                    "matches with groups, replace, split, validate patterns, and extract e-mails/URLs/phones.",
        apis=(
            ApiSpec(regex_find_all, "Regex Find All", "All matches of a pattern in a text, with positions and groups.",
                    (P("pattern", STRING, "Regular expression.", r"(\w+)@(\w+)\.com"),
                     P("text", STRING, "Text to search.", "write to ann@example.com or bob@test.com"),
                     P("ignore_case", BOOLEAN, "Case-insensitive."),
                     P("multiline", BOOLEAN, "^ and $ match at line breaks."),
                     P("max_matches", INTEGER, "Maximum matches returned.")),
                    {"pattern": "str", "count": "int",
                     "matches": [{"match": "str", "start": "int", "end": "int", "groups": ["list of str with length 2"],
                                  "named_groups": {}, "_list_length": 2}]}),
            ApiSpec(regex_replace, "Regex Replace", "Replace every match (or the first `count`) of a pattern.",
                    (P("pattern", STRING, "Regular expression.", r"(\d{4})-(\d{2})-(\d{2})"),
                     P("replacement", STRING, "Replacement; \\1 refers to group 1.", r"\3/\2/\1"),
                     P("text", STRING, "Text.", "from 2024-03-15 to 2024-04-01"),
                     P("ignore_case", BOOLEAN, "Case-insensitive."), P("count", INTEGER, "Max replacements, 0 = all.")),
                    {"result": "str", "replacements": "int"}),
            ApiSpec(regex_split, "Regex Split", "Split a text wherever a pattern matches.",
                    (P("pattern", STRING, "Separator pattern.", r"[;,]\s*"),
                     P("text", STRING, "Text.", "red, green;blue,  yellow"),
                     P("max_split", INTEGER, "Maximum splits, 0 = no limit.")),
                    {"count": "int", "parts": ["list of str with length 4"]}),
            ApiSpec(validate_regex, "Validate Regex", "Check a pattern's syntax and list its groups.",
                    (P("pattern", STRING, "Regular expression.", r"(?P<year>\d{4})-(?P<month>\d\d)"),),
                    {"valid": "bool", "groups": "int", "group_names": ["list of str with length 2"], "error": "str"}),
            ApiSpec(extract_patterns, "Extract Patterns",
                    "Pull e-mail addresses, URLs, phone numbers, numbers, hashtags, @mentions, dates or IPv4 "
                    "addresses out of a text.",
                    (P("text", STRING, "Text.", "Mail sales@shop.io or support@shop.io, visit https://shop.io/help"),
                     P("kind", ENUM, "What to extract.", "email", tuple(_EXTRACTORS))),
                    {"kind": "str", "count": "int", "items": ["list of str with length 2"]}),
        ),
    )
    similarity = ToolSpec(
        name="Text Similarity",
        key="text_similarity",
        description="Compare strings: Levenshtein edit distance, similarity ratios, unified diffs of two texts, "
                    "and closest-match spelling suggestions from a list.",
        apis=(
            ApiSpec(levenshtein, "Levenshtein Distance", "Edit distance between two strings and a 0-1 similarity.",
                    (P("a", STRING, "First string.", "kitten"), P("b", STRING, "Second string.", "sitting")),
                    {"distance": "int", "similarity": "float"}),
            ApiSpec(similarity_ratio, "Similarity Ratio",
                    "How similar two texts are: character-sequence ratio and word-overlap (Jaccard).",
                    (P("a", STRING, "First text.", "the cat sat on the mat"),
                     P("b", STRING, "Second text.", "the cat lay on the rug")),
                    {"sequence_ratio": "float", "word_jaccard": "float",
                     "common_words": ["list of str with length 4"]}),
            ApiSpec(unified_diff, "Text Diff", "Unified diff of two texts, with counts of added and removed lines.",
                    (P("a", STRING, "Original text.", "one\ntwo\nthree"), P("b", STRING, "New text.", "one\n2\nthree"),
                     P("context_lines", INTEGER, "Unchanged lines shown around changes.")),
                    {"identical": "bool", "added": "int", "removed": "int", "diff": "str"}),
            ApiSpec(closest_matches, "Closest Matches", "Candidates most similar to a word (e.g. spelling fixes).",
                    (P("word", STRING, "Word.", "appel"),
                     P("candidates", ARRAY, "Candidate words.", ["apple", "ape", "peach", "apply", "maple"]),
                     P("n", INTEGER, "Maximum suggestions."), P("cutoff", NUMBER, "Minimum similarity 0-1.")),
                    {"word": "str", "matches": [{"candidate": "str", "score": "float", "_list_length": 3}]}),
        ),
    )
    generators = ToolSpec(
        name="Password and ID Generator",
        key="password_and_id_generator",
        description="Generate secure random passwords and check password strength, create UUIDs (random v4 or "
                    "name-based v5), and produce lorem-ipsum placeholder text.",
        apis=(
            ApiSpec(generate_password, "Generate Password",
                    "A random password of a given length with letters and optional digits and symbols.",
                    (P("length", INTEGER, "Length (4-256)."), P("digits", BOOLEAN, "Include digits."),
                     P("symbols", BOOLEAN, "Include symbols."),
                     P("seed", INTEGER, "Seed ≥ 0 for a reproducible (NOT secure) password; -1 = secure random.")),
                    {"password": "str", "length": "int", "entropy_bits": "float"}, deterministic=False),
            ApiSpec(password_strength, "Password Strength",
                    "Estimate a password's entropy and strength (0-4) with suggestions.",
                    (P("password", STRING, "Password to rate.", "Tr0ub4dor&3"),),
                    {"length": "int", "entropy_bits": "float", "score": "int", "rating": "str",
                     "feedback": ["list of str with length 1"]}),
            ApiSpec(generate_uuid, "Generate UUID", "A random UUID (v4) or a name-based UUID (v5).",
                    (P("version", ENUM, "UUID version.", None, ("4", "5")),
                     P("name", STRING, "Name for version 5."),
                     P("namespace", ENUM, "Namespace for version 5.", None, ("dns", "url", "oid", "x500"))),
                    {"uuid": "str", "version": "int", "hex": "str"}, deterministic=False),
            ApiSpec(lorem_ipsum, "Lorem Ipsum", "Placeholder paragraphs of pseudo-Latin text.",
                    (P("paragraphs", INTEGER, "Number of paragraphs."),
                     P("words_per_paragraph", INTEGER, "Words per paragraph."),
                     P("seed", INTEGER, "Seed; the same seed gives the same text.")),
                    {"paragraphs": ["list of str with length 1"], "word_count": "int"}),
        ),
    )
    return CategorySpec(name="Text_Utilities",
                        description="Text statistics, transformations, regular expressions, similarity, generators.",
                        tools=(analyzer, transformer, rx, similarity, generators))
