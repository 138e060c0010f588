"""Content faults of a real model endpoint (issue 15): what a model writes that is malformed, answered back as an
error it can correct, counted per role, bounded; and the automatic text-mode fallback for models without tool
calling. Every model call goes through the real `ChatOpenAI` client (sync and streaming) to a loopback
OpenAI-compatible server that scripts the faults."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_anytool import AnyToolConfig, create_anytool_graph
from langgraph_anytool.catalog import Catalog
from langgraph_anytool.eval.anytool.runner import usage_summary
from langgraph_anytool.graphs.solver import build_solver_graph
from langgraph_anytool.models.faults import fault_usage, next_streak, review_reply
from langgraph_anytool.models.llm import ModelCallError, ModelSet
from langgraph_anytool.nodes.lifecycle import pool_entry
from langgraph_anytool.nodes.solver import prompts
from langgraph_anytool.nodes.solver.textmode import refuses_tools
from langgraph_anytool.runtime import Deps, RunSignals
from langgraph_anytool.state import PoolEntry
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.servers import ChatReply, OpenAIChatServer, tool_call

CAT = Catalog.builtin()
LENGTH_ID = "Units_Conversion/quick_metric_converter/convert_length"
FN = CAT.function_name(LENGTH_ID)
GOOD = {"value": 5, "from_unit": "km", "to_unit": "m"}
OTHER = {"value": 1, "from_unit": "mi", "to_unit": "km"}
ANSWER = "5 km is 5000 m."
FINISH = tool_call("Finish", return_type="give_answer", final_answer=ANSWER)
MODES = pytest.mark.parametrize("streaming", [False, True], ids=["sync", "stream"])


@pytest.fixture(scope="module")
def executor() -> Any:
    with ApiExecutor.for_catalog(CAT, kind="local") as ex:
        yield ex


def chat(server: OpenAIChatServer, streaming: bool = False, name: str = "gpt-test") -> ChatOpenAI:
    return ChatOpenAI(model=name, base_url=server.base_url, api_key="sk-test", streaming=streaming, max_retries=0,
                      timeout=10)


def pool(*api_ids: str) -> list[PoolEntry]:
    return [pool_entry(CAT, api_id, "test") for api_id in api_ids]


def solve(model: ChatOpenAI, executor: ApiExecutor, **config: Any) -> tuple[dict[str, Any], dict[str, Any], Deps]:
    """The solver graph alone over a fixed pool → (attempt, usage, deps)."""
    deps = Deps(catalog=CAT, models=ModelSet(default=None, by_role={"solver": model}), executor=executor,
                config=AnyToolConfig(**config), signals=RunSignals())
    out = build_solver_graph(deps).invoke({"query": "How many metres are 5 km?", "run_key": "run1", "round": 0,
                                           "api_pool": pool(LENGTH_ID), "previous_attempts": []})
    assert len(out["solver_attempts"]) == 1
    json.dumps(out["solver_attempts"][0])
    return out["solver_attempts"][0], out["usage"], deps


def assert_paired(requests: list[dict[str, Any]]) -> None:
    """Every tool call of every assistant message sent is answered by a tool message before the next model turn."""
    assert requests
    for body in requests:
        open_ids: list[str] = []
        for m in body["messages"]:
            if m["role"] == "assistant":
                assert not open_ids, f"unanswered tool calls {open_ids} before the next assistant turn"
                open_ids = [tc["id"] for tc in m.get("tool_calls") or []]
            elif m["role"] == "tool":
                assert m["tool_call_id"] in open_ids, f"tool message for {m['tool_call_id']} answers no open call"
                open_ids.remove(m["tool_call_id"])
            else:
                assert not open_ids, f"unanswered tool calls {open_ids} before a {m['role']} message"
        assert not open_ids


def last_message(body: dict[str, Any]) -> dict[str, Any]:
    return body["messages"][-1]


def node(attempt: dict[str, Any], node_id: int) -> dict[str, Any]:
    return next(n for n in attempt["tree"] if n["id"] == node_id)


# --------------------------------------------------------------------------------- DFSDT: each fault, corrected
NOT_JSON = ChatReply(raw_tool_calls=[(FN, "value=5, from_unit=km, to_unit=m")])
TRUNCATED = ChatReply(raw_tool_calls=[(FN, '{"value": 5, "from_unit": "km"')])  # streaming repairs it to 2 fields
MISSING = ChatReply(raw_tool_calls=[(FN, '{"value": 5}')])
WRONG_TYPE = ChatReply(raw_tool_calls=[(FN, '{"value": "five", "from_unit": "km", "to_unit": "m"}')])
UNKNOWN = tool_call("convert_anything", value=5)
EMPTY = ChatReply()
REFUSAL = ChatReply(refusal="I cannot help with unit conversions.")

# fault → (kind counted when sync, when streaming, what the model is told next)
FAULTS: dict[str, tuple[ChatReply, str, str, str]] = {
    "not_json": (NOT_JSON, "bad_json", "bad_json", "malformed arguments"),
    "truncated_json": (TRUNCATED, "bad_json", "bad_arguments", ""),
    "missing_field": (MISSING, "bad_arguments", "bad_arguments", "missing required parameter from_unit"),
    "wrong_type": (WRONG_TYPE, "bad_arguments", "bad_arguments", "expected a number"),
    "unknown_function": (UNKNOWN, "unknown_function", "unknown_function", f"does not exist; call only the "
                                                                         f"functions you were given: {FN}, Finish"),
    "empty": (EMPTY, "empty", "empty", prompts.NUDGE),
    # ChatOpenAI drops the `refusal` delta when streaming: the turn is an empty one there
    "refusal": (REFUSAL, "refusal", "empty", prompts.NUDGE),
}


@MODES
@pytest.mark.parametrize("fault", list(FAULTS))
def test_dfsdt_answers_each_fault_and_the_corrected_turn_solves(fault: str, streaming: bool,
                                                                executor: ApiExecutor) -> None:
    reply, kind_sync, kind_stream, told = FAULTS[fault]
    kind = kind_stream if streaming else kind_sync
    with OpenAIChatServer([reply, tool_call(FN, **GOOD), FINISH]) as server:
        attempt, usage, _ = solve(chat(server, streaming), executor)
        requests = server.chat_requests
    assert attempt["finish_type"] == "give_answer" and attempt["answer"] == ANSWER
    assert len(requests) == 3
    assert_paired(requests)
    answer = last_message(requests[1])  # what the model saw after its faulty turn
    if kind in ("empty", "refusal"):
        assert answer["role"] == "user" and answer["content"] == told
    else:
        assert answer["role"] == "tool" and answer["tool_call_id"] == "call_1_0"
        assert told in answer["content"]
    assert usage["solver"]["malformed"] == 1 and usage["solver"][f"malformed_{kind}"] == 1
    assert usage["solver"].get("hallucinated", 0) == int(kind == "unknown_function")
    assert node(attempt, 2)["calls"][0]["status"] == "ok"  # the correction ran
    if kind == "refusal":  # its text is recorded in the tree and shown back to the model
        step = node(attempt, 1)
        assert step["messages"][0]["content"] == "I cannot help with unit conversions."
        assert "refusal: I cannot help" in step["note"]
        assert requests[1]["messages"][-2] == {"role": "assistant", "content": "I cannot help with unit conversions."}


@MODES
def test_text_with_a_call_runs_the_call_and_keeps_the_text_as_thought(streaming: bool, executor: ApiExecutor) -> None:
    thought = "I will convert 5 km to metres first."
    with OpenAIChatServer([ChatReply(content=thought, tool_calls=[(FN, GOOD)]), FINISH]) as server:
        attempt, usage, _ = solve(chat(server, streaming), executor)
        assert_paired(server.chat_requests)
    step = node(attempt, 1)
    assert step["messages"][0]["content"] == thought and step["calls"][0]["status"] == "ok"
    assert attempt["finish_type"] == "give_answer" and "malformed" not in usage["solver"]


@MODES
def test_several_calls_in_one_turn_all_run_in_dfsdt(streaming: bool, executor: ApiExecutor) -> None:
    with OpenAIChatServer([ChatReply(tool_calls=[(FN, GOOD), (FN, OTHER)]), FINISH]) as server:
        attempt, usage, _ = solve(chat(server, streaming), executor)
        assert_paired(server.chat_requests)
    assert [c["status"] for c in node(attempt, 1)["calls"]] == ["ok", "ok"]
    assert attempt["api_calls"] == 2 and "malformed" not in usage["solver"]


@MODES
def test_an_action_written_as_text_by_a_tool_calling_model_is_run(streaming: bool, executor: ApiExecutor) -> None:
    text = f"Thought: convert the distance.\nAction: {FN}\nAction Input: {json.dumps(GOOD)}"
    with OpenAIChatServer([ChatReply(content=text), FINISH]) as server:
        attempt, usage, _ = solve(chat(server, streaming), executor)
        requests = server.chat_requests
    assert_paired(requests)
    step = node(attempt, 1)
    assert step["calls"][0]["status"] == "ok" and step["calls"][0]["arguments"] == GOOD
    assert step["messages"][0]["content"] == "Thought: convert the distance."
    # the parsed call went back to the endpoint as a native tool call, answered by its tool message
    sent = requests[1]["messages"]
    assert sent[-2]["tool_calls"][0]["function"]["name"] == FN and sent[-1]["role"] == "tool"
    assert "5000" in sent[-1]["content"]
    assert usage["solver"]["text_actions"] == 1 and "malformed" not in usage["solver"]
    assert attempt["answer"] == ANSWER


# --------------------------------------------------------------------------------- the bound
@MODES
def test_consecutive_malformed_turns_end_the_attempt_naming_the_last_fault(streaming: bool,
                                                                           executor: ApiExecutor) -> None:
    with OpenAIChatServer([NOT_JSON, UNKNOWN, MISSING, tool_call(FN, **GOOD), FINISH]) as server:
        attempt, usage, _ = solve(chat(server, streaming), executor)
        requests = server.chat_requests
        left = server.remaining
    assert attempt["finish_type"] == "malformed"
    assert attempt["reason"].startswith("3 malformed model turns in a row (max_malformed_turns=3)")
    assert "arguments that do not match the function's parameters" in attempt["reason"]
    assert len(requests) == 3 and left == 2  # no model call after the bound
    assert_paired(requests)
    assert usage["solver"]["malformed"] == 3 and usage["solver"]["hallucinated"] == 1


def test_the_bound_is_a_setting_and_an_accepted_call_resets_the_streak(executor: ApiExecutor) -> None:
    script = [NOT_JSON, tool_call(FN, **GOOD), EMPTY, tool_call(FN, **OTHER), UNKNOWN, FINISH]
    with OpenAIChatServer(script) as server:
        attempt, usage, _ = solve(chat(server), executor, max_malformed_turns=2)
    assert attempt["finish_type"] == "give_answer"  # never two in a row
    assert usage["solver"]["malformed"] == 3
    with OpenAIChatServer([EMPTY, NOT_JSON, FINISH]) as server:
        attempt, _, _ = solve(chat(server), executor, max_malformed_turns=2)
    assert attempt["finish_type"] == "malformed" and "not a JSON object" in attempt["reason"]


def test_a_model_that_never_stops_failing_ends_after_the_bound(executor: ApiExecutor) -> None:
    with OpenAIChatServer(policy=lambda body: REFUSAL) as server:
        attempt, usage, _ = solve(chat(server), executor)
        sent = len(server.chat_requests)
    assert attempt["finish_type"] == "malformed" and sent == 3
    assert "last: a refusal (I cannot help with unit conversions.)" in attempt["reason"]
    assert usage["solver"]["malformed_refusal"] == 3


# --------------------------------------------------------------------------------- text-mode fallback (solver)
def text_action(name: str, args: dict[str, Any]) -> str:
    return f"Thought: next step.\nAction: {name}\nAction Input: {json.dumps(args)}"


TEXT_SCRIPT = [text_action(FN, GOOD), text_action("Finish", {"return_type": "give_answer", "final_answer": ANSWER})]


@pytest.mark.parametrize("how", ["table", "override"])
def test_a_profile_without_tool_calling_solves_in_text_mode(how: str, executor: ApiExecutor) -> None:
    name, profiles = ("llama3", {}) if how == "table" else ("my-vllm-model", {"my-vllm": {"tool_calling": False}})
    with OpenAIChatServer(TEXT_SCRIPT, tools_supported=False) as server:
        attempt, usage, _ = solve(chat(server, name=name), executor, model_profiles=profiles)
        requests = server.chat_requests
    assert attempt["finish_type"] == "give_answer" and attempt["answer"] == ANSWER
    assert node(attempt, 1)["calls"][0]["status"] == "ok"
    assert all("tools" not in r for r in requests)  # tools never offered natively
    assert "Action Input:" in requests[0]["messages"][0]["content"] and FN in requests[0]["messages"][0]["content"]
    assert "text_fallbacks" not in usage["solver"]


@MODES
def test_an_endpoint_refusing_tools_falls_back_to_text_mode_for_the_run(streaming: bool,
                                                                        executor: ApiExecutor) -> None:
    with OpenAIChatServer(TEXT_SCRIPT, tools_supported=False) as server:
        attempt, usage, deps = solve(chat(server, streaming), executor)
        requests = server.chat_requests
    assert attempt["finish_type"] == "give_answer" and attempt["answer"] == ANSWER
    # one refused request (with tools), then text mode, remembered: the second step sends no tools either
    assert [("tools" in r) for r in requests] == [True, False, False]
    assert usage["solver"]["text_fallbacks"] == 1 and usage["solver"]["model_calls"] == 2
    assert deps.signals.in_text_mode("run1", "solver") and not deps.signals.in_text_mode("run1", "caller")


def test_refusals_of_tools_are_told_apart_from_other_errors() -> None:
    class Http(Exception):
        def __init__(self, status: int, text: str) -> None:
            super().__init__(text)
            self.status_code = status

    vllm = ('Error code: 400 - {"object": "error", "message": "\\"auto\\" tool choice requires '
            '--enable-auto-tool-choice and --tool-call-parser to be set", "type": "BadRequestError"}')
    assert refuses_tools(Http(400, vllm))
    assert refuses_tools(Http(400, "registry.ollama.ai/library/llama3:latest does not support tools"))
    assert refuses_tools(ModelCallError("no_tool_calling", "the endpoint refuses tools"))
    assert not refuses_tools(ModelCallError("bad_request", "maximum context length is 4096 tokens"))
    assert not refuses_tools(Http(500, "does not support tools"))  # a server error is not a refusal
    assert not refuses_tools(Http(400, "Invalid 'messages[2].content': string too long"))


# --------------------------------------------------------------------------------- α-UMi's caller
def umi_responder(caller_turns: list[ChatReply | str]) -> Callable[[dict[str, Any]], ChatReply | str]:
    """Planner: "Next: caller" until two results were observed, then the summarizer; the caller's turns come from
    `caller_turns` in order (the last one repeats)."""
    turns = list(caller_turns)

    def reply(body: dict[str, Any]) -> ChatReply | str:
        system = body["messages"][0]["content"]
        if "plans what to do next" in system:
            done = system.count('"status":"ok"') >= 2
            return "We have both lengths. Next: summarizer" if done else "Convert the lengths. Next: caller"
        if "Make a conclusion" in system:
            return ANSWER
        return turns.pop(0) if len(turns) > 1 else turns[0]

    return reply


def umi_solve(server: OpenAIChatServer, streaming: bool, executor: ApiExecutor) -> tuple[dict[str, Any], dict[str, Any]]:
    model = chat(server, streaming)
    deps = Deps(catalog=CAT, models=ModelSet(default=model, by_role={}), executor=executor,
                config=AnyToolConfig(solver="umi", max_depth=30), signals=RunSignals())
    out = build_solver_graph(deps).invoke({"query": "How many metres are 5 km, and km 1 mile?", "run_key": "u",
                                           "round": 0, "api_pool": pool(LENGTH_ID), "previous_attempts": []})
    return out["solver_attempts"][0], out["usage"]


@MODES
def test_umi_caller_faults_are_answered_and_counted(streaming: bool, executor: ApiExecutor) -> None:
    caller = [NOT_JSON, UNKNOWN, ChatReply(content=text_action(FN, GOOD)),
              ChatReply(tool_calls=[(FN, OTHER), (FN, GOOD)])]
    with OpenAIChatServer([umi_responder(caller)] * 30) as server:
        attempt, usage = umi_solve(server, streaming, executor)
        requests = server.chat_requests
    assert_paired(requests)
    assert attempt["finish_type"] == "give_answer" and attempt["answer"] == ANSWER
    calls = [c for n in attempt["tree"] for c in n["calls"]]
    assert [c["status"] for c in calls] == ["malformed_arguments", "unknown_function", "ok", "ok", "not_executed"]
    extra = [m for n in attempt["tree"] for m in n["messages"] if m["role"] == "tool"][-1]
    assert "one call per turn: not run" in extra["content"]
    assert usage["caller"]["malformed"] == 3 and usage["caller"]["hallucinated"] == 1
    assert usage["caller"]["malformed_extra_calls"] == 1 and usage["caller"]["text_actions"] == 1
    assert "malformed" not in usage["planner"]


def test_umi_caller_bound_ends_the_attempt(executor: ApiExecutor) -> None:
    with OpenAIChatServer([umi_responder([NOT_JSON])] * 30) as server:
        attempt, usage = umi_solve(server, False, executor)
        assert_paired(server.chat_requests)
    assert attempt["finish_type"] == "malformed" and "not a JSON object" in attempt["reason"]
    assert usage["caller"]["malformed"] == 3 and usage["planner"]["model_calls"] == 3


# --------------------------------------------------------------------------------- retriever agents (whole graph)
TOOL = "Quick Metric Converter"
ADD = {"apis": [{"tool_name": TOOL, "api_name": "Convert Length"}]}


def anytool_responder(tool_turns: list[ChatReply | str], solver_reply: ChatReply | None = None
                      ) -> Callable[[dict[str, Any]], ChatReply | str]:
    """Answers each request by the role its functions reveal (natively bound or listed in a text-mode prompt);
    the tool agent's turns come from `tool_turns` (the last one repeats); `solver_reply` replaces the solver's."""
    turns = list(tool_turns)
    text_mode = False

    def reply(body: dict[str, Any]) -> ChatReply | str:
        nonlocal text_mode
        names = [t["function"]["name"] for t in body.get("tools") or []]
        system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
        text = not names and "Functions you can call" in system

        def offers(name: str) -> bool:
            return name in names or (text and f'"name": "{name}"' in system)

        def act(name: str, **args: Any) -> ChatReply | str:
            return text_action(name, args) if text else tool_call(name, **args)

        turn = sum(m["role"] == "assistant" for m in body["messages"])
        if offers("create_agent_category_level"):
            return act("create_agent_category_level", category_name="Units_Conversion") if turn == 0 \
                else act("finish_search")
        if offers("create_agent_tool_level"):
            return act("create_agent_tool_level", tool_names=[TOOL]) if turn == 0 else act("finish_search")
        if offers("add_apis_into_api_pool"):
            return turns.pop(0) if len(turns) > 1 else turns[0]
        if offers("Finish"):
            if solver_reply is not None:
                return solver_reply
            if not any('"status":"ok"' in str(m.get("content")) for m in body["messages"][1:]):
                return act(FN, **GOOD)
            return act("Finish", return_type="give_answer", final_answer=ANSWER)
        return ChatReply(content=json.dumps({"label": "Solved", "reason": "gives the length in metres"}))

    return reply


def run_anytool(responder: Callable[..., Any], model: Callable[[OpenAIChatServer], ChatOpenAI], executor: ApiExecutor,
                **server_options: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with OpenAIChatServer(policy=responder, **server_options) as server:
        graph = create_anytool_graph(CAT, model(server), config=AnyToolConfig(seed_with_search=False,
                                                                              max_reflections=0),
                                     executor=executor, checkpointer=InMemorySaver())
        out = graph.invoke({"query": "How many metres are 5 km?"}, {"configurable": {"thread_id": "t"}})
        return out, server.chat_requests


def tool_agent(out: dict[str, Any]) -> dict[str, Any]:
    found = [a for a in out["agents"].values() if a["level"] == "tool"]
    assert len(found) == 1
    return found[0]


@MODES
def test_tool_agent_faults_are_answered_counted_and_corrected(streaming: bool, executor: ApiExecutor) -> None:
    turns: list[ChatReply | str] = [
        ChatReply(raw_tool_calls=[("add_apis_into_api_pool", "apis: Convert Length")]),  # not JSON
        tool_call("add_everything"),  # not offered
        ChatReply(content=text_action("add_apis_into_api_pool", ADD)),  # Action text from a tool-calling model
        tool_call("finish_search"),
    ]
    out, requests = run_anytool(anytool_responder(turns), lambda s: chat(s, streaming), executor)
    assert_paired(requests)
    assert out["status"] == "solved" and out["answer"] == ANSWER
    assert [p["api_id"] for p in out["api_pool"]] == [LENGTH_ID]
    agent = tool_agent(out)
    assert agent["status"] == "finished" and agent["end_reason"] == "finish_search" and agent["invalid_calls"] == 2
    tool_msgs = [m for m in agent["messages"] if m.type == "tool"]
    assert "not valid JSON" in tool_msgs[0].content and "Valid functions" in tool_msgs[1].content
    assert out["usage"]["tool"]["malformed"] == 2 and out["usage"]["tool"]["hallucinated"] == 1
    assert out["usage"]["tool"]["text_actions"] == 1
    summary = usage_summary(out)  # the eval record keeps the counters
    assert summary["roles"]["tool"]["malformed_bad_json"] == 1 and summary["malformed"] == 2
    assert summary["hallucinated"] == 1 and summary["roles"]["tool"]["text_actions"] == 1


def test_a_tool_agent_that_keeps_failing_ends_its_activation_and_the_run_goes_on(executor: ApiExecutor) -> None:
    turns: list[ChatReply | str] = [ChatReply(raw_tool_calls=[("add_apis_into_api_pool", "{oops")])]
    out, requests = run_anytool(anytool_responder(turns), chat, executor)
    assert_paired(requests)
    agent = tool_agent(out)
    assert agent["status"] == "stopped" and agent["end_reason"].startswith("malformed: 3 malformed model turns")
    assert agent["steps"] == 3 and out["usage"]["tool"]["malformed"] == 3
    assert out["status"] == "no_apis"  # the run ended normally, with nothing in the pool


def test_a_solver_that_keeps_failing_ends_its_attempt_and_the_run_ends_normally(executor: ApiExecutor) -> None:
    turns: list[ChatReply | str] = [tool_call("add_apis_into_api_pool", **ADD), tool_call("finish_search")]
    out, requests = run_anytool(anytool_responder(turns, solver_reply=NOT_JSON), chat, executor)
    assert_paired(requests)
    (attempt,) = out["solver_attempts"]
    assert attempt["finish_type"] == "malformed" and "not a JSON object" in attempt["reason"]
    assert out["status"] == "gave_up" and out["usage"]["solver"]["malformed_bad_json"] == 3


@pytest.mark.parametrize("how", ["refusal", "profile"])
def test_the_whole_run_falls_back_to_text_mode(how: str, executor: ApiExecutor) -> None:
    name = "gpt-test" if how == "refusal" else "llama3"
    turns: list[ChatReply | str] = [text_action("add_apis_into_api_pool", ADD), text_action("finish_search", {})]
    out, requests = run_anytool(anytool_responder(turns), lambda s: chat(s, name=name), executor,
                                tools_supported=False)
    assert out["status"] == "solved" and out["answer"] == ANSWER
    with_tools = [r for r in requests if "tools" in r]
    fell_back = {r for r, v in out["usage"].items() if isinstance(v, dict) and v.get("text_fallbacks")}
    if how == "refusal":  # each function-calling role was refused once, then stayed in text mode
        assert fell_back == {"meta", "tool", "solver"} and len(with_tools) == 3
        assert all(out["usage"][r]["text_fallbacks"] == 1 for r in fell_back)
    else:
        assert fell_back == set() and with_tools == []
    assert tool_agent(out)["end_reason"] == "finish_search"


# --------------------------------------------------------------------------------- the pieces
def test_fault_counters_and_streak() -> None:
    assert fault_usage([]) == {}
    assert fault_usage(["unknown_function", "bad_json", "unknown_function"]) == {
        "malformed": 3, "malformed_unknown_function": 2, "malformed_bad_json": 1, "hallucinated": 2}
    assert next_streak(2, ["empty"], False) == 3
    assert next_streak(2, ["bad_json"], True) == 0  # a turn with an accepted call is not malformed
    assert next_streak(2, [], False) == 2  # a thought without a call neither counts nor resets


def test_review_reply_keeps_native_calls_and_parses_text_actions() -> None:
    from langchain_core.messages import AIMessage

    native = AIMessage(content="Action: x", tool_calls=[{"name": FN, "args": GOOD, "id": "c1", "type": "tool_call"}])
    assert review_reply(native) == (native, {})
    bad = review_reply(AIMessage(content="Action: f\nAction Input: [1, 2]"))[0]
    assert bad.invalid_tool_calls[0]["name"] == "f" and not bad.tool_calls
    thought = AIMessage(content="I think the answer is near.")
    assert review_reply(thought) == (thought, {})


def test_settings_of_the_bound_and_of_text_mode_roles() -> None:
    from langgraph_anytool.config import ConfigError

    assert AnyToolConfig().max_malformed_turns == 3
    assert AnyToolConfig.from_env({"ANYTOOL_MAX_MALFORMED_TURNS": "5"}).max_malformed_turns == 5
    with pytest.raises(ConfigError, match="max_malformed_turns"):
        AnyToolConfig(max_malformed_turns=0)
    assert AnyToolConfig(text_mode_roles=("meta", "category", "tool")).text_mode_roles == ("meta", "category", "tool")
    with pytest.raises(ConfigError, match="'judge' does not call functions"):
        AnyToolConfig(text_mode_roles=("judge",))


def test_the_router_falls_back_to_text_mode_when_the_endpoint_refuses_tools(executor: ApiExecutor) -> None:
    """`route_tools`: a model without function calling still routes (in `Action:` text) instead of the router's
    call failing and the run retrieving tools it does not need."""

    def reply(body: dict[str, Any]) -> ChatReply | str:
        system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
        if '"name": "answer_directly"' in system:
            return text_action("answer_directly", {"answer": "Paris is the capital of France."})
        return json.dumps({"label": "Solved", "reason": "it names the capital"})

    with OpenAIChatServer(policy=reply, tools_supported=False) as server:
        graph = create_anytool_graph(CAT, chat(server), config=AnyToolConfig(route_tools=True), executor=executor)
        out = graph.invoke({"query": "What is the capital of France?"})
        requests = server.chat_requests
    assert out["status"] == "solved" and out["answer"] == "Paris is the capital of France."
    assert out["usage"]["router"]["text_fallbacks"] == 1
    assert "meta" not in out["usage"] and len(requests) == 3  # router refused, router in text, judge: no retrieval
    assert [("tools" in r) for r in requests] == [True, False, False]
