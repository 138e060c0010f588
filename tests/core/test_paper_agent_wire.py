"""Under `paper(prompts_from=...)` the retriever agents' requests take the authors' wire form (issue 36 §3).

Derived from dyabel/AnyTool, filled from a fake checkout (`paper_prompts.testing`), never the authors' text:

- scripts/main.py sends each agent turn with `call_gpt(messages=self.messages, functions=self.functions)` (lines
  148-151, 264-267, 583-586, 770-773); `self.functions` is, for the meta agent, get_tools_in_category,
  get_tools_descriptions, create_agent_category_level then Finish (`Main_Search_Agent.__init__`, lines 697-706);
  for a category agent get_tools_descriptions, Finish, then create_agent_tool_level appended in `category_search`
  (lines 119-121, 247); for a tool agent Finish, check_if_request_solvable, add_apis_into_api_pool (lines 397-411);
  the dicts are main.py's (Finish line 885, the creators 855 and 867) and anytool/api_database_function.py's;
- openai_utils.py `call_gpt` (lines 44-51): an assistant turn's `tool_calls` becomes `function_call` = its first
  call's `function` (name and the raw arguments string); a tool result loses `tool_call_id` and becomes
  `role: function` with its `name`; no `tools`; a reply's `function_call` is read as the turn's call (lines 80-83).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_openai import ChatOpenAI

from langgraph_anytool import AnyToolConfig, create_anytool_graph
from langgraph_anytool.paper_prompts.anytool import anytool_book
from langgraph_anytool.paper_prompts.testing import write_fake_checkout
from tests.core.test_paper_function_results import judge_reply
from tests.fakes import ScriptedChatModel, ai, call
from tests.graph_world import make_world, scope_of
from tests.servers import ChatReply, OpenAIChatServer

QUERY = "What is the weather in Paris?"
CURRENT = {"category_name": "Weather", "tool_name": "Weather Now", "api_name": "Current"}
# each agent's first call, in the authors' names and argument names (main.py: create_agent_category_level(category),
# create_agent_tool_level(category, tools); api_database_function.py add_apis_into_api_pool(api_list))
FIRST = {"create_agent_category_level": {"category": "Weather"},
         "create_agent_tool_level": {"category": "Weather", "tools": ["Weather Now"]},
         "add_apis_into_api_pool": {"api_list": [CURRENT]}}


def _names(body: dict[str, Any]) -> list[str]:
    return [f["name"] for f in body.get("functions") or []] or [t["function"]["name"] for t in body.get("tools") or []]


def _is_check(body: dict[str, Any]) -> bool:
    return not any(n in _names(body) for n in FIRST)


def _agents(body: dict[str, Any], checks: list[dict[str, Any]]) -> ChatReply:
    """An agent's turn, as the authors' model would answer: its level's first call, then Finish."""
    names, answered = _names(body), sum(m["role"] == "assistant" for m in body["messages"])
    if _is_check(body):  # the tool agent's model also makes the solvability checks (verifier.py): the one after
        # the addition says Unsolvable (the tool agent goes on to its second turn), the round-end one Solvable
        checks.append(body)
        verdict = "Unsolvable" if len(checks) == 1 else "Solvable"
        return ChatReply(function_call=("Finish", json.dumps({"answer": verdict, "reason": "R"})))
    first = next(n for n in FIRST if n in names)
    name, args = (first, FIRST[first]) if answered == 0 else ("Finish", {})
    if "functions" in body:
        return ChatReply(function_call=(name, json.dumps(args)))
    return ChatReply(tool_calls=[(name, args)])


def _others(messages: list[BaseMessage], tools: list[str], meta: dict[str, Any]) -> AIMessage:
    scope = scope_of(messages, tools, meta)
    if scope == "solvable":
        return ai("", call("Finish", answer="Solvable", reason="enough"))
    return ai("", call("Finish", return_type="give_answer", final_answer="It is 21 C in Paris."))


