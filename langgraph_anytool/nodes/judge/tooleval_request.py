"""What a ToolEval evaluator request carries besides its prompt: the completion settings and the call form.

- **Settings.** ToolEval sends its evaluator's `completions_kwargs` with every request
  (`toolbench/tooleval/evaluators/registered_cls/tooleval.py OpenAINormalizedEvaluator.function_call`:
  `completion_kwargs = deepcopy(self.eval_config['completions_kwargs'])` ... `self.opr.request(**completion_kwargs)`),
  and `tooleval_gpt-3.5-turbo_default/config.yaml` holds `max_tokens: 1000`, `temperature: 0.2`, `timeout: 10`
  (StableToolBench and dyabel/AnyTool alike). With `--prompts-from` they are read from the checkout's YAML
  (`paper_prompts.book.completion_settings`, data, never executed), else `TOOLEVAL_SETTINGS`. The config's `model`
  is not used (the user's `--evaluator` picks the model). `timeout` is the openai>=1 client's per-request timeout
  (`client.chat.completions.create(..., timeout=10)`, StableToolBench `registered_cls/utils.py
  OpenaiPoolRequest.request`), not a body field: it is set on a hosted endpoint's client and left out for a
  loopback server, whose calls have their own stall timeout (`models/llm.py transport_options`).
  `max_tokens` goes out as the client sends it (ChatOpenAI: `max_completion_tokens`, the same cap).
- **Call form.** AnyTool's copy of ToolEval sends the legacy `functions=[f]` with `function_call={"name": f}`
  (dyabel/AnyTool `toolbench/tooleval/evaluators/registered_cls/tooleval.py function_call`); StableToolBench's sends
  `tools=[{"type": "function", "function": f}]` with `tool_choice={"type": "function", "function": {"name": f}}`
  (THUNLP-MT/StableToolBench, same file and function). A provider that refuses `functions=` (a 400 naming it) is
  sent `tools=` from then on, as the OPPO tasks do (`eval/oppo/tasks.py`), and the request record says so.
- **Seed.** AnyTool's copy sends its requests through the agents' client: `registered_cls/utils.py
  OpenaiPoolRequest.request` calls `openai_utils.py call_gpt(messages, **kwargs)`, which adds `seed=123`; so the
  `functions` form carries `seed: 123` (`ToolEvalRequest.seed`), StableToolBench's none.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel

from ...models.endpoint import endpoint_of
from ...models.llm import AUTHORS_SEED, ModelCallError
from ...models.profiles import unwrap
from ...paper_prompts import PromptBook
from ...paper_prompts.book import SETTINGS_KEY
from ...runtime import FunctionsRefusal

CallForm = Literal["functions", "tools"]
SettingsChoice = Literal["tooleval", "ours"]
SETTINGS_CHOICES: tuple[str, ...] = ("tooleval", "ours")

# tooleval_gpt-3.5-turbo_default/config.yaml completions_kwargs (StableToolBench and dyabel/AnyTool)
TOOLEVAL_SETTINGS: Mapping[str, int | float] = MappingProxyType({"max_tokens": 1000, "temperature": 0.2,
                                                                  "timeout": 10})
SETTINGS_SOURCE = "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default/config.yaml completions_kwargs"
# the call form of each protocol's authors: AnyTool's own tooleval (Eq. 2 and the in-loop judge), StableToolBench's
PROTOCOL_FORMS: Mapping[str, CallForm] = MappingProxyType({"anytool": "functions", "toolllm": "tools",
                                                           "sopr": "tools"})
_TIMEOUT_FIELDS = ("request_timeout", "default_request_timeout", "timeout")
_CAP_FIELDS = ("max_tokens", "num_predict")


def speaks_functions(model: Any) -> bool:
    """Whether `model` (or the chat model a binding wraps) is an OpenAI-compatible client, whose request can carry
    the legacy `functions=` (another provider's client would not send it as such: it gets `tools=`)."""
    return any("openai_api_base" in (getattr(type(layer), "model_fields", None) or {}) for layer in unwrap(model))


def refuses_functions(exc: BaseException) -> bool:
    """A provider's 400 that names the legacy `functions` parameter (OpenAI's "Unrecognized request argument
    supplied: functions"; not a schema error about one function)."""
    return (isinstance(exc, ModelCallError) and exc.kind in ("bad_request", "no_tool_calling")
            and re.search(r"\bfunctions\b", str(exc).lower()) is not None)


@dataclass(frozen=True)
class ToolEvalRequest:
    """How the evaluator's checks are sent: `form` (the authors' call form), `settings` (sent with each request;
    empty: ours, no temperature and the role's reply limit) and where they come from."""

    form: CallForm = "tools"
    settings: Mapping[str, int | float] = field(default_factory=lambda: TOOLEVAL_SETTINGS)
    source: str = SETTINGS_SOURCE
    seed: int | None = None  # AnyTool's copy: call_gpt's seed=123 (module docstring)
    _refusal: FunctionsRefusal = field(default_factory=FunctionsRefusal, compare=False, repr=False)

    @property
    def sent_form(self) -> CallForm:
        """The form sent now: `form`, or `tools` once the provider refused `functions=`."""
        return "tools" if self._refusal.reason is not None else self.form

    def refused(self, reason: str) -> None:
        """The provider refused `functions=`: the next checks are sent with `tools=`."""
        self._refusal.refuse(reason)

    def record(self) -> dict[str, Any]:
        """What a run or report records: the form asked and sent, the settings and their source, the refusal."""
        return {"call_form": self.form, "sent_form": self.sent_form, "settings": dict(self.settings),
                "settings_from": self.source, "seed": self.seed, "functions_refused": self._refusal.reason}


def request_for(form: CallForm, book: PromptBook | None, choice: SettingsChoice = "tooleval",
                refusal: FunctionsRefusal | None = None) -> ToolEvalRequest:
    """The request of a protocol's evaluator: `form`; ToolEval's settings, the checkout's when `book` holds its
    config (`--prompts-from`), else `TOOLEVAL_SETTINGS`; `choice="ours"`: none (our named variant). `refusal`: a
    refusal of `functions=` remembered beyond this request (a run's, `RunSignals.functions_refusal`)."""
    memory = refusal if refusal is not None else FunctionsRefusal()
    if choice == "ours":
        return ToolEvalRequest(form, MappingProxyType({}), "ours: no temperature, the judge role's reply limit",
                               _refusal=memory)
    seed = AUTHORS_SEED if form == "functions" else None
    if book is not None and SETTINGS_KEY in book.data:
        return ToolEvalRequest(form, MappingProxyType(dict(book.data[SETTINGS_KEY])),
                               f"{book.root}: {SETTINGS_SOURCE}", seed, memory)
    return ToolEvalRequest(form, TOOLEVAL_SETTINGS, SETTINGS_SOURCE, seed, memory)


def with_settings(model: Any, settings: Mapping[str, int | float]) -> tuple[Any, dict[str, Any]]:
    """`model` (a chat model, or a binding of one) copied with `settings` set on the fields its class has:
    `temperature`; `max_tokens` (ChatOllama: `num_predict`), which `call_role` then sends with each call;
    `timeout` as the client's request timeout, except for a loopback server (module docstring). Returns the model
    and the fields set (what the run record shows)."""
    chat = next((layer for layer in unwrap(model) if isinstance(layer, BaseChatModel)), None)
    if chat is None or not settings:
        return model, {}
    names = set(getattr(type(chat), "model_fields", {}) or {})
    update: dict[str, Any] = {}
    if "temperature" in settings and "temperature" in names:
        update["temperature"] = settings["temperature"]
    if "max_tokens" in settings:
        cap = next((n for n in _CAP_FIELDS if n in names), None)
        if cap is not None:
            update[cap] = int(settings["max_tokens"])
    endpoint = endpoint_of(chat)
    if "timeout" in settings and not (endpoint is not None and endpoint.loopback):
        slot = next((n for n in _TIMEOUT_FIELDS if n in names), None)
        if slot is not None:
            update[slot] = float(settings["timeout"])
    if not update:
        return model, {}
    return _rebind(model, chat, chat.model_copy(update=update)), update


def _rebind(model: Any, chat: Any, copied: Any) -> Any:
    """`model` with the chat model `chat` it wraps replaced by `copied` (bindings keep their kwargs)."""
    if model is chat:
        return copied
    bound = getattr(model, "bound", None)
    if bound is None or not hasattr(model, "model_copy"):
        return model
    return model.model_copy(update={"bound": _rebind(bound, chat, copied)})
