"""Issue 21, point 9, second part: under a token budget each reply is capped at what the budget has left after the
call's prompt (estimated), sent to the provider as `max_tokens` (ChatOpenAI sends `max_completion_tokens`); a
reply cut there ends the run `budget_exhausted`; the offline stand-in honours `max_tokens` too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_anytool import AnyToolConfig, create_anytool_graph
from langgraph_anytool.catalog import Catalog
from langgraph_anytool.cli.app import main
from langgraph_anytool.models import llm
from langgraph_anytool.models.fitting import ROLE_REPLY_TOKENS, bound_tools, estimate_tokens, sent_overhead
from langgraph_anytool.models.guard import CallGuard
from langgraph_anytool.models.llm import BUDGET_KIND, ModelCallError, call_role
from langgraph_anytool.nodes.solver.textmode import TextToolRunnable
from langgraph_anytool.offline import OfflinePolicyModel
from tests.graph_world import make_world
from tests.servers import ChatReply, OpenAIChatServer, tool_call

TOOL = {"type": "function", "function": {"name": "lookup", "description": "Look a word up.",
                                         "parameters": {"type": "object", "properties": {"word": {"type": "string"}},
                                                        "required": ["word"]}}}
PROMPT = [SystemMessage("You look words up."), HumanMessage("What does 'budget' mean?")]


def _model(server: OpenAIChatServer, **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key="sk-test", max_retries=0, timeout=10,
                      **kwargs)


def _room(left: int | None) -> CallGuard:
    return CallGuard(room=lambda: left, token_budget=None if left is None else 10_000)


def _sent_cap(body: dict[str, Any]) -> int | None:
    assert "max_tokens" not in body  # langchain-openai renames it; the server must see one key only
    return body.get("max_completion_tokens")


SOLVER_CAP = ROLE_REPLY_TOKENS["solver"]  # every solver call carries it (issue 26)


@pytest.mark.parametrize("form", ["bare", "tools", "text"])
def test_chatopenai_gets_max_completion_tokens_equal_to_what_is_left(form: str) -> None:
    """Left 800: the cap sent is 800 less the prompt's estimate (the tools' schemas included), with tools bound
    natively, in text mode (`TextToolRunnable`) and bare; without a budget, the role's own `max_tokens`."""
    with OpenAIChatServer(["ok"] * 2) as server:
        model = _model(server)
        runnable: Any = {"bare": model, "tools": model.bind_tools([TOOL]), "text": TextToolRunnable(model, [TOOL])}[form]
        call_role(runnable, "solver", PROMPT, guard=_room(800))
        call_role(runnable, "solver", PROMPT, guard=_room(None))  # no budget: the role's max_tokens
        capped, free = server.chat_requests
    # the prompt's estimate: its messages, the tools' schemas, and what text mode writes into the prompt
    expected = 800 - estimate_tokens(PROMPT, bound_tools(runnable)) - sent_overhead(runnable, PROMPT)
    assert _sent_cap(capped) == expected and 0 < expected < 800
    assert _sent_cap(free) == SOLVER_CAP
    assert bool(capped.get("tools")) == (form == "tools")


def test_an_existing_smaller_max_tokens_is_never_raised_and_a_larger_one_is_lowered() -> None:
    with OpenAIChatServer(["ok"] * 3) as server:
        call_role(_model(server, max_tokens=100), "solver", PROMPT, guard=_room(3_000))
        call_role(_model(server, max_tokens=50_000), "solver", PROMPT, guard=_room(3_000))
        call_role(_model(server, max_tokens=100), "solver", PROMPT, guard=_room(None))
        small, large, free = server.chat_requests
    assert _sent_cap(small) == 100
    assert _sent_cap(large) == 3_000 - estimate_tokens(PROMPT)
    assert _sent_cap(free) == 100  # the model's own setting, as before


