"""Model profiles: what a chat model can take and what it costs, looked up by its name.

A profile says a model's context window (tokens), whether it calls functions natively (else the solver writes
`Action:` / `Action Input:` text), how its calls are made (`call_mode`: "native", "constrained" or "text", None:
chosen per endpoint, see models/constrained.py), whether it may return several tool calls in one turn, and its price per million
input and output tokens (USD; `None` = unknown, then no cost is computed and a cost cap cannot be enforced).

The table below holds the models users point AnyTool at most (OpenAI, Groq, and local models served by Ollama or
vLLM). Prices are list prices as we last knew them: they change, so override them. An override maps a name pattern
to the fields it changes, e.g. ``{"my-vllm-model": {"context_window": 8192, "tool_calling": False}}``; a pattern
matches a model name that equals it or starts with it followed by `-`, `:` or `@`, after the provider prefix (``openai:``, ``ollama:``, ...) and
any organisation path (``meta-llama/``) are stripped, case-insensitively; the longest matching pattern wins.
Unknown models get `UNKNOWN` (assumed: 32k window, tool calling, one call per turn, no price).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

CALL_MODES = ("native", "constrained", "text")  # a profile's `call_mode` (see models/constrained.py)


class ProfileError(ValueError):
    """A bad model-profile override, naming the pattern and field."""


@dataclass(frozen=True)
class ModelProfile:
    """What one model can take and costs (see the module docstring)."""

    pattern: str = ""  # the table or override entry that matched ("" = unknown model)
    context_window: int = 32_768
    tool_calling: bool = True
    parallel_tool_calls: bool = False
    input_price: float | None = None  # USD per 1M input tokens
    output_price: float | None = None  # USD per 1M output tokens
    # the `max_tokens` every call of this model carries: one number for every role, or role → number (roles not
    # named keep the per-role default of fitting.ROLE_REPLY_TOKENS); None: the defaults
    max_tokens: int | Mapping[str, int] | None = None
    # how the model's function calls are made: "native" (`tools`), "constrained" (the functions in the prompt,
    # the reply held to a call by a JSON schema, models/constrained.py), "text" (Action / Action Input); None:
    # chosen per endpoint (`constrained.choose_call_mode`)
    call_mode: str | None = None

    @property
    def priced(self) -> bool:
        return self.input_price is not None and self.output_price is not None

    def reply_tokens(self, role: str) -> int | None:
        """The `max_tokens` this profile sets for `role`'s calls (None: the role's default)."""
        if isinstance(self.max_tokens, Mapping):
            return self.max_tokens.get(role)
        return self.max_tokens

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        """USD for one call's tokens, or None when the price is unknown."""
        if self.input_price is None or self.output_price is None:
            return None
        return (input_tokens * self.input_price + output_tokens * self.output_price) / 1_000_000


UNKNOWN = ModelProfile()

