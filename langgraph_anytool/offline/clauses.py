"""The parts of a multi-part request ("Convert 26.2 miles to km, tell me what day 2024-02-29 was, and the midpoint
between Paris and Berlin." → three parts), each a substring of the request with its leading joiner dropped.

A request is cut at
- lines and list items (a bullet or a number opening a line, or inline "(1) … (2) …" / "1) … 2) …");
- sentence ends (`.`, `?`, `!` before a space; not after an abbreviation such as "U.S." or "St.") and `;`;
- a comma before a clause: one led by a request verb or a question word (", tell me …", ", what is …"), or by a
  joiner (", and …", ", also …", ", then …", ", plus …", ", as well as …"); a joiner before anything else (", and
  the midpoint …") cuts only after a clause of its own (one led by a request verb or question word, or a phrase
  with a value and a topic word), never inside a list of bare words ("the coordinates, population, and the area");
- a joiner without a comma only before a request verb or question word ("… and tell me …", "… then list …").

Never inside quoted text, parentheses or backticks, nor after an introductory phrase ("In France, list …", "If it
rains, …"), nor inside "between A and B". A cut whose side is left without a topic word of its own (values only:
"In France", "and Italy") is undone. Request verbs that are also nouns ("list", "name", "count") lead a clause only
before an object ("list the …", "count 5 …"): "the population, name and area" stays one part.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from .mentions import code_of, mentions_of, topic_words
from .text import content_words

# Verbs that open a request ("tell me", "convert", "list the …"), question words and auxiliaries.
_VERBS = frozenset((
    "tell", "give", "show", "find", "get", "convert", "calculate", "compute", "translate", "estimate", "determine",
    "explain", "describe", "compare", "fetch", "generate", "create", "provide", "identify", "verify", "confirm",
    "let", "write", "spell", "decode", "encode", "summarize", "summarise", "recommend", "suggest", "predict",
    "measure", "figure", "work", "lookup", "look", "add", "subtract", "multiply", "divide", "say", "please",
    "send", "evaluate", "run", "validate", "analyze", "analyse", "retrieve", "pull", "display",
))
# Verbs that are nouns as often ("the word count", "a name", "the list"): they open a clause only before an object.
_NOUN_VERBS = frozenset((
    "list", "name", "count", "search", "hash", "round", "book", "return", "total", "sum", "average", "reverse",
    "sort", "rate", "time", "date", "map", "plot", "test", "rank", "price", "score", "report", "state", "check",
    "chart", "value", "shorten", "format", "parse", "scan", "track", "schedule", "order", "plan", "trace",
))
_QUESTION = frozenset(("what", "how", "which", "who", "whom", "whose", "when", "where", "why"))
# after a comma with no joiner, "which/who/where/when/whose" open a relative clause ("Paris, which is …")
_RELATIVE = frozenset(("which", "who", "whom", "whose", "when", "where"))
_AUX = frozenset(("is", "are", "was", "were", "do", "does", "did", "can", "could", "would", "will", "should", "i",
                  "i'd", "i'm", "i'll"))
# Words after which a noun-verb is a verb: articles, pronouns, quantifiers, "if"/"whether", particles.
_OBJECT = frozenset((
    "the", "a", "an", "this", "that", "these", "those", "my", "our", "your", "its", "their", "his", "her", "all",
    "every", "each", "some", "any", "me", "us", "it", "them", "him", "if", "whether", "up", "out", "down", "both",
    "how", "what", "which", "who", "when", "where", "why",
))
# Joiners: words that join a new request part to the previous one.
_JOINER = (r"and\s+also|and\s+then|and|also|then|plus|additionally|as\s+well\s+as|but\s+also|in\s+addition"
           r"|after\s+that|afterwards|finally|lastly|besides|moreover|furthermore|next|secondly|second|thirdly|third")
# Joiners that also join words inside a part ("the sum and the product", "5 plus 3", "the next holiday"): without a
# comma they cut only before a clause; "then" cuts before anything ("add 2, then double it").
_WEAK_JOINERS = frozenset(("and", "also", "plus", "next", "second", "third", "finally", "lastly", "besides", "as",
                           "but", "in", "after"))
# Joiners that join a part before anything ("…, and the midpoint …"); others only before a clause or with a comma
# of their own ("…, finally, the midpoint …"; "…, next year" is no part).
_STRONG_JOINERS = frozenset(("and", "also", "then", "plus", "additionally", "as", "but", "in"))
# Joiners kept at a part's start unless a comma follows them ("next holiday", "second largest").
_ADJECTIVES = frozenset(("next", "second", "third"))
# An introductory phrase or subordinate clause: the comma after it ends no part ("In France, list …").
_INTRO = frozenset((
    "if", "when", "whenever", "since", "because", "although", "though", "while", "once", "unless", "given",
    "assuming", "after", "before", "in", "for", "on", "at", "from", "by", "with", "during", "within", "using", "as",
    "to", "under", "over", "about", "regarding", "considering", "hi", "hello", "hey", "ok", "okay", "so", "well",
))
_ABBREVIATIONS = frozenset((
    "mr", "mrs", "ms", "dr", "st", "mt", "vs", "etc", "approx", "no", "inc", "ltd", "co", "jr", "sr", "prof",
    "e.g", "i.e", "ca", "cf", "fig", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
    "dec", "ave", "blvd", "rd", "dept", "est", "min", "max", "sec", "hr", "hrs", "ft", "lb", "lbs", "oz", "pt",
))
_GREETING = frozenset(("thank", "thanks", "hi", "hello", "hey", "cheer", "regard", "ok", "okay", "great", "sir",
                       "madam", "guy", "advance", "much", "lot"))

_LEAD = re.compile(rf"^(?:(?:{_JOINER})\b[\s,]*)+", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")
_BULLET = re.compile(r"^\s*(?:[-*•·–]|\(?\d{1,2}[.)]|\(?[a-hA-H]\))\s+")
_INLINE_NUMBER = re.compile(r"(?:^|(?<=\s))\(?(\d{1,2})\)\s+(?=[A-Za-z])")
_SENTENCE_END = re.compile(r"(?:[.?!]+[\"'”’)]*|;)(\s+)(?=\S)")
_COMMA = re.compile(r",\s+(?=\S)")
_TRAILING_JOINER = re.compile(r"(?:[\s,;]+(?:and|or|then|also|plus))+[\s,;]*$", re.IGNORECASE)
_BARE_JOIN = re.compile(rf"\s+((?:{_JOINER})\s+)(?=\S)", re.IGNORECASE)


@dataclass(frozen=True)
class _Cut:
    """A candidate boundary: the left part ends at `end`, the right part starts at `start`."""

    end: int
    start: int
    kind: str  # "line", "sentence", "comma" (may hold a joiner), "join" (a joiner, no comma)


def split_clauses(query: str) -> list[str]:
    """The parts of a multi-part request (see the module's docstring); [query] when it has one, [] when empty."""
    return list(_split(query))


@functools.lru_cache(maxsize=1024)
def _split(query: str) -> tuple[str, ...]:
    """`split_clauses`, memoised: every role asks it of the same request many times in a run."""
    text = query.strip()
    if not text:
        return ()
    parts: list[str] = []
    for item in _items(text):
        parts += _split_item(item)
    parts = [p for p in (_strip(p) for p in parts) if p]
    return tuple(parts or [text])


def _items(text: str) -> list[str]:
    """Lines and list items. A line ending with ":" is the preamble of the lines after it: kept in front of each when
    it carries a value ("For France:"), else dropped ("Please answer these:"). Code over several lines is one item."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) > 1 and ("```" in text or ((code := code_of(text)) is not None and "\n" in code.value)):
        return [text]
    if len(lines) == 1:
        return _inline_items(lines[0]) or lines
    out: list[str] = []
    preamble = ""
    for line in lines:
        bullet = _BULLET.match(line)
        body = line[bullet.end():] if bullet else line
        if line.endswith(":") and not bullet:
            preamble = line.rstrip(":") if mentions_of(line).salient() else ""
            continue
        out.append(f"{preamble}: {body}" if preamble else body)
    return out or lines


def _inline_items(line: str) -> list[str]:
    """"… (1) convert … (2) list …": the items of an inline numbered list (numbers 1, 2, … in order), with the text
    before the list in front of each when it carries a value; [] when the line has no such list."""
    numbered: list[re.Match[str]] = []
    for m in _INLINE_NUMBER.finditer(line):
        if int(m.group(1)) == len(numbered) + 1 and not _inside(m.start(), _protected(line)):
            numbered.append(m)
    if len(numbered) < 2:
        return []
    bounds = [m.end() for m in numbered]
    ends = [m.start() for m in numbered[1:]] + [len(line)]
    head = line[: numbered[0].start()].strip(" ,;:")
    items = [_TRAILING_JOINER.sub("", line[s:e]).strip(" ,;") for s, e in zip(bounds, ends, strict=True)]
    if head and mentions_of(head).salient():
        items = [f"{head}: {i}" for i in items]
    return [i for i in items if i]


def _split_item(text: str) -> list[str]:
    """One line cut at its sentences, and at the commas and joiners that open a clause."""
    protected = _protected(text)
    cuts = sorted(
        [_Cut(m.start(1), m.end(), "sentence") for m in _SENTENCE_END.finditer(text) if _sentence_end(text, m.start())]
        + [_Cut(m.start(), m.end(), "comma") for m in _COMMA.finditer(text)]
        + [_Cut(m.start(), m.start(1), "join") for m in _BARE_JOIN.finditer(text)],
        key=lambda c: c.end)
    cuts = [c for c in cuts if not _inside(c.end, protected)]
    parts: list[tuple[int, int]] = []  # accepted parts, as spans
    start = 0  # where the current part starts
    atom = 0  # where the current comma-separated stretch starts
    for i, cut in enumerate(cuts):
        if cut.end < atom:
            continue  # overlapping candidates ("; and" is a sentence end and a joiner)
        nxt = next((c.end for c in cuts[i + 1:] if c.end > cut.start), len(text))
        left, last, right = text[start:cut.end], text[atom:cut.end], text[cut.start:nxt]
        if _accept(cut.kind, left, last, right):
            parts.append((start, cut.end))
            start = atom = cut.start
        elif cut.kind != "join":
            atom = cut.start
    parts.append((start, len(text)))
    return _merge_valueless(text, parts)


def _accept(kind: str, left: str, last: str, right: str) -> bool:
    """Whether a candidate cut ends a part. `left`: the current part so far; `last`: its stretch since the last
    comma; `right`: the text after the cut up to the next candidate."""
    if kind == "sentence":
        return True
    joiner = _LEAD.match(right)
    rest = right[joiner.end():] if joiner else right
    lead = _first_word(rest)
    if kind == "join":
        word = joiner.group(0).split()[0].lower() if joiner else ""
        clause = _opens_clause(rest, question_words=True)
        if word not in _WEAK_JOINERS:  # "then": "add 2 then double it"
            clause = clause or bool(topic_words(rest))
        return clause and not _open_between(left) and _stands(left) and bool(content_words(rest))
    # a comma
    if _first_word(last) in _INTRO | _RELATIVE or not _stands(left) or not content_words(rest):
        return False
    if joiner is None:
        return lead not in _RELATIVE and _opens_clause(rest, question_words=True)
    if _opens_clause(rest, question_words=True):
        return not _open_between(left)
    # ", and the midpoint …": only after a clause, and when the new part names a topic of its own
    word = joiner.group(0).split()[0].lower().strip(",")
    if word not in _STRONG_JOINERS and not joiner.group(0).rstrip().endswith(","):
        return False
    return _is_clause(last) and bool(topic_words(rest)) and not _open_between(left)


def _opens_clause(text: str, *, question_words: bool) -> bool:
    """Whether `text` starts with a request verb, a question word or an auxiliary (a noun-verb only before an
    object: "list the …", "count 5 …")."""
    words = [w.lower() for w in _WORD.findall(text[:80])]
    if not words:
        return False
    first = words[0]
    if first in _VERBS or first in _AUX or (question_words and first in _QUESTION):
        return True
    if first in _NOUN_VERBS and len(words) > 1:
        after = text[text.lower().index(first) + len(first):].lstrip()
        return words[1] in _OBJECT or bool(re.match(r"[\d\"'“‘`-]", after))
    return False


def _is_clause(stretch: str) -> bool:
    """A stretch that can end a part: a clause (led by a verb or question word), or a phrase with a value and a topic
    of its own ("the distance between Paris and Berlin"); not a bare word of a list ("population")."""
    body = _strip(stretch)
    return _opens_clause(body, question_words=True) or (bool(mentions_of(body).salient()) and bool(topic_words(body)))


def _starts_clause(text: str) -> bool:
    return _opens_clause(_strip(text), question_words=True)


def _stands(left: str) -> bool:
    """Whether the part so far stands as a request part: it has a topic word, or it is a clause."""
    body = _strip(left)
    return bool(topic_words(body) - _GREETING) or (_starts_clause(body) and bool(content_words(body)))


def _open_between(left: str) -> bool:
    """"… between 2024-03-01": a "between" whose "and" has not come yet."""
    low = left.lower()
    at = low.rfind("between ")
    return at >= 0 and not re.search(r"\band\b", low[at:])


def _first_word(text: str) -> str:
    m = _WORD.search(_strip(text))
    return m.group(0).lower() if m else ""


def _strip(part: str) -> str:
    """A part without its leading joiner ("and the …", "Also, could you …") and trailing punctuation."""
    part = part.strip().strip(",;: ")
    lead = _LEAD.match(part)
    if lead is not None and not part[lead.end():].strip(" ,;:.!?"):
        return ""  # a joiner alone ("Additionally,")
    if lead is not None:
        word = lead.group(0).split()[0].lower().strip(",")
        # "next", "second", "third" start a part's words unless a comma follows them ("Next, …"; "next holiday")
        if word not in _ADJECTIVES or lead.group(0).rstrip().endswith(","):
            part = part[lead.end():]
    return part.strip().rstrip(",;").strip()


def _merge_valueless(text: str, spans: list[tuple[int, int]]) -> list[str]:
    """Undo the cuts beside a part without a word of its own ("Thanks!", "Hi."): it joins its neighbour."""
    merged: list[list[int]] = []
    for s, e in spans:
        if merged and not (_own_words(text[merged[-1][0]:merged[-1][1]]) and _own_words(text[s:e])):
            merged[-1][1] = e
        else:
            merged.append([s, e])
    return [text[s:e] for s, e in merged]


def _own_words(part: str) -> bool:
    return bool(content_words(_strip(part)) - _GREETING)


def _protected(text: str) -> list[tuple[int, int]]:
    """Spans no cut may fall in: quoted text, parentheses and brackets, backticks."""
    spans = [(m.start, m.end) for m in mentions_of(text).quoted]
    spans += [(m.start(), m.end()) for m in re.finditer(r"\([^()]*\)|\[[^\[\]]*\]|`[^`]*`", text)]
    return spans


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(s < pos < e for s, e in spans)


def _sentence_end(text: str, pos: int) -> bool:
    """Whether the punctuation at `pos` ends a sentence: `?`, `!`, `;` do; a `.` does unless it closes an
    abbreviation ("U.S.", "St.", "e.g.") or the next word is lower case and no joiner or clause."""
    if text[pos] != ".":
        return True
    after = text[pos:].lstrip(".\"'”’) \t")
    opens = bool(_LEAD.match(after)) or _starts_clause(after)
    word = re.search(r"([A-Za-z][A-Za-z.]*)$", text[:pos])
    if word is not None and ("." in word.group(1) or word.group(1).lower() in _ABBREVIATIONS
                             or (len(word.group(1)) == 1 and word.group(1).isupper())):
        return opens  # "U.S.", "St.", "e.g.", "J.": a sentence ends only if a clause follows ("… in ft. Then …")
    return not after[:1].islower() or opens
