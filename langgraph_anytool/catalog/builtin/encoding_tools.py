"""Encodings, hashes, URLs, JSON/CSV and colour formats."""

from __future__ import annotations

import base64
import binascii
import codecs
import colorsys
import csv
import hashlib
import hmac
import html
import io
import json
import quopri
import re
import urllib.parse
import zlib
from types import MappingProxyType
from typing import Any

from ._common import require_range
from ._registry import BOOLEAN, ENUM, INTEGER, OBJECT, STRING, ApiSpec, CategorySpec, P, ToolSpec

MAX_INPUT = 1_000_000


def _text(value: Any, name: str = "text") -> str:
    s = value if isinstance(value, str) else str(value)
    if len(s) > MAX_INPUT:
        raise ValueError(f"{name} is longer than {MAX_INPUT} characters")
    return s


def _as_text(data: bytes) -> tuple[str, bool]:
    """(decoded text, whether it was valid UTF-8); invalid UTF-8 comes back as hex."""
    try:
        return data.decode("utf-8"), True
    except UnicodeDecodeError:
        return data.hex(), False


# ------------------------------------------------------------------------------ base64
def base64_encode(text: str, url_safe: bool = False) -> dict[str, Any]:
    """Base64 of the UTF-8 bytes of a text."""
    raw = _text(text).encode("utf-8")
    out = base64.urlsafe_b64encode(raw) if url_safe else base64.b64encode(raw)
    return {"encoded": out.decode("ascii"), "input_bytes": len(raw), "url_safe": url_safe}


def base64_decode(data: str, url_safe: bool = False) -> dict[str, Any]:
    """Decode Base64 (missing padding tolerated) to UTF-8 text, or hex when the bytes are not text."""
    s = re.sub(r"\s+", "", _text(data, "data"))
    s += "=" * (-len(s) % 4)
    try:
        raw = base64.urlsafe_b64decode(s) if url_safe else base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"not valid Base64: {exc}") from None
    text, is_text = _as_text(raw)
    return {"decoded": text, "is_utf8_text": is_text, "bytes": len(raw)}