# name pattern → profile fields. Context windows are the providers' published limits; for Ollama models the
# server's default num_ctx is far smaller (2048-8192, set per model) than what the weights take: override
# `context_window` to what your server runs with.
KNOWN_MODELS: Mapping[str, Mapping[str, Any]] = {
    # OpenAI
    "gpt-4o-mini": {"context_window": 128_000, "parallel_tool_calls": True, "input_price": 0.15, "output_price": 0.60},
    "gpt-4o": {"context_window": 128_000, "parallel_tool_calls": True, "input_price": 2.50, "output_price": 10.00},
    "gpt-4.1-nano": {"context_window": 1_047_576, "parallel_tool_calls": True, "input_price": 0.10,
                     "output_price": 0.40},
    "gpt-4.1-mini": {"context_window": 1_047_576, "parallel_tool_calls": True, "input_price": 0.40,
                     "output_price": 1.60},
    "gpt-4.1": {"context_window": 1_047_576, "parallel_tool_calls": True, "input_price": 2.00, "output_price": 8.00},
    "gpt-4-turbo": {"context_window": 128_000, "parallel_tool_calls": True, "input_price": 10.00,
                    "output_price": 30.00},
    "gpt-4": {"context_window": 8_192, "input_price": 30.00, "output_price": 60.00},
    "gpt-3.5-turbo": {"context_window": 16_385, "parallel_tool_calls": True, "input_price": 0.50,
                      "output_price": 1.50},
    "o3-mini": {"context_window": 200_000, "input_price": 1.10, "output_price": 4.40},
    "o4-mini": {"context_window": 200_000, "input_price": 1.10, "output_price": 4.40},
    # Groq
    "llama-3.3-70b-versatile": {"context_window": 131_072, "parallel_tool_calls": True, "input_price": 0.59,
                                "output_price": 0.79},
    "llama-3.1-8b-instant": {"context_window": 131_072, "parallel_tool_calls": True, "input_price": 0.05,
                             "output_price": 0.08},
    # local models (Ollama / vLLM names): tool calling as their chat templates support it; no price, because the
    # same names are served by paid hosts too (give `"input_price": 0, "output_price": 0` for your own server)
    "llama3.1": {"context_window": 131_072},
    "llama3.2": {"context_window": 131_072},
    "llama3.3": {"context_window": 131_072},
    "llama-3.1": {"context_window": 131_072},
    "qwen2.5": {"context_window": 32_768},
    "qwen3": {"context_window": 40_960},
    "mistral": {"context_window": 32_768},
    "llama3": {"context_window": 8_192, "tool_calling": False},
    "llama2": {"context_window": 4_096, "tool_calling": False},
    "gemma": {"context_window": 8_192, "tool_calling": False},
    "phi3": {"context_window": 4_096, "tool_calling": False},
    # the tiny models that ship as PyPI packages (integrations/local_models.py), under the names `anytool serve`
    # gives them: their trained windows, and replies of 256 tokens at most, which a CPU generates in seconds to a
    # minute (3-30 tokens a second; the roles' defaults, 512-2048, let Gemma's replies run for minutes)
    "smollm2": {"context_window": 8_192, "max_tokens": 256},
    "gemma3-270m": {"context_window": 32_768, "max_tokens": 256},
    # ToolBench's and α-UMi's fine-tuned models: text-mode (Action / Action Input), LLaMA-2 context
    "toolllama": {"context_window": 8_192, "tool_calling": False},
    "alpha-umi": {"context_window": 4_096, "tool_calling": False},
}

_FIELDS = {f.name: f for f in fields(ModelProfile) if f.name != "pattern"}
MAX_PROFILES_BYTES = 10_000_000  # a model-profiles JSON file (a table of a few hundred models is ~50 KB)


def normalise(name: str) -> str:
    """A model name without provider prefix (`openai:`), organisation path (`meta-llama/`) or Ollama tag case."""
    text = name.strip().lower()
    if ":" in text and text.split(":", 1)[0] in {"openai", "groq", "ollama", "azure_openai", "together", "fireworks",
                                                   "anthropic", "google_genai", "mistralai", "deepseek", "xai"}:
        text = text.split(":", 1)[1]
    return text.rsplit("/", 1)[-1]


def unwrap(model: Any, depth: int = 8) -> Iterator[Any]:
    """`model`, then what it wraps (`bound`: a `bind_tools` binding, a text-mode runnable), at most `depth` levels."""
    while model is not None and depth > 0:
        yield model
        model, depth = getattr(model, "bound", None), depth - 1


def model_name(model: Any) -> str:
    """The name a chat model (or a runnable binding one, e.g. after `bind_tools`) was created with ("" if none)."""
    for layer in unwrap(model):
        for attr in ("model_name", "model", "model_id"):
            value = getattr(layer, attr, None)
            if isinstance(value, str) and value:
                return value
    return ""


