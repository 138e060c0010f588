"""What a model's server says about itself: the context window it runs with, and its tokenizer's count of a request.

`call_role` asks `Endpoints` (one per graph, in `Deps`) before fitting a prompt:

- **the window** (`facts`, probed once per endpoint and model, then cached): llama.cpp's `llama-server` says it in
  `GET /props` (`default_generation_settings.n_ctx`, the window of one slot, which is what a request gets), vLLM
  in `GET /v1/models` (`max_model_len` of the served model), Ollama in `POST /api/show` (the model's `num_ctx`
  parameter; without one the server runs `OLLAMA_DEFAULT_WINDOW` tokens, or less than the model's own
  `*.context_length`);
- **the count** (`count`, cached per request text): llama.cpp renders the request's messages and tools with the
  model's chat template (`POST /apply-template`) and tokenizes the result (`POST /tokenize`, special tokens added as
  the server adds them to a chat prompt); vLLM tokenizes a chat request itself (`POST /tokenize` with `messages` and
  `tools`). Either count is the server's own for that request: what `usage.prompt_tokens` will say.

Hosted APIs (OpenAI, Groq, Anthropic, ...) have none of these and are never asked. A server that does not answer,
answers an error or something unexpected is taken as saying nothing (each request has `PROBE_TIMEOUT` seconds in
all, and the run's deadline, however its server drips its reply; its reply is read up to `MAX_REPLY_BYTES`):
the profile's window and the estimate stand, and the run goes on. A loopback address (127.0.0.0/8, ::1,
`localhost`) is a *local* endpoint (see guard.py for how its slow calls are handled).
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import json
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
from langchain_core.messages import BaseMessage, convert_to_openai_messages

from .deadline import bounded, bounded_client, current
from .profiles import model_name, unwrap

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 5.0  # seconds for one discovery or tokenize request, all of it (not per read)
# the most bytes of one discovery or tokenize reply read (a /tokenize of a 128k-token prompt is about 1 MB)
MAX_REPLY_BYTES = 8 * 1024 * 1024
MAX_CACHED_COUNTS = 4096  # token counts kept (least recently used first out)
MIN_CALIBRATION = 200  # estimated tokens of a prompt below which its count says too little about the tokenizer
MAX_RATIO = 4.0  # the most tokens per estimated token a calibration takes
LOCAL_RATIO = 1.25  # tokens per estimated token assumed of a local endpoint before it has counted any
OLLAMA_DEFAULT_WINDOW = 4096  # Ollama's num_ctx when neither the model nor the request sets one (< 24 GiB VRAM)
OLLAMA_ROOT = "http://localhost:11434"
# hosts of hosted APIs, which say nothing about their windows or tokenizers: never probed
HOSTED = ("openai.com", "openai.azure.com", "groq.com", "anthropic.com", "together.xyz", "together.ai",
          "fireworks.ai", "mistral.ai", "deepseek.com", "x.ai", "googleapis.com", "openrouter.ai", "cohere.com",
          "cohere.ai", "perplexity.ai")


@dataclass(frozen=True)
class Endpoint:
    """Where a chat model's requests go: its base URL (OpenAI-compatible `.../v1`, or Ollama's root), the model name
    it asks for, and its client ("openai": an OpenAI-compatible API; "ollama": Ollama's own)."""

    base_url: str
    model: str
    client: str = "openai"

    @property
    def root(self) -> str:
        """The server's root URL (the base without a trailing `/v1`)."""
        return re.sub(r"/v1$", "", self.base_url.rstrip("/"))

    @property
    def host(self) -> str:
        return (urlsplit(self.base_url).hostname or "").lower()

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def hosted(self) -> bool:
        return any(self.host == h or self.host.endswith("." + h) for h in HOSTED)


def is_loopback(host: str) -> bool:
    """Whether `host` is this machine: `localhost` or a loopback address (127.0.0.0/8, ::1)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def endpoint_of(model: Any) -> Endpoint | None:
    """The endpoint of a chat model (or of the model a binding / text-mode runnable wraps): an OpenAI-compatible
    client's base URL (`openai_api_base`, else its client's, which honours `OPENAI_BASE_URL`), or an Ollama
    client's `base_url` (default `OLLAMA_HOST` or localhost:11434); None for a model without one (a scripted or
    offline model, a provider class we do not know)."""
    for layer in unwrap(model):
        fields_ = getattr(type(layer), "model_fields", None) or {}
        name = model_name(layer)
        if "openai_api_base" in fields_:
            base = getattr(layer, "openai_api_base", None)
            if not base:
                client = getattr(layer, "root_client", None)
                base = str(getattr(client, "base_url", "") or "") or os.environ.get("OPENAI_BASE_URL", "")
            return Endpoint(str(base).rstrip("/"), name) if base else None
        if type(layer).__name__ == "ChatOllama":
            host = getattr(layer, "base_url", None) or os.environ.get("OLLAMA_HOST") or OLLAMA_ROOT
            host = host if "://" in host else f"http://{host}"
            return Endpoint(host.rstrip("/"), name, "ollama")
    return None


@dataclass(frozen=True)
class ServerFacts:
    """What a server said about a model: which server it is ("llama.cpp", "vllm", "ollama"; "" when it said
    nothing), the window a request gets (None: not said), where that came from, and whether it counts a request's
    tokens (`Endpoints.count`)."""

    server: str = ""
    window: int | None = None
    source: str = ""
    tokenizer: bool = False
    slots: int = 1  # llama.cpp's `total_slots`: requests it runs at once (see `Endpoints.admitted`)

    @property
    def shared(self) -> bool:
        """Whether requests run at once may share one cache of `window` tokens: a llama-server with several slots
        (started without `--parallel`, its 4 slots run over one unified cache of `-c` tokens, each slot's `n_ctx`
        being all of it; with `--parallel N`, each has its own `-c / N`: /props says the same either way)."""
        return self.server == "llama.cpp" and self.slots > 1 and self.window is not None


NOTHING = ServerFacts()


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def llama_cpp_window(props: Any) -> int | None:
    """The window of one slot from llama-server's `/props` (`default_generation_settings.n_ctx`; older servers put
    `n_ctx` at the top)."""
    if not isinstance(props, Mapping):
        return None
    settings = props.get("default_generation_settings")
    inner = settings.get("n_ctx") if isinstance(settings, Mapping) else None
    return _positive(inner) or _positive(props.get("n_ctx"))


def vllm_window(models: Any, name: str) -> int | None:
    """`max_model_len` of the served model named `name` (or of the only one served) in vLLM's `/v1/models`."""
    data = models.get("data") if isinstance(models, Mapping) else None
    if not isinstance(data, list):
        return None
    entries = [d for d in data if isinstance(d, Mapping) and "max_model_len" in d]
    named = [d for d in entries if d.get("id") == name or d.get("root") == name]
    pick = named or (entries if len(entries) == 1 else [])
    return _positive(pick[0].get("max_model_len")) if pick else None


