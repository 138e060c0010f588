"""Text-mode tool calling for models without native function calling (e.g. α-UMi's fine-tuned checkpoints served
by vLLM): function calls are written as text in α-UMi's caller format (α-UMi Appendix A.2)

    Action: <function name>
    Action Input: <JSON object>

`parse_action` reads that format, `render_action` writes it, `TextToolRunnable` makes a chat model behave like a
tool-bound one (tool list and reply format appended to the system prompt, earlier calls and observations shown as
text, the reply parsed into `tool_calls`). `bind_role_tools` is the one hook the nodes that call functions use
(solver, α-UMi caller, retriever agents): native binding, or text mode when the role is listed in
`AnyToolConfig.text_mode_roles`, when the model's profile says it cannot call functions (`tool_calling=False`,
see `profiles.py`), or when the endpoint refused `tools` earlier in the run (`refuses_tools` classifies that
refusal; the nodes then retry the call in text mode and remember the role's fallback for the run).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig

from ...models.call_stream import streamed_text_call
from ...models.constrained import (
    ConstrainedToolRunnable,
    PromptedToolRunnable,
    bound_config,
    choose_call_mode,
    function_of,
    grammar_kwargs,
    served_by_llama_cpp,
    with_extra_body,
    with_reply_metadata,
)
from ...models.guard import classify
from ...models.llm import call_role
from ...models.profiles import profile_for
from ...protocol import (  # noqa: F401  (moved there; importable here too)
    _ACTION,
    _END_MARKERS,
    _INPUT,
    ParsedAction,
    _first_json_object,
    action_message,
    calls_as_text,
    parse_action,
    render_action,
    text_of,
    thought_of,
)
from . import text_prompts

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from ...config import AnyToolConfig
    from ...models.endpoint import Endpoints
    from ...runtime import Deps


def messages_as_text(messages: Sequence[BaseMessage], tools: Sequence[Mapping[str, Any]]) -> list[BaseMessage]:
    """The prompt for a text-mode model: the tool list and reply format appended to the system message, earlier
    calls written as `Action:` lines and observations as user messages (no tool-call structure left)."""
    listing = "\n".join(json.dumps(function_of(t), ensure_ascii=False) for t in tools)
    names = ", ".join(str(function_of(t).get("name")) for t in tools)
    system_text = "\n\n".join(text_of(m) for m in messages if isinstance(m, SystemMessage))
    appendix = text_prompts.TEXT_TOOLS.format(functions=listing, tool_names=names)
    if "Action Input:" in system_text:  # the prompt states the format already (α-UMi caller profile)
        appendix = text_prompts.TEXT_TOOLS_LIST.format(functions=listing)
    return calls_as_text(messages, appendix, render_action)


class TextToolRunnable(PromptedToolRunnable):
    """A chat model called in text mode with a fixed tool list; replies come back with parsed `tool_calls`."""

    def as_sent(self, messages: Sequence[BaseMessage]) -> tuple[Runnable[Any, BaseMessage], list[BaseMessage]]:
        """The model this runnable calls and the messages it sends it for `messages` (what a server counts)."""
        return self.model, messages_as_text(messages, self.tools)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> BaseMessage:
        messages = list(input) if isinstance(input, Sequence) and not isinstance(input, str) else [
            HumanMessage(content=str(input))]
        sent = messages_as_text(messages, self.tools)
        # where the run streams, the text streams as content, then the parsed call as tool_call_chunks (call_stream.py)
        with streamed_text_call(self.model, sent, bound_config(config)) as (run_config, relay):
            reply = self.model.invoke(sent, run_config, **kwargs)
            parsed = action_message(text_of(reply), id_prefix="text")
            out = with_reply_metadata(parsed, reply)
            if relay is not None:
                relay.end(out)
        return out


class GrammarTextToolRunnable(TextToolRunnable):
    """A text-mode runnable whose reply a llama.cpp server holds to one `Action:` / `Action Input:` call of its tools
    (a GBNF grammar, `constrained.action_grammar`): a small model writes the call the protocol needs."""

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> BaseMessage:
        return super().invoke(input, config, **with_extra_body(kwargs, grammar_kwargs(self.model, self.constraint)))


def is_text_mode(config: AnyToolConfig, role: str, model: Any = None) -> bool:
    """Whether `role` writes its calls as text: listed in `text_mode_roles`, or its model's profile (with the
    config's `model_profiles` overrides) says so (`call_mode` "text", or no native function calling)."""
    if role in config.text_mode_roles:
        return True
    return model is not None and choose_call_mode(model, profile_for(model, config.model_profiles)) == "text"


def format_inputs(config: AnyToolConfig, role: str, *, text: bool | None = None) -> dict[str, Any]:
    """The reply format a role's call expects, as structured inputs for the call's metadata (a model or a tracer
    needs no prompt parsing to know it): `text_mode` (function calls written as `Action:` / `Action Input:` text;
    `text`: the mode of the runnable actually called, else the configured one) for the roles that call functions,
    and `umi_prompts` (the prompt profile) for α-UMi's roles."""
    out: dict[str, Any] = {}
    if role in ("solver", "caller"):
        out["text_mode"] = is_text_mode(config, role) if text is None else text
    if role in ("planner", "caller", "summarizer"):
        out["umi_prompts"] = config.umi_prompts
    return out