def _run(tmp_path: Path, functions_supported: bool = True, prompts: bool = True, judge_server: Any = None,
         **settings: Any) -> tuple[dict[str, Any], list[dict[str, Any]], Path]:
    root = write_fake_checkout(tmp_path / "AnyTool", "anytool")
    catalog, executor = make_world()
    checks: list[dict[str, Any]] = []
    with OpenAIChatServer(policy=lambda body: _agents(body, checks), functions_supported=functions_supported) as agents, \
            (judge_server or OpenAIChatServer([judge_reply("Solved")] * 3)) as judge:
        def client(server: OpenAIChatServer) -> ChatOpenAI:
            return ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key="sk-loopback", max_retries=0)
        config = AnyToolConfig.paper(prompts_from=str(root) if prompts else None, small_category_shortcut=False,
                                     **settings)
        graph = create_anytool_graph(catalog, ScriptedChatModel(responder=_others), config=config,
                                     executor=executor, models={"judge": client(judge), "meta": client(agents),
                                                                "category": client(agents), "tool": client(agents)})
        out = graph.invoke({"query": QUERY})
        return out, agents.chat_requests, root


def test_each_agent_sends_the_authors_functions_and_legacy_history(tmp_path: Path) -> None:
    out, bodies, root = _run(tmp_path)
    assert out["status"] == "solved", out.get("reason")
    data = anytool_book(root).data
    offers = {"meta": ["get_tools_in_category", "get_tools_descriptions", "create_agent_category_level", "finish"],
              "category": ["get_tools_descriptions", "finish", "create_agent_tool_level"],
              "tool": ["finish", "check_if_request_solvable", "add_apis_into_api_pool"]}
    seen = set()
    for body in [b for b in bodies if not _is_check(b)]:
        assert "tools" not in body and "tool_choice" not in body
        level = next(lv for lv, first in zip(offers, FIRST, strict=True) if first in _names(body))
        assert body["functions"] == [data[f"agent_{n}"] for n in offers[level]]  # the checkout's dicts, in order
        msgs = body["messages"]
        assert [m["role"] for m in msgs[:2]] == ["system", "user"]
        if len(msgs) > 2:  # the second turn: call_gpt's legacy history
            first = next(n for n in FIRST if n in _names(body))
            assert msgs[2] == {"role": "assistant", "content": None,  # '' in call_gpt: langchain-openai sends null
                               "function_call": {"name": first, "arguments": json.dumps(FIRST[first])}}
            assert msgs[3]["role"] == "function" and msgs[3]["name"] == first and "tool_call_id" not in msgs[3]
            assert not any("tool_calls" in m or m["role"] == "tool" for m in msgs)
            seen.add(level)
    assert seen == {"meta", "category", "tool"}
    # the api_list read as our apis (category_name dropped): Current pooled
    assert [e["api_id"] for e in out["api_pool"]] == [make_world()[0].find_api("Weather Now", "Current").id]


def _level(body: dict[str, Any]) -> str:
    return "check" if _is_check(body) else next(lv for lv, first in zip(("meta", "category", "tool"), FIRST, strict=True)
                                                 if first in _names(body))


