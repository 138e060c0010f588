"""With `prompts_from`, the retriever agents' function results and the round-end status are the checkout's text
(issue 36 §3). Each expectation is derived from dyabel/AnyTool `scripts/main.py` (cited beside it) and filled
from a fake checkout (`paper_prompts.testing`), never the authors' text:

- `Main_Search_Agent.create_agent_category_level` returns f'category: {category} assigned.' and
  `Category_Agent.create_agent_tool_level` f'tools {tools} assigned.' (the `multi_thread` branch, main.py sets
  `multi_thread = True`);
- `Tool_Agent.add_apis_into_api_pool` returns, in source order: the over-cap refusal (the whole addition refused
  before any check), two input refusals, then after `check_task_solvable_by_function` the "APIs added" text
  without a final '.' (any verdict but "Unsolvable"), with one ("Unsolvable"), and without one when the search is
  already stopped (no check);
- `check_if_request_solvable` returns the "already sufficient" text when the search is stopped, the pool's size
  and cap when solvable, and the same with "cannot solve ... {reason}" when not; it sets
  `status = f'...{reason}'`, which the main loop hands the next level up (`failed_reason = status`);
- a Finish call is answered by the tool message 'Finished' (`Tool_Agent.tool_search`, the same in every loop).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_openai import ChatOpenAI

from langgraph_anytool import AnyToolConfig, create_anytool_graph
from langgraph_anytool.nodes.agents import new_agent_record
from langgraph_anytool.paper_prompts import PromptSourceError, load_book
from langgraph_anytool.paper_prompts.book import BookSpec, Slot
from langgraph_anytool.paper_prompts.testing import write_fake_checkout
from tests.core.test_paper_loop import _gate, _gate_state, _tool_agent
from tests.fakes import ScriptedChatModel, ai, call
from tests.graph_world import make_world, scope_of, turns
from tests.servers import ChatReply, OpenAIChatServer

QUERY = "What is the weather in Paris?"


# ------------------------------------------------------------------------------------------------ the locators
def test_return_tool_message_and_nth_assignment_locators(tmp_path: Path) -> None:
    # the shapes main.py has: several returns of f-strings in one method, a tool message dict, a name assigned
    # twice (`status`) in a module-level function
    (tmp_path / "m.py").write_text(
        "class A:\n"
        "    def add(self, api_list):\n"
        "        if len(api_list) > n:\n"
        "            return f'over {n}: {len(api_list)}'\n"
        "        def inner():\n"
        "            return 'not mine'\n"
        "        if ok:\n"
        "            return f'added {len(pool)}'\n"
        "        return\n"
        "    def loop(self):\n"
        "        self.messages.append({'role': 'user', 'content': 'nudge'})\n"
        "        self.messages.append({'tool_call_id': 1, 'role': 'tool', 'name': 'Finish', 'content': 'Done'})\n"
        "def check():\n"
        "    status = 'fine'\n"
        "    status = f'not fine: {reason}'\n")
    spec = BookSpec("t", "m.py", (
        ("over", Slot("m.py", "A.add:return[0]", "literal", (("n", "n"), ("len(api_list)", "count")))),
        ("added", Slot("m.py", "A.add:return[1]", "literal", (("len(pool)", "size"),))),
        ("done", Slot("m.py", "A.loop:tool[0]", "literal", ())),
        ("status", Slot("m.py", "check:status[1]", "literal", (("reason", "reason"),))),
    ))
    book = load_book(spec, tmp_path)
    assert book.fill("over", n=2, count=3) == "over 2: 3"
    assert book.fill("added", size=1) == "added 1"  # the nested function's return and a bare `return` not counted
    assert book.fill("done") == "Done" and book.fill("status", reason="R") == "not fine: R"
    for locator, said in (("A.add:return[2]", "has 2 return statement(s) with a value, not 3"),
                          ("A.loop:tool[1]", "has 1 tool message(s), not 2"),
                          ("check:status[2]", "has 2 assignment(s) to status, not 3")):
        bad = BookSpec("t", "m.py", (("x", Slot("m.py", locator, "literal", ())),))
        with pytest.raises(PromptSourceError) as err:
            load_book(bad, tmp_path)
        assert said in str(err.value) and "\n" not in str(err.value)


# ------------------------------------------------------------------------------------------------ a whole run
class _Script:
    """meta assigns Weather; the category agent its tool; the tool agent adds `Current` (the check: Unsolvable),
    asks `check_if_request_solvable` (Unsolvable), adds two more APIs to a pool of cap 2 (refused whole), then
    finishes; the solver answers."""

    def __call__(self, messages: list[BaseMessage], tools: list[str], meta: dict[str, Any]) -> AIMessage:
        scope, n = scope_of(messages, tools, meta), turns(messages)
        current = {"tool_name": "Weather Now", "api_name": "Current"}
        if scope == "meta":
            return ai("", call("create_agent_category_level", category_name="Weather")) if n == 0 else \
                ai("", call("finish_search"))
        if scope.startswith("category"):
            return ai("", call("create_agent_tool_level", tool_names=["Weather Now"])) if n == 0 else \
                ai("", call("finish_search"))
        if scope.startswith("tool"):
            return [ai("", call("add_apis_into_api_pool", apis=[current])),
                    ai("", call("check_if_request_solvable")),
                    ai("", call("add_apis_into_api_pool", apis=[current, current])),
                    ai("", call("finish_search"))][n]
        if scope == "solvable":
            self.checks += 1
            return ai("", call("Finish", answer="Unsolvable", reason=["no forecast", "still none"][self.checks - 1]))
        if scope == "solver":
            return ai("", call("Finish", return_type="give_answer", final_answer="It is 21 C in Paris."))
        raise AssertionError(f"unexpected call {scope}")

    def __init__(self) -> None:
        self.checks = 0


def _tool_results(messages: list[BaseMessage]) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, ToolMessage)]


def judge_reply(status: str, function: str = "check_answer_status") -> ChatReply:
    return ChatReply(function_call=(function, json.dumps({"answer_status": status, "reason": f"{status} reason"})))


def _run(tmp_path: Path, script: Any, judge_replies: list[ChatReply] | None = None,
         requests: list[dict[str, Any]] | None = None, **settings: Any) -> tuple[dict[str, Any], ScriptedChatModel]:
    """A paper() run with the fake checkout, the scripted models and a loopback judge (three Solved samples unless
    `judge_replies` says otherwise); the judge's request bodies are appended to `requests`."""
    root = write_fake_checkout(tmp_path / "AnyTool", "anytool")
    catalog, executor = make_world()
    model = ScriptedChatModel(responder=script)
    with OpenAIChatServer(judge_replies or [judge_reply("Solved")] * 3) as server:
        judge = ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key="sk-loopback", max_retries=0)
        config = AnyToolConfig.paper(prompts_from=str(root), small_category_shortcut=False, **settings)
        graph = create_anytool_graph(catalog, model, models={"judge": judge}, config=config, executor=executor)
        out = graph.invoke({"query": QUERY})
        if requests is not None:
            requests += server.chat_requests
        return out, model


