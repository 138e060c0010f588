"""`anytool eval steps --prompts-from` (issue 27 §3): α-UMi's planner / caller / summarizer prompts read from a
(fake) X-PLUG/Multi-LLM-Agent checkout and filled as the authors' pipeline fills them.

Expected inputs follow `GLPFT/inference_utils/toolbench/infer_pipeline.py`: `build_infer_samples` makes the planner's
input `prompt.replace('{doc}', tool_docs).replace('{tool_names}', ...).replace('{history}', dispatch) +
' assistant: '` with `tool_docs` one `json.dumps(tool)` line per tool and `dispatch` each turn as "<from>: <value>"
+ "</s>" (no "</s>" after an observation); the caller's and the summarizer's inputs append "planner: <planner
prediction></s>" to the dispatch, fill `{thought}` with that prediction and end with " caller: " / " conclusion: ".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langgraph_anytool.cli.app import main
from langgraph_anytool.config import AnyToolConfig
from langgraph_anytool.eval.umi.data import load_step_cases
from langgraph_anytool.eval.umi.steps import evaluate_steps
from langgraph_anytool.models.llm import ModelSet
from langgraph_anytool.models.testing import ScriptedChatModel, ai
from langgraph_anytool.paper_prompts import umi_book
from langgraph_anytool.paper_prompts.testing import write_fake_checkout
from tests.eval.umi.test_step_eval import UMI_ITEM


def _reply(messages: list[BaseMessage], tools: list[str], meta: dict[str, Any]) -> AIMessage:
    text = str(messages[-1].content)
    if meta["role"] == "planner":
        if "observation: {'title'" in text:
            return ai("I have what the user needs. Next: conclusion.")
        return ai("Next step. Next: caller.")
    if meta["role"] == "caller":
        name = "details_for_video_db" if "observation:" in text else "search_for_video_db"
        args = {"is_id": "v1"} if name == "details_for_video_db" else {"q": "comedy"}
        return ai(f"Action: {name}\nAction Input: {json.dumps(args)}")
    return ai("The comedy video v1 is titled Funny cats.")


def test_steps_send_alpha_umis_prompts_built_as_infer_pipeline_builds_them(tmp_path: Path) -> None:
    book = umi_book(write_fake_checkout(tmp_path / "Multi-LLM-Agent", "umi"))
    path = tmp_path / "in_domain.json"
    path.write_text(json.dumps([UMI_ITEM]), encoding="utf-8")
    loaded = load_step_cases([path])
    model = ScriptedChatModel(responder=_reply)
    report = evaluate_steps(loaded.cases, lambda c: ModelSet(default=model, by_role={}), mode="multi",
                            config=AnyToolConfig(solver="umi"), loaded=loaded, prompts=book)
    # every role: one user message, the whole filled prompt (no system prompt, no separate query)
    assert all([type(m) for m in c["messages"]] == [HumanMessage] for c in model.calls)
    inputs = [(c["role"], str(c["messages"][0].content)) for c in model.calls]
    doc = "".join(json.dumps(t) + "\n" for t in UMI_ITEM["tools"])
    conv = UMI_ITEM["conversations"]
    user = f"user: {conv[0]['value']}</s>"
    assert inputs[0] == ("planner", f"FAKE planner doc={doc} history={user} assistant: ")
    planned = f"{user}planner: Next step. Next: caller.</s>"
    assert inputs[1] == ("caller", f"FAKE caller doc={doc} history={planned} thought=Next step. Next: caller. "
                                   "tool_names=search_for_video_db, details_for_video_db caller: ")
    step2 = (f"{user}assistant: {conv[1]['value']}</s>caller: {conv[2]['value']}</s>observation: {conv[3]['value']}"
             f"assistant: {conv[4]['value']}</s>caller: {conv[5]['value']}</s>observation: {conv[6]['value']}")
    assert inputs[4] == ("planner", f"FAKE planner doc={doc} history={step2} assistant: ")
    assert inputs[5] == ("summarizer", f"FAKE summarizer history={step2}planner: I have what the user needs. "
                                       "Next: conclusion.</s> conclusion: ")
    # read in α-UMi's format: all three steps right
    s = report.overall
    assert (s.steps, s.plan_acc, s.act_em) == (3, 1.0, 1.0) and s.rouge_l == pytest.approx(1.0, abs=1e-8)
    assert report.to_dict()["prompts"] == book.provenance() and "role prompts: α-UMi's" in report.table()


def test_cli_steps_prompts_from(tmp_path: Path, capsys: Any) -> None:
    root = write_fake_checkout(tmp_path / "Multi-LLM-Agent", "umi")
    path = tmp_path / "in_domain.json"
    path.write_text(json.dumps([UMI_ITEM]), encoding="utf-8")
    argv = ["eval", "steps", str(path), "--offline", "--json", "--prompts-from", str(root)]
    assert main([*argv, "--mode", "multi"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["prompts"]["repo"] == "X-PLUG/Multi-LLM-Agent" and data["overall"]["steps"] == 3
    assert main([*argv, "--mode", "single"]) == 2
    assert "use it with --mode multi" in capsys.readouterr().err
    lib = root / "GLPFT/utils/prompt_lib.py"
    lib.write_text(lib.read_text().replace("'toolbench_caller'", "'toolbench_call'"))
    assert main([*argv, "--mode", "multi"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"anytool: error: --prompts-from: {lib.resolve()}: prompt_dict['toolbench_caller']: prompt_dict "
                   "has no key 'toolbench_caller'")


def test_each_turns_trailing_newline_stays_before_its_end_token(tmp_path: Path) -> None:
    """infer_pipeline.py build_infer_samples: `dispatch += ('assistant: ' + u['value'] + '</s>')`, the value as the
    test file holds it — a turn ending with a newline keeps it before "</s>" (issue 36 §4)."""
    book = umi_book(write_fake_checkout(tmp_path / "Multi-LLM-Agent", "umi"))
    item = json.loads(json.dumps(UMI_ITEM))
    conv = item["conversations"]
    conv[1]["value"] += "\n"  # the first assistant turn, as a release file may write it
    path = tmp_path / "in_domain.json"
    path.write_text(json.dumps([item]), encoding="utf-8")
    loaded = load_step_cases([path])
    model = ScriptedChatModel(responder=_reply)
    evaluate_steps(loaded.cases, lambda c: ModelSet(default=model, by_role={}), mode="multi",
                   config=AnyToolConfig(solver="umi"), loaded=loaded, prompts=book)
    planner_inputs = [str(c["messages"][0].content) for c in model.calls if c["role"] == "planner"]
    assert f"assistant: {conv[1]['value']}</s>caller: " in planner_inputs[1]
    assert conv[1]["value"].endswith("\n")


def _run(tmp_path: Path, item: dict[str, Any], config: AnyToolConfig) -> list[dict[str, Any]]:
    book = umi_book(write_fake_checkout(tmp_path / "Multi-LLM-Agent", "umi"))
    path = tmp_path / "in_domain.json"
    path.write_text(json.dumps([item]), encoding="utf-8")
    loaded = load_step_cases([path])
    model = ScriptedChatModel(responder=_reply)
    evaluate_steps(loaded.cases, lambda c: ModelSet(default=model, by_role={}), mode="multi", config=config,
                   loaded=loaded, prompts=book)
    return model.calls


def test_the_history_opens_with_the_first_turn_as_recorded_not_the_instruction(tmp_path: Path) -> None:
    """infer_pipeline.py build_infer_samples: `dispatch` begins with `'user: ' + u['value'] + '</s>'` of the
    conversation's first turn (`c[0]`), whatever `instruction` says: here the turn keeps a trailing newline and
    its own wording (issue 36: α-UMi's inputs byte for byte; found by scripts/request_diff.py)."""
    item = json.loads(json.dumps(UMI_ITEM))
    item["conversations"][0]["value"] = "Find me a comedy video, with its details.\n"
    calls = _run(tmp_path, item, AnyToolConfig(solver="umi"))
    doc = "".join(json.dumps(t) + "\n" for t in UMI_ITEM["tools"])
    user = "user: Find me a comedy video, with its details.\n</s>"
    assert str(calls[0]["messages"][0].content) == f"FAKE planner doc={doc} history={user} assistant: "
    assert str(calls[1]["messages"][0].content).startswith(f"FAKE caller doc={doc} history={user}planner: ")
    assert all(user in str(c["messages"][0].content) for c in calls)


@pytest.mark.parametrize("config", [AnyToolConfig(solver="umi"), AnyToolConfig(solver="umi", text_mode_roles=("caller",))],
                         ids=["native", "text-mode"])
def test_the_caller_gets_the_authors_text_alone_in_every_call_mode(tmp_path: Path, config: AnyToolConfig) -> None:
    """infer_pipeline.py `infer`: `model_input_for_caller` (the filled prompt + " caller: ") is the caller model's
    whole input, a plain completion: no tool list appended (text mode added a system message with our
    `TEXT_TOOLS_LIST`) and no tools bound (native mode sent `tools=`); its call is read from the text, as
    evaluate-multi_agent.py parse_output reads it."""
    calls = _run(tmp_path, UMI_ITEM, config)
    callers = [c for c in calls if c["role"] == "caller"]
    assert len(callers) == 2
    for call in callers:
        assert [type(m) for m in call["messages"]] == [HumanMessage]
        assert call["tools"] == [] and str(call["messages"][0].content).endswith(" caller: ")
        assert call["inputs"]["text_mode"] is True  # the offline stand-in writes its call as text
