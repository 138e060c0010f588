"""What the OPPO paper protocol sends and reads, as the authors' client does (repository OPPO-Mente-Lab/agent_eval,
`eval_scripts/agent_interface.py`).

The authors call `client.chat.completions.create(model=..., messages=conv, stream=False, ...)` with plain OpenAI
message dicts and keep each reply as `msg.model_dump()`: the provider's message with its raw argument strings. A
LangChain chat model does neither — it rebuilds every message from its own fields (an assistant's arguments
re-serialised, a tool message's `name` and every null field dropped) and parses arguments on the way in (`""`
becomes `{}`, and the raw text is gone). So in the paper protocol:

- every message is a LangChain message that carries the exact dict it stands for (`additional_kwargs[WIRE]`:
  `user_message`, `tool_message`, `from_openai` for the release's task 6 conversations);
- a model of the ChatOpenAI family is wrapped in `WireChatOpenAI`, which sends those dicts as they are (LangChain
  still builds the rest of the request: model, sampling settings, `tools` / `functions`, ...) with `stream=False`,
  and returns the provider's message dict, `model_dump()`-ed as the authors keep it, in the reply's
  `additional_kwargs[WIRE]`; the reply, sent back in a later turn (task 7), goes out as that dict, as theirs does;
- `wire_dict` is a message as it was (or would be) sent; `reply_content` a reply's content as the authors' scorers
  read it (`msg["content"]`: a missing content formats as "None", like their f-strings).

Other chat models (Ollama's, Anthropic's, the scripted test models) are called through LangChain as they are: their
clients have no raw message to give, and the messages they send are their own rendering.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import Runnable
from pydantic import ConfigDict

WIRE = "oppo_wire"  # additional_kwargs key: the OpenAI message dict a LangChain message stands for


def _text(msg: BaseMessage) -> str:
    if isinstance(msg.content, str):
        return msg.content
    return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in msg.content if isinstance(b, str | dict))


def carried(msg: BaseMessage) -> dict[str, Any] | None:
    """The dict `msg` carries, or None."""
    value = msg.additional_kwargs.get(WIRE)
    return dict(value) if isinstance(value, Mapping) else None


def user_message(text: str) -> HumanMessage:
    """`{"role": "user", "content": text}` (`perform_task1` ... `perform_task8`: `conv = [{"role": "user", ...}]`)."""
    return HumanMessage(content=text, additional_kwargs={WIRE: {"role": "user", "content": text}})


def tool_message(name: str, content: str, call_id: Any) -> ToolMessage:
    """`{"role": "tool", "name": ..., "content": ..., "tool_call_id": ...}` (`perform_task4`, `perform_task7`)."""
    return ToolMessage(content=content, tool_call_id=str(call_id or ""), name=name,
                       additional_kwargs={WIRE: {"role": "tool", "name": name, "content": content,
                                                 "tool_call_id": call_id}})


def from_openai(conv: Sequence[Mapping[str, Any]]) -> list[BaseMessage]:
    """OpenAI chat messages (the release's task 6 `conv`, with `function_call`, `refusal`, `index` keys and null
    contents) as LangChain messages, tool calls and tool results kept; each carries its dict as it is."""
    out: list[BaseMessage] = []
    for i, m in enumerate(conv):
        role = m.get("role")
        content = m.get("content")
        text = content if isinstance(content, str) else ("" if content is None else json.dumps(content))
        keep = {WIRE: dict(m)}
        if role == "system":
            out.append(SystemMessage(content=text, additional_kwargs=keep))
        elif role == "user":
            out.append(HumanMessage(content=text, additional_kwargs=keep))
        elif role == "assistant":
            calls, invalid = [], []
            raw = list(m.get("tool_calls") or [])
            if isinstance(m.get("function_call"), Mapping):
                raw.append({"id": f"fc_{i}", "function": m["function_call"]})
            for j, tc in enumerate(raw):
                fn = tc.get("function") or {}
                args = fn.get("arguments")
                try:
                    parsed = json.loads(args) if isinstance(args, str) else (args or {})
                except ValueError:
                    parsed = None
                call_id = str(tc.get("id") or f"call_{i}_{j}")
                if isinstance(parsed, dict):
                    calls.append({"name": str(fn.get("name") or ""), "args": parsed, "id": call_id,
                                  "type": "tool_call"})
                else:
                    invalid.append({"name": fn.get("name"), "args": args if isinstance(args, str) else None,
                                    "id": call_id, "error": "arguments are not a JSON object",
                                    "type": "invalid_tool_call"})
            out.append(AIMessage(content=text, tool_calls=calls, invalid_tool_calls=invalid, additional_kwargs=keep))
        elif role in ("tool", "function"):
            out.append(ToolMessage(content=text, tool_call_id=str(m.get("tool_call_id") or ""), name=m.get("name"),
                                   additional_kwargs=keep))
        else:
            raise ValueError(f"message {i}: unknown role {role!r}")
    return out


def openai_message(msg: BaseMessage) -> dict[str, Any]:
    """A LangChain message as an OpenAI chat message, built from its fields (ours; `wire_dict` prefers the dict
    the message carries)."""
    if isinstance(msg, AIMessage):
        out: dict[str, Any] = {"role": "assistant", "content": _text(msg) or None}
        calls: list[dict[str, Any]] = [{"id": tc.get("id"), "type": "function",
                                        "function": {"name": tc["name"],
                                                     "arguments": json.dumps(tc["args"], ensure_ascii=False)}}
                                       for tc in msg.tool_calls]
        calls += [{"id": tc.get("id"), "type": "function",
                   "function": {"name": tc.get("name"), "arguments": tc.get("args")}} for tc in msg.invalid_tool_calls]
        if calls:
            out["tool_calls"] = calls
        return out
    if isinstance(msg, ToolMessage):
        return {"role": "tool", "name": msg.name, "content": _text(msg), "tool_call_id": msg.tool_call_id}
    role = {"human": "user", "system": "system"}.get(msg.type, msg.type)
    return {"role": role, "content": _text(msg)}


def wire_dict(msg: BaseMessage) -> dict[str, Any]:
    """The OpenAI dict of a message: the one it carries (as sent, or as the provider returned it), else built from
    its fields."""
    return carried(msg) or openai_message(msg)


def reply_content(msg: BaseMessage) -> str:
    """A reply's content as the authors' scorers format it (`f"{msg['content']}"`: None reads "None"); the text of
    a message that carries no dict."""
    wire = carried(msg)
    return f"{wire.get('content')}" if wire is not None else _text(msg)


def raw_function_calls(msg: BaseMessage) -> list[tuple[str, dict[str, Any]]] | None:
    """The reply's calls as the provider wrote them — ("function_call", {...}) for a legacy call, (id, {...}) per
    tool call, arguments as raw strings — or None when the message carries no provider dict."""
    wire = carried(msg)
    if wire is None:
        return None
    out: list[tuple[str, dict[str, Any]]] = []
    if isinstance(wire.get("function_call"), Mapping):
        out.append(("function_call", dict(wire["function_call"])))
    for tc in wire.get("tool_calls") or []:
        if isinstance(tc, Mapping) and isinstance(tc.get("function"), Mapping):
            out.append((str(tc.get("id") or ""), dict(tc["function"])))
    return out


def authors_result(ok: bool, content: Any, error: str) -> dict[str, Any]:
    """What the authors' toolset returns for a call (`toolset/rapidapi/__init__.py` and
    `toolset/dev_tools/__init__.py` `__call__`): the API's dict as it is, another result as
    `{"status": "ok", "data": ...}`, a failure as `{"status": "error", "msg": ..., "data": None}`. The tool message
    shows `str()` of it — Python's repr, not JSON (`perform_task4`, `perform_task7`: `tool_ret_str = str(tool_ret)`)."""
    if not ok:
        return {"status": "error", "msg": error, "data": None}
    return content if isinstance(content, dict) else {"status": "ok", "data": content}