def ollama_window(show: Any) -> tuple[int, str] | None:
    """The window Ollama runs a model with, from `/api/show`: its `num_ctx` parameter, else the smaller of the
    server's default (`OLLAMA_DEFAULT_WINDOW`) and the model's `*.context_length`; with where it came from."""
    if not isinstance(show, Mapping) or not ("model_info" in show or "parameters" in show):
        return None
    params = show.get("parameters")
    found = re.search(r"(?m)^\s*num_ctx\s+(\d+)", params) if isinstance(params, str) else None
    if found and int(found.group(1)) > 0:  # `num_ctx 0` says nothing (as llama.cpp's n_ctx 0)
        return int(found.group(1)), "Ollama POST /api/show: num_ctx"
    info = show.get("model_info")
    trained = [v for k, v in info.items() if k.endswith(".context_length") and _positive(v)] \
        if isinstance(info, Mapping) else []
    window = min([OLLAMA_DEFAULT_WINDOW, *trained])
    return window, f"Ollama default num_ctx {OLLAMA_DEFAULT_WINDOW} (the model's num_ctx is not set)"


class Endpoints:
    """Server facts per endpoint and model (probed once), token counts per request text (bounded LRU), and windows
    learned from overflow replies. Thread-safe; one per graph (`Deps.endpoints`).

    `probe=False` asks no server: every call keeps the profile's window and the estimate."""

    def __init__(self, *, probe: bool = True, timeout: float = PROBE_TIMEOUT,
                 max_counts: int = MAX_CACHED_COUNTS) -> None:
        self.probe = probe
        self.timeout = timeout
        self._lock = threading.Lock()
        self._facts: dict[Endpoint, ServerFacts] = {}
        self._probing: dict[Endpoint, threading.Lock] = {}
        self._counts: OrderedDict[str, int] = OrderedDict()
        self._ratios: dict[Endpoint, float] = {}
        self._max_counts = max_counts
        self._room = threading.Condition(self._lock)
        self._load: dict[Endpoint, int] = {}  # tokens (prompt + max_tokens) of the requests in flight per endpoint
        self._in_flight: dict[Endpoint, int] = {}
        self.probes = 0  # discovery requests sent (for tests and logs)
        self.slot_waits = 0  # requests that waited for room in a shared cache
        self.count_requests = 0  # tokenize / apply-template requests sent

    # ---------------------------------------------------------------------------------------------- facts
    def facts(self, endpoint: Endpoint | None) -> ServerFacts:
        """What the endpoint's server says about its model (asked once; NOTHING for a hosted API, or when probing
        is off or the server says nothing)."""
        if endpoint is None or not self.probe or endpoint.hosted:
            return NOTHING
        with self._lock:
            known = self._facts.get(endpoint)
            if known is not None:
                return known
            gate = self._probing.setdefault(endpoint, threading.Lock())
        with gate:  # one probe per endpoint, however many branches ask at once
            with self._lock:
                known = self._facts.get(endpoint)
            if known is None:
                known = self._probe(endpoint)
                with self._lock:
                    known = self._facts.setdefault(endpoint, known)
                log.info("model endpoint %s (%s): %s", endpoint.base_url, endpoint.model or "?",
                         f"{known.server} window {known.window} ({known.source})" if known.server
                         else "says nothing about its window (the model profile's is used)")
            return known

    def ratio(self, endpoint: Endpoint | None) -> float:
        """The most tokens per estimated token this endpoint's replies have counted: what an estimate is scaled by
        where the server cannot count a prompt before it is sent. Before any count, 1.0 for a remote endpoint and
        `LOCAL_RATIO` for a local one (the small-vocabulary tokenizers of local models count more tokens per
        character, and Ollama cuts an over-long prompt silently)."""
        if endpoint is None:
            return 1.0
        with self._lock:
            return self._ratios.get(endpoint, LOCAL_RATIO if endpoint.loopback else 1.0)

    def calibrate(self, endpoint: Endpoint | None, counted: int, estimated: int) -> None:
        """Learn from a server's count of a prompt we estimated (its usage, or an overflow reply); small prompts
        (under `MIN_CALIBRATION` estimated tokens) say too little."""
        if endpoint is None or estimated < MIN_CALIBRATION or counted <= 0:
            return
        ratio = min(MAX_RATIO, counted / estimated)
        with self._lock:
            if ratio > self._ratios.get(endpoint, 0.0):
                self._ratios[endpoint] = max(ratio, 1.0)

    def learn_window(self, endpoint: Endpoint | None, window: int, source: str) -> None:
        """Remember the window a server stated in an overflow reply (it wins over what was probed, if smaller)."""
        if endpoint is None or window <= 0:
            return
        with self._lock:
            old = self._facts.get(endpoint, NOTHING)
            if old.window is None or window < old.window:
                self._facts[endpoint] = ServerFacts(old.server, window, source, old.tokenizer, old.slots)

    def _get(self, client: httpx.Client, url: str) -> Any:
        self.probes += 1
        return self._read(client, "GET", url, None)

    def _post(self, client: httpx.Client, url: str, body: Mapping[str, Any]) -> Any:
        return self._read(client, "POST", url, dict(body))

    def _read(self, client: httpx.Client, method: str, url: str, body: dict[str, Any] | None) -> Any:
        """The JSON of a 200 reply read within `timeout` seconds in all (and the run's deadline: deadline.py),
        whatever the server sends meanwhile; None past `MAX_REPLY_BYTES` or for another status."""
        with bounded(within=self.timeout), client.stream(method, url, json=body) as response:
            if response.status_code != 200:
                return None
            data = bytearray()
            for chunk in response.iter_bytes():
                data += chunk
                if len(data) > MAX_REPLY_BYTES:
                    log.debug("%s %s: reply over %d bytes, not read", method, url, MAX_REPLY_BYTES)
                    return None
            return json.loads(bytes(data))

    def _probe(self, endpoint: Endpoint) -> ServerFacts:
        """Ask the server (llama.cpp, then vLLM, then Ollama; Ollama only for an Ollama client)."""
        try:
            with bounded_client(self.timeout) as client:
                if endpoint.client == "openai":
                    # `?model=` and `"model"` below: a llama-server in router mode (several models on one address)
                    # answers for the model named, a single-model one ignores them
                    props = self._ask(lambda: self._get(
                        client, f"{endpoint.root}/props?model={quote(endpoint.model, safe='')}"))
                    window = llama_cpp_window(props)
                    if window:
                        return ServerFacts("llama.cpp", window, "llama.cpp GET /props: n_ctx", True,
                                           _positive(props.get("total_slots")) or 1)
                    models = self._ask(lambda: self._get(client, f"{endpoint.root}/v1/models"))
                    window = vllm_window(models, endpoint.model)
                    if window:
                        return ServerFacts("vllm", window, "vLLM GET /v1/models: max_model_len", True)
                self.probes += 1
                shown = self._ask(lambda: self._post(client, f"{endpoint.root}/api/show", {"model": endpoint.model}))
                found = ollama_window(shown)
                if found:
                    return ServerFacts("ollama", found[0], found[1], False)
        except Exception as exc:  # never let a probe break a run
            log.debug("probing %s failed: %s", endpoint.base_url, exc)
        return NOTHING

    @staticmethod
    def _ask(request: Any) -> Any:
        """A probe's JSON answer, or None when the request failed (refused, timed out, not JSON)."""
        try:
            return request()
        except (httpx.HTTPError, ValueError, OSError, RecursionError) as exc:
            log.debug("probe request failed: %s", exc)
            return None

    # ---------------------------------------------------------------------------------------------- slots
    @contextlib.contextmanager
    def admitted(self, endpoint: Endpoint | None, tokens: int, *, alone: bool = False) -> Iterator[int]:
        """Hold room for one request of `tokens` (its prompt and its `max_tokens`) in a server's shared cache
        (`ServerFacts.shared`) while it runs: it waits until it fits beside the requests in flight to that endpoint
        (one alone always goes), or, `alone`, until none is in flight. Yields how many others were in flight when
        it went. A wait keeps to the current read limits' deadline (deadline.py): past it, `TimeoutError`."""
        facts = self._facts.get(endpoint) if endpoint is not None else None
        if endpoint is None or facts is None or not facts.shared:
            yield 0
            return
        window = facts.window or 0
        waited = False
        with self._room:
            while self._in_flight.get(endpoint, 0) and (alone or self._load.get(endpoint, 0) + tokens > window):
                waited = True
                limits = current()
                left = limits.left() if limits is not None else None
                if left is not None and left[0] <= 0:
                    raise TimeoutError(f"waiting for room in {endpoint.base_url}'s shared cache: {left[1]}")
                self._room.wait(1.0 if left is None else min(1.0, left[0]))
            self.slot_waits += waited
            others = self._in_flight.get(endpoint, 0)
            self._load[endpoint] = self._load.get(endpoint, 0) + tokens
            self._in_flight[endpoint] = others + 1
        try:
            yield others
        finally:
            with self._room:
                self._load[endpoint] -= tokens
                self._in_flight[endpoint] -= 1
                self._room.notify_all()

    # ---------------------------------------------------------------------------------------------- counts
    def count(self, endpoint: Endpoint | None, facts: ServerFacts, messages: Sequence[Mapping[str, Any]],
              tools: Sequence[Any] | None) -> int | None:
        """The server's token count of a chat request with `messages` and `tools` (OpenAI format), cached per
        request text; None when the server has no tokenizer endpoint or the count failed."""
        if endpoint is None or not facts.tokenizer:
            return None
        body: dict[str, Any] = {"messages": list(messages)}
        if tools:
            body["tools"] = list(tools)
        key = hashlib.sha256(json.dumps([endpoint.base_url, endpoint.model, body], sort_keys=True,
                                        ensure_ascii=False, default=str).encode("utf-8")).hexdigest()
        with self._lock:
            if key in self._counts:
                self._counts.move_to_end(key)
                return self._counts[key]
        try:
            tokens = self._count(endpoint, facts, body)
        except httpx.TimeoutException as exc:  # a server too slow to count is not asked again: estimates
            log.info("counting on %s timed out (%s): its prompts are estimated from now on", endpoint.base_url, exc)
            with self._lock:
                known = self._facts.get(endpoint, facts)
                self._facts[endpoint] = ServerFacts(known.server, known.window, known.source, False, known.slots)
            tokens = None
        except Exception as exc:  # a count that fails leaves the estimate
            log.debug("counting on %s failed: %s", endpoint.base_url, exc)
            tokens = None
        if tokens is None:
            return None
        with self._lock:
            self._counts[key] = tokens
            while len(self._counts) > self._max_counts:
                self._counts.popitem(last=False)
        return tokens

    def _count(self, endpoint: Endpoint, facts: ServerFacts, body: dict[str, Any]) -> int | None:
        with bounded_client(self.timeout) as client:
            if facts.server == "llama.cpp":
                self.count_requests += 2
                rendered = self._post(client, f"{endpoint.root}/apply-template", {"model": endpoint.model, **body})
                prompt = rendered.get("prompt") if isinstance(rendered, Mapping) else None
                if not isinstance(prompt, str):
                    return None
                tokens = self._post(client, f"{endpoint.root}/tokenize",
                                    {"model": endpoint.model, "content": prompt, "add_special": True,
                                     "parse_special": True})
                listed = tokens.get("tokens") if isinstance(tokens, Mapping) else None
                return len(listed) if isinstance(listed, list) else None
            if facts.server == "vllm":
                self.count_requests += 1
                counted = self._post(client, f"{endpoint.root}/tokenize",
                                     {"model": endpoint.model, "add_generation_prompt": True, **body})
                return _positive(counted.get("count")) if isinstance(counted, Mapping) else None
        return None


