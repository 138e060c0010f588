"""Constrained function calls (issue 38): a call a small local model cannot skip.

Where the protocol needs a function call (a DFSDT step, Finish included; a retriever agent's turn; α-UMi's caller)
and the server cannot force one natively, the offered functions are listed in the system prompt and the reply is
constrained by a JSON schema: one `oneOf` branch per function, ``{"name": {"const": NAME}, "arguments": {...its
parameters...}}``. An OpenAI-compatible server that honours `response_format: {"type": "json_schema"}` (llama.cpp's
llama-server compiles it to a grammar; vLLM, Ollama do the same) then can only reply with a call; the reply is
parsed back into an ordinary `AIMessage.tool_calls` entry (`ConstrainedToolRunnable`), so the records, the
validation of names and arguments, and the usage accounting are the ones of a native call.

How a model's calls are made (`call_mode`, see `choose_call_mode`): "native" (`bind_tools`), "constrained" (this
module), "text" (`Action:` / `Action Input:`, nodes/solver/textmode.py). A model profile's `call_mode` wins; else a
profile without function calling writes text, a model served by llama.cpp on loopback is constrained (its chat
templates for the small models render no tools and `tool_choice: "required"` forces nothing: see
docs/endpoints.md), any other model calls natively.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import merge_configs

from ..protocol import calls_as_text, text_of
from .call_stream import streamed_call
from .endpoint import Endpoints, endpoint_of
from .profiles import CALL_MODES, ModelProfile, unwrap

CallMode = Literal["native", "constrained", "text"]

SCHEMA_NAME = "function_call"
# the longest string value a constrained reply may hold (characters): a small model otherwise fills its whole
# `max_tokens` with one string and the reply is cut before its JSON closes
MAX_STRING_CHARS = 400
# the most items an array value may hold where its schema sets no `maxItems`: SmolLM2 otherwise repeated one tool
# name until its `max_tokens` cut the reply (issue 38)
MAX_ARRAY_ITEMS = 16
# JSON-schema keys a grammar compiler (llama.cpp's json-schema-to-grammar) is given; other keys of a catalog's
# parameter schemas (formats, examples, vendor fields) are dropped
_KEPT = ("type", "properties", "required", "items", "enum", "const", "minimum", "maximum", "anyOf", "minItems",
         "maxItems")
_TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")

FUNCTIONS_PROMPT = (
    "You can call these functions (one JSON object each: name, description, parameters):\n{functions}\n\n"
    "Reply with exactly one function call, as a JSON object "
    '{{"name": <one of: {names}>, "arguments": {{<its parameters>}}}} and nothing else.'
)


def function_of(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    fn = tool.get("function")
    return fn if isinstance(fn, Mapping) else tool


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _grammar_safe(schema: Any, depth: int = 0) -> dict[str, Any]:
    """A parameter schema reduced to what a grammar compiler takes: standard types, properties, required, items,
    enums, `anyOf`; an unknown or odd schema becomes `{}` (any value); strings get at most `MAX_STRING_CHARS`, arrays
    at most `MAX_ARRAY_ITEMS` items unless they say otherwise."""
    if not isinstance(schema, Mapping) or depth > 6:
        return {}
    out: dict[str, Any] = {}
    kind = schema.get("type")
    if isinstance(kind, str) and kind.lower() in _TYPES:
        out["type"] = kind.lower()
    elif isinstance(kind, str) and kind.lower() in ("float", "double"):
        out["type"] = "number"
    elif isinstance(kind, str) and kind.lower() in ("int", "long"):
        out["type"] = "integer"
    for key in _KEPT[1:]:
        if key not in schema:
            continue
        value = schema[key]
        if key == "properties" and isinstance(value, Mapping):
            out[key] = {str(k): _grammar_safe(v, depth + 1) for k, v in value.items()}
        elif key == "required" and isinstance(value, list):
            out[key] = [str(v) for v in value if isinstance(v, str)]
        elif key == "items":
            out[key] = _grammar_safe(value, depth + 1)
        elif key == "anyOf" and isinstance(value, list) and value:
            out[key] = [_grammar_safe(v, depth + 1) for v in value]
        elif key in ("minItems", "maxItems") and isinstance(value, int) and not isinstance(value, bool):
            out[key] = value
        elif key == "enum" and isinstance(value, list) and value:
            out[key] = [v for v in value if isinstance(v, str | int | float | bool) or v is None]
        elif key in ("minimum", "maximum", "const") and _scalar(value) and (key == "const" or not (
                value is None or isinstance(value, bool | str))):
            out[key] = value
    if "properties" in out:
        out["type"] = "object"
        props = out["properties"]
        out["required"] = [r for r in out.get("required", []) if r in props]
        out["additionalProperties"] = False
    elif out.get("type") == "object":
        out["properties"], out["required"], out["additionalProperties"] = {}, [], False
    if out.get("type") == "string" and "enum" not in out and "const" not in out:
        out["maxLength"] = MAX_STRING_CHARS
    if out.get("type") == "array" and "maxItems" not in out:
        out["maxItems"] = MAX_ARRAY_ITEMS
    return out


def call_schema(tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The JSON schema of one call of one of `tools` (OpenAI function schemas): a `oneOf` branch per function,
    `{"name": {"const": NAME}, "arguments": <its parameters>}`."""
    branches = []
    for tool in tools:
        fn = function_of(tool)
        params = _grammar_safe(fn.get("parameters") or {"type": "object", "properties": {}})
        if params.get("type") != "object" and not (params.get("anyOf") and all(
                b.get("type") == "object" for b in params["anyOf"])):  # else one object of several forms
            params = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
        branches.append({"type": "object", "properties": {"name": {"const": str(fn.get("name"))},
                                                          "arguments": params},
                         "required": ["name", "arguments"], "additionalProperties": False})
    return branches[0] if len(branches) == 1 else {"oneOf": branches}