def test_the_budget_caps_only_below_the_roles_max_tokens() -> None:
    """With 100,000 left the role's `max_tokens` is sent; with 500 left, what the budget has left after the prompt;
    a model's own `max_tokens` above gpt-4o-mini's output limit (16,384 in langchain's profile) is sent at that
    limit (OpenAI refuses a larger `max_completion_tokens`)."""
    with OpenAIChatServer(["ok"] * 3) as server:
        model = ChatOpenAI(model="gpt-4o-mini", base_url=server.base_url, api_key="sk-test", max_retries=0)
        call_role(model, "solver", PROMPT, guard=_room(100_000))
        call_role(model, "solver", PROMPT, guard=_room(500))
        call_role(model.model_copy(update={"max_tokens": 50_000}), "solver", PROMPT, guard=_room(None))
        wide, narrow, own = server.chat_requests
    assert _sent_cap(wide) == SOLVER_CAP
    assert _sent_cap(narrow) == 500 - estimate_tokens(PROMPT)
    assert _sent_cap(own) == 16_384


def test_a_call_whose_reply_would_have_no_room_is_not_sent() -> None:
    with OpenAIChatServer(["ok"]) as server:
        with pytest.raises(ModelCallError) as info:
            call_role(_model(server), "solver", PROMPT, guard=CallGuard(
                room=lambda: estimate_tokens(PROMPT) + 5, admit=lambda t: None if t <= estimate_tokens(PROMPT) + 5
                else f"no room for {t}"))
        assert server.chat_requests == []
    assert info.value.kind == BUDGET_KIND


def test_a_reply_cut_at_the_cap_is_a_budget_error_that_keeps_its_tokens() -> None:
    spent: list[Any] = []
    with OpenAIChatServer([ChatReply(content="word " * 4_000)]) as server:  # 5,000 tokens asked
        with pytest.raises(ModelCallError) as info:
            call_role(_model(server), "solver", PROMPT, guard=_room(1_000), on_usage=spent.append)
        (body,) = server.chat_requests
    cap = 1_000 - estimate_tokens(PROMPT)
    assert _sent_cap(body) == cap
    err = info.value
    assert err.kind == BUDGET_KIND and f"the reply was cut at {cap} tokens" in str(err) and "estimated" in str(err)
    assert err.usage()["solver"]["output_tokens"] == cap == spent[0]["output_tokens"]  # counted, not lost


def _responder(weather_fn: str, long_answer: str) -> Any:
    def reply(body: dict[str, Any]) -> str | ChatReply:
        tools = [t["function"]["name"] for t in body.get("tools") or []]
        turns = sum(m["role"] == "assistant" for m in body["messages"])
        if "create_agent_category_level" in tools:
            return tool_call("create_agent_category_level", category_name="Weather") if turns == 0 \
                else tool_call("finish_search")
        if "add_apis_into_api_pool" in tools:
            return tool_call("add_apis_into_api_pool", apis=[{"tool_name": "Weather Now", "api_name": "Current"}]) \
                if turns == 0 else tool_call("finish_search")
        if "Finish" in tools:  # a long-winded solver: its first turn may be far longer than the budget
            if any(m["role"] == "tool" for m in body["messages"]):
                return tool_call("Finish", return_type="give_answer", final_answer="It is 21°C in Paris.")
            return ChatReply(content=long_answer, tool_calls=[(weather_fn, {"city": "Paris"})])
        return ChatReply(content=json.dumps({"label": "Solved", "reason": "fine"}))

    return reply


