"""Mask secrets in text, in the spellings a server may reflect them in (issue 28, point 15).

Every place that masks secrets (observations and errors of the executors, the log-record factory, provider error
lines) calls `mask_values` / `SecretMask`. A registered secret is masked where it appears exactly (any secret of 4
characters or more), and, when it holds at least `MIN_SPELLING` ASCII letters and digits, in these spellings too:

- in any letter case (upper-cased, lower-cased, mixed);
- URL-encoded, fully or in part (`%XX` escapes, `+` for a space);
- hex of its UTF-8 bytes (either case);
- base64 of its bytes, standard or URL-safe alphabet, padded or not, alone or inside a longer base64 text (the
  characters that the key's bytes determine, for each of the three byte alignments);
- split: with whitespace, line breaks or punctuation inserted anywhere, or in pieces.

Matching runs on a normal form of the text: ASCII letters lower-cased, `%XX` escapes decoded, and every character
that is not an ASCII letter or digit dropped; a match is mapped back to the original text and masked from its first
to its last character (the separators inside included). The rule for pieces: any stretch of text whose normal form
equals a run of at least `piece_length(n)` consecutive characters of one spelling (normal form of length n) is
masked: the whole spelling when n < 16, else any run of min(10, ⌈n/2⌉) characters, so both halves of a key split
in two are masked, and so is every piece of 10 characters or more. A key cut into pieces of fewer than 10 (and
fewer than half its) characters each is not recognised. A secret made of ordinary words masks those words' runs in
ordinary text too (masking errs on the safe side).
"""

from __future__ import annotations

import base64
import bisect
import functools
import re
import string
from collections.abc import Iterable

MASK = "***"
MIN_EXACT = 4  # shorter values are never masked (they would mask ordinary words)
MIN_SPELLING = 8  # letters and digits a secret needs before its other spellings are masked
MAX_PIECE = 10  # a run this long of a spelling is masked wherever it appears (for spellings of 16 or more)

_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_TOKEN = re.compile(r"[a-z0-9]+|%[0-9a-f]{2}")  # on lower-cased text: letter/digit runs and %XX escapes
_ESCAPE = re.compile(r"%[0-9a-f]{2}")
_OTHER = re.compile(r"[^a-z0-9]+")
_ALNUM = frozenset(string.ascii_lowercase + string.digits)


def secret_values(secrets: Iterable[str], min_length: int = MIN_EXACT) -> tuple[str, ...]:
    """The maskable secrets (`min_length` characters or more), longest first."""
    return tuple(sorted({s for s in secrets if s and len(s) >= min_length}, key=len, reverse=True))


def normal_form(text: str) -> str:
    """ASCII letters and digits of `text`, lower-cased, with `%XX` escapes decoded (everything else dropped); the
    same string as `_normalise`'s, made by the regular-expression engine."""
    lowered = text.translate(_LOWER)
    if "%" in lowered:
        lowered = _ESCAPE.sub(_decoded, lowered)
    return _OTHER.sub("", lowered)


def _decoded(match: re.Match[str]) -> str:
    char = chr(int(match.group()[1:], 16)).translate(_LOWER)
    return char if char in _ALNUM else ""


def _normalise(text: str) -> tuple[str, list[int], list[int], list[int]]:
    """The normal form, and for each of its segments: its start in the normal form, its start in `text`, and the
    original length of each of its characters (1 for letters and digits, 3 for a decoded `%XX`)."""
    pieces: list[str] = []
    norm_starts: list[int] = []
    starts: list[int] = []
    widths: list[int] = []
    size = 0
    for match in _TOKEN.finditer(text.translate(_LOWER)):
        token = match.group()
        if token[0] == "%":
            token = chr(int(token[1:], 16)).translate(_LOWER)
            if token not in _ALNUM:
                continue
            width = 3
        else:
            width = 1
        pieces.append(token)
        norm_starts.append(size)
        starts.append(match.start())
        widths.append(width)
        size += len(token)
    return "".join(pieces), norm_starts, starts, widths