def response_format(tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The `response_format` of a constrained call (OpenAI's `json_schema` shape)."""
    return {"type": "json_schema", "json_schema": {"name": SCHEMA_NAME, "schema": call_schema(tools)}}


def render_call(name: str, args: Any) -> str:
    """A call as a constrained reply writes it: `{"name": ..., "arguments": {...}}`."""
    if isinstance(args, str):
        with contextlib.suppress(ValueError):
            args = json.loads(args)
    return json.dumps({"name": name, "arguments": args if args is not None else {}}, ensure_ascii=False)


def messages_with_functions(messages: Sequence[BaseMessage], tools: Sequence[Mapping[str, Any]]
                            ) -> list[BaseMessage]:
    """The prompt of a constrained call: the function list and the reply format appended to the system message,
    earlier calls written as the JSON objects a constrained reply holds, observations as user messages."""
    listing = "\n".join(json.dumps({k: function_of(t).get(k) for k in ("name", "description", "parameters")
                                    if function_of(t).get(k) is not None}, ensure_ascii=False) for t in tools)
    names = ", ".join(str(function_of(t).get("name")) for t in tools)
    return calls_as_text(messages, FUNCTIONS_PROMPT.format(functions=listing, names=names), render_call)


def parse_call(text: str, *, id_prefix: str = "json", call_id: str | None = None) -> AIMessage:
    """A constrained reply as an `AIMessage` with one tool call; an invalid tool call (the text kept, the reason
    given) when it is no JSON object with a string `name` and an object `arguments` (e.g. cut at `max_tokens`).
    `call_id`: the id its streamed chunks had (`call_stream.py`)."""
    call_id = call_id or f"{id_prefix}_{uuid.uuid4().hex[:12]}"
    raw = (text or "").strip()
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return AIMessage(content="", invalid_tool_calls=[{"name": None, "args": raw, "id": call_id,
                                                          "error": f"the reply is no JSON object: {exc}",
                                                          "type": "invalid_tool_call"}])
    name = value.get("name") if isinstance(value, dict) else None
    args = value.get("arguments", {}) if isinstance(value, dict) else None
    if not isinstance(name, str) or not isinstance(args, dict):
        return AIMessage(content="", invalid_tool_calls=[{
            "name": name if isinstance(name, str) else None, "args": raw, "id": call_id,
            "error": 'the reply is not {"name": <string>, "arguments": <object>}', "type": "invalid_tool_call"}])
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}])


