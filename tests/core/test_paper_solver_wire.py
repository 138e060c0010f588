"""Under `paper(prompts_from=...)` the DFSDT solver's requests are AnyTool's (issue 36 §3, the solver).

The expected requests are derived from dyabel/AnyTool's code, filled from a fake checkout (`paper_prompts.testing`),
never the authors' text:

- anytool/rapidapi.py `rapidapi_wrapper.__init__` (lines 96-173): `self.functions` is one dict per pooled API
  (`api_json_to_openai_json`, lines 249-322), then `finish_func` (the `else` of `if args.use_original_prompt`).
  An API's dict: name `change_name(standardize(api_name)) + "_for_" + standard_tool_name` (its last 64
  characters); description `templete["description"]` (the tool's name in it), and when the API's description is not
  blank, the second text with it stripped, the API's name in it replaced by the function's name, cut at 256;
  parameters `{"type": "object", "properties", "required", "optional"}`, each parameter named
  `change_name(standardize(name))`, typed by `map_type` (NUMBER → integer, STRING → string, BOOLEAN → boolean, any
  other spelling → string), its description cut at 256, `example_value` when `len(str(default)) != 0`;
- toolbench/inference/LLM/chatgpt_function_model.py `chat_completion_request` → openai_utils.py `call_gpt`: the body
  is `messages`, `max_tokens` 1024, `frequency_penalty` 0, `presence_penalty` 0, `functions` (legacy), `seed` 123;
  no `tools`, no temperature;
- toolbench/inference/Algorithms/DFS.py `DFS_tree_search.DFS`: the reply message is appended as it came (its
  `function_call`: name and arguments string as the model wrote them), then `{"role": "function", "name":
  function_call name, "content": observation}`; after a backtrack the diversity prompt's `{previous_candidate}` is
  `json.dumps([{"name", "arguments", "function_output", "mento-carlo-action-value"}], indent=2)` + "\\n".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_openai import ChatOpenAI

from langgraph_anytool import AnyToolConfig
from langgraph_anytool.catalog import Catalog, Category
from langgraph_anytool.catalog.parse import parse_tool
from langgraph_anytool.graphs.solver import build_solver_graph
from langgraph_anytool.models.llm import ModelSet
from langgraph_anytool.paper_prompts.anytool import anytool_book
from langgraph_anytool.paper_prompts.testing import write_fake_checkout
from langgraph_anytool.runtime import Deps, RunSignals
from langgraph_anytool.state import PoolEntry
from langgraph_anytool.tools.executors.local import LocalExecutor
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.servers import ChatReply, OpenAIChatServer

QUERY = "What is the weather in Lyon?"
LONG = "d" * 300
CURRENT_DESCRIPTION = "  Current weather of a city. Current is quick.  "


def _world(received: list[dict[str, Any]]) -> tuple[Catalog, ApiExecutor]:
    tool = parse_tool({"tool_name": "Weather Now", "tool_description": "Weather data.", "api_list": [
        {"name": "Current", "description": CURRENT_DESCRIPTION,
         "required_parameters": [{"name": "from", "type": "NUMBER", "description": LONG, "default": ""},
                                 {"name": "City-Name", "type": "STRING", "description": "the city", "default": "Paris"}],
         "optional_parameters": [{"name": "units", "type": "int", "description": "u", "default": 3}]},
        {"name": "Forecast", "description": " ", "required_parameters": [
            {"name": "day", "type": "BOOLEAN", "description": "today?", "default": ""}]}]},
        category="Weather", source="test", key="weather_now")

    def current(**kwargs: Any) -> dict[str, Any]:
        received.append(kwargs)
        return {"temp_c": 21}

    catalog = Catalog([Category("Weather", tools=(tool,))])
    impls = {tool.apis[0].id: current, tool.apis[1].id: lambda **_: {"sunny": True}}
    return catalog, ApiExecutor(catalog, default=LocalExecutor(impls))


def _expected_functions(root: Path) -> list[dict[str, Any]]:
    """rapidapi.py's self.functions for the two pooled APIs, then the checkout's Finish."""
    book = anytool_book(root)
    name = "current_for_weather_now"
    own = CURRENT_DESCRIPTION.strip().replace("Current", name)[:256]
    current = {"name": name, "description": book.fill("solver_function_described", head=book.fill(
        "solver_function", tool="weather_now"), description=own),
        "parameters": {"type": "object", "properties": {
            "is_from": {"type": "integer", "description": LONG[:256]},
            "city_name": {"type": "string", "description": "the city", "example_value": "Paris"},
            "units": {"type": "string", "description": "u", "example_value": 3}},
            "required": ["is_from", "city_name"], "optional": ["units"]}}
    forecast = {"name": "forecast_for_weather_now", "description": book.fill("solver_function", tool="weather_now"),
                "parameters": {"type": "object", "properties": {"day": {"type": "boolean", "description": "today?"}},
                               "required": ["day"], "optional": []}}
    return [current, forecast, book.data["solver_finish"]]


RAW_ARGS = '{"is_from":5,  "city_name": "Lyon"}'  # the model's own spacing, sent back as it came


def _solve(tmp_path: Path, replies: list[ChatReply], **overrides: Any
           ) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]], Path]:
    root = write_fake_checkout(tmp_path / "AnyTool", "anytool")
    received: list[dict[str, Any]] = []
    catalog, executor = _world(received)
    with OpenAIChatServer(replies) as server:
        model = ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key="sk-loopback", max_retries=0)
        deps = Deps(catalog=catalog, models=ModelSet(default=None, by_role={"solver": model}), executor=executor,
                    config=AnyToolConfig.paper(prompts_from=str(root), **overrides), signals=RunSignals())
        pool = [PoolEntry(api_id=api.id, function_name=catalog.function_name(api.id), added_by="t", round=0)
                for api in catalog]
        out = build_solver_graph(deps).invoke({"query": QUERY, "run_key": "r", "round": 0, "api_pool": pool,
                                               "previous_attempts": []})
        return out["solver_attempts"][0], server.chat_requests, received, root


def test_the_solver_offers_rapidapis_functions_and_finish_with_chat_completion_requests_settings(tmp_path: Path) -> None:
    attempt, bodies, received, root = _solve(tmp_path, [
        ChatReply(content="Let me look.", function_call=("current_for_weather_now", RAW_ARGS)),
        ChatReply(function_call=("Finish", json.dumps({"return_type": "give_answer", "final_answer": "21 C."})))])
    assert attempt["finish_type"] == "give_answer", attempt
    assert received == [{"from": 5, "City-Name": "Lyon"}]  # the authors' parameter names read back as ours
    book = anytool_book(root)
    for body in bodies:
        assert body["functions"] == _expected_functions(root)
        assert "tools" not in body and "tool_choice" not in body and "temperature" not in body
        assert (body["frequency_penalty"], body["presence_penalty"], body["seed"]) == (0, 0, 123)
        assert body.get("max_tokens", body.get("max_completion_tokens")) == 1024
        assert body["messages"][1] == {"role": "user", "content": book.fill("solver_user", query=QUERY)}
        assert body["messages"][0]["content"].startswith("FAKE solver_system")
    second = bodies[1]["messages"]
    assert second[2] == {"role": "assistant", "content": "Let me look.",
                         "function_call": {"name": "current_for_weather_now", "arguments": RAW_ARGS}}
    assert second[3]["role"] == "function" and second[3]["name"] == "current_for_weather_now"
    assert "temp_c" in second[3]["content"] and len(second) == 4


def test_the_diversity_prompt_lists_the_call_as_the_model_sent_it(tmp_path: Path) -> None:
    restart = json.dumps({"return_type": "give_up_and_restart", "reason": "current_for_weather_now failed"})
    attempt, bodies, _, root = _solve(tmp_path, [
        ChatReply(function_call=("current_for_weather_now", RAW_ARGS)),
        ChatReply(function_call=("Finish", restart)),
        ChatReply(function_call=("Finish", json.dumps({"return_type": "give_up", "reason": "no"})))])
    assert attempt["finish_type"] == "give_up", attempt
    observation = next(m for m in bodies[1]["messages"] if m["role"] == "function")["content"]
    candidates = json.dumps([{"name": "current_for_weather_now", "arguments": RAW_ARGS,
                              "function_output": observation, "mento-carlo-action-value": 0.0}], indent=2) + "\n"
    last = bodies[-1]["messages"]
    assert last[-1] == {"role": "user", "content": anytool_book(root).fill("solver_diversity", actions=candidates)}
    assert len(last) == 3  # system, user, the diversity prompt: the restarted branch is not in the history


def test_a_provider_refusing_functions_gets_the_same_functions_with_tools(tmp_path: Path) -> None:
    root = write_fake_checkout(tmp_path / "AnyTool", "anytool")
    catalog, executor = _world([])
    finish = ChatReply(tool_calls=[("Finish", {"return_type": "give_answer", "final_answer": "21 C."})])
    with OpenAIChatServer([finish], functions_supported=False) as server:
        model = ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key="sk-loopback", max_retries=0)
        deps = Deps(catalog=catalog, models=ModelSet(default=None, by_role={"solver": model}), executor=executor,
                    config=AnyToolConfig.paper(prompts_from=str(root)), signals=RunSignals())
        pool = [PoolEntry(api_id=api.id, function_name=catalog.function_name(api.id), added_by="t", round=0)
                for api in catalog]
        out = build_solver_graph(deps).invoke({"query": QUERY, "run_key": "r", "round": 0, "api_pool": pool,
                                               "previous_attempts": []})
    assert out["solver_attempts"][0]["finish_type"] == "give_answer"
    sent = server.chat_requests[-1]
    assert [t["function"] for t in sent["tools"]] == _expected_functions(root)
    assert out["usage"]["solver"]["functions_refused"] == 1


def test_a_long_name_is_cut_from_the_front_and_a_call_to_it_reaches_its_api(tmp_path: Path) -> None:
    """rapidapi.py: `templete["name"] = templete["name"][-64:]` (the last 64 characters), parameters
    `change_name(standardize(name))` ("Content-Type" → content_type); `_step` finds the function by its name."""
    root = write_fake_checkout(tmp_path / "AnyTool", "anytool")
    received: list[dict[str, Any]] = []
    tool = parse_tool({"tool_name": "Air Quality and Pollution Monitoring Service", "tool_description": "Air.",
                       "api_list": [{"name": "Hourly Air Quality Forecast For A City", "description": "",
                                     "required_parameters": [{"name": "Content-Type", "type": "STRING",
                                                              "description": "c", "default": ""}]}]},
                      category="Air", source="test", key="air_quality_and_pollution_monitoring_service")
    catalog = Catalog([Category("Air", tools=(tool,))])
    executor = ApiExecutor(catalog, default=LocalExecutor({tool.apis[0].id: lambda **kw: received.append(kw) or {}}))
    full = "hourly_air_quality_forecast_for_a_city_for_air_quality_and_pollution_monitoring_service"
    name = full[-64:]
    with OpenAIChatServer([ChatReply(function_call=(name, '{"content_type": "json"}')),
                           ChatReply(function_call=("Finish", json.dumps({"return_type": "give_answer",
                                                                          "final_answer": "Done."})))]) as server:
        model = ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key="sk-loopback", max_retries=0)
        deps = Deps(catalog=catalog, models=ModelSet(default=None, by_role={"solver": model}), executor=executor,
                    config=AnyToolConfig.paper(prompts_from=str(root)), signals=RunSignals())
        pool = [PoolEntry(api_id=tool.apis[0].id, function_name=catalog.function_name(tool.apis[0].id),
                          added_by="t", round=0)]
        out = build_solver_graph(deps).invoke({"query": QUERY, "run_key": "r", "round": 0, "api_pool": pool,
                                               "previous_attempts": []})
    assert out["solver_attempts"][0]["finish_type"] == "give_answer"
    first = server.chat_requests[0]["functions"][0]
    assert first["name"] == name and len(name) == 64 and list(first["parameters"]["properties"]) == ["content_type"]
    assert received == [{"Content-Type": "json"}]
    assert server.chat_requests[1]["messages"][3]["name"] == name


def test_a_reply_without_a_call_is_followed_by_the_next_query_as_it_is(tmp_path: Path) -> None:
    """DFS.py `DFS`: a reply with content and no `function_call` makes a Thought node; the search goes on from it
    (`temp_now_node.messages.append(new_message)`, then `self.DFS(temp_now_node, ...)`): the next request ends with
    that assistant message, no user message after it."""
    _, bodies, _, _ = _solve(tmp_path, [
        ChatReply(content="I should look up the weather first."),
        ChatReply(function_call=("Finish", json.dumps({"return_type": "give_answer", "final_answer": "21 C."})))])
    assert bodies[1]["messages"][2:] == [{"role": "assistant", "content": "I should look up the weather first."}]


def _seeded(tmp_path: Path, first: list[ChatReply], keep: int, again: list[ChatReply]
            ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A solve, then a solve seeded from it with only the pooled API `keep` (the reflection removed the other):
    (the first solve's requests, the seeded solve's requests)."""
    root = write_fake_checkout(tmp_path / "AnyTool", "anytool")
    catalog, executor = _world([])
    apis = list(catalog)
    pool = [PoolEntry(api_id=api.id, function_name=catalog.function_name(api.id), added_by="t", round=0)
            for api in apis]
    with OpenAIChatServer([*first, *again]) as server:
        model = ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key="sk-loopback", max_retries=0)
        deps = Deps(catalog=catalog, models=ModelSet(default=None, by_role={"solver": model}), executor=executor,
                    config=AnyToolConfig.paper(prompts_from=str(root)), signals=RunSignals())
        graph = build_solver_graph(deps)
        out = graph.invoke({"query": QUERY, "run_key": "r", "round": 0, "api_pool": pool, "previous_attempts": []})
        n = len(server.chat_requests)
        graph.invoke({"query": QUERY, "run_key": "r", "round": 1, "api_pool": [pool[keep]],
                      "previous_attempts": out["solver_attempts"]})
        return server.chat_requests[:n], server.chat_requests[n:]


