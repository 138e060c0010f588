"""What a real model endpoint does to the loop (issue 15): transport faults, retry caps and context limits, over the
loopback OpenAI-compatible server through the real `ChatOpenAI` client (plain and streaming)."""

from __future__ import annotations

import itertools
import json
import random
import threading
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_anytool import AnyToolConfig, Catalog, create_anytool_graph
from langgraph_anytool.config import ConfigError
from langgraph_anytool.models.fitting import estimate_tokens, fit_prompt
from langgraph_anytool.models.guard import CallGuard, RetryBudget, RetryPolicy, classify, retry_after
from langgraph_anytool.models.llm import ModelCallError, call_role, init_model
from tests.graph_world import make_world
from tests.integration.test_openai_loopback import responder
from tests.servers import ChatFault, ChatReply, OpenAIChatServer, tool_call

SECRET = "sk-guard-secret-7f3a9c1e55"
FAST = RetryPolicy(retries=3, max_wait=0.05)  # tiny waits: every test stays well under a second of backoff
STREAMING = pytest.mark.parametrize("streaming", [False, True], ids=["sync", "stream"])


def client(server: OpenAIChatServer, *, streaming: bool = False, timeout: float = 5.0) -> ChatOpenAI:
    """The real client, its own retries off (a user-given instance is used as it is)."""
    return ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key=SECRET, max_retries=0, timeout=timeout,
                      streaming=streaming)


def ask(model: Any, guard: CallGuard | None = None, prompt: list[BaseMessage] | None = None,
        **kwargs: Any) -> tuple[AIMessage, dict[str, Any]]:
    reply, used = call_role(model, "solver", prompt or [HumanMessage("hi")], guard=guard or CallGuard(policy=FAST),
                            **kwargs)
    return reply, dict(used)


def gaps(server: OpenAIChatServer) -> list[float]:
    times = [r.received_at for r in server.requests if r.path == OpenAIChatServer.PATH]
    return [b - a for a, b in itertools.pairwise(times)]


# ---------------------------------------------------------------------------------------------- transport faults
@STREAMING
def test_429_waits_what_retry_after_asks(streaming: bool) -> None:
    # jitter alone would wait at most 1 ms here: only Retry-After explains a 0.2 s gap
    policy = RetryPolicy(retries=2, max_wait=1.0, base_delay=0.001)
    with OpenAIChatServer([ChatFault.rate_limited("0.2"), "ok"]) as server:
        reply, used = ask(client(server, streaming=streaming), CallGuard(policy=policy))
        waited = gaps(server)
    assert reply.content == "ok" and used["retries"] == 1
    assert len(waited) == 1 and 0.2 <= waited[0] < 0.9


def test_retry_after_ms_and_the_cap_on_a_wait() -> None:
    policy = RetryPolicy(retries=2, max_wait=1.0, base_delay=0.001)
    with OpenAIChatServer(["ok"]) as server:
        server.fail_chat(429, retry_after_ms=150)
        ask(client(server), CallGuard(policy=policy))
        assert 0.15 <= gaps(server)[0] < 0.9
    capped = RetryPolicy(retries=2, max_wait=0.1, base_delay=0.001)
    with OpenAIChatServer([ChatFault.rate_limited("30"), "ok"]) as server:  # asks for 30 s: waits the cap, 0.1 s
        ask(client(server), CallGuard(policy=capped))
        assert 0.1 <= gaps(server)[0] < 1.0


@STREAMING
def test_429_without_retry_after_backs_off_and_succeeds(streaming: bool) -> None:
    with OpenAIChatServer([ChatFault.rate_limited(), ChatFault.rate_limited(), "ok"]) as server:
        reply, used = ask(client(server, streaming=streaming))
        assert len(server.chat_requests) == 3
    assert reply.content == "ok" and used["retries"] == 2


def test_backoff_is_exponential_with_full_jitter() -> None:
    policy = RetryPolicy(retries=9, max_wait=100.0, base_delay=1.0)
    rng = random.Random(7)
    for n in range(6):
        waits = [policy.wait(n, None, rng) for _ in range(200)]
        assert all(0.0 <= w <= 2 ** n for w in waits)  # within [0, base * 2^n]
        assert len(set(waits)) == len(waits)  # jittered, not a fixed delay
        assert max(waits) > 0.8 * 2 ** n  # the window grows with n
    assert policy.wait(30, None, rng) <= 100.0 and policy.wait(0, 7.5, rng) == 7.5