def _graph_run(budget: int | None, long_answer: str, **model: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    catalog, executor = make_world()
    weather_fn = catalog.function_name(catalog.find_api("Weather Now", "Current").id)
    with OpenAIChatServer(policy=_responder(weather_fn, long_answer)) as server:
        extra = {} if budget is None else {"token_budget": budget}
        graph = create_anytool_graph(catalog, _model(server, **model), executor=executor, checkpointer=InMemorySaver(),
                                     config=AnyToolConfig(seed_with_search=False, max_concurrency=1, **extra))
        out = graph.invoke({"query": "What's the temperature in Paris?"}, {"configurable": {"thread_id": "t"}})
        return out, server.chat_requests


@pytest.fixture
def no_role_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every role's `max_tokens` lifted above what these runs write: the token budget's cap is the one that binds."""
    for role in ROLE_REPLY_TOKENS:
        monkeypatch.setitem(ROLE_REPLY_TOKENS, role, 1_000_000)


def test_a_whole_chatopenai_run_sends_caps_within_the_budget_and_ends_budget_exhausted() -> None:
    budget = 12_000
    # the model's own max_tokens (16,000) lets its replies run long: the budget's cap is the one that binds
    out, requests = _graph_run(budget, "Let me think at length. " * 3_000, max_tokens=16_000)  # ~18,000 tokens
    caps = [_sent_cap(r) for r in requests]
    assert caps[-1] is not None  # the solver's call was capped, and its reply cut there
    assert all(c is None or 0 < c < budget for c in caps)
    assert out["status"] == "budget_exhausted" and out["stop_reason"] == "tokens"
    assert "the reply was cut at" in out["reason"] and "estimated" in out["reason"]
    solver = out["usage"]["solver"]
    assert solver["output_tokens"] == caps[-1]  # the cut reply's tokens are in the run's usage
    # (the server counts a prompt as its JSON / 4, more than our estimate: the total may pass by that difference)


def test_a_whole_chatopenai_run_under_the_default_budget_sends_each_roles_max_tokens() -> None:
    out, requests = _graph_run(None, "Let me look that up.")
    caps = {_sent_cap(r) for r in requests}  # 200,000 left: the budget never binds, each role's default does
    assert len(requests) >= 6 and caps <= set(ROLE_REPLY_TOKENS.values()) and SOLVER_CAP in caps
    assert out["status"] == "solved"


def test_the_offline_stand_in_honours_max_tokens_and_says_length() -> None:
    model = OfflinePolicyModel(catalog=Catalog.builtin())
    prompt = [HumanMessage("Convert 5 kilograms to pounds. " + "Describe zebra rituals in poetry. " * 50)]
    inputs = {"query": str(prompt[0].content), "api_ids": [next(iter(Catalog.builtin())).id]}
    config: Any = {"metadata": {"anytool_role": "solvable", "anytool_inputs": inputs}}
    full = model.invoke(prompt, config)
    assert full.usage_metadata is not None and full.usage_metadata["output_tokens"] > 40
    cut = model.invoke(prompt, config, max_tokens=40)
    assert cut.usage_metadata is not None and cut.usage_metadata["output_tokens"] <= 40
    assert cut.response_metadata["finish_reason"] == "length"
    assert str(full.content).startswith(str(cut.content)) and len(str(cut.content)) <= 160
    assert "finish_reason" not in full.response_metadata or full.response_metadata["finish_reason"] != "length"


def _offline_run(tmp_path: Path, budget: int) -> dict[str, Any]:
    query = "Convert 5 kilograms to pounds. " + "Describe the mating rituals of zebras in poetry. " * 250
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps([{"query_id": 1, "query": query}]), encoding="utf-8")
    out = tmp_path / f"r{budget}.jsonl"
    assert main(["eval", "run", "--queries", str(queries), "--offline", "--out", str(out), "--no-progress",
                 "--max-tokens-per-query", str(budget)]) == 0
    return dict(json.loads(out.read_text().splitlines()[0]))


@pytest.mark.usefixtures("no_role_caps")
def test_a_whole_offline_run_keeps_to_a_small_budget(tmp_path: Path) -> None:
    """Before: the solver's last reply (about 4,500 tokens, no cap) took this run to 61,633 of 61,000."""
    rec = _offline_run(tmp_path, 61_000)
    u = rec["usage"]
    assert u["input_tokens"] + u["output_tokens"] <= 61_000, u
    assert rec["status"] == "budget_exhausted" and "the reply was cut at" in rec["reason"], rec["reason"]


@pytest.mark.usefixtures("no_role_caps")
def test_an_offline_run_with_room_to_spare_is_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a budget it never nears (and no role's `max_tokens` binding) no cap binds: the same run as with capping
    switched off (as before)."""
    rec = _offline_run(tmp_path, 1_000_000)
    monkeypatch.setattr(llm, "cap_kwarg", lambda _model: None)  # no model takes a cap: the behaviour before
    (tmp_path / "before").mkdir()
    before = _offline_run(tmp_path / "before", 1_000_000)
    assert rec["usage"] == before["usage"] and rec["usage"]["input_tokens"] > 60_000
    assert (rec["status"], rec["reason"]) == (before["status"], before["reason"])
