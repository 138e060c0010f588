"""The mechanics behind issue 26's fixes, one at a time: what a server says about its window and its token counts
(models/endpoint.py), fitting to a count (fitting.py), overflow replies (guard.py), each call's `max_tokens`, the
no-call bound of an agent and the run's time limit."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI

from langgraph_anytool import AnyToolConfig, create_anytool_graph
from langgraph_anytool.config import ConfigError
from langgraph_anytool.models.endpoint import (
    NOTHING,
    OLLAMA_DEFAULT_WINDOW,
    Endpoint,
    Endpoints,
    endpoint_of,
    is_loopback,
    ollama_window,
)
from langgraph_anytool.models.fitting import (
    ROLE_REPLY_TOKENS,
    context_window,
    estimate_tokens,
    fit_counted,
    reply_limit,
    summary_of,
)
from langgraph_anytool.models.guard import CallGuard, classify, overflow_counts
from langgraph_anytool.models.llm import call_role
from langgraph_anytool.models.profiles import ProfileError, check_overrides, profile_for
from langgraph_anytool.models.testing import ScriptedChatModel, ai, call
from tests.graph_world import World, make_world
from tests.model_servers import LlamaCppServer, OllamaServer, VllmServer
from tests.servers import FunctionServer, OpenAIChatServer, Request, Response

PROMPT = [SystemMessage("You convert units."), HumanMessage("Convert 26.2 miles to kilometers.")]


def smollm(server: Any, **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI(model="smollm2-135m", base_url=server.base_url, api_key="x", max_retries=0, **kwargs)


# ------------------------------------------------------------------------------------------------ discovery
def test_llama_cpp_is_asked_once_per_endpoint_and_model() -> None:
    with LlamaCppServer(n_ctx=6144) as server:
        endpoints = Endpoints()
        facts = [endpoints.facts(endpoint_of(smollm(server))) for _ in range(3)]
        other = endpoints.facts(endpoint_of(ChatOpenAI(model="other", base_url=server.base_url, api_key="x")))
        props = server.paths().count("/props")
    assert facts[0] == facts[2] and facts[0].server == "llama.cpp" and facts[0].window == 6144
    assert facts[0].tokenizer and "n_ctx" in facts[0].source
    assert other.window == 6144 and props == 2  # one probe per endpoint and model


def test_llama_cpp_probes_name_the_model() -> None:
    """A llama-server in router mode hosts several models on one address: `/props`, `/apply-template` and
    `/tokenize` must say which model they are about (a single-model server ignores the name)."""
    with LlamaCppServer(n_ctx=6144) as server:
        endpoints = Endpoints()
        endpoint = endpoint_of(smollm(server))
        facts = endpoints.facts(endpoint)
        assert endpoints.count(endpoint, facts, [{"role": "user", "content": "hi"}], None)
        asked = {r.path: r for r in server.requests if r.path in ("/props", "/apply-template", "/tokenize")}
    assert asked["/props"].query.get("model") == ["smollm2-135m"]
    assert asked["/apply-template"].json()["model"] == "smollm2-135m"
    assert asked["/tokenize"].json()["model"] == "smollm2-135m"


def test_vllm_and_ollama_say_their_windows_their_way() -> None:
    with VllmServer(model="Qwen/Qwen2.5-7B-Instruct", n_ctx=4096) as server:
        vllm = Endpoints().facts(Endpoint(server.base_url, "Qwen/Qwen2.5-7B-Instruct"))
    with OllamaServer(num_ctx=8192) as server:
        ollama = Endpoints().facts(Endpoint(server.base_url, "qwen2.5"))
    assert (vllm.server, vllm.window, vllm.tokenizer) == ("vllm", 4096, True)
    assert (ollama.server, ollama.window, ollama.tokenizer) == ("ollama", 8192, False)
    # without num_ctx Ollama runs its default (4096), or the model's trained length when that is smaller
    assert ollama_window({"parameters": "", "model_info": {"qwen2.context_length": 32768}})[0] == OLLAMA_DEFAULT_WINDOW
    assert ollama_window({"model_info": {"llama.context_length": 2048}})[0] == 2048
    assert ollama_window({"error": "model not found"}) is None


def test_a_server_that_says_nothing_leaves_the_profile_and_the_run_goes_on() -> None:
    """404s (an OpenAI-compatible server of another kind), a 500 with garbage, a refused port: no facts, and the
    model call still works."""
    async def broken(request: Request) -> Response:
        if request.path == "/v1/chat/completions":
            return Response.json({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                  "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                                               "finish_reason": "stop"}],
                                  "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}})
        return Response.text("<html>oops</html>", 500)

    with FunctionServer(broken) as server:
        endpoints = Endpoints(timeout=2)
        model = ChatOpenAI(model="m", base_url=f"{server.url}/v1", api_key="x", max_retries=0, streaming=False)
        reply, used = call_role(model, "solver", PROMPT, guard=CallGuard(endpoints=endpoints))
        assert endpoints.facts(endpoint_of(model)) is NOTHING and reply.content == "ok"
        assert used["fit_estimated"] == 1 and "fit_counted" not in used
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert Endpoints(timeout=1).facts(Endpoint(f"http://127.0.0.1:{port}/v1", "m")) is NOTHING


def test_hosted_apis_are_never_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a hosted API was probed")

    monkeypatch.setattr("langgraph_anytool.models.endpoint.httpx.Client", no_network)
    endpoints = Endpoints()
    for url in ("https://api.openai.com/v1", "https://api.groq.com/openai/v1", "https://x.openai.azure.com/v1"):
        assert endpoints.facts(Endpoint(url, "gpt-4o-mini")) is NOTHING
    assert endpoints.probes == 0 and Endpoints(probe=False).facts(Endpoint("http://127.0.0.1:1/v1", "m")) is NOTHING


def test_where_a_models_requests_go() -> None:
    model = ChatOpenAI(model="llama3.1", base_url="http://localhost:11434/v1", api_key="ollama")
    found = endpoint_of(model.bind_tools([]))
    assert found == Endpoint("http://localhost:11434/v1", "llama3.1") and found.loopback and not found.hosted
    assert found.root == "http://localhost:11434"
    assert endpoint_of(ScriptedChatModel(replies=[])) is None
    assert is_loopback("127.0.0.5") and is_loopback("::1") and is_loopback("[::1]") and not is_loopback("10.0.0.1")


# ------------------------------------------------------------------------------------------------ counting
def test_the_servers_count_is_cached_per_request_text() -> None:
    with LlamaCppServer(chars_per_token=2.0) as server:
        endpoints = Endpoints()
        model = smollm(server)
        first = call_role(model, "solver", PROMPT, guard=CallGuard(endpoints=endpoints))[1]
        counts_after_one = endpoints.count_requests
        second = call_role(model, "solver", PROMPT, guard=CallGuard(endpoints=endpoints))[1]
        chats = list(server.chats)
    assert first["fit_counted"] == second["fit_counted"] == 1
    assert endpoints.count_requests == counts_after_one == 2  # /apply-template + /tokenize, once
    assert first["input_tokens"] == chats[0].prompt_tokens  # the count is what the server bills


def test_fitting_to_a_count_cuts_until_the_count_fits() -> None:
    """A counter that counts 3 tokens per estimated token: the prompt is fitted to the estimate the count calls
    for and counted again until it fits, never to a blind estimate."""
    history: list[Any] = [SystemMessage("sys"), HumanMessage("the query")]
    for i in range(6):
        history += [AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": f"c{i}"}]),
                    ToolMessage("x" * 2000, tool_call_id=f"c{i}", name="f")]
    history.append(HumanMessage("go on"))
    counts: list[int] = []

    def count(runnable: Any, messages: list[Any]) -> int:
        counts.append(3 * estimate_tokens(messages))
        return counts[-1]

    fitted = fit_counted(None, history, 2000, count)
    assert fitted.counted and fitted.tokens == counts[-1] <= 2000 < counts[0]
    assert fitted.trimmed and len(counts) <= 5
    estimated = fit_counted(None, history, 2000, None, ratio=3.0)
    assert not estimated.counted and estimated.tokens <= 2000


def test_left_out_turns_are_summarised() -> None:
    left = [AIMessage("", tool_calls=[{"name": "convert", "args": {}, "id": "a"}, {"name": "convert", "args": {},
                                                                                   "id": "b"}]),
            ToolMessage("ok", tool_call_id="a", name="convert"),
            ToolMessage("bad", tool_call_id="b", name="convert", status="error"), HumanMessage("more")]
    assert summary_of(left) == ("4 earlier messages of this conversation were left out to fit the context window; "
                                "they called convert ×2 (1 error)")


# ------------------------------------------------------------------------------------------------ overflow
@pytest.mark.parametrize(("text", "counts"), [
    ("request (12249 tokens) exceeds the available context size (8192 tokens), try increasing it", (12249, 8192)),
    ("input (9000 tokens) is larger than the max context size (8192 tokens). skipping", (9000, 8192)),
    ("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, "
     "1000 in the completion). Please reduce the length of the messages or completion.", (4000, 4096)),
    ("This model's maximum context length is 16384 tokens. However, you requested 8192 output tokens and your "
     "prompt contains at least 8193 input tokens, for a total of at least 16385 tokens.", (8193, 16384)),
    ("'max_tokens' or 'max_completion_tokens' is too large: 1000. This model's maximum context length is 4096 tokens "
     "and your request has 3500 input tokens (1000 > 4096 - 3500).", (3500, 4096)),
    ("The decoder prompt (length 12324) is longer than the maximum model length of 8192.", (12324, 8192)),
    ("This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. "
     "Please reduce the length of the messages.", (130512, 128000)),
], ids=["llama.cpp", "llama.cpp-input", "vllm-old", "vllm-new", "vllm-max-tokens", "vllm-decoder", "openai"])
def test_every_common_overflow_reply_is_a_context_fault_with_its_counts(text: str, counts: tuple[int, int]) -> None:
    exc = ValueError(text)
    assert classify(exc) == "context_length" and overflow_counts(exc) == counts


def test_llama_cpps_full_cache_is_a_server_error_not_an_overflow() -> None:
    """llama-server's slots share its `-c` tokens: a request that finds them taken by the others' caches fails
    with "Context size has been exceeded." (HTTP 500, or an error event in a stream). That is no fault of the
    prompt's size: it is retried as a server error once the others are done, not cut."""
    assert classify(ValueError("Context size has been exceeded.")) == "server_error"
    assert overflow_counts(ValueError("Context size has been exceeded.")) == (None, None)