@STREAMING
@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_retried(streaming: bool, status: int) -> None:
    with OpenAIChatServer([ChatFault.server_error(status), "ok"]) as server:
        reply, used = ask(client(server, streaming=streaming))
        assert len(server.chat_requests) == 2
    assert reply.content == "ok" and used["retries"] == 1


@STREAMING
def test_a_dropped_connection_is_retried(streaming: bool) -> None:
    with OpenAIChatServer([ChatFault.dropped(), "ok"]) as server:
        reply, used = ask(client(server, streaming=streaming))
    assert reply.content == "ok" and used["retries"] == 1


REMOTE = CallGuard(policy=FAST, is_local=lambda endpoint: False)  # the loopback server taken as a remote one


@STREAMING
def test_a_remote_reply_slower_than_the_client_timeout_is_retried(streaming: bool) -> None:
    with OpenAIChatServer([ChatFault.slow(1.5), "ok"]) as server:
        reply, used = ask(client(server, streaming=streaming, timeout=0.3), REMOTE)
        waited = gaps(server)
    assert reply.content == "ok" and used["retries"] == 1 and used["timeouts"] == 1
    assert 0.3 <= waited[0] < 1.4  # the client gave up at its timeout, not when the server answered


@STREAMING
def test_a_local_servers_timed_out_call_is_not_sent_again(streaming: bool) -> None:
    """A local server that took too long is busy computing that very request: sending it again would only start the
    computation over (issue 26), so the call fails at once, saying why."""
    with OpenAIChatServer([ChatFault.slow(1.5), "ok"]) as server:
        with pytest.raises(ModelCallError) as err:
            ask(client(server, streaming=streaming, timeout=0.3))
        assert len(server.chat_requests) == 1
    assert err.value.kind == "timeout" and err.value.retries == 0
    assert "is not sent again" in str(err.value) and "within 0.3 s" in str(err.value)


def test_timed_out_calls_are_retried_at_most_the_runs_cap() -> None:
    taken: list[int] = []

    def gate() -> str | None:  # the run's `max_timeout_retries` = 1
        taken.append(1)
        return None if len(taken) <= 1 else "timeout"

    with OpenAIChatServer([ChatFault.slow(1.5), ChatFault.slow(1.5), "ok"]) as server:
        guard = CallGuard(policy=FAST, is_local=lambda endpoint: False, timeout_gate=gate)
        with pytest.raises(ModelCallError) as err:
            ask(client(server, timeout=0.3), guard)
        assert len(server.chat_requests) == 2
    assert err.value.kind == "timeout" and err.value.capped == "timeout" and "(timeout retry cap)" in str(err.value)


@STREAMING
def test_retries_exhausted_raise_the_kind(streaming: bool) -> None:
    with OpenAIChatServer([ChatFault.server_error(503)] * 5) as server:
        with pytest.raises(ModelCallError) as err:
            ask(client(server, streaming=streaming), CallGuard(policy=RetryPolicy(retries=2, max_wait=0.01)))
        assert len(server.chat_requests) == 3
    assert err.value.kind == "server_error" and err.value.transport and err.value.retries == 2
    assert str(err.value).startswith("server_error: solver model:") and "after 2 retries" in str(err.value)


def test_errors_a_retry_cannot_mend_fail_at_once() -> None:
    with OpenAIChatServer(["never"]) as server:
        server.fail_chat(401)
        with pytest.raises(ModelCallError) as err:
            ask(client(server))
        assert len(server.chat_requests) == 1
    assert err.value.kind == "auth" and err.value.retries == 0
    # Ollama's answer to `tools` for a model without function calling
    with OpenAIChatServer(["never"], tools_supported=False) as server:
        model = client(server).bind_tools([{"type": "function", "function": {"name": "f", "parameters": {}}}])
        with pytest.raises(ModelCallError) as err:
            ask(model)
        assert len(server.chat_requests) == 1
    assert err.value.kind == "no_tool_calling"


