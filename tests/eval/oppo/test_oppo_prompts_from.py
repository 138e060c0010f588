"""`anytool eval tasks --prompts-from` (issue 27 §3): the evaluator's prompts and task 8's message are the f-strings
of a (fake) OPPO-Mente-Lab/agent_eval checkout, filled with the values the authors' code puts in them.

Where each text goes follows `eval_scripts/eval_func.py` (`_get_gpt_response(prompt)`: one user message, no system
prompt; `_check_clarification` {content}, `_check_params_with_gpt4` {user_instruction} {api_doc_text}
{func_call_text}, `_check_direct_response` {user_msg} {resp}, `_check_response_w_tool` {user_msg} {assistant_msg}
{func_return} {final_resp}, `_check_answer` {conv_str}, `_check_plan` {task} {plan}) and
`eval_scripts/agent_interface.py perform_task8` (the model under test's only message). Verdicts are read as
eval_func.py reads them ("yes" first), so the expected scores are the ones there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from langgraph_anytool import Catalog
from langgraph_anytool.cli.app import main
from langgraph_anytool.eval.oppo.data import load_task
from langgraph_anytool.eval.oppo.tasks import TaskRunner
from langgraph_anytool.models.testing import ScriptedChatModel, ai, call
from langgraph_anytool.paper_prompts import oppo_book
from langgraph_anytool.paper_prompts.testing import write_fake_checkout
from tests.eval.oppo.test_oppo_tasks import DATA, TOOLSET, _evaluator, _executor
from tests.servers import OpenAIChatServer


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return Catalog.load(TOOLSET)


def test_tasks_send_the_checkouts_prompts_and_key_the_cache_by_their_hash(cat: Catalog, tmp_path: Path) -> None:
    book = oppo_book(write_fake_checkout(tmp_path / "agent_eval", "oppo"))
    with OpenAIChatServer(policy=lambda body: "Yes, fine.") as server:
        evaluator = _evaluator(server, tmp_path)
        m3 = ScriptedChatModel(replies=[ai("How much are your savings?"), ai("", call("days_of_month", year=2025,
                                                                                       month=1))])
        rep3 = TaskRunner(cat, m3, evaluator=evaluator, prompts=book).run(3, load_task(3, DATA))
        m5 = ScriptedChatModel(replies=[ai("Rayleigh scattering."), ai("Something.")])
        rep5 = TaskRunner(cat, m5, evaluator=evaluator, prompts=book).run(5, load_task(5, DATA))
        m8 = ScriptedChatModel(replies=[ai("1. get_my_location\n2. web_search")])
        rep8 = TaskRunner(cat, m8, evaluator=evaluator, prompts=book).run(8, load_task(8, DATA))
        sent = [r["messages"] for r in server.chat_requests]
        # the same prompts again: every verdict from the cache; our prompts: asked again
        TaskRunner(cat, ScriptedChatModel(replies=[ai("Rayleigh scattering."), ai("Something.")]),
                   evaluator=evaluator, prompts=book).run(5, load_task(5, DATA))
        assert len(server.chat_requests) == 4 and evaluator.hits == 2
        TaskRunner(cat, ScriptedChatModel(replies=[ai("Rayleigh scattering."), ai("Something.")]),
                   evaluator=evaluator).run(5, load_task(5, DATA))
        assert len(server.chat_requests) == 6
    items5 = load_task(5, DATA)
    assert sent[0] == [{"role": "user", "content": "FAKE task3_check content=How much are your savings?"}]
    assert sent[1:3] == [[{"role": "user", "content": f"FAKE task5_check user_msg={i.instruction} resp={a}"}]
                         for i, a in zip(items5, ("Rayleigh scattering.", "Something."), strict=True)]
    # task 8: the model under test gets perform_task8's prompt (the numbered one-line tool documents appended)
    (request,) = m8.calls[0]["messages"]
    item8 = load_task(8, DATA)[0]
    assert isinstance(request, HumanMessage) and request.content.startswith(
        f"FAKE task8_request instruction={item8.instruction} api_doc_text=1. {{\"name\": \"get_my_location\"")
    assert sent[3] == [{"role": "user", "content": f"FAKE task8_check task={request.content} "
                                                   "plan=1. get_my_location\n2. web_search"}]
    assert rep3.metrics["clarification_rate"] == 0.5 and rep5.metrics["pass_rate"] == 1.0  # "Yes" → 1
    assert rep8.metrics["pass_rate"] == 1.0
    for rep in (rep3, rep5, rep8):
        assert rep.to_dict()["prompts"] == book.provenance() and "prompts: the authors'" in rep.table()


def test_task4_6_7_evaluator_prompts(cat: Catalog, tmp_path: Path) -> None:
    book = oppo_book(write_fake_checkout(tmp_path / "agent_eval", "oppo"))
    executor = _executor(cat)
    try:
        with OpenAIChatServer(policy=lambda body: "Yes.") as server:
            evaluator = _evaluator(server, tmp_path)
            m4 = ScriptedChatModel(replies=[ai("", call("days_of_month", year=2024, month=3)), ai("March: 31 days."),
                                            ai("", call("get_user_profile")), ai("Your profile.")])
            TaskRunner(cat, m4, evaluator=evaluator, executor=executor, prompts=book).run(4, load_task(4, DATA))
            # (issue 36 §4) perform_task4's second turn: the instruction, the reply with its call and the tool
            # message `str(result)`, sent again without tools
            second = m4.calls[1]
            assert not second["tools"] and [type(m).__name__ for m in second["messages"]] == [
                "HumanMessage", "AIMessage", "ToolMessage"]
            assert second["messages"][2].name == "days_of_month" and second["messages"][1].tool_calls
            m6 = ScriptedChatModel(replies=[ai("I am in Porto."), ai("No idea.")])
            TaskRunner(cat, m6, evaluator=evaluator, prompts=book).run(6, load_task(6, DATA))
            m7 = ScriptedChatModel(replies=[ai("It is a Sunday."), ai("About 16,000 yen.")])
            TaskRunner(cat, m7, evaluator=evaluator, executor=executor, prompts=book).run(7, load_task(7, DATA))
            texts = [r["messages"][0]["content"] for r in server.chat_requests]
    finally:
        executor.close()
    item4 = load_task(4, DATA)[0]
    # evaluate_task4 passes the conversation perform_task4 returned (str() of the list) and the first call's
    # `function` dict in model_dump()'s key order (issue 36 §4; test_oppo_requests.py has the whole request)
    assert texts[0].startswith(f"FAKE task4_check user_instruction=[{{'role': 'user', 'content': "
                               f"'{item4.instruction}'}}, ")
    assert " api_doc_text={\"name\": \"days_of_month\"" in texts[0]
    assert texts[0].endswith('func_call_text={"arguments": {"year": 2024, "month": 3}, "name": "days_of_month"}')
    conv6 = load_task(6, DATA)[0].conv()
    assert texts[2].startswith(f"FAKE task6_check user_msg={conv6[0]['content']} assistant_msg=")
    assert texts[2].endswith("final_resp=I am in Porto.")
    conv_str = json.dumps([{"role": "user", "content": load_task(7, DATA)[0].instruction},
                           {"role": "assistant", "content": "It is a Sunday."}], ensure_ascii=False, indent=2)
    assert texts[4] == f"FAKE task7_check conv_str={conv_str}"


def test_task7_step_extraction_prompt_is_the_checkouts(cat: Catalog, tmp_path: Path) -> None:
    """eval_func.py `_extract_tools`: the prompt f-string with `conv_str` (the conversation without its first
    message when that is the system's, `json.dumps(..., ensure_ascii=False, indent=2)`), asked when `_check_answer`
    says no."""
    book = oppo_book(write_fake_checkout(tmp_path / "agent_eval", "oppo"))
    executor = _executor(cat)

    def reply(body: dict[str, Any]) -> str:
        text = body["messages"][0]["content"]
        return "- `days_of_month`: success" if text.startswith("FAKE task7_extract") else "No."

    try:
        with OpenAIChatServer(policy=reply) as server:
            m7 = ScriptedChatModel(replies=[ai("It is a Sunday."), ai("About 16,000 yen.")])
            rep = TaskRunner(cat, m7, evaluator=_evaluator(server, tmp_path), executor=executor, prompts=book).run(
                7, load_task(7, DATA))
            texts = [r["messages"][0]["content"] for r in server.chat_requests]
    finally:
        executor.close()
    conv_str = json.dumps([{"role": "user", "content": load_task(7, DATA)[0].instruction},
                           {"role": "assistant", "content": "It is a Sunday."}], ensure_ascii=False, indent=2)
    assert texts[:2] == [f"FAKE task7_check conv_str={conv_str}", f"FAKE task7_extract conv_str={conv_str}"]
    # the listed step, days_of_month, against "get_current_time -> days_of_month": position 0 differs → 0
    assert rep.items[0].prediction["extracted_steps"] == [["days_of_month", True]] and rep.items[0].score == 0.0


def test_cli_records_the_prompts_and_refuses_a_wrong_path(tmp_path: Path, capsys: Any) -> None:
    root = write_fake_checkout(tmp_path / "agent_eval", "oppo")
    argv = ["eval", "tasks", "--task", "8", "--data", str(DATA), "--catalog", str(TOOLSET), "--offline", "--json",
            "--evaluator-cache", str(tmp_path / "c")]
    assert main([*argv, "--prompts-from", str(root)]) == 0
    (report,) = json.loads(capsys.readouterr().out)
    assert report["prompts"]["repo"] == "OPPO-Mente-Lab/agent_eval"
    assert set(report["prompts"]["files"]) == {"eval_scripts/eval_func.py", "eval_scripts/agent_interface.py"}
    (root / "eval_scripts/eval_func.py").write_text("def _check_plan(:\n")
    assert main([*argv, "--prompts-from", str(root)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"anytool: error: --prompts-from: {root.resolve() / 'eval_scripts/eval_func.py'}: not "
                          "valid Python (line 1: ") and "\n" not in err
