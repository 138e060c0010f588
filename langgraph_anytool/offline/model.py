"""`OfflinePolicyModel`: the chat-model class; it reads each call's role and inputs from the call's metadata and
hands them to that role's policy."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolCall
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, PrivateAttr

from ..catalog import Catalog
from ..models.llm import INPUTS_KEY, ROLE_KEY
from .abilities import outline_reply, router_reply
from .call import RoleCall
from .generic import generic_reply
from .judging import judge_reply
from .relevance import Heuristics
from .retrieval import category_reply, meta_reply, solvable_reply, tool_reply
from .solving import caller_reply, planner_reply, solver_reply, summarizer_reply
from .text import message_text

MODEL_NAME = "offline-policy"
LABEL = "OfflinePolicyModel (rule-based heuristic stand-in, NOT an LLM)"

Policy = Callable[[Heuristics, RoleCall], AIMessage]
POLICIES: Mapping[str, Policy] = {
    "meta": meta_reply, "category": category_reply, "tool": tool_reply, "solvable": solvable_reply,
    "solver": solver_reply, "planner": planner_reply, "caller": caller_reply, "summarizer": summarizer_reply,
    "judge": judge_reply, "router": router_reply, "outline": outline_reply,
}


class OfflinePolicyModel(BaseChatModel):
    """A deterministic heuristic policy that answers every AnyTool role — a stand-in, NOT an LLM.

    Each call's role and inputs come from its metadata (`anytool_role`, `anytool_inputs`; the graph sets them
    through `langgraph_anytool.models.llm.call_role`), never from the prompt's wording: the query, the agent's scope,
    the pool's APIs, the functions, the planner's thought are inputs; what was done so far is read from the
    structured messages (tool calls and the tool messages answering them). Rewording a prompt changes nothing.
    A call without role metadata (or with a role it does not know) is answered as a generic tool-calling
    assistant: the last human message is the request and the bound tools are the functions.

    Needs the catalog the graph runs on (its search ranks categories, tools and APIs). Replies carry
    `usage_metadata` estimated as characters / 4, flagged by `response_metadata["estimated_usage"]`.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    STAND_IN_LABEL: ClassVar[str] = LABEL  # how the graph tells (without importing this package) that it stands in

    catalog: Catalog
    max_categories: int = 3
    max_tools_per_agent: int = 5
    max_apis_per_agent: int = 4
    search_depth: int = 30  # search hits considered per request part
    relevance_ratio: float = 0.8  # an API fits a request part when its relevance reaches this share of the best
    solver_ratio: float = 0.85  # the solver also tries APIs a little below that (× relevance_ratio)
    max_failures: int = 3  # failed calls per request part before it is given up
    # a reply's output tokens (as estimated below) at most; a per-call `max_tokens` (e.g. the token budget's cap,
    # see llm.reply_cap) wins. A longer reply is cut: finish_reason "length", usage no more than the cap.
    max_tokens: int | None = None

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _memo: dict[tuple[str, ...], Any] = PrivateAttr(default_factory=dict)  # search hits and relevance (pure)

    @property
    def _llm_type(self) -> str:
        return MODEL_NAME

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": MODEL_NAME, "catalog": self.catalog.name}

    def bind_tools(self, tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool], *,
                   tool_choice: str | None = None, **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        """Record the tool schemas (OpenAI form): the functions a call may use."""
        schemas = [t if isinstance(t, dict) and "function" in t else convert_to_openai_tool(t) for t in tools]
        kwargs.pop("parallel_tool_calls", None)
        return self.bind(tools=schemas, **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        metadata = (run_manager.metadata if run_manager is not None else None) or {}
        inputs = metadata.get(INPUTS_KEY)
        reply = self.respond(messages, kwargs.get("tools") or [], role=metadata.get(ROLE_KEY),
                             inputs=inputs if isinstance(inputs, Mapping) else None)
        cap = kwargs.get("max_tokens", self.max_tokens)
        if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0:
            reply = cut_reply(reply, cap)
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def heuristics(self) -> Heuristics:
        """The policy's knobs over the catalog, sharing this model's memo."""
        return Heuristics(self.catalog, self.max_categories, self.max_tools_per_agent, self.max_apis_per_agent,
                          self.search_depth, self.relevance_ratio, self.solver_ratio, self.max_failures,
                          self._lock, self._memo)

    def respond(self, messages: Sequence[BaseMessage], tools: Sequence[Mapping[str, Any]] = (), *,
                role: str | None = None, inputs: Mapping[str, Any] | None = None) -> AIMessage:
        """The reply to one call (the whole policy; a pure function of its arguments). `tools` are the bound
        tools in OpenAI form; `role`/`inputs` the call's metadata (None: answered as a generic assistant)."""
        schemas = [t.get("function", t) for t in tools]
        names = [str(s.get("name", "")) for s in schemas]
        policy = POLICIES.get(role) if isinstance(role, str) else None
        played = role if policy is not None and isinstance(role, str) else None
        call = RoleCall(played, dict(inputs or {}), list(messages), names)
        if policy is not None:
            reply = policy(self.heuristics(), call)
        else:
            reply = generic_reply(self.heuristics(), call, schemas, LABEL)
        return self._finish_reply(reply, messages, played or "generic")

    @staticmethod
    def _finish_reply(reply: AIMessage, messages: Sequence[BaseMessage], role: str) -> AIMessage:
        """Deterministic tool-call ids, estimated usage (characters / 4) and the role played."""
        seed = "\x00".join(message_text(m) for m in messages)
        calls: list[ToolCall] = []
        for i, tc in enumerate(reply.tool_calls):
            digest = hashlib.sha1(f"{seed}\x01{i}\x01{tc['name']}".encode()).hexdigest()[:16]
            calls.append(ToolCall(name=tc["name"], args=tc["args"], id=f"call_{digest}", type="tool_call"))
        chars_in = sum(len(message_text(m)) for m in messages)
        chars_out = len(message_text(reply)) + sum(_call_chars(tc) for tc in calls)
        tokens_in, tokens_out = chars_in // 4, max(1, chars_out // 4)
        usage = UsageMetadata(input_tokens=tokens_in, output_tokens=tokens_out, total_tokens=tokens_in + tokens_out)
        return AIMessage(content=reply.content, tool_calls=calls, usage_metadata=usage,
                         response_metadata={"model_name": MODEL_NAME, "estimated_usage": True, "role": role})


def _call_chars(call: ToolCall) -> int:
    """The characters a tool call counts as in the stand-in's estimated usage: its name and JSON arguments."""
    return len(json.dumps(call["args"], ensure_ascii=False)) + len(call["name"])


def cut_reply(reply: AIMessage, cap: int) -> AIMessage:
    """`reply` cut to at most `cap` output tokens (the stand-in's estimate, characters / 4), as a model stops at
    its `max_tokens`: the text keeps its first `cap * 4` characters; a tool call that no longer fits whole is
    dropped and kept as an invalid tool call with its arguments cut (as a provider returns a call cut mid-JSON).
    A cut reply says `finish_reason` "length"; a reply within the cap is returned unchanged."""
    usage = reply.usage_metadata
    if usage is None or int(usage["output_tokens"]) <= cap:
        return reply
    room = cap * 4
    text = message_text(reply)[:room]
    room -= len(text)
    kept: list[ToolCall] = []
    invalid: list[dict[str, Any]] = []
    for tc in reply.tool_calls:
        if not invalid and _call_chars(tc) <= room:
            kept.append(tc)
            room -= _call_chars(tc)
        elif not invalid and room > len(tc["name"]):
            invalid.append({"name": tc["name"], "args": json.dumps(tc["args"], ensure_ascii=False)[:room - len(tc["name"])],
                            "id": tc.get("id"), "error": "cut at max_tokens", "type": "invalid_tool_call"})
            room = 0
    tokens_out = max(1, min(cap, (len(text) + sum(_call_chars(tc) for tc in kept)
                                  + sum(len(c["name"]) + len(c["args"]) for c in invalid)) // 4))
    tokens_in = int(usage["input_tokens"])
    return AIMessage(content=text, tool_calls=kept, invalid_tool_calls=invalid,
                     usage_metadata=UsageMetadata(input_tokens=tokens_in, output_tokens=tokens_out,
                                                  total_tokens=tokens_in + tokens_out),
                     response_metadata={**reply.response_metadata, "finish_reason": "length"})