def base64_validate(data: str) -> dict[str, Any]:
    """Whether a string is well-formed standard or URL-safe Base64."""
    s = _text(data, "data").strip()
    std = bool(re.fullmatch(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?", s))
    url = bool(re.fullmatch(r"(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}(?:==)?|[A-Za-z0-9_-]{3}=?)?", s))
    return {"valid_standard": std and bool(s), "valid_url_safe": url and bool(s), "length": len(s)}


# ------------------------------------------------------------------------------ multi encoder
_SCHEMES = ("base16", "base32", "base64", "base85", "ascii85", "url", "html", "rot13", "punycode",
            "quoted_printable", "unicode_escape")


def encode_text(text: str, scheme: str) -> dict[str, Any]:
    """Encode text with one of several schemes."""
    t = _text(text)
    raw = t.encode("utf-8")
    encoders = {
        "base16": lambda: base64.b16encode(raw).decode("ascii"),
        "base32": lambda: base64.b32encode(raw).decode("ascii"),
        "base64": lambda: base64.b64encode(raw).decode("ascii"),
        "base85": lambda: base64.b85encode(raw).decode("ascii"),
        "ascii85": lambda: base64.a85encode(raw).decode("ascii"),
        "url": lambda: urllib.parse.quote(t, safe=""),
        "html": lambda: html.escape(t),
        "rot13": lambda: codecs.encode(t, "rot13"),
        "punycode": lambda: t.encode("idna").decode("ascii") if "." in t else t.encode("punycode").decode("ascii"),
        "quoted_printable": lambda: quopri.encodestring(raw).decode("ascii"),
        "unicode_escape": lambda: t.encode("unicode_escape").decode("ascii"),
    }
    try:
        return {"scheme": scheme, "encoded": encoders[scheme]()}
    except UnicodeError as exc:
        raise ValueError(f"cannot {scheme}-encode this text: {exc}") from None


def decode_text(data: str, scheme: str) -> dict[str, Any]:
    """Decode data written in one of several schemes back to text."""
    s = _text(data, "data")
    decoders = {
        "base16": lambda: base64.b16decode(s.strip().upper()),
        "base32": lambda: base64.b32decode(s.strip() + "=" * (-len(s.strip()) % 8)),
        "base64": lambda: base64.b64decode(s.strip() + "=" * (-len(s.strip()) % 4)),
        "base85": lambda: base64.b85decode(s.strip()),
        "ascii85": lambda: base64.a85decode(s.strip()),
        "url": lambda: urllib.parse.unquote_to_bytes(s),
        "html": lambda: html.unescape(s).encode("utf-8"),
        "rot13": lambda: codecs.decode(s, "rot13").encode("utf-8"),
        "punycode": lambda: (s.encode("ascii").decode("idna") if "." in s or s.startswith("xn--")
                             else s.encode("ascii").decode("punycode")).encode("utf-8"),
        "quoted_printable": lambda: quopri.decodestring(s.encode("ascii")),
        "unicode_escape": lambda: s.encode("latin-1", "backslashreplace").decode("unicode_escape").encode("utf-8"),
    }
    try:
        raw = decoders[scheme]()
    except (binascii.Error, ValueError, UnicodeError) as exc:
        raise ValueError(f"not valid {scheme}: {exc}") from None
    text, is_text = _as_text(raw)
    return {"scheme": scheme, "decoded": text, "is_utf8_text": is_text}


# ------------------------------------------------------------------------------ hashes
_ALGOS = ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_256", "sha3_512", "blake2b", "blake2s")


def hash_text(text: str, algorithm: str = "sha256") -> dict[str, Any]:
    """Hex digest of the UTF-8 bytes of a text."""
    h = hashlib.new(algorithm, _text(text).encode("utf-8"))
    return {"algorithm": algorithm, "hex": h.hexdigest(), "base64": base64.b64encode(h.digest()).decode("ascii"),
            "bits": h.digest_size * 8}


def hmac_sign(message: str, key: str, algorithm: str = "sha256") -> dict[str, Any]:
    """HMAC signature of a message with a secret key."""
    if algorithm not in _ALGOS:
        raise ValueError(f"unknown algorithm {algorithm!r}")
    mac = hmac.new(_text(key, "key").encode("utf-8"), _text(message, "message").encode("utf-8"), algorithm)
    return {"algorithm": algorithm, "hex": mac.hexdigest(), "base64": base64.b64encode(mac.digest()).decode("ascii")}


def checksum(text: str) -> dict[str, Any]:
    """CRC-32 and Adler-32 checksums of the UTF-8 bytes of a text."""
    raw = _text(text).encode("utf-8")
    crc, adler = zlib.crc32(raw), zlib.adler32(raw)
    return {"crc32": crc, "crc32_hex": f"{crc:08x}", "adler32": adler, "adler32_hex": f"{adler:08x}"}


def verify_hash(text: str, expected_hex: str, algorithm: str = "sha256") -> dict[str, Any]:
    """Whether a text hashes to an expected hex digest (constant-time comparison)."""
    actual = hashlib.new(algorithm, _text(text).encode("utf-8")).hexdigest()
    expected = str(expected_hex).strip().lower()
    if not re.fullmatch(r"[0-9a-f]+", expected):
        raise ValueError("expected_hex must be a hexadecimal digest")
    return {"algorithm": algorithm, "matches": hmac.compare_digest(actual, expected), "actual_hex": actual}


# ------------------------------------------------------------------------------ URLs
def url_encode(text: str, plus_for_space: bool = False) -> dict[str, Any]:
    """Percent-encode text for use in a URL."""
    t = _text(text)
    return {"encoded": urllib.parse.quote_plus(t) if plus_for_space else urllib.parse.quote(t, safe="")}


def url_decode(text: str) -> dict[str, Any]:
    """Decode percent-encoding (and '+' as space)."""
    return {"decoded": urllib.parse.unquote_plus(_text(text))}


def parse_url(url: str) -> dict[str, Any]:
    """Split a URL into scheme, host, port, path, query parameters and fragment."""
    u = urllib.parse.urlsplit(_text(url, "url").strip())
    if not u.scheme or not u.netloc:
        raise ValueError(f"{url!r} is not an absolute URL (scheme://host/...)")
    try:
        port = u.port
    except ValueError as exc:
        raise ValueError(str(exc)) from None
    params: dict[str, list[str]] = urllib.parse.parse_qs(u.query, keep_blank_values=True)
    return {"scheme": u.scheme, "host": u.hostname or "", "port": port, "path": u.path, "query": u.query,
            "params": params, "fragment": u.fragment, "username": u.username or ""}


def build_url(base_url: str, params: dict[str, Any], fragment: str = "") -> dict[str, Any]:
    """Add query parameters (and a fragment) to a base URL."""
    u = urllib.parse.urlsplit(_text(base_url, "base_url").strip())
    if not u.scheme or not u.netloc:
        raise ValueError(f"{base_url!r} is not an absolute URL")
    pairs = urllib.parse.parse_qsl(u.query, keep_blank_values=True)
    if not isinstance(params, dict):
        raise ValueError("params must be an object of name → value")
    for k, v in params.items():
        values = v if isinstance(v, list) else [v]
        pairs.extend((str(k), "" if x is None else (json.dumps(x) if isinstance(x, (dict, bool)) else str(x)))
                     for x in values)
    query = urllib.parse.urlencode(pairs)
    return {"url": urllib.parse.urlunsplit((u.scheme, u.netloc, u.path, query, fragment or u.fragment))}


# ------------------------------------------------------------------------------ JSON / CSV
def _load_json(text: str) -> Any:
    try:
        return json.loads(_text(text, "json_text"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None


def _type_name(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(v), "number")


def format_json(json_text: str, indent: int = 2, sort_keys: bool = False) -> dict[str, Any]:
    """Validate and pretty-print JSON."""
    require_range(indent, "indent", 0, 8)
    value = _load_json(json_text)
    return {"valid": True, "type": _type_name(value),
            "formatted": json.dumps(value, indent=indent or None, sort_keys=sort_keys, ensure_ascii=False)}


def minify_json(json_text: str) -> dict[str, Any]:
    """Remove all insignificant whitespace from JSON."""
    value = _load_json(json_text)
    out = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return {"minified": out, "original_length": len(json_text), "minified_length": len(out)}


_PATH_TOKEN = re.compile(r"\.?([^.\[\]]+)|\[(-?\d+)\]")


def json_path_get(json_text: str, path: str) -> dict[str, Any]:
    """The value at a dotted path such as 'store.books[0].title' (result re-encoded as JSON)."""
    value = _load_json(json_text)
    p = str(path).strip()
    pos = 0
    cur = value
    while pos < len(p):
        m = _PATH_TOKEN.match(p, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read path {path!r} at position {pos}")
        key, index = m.group(1), m.group(2)
        if index is not None:
            if not isinstance(cur, list):
                raise KeyError(f"{p[:pos] or '$'} is not an array")
            try:
                cur = cur[int(index)]
            except IndexError:
                raise KeyError(f"index {index} out of range at {p[:pos] or '$'}") from None
        else:
            if not isinstance(cur, dict) or key not in cur:
                raise KeyError(f"no key {key!r} at {p[:pos] or '$'}")
            cur = cur[key]
        pos = m.end()
    return {"path": p, "found": True, "type": _type_name(cur), "value_json": json.dumps(cur, ensure_ascii=False)}


def csv_to_json(csv_text: str, delimiter: str = ",") -> dict[str, Any]:
    """Rows of a CSV text with a header line as a list of objects."""
    if len(delimiter) != 1:
        raise ValueError("delimiter must be a single character")
    reader = csv.DictReader(io.StringIO(_text(csv_text, "csv_text")), delimiter=delimiter)
    rows = [dict(r) for r in reader]
    if reader.fieldnames is None:
        raise ValueError("the CSV text has no header line")
    return {"columns": list(reader.fieldnames), "count": len(rows), "rows": rows}


def json_to_csv(json_text: str, delimiter: str = ",") -> dict[str, Any]:
    """A JSON array of flat objects as CSV text (columns = union of keys)."""
    if len(delimiter) != 1:
        raise ValueError("delimiter must be a single character")
    value = _load_json(json_text)
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        raise ValueError("json_text must be an array of objects")
    columns: list[str] = []
    for r in value:
        columns.extend(k for k in r if k not in columns)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, delimiter=delimiter, lineterminator="\n")
    writer.writeheader()
    for r in value:
        writer.writerow({k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in r.items()})
    return {"columns": columns, "rows": len(value), "csv": buf.getvalue()}


# ------------------------------------------------------------------------------ colours
_NAMED = MappingProxyType({
    "black": "000000", "white": "ffffff", "red": "ff0000", "lime": "00ff00", "green": "008000", "blue": "0000ff",
    "yellow": "ffff00", "cyan": "00ffff", "magenta": "ff00ff", "gray": "808080", "grey": "808080",
    "silver": "c0c0c0", "maroon": "800000", "olive": "808000", "purple": "800080", "teal": "008080",
    "navy": "000080", "orange": "ffa500", "pink": "ffc0cb", "brown": "a52a2a", "gold": "ffd700", "indigo": "4b0082",
    "violet": "ee82ee", "coral": "ff7f50", "salmon": "fa8072", "turquoise": "40e0d0", "beige": "f5f5dc",
    "crimson": "dc143c", "khaki": "f0e68c", "lavender": "e6e6fa",
})


def _rgb(color: str) -> tuple[int, int, int]:
    c = str(color).strip().lower()
    c = _NAMED.get(c, c).lstrip("#")
    if re.fullmatch(r"[0-9a-f]{3}", c):
        c = "".join(ch * 2 for ch in c)
    if not re.fullmatch(r"[0-9a-f]{6}", c):
        m = re.fullmatch(r"rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)", c)
        if not m or any(int(x) > 255 for x in m.groups()):
            raise ValueError(f"unknown colour {color!r}; use #rrggbb, #rgb, rgb(r,g,b) or a basic colour name")
        r, g, b = (int(x) for x in m.groups())
        return r, g, b
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def color_convert(color: str) -> dict[str, Any]:
    """A colour (hex, rgb() or name) as hex, RGB, HSL and HSV."""
    r, g, b = _rgb(color)
    h, light, s = colorsys.rgb_to_hls(r / 255, g / 255, b / 255)
    hv, sv, v = colorsys.rgb_to_hsv(r / 255, g / 255, b / 255)
    return {"hex": f"#{r:02x}{g:02x}{b:02x}", "rgb": {"r": r, "g": g, "b": b},
            "hsl": {"h": round(h * 360, 1), "s": round(s * 100, 1), "l": round(light * 100, 1)},
            "hsv": {"h": round(hv * 360, 1), "s": round(sv * 100, 1), "v": round(v * 100, 1)}}


def rgb_to_hex(red: int, green: int, blue: int) -> dict[str, Any]:
    """Hex code of an RGB colour."""
    for name, v in (("red", red), ("green", green), ("blue", blue)):
        require_range(v, name, 0, 255)
    return {"hex": f"#{red:02x}{green:02x}{blue:02x}"}


def _luminance(rgb: tuple[int, int, int]) -> float:
    def chan(c: int) -> float:
        x = c / 255
        return x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * chan(r) + 0.7152 * chan(g) + 0.0722 * chan(b)


def contrast_ratio(foreground: str, background: str) -> dict[str, Any]:
    """WCAG 2 contrast ratio of two colours and which accessibility levels it passes."""
    la, lb = _luminance(_rgb(foreground)), _luminance(_rgb(background))
    ratio = (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
    return {"ratio": round(ratio, 2), "aa_normal_text": ratio >= 4.5, "aa_large_text": ratio >= 3,
            "aaa_normal_text": ratio >= 7, "aaa_large_text": ratio >= 4.5}


# ------------------------------------------------------------------------------ declarations
def category() -> CategorySpec:
    """The Data_Encoding category."""
    b64 = ToolSpec(
        name="Base64 Toolkit",
        key="base64_toolkit",
        description="Base64 only, done right: encode UTF-8 text, decode (tolerates missing padding, URL-safe "
                    "alphabet), and check whether a string is valid Base64.",
        apis=(
            ApiSpec(base64_encode, "Base64 Encode", "Base64-encode the UTF-8 bytes of a text.",
                    (P("text", STRING, "Text to encode.", "Hello, wörld!"),
                     P("url_safe", BOOLEAN, "Use the URL-safe alphabet (- and _).")),
                    {"encoded": "str", "input_bytes": "int", "url_safe": "bool"}),
            ApiSpec(base64_decode, "Base64 Decode", "Decode Base64 to text (hex if the bytes are not UTF-8).",
                    (P("data", STRING, "Base64 data.", "SGVsbG8sIHfDtnJsZCE="),
                     P("url_safe", BOOLEAN, "Data uses the URL-safe alphabet.")),
                    {"decoded": "str", "is_utf8_text": "bool", "bytes": "int"}),
            ApiSpec(base64_validate, "Validate Base64", "Check whether a string is well-formed Base64.",
                    (P("data", STRING, "String to check.", "SGVsbG8="),),
                    {"valid_standard": "bool", "valid_url_safe": "bool", "length": "int"}),
        ),
    )
    multi = ToolSpec(
        name="Multi Encoder",
        key="multi_encoder",
        description="Encode and decode text in many schemes: base16/hex, base32, base64, base85, ascii85, URL "
                    "percent-encoding, HTML entities, ROT13, punycode (IDN), quoted-printable, unicode escapes.",
        apis=(
            ApiSpec(encode_text, "Encode Text", "Encode text with the chosen scheme.",
                    (P("text", STRING, "Text.", "münchen.de"), P("scheme", ENUM, "Encoding.", "punycode", _SCHEMES)),
                    {"scheme": "str", "encoded": "str"}),
            ApiSpec(decode_text, "Decode Text", "Decode data in the chosen scheme back to text.",
                    (P("data", STRING, "Encoded data.", "Uryyb Jbeyq"),
                     P("scheme", ENUM, "Encoding.", "rot13", _SCHEMES)),
                    {"scheme": "str", "decoded": "str", "is_utf8_text": "bool"}),
        ),
    )
    hashes = ToolSpec(
        name="Hash Generator",
        key="hash_generator",
        description="Cryptographic hashes (MD5, SHA-1, SHA-2, SHA-3, BLAKE2), HMAC signatures, CRC-32/Adler-32 "
                    "checksums and hash verification for text.",
        apis=(
            ApiSpec(hash_text, "Hash Text", "Hex and Base64 digest of a text with a chosen algorithm.",
                    (P("text", STRING, "Text.", "hello"), P("algorithm", ENUM, "Hash algorithm.", None, _ALGOS)),
                    {"algorithm": "str", "hex": "str", "base64": "str", "bits": "int"}),
            ApiSpec(hmac_sign, "HMAC Signature", "Keyed-hash message authentication code of a message.",
                    (P("message", STRING, "Message.", "GET /api/v1/orders"), P("key", STRING, "Secret key.", "s3cret"),
                     P("algorithm", ENUM, "Hash algorithm.", None, _ALGOS)),
                    {"algorithm": "str", "hex": "str", "base64": "str"}),
            ApiSpec(checksum, "Checksum", "CRC-32 and Adler-32 checksums of a text.",
                    (P("text", STRING, "Text.", "The quick brown fox jumps over the lazy dog"),),
                    {"crc32": "int", "crc32_hex": "str", "adler32": "int", "adler32_hex": "str"}),
            ApiSpec(verify_hash, "Verify Hash", "Check that a text matches an expected hex digest.",
                    (P("text", STRING, "Text.", "hello"),
                     P("expected_hex", STRING, "Expected digest.",
                       "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"),
                     P("algorithm", ENUM, "Hash algorithm.", None, _ALGOS)),
                    {"algorithm": "str", "matches": "bool", "actual_hex": "str"}),
        ),
    )
    urls = ToolSpec(
        name="URL Toolkit",
        key="url_toolkit",
        description="Work with URLs: percent-encode and decode, parse a URL into its parts and query parameters, "
                    "build a URL from a base and parameters.",
        apis=(
            ApiSpec(url_encode, "URL Encode", "Percent-encode text for a URL path or query.",
                    (P("text", STRING, "Text.", "café & crêpes/2024"),
                     P("plus_for_space", BOOLEAN, "Encode spaces as '+' (form style).")),
                    {"encoded": "str"}),
            ApiSpec(url_decode, "URL Decode", "Decode a percent-encoded string.",
                    (P("text", STRING, "Encoded text.", "caf%C3%A9%20%26%20cr%C3%AApes"),), {"decoded": "str"}),
            ApiSpec(parse_url, "Parse URL", "Scheme, host, port, path, query parameters and fragment of a URL.",
                    (P("url", STRING, "Absolute URL.",
                       "https://user@shop.example.co.uk:8443/a/b?q=shoes&size=42#top"),),
                    {"scheme": "str", "host": "str", "port": "int", "path": "str", "query": "str",
                     "params": {"q": ["list of str with length 1"], "size": ["list of str with length 1"]},
                     "fragment": "str", "username": "str"}),
            ApiSpec(build_url, "Build URL", "Append query parameters (object; list values repeat) to a base URL.",
                    (P("base_url", STRING, "Base URL.", "https://api.example.com/search"),
                     P("params", OBJECT, "Query parameters (list values repeat).",
                       {"q": "running shoes", "page": 2, "tag": ["new", "sale"]}),
                     P("fragment", STRING, "Optional fragment.")),
                    {"url": "str"}),
        ),
    )
    js = ToolSpec(
        name="JSON Toolkit",
        key="json_toolkit",
        description="JSON and CSV utilities: validate and pretty-print, minify, read a value at a path, convert "
                    "CSV with a header to JSON objects and JSON arrays of objects to CSV.",
        apis=(
            ApiSpec(format_json, "Format JSON", "Validate JSON and pretty-print it.",
                    (P("json_text", STRING, "JSON text.", '{"b": [1, 2], "a": {"c": null}}'),
                     P("indent", INTEGER, "Spaces per level (0 = one line)."), P("sort_keys", BOOLEAN, "Sort keys.")),
                    {"valid": "bool", "type": "str", "formatted": "str"}),
            ApiSpec(minify_json, "Minify JSON", "Remove insignificant whitespace from JSON.",
                    (P("json_text", STRING, "JSON text.", '{ "a" : [ 1, 2, 3 ],\n  "b" : "x" }'),),
                    {"minified": "str", "original_length": "int", "minified_length": "int"}),
            ApiSpec(json_path_get, "JSON Path Get", "Read the value at a path like 'store.books[0].title'.",
                    (P("json_text", STRING, "JSON text.", '{"store": {"books": [{"title": "Dune", "year": 1965}]}}'),
                     P("path", STRING, "Dotted path with [index] for arrays.", "store.books[0].title")),
                    {"path": "str", "found": "bool", "type": "str", "value_json": "str"}),
            ApiSpec(csv_to_json, "CSV to JSON", "Parse CSV text with a header row into a list of objects.",
                    (P("csv_text", STRING, "CSV text.", "name,age\nAda,36\nAlan,41"),
                     P("delimiter", STRING, "Field delimiter.")),
                    {"columns": ["list of str with length 2"], "count": "int",
                     "rows": [{"name": "str", "age": "str", "_list_length": 2}]}),
            ApiSpec(json_to_csv, "JSON to CSV", "Turn a JSON array of objects into CSV text.",
                    (P("json_text", STRING, "JSON array of objects.", '[{"name": "Ada", "age": 36}, {"name": "Alan"}]'),
                     P("delimiter", STRING, "Field delimiter.")),
                    {"columns": ["list of str with length 2"], "rows": "int", "csv": "str"}),
        ),
    )
    colors = ToolSpec(
        name="Color Converter",
        key="color_converter",
        description="Colour codes: convert between hex, RGB, HSL and HSV, build hex codes from RGB values, and "
                    "compute WCAG contrast ratios for accessible text colours.",
        apis=(
            ApiSpec(color_convert, "Convert Color", "A colour given as #hex, rgb(r,g,b) or a name, in all formats.",
                    (P("color", STRING, "Colour.", "#1e90ff"),),
                    {"hex": "str", "rgb": {"r": "int", "g": "int", "b": "int"},
                     "hsl": {"h": "float", "s": "float", "l": "float"}, "hsv": {"h": "float", "s": "float",
                                                                                  "v": "float"}}),
            ApiSpec(rgb_to_hex, "RGB to Hex", "The hex code of red/green/blue values 0-255.",
                    (P("red", INTEGER, "Red 0-255.", 255), P("green", INTEGER, "Green 0-255.", 165),
                     P("blue", INTEGER, "Blue 0-255.", 0)),
                    {"hex": "str"}),
            ApiSpec(contrast_ratio, "Contrast Ratio",
                    "WCAG contrast ratio between text and background colours, with AA/AAA pass flags.",
                    (P("foreground", STRING, "Text colour.", "#777777"),
                     P("background", STRING, "Background.", "white")),
                    {"ratio": "float", "aa_normal_text": "bool", "aa_large_text": "bool", "aaa_normal_text": "bool",
                     "aaa_large_text": "bool"}),
        ),
    )
    return CategorySpec(name="Data_Encoding",
                        description="Encodings, hashes, URLs, JSON/CSV conversion and colour codes.",
                        tools=(b64, multi, hashes, urls, js, colors))
