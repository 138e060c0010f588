"""The run-time context of the AnyTool graph: per-run settings read through LangGraph's `Runtime`.

`graph.invoke(input, config, context={"max_api_pool": 16, "model": "openai:gpt-4o-mini"})` overrides, for that
run only, what the graph was built with; a field left unset (None) keeps the build-time value. The fields are
every `AnyToolConfig` field except those fixed when the graph is built (`execution`, `request_timeout`,
`prompts_from`, `umi_prompts_from`), plus `model` (the
default chat model, "provider:model" or "offline"), `models` (per-role overrides) and `profile` ("paper":
`AnyToolConfig.paper()` under the other fields). The class is generated from `AnyToolConfig`, so the two cannot
drift apart; LangGraph Studio shows its fields.

A run keeps the context it started with: `init` stores its set fields (`run_context`, plain data only) in the run's
state, and a resume (`Command(resume=...)`, or `None` after a crash) that passes no context gets it back from there
(`graphs/compiled.py`). A resume that passes a context: the fields it sets replace the stored ones for that
invocation (e.g. a larger `max_seconds` for a crashed run), the fields it leaves out keep the run's values; the
stored context stays the one the run started with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, fields, is_dataclass, make_dataclass
from typing import Any, get_type_hints

from .config import PAPER_SETTINGS, AnyToolConfig, ConfigError, Profile, unknown_field_message

# fixed when the graph is built: the executor kind, and the request timeout its models' clients are made with
# and the authors' prompts (a checkout on the machine that builds the graph)
BUILD_TIME_FIELDS = frozenset({"execution", "request_timeout", "prompts_from", "umi_prompts_from"})


def _context_class() -> type:
    hints = get_type_hints(AnyToolConfig)
    specs: list[tuple[str, Any, Any]] = [
        ("model", str | None, field(default=None)),
        ("profile", Profile | None, field(default=None)),
    ]
    specs += [(f.name, hints[f.name] | None, field(default=None))
              for f in fields(AnyToolConfig) if f.name not in BUILD_TIME_FIELDS]
    cls = make_dataclass("AnyToolContext", specs, frozen=True, kw_only=True)
    cls.__module__ = __name__
    cls.__doc__ = "Per-run overrides of the graph's settings (None: the value the graph was built with)."
    return cls


AnyToolContext: Any = _context_class()


def context_values(context: Any) -> dict[str, Any]:
    """The fields a context sets (not None), from an `AnyToolContext`, a mapping, or None."""
    if context is None:
        return {}
    items = context.items() if isinstance(context, dict) else ((f.name, getattr(context, f.name))
                                                                for f in fields(context))
    return {k: v for k, v in items if v is not None}


def context_fields() -> list[str]:
    """The names of `AnyToolContext`'s fields, in declaration order."""
    return [f.name for f in fields(AnyToolContext)]


def check_context(context: Any) -> dict[str, Any]:
    """The fields a run-time context sets, checked: an unknown field (with the nearest known name and the field
    list), a field fixed at build time or a bad value is a `ConfigError` raised before the run starts."""
    if context is None:
        return {}
    if isinstance(context, Mapping):
        known = context_fields()
        for name in context:
            if name not in known and name not in BUILD_TIME_FIELDS:  # those: "fixed when the graph is built"
                raise ConfigError(unknown_field_message(str(name), known, "context field"))
    elif not (is_dataclass(context) and not isinstance(context, type)):
        raise ConfigError(f"context must be a dict of AnyToolContext fields (or an AnyToolContext), got "
                          f"{type(context).__name__}")
    values = context_values(context)
    try:  # every value checked now, not in the middle of the run
        resolve_settings(AnyToolConfig(), values)
    except ConfigError as exc:
        raise ConfigError(f"context: {exc}") from None
    return values


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, str | bool | int | float):
        return True
    if isinstance(value, list | tuple):
        return all(_plain(v) for v in value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def storable_context(values: Mapping[str, Any]) -> dict[str, Any]:
    """The context fields kept with a run's state: the plain-data ones (a model object passed as `model` is not
    data, and may hold a key: it is left out, so a resume must pass it again)."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in values.items() if _plain(v)}


def resume_context(stored: Mapping[str, Any] | None, given: Mapping[str, Any]) -> dict[str, Any]:
    """The context of a resumed run: the stored fields, with the ones this invocation sets winning."""
    return {**dict(stored or {}), **dict(given)}


def resolve_settings(base: AnyToolConfig, context: Any) -> AnyToolConfig:
    """The settings of one run: `base` (or the paper profile), overridden by the context's set fields."""
    values = context_values(context)
    values.pop("model", None)
    profile = values.pop("profile", None)
    if "models" in values:
        values["models"] = {**base.models, **values["models"]}
    unknown = sorted(set(values) - {f.name for f in fields(AnyToolConfig)} - BUILD_TIME_FIELDS)
    if unknown:
        raise ConfigError(f"unknown context field(s) {', '.join(unknown)}")
    fixed = sorted(set(values) & BUILD_TIME_FIELDS)
    if fixed:
        raise ConfigError(f"{', '.join(fixed)} cannot change per run: it is fixed when the graph is built "
                          "(create_anytool_graph(config=AnyToolConfig(...)))")
    if profile == "paper":
        base = AnyToolConfig.paper(**{f.name: getattr(base, f.name) for f in fields(base)
                                      if f.name not in PAPER_SETTINGS})
    elif profile not in (None, "default"):
        raise ConfigError(f"unknown profile {profile!r}; profiles are default, paper")
    return base.with_values(values) if values else base