def request_messages(model: Any, messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """`messages` as the chat model's client sends them (OpenAI format): through the client's own request builder
    when it has one (ChatOpenAI's), else langchain-core's conversion."""
    for layer in unwrap(model):
        build = getattr(layer, "_get_request_payload", None)
        if callable(build) and "openai_api_base" in (getattr(type(layer), "model_fields", None) or {}):
            try:
                payload = build(list(messages))
                sent = payload.get("messages") if isinstance(payload, Mapping) else None
                if isinstance(sent, list):
                    return sent
            except Exception as exc:  # a client that builds differently: the generic conversion
                log.debug("building the request payload failed: %s", exc)
            break
    return list(convert_to_openai_messages(list(messages)))


def sent_request(runnable: Any, messages: Sequence[BaseMessage]) -> tuple[list[dict[str, Any]], list[Any] | None]:
    """What `runnable` sends for `messages`: the messages in OpenAI format and the tool schemas. A text-mode runnable
    (`as_sent`) sends its rewritten messages (the functions listed in the system prompt) and no tools; a
    `bind_tools` binding sends the messages and its `tools`."""
    as_sent = getattr(runnable, "as_sent", None)
    if callable(as_sent):
        runnable, messages = as_sent(messages)
    kwargs = getattr(runnable, "kwargs", None)
    tools = kwargs.get("tools") if isinstance(kwargs, dict) else None
    return request_messages(runnable, messages), (list(tools) if isinstance(tools, list) else None)