# ------------------------------------------------------------------------------------------------ the wrapper
def openai_family(model: Any) -> Any | None:
    """The ChatOpenAI-family model `model` is or binds (langchain-openai's `BaseChatOpenAI`), else None."""
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI
    except ImportError:  # pragma: no cover - langchain-openai is a dependency
        return None
    layer, depth = model, 0
    while layer is not None and depth < 8:
        if isinstance(layer, BaseChatOpenAI):
            return layer
        if isinstance(layer, WireChatOpenAI):
            return layer.inner
        layer, depth = getattr(layer, "bound", None), depth + 1
    return None


class WireChatOpenAI(BaseChatModel):
    """A ChatOpenAI-family model that sends the dicts its messages carry as they are and keeps the provider's reply
    as `model_dump()` gives it (see the module docstring). Everything else of the request is LangChain's
    (`_get_request_payload`: model, sampling settings, bound `tools` / `functions`), with `stream=False` as the
    authors send it; a model set to the Responses API is called as LangChain calls it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: Any

    @property
    def bound(self) -> Any:
        """The wrapped model (what `models.profiles.unwrap` walks to for the name, window and reply cap)."""
        return self.inner

    @property
    def _llm_type(self) -> str:
        return "oppo-wire"

    @property
    def _identifying_params(self) -> Mapping[str, Any]:
        return dict(getattr(self.inner, "_identifying_params", {}) or {})

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        """The inner model's own `bind_tools` formatting (tool_choice, parallel_tool_calls, ...), bound here."""
        binding = self.inner.bind_tools(tools, **kwargs)
        return self.bind(**dict(getattr(binding, "kwargs", {}) or {}))

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        inner = self.inner
        kwargs.pop("stream_usage", None)  # asked for a streamed local call (`llm.transport_options`): sent unstreamed
        payload = inner._get_request_payload(messages, stop=stop, **kwargs)
        sent = payload.get("messages")
        if not isinstance(sent, list) or len(sent) != len(messages):  # the Responses API: LangChain's own call
            result: ChatResult = inner._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
            return result
        payload["messages"] = [_as_sent(m, d) for m, d in zip(messages, sent, strict=True)]
        # sent with stream=False as the authors send it: the streaming options a local server's call gets
        # (models.llm.transport_options) are no request fields here (the client refuses `stream_usage`)
        payload["stream"] = False
        payload.pop("stream_options", None)
        payload.pop("stream_usage", None)
        if getattr(inner, "client", None) is None and hasattr(inner, "_ensure_sync_client_available"):
            inner._ensure_sync_client_available()
        response = inner.client.create(**payload)
        result = inner._create_chat_result(response)
        choices = getattr(response, "choices", None) or []
        for generation, choice in zip(result.generations, choices, strict=False):
            message: Any = getattr(choice, "message", None)
            dumped = message.model_dump() if hasattr(message, "model_dump") else None
            if isinstance(dumped, dict):
                generation.message.additional_kwargs[WIRE] = dumped
        return result


def _as_sent(msg: BaseMessage, converted: dict[str, Any]) -> dict[str, Any]:
    """The dict `msg` carries when its text is still the carried one (a prompt fitted into the context window is a
    cut copy: LangChain's rendering of it goes instead)."""
    wire = carried(msg)
    if wire is None:
        return converted
    content = wire.get("content")
    if _text(msg) != (content if isinstance(content, str) else ("" if content is None else json.dumps(content))):
        return converted
    return wire


def for_paper(model: Any) -> Any:
    """`model` wrapped in `WireChatOpenAI` when it is a ChatOpenAI-family model (not yet wrapped), else itself."""
    if isinstance(model, WireChatOpenAI):
        return model
    inner = model if openai_family(model) is model else None
    return WireChatOpenAI(inner=inner) if inner is not None else model