def test_llama_cpps_counts_are_read_from_its_error_body() -> None:
    with LlamaCppServer(n_ctx=512, chars_per_token=1.0, counts=False) as server:
        with pytest.raises(Exception) as info:
            smollm(server).invoke([HumanMessage("word " * 400)])
        (refused,) = server.chats
    assert refused.status == 400 and refused.prompt_tokens > 2000
    assert classify(info.value) == "context_length" and overflow_counts(info.value) == (refused.prompt_tokens, 512)


# ------------------------------------------------------------------------------------------------ max_tokens
def test_every_call_carries_the_roles_max_tokens_which_a_profile_changes() -> None:
    with OpenAIChatServer(["ok"] * 4) as server:
        model = ChatOpenAI(model="house-model", base_url=server.base_url, api_key="x", max_retries=0)
        call_role(model, "solver", PROMPT)
        call_role(model, "judge", PROMPT)
        call_role(model, "judge", PROMPT, profiles={"house-model": {"max_tokens": {"judge": 99}}})
        call_role(model, "solver", PROMPT, profiles={"house-model": {"max_tokens": 64}})
        caps = [r["max_completion_tokens"] for r in server.chat_requests]
    assert caps == [ROLE_REPLY_TOKENS["solver"], ROLE_REPLY_TOKENS["judge"], 99, 64]