def _openai_compatible(model: Any) -> tuple[bool, dict[str, Any]]:
    """Whether `model` (under its bindings) is an OpenAI-compatible client, and its own `extra_body`."""
    chat = list(unwrap(model))[-1] if model is not None else model
    fields_ = getattr(type(chat), "model_fields", None) or {}
    own = getattr(chat, "extra_body", None)
    return "openai_api_base" in fields_, dict(own) if isinstance(own, Mapping) else {}


def constraint_kwargs(model: Any, tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The per-call options that constrain `model`'s reply to a call of one of `tools`: an OpenAI-compatible client
    sends `response_format` in its request body (`extra_body`, so the client does not parse it itself; the
    model's own `extra_body` kept), ChatOllama takes the schema as `format`, any other class `response_format`."""
    chat = list(unwrap(model))[-1] if model is not None else model
    compatible, own = _openai_compatible(model)
    if compatible:
        return {"extra_body": {**own, "response_format": response_format(tools)}}
    if type(chat).__name__ == "ChatOllama":
        return {"format": call_schema(tools)}
    return {"response_format": response_format(tools)}


def with_extra_body(kwargs: Mapping[str, Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """A call's `kwargs` with `options` added, a caller's own `extra_body` merged under the options' one."""
    out = {**kwargs, **options}
    if "extra_body" in kwargs and "extra_body" in options:
        out["extra_body"] = {**kwargs["extra_body"], **options["extra_body"]}
    return out


def bound_config(config: RunnableConfig | None) -> RunnableConfig:
    """The config a wrapper hands the model it wraps, merged as a `bind_tools` binding merges it
    (`RunnableBinding._merge_configs`): the run's own callbacks (the handlers of `astream_events` and of
    `stream_mode="messages"`, held in the context) kept beside the call's (`call_role`'s stream watch), so the wrapped
    model's tokens stream with the role in their metadata, as a native call's do (issue 35 §1)."""
    return merge_configs({}, config)



def with_reply_metadata(parsed: AIMessage, reply: BaseMessage) -> AIMessage:
    """The call parsed from a reply's text, carrying the reply's usage, response metadata, extra fields and id."""
    return parsed.model_copy(update={"usage_metadata": getattr(reply, "usage_metadata", None),
                                     "response_metadata": dict(getattr(reply, "response_metadata", {}) or {}),
                                     "additional_kwargs": dict(getattr(reply, "additional_kwargs", {}) or {}),
                                     "id": reply.id})

class PromptedToolRunnable(Runnable[Any, BaseMessage]):
    """A chat model given a fixed tool list in its prompt rather than as native tools: the wrapped model and the
    tools (the constrained form below; text mode's `Action:` form in `nodes/solver/textmode.py`). `constraint`:
    the tools whose schemas hold the reply where a server holds it to a call (e.g. their names pinned to the values
    an agent may still use: nodes/agents/choices.py); by default `tools`, which the prompt lists either way."""

    def __init__(self, model: Runnable[Any, BaseMessage], tools: Sequence[Mapping[str, Any]],
                 constraint: Sequence[Mapping[str, Any]] | None = None) -> None:
        self.model = model
        self.tools = [dict(t) for t in tools]
        self.constraint = [dict(t) for t in constraint] if constraint is not None else self.tools

    @property
    def bound(self) -> Runnable[Any, BaseMessage]:
        """The wrapped model (as on a `bind_tools` binding: `profiles.model_name` finds the model's name here)."""
        return self.model


class ConstrainedToolRunnable(PromptedToolRunnable):
    """A chat model whose every reply is a call of one of a fixed tool list (see the module docstring)."""

    def as_sent(self, messages: Sequence[BaseMessage]) -> tuple[Runnable[Any, BaseMessage], list[BaseMessage]]:
        """The model this runnable calls and the messages it sends (what a server counts; the schema is a grammar
        on the reply, not prompt tokens)."""
        return self.model, messages_with_functions(messages, self.tools)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> BaseMessage:
        messages = list(input) if isinstance(input, Sequence) and not isinstance(input, str) else [
            HumanMessage(content=str(input))]
        options = with_extra_body(kwargs, constraint_kwargs(self.model, self.constraint))
        sent = messages_with_functions(messages, self.tools)
        # where the run streams, the reply streams as the call's `tool_call_chunks` (call_stream.py)
        with streamed_call(self.model, sent, bound_config(config)) as (run_config, relay):
            reply = self.model.invoke(sent, run_config, **options)
            parsed = parse_call(text_of(reply), call_id=relay.pieces.call_id if relay is not None else None)
            out = with_reply_metadata(parsed, reply)
            if relay is not None:
                relay.end(out)
        return out


def served_by_llama_cpp(model: Any, endpoints: Endpoints | None) -> bool:
    """Whether llama.cpp serves `model` on loopback (asked through `endpoints`, which caches what it said)."""
    endpoint = endpoint_of(model)
    if endpoint is None or not endpoint.loopback or endpoints is None:
        return False
    return endpoints.facts(endpoint).server == "llama.cpp"


def choose_call_mode(model: Any, profile: ModelProfile, endpoints: Endpoints | None = None) -> CallMode:
    """How `model` makes its calls: the profile's `call_mode` when set; "text" when the profile says the model has
    no function calling; "constrained" for a model llama.cpp serves on loopback (asked through `endpoints`, which
    caches what the server said); else "native". Hosted providers keep native calls unless the profile says
    otherwise."""
    if profile.call_mode in CALL_MODES:
        return cast(CallMode, profile.call_mode)
    if not profile.tool_calling:
        return "text"
    return "constrained" if served_by_llama_cpp(model, endpoints) else "native"


# ------------------------------------------------------------------------------------------ text mode, held to a call
# A GBNF grammar (llama.cpp's `grammar` request field) for a text-mode reply: one thought line, then
# `Action: <an offered name>` and `Action Input: <a JSON object of that function's parameter names, each with a
# value of its type>`, and nothing after it (which arguments are required is checked as a text call's are).
MAX_THOUGHT_CHARS = 200
_JSON_GRAMMAR = r"""
value ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( string ":" ws value ( "," ws string ":" ws value )* )? "}"
array ::= "[" ws ( value ( "," ws value )* )? "]"
string ::= "\"" char{0,MAXCHARS} "\"" ws
char ::= [^"\\\x7F\x00-\x1F] | "\\" ["\\/bfnrt]
number ::= "-"? [0-9]{1,16} ( "." [0-9]{1,16} )? ws
integer ::= "-"? [0-9]{1,16} ws
boolean ::= ( "true" | "false" ) ws
ws ::= " "?
""".replace("MAXCHARS", str(MAX_STRING_CHARS))
_VALUE_RULES = {"string": "string", "number": "number", "integer": "integer", "boolean": "boolean",
                "object": "object", "array": "array"}


def _gbnf_literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _value_rule(schema: Mapping[str, Any]) -> str:
    """The GBNF of one parameter's value: its const's or enum's JSON texts, one of its `anyOf` forms, an array of
    its items (within `minItems` / `maxItems`), an object whose properties are all required (in order), else its
    type's rule, else any value."""
    enum = [schema["const"]] if "const" in schema else schema.get("enum")
    if isinstance(enum, list) and enum:
        return "( " + " | ".join(_gbnf_literal(json.dumps(v, ensure_ascii=False)) for v in enum) + " ) ws"
    forms = schema.get("anyOf")
    if isinstance(forms, list) and forms:
        return "( " + " | ".join(_value_rule(f) for f in forms if isinstance(f, Mapping)) + " )"
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, Mapping) and items:
        item, low = _value_rule(items), max(0, int(schema.get("minItems", 0)))
        high = max(low, 1, int(schema.get("maxItems", MAX_ARRAY_ITEMS)))
        more = f'( "," ws {item} ){{{max(0, low - 1)},{high - 1}}}'
        return f'"[" ws {item} {more} "]" ws' if low else f'"[" ws ( {item} {more} )? "]" ws'
    props = schema.get("properties")
    if isinstance(props, Mapping) and props and set(schema.get("required") or ()) == set(props):
        pairs = ' "," ws '.join(f'{_gbnf_literal(json.dumps(str(k)))} ":" ws {_value_rule(v)}' for k, v in props.items())
        return f'"{{" ws {pairs} "}}" ws'
    return _VALUE_RULES.get(str(schema.get("type")), "value")


def _arguments_rule(params: Mapping[str, Any]) -> str:
    """The GBNF of a function's arguments: an object of its parameter names, each with a value of its type (at most
    as many pairs as it has parameters)."""
    props = params.get("properties") if isinstance(params.get("properties"), Mapping) else {}
    if params.get("anyOf") or (props and set(params.get("required") or ()) == set(props)):
        return _value_rule(params)  # one of its forms; or every parameter required: each once, in order
    if not props:
        return '"{" ws "}"'
    pairs = " | ".join(f"{_gbnf_literal(json.dumps(str(k)))} \":\" ws {_value_rule(v)}" for k, v in props.items())
    return f'"{{" ws ( ( {pairs} ) ( "," ws ( {pairs} ) ){{0,{len(props) - 1}}} )? "}}"'


def action_grammar(tools: Sequence[Mapping[str, Any]]) -> str:
    """The GBNF grammar of a text-mode reply calling one of `tools` (see above)."""
    calls = []
    for i, tool in enumerate(tools):
        fn = function_of(tool)
        calls.append(f"call{i} ::= {_gbnf_literal(str(fn.get('name')))} \"\\nAction Input: \" "
                     f"{_arguments_rule(_grammar_safe(fn.get('parameters') or {}))}")
    names = " | ".join(f"call{i}" for i in range(len(calls))) or '""'
    return (f'root ::= "Thought: " [^\\n]{{0,{MAX_THOUGHT_CHARS}}} "\\nAction: " ( {names} )\n'
            + "\n".join(calls) + "\n" + _JSON_GRAMMAR.strip() + "\n")


def grammar_kwargs(model: Any, tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The per-call options holding a text-mode reply of an OpenAI-compatible client to `action_grammar` (llama.cpp's
    `grammar` body field; the model's own `extra_body` kept); none for other classes."""
    return grammar_body(model, action_grammar(tools))


def grammar_body(model: Any, grammar: str) -> dict[str, Any]:
    """The per-call options holding the reply of an OpenAI-compatible client to the GBNF `grammar` (llama.cpp's
    `grammar` body field; the model's own `extra_body` kept); none for other classes."""
    compatible, own = _openai_compatible(model)
    return {"extra_body": {**own, "grammar": grammar}} if compatible else {}


class GrammarRunnable(Runnable[Any, BaseMessage]):
    """A chat model whose plain-text reply a llama.cpp server holds to a GBNF grammar (e.g. α-UMi's planner: a
    thought, then its `Next:` decision, `nodes/solver/umi.py planner_grammar`); the reply is the model's own."""

    def __init__(self, model: Runnable[Any, BaseMessage], grammar: str) -> None:
        self.model = model
        self.grammar = grammar

    @property
    def bound(self) -> Runnable[Any, BaseMessage]:
        """The wrapped model (`profiles.unwrap` finds the model's name and endpoint here)."""
        return self.model

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> BaseMessage:
        return self.model.invoke(input, bound_config(config),
                                 **with_extra_body(kwargs, grammar_body(self.model, self.grammar)))


def holds_to_grammar(model: Any, profile: ModelProfile, endpoints: Endpoints | None) -> bool:
    """Whether a plain-text reply of `model` that must end in a fixed form (α-UMi's planner decision) is held to a
    grammar: llama.cpp serves it on loopback and its profile does not ask for native calls."""
    return profile.call_mode != "native" and served_by_llama_cpp(model, endpoints)
