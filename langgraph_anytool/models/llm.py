"""Resolve chat models per role, make every model call (`call_role`: guarded against transport faults and fitted
into the context window, see guard.py and fitting.py) and account its usage from `usage_metadata`."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from typing_extensions import TypedDict

from ..config import ROLES, AnyToolConfig
from ..state import merge_usage  # noqa: F401  (moved there; importable here too)
from ..tools.executors.log_redaction import redact_secrets_in_logs
from . import plain_stream
from .deadline import ReadLimits, bounded, clients_of
from .deadline import install as bound_reads
from .endpoint import NOTHING, Endpoint, Endpoints, ServerFacts, endpoint_of, sent_request
from .fitting import (
    MIN_REPLY_TOKENS,
    Counter,
    Fitted,
    cap_kwarg,
    context_window,
    fit_counted,
    output_ceiling,
    own_reply_limit,
    reply_allowance,
    reply_limit,
)
from .guard import (
    REFUSED_MAX_WAIT,
    REFUSED_RETRIES,
    CallGuard,
    capacity_fault,
    classify,
    describe_error,
    model_secrets,
    overflow_counts,
    refused,
    retry_after,
)
from .profiles import profile_for, unwrap

log = logging.getLogger(__name__)

ModelSpec = str | BaseChatModel

# Which role falls back to which when it has no model of its own.
ROLE_FALLBACK: dict[str, str] = {
    "planner": "solver",
    "caller": "solver",
    "summarizer": "solver",
    "solvable": "tool",
    "router": "solver",
    "outline": "solver",
}

NO_MODEL_HELP = (
    "no chat model configured: pass model='openai:gpt-4o-mini' (any 'provider:model' that "
    "langchain's init_chat_model accepts, e.g. with OPENAI_BASE_URL for vLLM/Ollama) or a BaseChatModel, "
    "or set ANYTOOL_MODEL ('offline' runs the heuristic stand-in, not an LLM)"
)


class ModelNotConfiguredError(RuntimeError):
    """No model for a role; the message says how to configure one."""


# Kinds of `ModelCallError` that a later retry of the same request can overcome (a resumed batch re-runs them).
TRANSPORT_KINDS = frozenset({"rate_limited", "server_error", "connection", "timeout"})
# All kinds: the transport ones, and "context_length" (the prompt does not fit even shrunk), "auth" (401/403),
# "not_found" (unknown model), "bad_request" (another 400), "no_tool_calling" (the endpoint refuses `tools`),
# "refused" (the model declined), "configuration" (no usable model: a missing key or provider package, an unknown
# provider or role; `ModelNotConfiguredError`), "other".
CONFIG_KIND = "configuration"
ERROR_KINDS = (*sorted(TRANSPORT_KINDS), "context_length", "auth", "not_found", "bad_request", "no_tool_calling",
               "refused", "budget", "time_limit", CONFIG_KIND, "other")
# "budget": the call was not sent because it would pass the run's token budget (the run ends budget_exhausted)
BUDGET_KIND = "budget"
# "time_limit": the run's hard wall-clock limit (`max_run_seconds`) came before or during the call (the run ends
# with status time_limit)
TIME_LIMIT_KIND = "time_limit"
CUT_AT_CAP = "the reply was cut at"  # the reason of a reply cut at the token budget's cap (see `call_role`)


class ModelCallError(RuntimeError):
    """A model call that failed for good, after the retries its policy allows; `kind` (one of `ERROR_KINDS`) says
    why, `retries` how many retries were spent, `capped` which retry cap stopped them ("run" / "batch"), if one did,
    `role` whose call it was (when known), `spent` the usage of a reply that came back but is not used (a reply
    cut at the token budget's cap: its tokens were spent and count)."""

    def __init__(self, kind: str, message: str, *, retries: int = 0, capped: str | None = None,
                 role: str = "", spent: Mapping[str, Any] | None = None) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.retries = retries
        self.capped = capped
        self.role = role
        self.spent = dict(spent or {})

    def usage(self) -> dict[str, Any]:
        """What the failed call spent (its retries; the tokens of a reply it did not use), as a usage update of
        its role (empty when nothing or no role)."""
        if not self.role:
            return {}
        used = {**self.spent, **({"retries": self.retries} if self.retries else {})}
        return {self.role: used} if used else {}

    @property
    def transport(self) -> bool:
        return self.kind in TRANSPORT_KINDS


def error_kind_of(reason: str) -> str | None:
    """The `ModelCallError` kind a failure reason starts with ("rate_limited: solver model: ..."), if any."""
    head = reason.split(":", 1)[0].strip() if ":" in reason else ""
    return head if head in ERROR_KINDS else None


OFFLINE = "offline"  # the model spec of the offline stand-in (a heuristic, NOT an LLM)


DEFAULT_REQUEST_TIMEOUT = AnyToolConfig.request_timeout


def init_model(spec: ModelSpec, catalog: Any = None, *,
               request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT) -> BaseChatModel:
    """A `BaseChatModel` from a `provider:model` string (via `init_chat_model`), "offline" (the heuristic stand-in
    over `catalog`, labelled as NOT an LLM), or an instance (used as it is).

    A model made from a string gets its client's own retries switched off (`max_retries=0`, where the provider's
    class has that field) and `request_timeout` seconds per request (none for a loopback server, whose calls
    `call_role` streams with the run's `stall_timeout`): `call_role` retries, and counts, instead."""
    if isinstance(spec, BaseChatModel):
        redact_secrets_in_logs(model_secrets(spec))  # an endpoint may echo the key into httpx's log records
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ModelNotConfiguredError(NO_MODEL_HELP)
    if spec.strip() == OFFLINE:
        if catalog is None:
            raise ModelNotConfiguredError("the offline stand-in model needs the catalog the graph runs on")
        raise ModelNotConfiguredError(
            "the offline stand-in is resolved by langgraph_anytool.runtime (resolve_models, Deps.for_run); "
            "from code, pass langgraph_anytool.offline.OfflinePolicyModel(catalog=...)")
    from langchain.chat_models import init_chat_model

    try:
        model = init_chat_model(spec.strip())
    except Exception as exc:  # missing API key, provider package not installed, unknown provider, ...
        unknown = unknown_provider(spec.strip()) if "model provider" in str(exc) or "model_provider" in str(exc) else ""
        if unknown:  # a typo ("offlne", "opnai:gpt-4o"): say what was meant, not LangChain's provider list
            raise ModelNotConfiguredError(f"cannot initialise model {spec!r}: {unknown}") from None
        raise ModelNotConfiguredError(init_failure(spec.strip(), exc)) from None  # one line, not the client's chain
    redact_secrets_in_logs(model_secrets(model))  # an endpoint may echo the key into httpx's log records
    endpoint = endpoint_of(model)
    if endpoint is not None and endpoint.loopback:  # a local server: `call_role` streams and sets the timeout
        request_timeout = None
    options = client_options(type(model), request_timeout)
    if options:  # the clients are built at construction: make the model again with the options (a provider that
        # refuses an option after all keeps its defaults, as before)
        with contextlib.suppress(Exception):
            model = cast(BaseChatModel, init_chat_model(spec.strip(), **options))
    bound_clients(model)
    return model


def bound_clients(model: Any) -> None:
    """Every HTTP client of `model`, sync and async, reads within the limits in force (deadline.py): also a call
    that does not go through `call_role`, e.g. an LLM-simulated API call's `ainvoke`."""
    for client in [*clients_of(model), *clients_of(model, asynchronous=True)]:
        bound_reads(client)


def model_providers() -> list[str]:
    """The provider prefixes `init_chat_model` knows ("openai", "groq", "ollama", ...)."""
    try:
        from langchain.chat_models.base import _BUILTIN_PROVIDERS

        return sorted(_BUILTIN_PROVIDERS)
    except ImportError:  # pragma: no cover - an older langchain
        return ["anthropic", "google_genai", "groq", "mistralai", "ollama", "openai", "together"]


def unknown_provider(spec: str) -> str:
    """Why `spec` names no model, with the nearest name we or LangChain know ("did you mean 'offline'?"), when
    its provider is neither given among the known ones nor inferable; "" when the provider is known."""
    import difflib

    providers = model_providers()
    prefix, sep, name = spec.partition(":")
    if sep and prefix in providers:
        return ""
    if sep:
        close = difflib.get_close_matches(prefix, providers, n=1, cutoff=0.6)
        hint = f"did you mean {close[0] + ':' + name!r}? " if close else ""
        return f"unknown provider {prefix!r}; {hint}providers are {', '.join(providers)}"
    close = difflib.get_close_matches(spec, [OFFLINE, *providers], n=1, cutoff=0.6)
    if close and close[0] == OFFLINE:
        hint = f"did you mean {OFFLINE!r} (the heuristic stand-in, not an LLM)? "
    else:
        hint = f"did you mean {close[0] + ':<model>'!r}? " if close else ""
    return (f"no provider given and none can be inferred from the name; {hint}write 'provider:model' (providers: "
            f"{', '.join(providers)}) or {OFFLINE!r}")


OFFLINE_HINT = "model 'offline' (--offline) runs the rule-based stand-in, not an LLM, without one"
API_KEY_NAME = re.compile(r"\b[A-Z][A-Z0-9_]*_API_KEY\b")


def init_failure(spec: str, exc: Exception) -> str:
    """One line saying why `init_chat_model(spec)` failed and what to do: the key to set (a missing credential),
    the package to install (a provider whose LangChain package is absent), else the client's own message."""
    text = " ".join(str(exc).split())
    keys = sorted(set(API_KEY_NAME.findall(text)))
    if keys and ("api_key" in text.lower() or "credential" in text.lower()):
        return (f"model {spec!r} needs an API key: set {' or '.join(keys[:2])}, or pass a BaseChatModel made with "
                f"api_key=...; {OFFLINE_HINT}")
    if isinstance(exc, ImportError):
        package = re.search(r"\b(langchain-[a-z0-9-]+)", text)
        name = package.group(1) if package else (exc.name or "its LangChain package")
        return (f"model {spec!r} needs {name}, which is not installed (pip install {name}), or use the provider's "
                "OpenAI-compatible endpoint: model 'openai:<model>' with OPENAI_BASE_URL (Groq: "
                f"https://api.groq.com/openai/v1) and OPENAI_API_KEY; {OFFLINE_HINT}")
    return f"cannot initialise model {spec!r}: {text}"


def client_options(model_class: type, request_timeout: float | None) -> dict[str, Any]:
    """Constructor options switching a chat model class's own retries off and setting its request timeout, for
    the fields the class has (ChatOpenAI, ChatGroq, ChatAnthropic, ... name them differently; unknown fields would
    be sent to the API as model parameters, so only known ones are set)."""
    names = set(getattr(model_class, "model_fields", {}) or {})
    out: dict[str, Any] = {}
    if "max_retries" in names:
        out["max_retries"] = 0
    if request_timeout is not None:
        for name in ("request_timeout", "default_request_timeout", "timeout"):
            if name in names:
                out[name] = request_timeout
                break
    return out


@dataclass(frozen=True)
class ModelSet:
    """One chat model per role, with fall-backs (planner → solver → default).

    May be empty: a graph can be built (and drawn, e.g. in Studio) without a model; the first model call then
    raises `ModelNotConfiguredError` saying how to configure one. Resolved with `defer=True`, a model that cannot
    be made now (a missing API key, a provider package not installed) is kept as its one-line error (`unmade`,
    role → message, "" for the default) and raised by the first call that needs it; a model given later for that
    role (a run's context) replaces it.
    """

    default: BaseChatModel | None
    by_role: Mapping[str, BaseChatModel]
    request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT  # for models made from strings (see `init_model`)
    unmade: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def resolve(cls, model: ModelSpec | None, models: Mapping[str, ModelSpec] | None = None, *,
                catalog: Any = None, request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
                defer: bool = False) -> ModelSet:
        spec = model if model is not None else os.environ.get("ANYTOOL_MODEL")
        return cls(default=None, by_role={}, request_timeout=request_timeout).with_overrides(
            spec or None, models or {}, catalog=catalog, defer=defer)

    def with_overrides(self, model: ModelSpec | None, models: Mapping[str, ModelSpec], *,
                       catalog: Any = None, defer: bool = False) -> ModelSet:
        """A copy whose default and per-role models are replaced where given (`defer`: see the class)."""
        by_role, unmade = dict(self.by_role), dict(self.unmade)

        def made(key: str, spec: ModelSpec) -> BaseChatModel | None:
            try:
                built = init_model(spec, catalog, request_timeout=self.request_timeout)
            except ModelNotConfiguredError as exc:
                if not defer:
                    raise
                unmade[key] = str(exc)
                return None
            unmade.pop(key, None)
            return built

        for role, m in models.items():
            if role not in ROLES:
                raise ModelNotConfiguredError(f"unknown model role {role!r}; roles are {', '.join(ROLES)}")
            by_role.pop(role, None)
            own = made(role, m)
            if own is not None:
                by_role[role] = own
        default = made("", model) if model is not None else self.default
        return ModelSet(default=default, by_role=by_role, request_timeout=self.request_timeout, unmade=unmade)

    def for_role(self, role: str) -> BaseChatModel:
        seen = role
        while True:
            if seen in self.by_role:
                return self.by_role[seen]
            if seen in self.unmade:
                raise ModelNotConfiguredError(self.unmade[seen])
            if seen not in ROLE_FALLBACK:
                break
            seen = ROLE_FALLBACK[seen]
        if self.default is None:
            raise ModelNotConfiguredError(self.unmade.get("", f"no model for role {role!r}: {NO_MODEL_HELP}"))
        return self.default

    def has_own(self, role: str) -> bool:
        return role in self.by_role


# usage keys (per role) of how calls were fitted and sent (issue 26), kept in each eval record beside the counts:
# `fit_counted` / `fit_estimated` (calls whose prompt the server's tokenizer counted / that were fitted on our
# estimate), `overflows` (overflow replies met by fitting again), `timeouts` (timed-out requests),
# `cut_at_max_tokens` (replies that stopped at the call's max_tokens), `trimmed` (prompts cut to fit),
# `functions_dropped` (pooled functions a solver call left out to fit), `no_call_ends` (agent activations ended by
# `max_turns_without_call`), `uncapped` (calls sent without a reply limit: `reply_caps="local"`, paper())
FUNCTIONS_DROPPED = "functions_dropped"
NO_CALL_ENDS = "no_call_ends"
# `capacity_faults` (replies saying a server's shared cache was full, met by waiting for it: see `call_role`)
CALL_USAGE_KEYS = ("fit_counted", "fit_estimated", "overflows", "timeouts", "cut_at_max_tokens", "trimmed",
                   FUNCTIONS_DROPPED, NO_CALL_ENDS, "capacity_faults", "uncapped")


class RoleUsage(TypedDict, total=False):
    model_calls: int
    input_tokens: int
    output_tokens: int
    estimated_tokens: int  # tokens estimated (chars / 4) because the provider sent no usage metadata
    cost_usd: float  # from the model's profile price (absent when the price is unknown)
    retries: int  # transport retries spent on the call (guard.py)
    trimmed: int  # 1 when the prompt was cut to fit the context window (fitting.py)


def message_usage(msg: BaseMessage, prompt: list[BaseMessage] | None = None) -> RoleUsage:
    """Usage of one model call; estimates (labelled) when the provider gives no metadata."""
    meta = getattr(msg, "usage_metadata", None) if isinstance(msg, AIMessage) else None
    # a streamed reply from an OpenAI-compatible server without `stream_usage` carries zero counts: estimate then
    if meta and (int(meta.get("input_tokens", 0)) or int(meta.get("output_tokens", 0))):
        used: RoleUsage = {"model_calls": 1, "input_tokens": int(meta.get("input_tokens", 0)),
                           "output_tokens": int(meta.get("output_tokens", 0))}
        if (getattr(msg, "response_metadata", None) or {}).get("estimated_usage"):  # e.g. the offline stand-in
            used["estimated_tokens"] = used["input_tokens"] + used["output_tokens"]
        return used
    chars_in = sum(len(str(m.content)) for m in prompt or [])
    chars_out = len(str(msg.content)) + sum(len(str(tc.get("args", ""))) for tc in getattr(msg, "tool_calls", []) or [])
    est_in, est_out = chars_in // 4, chars_out // 4
    return {"model_calls": 1, "input_tokens": est_in, "output_tokens": est_out, "estimated_tokens": est_in + est_out}


def total_tokens(usage: Mapping[str, Any]) -> int:
    """Input + output tokens over every role of a usage dict."""
    return sum(int(v.get("input_tokens", 0)) + int(v.get("output_tokens", 0))
               for v in usage.values() if isinstance(v, Mapping))


# Metadata keys every model call of the graph carries (LangSmith / Studio show them; the offline stand-in reads them).
ROLE_KEY = "anytool_role"
INPUTS_KEY = "anytool_inputs"


def role_config(config: RunnableConfig | None, role: str, inputs: Mapping[str, Any] | None = None) -> RunnableConfig:
    """`config` for one model call of `role`: the run's config plus the role (metadata and a tag) and the call's
    structured inputs (plain JSON data: query, scope, ...), so a model or tracer needs no prompt parsing."""
    base: dict[str, Any] = dict(config or {})
    metadata = {**(base.get("metadata") or {}), ROLE_KEY: role, INPUTS_KEY: dict(inputs or {})}
    tags = [*(base.get("tags") or []), f"anytool:{role}"]
    return cast(RunnableConfig, {**base, "metadata": metadata, "tags": tags})


def call_role(
    model: Runnable[Any, BaseMessage],
    role: str,
    prompt: list[BaseMessage],
    config: RunnableConfig | None = None,
    *,
    inputs: Mapping[str, Any] | None = None,
    on_usage: Callable[[RoleUsage], Any] | None = None,
    profiles: Mapping[str, Any] | None = None,
    guard: CallGuard | None = None,
    texts: bool = True,
) -> tuple[AIMessage, RoleUsage]:
    """One model call of `role`: invoked with the role-tagged run config, the reply as an `AIMessage`, its usage
    (from `usage_metadata`, labelled estimates otherwise; `cost_usd` from the model's profile, see `profiles.py`,
    with `profiles` overrides; `retries`, `trimmed`, `fit_counted` / `fit_estimated`, `overflows`, `timeouts`,
    `cut_at_max_tokens` when they happened), reported once to `on_usage`.

    The prompt is first fitted into the context window (fitting.py: the window the server states, counted by the
    server's tokenizer where it has one, see endpoint.py; `texts=False` leaves long texts uncut) and the call
    carries the role's `max_tokens`. Transport faults are retried under `guard` (guard.py; by default the guard
    `on_usage` carries, as `Deps.meter` makes them, else the default policy without caps); a call to a local
    server is streamed and its timeouts are not sent again; an overflow reply is met by fitting again to the
    counts it states (twice at most). A provider error that remains raises `ModelCallError(kind, ...)` (API keys
    masked); an exception that is no recognised provider error propagates unchanged: each caller decides what a
    failed call means for its node."""
    guard = guard if guard is not None else getattr(on_usage, "guard", None)
    if not isinstance(guard, CallGuard):
        guard = CallGuard()
    bound_clients(model)  # its reads keep to the limits set below (deadline.py), whatever the server sends
    for client in clients_of(model):
        plain_stream.install(client)  # a plain JSON reply to a streamed request is read as the completion
    with bounded(guard.deadline()):  # discovery, counting and the call itself end by the run's deadline
        return _call_role(model, role, prompt, config, inputs=inputs, on_usage=on_usage, profiles=profiles,
                          guard=guard, texts=texts)


def _call_role(model: Runnable[Any, BaseMessage], role: str, prompt: list[BaseMessage],
               config: RunnableConfig | None, *, inputs: Mapping[str, Any] | None,
               on_usage: Callable[[RoleUsage], Any] | None, profiles: Mapping[str, Any] | None, guard: CallGuard,
               texts: bool) -> tuple[AIMessage, RoleUsage]:
    profile = profile_for(model, profiles)
    endpoints, endpoint = guard.endpoints, endpoint_of(model)
    facts = endpoints.facts(endpoint) if endpoints is not None else NOTHING
    window = context_window(profile, facts.window)
    reply = reply_limit(model, role, profile, window)
    count = _counter(endpoints, endpoint, facts)
    ratio = endpoints.ratio(endpoint) if endpoints is not None else 1.0
    fitted = fit_counted(model, prompt, window - reply, count, ratio=ratio, texts=texts)
    if fitted.tokens > window - reply:  # nothing left to cut: not sent
        how = "by the server's count" if fitted.counted else "estimated"
        raise ModelCallError("context_length", f"{role} model: the prompt takes {fitted.tokens} tokens ({how}), "
                             f"over the {window - reply} of the {window}-token window left beside {reply} for the "
                             "reply, with nothing left to cut; not sent", role=role)
    used_extra: dict[str, int] = {}  # timeouts and overflows met (a failed call's usage keeps them too)
    runnable, messages, trimmed = fitted.runnable, fitted.messages, fitted.trimmed
    # the run's token budget must hold counting this call: its prompt and its reply (its `max_tokens`, capped at
    # what the budget has left)
    cap, reply_tokens, budget_bound = reply_cap(model, reply, fitted.tokens, guard.room(), window)
    uncapped = cap is not None and not budget_bound and sends_no_cap(model, role, endpoint, guard)
    if uncapped:  # `reply_caps="local"`: a hosted call goes out as the authors' do, without a reply limit
        cap = None
    refusal = guard.admit(fitted.tokens + reply_tokens)
    if refusal is not None:
        raise ModelCallError(BUDGET_KIND, f"{role} model: {refusal}", role=role)
    retries, overflows, capacity, alone = 0, 0, 0, False
    run_config = role_config(config, role, inputs)
    while True:
        capping = {cast(str, cap_kwarg(model)): cap} if cap is not None else {}
        left = _time_left(guard)
        if left is not None and left <= 0:
            raise ModelCallError(TIME_LIMIT_KIND, f"{role} model: the run's time limit was reached before the "
                                 "call was sent", retries=retries, role=role)
        options, watch = transport_options(model, endpoint, guard, left)
        if options and endpoints is not None and endpoints.facts(endpoint).shared:
            # every request in one slot: the cache an idle slot keeps (llama-server keeps each slot's prompt for
            # reuse) would otherwise hold room that the next request, in another slot, needs
            options["extra_body"] = {"id_slot": SHARED_SLOT}
        others = 0
        try:
            # a server whose slots share one cache runs this request once it fits beside those in flight
            with _admitted(endpoints, endpoint, fitted.tokens + (cap or reply), alone) as others, \
                    bounded(stall=guard.stall_timeout if watch is not None else None) as limits:
                if watch is not None:
                    watch.limits = limits
                reply_msg = runnable.invoke(messages, _watched(run_config, watch), **capping, **options,
                                            **authors_seed(model, role, guard))
            break
        except Exception as exc:
            if watch is not None and watch.counts:  # the server's usage came before the read was cut (e.g. at the
                # deadline, while the stream's end had not come): its counts are spent and recorded
                for key, value in watch.counts.items():
                    used_extra[key] = used_extra.get(key, 0) + value
                if on_usage is not None:
                    on_usage(cast(RoleUsage, dict(watch.counts)))
            kind = classify(exc)
            if kind is None:
                raise
            if capacity_fault(exc) and capacity < MAX_CAPACITY_WAITS:
                # the server's shared cache was full: never the same request at once again; it waits until no
                # other request is in flight, and a request that was alone already is fitted smaller
                capacity += 1
                used_extra["capacity_faults"] = used_extra.get("capacity_faults", 0) + 1
                if others:
                    alone = True
                    continue
                kind = "context_length"
            left = _time_left(guard)
            if left is not None and left <= DEADLINE_SLACK:  # cut at the run's deadline, whatever the fault's kind
                if kind == "timeout":
                    used_extra["timeouts"] = used_extra.get("timeouts", 0) + 1
                raise ModelCallError(TIME_LIMIT_KIND, f"{role} model: the run's time limit was reached during "
                                     "the call", retries=retries, role=role, spent=used_extra) from exc
            if kind == "context_length" and overflows < MAX_OVERFLOW_FITS:
                overflows += 1
                again = _refit(exc, runnable, messages, fitted, window, reply, endpoints, endpoint, count, texts)
                if again is not None:
                    fitted, window, reply = again
                    runnable, messages, trimmed = fitted.runnable, fitted.messages, trimmed or fitted.trimmed
                    cap, _, budget_bound = reply_cap(model, reply, fitted.tokens, guard.room(), window)
                    cap = None if uncapped else cap
                    continue
            if kind == "timeout":
                used_extra["timeouts"] = used_extra.get("timeouts", 0) + 1
                if endpoint is not None and guard.is_local(endpoint):  # the same long request would only start over
                    raise _call_error(kind, role, exc, model, retries, None, overflows > 0,
                                      note=_timeout_note(options, watch, endpoint), spent=used_extra) from exc
            capped = None
            dead = kind == "connection" and endpoint is not None and guard.is_local(endpoint) and refused(exc)
            if dead and retries >= REFUSED_RETRIES and endpoint is not None:  # nothing listens on the local port
                raise _call_error(kind, role, exc, model, retries, None, overflows > 0,
                                  note=f" — nothing listens at {endpoint.base_url} (is the server running?)",
                                  spent=used_extra) from exc
            if kind in TRANSPORT_KINDS and retries < guard.policy.retries:
                capped = guard.timeout_gate() if kind == "timeout" else None
                capped = capped or guard.gate()
                if capped is None:
                    wait = guard.policy.wait(retries, retry_after(exc), guard.rng)
                    wait = min(wait, REFUSED_MAX_WAIT) if dead else wait
                    left = _time_left(guard)
                    guard.sleep(wait if left is None else max(0.0, min(wait, left)))
                    retries += 1
                    continue
            if overflows:
                used_extra["overflows"] = overflows
            raise _call_error(kind, role, exc, model, retries, capped, overflows > 0, spent=used_extra) from exc
    ai = reply_msg if isinstance(reply_msg, AIMessage) else AIMessage(content=reply_msg.content)
    used = message_usage(ai, messages)
    # the counts of attempts cut after their usage came (metered then), added to this reply's after `on_usage`
    earlier = {key: used_extra.pop(key) for key in COUNT_KEYS if key in used_extra}
    if endpoints is not None and not fitted.counted and not used.get("estimated_tokens"):
        endpoints.calibrate(endpoint, int(used.get("input_tokens", 0)), fitted.after)
    cost = profile.cost(int(used.get("input_tokens", 0)), int(used.get("output_tokens", 0)))
    if cost is not None:
        used["cost_usd"] = cost
    if retries:
        used["retries"] = retries
    if trimmed:
        used["trimmed"] = 1
    if overflows:
        used_extra["overflows"] = overflows
    cut = cut_at_length(ai)
    if cut:
        used_extra["cut_at_max_tokens"] = 1
    used_extra["fit_counted" if fitted.counted else "fit_estimated"] = 1
    if uncapped:
        used_extra["uncapped"] = 1  # the run record's usage says how many calls went out without a reply limit
    used.update(used_extra)  # type: ignore[typeddict-item]
    log.debug("%s call: prompt %d tokens (%s) of a %d-token window (%s), max_tokens %s", role, fitted.tokens,
              "the server's count" if fitted.counted else "estimated", window, facts.source or "model profile", cap)
    if on_usage is not None:
        on_usage(used)
    summed = cast(dict[str, Any], used)
    for key, value in earlier.items():
        summed[key] = int(summed.get(key, 0)) + value
    if budget_bound and cut:  # cut at the budget's cap: its tokens are spent, the reply unused
        budget = f"token budget of {guard.token_budget} tokens" if guard.token_budget else "token budget"
        raise ModelCallError(BUDGET_KIND, f"{role} model: {budget} reached: {CUT_AT_CAP} {cap} tokens, what "
                             f"the budget had left after its prompt (about {fitted.tokens} tokens, "
                             f"{'counted' if fitted.counted else 'estimated'})", role=role, retries=retries,
                             spent=used)
    return ai, used


COUNT_KEYS = ("model_calls", "input_tokens", "output_tokens")  # a server's counts of one reply (`_StreamWatch`)
MAX_OVERFLOW_FITS = 2  # overflow replies met by fitting again, per call
SHARED_SLOT = 0  # the llama-server slot every request to a shared cache is sent to (`id_slot`)
MAX_CAPACITY_WAITS = 2  # "context size has been exceeded" replies met by waiting for the cache, per call


def _admitted(endpoints: Endpoints | None, endpoint: Endpoint | None, tokens: int,
              alone: bool) -> contextlib.AbstractContextManager[int]:
    """Room in the endpoint's shared cache for one request (`Endpoints.admitted`; none to hold without one)."""
    if endpoints is None:
        return contextlib.nullcontext(0)
    return endpoints.admitted(endpoint, tokens, alone=alone)


# the roles whose calls the authors send without `max_tokens`: dyabel/AnyTool `openai_utils.py call_gpt` (the
# agents of scripts/main.py, the solvability check of anytool/verifier.py); the solver's carry 1024
# (`toolbench/inference/LLM/chatgpt_function_model.py chat_completion_request`), our solver role's own limit
UNCAPPED_ROLES: tuple[str, ...] = ("meta", "category", "tool", "solvable")


AUTHORS_SEED = 123  # dyabel/AnyTool openai_utils.py call_gpt: `client.chat.completions.create(seed=123, ...)`
# the roles whose calls go through call_gpt: the uncapped ones, and the DFSDT solver (chatgpt_function_model.py
# `chat_completion_request` → `call_gpt`, which adds the seed whatever the caller sends)
SEEDED_ROLES: tuple[str, ...] = (*UNCAPPED_ROLES, "solver")


def authors_seed(model: Any, role: str, guard: CallGuard) -> dict[str, int]:
    """`{"seed": 123}` for a call of `SEEDED_ROLES` under `reply_caps="local"` (paper(): these calls go out as
    the authors' `call_gpt` sends them, whatever the endpoint: a seed decides no window) to a ChatOpenAI-family
    model (OpenAI, vLLM, llama.cpp, Ollama's OpenAI API: the OpenAI request's `seed`) that sets none itself; else
    nothing (the judge's seed is its request's own, `judge/tooleval_request.py`; another client's `seed`, e.g.
    ChatOllama's, is an option of its own)."""
    if guard.reply_caps != "local" or role not in SEEDED_ROLES:
        return {}
    for layer in unwrap(model):
        if any(c.__name__ == "BaseChatOpenAI" for c in type(layer).__mro__):
            return {} if getattr(layer, "seed", None) is not None else {"seed": AUTHORS_SEED}
    return {}


def sends_no_cap(model: Any, role: str, endpoint: Endpoint | None, guard: CallGuard) -> bool:
    """Whether a call goes out without a reply limit: under `reply_caps="local"` (paper()), a call of one of
    `UNCAPPED_ROLES` to an endpoint that is not local (a hosted API, or a model without an endpoint), for a model
    that sets no limit of its own, without a token budget (whose room caps the reply)."""
    return (guard.reply_caps == "local" and role in UNCAPPED_ROLES
            and (endpoint is None or not guard.is_local(endpoint))
            and own_reply_limit(model) is None and guard.token_budget is None)


def _counter(endpoints: Endpoints | None, endpoint: Endpoint | None, facts: ServerFacts) -> Counter | None:
    """The server's count of a prompt as a runnable sends it (None when the server cannot count)."""
    if endpoints is None or endpoint is None or not facts.tokenizer:
        return None

    def count(runnable: Any, messages: list[BaseMessage]) -> int | None:
        sent, tools = sent_request(runnable, messages)
        return endpoints.count(endpoint, facts, sent, tools)

    return count


def _refit(exc: BaseException, runnable: Any, messages: list[BaseMessage], fitted: Fitted, window: int, reply: int,
           endpoints: Endpoints | None, endpoint: Endpoint | None, count: Counter | None,
           texts: bool) -> tuple[Fitted, int, int] | None:
    """The prompt fitted again after an overflow reply, to the window and prompt size it states (else as if the
    prompt were twice what it was counted or estimated at): (fitted, window, reply), or None when nothing would
    change."""
    stated, served = overflow_counts(exc)
    new_window = min(window, served) if served else window
    if served is not None and endpoints is not None:
        endpoints.learn_window(endpoint, served, "the server's overflow reply")
    if stated is not None and endpoints is not None and not fitted.counted:
        endpoints.calibrate(endpoint, stated, fitted.after)
    new_reply = max(1, min(reply, new_window // 2))
    room = new_window - new_reply
    if count is not None:
        again = fit_counted(runnable, messages, room, count, texts=texts)
    else:
        sent = stated or fitted.tokens * 2
        again = fit_counted(runnable, messages, room, None, ratio=max(1.0, sent / max(1, fitted.after)), texts=texts)
    if not again.trimmed and new_window == window and new_reply == reply:
        return None
    return again, new_window, new_reply


def reply_cap(model: Any, reply: int, prompt_tokens: int, left: int | None, window: int
              ) -> tuple[int | None, int, bool]:
    """The `max_tokens` to send with a call (None: the model's class takes none per call), the reply tokens the
    token budget counts before the call, and whether the budget set the cap (a reply cut there is not used).

    `reply`: the role's `max_tokens` (`reply_limit`), never more than the window less the prompt, nor more than
    the model's output limit (langchain's profile); under a token budget (`left`: what it has left for the call,
    None: no budget) also at most `left - prompt_tokens`. Below `MIN_REPLY_TOKENS` of budget room the call is not
    sent. A model class without a per-call `max_tokens` (`cap_kwarg` None, e.g. ChatOllama) is sent none: the
    budget counts its own limit, else `REPLY_ALLOWANCE`."""
    if cap_kwarg(model) is None:
        own = reply_allowance(model)
        if left is not None and left - prompt_tokens < MIN_REPLY_TOKENS:
            return None, max(own, MIN_REPLY_TOKENS), False
        return None, own, False
    cap = max(1, min(reply, window - prompt_tokens))
    ceiling = output_ceiling(model)
    if ceiling is not None:
        cap = min(cap, ceiling)
    if left is None:
        return cap, cap, False
    room = left - prompt_tokens
    if room < MIN_REPLY_TOKENS:
        return None, max(cap, MIN_REPLY_TOKENS), False  # not sent: the reply would have no room
    return min(cap, room), min(cap, room), room < cap


DEADLINE_SLACK = 1.0  # seconds: a call that failed this close to the run's deadline was cut by it


class _StreamWatch(BaseCallbackHandler):
    """Watches a streamed call: when its first reply token came (a silent server is told apart from a slow one),
    how many chunks arrived; each token restarts the stall count of the call's read limits (deadline.py), which
    cut the stream, so that nothing is raised here (a time limit is a status, not a callback error)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.first_token: float | None = None  # seconds after the start
        self.chunks = 0
        self.limits: ReadLimits | None = None
        self.counts: dict[str, int] = {}  # the server's usage chunk, once it came (a call cut after it keeps it)

    def on_llm_new_token(self, token: Any, *, chunk: Any = None, **kwargs: Any) -> None:
        self.chunks += 1
        message = getattr(chunk, "message", None)
        meta = getattr(message, "usage_metadata", None)
        if meta and (int(meta.get("input_tokens", 0)) or int(meta.get("output_tokens", 0))):
            self.counts = {"model_calls": 1, "input_tokens": int(meta.get("input_tokens", 0)),
                           "output_tokens": int(meta.get("output_tokens", 0))}
        if token or getattr(message, "tool_call_chunks", None):
            if self.first_token is None:
                self.first_token = time.monotonic() - self.started
            if self.limits is not None:
                self.limits.token()


def _time_left(guard: CallGuard) -> float | None:
    deadline = guard.deadline()
    return None if deadline is None else deadline - time.time()


def _chat_layer(model: Any) -> Any:
    """The chat model under bindings and text-mode wrappers (the last layer `unwrap` yields)."""
    layers = list(unwrap(model))
    return layers[-1] if layers else model


def transport_options(model: Any, endpoint: Endpoint | None, guard: CallGuard, left: float | None
                      ) -> tuple[dict[str, Any], _StreamWatch | None]:
    """Per-call options for an OpenAI-compatible client (ChatOpenAI and its kin; other classes get none): a local
    server's call is streamed with its usage (`stream_local`; not when the model was made with `streaming=False` or
    `disable_streaming`), so that it is waited for while it sends and cut when it stays silent `stall_timeout`
    seconds (the model's own timeout, when it sets one, wins; other calls keep the client's own); any call's
    timeout is cut to the time the run has left. Returns the options and the stream's watch (None: not
    streamed)."""
    chat = _chat_layer(model)
    names = getattr(type(chat), "model_fields", None) or {}
    if "openai_api_base" not in names:
        return {}, None
    options: dict[str, Any] = {}
    own = getattr(chat, "request_timeout", None)
    own = float(own) if isinstance(own, int | float) and not isinstance(own, bool) else None
    refused = getattr(chat, "disable_streaming", False) is not False or (
        "streaming" in getattr(chat, "model_fields_set", ()) and getattr(chat, "streaming", None) is False)
    streamed = (endpoint is not None and guard.stream_local and guard.is_local(endpoint) and "stream_usage" in names
                and not refused)
    if streamed:
        options["stream"] = True
        if not ("stream_usage" in getattr(chat, "model_fields_set", ()) and chat.stream_usage is False):
            options["stream_usage"] = True  # the server's counts (a user's explicit stream_usage=False is kept)
    timeout = own if own is not None else (guard.stall_timeout if streamed else None)
    if left is not None:
        timeout = max(0.5, min(timeout if timeout is not None else left, left))
    if timeout is not None:
        options["timeout"] = timeout
    return options, (_StreamWatch() if streamed else None)


def _watched(config: RunnableConfig, watch: _StreamWatch | None) -> RunnableConfig:
    """`config` with the stream's watch among its callbacks (a list, or a copy of the callback manager)."""
    if watch is None:
        return config
    callbacks = config.get("callbacks")
    if isinstance(callbacks, BaseCallbackManager):
        manager = callbacks.copy()
        manager.add_handler(watch, inherit=True)
        return cast(RunnableConfig, {**config, "callbacks": manager})
    return cast(RunnableConfig, {**config, "callbacks": [*(callbacks or []), watch]})


def _timeout_note(options: Mapping[str, Any], watch: _StreamWatch | None, endpoint: Endpoint) -> str:
    """Why a local server's timed-out call is not sent again, and what the silence was."""
    limit = options.get("timeout")
    waited = f" {limit:g} s" if isinstance(limit, int | float) else ""
    if watch is None:
        what = f"no reply within{waited}"
    elif watch.first_token is None:
        what = f"no reply token within{waited} (the server may still have been reading the prompt)"
    else:
        what = (f"the reply stalled: nothing for{waited} after {watch.chunks} chunks (first token after "
                f"{watch.first_token:.1f} s)")
    return (f" — {what}; the local server at {endpoint.base_url} would compute the same request again from the "
            "start, so it is not sent again (raise stall_timeout for a slower server)")


def cut_at_length(reply: AIMessage) -> bool:
    """Whether a reply stopped at its `max_tokens` (OpenAI-compatible `finish_reason` "length", Anthropic's
    `stop_reason` "max_tokens", Ollama's `done_reason` "length")."""
    meta = getattr(reply, "response_metadata", None) or {}
    return (meta.get("finish_reason") in ("length", "max_tokens") or meta.get("stop_reason") == "max_tokens"
            or meta.get("done_reason") == "length")


def _call_error(kind: str, role: str, exc: BaseException, model: Any, retries: int, capped: str | None,
                shrunk: bool, note: str = "", spent: Mapping[str, Any] | None = None) -> ModelCallError:
    """The `ModelCallError` of a call that failed for good, e.g. "rate_limited: solver model: HTTP 429: ... after 6
    retries (run retry cap)"; secrets of the model masked."""
    detail = describe_error(exc, model_secrets(model))
    after = f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries or kind in TRANSPORT_KINDS else ""
    cap = f" ({capped} retry cap)" if capped else ""
    if kind == "context_length":
        detail += (" (the prompt does not fit the model's context window, even cut to the counts the server "
                   "stated)" if shrunk else " (the prompt does not fit the model's context window and has nothing "
                   "left to cut)")
    return ModelCallError(kind, f"{role} model: {detail}{note}{after}{cap}", retries=retries, capped=capped,
                          role=role, spent=spent)