def test_classify_is_provider_agnostic() -> None:
    class StatusError(Exception):
        def __init__(self, status: int, msg: str = "") -> None:
            super().__init__(msg)
            self.status_code = status

    class ReadTimeout(Exception):
        pass

    assert classify(StatusError(429)) == "rate_limited" and classify(StatusError(529)) == "server_error"
    assert classify(StatusError(400, "tool choice requires --enable-auto-tool-choice")) == "no_tool_calling"
    assert classify(StatusError(400, "maximum context length is 8192 tokens")) == "context_length"
    assert classify(ReadTimeout()) == "timeout" and classify(ConnectionResetError()) == "connection"
    assert classify(RuntimeError("a bug, not a provider")) is None

    class Limited(Exception):
        response = type("R", (), {"headers": {"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}})()

    assert retry_after(Limited(), now=1445412480.0) == 10.0


def test_a_retry_after_date_without_a_zone_is_utc_whatever_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    class Limited(Exception):
        response = type("R", (), {"headers": {"retry-after": "Wed, 21 Oct 2015 07:28:10 -0000"}})()

    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        assert retry_after(Limited(), now=1445412480.0) == 10.0
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_a_model_made_from_a_string_leaves_retrying_to_us(monkeypatch: pytest.MonkeyPatch) -> None:
    with OpenAIChatServer([ChatFault.rate_limited("0"), "ok"]) as server:
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        model = init_model("openai:gpt-test", request_timeout=7.5)
        reply, used = ask(model)
        assert len(server.chat_requests) == 2
    # a loopback server's model gets no fixed timeout: `call_role` streams its calls with the run's stall_timeout
    assert getattr(model, "max_retries", None) == 0 and getattr(model, "request_timeout", None) is None
    assert reply.content == "ok" and used["retries"] == 1  # our retry, counted (not the client's own)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gpu-host.invalid:8000/v1")  # built only: no request is sent
    remote = init_model("openai:gpt-test", request_timeout=7.5)
    assert getattr(remote, "max_retries", None) == 0 and getattr(remote, "request_timeout", None) == 7.5


def test_retry_settings_are_validated() -> None:
    cfg = AnyToolConfig(model_retries=0, max_retries_per_run=0, retry_max_wait=2, request_timeout=0.5)
    assert cfg.retry_max_wait == 2.0 and isinstance(cfg.retry_max_wait, float)
    assert AnyToolConfig.from_env({"ANYTOOL_RETRY_MAX_WAIT": "0.25"}).retry_max_wait == 0.25
    for bad in ({"retry_max_wait": 0}, {"request_timeout": "soon"}, {"model_retries": -1}, {"retry_max_wait": True},
                {"request_timeout": float("inf")}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            AnyToolConfig(**bad)
    with pytest.raises(ValueError, match="max_retries"):
        RetryBudget(-1)


# ---------------------------------------------------------------------------------------------- whole runs
GRAPH_CFG: dict[str, Any] = {"seed_with_search": False, "model_retries": 5, "retry_max_wait": 0.01}


def always(fault: ChatFault) -> Any:
    return lambda n, body: fault


def test_a_run_whose_model_keeps_failing_ends_as_error_with_its_kind() -> None:
    with OpenAIChatServer(fault_hook=always(ChatFault.rate_limited("0"))) as server:
        graph = create_anytool_graph(Catalog.builtin(), client(server), config=AnyToolConfig(**GRAPH_CFG))
        out = graph.invoke({"query": "What is 17 * 23?"})
        sent = len(server.chat_requests)
    assert out["status"] == "error" and out["error_kind"] == "rate_limited"
    assert out["reason"].startswith("rate_limited: meta model:") and "after 5 retries" in out["reason"]
    assert sent == 6  # the first call and its 5 retries; the run does not reflect on a failing provider


def test_the_run_retry_cap_stops_retrying() -> None:
    cfg = AnyToolConfig(**{**GRAPH_CFG, "max_retries_per_run": 3})
    with OpenAIChatServer(fault_hook=always(ChatFault.server_error(502))) as server:
        out = create_anytool_graph(Catalog.builtin(), client(server), config=cfg).invoke({"query": "q"})
        sent = len(server.chat_requests)
    assert sent == 4 and out["error_kind"] == "server_error"
    assert out["reason"].endswith("after 3 retries (run retry cap)")


def test_the_batch_retry_budget_is_shared_by_runs() -> None:
    budget = RetryBudget(4)
    with OpenAIChatServer(fault_hook=always(ChatFault.dropped())) as server:
        graph = create_anytool_graph(Catalog.builtin(), client(server), config=AnyToolConfig(**GRAPH_CFG),
                                     retry_budget=budget)
        outs: list[dict[str, Any]] = []
        threads = [threading.Thread(target=lambda: outs.append(graph.invoke({"query": "q"}))) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        sent = len(server.chat_requests)
    assert budget.used == 4 and budget.refused == 3  # every run asked for one more and was refused
    assert sent == 3 + 4  # three first calls, four retries in all (each run alone would have allowed five)
    assert all(o["status"] == "error" and o["error_kind"] == "connection" for o in outs)
    assert all(o["reason"].endswith("(batch retry cap)") for o in outs)


def test_retries_that_succeed_are_counted_in_the_run_usage() -> None:
    catalog, executor = make_world()
    weather = catalog.function_name(catalog.find_api("Weather Now", "Current").id)
    with OpenAIChatServer([responder(weather)] * 20, fault_hook=lambda n, body: (
            ChatFault.rate_limited("0") if n in (1, 2) else None)) as server:
        out = create_anytool_graph(catalog, client(server), config=AnyToolConfig(**GRAPH_CFG),
                                   executor=executor).invoke({"query": "What's the temperature in Paris?"})
    assert out["status"] == "solved" and out["error_kind"] == ""
    assert out["usage"]["meta"]["retries"] == 2


def failing_role(weather: str, role: str, fault: ChatFault) -> Any:
    """The loopback responder, with every request of `role` ("solver": `Finish` bound; "judge": no tools) failing."""
    base = responder(weather)

    def reply(body: dict[str, Any]) -> str | ChatReply | ChatFault:
        tools = [t["function"]["name"] for t in body.get("tools") or []]
        if (role == "solver" and "Finish" in tools) or (role == "judge" and not tools):
            return fault
        return base(body)

    return reply


@pytest.mark.parametrize("role", ["solver", "judge"])
def test_a_solver_or_judge_that_fails_for_good_is_an_error_not_unsolved(role: str) -> None:
    catalog, executor = make_world()
    weather = catalog.function_name(catalog.find_api("Weather Now", "Current").id)
    with OpenAIChatServer([failing_role(weather, role, ChatFault.server_error(503))] * 40) as server:
        out = create_anytool_graph(catalog, client(server), config=AnyToolConfig(**{**GRAPH_CFG, "model_retries": 1}),
                                   executor=executor).invoke({"query": "What's the temperature in Paris?"})
    assert out["status"] == "error" and out["error_kind"] == "server_error"
    assert out["reason"].startswith(f"server_error: {role} model:")
    if role == "judge":  # the solver's answer is kept
        assert out["answer"] == "It is 21°C in Paris."


@pytest.mark.parametrize("key", [SECRET, "vllm-local-token-93f1c2e8"], ids=["openai-shaped", "any-shape"])
def test_a_secret_key_never_reaches_the_state_or_the_reason(key: str) -> None:
    echo = {"error": {"message": f"Incorrect API key provided: {key}. You sent: {key}",
                      "type": "invalid_request_error", "code": "invalid_api_key"}}
    with OpenAIChatServer(["never"]) as server:
        server.fail_next(OpenAIChatServer.PATH, 401, 5, body=echo)
        model = ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key=key, max_retries=0)
        graph = create_anytool_graph(Catalog.builtin(), model, config=AnyToolConfig(**GRAPH_CFG),
                                     checkpointer=InMemorySaver())
        config: Any = {"configurable": {"thread_id": "secret"}}
        out = graph.invoke({"query": "q"}, config)
        history = [json.dumps(s.values, default=str) for s in graph.get_state_history(config)]
    assert out["status"] == "error" and out["error_kind"] == "auth" and "Incorrect API key" in out["reason"]
    assert key not in json.dumps(out, default=str) and all(key not in h for h in history)
    assert key[:12] not in out["reason"]  # no recognisable prefix either


# ---------------------------------------------------------------------------------------------- context limits
def long_history(turns: int, observation_chars: int) -> list[BaseMessage]:
    msgs: list[BaseMessage] = [SystemMessage("You solve tasks with tools."), HumanMessage("Find the weather.")]
    for i in range(turns):
        msgs.append(AIMessage("", tool_calls=[{"name": "weather", "args": {"i": i}, "id": f"c{i}"},
                                              {"name": "weather", "args": {"i": -i}, "id": f"d{i}"}]))
        msgs.append(ToolMessage(f"obs {i} " + "x" * observation_chars, tool_call_id=f"c{i}"))
        msgs.append(ToolMessage(f"obs -{i} " + "y" * observation_chars, tool_call_id=f"d{i}"))
    return msgs


def paired(messages: list[dict[str, Any]] | list[BaseMessage]) -> bool:
    """Every assistant tool call is answered by a tool message right after it, and every tool message answers one."""
    rows = [m if isinstance(m, dict) else {"role": m.type, "tool_calls": [{"id": tc["id"]} for tc in
                                                                          getattr(m, "tool_calls", []) or []],
                                           "tool_call_id": getattr(m, "tool_call_id", None)} for m in messages]
    i = 0
    while i < len(rows):
        calls = [tc["id"] for tc in rows[i].get("tool_calls") or []]
        if rows[i]["role"] in ("tool",):
            return False  # a tool message without its call
        i += 1
        answered = []
        while i < len(rows) and rows[i]["role"] == "tool":
            answered.append(rows[i]["tool_call_id"])
            i += 1
        if sorted(answered) != sorted(calls):
            return False
    return True


def test_fitting_cuts_observations_then_history_keeping_pairs() -> None:
    msgs = long_history(turns=12, observation_chars=3000)
    assert paired(msgs)
    obs_only = fit_prompt(None, msgs, estimate_tokens(msgs) // 2)
    assert obs_only.steps == ("observations",) and obs_only.after <= estimate_tokens(msgs) // 2
    assert len(obs_only.messages) == len(msgs) and "characters cut to fit" in str(obs_only.messages[3].content)
    assert str(obs_only.messages[3].content).startswith("obs 0 ")  # the head stays
    assert msgs[3].content == "obs 0 " + "x" * 3000  # the caller's messages are not changed

    for limit in range(600, 6000, 97):  # wherever the cut falls, no call loses its answer nor an answer its call
        assert paired(fit_prompt(None, msgs, limit).messages), limit
    tight = fit_prompt(None, msgs, 1500)
    assert tight.steps == ("observations", "history") and tight.after <= 1500
    kept = tight.messages
    assert kept[0] == msgs[0] and kept[1].content.startswith("Find the weather.")  # system and first human stay
    assert "earlier messages" in str(kept[1].content)
    assert kept[-1].tool_call_id == "d11" and kept[-3].tool_calls[0]["id"] == "c11"  # the latest turn stays
    assert paired(kept) and len(kept) < len(msgs)


def test_fitting_shortens_bound_tool_descriptions_last() -> None:
    tools = [{"type": "function", "function": {"name": f"f{i}", "description": "Does a thing. " + "detail " * 200,
                                               "parameters": {"type": "object", "properties": {
                                                   "a": {"type": "string", "description": "z" * 300}}}}}
             for i in range(10)]
    with OpenAIChatServer(["ok"]) as server:
        model = client(server).bind_tools(tools)
        msgs: list[BaseMessage] = [SystemMessage("s"), HumanMessage("q")]
        fitted = fit_prompt(model, msgs, estimate_tokens(msgs, tools) // 3)
        assert fitted.steps == ("tools",)
        short = fitted.runnable.kwargs["tools"]
        assert short[0]["function"]["description"] == "Does a thing"
        assert "description" not in short[0]["function"]["parameters"]["properties"]["a"]
        assert model.kwargs["tools"][0]["function"]["description"].startswith("Does a thing. detail")
        fitted.runnable.invoke(fitted.messages)
        assert server.chat_requests[0]["tools"][0]["function"]["description"] == "Does a thing"


def test_fitting_counts_and_shortens_the_tools_of_a_text_mode_prompt() -> None:
    """A text-mode role lists its tools in the prompt: they count against the window and are shortened too."""
    from langgraph_anytool.nodes.solver.textmode import TextToolRunnable

    tools = [{"type": "function", "function": {"name": f"f{i}", "description": "Does a thing. " + "detail " * 200,
                                               "parameters": {"type": "object", "properties": {}}}}
             for i in range(10)]
    with OpenAIChatServer(["Action: f1\nAction Input: {}"]) as server:
        model = TextToolRunnable(client(server), tools)
        msgs: list[BaseMessage] = [SystemMessage("s"), HumanMessage("q")]
        fitted = fit_prompt(model, msgs, estimate_tokens(msgs, tools) // 3)
        assert fitted.before == estimate_tokens(msgs, tools) and fitted.steps == ("tools",)
        assert isinstance(fitted.runnable, TextToolRunnable) and fitted.runnable.tools[0]["function"][
            "description"] == "Does a thing"
        fitted.runnable.invoke(fitted.messages)
        assert "detail detail" not in server.chat_requests[0]["messages"][0]["content"]


@STREAMING
def test_a_prompt_over_the_profile_window_is_cut_before_sending(streaming: bool) -> None:
    msgs = long_history(turns=6, observation_chars=2000)
    with OpenAIChatServer(["ok"], context_window=2000) as server:
        reply, used = ask(client(server, streaming=streaming), prompt=msgs,
                          profiles={"gpt-test": {"context_window": 2000}})
        sent = server.chat_requests
    assert reply.content == "ok" and used["trimmed"] == 1
    assert len(sent) == 1 and paired(sent[0]["messages"])  # fitted before the first request: no refusal


@STREAMING
def test_context_length_exceeded_shrinks_once_and_succeeds(streaming: bool) -> None:
    msgs = long_history(turns=4, observation_chars=3000)  # ~6.2k tokens: under the assumed 32k, over the server's
    with OpenAIChatServer(["ok"], context_window=3500) as server:
        reply, used = ask(client(server, streaming=streaming), prompt=msgs)
        sent = server.chat_requests
    assert reply.content == "ok" and used["trimmed"] == 1 and "retries" not in used
    assert len(sent) == 2 and paired(sent[1]["messages"])
    assert "characters cut to fit" in json.dumps(sent[1]["messages"]) and len(json.dumps(sent[1])) < len(
        json.dumps(sent[0])) // 2 + 2000


def test_context_length_twice_fails_with_the_kind() -> None:
    msgs = long_history(turns=4, observation_chars=3000)
    with OpenAIChatServer(["ok"], context_window=300) as server:
        with pytest.raises(ModelCallError) as err:
            ask(client(server), prompt=msgs)
        # once as it was, then cut to what each overflow reply stated (the window, the prompt's tokens): no more
        assert len(server.chat_requests) == 3
    assert err.value.kind == "context_length" and "even cut to the counts the server stated" in str(err.value)


def test_a_solver_prompt_that_does_not_fit_ends_the_attempt_with_that_reason() -> None:
    catalog, executor = make_world()
    weather = catalog.function_name(catalog.find_api("Weather Now", "Current").id)
    with OpenAIChatServer([failing_role(weather, "solver", ChatFault.context_length())] * 40) as server:
        out = create_anytool_graph(catalog, client(server), config=AnyToolConfig(**GRAPH_CFG),
                                   executor=executor).invoke({"query": "What's the temperature in Paris?"})
    attempt = out["solver_attempts"][-1]
    assert attempt["finish_type"] == "context_length" and attempt["reason"].startswith("context_length: solver model")
    assert out["status"] == "error" and out["error_kind"] == "context_length"
    assert out["reason"] == attempt["reason"]


def test_the_run_retry_tally_is_seeded_from_the_checkpointed_usage() -> None:
    from langgraph_anytool.runtime import RunSignals

    signals = RunSignals()
    signals.seed_retries("r", 3)
    signals.seed_retries("r", 1)  # never lowered
    assert signals.retries("r") == 3
    assert signals.take_retry("r", 4) is None and signals.take_retry("r", 4) == "run"


def test_a_resumed_run_keeps_counting_its_retries() -> None:
    """Two retries spent before a checkpoint count against the run's cap of two after a resume in a new graph."""
    catalog, executor = make_world()
    weather = catalog.function_name(catalog.find_api("Weather Now", "Current").id)
    base = responder(weather)
    solver_seen: list[int] = []

    def reply(body: dict[str, Any]) -> str | ChatReply | ChatFault:
        if any(t["function"]["name"] == "Finish" for t in body.get("tools") or []):
            solver_seen.append(1)
            if len(solver_seen) == 1:
                return ChatFault.rate_limited("0")
        return base(body)

    cfg = AnyToolConfig(**{**GRAPH_CFG, "max_retries_per_run": 2})
    saver = InMemorySaver()
    config: Any = {"configurable": {"thread_id": "resume"}}
    with OpenAIChatServer([reply] * 40, fault_hook=lambda n, body: (
            ChatFault.rate_limited("0") if n in (1, 2) else None)) as server:
        first = create_anytool_graph(catalog, client(server), config=cfg, executor=executor, checkpointer=saver)
        first.invoke({"query": "What's the temperature in Paris?"}, config, interrupt_before=["gate"])
        assert first.get_state(config).values["usage"]["meta"]["retries"] == 2
        again = create_anytool_graph(catalog, client(server), config=cfg, executor=executor, checkpointer=saver)
        out = again.invoke(None, config)
    assert out["status"] == "error" and out["error_kind"] == "rate_limited"
    assert out["reason"].endswith("after 0 retries (run retry cap)")


def test_a_streamed_reply_without_usage_counts_estimated_tokens_not_zero() -> None:
    """An OpenAI-compatible server streams no usage unless asked (`stream_usage`): the zero counts the client
    reports must not starve the token budget, so the call's tokens are estimated and labelled."""
    with OpenAIChatServer(["a streamed answer of some length"]) as server:
        model = ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key=SECRET, max_retries=0,
                           streaming=True, stream_usage=False)
        _, used = ask(model, prompt=[HumanMessage("x" * 400)])
    assert used["input_tokens"] >= 100 and used["output_tokens"] > 0
    assert used["estimated_tokens"] == used["input_tokens"] + used["output_tokens"]


def test_zero_usage_counts_are_estimated() -> None:
    """Some gateways send a usage block of zeros on streamed replies: estimated (and labelled), not taken as 0."""
    from langgraph_anytool.models.llm import message_usage

    msg = AIMessage("an answer", usage_metadata={"input_tokens": 0, "output_tokens": 0, "total_tokens": 0})
    used = message_usage(msg, [HumanMessage("y" * 80)])
    assert used["input_tokens"] == 20 and used["estimated_tokens"] == used["input_tokens"] + used["output_tokens"]


def test_a_solvable_check_that_fails_for_good_ends_the_agent_as_an_error() -> None:
    """The tool agent's `check_if_request_solvable` makes its own model call: when that fails for good, the agent
    ends on the error (the provider is failing), and the run says so instead of treating it as a function error."""
    from langgraph_anytool.nodes.tool_agent.prompts import SOLVABLE_SYSTEM

    catalog, executor = make_world()
    weather = catalog.function_name(catalog.find_api("Weather Now", "Current").id)
    base = responder(weather)

    def reply(body: dict[str, Any]) -> str | ChatReply | ChatFault:
        msgs = body["messages"]
        tools = [t["function"]["name"] for t in body.get("tools") or []]
        if msgs and msgs[0]["role"] == "system" and msgs[0]["content"] == SOLVABLE_SYSTEM:
            return ChatFault.server_error(503)
        if "add_apis_into_api_pool" in tools:
            turns = sum(m["role"] == "assistant" for m in msgs)
            if turns == 0:
                return tool_call("add_apis_into_api_pool", apis=[{"tool_name": "Weather Now", "api_name": "Current"}])
            return tool_call("check_if_request_solvable") if turns == 1 else tool_call("finish_search")
        return base(body)

    with OpenAIChatServer([reply] * 40) as server:
        out = create_anytool_graph(catalog, client(server), config=AnyToolConfig(**{**GRAPH_CFG, "model_retries": 1}),
                                   executor=executor).invoke({"query": "What's the temperature in Paris?"})
        checks = [b for b in server.chat_requests if b["messages"][0]["content"] == SOLVABLE_SYSTEM]
        after = server.chat_requests[server.chat_requests.index(checks[-1]) + 1:]
    assert len(checks) == 2  # the check and its one retry
    assert out["usage"]["solvable"]["retries"] == 1  # counted, as the agents' own failed calls are
    tool_agents = [a for a in out["agents"].values() if a["level"] == "tool"]
    assert tool_agents and tool_agents[0]["end_reason"].startswith("error: server_error: solvable model:")
    # the failing agent asked nothing more of its model after the failed check
    assert not any("add_apis_into_api_pool" in [t["function"]["name"] for t in b.get("tools") or []] for b in after)


def test_the_request_timeout_cannot_be_set_per_run() -> None:
    """The timeout is given to the models' clients when the graph is built: a run's context cannot change it, and
    the refusal names the field rather than ignoring it (LangGraph's context schema, or our settings check)."""
    from langgraph_anytool.context import resolve_settings

    graph = create_anytool_graph(Catalog.builtin(), "offline")
    with pytest.raises(TypeError, match="request_timeout"):
        graph.invoke({"query": "What is 17 * 23?"}, context={"request_timeout": 5.0})
    with pytest.raises(ConfigError, match="request_timeout cannot change per run"):
        resolve_settings(AnyToolConfig(), {"request_timeout": 5.0})


def test_a_judge_failing_in_its_second_stage_is_an_error_with_its_retries() -> None:
    """ToolEval's second stage runs on an Unsure of the first: when it fails for good, the run ends as an error
    and the retries it spent are in the run's usage (a resumed run's retry tally is rebuilt from usage)."""
    from langgraph_anytool.nodes.judge.tooleval_prompts import ANSWER_STATUS_SYSTEM

    catalog, executor = make_world()
    weather = catalog.function_name(catalog.find_api("Weather Now", "Current").id)
    base = responder(weather)

    def reply(body: dict[str, Any]) -> str | ChatReply | ChatFault:
        if body.get("tools"):
            return base(body)
        if body["messages"][0]["content"] == ANSWER_STATUS_SYSTEM:
            return ChatReply(content=json.dumps({"label": "Unsure", "reason": "cannot tell"}), usage=(700, 9))
        return ChatFault.server_error(503)

    with OpenAIChatServer([reply] * 40) as server:
        graph = create_anytool_graph(catalog, client(server), config=AnyToolConfig(**{**GRAPH_CFG, "model_retries": 2}),
                                     executor=executor)
        out = graph.invoke({"query": "What's the temperature in Paris?"})
    assert out["status"] == "error" and out["error_kind"] == "server_error"
    assert out["usage"]["judge"]["retries"] == 2


def test_retry_waits_stop_at_the_runs_wall_time_budget() -> None:
    """A server asking to wait 30 s does not hold a run past its `max_seconds`: the wait is cut to the time left
    and no retry starts after it."""
    import time

    cfg = AnyToolConfig(**{**GRAPH_CFG, "retry_max_wait": 30.0, "max_seconds": 1.0})
    with OpenAIChatServer(fault_hook=always(ChatFault.rate_limited("30"))) as server:
        started = time.monotonic()
        out = create_anytool_graph(Catalog.builtin(), client(server), config=cfg).invoke({"query": "q"})
        took = time.monotonic() - started
        sent = len(server.chat_requests)
    assert took < 5 and sent == 2  # the first call, one retry after the cut wait, then the budget's refusal
    assert out["status"] == "budget_exhausted" and out["stop_reason"] == "wall_time"
    assert out["agents"]["meta"]["end_reason"].endswith("(wall-time retry cap)")