def spellings(secret: str) -> tuple[str, ...]:
    """Normal forms of the spellings of `secret` that are masked: itself, hex, base64 (whole, and the characters its
    bytes determine at each of the three alignments); empty when it has too few letters and digits."""
    if len(normal_form(secret)) < MIN_SPELLING:
        return ()
    raw = secret.encode("utf-8")
    forms = [secret, raw.hex(), base64.b64encode(raw).decode()]
    for shift in range(3):
        encoded = base64.b64encode(bytes(shift) + raw).decode()
        first, end = -(-8 * shift // 6), 8 * (shift + len(raw)) // 6  # characters set by the key's bits alone
        forms.append(encoded[first:end])
    return tuple(dict.fromkeys(f for f in (normal_form(x) for x in forms) if len(f) >= MIN_SPELLING))


def piece_length(n: int) -> int:
    """The shortest run of a spelling (normal form of length `n`) that is masked."""
    return n if n < 2 * MIN_SPELLING else min(MAX_PIECE, -(-n // 2))


class SecretMask:
    """Masks a set of secrets in text (see the module docs); built once per set (`mask_for`). Secrets shorter than
    `min_exact` characters are left alone."""

    def __init__(self, secrets: Iterable[str], min_exact: int = MIN_EXACT) -> None:
        self.exact = secret_values(secrets, min_exact)
        anchors: dict[str, list[tuple[str, int, int]]] = {}
        for secret in self.exact:
            for form in spellings(secret):
                piece = piece_length(len(form))
                size = (piece + 1) // 2  # every run of `piece` characters holds one whole aligned block
                for at in range(0, len(form) - size + 1, size):
                    anchors.setdefault(form[at:at + size], []).append((form, at, piece))
        self._anchors = anchors

    def __bool__(self) -> bool:
        return bool(self.exact)

    def text(self, value: str) -> str:
        """`value` with every secret, in every spelling, replaced by `***`."""
        for secret in self.exact:
            if secret in value:
                value = value.replace(secret, MASK)
        if not self._anchors or len(value) < MIN_SPELLING or not self._runs(normal_form(value)):
            return value
        norm, norm_starts, starts, widths = _normalise(value)  # where each character came from (slower)
        found = sorted(self._runs(norm))

        def origin(j: int) -> tuple[int, int]:  # where normal-form character j sits in `value`
            seg = bisect.bisect_right(norm_starts, j) - 1
            width = widths[seg]
            at = starts[seg] + (j - norm_starts[seg]) * width
            return at, at + width

        out, last = [], 0
        for a, b in _merged([(origin(a)[0], origin(b - 1)[1]) for a, b in found]):
            out += [value[last:a], MASK]
            last = b
        out.append(value[last:])
        return "".join(out)

    def _runs(self, norm: str) -> set[tuple[int, int]]:
        """Stretches [a, b) of the normal form that equal a long enough run of some spelling."""
        runs: set[tuple[int, int]] = set()
        for block, places in self._anchors.items():
            hit = norm.find(block)
            while hit != -1:
                for form, at, piece in places:
                    a, p = hit, at
                    while a > 0 and p > 0 and norm[a - 1] == form[p - 1]:
                        a, p = a - 1, p - 1
                    b, q = hit + len(block), at + len(block)
                    while b < len(norm) and q < len(form) and norm[b] == form[q]:
                        b, q = b + 1, q + 1
                    if b - a >= piece:
                        runs.add((a, b))
                hit = norm.find(block, hit + 1)
        return runs


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


@functools.lru_cache(maxsize=64)
def mask_for(values: tuple[str, ...], min_exact: int = MIN_EXACT) -> SecretMask:
    """The mask of a set of secrets (cached: executors and the log-record factory rebuild theirs often)."""
    return SecretMask(values, min_exact)


def mask_values(text: str, values: Iterable[str]) -> str:
    """`text` with each of `values`, in each of its spellings, replaced by `***`."""
    return mask_for(tuple(sorted(set(values)))).text(text)