def test_reply_limits_and_windows() -> None:
    own = ChatOpenAI(model="gpt-4o-mini", api_key="x", max_tokens=3000)
    plain = ChatOpenAI(model="house-model-135m", api_key="x")
    profile = profile_for("house-model-135m")
    assert reply_limit(own, "solver", profile, 32768) == 3000  # the model's own wins
    assert reply_limit(plain, "solver", profile, 32768) == ROLE_REPLY_TOKENS["solver"]
    assert reply_limit(plain, "solver", profile, 2048) == 512  # at most a quarter of a small window
    declared = profile_for("house-model-135m", {"house-model": {"context_window": 8192}})
    assert context_window(declared, 16384) == 8192 and context_window(declared, 4096) == 4096
    assert context_window(profile, 16384) == 16384 and context_window(profile, None) == profile.context_window


@pytest.mark.parametrize("name", ["smollm2", "gemma3-270m", "SmolLM2-135M-Instruct"])
def test_the_packaged_tiny_models_reply_in_at_most_256_tokens_in_every_role(name: str) -> None:
    """Issue 38 §4: Gemma 3 270M's replies ran to the solver's 1,024 (or the agents' 512) tokens at ~3 tokens/s on a
    CPU; the packaged models' profiles cap every role at 256 (the real-model tier's figure), overridable."""
    model = ChatOpenAI(model=name, api_key="x")
    profile = profile_for(name)
    assert {reply_limit(model, role, profile, 8192) for role in ROLE_REPLY_TOKENS} == {256}
    assert reply_limit(model, "solver", profile_for(name, {name: {"max_tokens": 512}}), 8192) == 512
    assert context_window(profile, 4096) == 4096  # the server's smaller window still wins


