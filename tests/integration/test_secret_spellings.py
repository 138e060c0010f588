"""Secrets in other spellings (issue 28, point 15): a server that reflects the key upper-cased, base64-encoded (standard
and URL-safe, with and without padding, inside a longer text), URL-encoded, in hex, or split (separators, line
breaks, two halves) had it stored verbatim in the response cache and the results. Real loopback servers; every
stored byte, observation and log record is checked for every spelling."""

from __future__ import annotations

import base64
import json
import logging
import urllib.parse
from pathlib import Path

import pytest

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.catalog.models import Api, Category, Param, Tool
from langgraph_anytool.models.guard import mask_secrets
from langgraph_anytool.tools.executors.http import HttpExecutor
from langgraph_anytool.tools.executors.secret_masking import mask_values, normal_form, spellings
from langgraph_anytool.tools.executors.virtual import VirtualServerExecutor
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.servers import FunctionServer, Request, Response

KEY = "sk-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0"


def spelled(key: str) -> dict[str, str]:
    """The spellings a hostile or careless server may reflect a key in."""
    raw = key.encode()
    return {
        "upper": key.upper(),
        "lower-mixed": key[:10].lower() + key[10:].upper(),
        "base64": base64.b64encode(raw).decode(),
        "base64-unpadded": base64.b64encode(raw).decode().rstrip("="),
        "base64-urlsafe": base64.urlsafe_b64encode(raw).decode(),
        "base64-urlsafe-unpadded": base64.urlsafe_b64encode(raw).decode().rstrip("="),
        "base64-inside": base64.b64encode(b"user=demo&key=" + raw + b"&v=2").decode(),
        "base64-shifted": base64.b64encode(b"k:" + raw).decode(),
        "base64-mime": "\r\n".join(base64.b64encode(raw * 2).decode()[i:i + 19] for i in range(0, 112, 19)),
        "url": urllib.parse.quote(key, safe=""),
        "url-every-byte": "".join(f"%{b:02X}" for b in raw),
        "url-form": urllib.parse.urlencode({"k": key + " x"}),
        "hex": raw.hex(),
        "hex-upper": raw.hex().upper(),
        "hex-colons": ":".join(f"{b:02x}" for b in raw),
        "spaced": " ".join(key),
        "dashed": "-".join(key[i:i + 4] for i in range(0, len(key), 4)),
        "line-breaks": "\n".join(key[i:i + 7] for i in range(0, len(key), 7)),
        "halves": f"{key[:20]} ... and later ... {key[20:]}",
        "uneven-halves": f"{key[:26]} / {key[26:]}",
    }


SPELLED = spelled(KEY)


def _pieces(key: str) -> list[str]:
    """What must not survive anywhere: every spelling, and each half of the key."""
    return [*SPELLED.values(), key, key[:20], key[20:], key[:26], base64.b64encode(key.encode()).decode()[4:40]]


def _leaks(blob: str) -> list[str]:
    found = [name for name, text in SPELLED.items() if text in blob]
    found += [f"piece {p[:8]}..." for p in _pieces(KEY) if p in blob]
    norm = normal_form(blob)
    found += [f"a run of {form[:8]}..." for form in spellings(KEY)
              for i in range(len(form) - 11) if form[i:i + 12] in norm]
    return sorted(set(found))


def _api(name: str) -> Api:
    return Api(id=f"Cat/tool/{name}", name=name, tool_key="tool", tool_name="Tool", category="Cat", path=f"/{name}",
               params=(Param("q"),))


