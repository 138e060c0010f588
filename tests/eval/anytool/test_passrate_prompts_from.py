"""`anytool eval passrate --prompts-from` (issue 27 §3): ToolEval's evaluator templates read from a (fake) checkout
of StableToolBench, sent as ToolEval sends them, and kept apart from our prompts' verdicts in the cache.

What each request must hold follows StableToolBench `toolbench/tooleval/evaluators/registered_cls/tooleval.py`
(`OpenAINormalizedEvaluator.function_call`: the template section `.format(**func_args)` as the only user message,
`tools` = the check's function from config.yaml with the `reason` property added, `tool_choice` forcing it) and
`registered_cls/rtl.py` (`check_is_solved`: query and final answer, then on Unsure `json.dumps(answer)`;
`check_task_solvable`: `json.dumps(task_description)`). The expected score follows rtl.py `is_passed`: Unsolved
with an Unsolvable task passes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.cli.app import main
from langgraph_anytool.eval.anytool.convert import record_to_tooleval
from langgraph_anytool.paper_prompts.testing import write_fake_checkout
from tests.eval.anytool.test_passrate import record
from tests.servers import ChatReply, OpenAIChatServer, tool_call

TEMPLATE = "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default/template.txt"


def _evaluator(seen: list[str]) -> Any:
    """ToolEval's checks answered by function call (their prompts), ours by our JSON form; `seen` gets the check."""

    def reply(body: dict[str, Any]) -> ChatReply:
        choice = (body.get("tool_choice") or {}).get("function", {}).get("name")
        seen.append(choice or "ours")
        if choice == "check_answer_status":
            return tool_call("check_answer_status", answer_status="Unsure", reason="cannot tell from the answer")
        if choice == "parse_answer_status":
            return tool_call("parse_answer_status", answer_status="Unsolved", reason="the call failed")
        if choice == "check_task_solvable":
            return tool_call("check_task_solvable", task_status="Unsolvable", reason="no such API")
        return ChatReply(content=json.dumps({"label": "Solved", "reason": "ours"}))

    return reply


def test_passrate_sends_tooleval_templates_and_keys_the_cache_by_their_hash(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_fake_checkout(tmp_path / "StableToolBench", "tooleval")
    rec = {**record("q1", "It is 21 degrees.", [("f", "error", "HTTP 500 upstream")]), "model": "x"}
    res = tmp_path / "r.jsonl"
    res.write_text(json.dumps(rec) + "\n")
    cache = str(tmp_path / "c.sqlite")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    seen: list[str] = []
    argv = ["eval", "passrate", str(res), "--evaluator", "openai:gpt-test", "--samples", "1", "--cache", cache,
            "--protocol", "toolllm", "--json"]
    with OpenAIChatServer(policy=_evaluator(seen)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main([*argv, "--prompts-from", str(root)]) == 0
        data = json.loads(capsys.readouterr().out)
        first, second, third = server.chat_requests
        # rtl.py is_passed: Unsolved answer + Unsolvable task → Passed
        assert data["overall"]["rate"] == 100.0 and data["overall"]["non_solvable"] == 1
        assert data["prompts"]["path"] == str(root.resolve()) and TEMPLATE in data["prompts"]["files"]
        assert seen == ["check_answer_status", "parse_answer_status", "check_task_solvable"]
        # (issue 36 §2) what ToolEval reads: the converted answer (convert_to_answer_format.py) — its final_answer
        # (the Finish arguments as written) first, then json.dumps of the whole answer; the offered tools' schemas
        converted = record_to_tooleval(rec)
        finish = json.dumps({"return_type": "give_answer", "final_answer": "It is 21 degrees."})
        assert converted["answer"]["final_answer"] == finish
        assert first["messages"] == [{"role": "user", "content": "\nFAKE judge_answer query=question q1 "
                                                                 f"answer={finish}\n"}]
        answer = json.dumps(converted["answer"])
        assert second["messages"] == [{"role": "user", "content": f"\nFAKE judge_process query=question q1 "
                                                                  f"answer={answer}\n"}]
        task = json.dumps({"query": "question q1", "available_tools": converted["available_tools"]})
        assert third["messages"] == [{"role": "user", "content": f"\nFAKE judge_task task={task}\n"}]
        for body, name in ((first, "check_answer_status"), (third, "check_task_solvable")):
            (fn,) = [t["function"] for t in body["tools"]]
            assert body["tool_choice"] == {"type": "function", "function": {"name": name}}
            assert fn["name"] == name and fn["parameters"]["required"][-1] == "reason"
            assert fn["parameters"]["properties"]["reason"] == {"type": "string",
                                                                "description": "FAKE reason property"}
        # again with the same checkout: both verdicts (the two-stage check, the solvability check) from the cache
        assert main([*argv, "--prompts-from", str(root)]) == 0
        assert json.loads(capsys.readouterr().out)["cache"] == {"path": cache, "hits": 2, "calls": 0}
        assert len(server.chat_requests) == 3
        # our prompts: their cached verdicts are not reused (the evaluator is asked with our wording)
        assert main(argv) == 0
        ours = json.loads(capsys.readouterr().out)
        # (Solved: the solvability verdict is ToolEval's rule, stored without a request)
        assert ours["cache"]["calls"] == 2 and seen[3:] == ["ours"] and len(server.chat_requests) == 4
        assert ours["prompts"] == {"repo": "langgraph-anytool", "path": None, "files": {}}
        # an edited template is another prompt: asked again
        path = root / TEMPLATE
        path.write_text(path.read_text().replace("FAKE judge_answer", "FAKE judge_answer v2"))
        assert main([*argv, "--prompts-from", str(root)]) == 0
        assert json.loads(capsys.readouterr().out)["cache"]["calls"] == 2 and len(server.chat_requests) == 7
        assert server.chat_requests[-3]["messages"][0]["content"].startswith("\nFAKE judge_answer v2 query=")


def test_passrate_refuses_a_path_that_is_not_a_tooleval_checkout(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    res = tmp_path / "r.jsonl"
    res.write_text(json.dumps({**record("q1", "x", []), "model": "x"}) + "\n")
    assert main(["eval", "passrate", str(res), "--offline", "--prompts-from", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"anytool: error: --prompts-from: {tmp_path}: not a checkout of ToolEval (toolbench/tooleval of "
                   "StableToolBench or ToolBench) (no toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default/"
                   "config.yaml)")