def bind_role_tools(model: BaseChatModel, config: AnyToolConfig, role: str, tools: Sequence[Mapping[str, Any]],
                    *, text: bool = False, endpoints: Endpoints | None = None,
                    constraint: Sequence[Mapping[str, Any]] | None = None) -> Runnable[Any, BaseMessage]:
    """`model` with `tools`: in text mode when `text` is set (the endpoint refused `tools` earlier in the run), the
    config lists the role, or the model's profile says so; else as the model's call mode says
    (`constrained.choose_call_mode`: the profile's `call_mode`, constrained for a llama.cpp server on loopback, which
    `endpoints` is asked about), natively (`bind_tools`) or constrained (`ConstrainedToolRunnable`). `constraint`:
    the tools whose schemas hold a constrained or grammar-held reply (default `tools`; a native call is not held)."""
    mode = "text" if text or role in config.text_mode_roles else choose_call_mode(
        model, profile_for(model, config.model_profiles), endpoints)
    if mode == "text":  # held to one call by a grammar where a llama.cpp server serves the model
        if served_by_llama_cpp(model, endpoints):
            return GrammarTextToolRunnable(model, tools, constraint)
        return TextToolRunnable(model, tools)
    if mode == "constrained":
        return ConstrainedToolRunnable(model, tools, constraint)
    return model.bind_tools([dict(t) for t in tools])


def probed(deps: Deps) -> Endpoints | None:
    """The run's endpoints, when the config lets the graph ask servers about themselves (`probe_endpoints`)."""
    return deps.endpoints if deps.config.probe_endpoints else None


def refuses_tools(exc: BaseException) -> bool:
    """Whether a failed model call is the endpoint refusing `tools` (a `ModelCallError` of kind "no_tool_calling",
    or a provider error `guard.classify` reads so), i.e. the role can go on in text mode."""
    return getattr(exc, "kind", None) == "no_tool_calling" or classify(exc) == "no_tool_calling"


def umi_template(config: AnyToolConfig, role: str) -> str:
    """The α-UMi role prompt of the configured profile: "default" (`prompts.py`) or "alpha_umi" (`text_prompts.py`)."""
    from . import prompts

    if config.umi_prompts == "alpha_umi":
        return {"planner": text_prompts.UMI_PLANNER, "caller": text_prompts.UMI_CALLER,
                "summarizer": text_prompts.UMI_SUMMARIZER}[role]
    return {"planner": prompts.PLANNER_SYSTEM, "caller": prompts.CALLER_SYSTEM,
            "summarizer": prompts.SUMMARIZER_SYSTEM}[role]


def call_role_tools(deps: Deps, role: str, run_key: str, tools: Sequence[Mapping[str, Any]],
                    prompt: list[BaseMessage], *, inputs: Mapping[str, Any]) -> tuple[AIMessage, dict[str, Any]]:
    """One call of a single-call role (the router, the outline) with `tools`, bound natively or as text
    (`bind_role_tools`), through `call_with_text_fallback`."""
    model = bind_role_tools(deps.models.for_role(role), deps.config, role, tools,
                            text=deps.signals.in_text_mode(run_key, role), endpoints=probed(deps))
    return call_with_text_fallback(deps, role, run_key, model, prompt, tools=tools, inputs=inputs)


def call_with_text_fallback(deps: Deps, role: str, run_key: str, runnable: Runnable[Any, BaseMessage],
                            prompt: list[BaseMessage], *, inputs: Mapping[str, Any],
                            tools: Sequence[Mapping[str, Any]] | None = None, config: RunnableConfig | None = None,
                            tally: Any = None, own: Any = None, texts: bool = True) -> tuple[AIMessage, dict[str, Any]]:
    """`call_role` for `role` of run `run_key`, metered. With `tools` (what `runnable` binds natively): when the
    endpoint refuses them (a model without function calling), the role switches to text mode for the rest of the run
    and the call is made again in text mode (usage `text_fallbacks`; a `text_mode` input is set to True). Any other
    failure propagates. `texts=False`: long texts are not cut to fit the window (see `call_role`)."""
    try:
        ai, used = call_role(runnable, role, prompt, config, inputs=inputs, on_usage=deps.meter(run_key, tally, own),
                             profiles=deps.config.model_profiles, texts=texts)
        return ai, dict(used)
    except Exception as exc:
        if tools is None or isinstance(runnable, TextToolRunnable | ConstrainedToolRunnable) or not refuses_tools(exc):
            raise
    deps.signals.use_text_mode(run_key, role)
    text_inputs = {**inputs, "text_mode": True} if "text_mode" in inputs else inputs
    ai, used = call_role(TextToolRunnable(deps.models.for_role(role), tools), role, prompt, config,
                         inputs=text_inputs, on_usage=deps.meter(run_key, tally, own),
                         profiles=deps.config.model_profiles, texts=texts)
    return ai, {**used, "text_fallbacks": 1}