async def test_reflected_spellings_are_never_stored(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Through the whole pipeline (validation, SQLite cache, HttpExecutor): bodies, error messages, headers and
    reason phrases that reflect the key in every spelling; nothing stored or logged holds any of them."""
    async def reflect(req: Request) -> Response:
        name = req.path.strip("/")
        sent = req.headers.get("x-rapidapi-key", "")
        text = spelled(sent)[name.removeprefix("err-")]
        if name.startswith("err-"):
            return Response.json({"message": f"key {text} is not subscribed"}, 403,
                                 headers=[("X-Echo", urllib.parse.quote(text))])
        return Response.json({"echo": text, "nested": [{"again": text}], "q": req.query.get("q")})

    caplog.set_level(logging.DEBUG)
    names = [*SPELLED, *(f"err-{n}" for n in SPELLED)]
    cat = Catalog([Category("Cat", tools=(Tool("tool", "Tool", "Cat", apis=tuple(_api(n) for n in names)),))])
    outputs: list[str] = []
    with FunctionServer(reflect) as srv:
        pipe = ApiExecutor.for_catalog(cat, kind="http", cache_path=tmp_path / "calls.sqlite", cache_errors=True,
                                       base_urls={"Cat/tool": srv.url}, headers_from_env={"X-RapidAPI-Key": "RK"},
                                       environ={"RK": KEY}, allow_private=True)
        try:
            for name in names:
                for _ in range(2):  # the second call is served from the cache
                    obs = await pipe.acall(f"Cat/tool/{name}", {"q": "hello"})
                    outputs += [json.dumps(obs.to_dict()), pipe.render(obs)]
                    logging.getLogger("app").warning("observation %s", obs.to_dict())
        finally:
            await pipe.aclose()
        assert len(srv.requests) == len(names)
    assert outputs and "***" in outputs[0]
    stored = "\n".join(f.read_bytes().decode("utf-8", "replace") for f in tmp_path.iterdir())
    assert "***" in stored
    assert _leaks("\n".join(outputs)) == []
    assert _leaks(stored) == []
    assert _leaks(caplog.text + "\n".join(r.getMessage() for r in caplog.records)) == []


async def test_the_virtual_servers_key_is_masked_in_every_spelling() -> None:
    async def reflect(req: Request) -> Response:
        key = json.loads(req.body)["toolbench_key"]
        return Response.json({"error": "", "response": json.dumps(spelled(key))})

    with FunctionServer(reflect) as srv:
        ex = VirtualServerExecutor(srv.url, toolbench_key=KEY, retries=0)
        try:
            obs = await ex.aexecute(_api("v"), {})
        finally:
            await ex.aclose()
    assert obs.ok and set(obs.content) == set(SPELLED)
    assert _leaks(json.dumps(obs.to_dict())) == []


def test_log_records_and_provider_errors_mask_every_spelling(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    executor = HttpExecutor(headers={"X-Auth": KEY})  # registers the key with the log-record factory
    for name, text in SPELLED.items():
        logging.getLogger("any.library").info("%s: server said %s", name, text)
    assert len(caplog.records) == len(SPELLED) and "***" in caplog.text
    assert _leaks(caplog.text) == []
    lines = [mask_secrets(f"HTTP 401: {text}", (KEY,)) for text in SPELLED.values()]
    assert _leaks("\n".join(lines)) == []
    del executor


def test_ordinary_text_is_left_alone() -> None:
    other = "pk-live-0123456789abcdef0123456789abcdef"  # (a key sharing a prefix such as sk-test- shares pieces)
    text = json.dumps({"tools": ["Currency Exchange", "Weather Forecast"], "hash": "9f86d081884c7d659a2feaa0c55ad015",
                       "token": base64.b64encode(other.encode()).decode(), "other": other.upper(),
                       "words": "the quick brown fox jumps over the lazy dog " * 20, "n": [1.5, 2, 3e10]})
    assert mask_values(text, [KEY]) == text
    assert mask_values("short text", [KEY]) == "short text"


def test_a_short_secret_is_masked_only_exactly() -> None:
    """Under 8 letters and digits, other spellings would match ordinary text: only the exact value is masked."""
    assert mask_values("pw=ab12 or AB12", ["ab12"]) == "pw=*** or AB12"