def test_the_agents_read_the_checkouts_function_results(tmp_path: Path) -> None:
    out, model = _run(tmp_path, _Script(), max_api_pool=2)
    assert out["status"] == "solved", out.get("reason")
    agents = out["agents"]
    (tool_id,) = [k for k, a in agents.items() if a["level"] == "tool"]
    (cat_id,) = [k for k, a in agents.items() if a["level"] == "category"]
    # main.py create_agent_category_level / create_agent_tool_level: the name and the list as the model gave them
    assert _tool_results(agents["meta"]["messages"]) == ["FAKE agent_category_assigned category=Weather",
                                                         "FAKE agent_finished"]
    assert _tool_results(agents[cat_id]["messages"]) == ["FAKE agent_tools_assigned tools=['Weather Now']",
                                                         "FAKE agent_finished"]
    assert _tool_results(agents[tool_id]["messages"]) == [
        # add_apis_into_api_pool, the check "Unsolvable": the text with the final '.' (len(global_api_list) = 1)
        "FAKE agent_add_unsolvable len(global_api_list)=1 max_api_number=2",
        # check_if_request_solvable, "Unsolvable": size, cap and the verifier's reason
        "FAKE agent_check_unsolvable len(global_api_list)=1 max_api_number=2 reason=still none",
        # 1 + 2 > max_api_number: refused whole, before any check (only two checks were made)
        "FAKE agent_add_over_cap len(global_api_list)=1 max_api_number=2 len(api_list)=2",
        "FAKE agent_finished",  # Tool_Agent.tool_search: the tool message 'Finished'
    ]
    assert len([c for c in model.calls if scope_of(c["messages"], c["tools"], c) == "solvable"]) == 2
    # what the tool agent's model was sent: the same texts, each after its call
    sent = [c for c in model.calls if scope_of(c["messages"], c["tools"], c).startswith("tool")][-1]
    assert _tool_results(sent["messages"]) == _tool_results(agents[tool_id]["messages"])[:3]