ANSWER = ChatReply(function_call=("Finish", json.dumps({"return_type": "give_answer", "final_answer": "21 C."})))


def test_a_seeded_solve_starts_from_the_last_chain_as_dfs_start_keeps_it(tmp_path: Path) -> None:
    """scripts/main.py passes the last solve's `train_messages[-1]` (Tree.py `get_train_messages_from_this_node`:
    the chain up to its last assistant message) to DFS.py `start(messages=...)`: `messages.pop()` drops that last
    message (the decisive Finish call); a `function` message of a function no longer offered goes with the message
    before it; every other call stays (a rejected Finish with its answer too); no note is added."""
    rejected = ChatReply(function_call=("Finish", '{"return_type": "give_answer"}'))  # no final_answer: rejected
    firsts, seeded = _seeded(tmp_path, [
        ChatReply(content="Let me look.", function_call=("current_for_weather_now", RAW_ARGS)),
        ChatReply(function_call=("forecast_for_weather_now", '{"day":true}')),
        rejected, ANSWER], keep=1, again=[ANSWER])
    last = firsts[-1]["messages"]  # system, user, current's call and answer, forecast's, the rejected Finish's
    assert [m["role"] for m in last[2:]] == ["assistant", "function"] * 3
    assert seeded[0]["messages"][1] == last[1]
    assert seeded[0]["messages"][2:] == last[4:]  # current_for_weather_now's call and answer gone; nothing added
    assert [f["name"] for f in seeded[0]["functions"]] == ["forecast_for_weather_now", "Finish"]


