"""Read an HTTP response body under a byte cap that counts DECODED bytes (compression bombs stop at the cap).

httpx decodes `Content-Encoding` chunk by chunk with no bound: one 64 KB chunk of gzip can become 64 MB, a few
hundred bytes of zstd several gigabytes, and stacked encodings (`gzip, gzip`) multiply the ratios. Here the raw
bytes are read with `aiter_raw` and decoded by bounded decoders that never produce more than the bytes still
allowed (plus one, to know the body was cut):

- gzip and deflate: zlib with `max_length`;
- zstd: a `zstandard` stream writer whose sink stops at the cap;
- br: only when the `brotli` module offers bounded output (`output_buffer_limit`); otherwise not advertised;
- more than one encoding (`gzip, gzip`) and unknown encodings are refused (`EncodingRefused`).

The raw bytes read are capped too (twice the cap plus 64 KB), so a stream that decodes to almost nothing still ends.
`accept_encoding()` is the `Accept-Encoding` header to send: only what can be decoded this way.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Callable
from typing import Any, Protocol

import httpx

DEFAULT_MAX_RESPONSE_BYTES = 1_000_000  # every network executor's default cap on a response body (decoded)
_RAW_SLACK = 65_536


class EncodingRefused(Exception):
    """A `Content-Encoding` this reader will not decode (stacked, unknown, or not boundable)."""


class _Decoder(Protocol):
    def feed(self, data: bytes, room: int) -> bytes: ...

    def flush(self, room: int) -> bytes: ...


class _Identity:
    def feed(self, data: bytes, room: int) -> bytes:
        return data[:room]

    def flush(self, room: int) -> bytes:
        return b""


class _Zlib:
    """gzip (`wbits=31`) or deflate (zlib-wrapped, falling back to raw deflate like httpx does)."""

    def __init__(self, wbits: int, raw_fallback: bool = False) -> None:
        self._obj = zlib.decompressobj(wbits)
        self._raw_fallback = raw_fallback
        self._started = False

    def feed(self, data: bytes, room: int) -> bytes:
        if self._raw_fallback and not self._started:
            self._started = True
            try:
                return self._obj.decompress(data, room)
            except zlib.error:
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
        return self._obj.decompress(data, room)

    def flush(self, room: int) -> bytes:
        return self._obj.flush()[:room] if room > 0 else b""


class _CapReached(Exception):
    pass


class _Sink:
    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.room = 0

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.parts.append(chunk[: self.room])
        self.room -= len(chunk)
        if self.room < 0:
            raise _CapReached
        return len(chunk)

    def take(self) -> bytes:
        out = b"".join(self.parts)
        self.parts.clear()
        return out


class _Zstd:
    def __init__(self) -> None:
        import zstandard

        self._sink = _Sink()
        self._writer = zstandard.ZstdDecompressor().stream_writer(self._sink, write_size=65_536)  # type: ignore[arg-type]

    def feed(self, data: bytes, room: int) -> bytes:
        self._sink.room = room
        with contextlib.suppress(_CapReached):  # the sink stops the writer once the cap is passed
            self._writer.write(data)
        return self._sink.take()

    def flush(self, room: int) -> bytes:
        return b""


class _Brotli:
    def __init__(self, factory: Callable[[], Any]) -> None:
        self._obj = factory()

    def feed(self, data: bytes, room: int) -> bytes:
        out: bytes = self._obj.process(data, output_buffer_limit=max(room, 1))
        return out

    def flush(self, room: int) -> bytes:
        return b""


def _brotli_factory() -> Callable[[], Any] | None:
    """brotli's Decompressor when it can bound its output (brotli ≥ 1.2), else None."""
    try:
        import brotli
    except ImportError:
        return None
    factory = getattr(brotli, "Decompressor", None)
    if factory is None:
        return None
    try:
        factory().process(b"", output_buffer_limit=1)
    except TypeError:
        return None
    except Exception:  # empty input may be an error for some versions; the keyword was accepted
        pass
    return factory


def _zstd_available() -> bool:
    try:
        import zstandard  # noqa: F401
    except ImportError:
        return False
    return True


def supported_encodings() -> tuple[str, ...]:
    """Content encodings decoded under the cap, in preference order."""
    found = ["gzip", "deflate"]
    if _zstd_available():
        found.append("zstd")
    if _brotli_factory() is not None:
        found.append("br")
    return tuple(found)


def accept_encoding() -> str:
    """The `Accept-Encoding` value to send: only encodings this module decodes under a cap."""
    return ", ".join(supported_encodings())


def decoder_for(content_encoding: str) -> _Decoder:
    """The bounded decoder for a `Content-Encoding` value; `EncodingRefused` for stacked or unknown encodings."""
    names = [n.strip().lower() for n in content_encoding.split(",")]
    names = [n for n in names if n and n != "identity"]
    if len(names) > 1:
        raise EncodingRefused(f"refused a response with stacked content encodings ({content_encoding.strip()!r}): "
                              "at most one encoding is decoded")
    if not names:
        return _Identity()
    name = names[0]
    if name in ("gzip", "x-gzip"):
        return _Zlib(16 + zlib.MAX_WBITS)
    if name == "deflate":
        return _Zlib(zlib.MAX_WBITS, raw_fallback=True)
    if name == "zstd" and _zstd_available():
        return _Zstd()
    if name == "br":
        factory = _brotli_factory()
        if factory is not None:
            return _Brotli(factory)
    raise EncodingRefused(f"refused a response with content encoding {name!r}: it cannot be decoded under the "
                          f"response cap (supported: {accept_encoding()})")


async def read_capped(resp: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """(the decoded body cut at `limit` bytes, whether it was cut). Stops reading as soon as the cap is passed.

    Raises `EncodingRefused` before reading the body when its encoding is stacked or unknown, and `zlib.error` /
    `zstandard.ZstdError` for a corrupt stream (callers report those as a protocol failure).
    """
    decoder = decoder_for(resp.headers.get("content-encoding", ""))
    parts: list[bytes] = []
    size = raw = 0
    raw_limit = 2 * limit + _RAW_SLACK
    async for chunk in resp.aiter_raw():
        raw += len(chunk)
        out = decoder.feed(chunk, limit - size + 1)
        parts.append(out)
        size += len(out)
        if size > limit or raw > raw_limit:
            return b"".join(parts)[:limit], True
    tail = decoder.flush(limit - size + 1)
    parts.append(tail)
    size += len(tail)
    return b"".join(parts)[:limit], size > limit
