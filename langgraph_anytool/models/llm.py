"""Resolve chat models per role, make every model call (`call_role`: guarded against transport faults and fitted
into the context window, see guard.py and fitting.py) and account its usage from `usage_metadata`."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from typing_extensions import TypedDict

from ..config import ROLES, AnyToolConfig
from ..state import merge_usage  # noqa: F401  (moved there; importable here too)
from ..tools.executors.log_redaction import redact_secrets_in_logs
from .fitting import (
    MIN_REPLY_TOKENS,
    SAFETY,
    bound_tools,
    cap_kwarg,
    estimate_tokens,
    fit_prompt,
    output_ceiling,
    reply_allowance,
    reply_reserve,
)
from .guard import CallGuard, classify, describe_error, model_secrets, retry_after
from .profiles import profile_for

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
# "refused" (the model declined), "other".
ERROR_KINDS = (*sorted(TRANSPORT_KINDS), "context_length", "auth", "not_found", "bad_request", "no_tool_calling",
               "refused", "budget", "other")
# "budget": the call was not sent because it would pass the run's token budget (the run ends budget_exhausted)
BUDGET_KIND = "budget"
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
    class has that field) and `request_timeout` seconds per request: `call_role` retries, and counts, instead."""
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
        raise ModelNotConfiguredError(init_failure(spec.strip(), exc)) from None  # one line, not the client's chain
    redact_secrets_in_logs(model_secrets(model))  # an endpoint may echo the key into httpx's log records
    options = client_options(type(model), request_timeout)
    if not options:
        return model
    try:  # the clients are built at construction: make the model again with the options
        return cast(BaseChatModel, init_chat_model(spec.strip(), **options))
    except Exception:  # the provider refuses an option after all: its defaults, as before
        return model


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
    raises `ModelNotConfiguredError` saying how to configure one.
    """

    default: BaseChatModel | None
    by_role: Mapping[str, BaseChatModel]
    request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT  # for models made from strings (see `init_model`)

    @classmethod
    def resolve(cls, model: ModelSpec | None, models: Mapping[str, ModelSpec] | None = None, *,
                catalog: Any = None, request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT) -> ModelSet:
        spec = model if model is not None else os.environ.get("ANYTOOL_MODEL")
        return cls(default=None, by_role={}, request_timeout=request_timeout).with_overrides(
            spec or None, models or {}, catalog=catalog)

    def with_overrides(self, model: ModelSpec | None, models: Mapping[str, ModelSpec], *,
                       catalog: Any = None) -> ModelSet:
        """A copy whose default and per-role models are replaced where given."""
        by_role = dict(self.by_role)
        for role, m in models.items():
            if role not in ROLES:
                raise ModelNotConfiguredError(f"unknown model role {role!r}; roles are {', '.join(ROLES)}")
            by_role[role] = init_model(m, catalog, request_timeout=self.request_timeout)
        default = init_model(model, catalog, request_timeout=self.request_timeout) if model is not None \
            else self.default
        return ModelSet(default=default, by_role=by_role, request_timeout=self.request_timeout)

    def for_role(self, role: str) -> BaseChatModel:
        seen = role
        while True:
            if seen in self.by_role:
                return self.by_role[seen]
            if seen not in ROLE_FALLBACK:
                break
            seen = ROLE_FALLBACK[seen]
        if self.default is None:
            raise ModelNotConfiguredError(f"no model for role {role!r}: {NO_MODEL_HELP}")
        return self.default

    def has_own(self, role: str) -> bool:
        return role in self.by_role


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
) -> tuple[AIMessage, RoleUsage]:
    """One model call of `role`: invoked with the role-tagged run config, the reply as an `AIMessage`, its usage
    (from `usage_metadata`, labelled estimates otherwise; `cost_usd` from the model's profile, see `profiles.py`,
    with `profiles` overrides; `retries` and `trimmed` when the guard spent any), reported once to `on_usage`.

    The prompt is first fitted into the profile's context window (fitting.py). Transport faults are retried under
    `guard` (guard.py; by default the guard `on_usage` carries, as `Deps.meter` makes them, else the default
    policy without caps); a `context_length_exceeded` answer is met once by fitting to half the estimate that
    failed. A provider error that remains raises `ModelCallError(kind, ...)` (API keys masked); an exception that is
    no recognised provider error propagates unchanged: each caller decides what a failed call means for its node."""
    guard = guard if guard is not None else getattr(on_usage, "guard", None)
    if not isinstance(guard, CallGuard):
        guard = CallGuard()
    profile = profile_for(model, profiles)
    window = profile.context_window
    fitted = fit_prompt(model, prompt, int((window - reply_reserve(model, window)) * SAFETY))
    runnable, messages, trimmed = fitted.runnable, fitted.messages, fitted.trimmed
    # the run's token budget must hold counting this call: its prompt (estimated) and its reply, capped at what
    # the budget has left when the model's class takes a per-call `max_tokens`
    prompt_tokens = estimate_tokens(messages, bound_tools(runnable))
    cap, reply_tokens = budget_cap(model, prompt_tokens, guard.room(), window)
    refusal = guard.admit(prompt_tokens + reply_tokens)
    if refusal is not None:
        raise ModelCallError(BUDGET_KIND, f"{role} model: {refusal}", role=role)
    capping = {cast(str, cap_kwarg(model)): cap} if cap is not None else {}
    retries, shrunk = 0, False
    run_config = role_config(config, role, inputs)
    while True:
        try:
            reply = runnable.invoke(messages, run_config, **capping)
            break
        except Exception as exc:
            kind = classify(exc)
            if kind is None:
                raise
            if kind == "context_length" and not shrunk:  # our estimate was too low: once more, at half of it
                sent = estimate_tokens(messages, bound_tools(runnable))
                fitted = fit_prompt(runnable, messages, sent // 2)
                if fitted.trimmed:
                    runnable, messages, trimmed, shrunk = fitted.runnable, fitted.messages, True, True
                    continue
            capped = None
            if kind in TRANSPORT_KINDS and retries < guard.policy.retries:
                capped = guard.gate()
                if capped is None:
                    guard.sleep(guard.policy.wait(retries, retry_after(exc), guard.rng))
                    retries += 1
                    continue
            raise _call_error(kind, role, exc, model, retries, capped, shrunk) from exc
    ai = reply if isinstance(reply, AIMessage) else AIMessage(content=reply.content)
    used = message_usage(ai, messages)
    cost = profile.cost(int(used.get("input_tokens", 0)), int(used.get("output_tokens", 0)))
    if cost is not None:
        used["cost_usd"] = cost
    if retries:
        used["retries"] = retries
    if trimmed:
        used["trimmed"] = 1
    if on_usage is not None:
        on_usage(used)
    if cap is not None and cut_at_length(ai):  # cut at the budget's cap: its tokens are spent, the reply unused
        budget = f"token budget of {guard.token_budget} tokens" if guard.token_budget else "token budget"
        raise ModelCallError(BUDGET_KIND, f"{role} model: {budget} reached: {CUT_AT_CAP} {cap} tokens, what "
                             f"the budget had left after its prompt (about {prompt_tokens} tokens, estimated)",
                             role=role, retries=retries, spent=used)
    return ai, used


def budget_cap(model: Any, prompt_tokens: int, left: int | None, window: int) -> tuple[int | None, int]:
    """The `max_tokens` to send with a call under a token budget (None: none), and the reply tokens the budget
    counts before the call.

    `left`: what the budget has left for the call (None: no budget), `prompt_tokens` the prompt's estimate. The
    reply is capped at `left - prompt_tokens` when the model's class takes a per-call `max_tokens` (`cap_kwarg`),
    never above the model's own `max_tokens`, and only when the cap is below what the model could write anyway (its
    output limit from langchain's profile, and the context window less the prompt: a larger `max_tokens` is refused
    by some servers and would change nothing). Below `MIN_REPLY_TOKENS` the call is not sent. A model class without
    the keyword keeps the look-ahead without a cap (its own `max_tokens` counted, else `REPLY_ALLOWANCE`)."""
    own = reply_allowance(model)
    if left is None or cap_kwarg(model) is None:
        return None, own
    cap = left - prompt_tokens
    if cap < MIN_REPLY_TOKENS:
        return None, max(own, MIN_REPLY_TOKENS)  # not sent: the reply would have no room
    if own and own <= cap:  # the model's own, smaller max_tokens holds
        return None, own
    ceiling = min(c for c in (output_ceiling(model), window - prompt_tokens) if c is not None)
    if not own and cap >= ceiling:  # the model cannot write more than the budget has left
        return None, own
    return cap, cap


def cut_at_length(reply: AIMessage) -> bool:
    """Whether a reply stopped at its `max_tokens` (OpenAI-compatible `finish_reason` "length", Anthropic's
    `stop_reason` "max_tokens", Ollama's `done_reason` "length")."""
    meta = getattr(reply, "response_metadata", None) or {}
    return (meta.get("finish_reason") in ("length", "max_tokens") or meta.get("stop_reason") == "max_tokens"
            or meta.get("done_reason") == "length")


def _call_error(kind: str, role: str, exc: BaseException, model: Any, retries: int, capped: str | None,
                shrunk: bool) -> ModelCallError:
    """The `ModelCallError` of a call that failed for good, e.g. "rate_limited: solver model: HTTP 429: ... after 6
    retries (run retry cap)"; secrets of the model masked."""
    detail = describe_error(exc, model_secrets(model))
    after = f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries or kind in TRANSPORT_KINDS else ""
    cap = f" ({capped} retry cap)" if capped else ""
    if kind == "context_length":
        detail += (" (the prompt does not fit the model's context window, even cut to half its estimate)" if shrunk
                   else " (the prompt does not fit the model's context window and has nothing left to cut)")
    return ModelCallError(kind, f"{role} model: {detail}{after}{cap}", retries=retries, capped=capped, role=role)