class _SolvableScript(_Script):
    """The tool agent adds `Current` and asks for a check in the same turn; the check after the addition says
    Solvable."""

    def __call__(self, messages: list[BaseMessage], tools: list[str], meta: dict[str, Any]) -> AIMessage:
        scope = scope_of(messages, tools, meta)
        if scope.startswith("tool"):
            return ai("", call("add_apis_into_api_pool", apis=[{"tool_name": "Weather Now", "api_name": "Current"}]),
                      call("check_if_request_solvable"))
        if scope == "solvable":
            return ai("", call("Finish", answer="Solvable"))
        return super().__call__(messages, tools, meta)


def test_a_solvable_pool_and_a_check_after_the_stop(tmp_path: Path) -> None:
    out, _ = _run(tmp_path, _SolvableScript())
    (tool,) = [a for a in out["agents"].values() if a["level"] == "tool"]
    # main.py add_apis_into_api_pool: any verdict but "Unsolvable" → stop, the text without the final '.';
    # check_if_request_solvable then: `if stop: return 'Current APIs already sufficient ...'`
    assert _tool_results(tool["messages"]) == ["FAKE agent_add_solvable len(global_api_list)=1 max_api_number=64",
                                               "FAKE agent_check_stopped"]


# ------------------------------------------------------------------------------------------------ the round's end
def test_the_round_end_status_is_the_checkouts_text(tmp_path: Path) -> None:
    """main.py main loop: after a re-activation round `check_if_request_solvable()` sets `status = f'The current
    API list cannot solve the query due to the following reason: {reason}'`, and the next level up is resumed with
    `failed_reason = status`."""
    root = write_fake_checkout(tmp_path / "AnyTool", "anytool")
    catalog, _ = make_world()
    api = catalog.find_api("Backup Quotes", "Quote")
    pool = [{"api_id": api.id, "category": "Finance", "tool": api.tool_name, "api": api.name,
             "function_name": catalog.function_name(api.id), "added_by": "meta/Finance/t1"}]
    agents = {"meta": {**new_agent_record("meta", "meta"), "status": "stopped", "end_reason": "pool_solvable"},
              "meta/Finance/t1": {**_tool_agent("meta/Finance/t1"), "status": "finished"}}
    unsolvable = ScriptedChatModel(replies=[ai("", call("Finish", answer="Unsolvable", reason="the quotes are late"))])
    out = _gate(AnyToolConfig.paper(prompts_from=str(root)), unsolvable, _gate_state(agents, pool))  # type: ignore[arg-type]
    assert out.goto == "reflect" and out.update["reason"] == "FAKE status_unsolvable reason=the quotes are late"


# ------------------------------------------------------------------------------------------------ the check's form
def _pool_check(tmp_path: Path, server: OpenAIChatServer) -> tuple[str | None, str]:
    from langgraph_anytool.models.llm import ModelSet
    from langgraph_anytool.nodes.lifecycle import pool_check
    from langgraph_anytool.runtime import Deps, RunSignals

    catalog, _ = make_world()
    api = catalog.find_api("Weather Now", "Current")
    model = ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key="sk-loopback", max_retries=0)
    deps = Deps(catalog=catalog, models=ModelSet(default=model, by_role={}), executor=None,  # type: ignore[arg-type]
                config=AnyToolConfig.paper(prompts_from=str(write_fake_checkout(tmp_path / "AnyTool", "anytool"))),
                signals=RunSignals())
    label, reason, _ = pool_check(deps, {"query": QUERY, "run_key": "r"}, None, [api.id])  # type: ignore[arg-type]
    return label, reason


def test_the_solvability_check_offers_finish_as_call_gpt_does(tmp_path: Path) -> None:
    """anytool/verifier.py check_task_solvable_by_function: `call_gpt(messages=messages,
    functions=[solvable_finish_function])` — the legacy `functions=`, not forced; the verdict is read from the
    Finish call (call_gpt turns the legacy `function_call` into `tool_calls` for main.py to read)."""
    reply = ChatReply(function_call=("Finish", json.dumps({"answer": "Unsolvable", "reason": "no forecast API"})))
    with OpenAIChatServer([reply]) as server:
        assert _pool_check(tmp_path, server) == ("Unsolvable", "no forecast API")
        (body,) = server.chat_requests
    assert [f["description"] for f in body["functions"]] == ["FAKE finish function"]
    assert "tools" not in body and "function_call" not in body and "tool_choice" not in body


def test_a_provider_refusing_functions_gets_the_check_with_tools(tmp_path: Path) -> None:
    with OpenAIChatServer([ChatReply(tool_calls=[("Finish", {"answer": "Solvable"})])],
                          functions_supported=False) as server:
        assert _pool_check(tmp_path, server)[0] == "Solvable"
        bodies = server.chat_requests
    assert ["functions" in b for b in bodies] == [True, False] and bodies[1]["tools"][0]["function"]["name"] == "Finish"