def test_a_provider_refusing_functions_gets_the_same_functions_with_tools(tmp_path: Path) -> None:
    """The loopback server refuses every request carrying `functions=` (and counts what it receives). Each role asks
    with `functions=` once; refused, it sends the same functions with `tools=`, and every later request of the role
    in the run goes with `tools=` at once (the refusal remembered as the judge's ToolEvalRequest remembers it:
    `runtime.FunctionsRefusal`), recorded once per role in the run's usage. The old code asked with `functions=`
    before every call: two requests per call."""
    out, all_bodies, root = _run(tmp_path, functions_supported=False)
    assert out["status"] == "solved", out.get("reason")
    refused = [b for b in all_bodies if "functions" in b]
    # one refused request per role (the meta, category and tool agents; the solvability check), each its first
    assert sorted(_level(b) for b in refused) == ["category", "check", "meta", "tool"]
    for level in ("meta", "category", "tool", "check"):
        mine = [b for b in all_bodies if _level(b) == level]
        assert "functions" in mine[0] and all("tools" in b and "functions" not in b for b in mine[1:])
    bodies = [b for b in all_bodies if not _is_check(b)]
    sent = [b for b in bodies if "tools" in b]
    assert len(sent) > 3 and len(bodies) == len(sent) + 3  # not refused again: one request per later call
    assert len([b for b in all_bodies if _is_check(b)]) >= 2  # a later check too
    data = anytool_book(root).data
    assert sent[0]["tools"][0]["function"] in [data[k] for k in data if k.startswith("agent_")]
    later = [m for b in sent for m in b["messages"] if m["role"] == "assistant"]
    assert later and all(tc["function"]["name"] in FIRST for m in later for tc in m["tool_calls"])
    usage = {role: int(u.get("functions_refused", 0)) for role, u in out["usage"].items() if isinstance(u, dict)}
    assert {r: n for r, n in usage.items() if n} == {"meta": 1, "category": 1, "tool": 1}


def test_without_prompts_from_the_agents_keep_todays_request(tmp_path: Path) -> None:
    _, bodies, _ = _run(tmp_path, prompts=False)
    bodies = [b for b in bodies if not _is_check(b)]
    assert bodies and all("functions" not in b and "tools" in b for b in bodies)
    assert "finish_search" in _names(bodies[0])


def test_the_judges_refusal_of_functions_is_remembered_for_the_run(tmp_path: Path) -> None:
    """paper()'s judge (AnyTool's tooleval: `functions=` with `function_call`) on a provider that refuses
    `functions=`, judging two rounds of one run (the judge node called twice with the run's signals): the first
    check is refused and sent again with `tools=`; every later check — the round's other samples and the next
    round's — goes with `tools=` at once, and each round's record says so. The old code forgot the refusal at
    each judge round, so the second round began with a refused request."""
    from langgraph.runtime import Runtime

    from langgraph_anytool.catalog import Catalog
    from langgraph_anytool.models.llm import ModelSet
    from langgraph_anytool.nodes.judge import make_judge
    from langgraph_anytool.runtime import Deps

    root = write_fake_checkout(tmp_path / "AnyTool", "anytool")

    def judge(body: dict[str, Any]) -> ChatReply:
        name = body["tool_choice"]["function"]["name"]
        return ChatReply(tool_calls=[(name, {"answer_status": "Unsolved", "reason": "not yet"})])

    attempt = {"attempt": 1, "round": 0, "mode": "dfsdt", "finish_type": "give_answer", "answer": "21 C.",
               "reason": "", "failed_functions": [], "failed_api_ids": [], "api_calls": 0, "tree": []}
    with OpenAIChatServer(policy=judge, functions_supported=False) as server:
        model = ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key="sk-loopback", max_retries=0)
        deps = Deps(catalog=Catalog([], name="empty"), models=ModelSet(default=model, by_role={}),
                    executor=None, config=AnyToolConfig.paper(prompts_from=str(root)))  # type: ignore[arg-type]
        node = make_judge(deps)
        records = []
        for round_ in (0, 1):
            state: Any = {"query": QUERY, "run_key": "run-1", "solver_attempts": [{**attempt, "round": round_}]}
            out = node(state, Runtime(context=None))
            records += [e["evaluator_request"] for e in out.update.get("events") or [] if "evaluator_request" in e]
        bodies = server.chat_requests
    assert len(bodies) == 1 + 2 * 3  # one refused request, then three samples per round with tools=
    assert ["functions" in b for b in bodies] == [True] + [False] * 6
    assert all(b["tool_choice"]["function"]["name"] == "check_answer_status" for b in bodies[1:])
    assert len(records) == 2 and all(r["sent_form"] == "tools" and r["functions_refused"] for r in records)
