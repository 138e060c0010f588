"""A solve in ToolEval's converted-answer form, as the authors' in-loop check reads it (`paper()`'s judge with the
authors' prompts).

dyabel/AnyTool `anytool/verifier.py check_solved_toolbench` reads the solve's DFS file and converts it with
`toolbench/tooleval/convert_to_answer_format.py process_valid_data(method='DFS_woFilter_w2', ...)`:
- the conversation is the answer node's chain (`DFS.py to_json`: `train_messages` of the first terminal node); its
  system and user messages, the function results and the diversity prompts are skipped; each assistant message with
  a function call becomes a tool node `{'name', 'arguments' (the call's arguments string), 'response' (the next
  message's content; '' for Finish)}`, one without a call an assistant node holding its content;
- `final_answer` is the Finish call's arguments string (`answer_generation['final_answer'] = node.description`);
- `total_steps` counts every node of the graph, the system and user nodes included (`ExecutionGraph.node_count`);
- `answer_details` is `ExecutionGraph.convert_to_dict()`: a chain of `{'role', 'message', 'next': [...]}` whose
  system and user nodes carry the message '' (`'message': node.message if node.role != 'system' and node.role
  != 'user' else ''`), so the AutoGPT system prompt `generate_init_message_node` writes never reaches the evaluator.

ToolEval's `rtl.py check_is_solved` sends `answer['final_answer']` in its first stage and `json.dumps(answer)` in its
second. Ours: the arguments the solver's tree recorded, `json.dumps` in the model's key order (the model's own
whitespace is not kept); one tool node per call of a turn that made several (the authors' model makes one).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...protocol import FINISH_NAME
from ...state import SolverAttempt

AUTHORS_METHOD = "DFS_woFilter_w2"  # verifier.py check_solved_toolbench: `method = 'DFS_woFilter_w2'`


def _answer_path(tree: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], Mapping[str, Any]] | None:
    """The chain root → the node whose Finish call gave the answer, and that call; None without one."""
    by_id = {n.get("id"): n for n in tree}
    for node in reversed(tree):
        finish = next((c for c in node.get("calls") or [] if c.get("status") == "finish:give_answer"), None)
        if finish is None:
            continue
        path: list[Mapping[str, Any]] = []
        cur: Any = node.get("id")
        while cur is not None and cur in by_id and len(path) <= len(tree):
            path.append(by_id[cur])
            cur = by_id[cur].get("parent")
        return list(reversed(path)), finish
    return None


def _arguments(args: Any) -> str:
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def converted_answer(attempt: SolverAttempt) -> tuple[str, dict[str, Any]] | None:
    """(the first stage's `final_answer`, the converted `answer`) of a solve that gave an answer (module doc), or
    None when its tree holds no Finish call that gave one."""
    found = _answer_path(attempt.get("tree") or [])
    if found is None:
        return None
    path, finish = found
    messages = [m for node in path for m in node.get("messages") or [] if isinstance(m, Mapping)]
    responses = {str(m.get("tool_call_id")): str(m.get("content", "")) for m in messages if m.get("role") == "tool"}
    nodes: list[dict[str, Any]] = []
    for m in messages:
        if m.get("role") != "assistant":
            continue
        calls = m.get("tool_calls") or []
        if not calls:
            nodes.append({"role": "assistant", "message": str(m.get("content", ""))})
            continue
        for tc in calls:
            name = str(tc.get("name") or "")
            nodes.append({"role": "tool", "message": {
                "name": name, "arguments": _arguments(tc.get("args")),
                "response": "" if name == FINISH_NAME else responses.get(str(tc.get("id")), "")}})
        if any(tc.get("name") == FINISH_NAME for tc in calls):
            break
    final_answer = _arguments(finish.get("arguments"))
    chain: list[dict[str, Any]] = []
    for node in reversed(nodes):
        chain = [{**node, "next": chain}]
    details = [{"role": "system", "message": "", "next": [{"role": "user", "message": "", "next": chain}]}]
    return final_answer, {"method": AUTHORS_METHOD, "total_steps": len(nodes) + 2, "final_answer": final_answer,
                          "answer_details": details}