def check_overrides(overrides: Mapping[str, Any] | None, where: str = "model_profiles") -> dict[str, dict[str, Any]]:
    """Validated overrides (pattern → fields); `ProfileError` names the pattern and field that is wrong."""
    out: dict[str, dict[str, Any]] = {}
    for pattern, values in (overrides or {}).items():
        if not isinstance(pattern, str) or not pattern.strip():
            raise ProfileError(f"{where}: a pattern must be a non-empty model name, got {pattern!r}")
        if not isinstance(values, Mapping):
            raise ProfileError(f"{where}[{pattern!r}] must be an object of profile fields "
                               f"({', '.join(_FIELDS)})")
        checked: dict[str, Any] = {}
        for key, value in values.items():
            if key not in _FIELDS:
                raise ProfileError(f"{where}[{pattern!r}]: unknown field {key!r}; fields are {', '.join(_FIELDS)}")
            if key in ("tool_calling", "parallel_tool_calls"):
                if not isinstance(value, bool):
                    raise ProfileError(f"{where}[{pattern!r}].{key} must be true or false, got {value!r}")
            elif key == "context_window":
                if not isinstance(value, int) or isinstance(value, bool) or value < 256:
                    raise ProfileError(f"{where}[{pattern!r}].context_window must be an integer ≥ 256, got {value!r}")
            elif key == "max_tokens":
                value = _check_max_tokens(value, f"{where}[{pattern!r}].max_tokens")
            elif key == "call_mode":
                if value is not None and value not in CALL_MODES:
                    raise ProfileError(f"{where}[{pattern!r}].call_mode must be one of {', '.join(CALL_MODES)} or "
                                       f"null, got {value!r}")
            elif value is not None and (not isinstance(value, int | float) or isinstance(value, bool) or value < 0):
                raise ProfileError(f"{where}[{pattern!r}].{key} must be a price ≥ 0 (USD per 1M tokens) or null, "
                                   f"got {value!r}")
            checked[key] = value
        out[normalise(pattern)] = checked
    return out


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _check_max_tokens(value: Any, where: str) -> int | dict[str, int] | None:
    """A profile's `max_tokens`: null, an integer ≥ 1, or an object of role → integer ≥ 1."""
    if value is None or _positive_int(value):
        return value
    if isinstance(value, Mapping) and value and all(isinstance(k, str) and _positive_int(v) for k, v in value.items()):
        return dict(value)
    raise ProfileError(f"{where} must be an integer ≥ 1, an object of role → integer ≥ 1 (e.g. "
                       f'{{"solver": 512}}), or null, got {value!r}')


def load_overrides(path: str | Path) -> dict[str, dict[str, Any]]:
    """Overrides from a JSON file (pattern → fields); errors name the file."""
    from ..sanitize.files import DataFileError, load_json_file

    p = Path(path)
    try:
        data = load_json_file(p, max_bytes=MAX_PROFILES_BYTES, what="model profiles file")
    except DataFileError as exc:  # missing, no regular file, too large, not JSON, too deep
        raise ProfileError(str(exc)) from None
    if not isinstance(data, Mapping):
        raise ProfileError(f"{p}: model profiles must be a JSON object of pattern → fields")
    return check_overrides(data, where=str(p))


def _matches(name: str, pattern: str) -> bool:
    """`pattern` names `name`: equal, or a prefix ending at a version or tag boundary ("gpt-4o" names
    "gpt-4o-2024-08-06" and "llama3.1" names "llama3.1:8b", but "gpt-4" does not name "gpt-4.5-preview")."""
    return name == pattern or name.startswith((pattern + "-", pattern + ":", pattern + "@"))


def _best(name: str, table: Mapping[str, Mapping[str, Any]]) -> tuple[str, Mapping[str, Any]] | None:
    """The table's longest pattern naming `name` (patterns already normalised), and its fields."""
    hits = [p for p in table if _matches(name, p)]
    if not hits:
        return None
    key = max(hits, key=len)
    return key, table[key]


_KNOWN = {normalise(p): fields_ for p, fields_ in KNOWN_MODELS.items()}


def profile_for(model: Any, overrides: Mapping[str, Any] | None = None) -> ModelProfile:
    """The profile of `model` (a name, a chat model or a binding of one): the table's longest matching pattern,
    then the longest matching override on top (overrides may also name models the table lacks)."""
    name = normalise(model if isinstance(model, str) else model_name(model))
    if not name:
        return UNKNOWN
    profile = UNKNOWN
    base = _best(name, _KNOWN)
    if base is not None:
        profile = replace(UNKNOWN, pattern=base[0], **base[1])
    extra = _best(name, check_overrides(overrides)) if overrides else None
    if extra is not None:
        profile = replace(profile, pattern=extra[0], **extra[1])
    return profile