def test_a_seeded_solve_after_a_restart_starts_from_the_new_branch_without_its_diversity_prompt(tmp_path: Path
                                                                                                ) -> None:
    """DFS.py: the diversity prompt is marked `valid: False` once used (chat_completion_request never sends it
    again; `start(messages=...)` keeps it unsent); after a restart the chain is the new branch's."""
    restart = json.dumps({"return_type": "give_up_and_restart", "reason": "current_for_weather_now failed"})
    firsts, seeded = _seeded(tmp_path, [
        ChatReply(function_call=("current_for_weather_now", RAW_ARGS)), ChatReply(function_call=("Finish", restart)),
        ChatReply(function_call=("forecast_for_weather_now", '{"day": true}')), ANSWER], keep=1, again=[ANSWER])
    assert firsts[2]["messages"][-1]["role"] == "user"  # the diversity prompt, sent once
    last = firsts[-1]["messages"]  # system, user, forecast's call and answer
    assert [m["role"] for m in last[2:]] == ["assistant", "function"]
    assert seeded[0]["messages"][2:] == last[2:]


def test_the_seed_chain_drops_the_query_limit_note_and_a_removed_functions_call_with_the_message_before_it() -> None:
    """DFS.py `start(messages=...)`: a user message holding 'maximum query count' goes; a `function` message whose
    name is no longer offered goes with the message before it (its call); the last assistant message goes. The chain
    ends on the answer node (DFS.py `to_json`: `terminal_node`), not on a later node of another branch."""
    from langgraph_anytool.nodes.solver.authors import seed_chain
    from langgraph_anytool.nodes.solver.tree import QUERY_LIMIT_NOTE

    call = {"role": "assistant", "content": "", "tool_calls": [{"name": "a", "args": {}, "id": "1"}],
            "function_call": {"name": "a_for_t", "arguments": "{ }"}}
    tree = [{"id": 0, "parent": None, "messages": []},
            {"id": 1, "parent": 0, "messages": [call, {"role": "tool", "content": "x", "tool_call_id": "1", "name": "a"}]},
            {"id": 2, "parent": 1, "messages": [
                {"role": "assistant", "content": "b?", "tool_calls": [{"name": "b", "args": {}, "id": "2"}]},
                {"role": "tool", "content": "y", "tool_call_id": "2", "name": "b"},
                {"role": "user", "content": "limit", "name": QUERY_LIMIT_NOTE}]},
            {"id": 3, "parent": 2, "calls": [{"function": "Finish", "status": "finish:give_answer"}], "messages": [
                {"role": "assistant", "content": "", "tool_calls": [{"name": "Finish", "args": {}, "id": "3"}]},
                {"role": "tool", "content": "ok", "tool_call_id": "3", "name": "Finish"}]},
            {"id": 4, "parent": 0, "messages": [{"role": "assistant", "content": "later, on another branch"}]}]
    kept = seed_chain(tree, ["a", "Finish"])
    assert [(m.type, m.content) for m in kept] == [("ai", ""), ("tool", "x")]
    assert kept[0].additional_kwargs["function_call"] == {"name": "a_for_t", "arguments": "{ }"}
    assert [(m.type, m.content) for m in seed_chain(tree, ["a", "b", "Finish"])] == [
        ("ai", ""), ("tool", "x"), ("ai", "b?"), ("tool", "y")]
    # DFS.py to_json: no answer, give-up or restart node, no train_messages: main.py starts the next solve afresh
    assert seed_chain([{**n, "calls": []} for n in tree], ["a", "b", "Finish"]) == []
