"""`paper()`'s in-loop judge with the authors' prompts reads the solve in ToolEval's converted form, as their check
does (issue 36 §2). The expected requests are derived from dyabel/AnyTool:

- `anytool/verifier.py check_solved_toolbench` → `toolbench/tooleval/convert_to_answer_format.py process_valid_data`
  (method 'DFS_woFilter_w2') on the answer node's chain (`DFS.py to_json`: `final_answer = node.description`, the
  Finish call's arguments; `train_messages`): system and user messages and function results skipped, each call a
  tool node {'name', 'arguments', 'response' ('' for Finish)}; `total_steps` = every node, system and user included;
- `toolbench/tooleval/evaluation/dataclass.py ExecutionGraph.convert_to_dict`: nodes {'role', 'message', 'next'},
  the system and user nodes' message '';
- `registered_cls/rtl.py check_is_solved`: `answer['final_answer']` in the first stage, `json.dumps(answer)` in the
  second (on Unsure).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from tests.core.test_paper_function_results import QUERY, _run, judge_reply
from tests.fakes import ai, call
from tests.graph_world import scope_of, turns


def _script(messages: list[BaseMessage], tools: list[str], meta: dict[str, Any]) -> AIMessage:
    scope, n = scope_of(messages, tools, meta), turns(messages)
    if scope == "meta":
        return ai("", call("create_agent_category_level", category_name="Weather")) if n == 0 else \
            ai("", call("finish_search"))
    if scope.startswith("category"):
        return ai("", call("create_agent_tool_level", tool_names=["Weather Now"])) if n == 0 else \
            ai("", call("finish_search"))
    if scope.startswith("tool"):
        return ai("", call("add_apis_into_api_pool", apis=[{"tool_name": "Weather Now", "api_name": "Current"}]))
    if scope == "solvable":
        return ai("", call("Finish", answer="Solvable"))
    if scope == "solver":
        if n == 0:
            return ai("let me look", call(next(t for t in tools if t != "Finish"), city="Paris"))
        return ai("", call("Finish", return_type="give_answer", final_answer="It is 21 C in Paris."))
    raise AssertionError(f"unexpected call {scope}")


def test_the_judge_reads_the_converted_answer(tmp_path: Path) -> None:
    requests: list[dict[str, Any]] = []
    replies = [judge_reply("Unsure"), judge_reply("Solved", "parse_answer_status"), judge_reply("Solved"),
               judge_reply("Solved")]
    out, model = _run(tmp_path, _script, replies, requests)
    assert out["status"] == "solved", out.get("reason")
    solver = [c for c in model.calls if scope_of(c["messages"], c["tools"], c) == "solver"]
    fn = next(t for t in solver[0]["tools"] if t != "Finish")
    observed = next(str(m.content) for m in solver[1]["messages"] if isinstance(m, ToolMessage))
    final = json.dumps({"return_type": "give_answer", "final_answer": "It is 21 C in Paris."})
    chain = [{"role": "tool", "message": {"name": fn, "arguments": json.dumps({"city": "Paris"}),
                                          "response": observed},
              "next": [{"role": "tool", "message": {"name": "Finish", "arguments": final, "response": ""},
                        "next": []}]}]
    answer = {"method": "DFS_woFilter_w2", "total_steps": 4, "final_answer": final,
              "answer_details": [{"role": "system", "message": "", "next": [{"role": "user", "message": "",
                                                                              "next": chain}]}]}
    # three samples (check_solved_toolbench); the first Unsure, so its second stage follows it
    assert [r["function_call"]["name"] for r in requests] == [
        "check_answer_status", "parse_answer_status", "check_answer_status", "check_answer_status"]
    first, second = (r["messages"] for r in requests[:2])
    assert first == [{"role": "user", "content": f"\nFAKE judge_answer query={QUERY} answer={final}\n"}]
    assert second == [{"role": "user", "content": f"\nFAKE judge_process query={QUERY} answer={json.dumps(answer)}\n"}]