def test_bad_max_tokens_in_a_profile_are_named() -> None:
    with pytest.raises(ProfileError, match=r"\[.smollm2.\]\.max_tokens must be an integer ≥ 1"):
        check_overrides({"smollm2": {"max_tokens": 0}})
    with pytest.raises(ConfigError, match="max_tokens: unknown role 'solvr'"):
        AnyToolConfig(model_profiles={"smollm2": {"max_tokens": {"solvr": 10}}})
    for bad in ({"max_run_seconds": 0}, {"stall_timeout": -1}, {"max_turns_without_call": 0},
                {"max_timeout_retries": -1}, {"stream_local": "yes"}):
        with pytest.raises(ConfigError):
            AnyToolConfig(**bad)
    assert AnyToolConfig(max_run_seconds=None).max_run_seconds is None


# ------------------------------------------------------------------------------------------------ run bounds
def talking_meta(_: list[Any]) -> AIMessage:
    return ai("I would look at the unit converters, I think.")


@pytest.mark.parametrize("limit", [1, 3])
def test_an_agent_without_function_calls_finishes_after_the_configured_replies(limit: int) -> None:
    catalog, executor = make_world()
    model = ScriptedChatModel(responder=World({"meta": talking_meta}))
    out = create_anytool_graph(catalog, model, executor=executor, config=AnyToolConfig(
        seed_with_search=False, max_turns_without_call=limit)).invoke({"query": "What's the weather in Paris?"})
    meta = out["agents"]["meta"]
    assert meta["status"] == "finished" and meta["steps"] == limit
    assert meta["end_reason"].startswith(f"no_calls: {limit} replies in a row without a function call")
    assert out["status"] == "no_apis" and out["usage"]["meta"]["no_call_ends"] == 1


def test_a_reply_with_a_call_resets_the_count() -> None:
    turns = iter([ai("hmm"), ai("hmm"), ai("", call("get_tools_in_category", category_name="Weather")),
                  ai("hmm"), ai("hmm"), ai("", call("finish_search"))])
    catalog, executor = make_world()
    model = ScriptedChatModel(responder=World({"meta": lambda _: next(turns)}))
    out = create_anytool_graph(catalog, model, executor=executor, config=AnyToolConfig(
        seed_with_search=False)).invoke({"query": "What's the weather in Paris?"})
    assert out["agents"]["meta"]["end_reason"] == "finish_search" and out["agents"]["meta"]["steps"] == 6


def test_the_runs_time_limit_cuts_a_slow_scripted_run() -> None:
    catalog, executor = make_world()
    model = ScriptedChatModel(responder=World({"meta": talking_meta}), latency=0.6)
    started = time.monotonic()
    out = create_anytool_graph(catalog, model, executor=executor, config=AnyToolConfig(
        seed_with_search=False, max_run_seconds=1.0, max_turns_without_call=20)).invoke({"query": "Weather?"})
    assert out["status"] == "time_limit" and out["reason"].startswith("time limit of 1 s reached")
    assert time.monotonic() - started < 4 and out["agents"]["meta"]["end_reason"] == "time_limit"
    assert json.dumps(out["usage"])  # plain data
