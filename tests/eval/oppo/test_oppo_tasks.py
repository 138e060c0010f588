"""OPPO's eight tasks as the authors' code runs and scores them (repository OPPO-Mente-Lab/agent_eval:
`eval_scripts/tasks.py`, `agent_interface.py`, `eval_func.py`).

- the release's task-file layout, on rows written here by hand in that layout (tests/data/oppo_tasks);
- every scorer on hand-made predictions with the expected number computed by hand (arithmetic in the comments);
- every task end to end with scripted models under test and an evaluator behind a loopback OpenAI server (the real
  ChatOpenAI), over the hand-made toolset folder (tests/data/oppo_toolset);
- the CLI over the same folders.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_anytool import Catalog
from langgraph_anytool.cli.app import main
from langgraph_anytool.eval.oppo import score
from langgraph_anytool.eval.oppo.data import COLUMNS, TaskDataError, load_task
from langgraph_anytool.eval.oppo.judge import TaskEvaluator, read_verdict
from langgraph_anytool.eval.oppo.tasks import TaskRunner
from langgraph_anytool.models.testing import ScriptedChatModel, ai, call
from langgraph_anytool.tools.executors import make_executor
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.servers import OpenAIChatServer

DATA = Path(__file__).parents[2] / "data" / "oppo_tasks"
TOOLSET = Path(__file__).parents[2] / "data" / "oppo_toolset"


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return Catalog.load(TOOLSET)


def _executor(cat: Catalog) -> ApiExecutor:
    """Dev tools locally (bound by the loader); the RapidAPI tools simulated from nothing (template)."""
    return ApiExecutor(cat, default=make_executor("template"), use_catalog_executors=True)


def _evaluator(server: OpenAIChatServer, tmp_path: Path) -> TaskEvaluator:
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model="judge-test", base_url=server.base_url, api_key="sk-test", max_retries=0, timeout=10)
    return TaskEvaluator(model, cache_dir=tmp_path / "cache", identity="judge-test")


def _bad_json_call(name: str) -> AIMessage:
    return AIMessage(content="", invalid_tool_calls=[{"name": name, "args": "{\"year\": 2025,", "id": "bad1",
                                                      "error": None, "type": "invalid_tool_call"}])


# ------------------------------------------------------------------------------------------- layouts
def test_release_layout_every_task() -> None:
    """tests/data/oppo_tasks/task<N>.csv are written in the release's layout (pandas: unnamed index column)."""
    t1 = load_task(1, DATA)
    assert [(i.id, i.type, i.get("tool_use_label")) for i in t1] == [("1", "I", "0"), ("2", "II", "1"),
                                                                      ("3", "II", "1")]
    assert t1[1].api_ref() == ("fx_rates", "convert")
    t2 = load_task(2, DATA)
    assert t2[0].type == "II" and t2[0].simi_apis() == [("web_finder", "image_search"), ("fx_rates", "list_currencies")]
    assert {i.type for i in load_task(3, DATA)} == {"III"} and {i.type for i in load_task(5, DATA)} == {"I"}
    assert [i.id for i in load_task(4, DATA)] == ["30", "31"]
    t6 = load_task(6, DATA)
    assert t6[0].type == "II" and [m["role"] for m in t6[0].conv()] == ["user", "assistant", "tool"]
    t7 = load_task(7, DATA)
    assert t7[0].deps() == [("agent_equipments", "get_current_time")]
    assert t7[1].ref_steps() == ["list_currencies -> convert", "convert"]
    t8 = load_task(8, DATA)
    assert t8[0].type == "V" and t8[0].comb() == [("agent_equipments", "get_my_location"), ("web_finder", "web_search")]


def test_release_layout_reads_as_the_authors_read_it() -> None:
    """`tasks.py` reads each file with `pd.read_csv(data_fn, index_col=0)` and unpacks rows by position."""
    pd = pytest.importorskip("pandas")
    for task in range(1, 9):
        df = pd.read_csv(DATA / f"task{task}.csv", index_col=0)
        assert tuple(df.columns) == COLUMNS[task]
    did, tool, api, _instruction, _, _ = pd.read_csv(DATA / "task1.csv", index_col=0).iloc[1].tolist()
    assert (did, tool, api) == (2, "fx_rates", "convert")


def test_sample_set_keeps_roman_types() -> None:
    assert {i.type for i in load_task(1)} == {"I", "II"} and {i.type for i in load_task(7)} == {"IV"}


def test_layout_errors(tmp_path: Path) -> None:
    (tmp_path / "task2.csv").write_text(",did,tool_name,api_name,instruction,instruction_type\n0,1,a,b,hi,2\n")
    with pytest.raises(TaskDataError, match=r"task2\.csv: missing column\(s\) simi_apis"):
        load_task(2, tmp_path)
    (tmp_path / "task1.csv").write_text(",did,tool_name,api_name,instruction,type,tool_use_label\n0,1,a,b,hi,7,1\n")
    with pytest.raises(TaskDataError, match=r"task1\.csv: line 2, column 'type': '7'"):
        load_task(1, tmp_path)
    (tmp_path / "task7.csv").write_text(",did,tool_name,api_name,instruction,type,label,dep,hard_reliance,ref_steps\n"
                                        "0,1,a,b,hi,2,1,just_a_name,0,x -> b\n")
    with pytest.raises(TaskDataError, match=r"line 2, column 'dep': 'just_a_name'"):
        load_task(7, tmp_path)  # every column the task reads is checked when the file is loaded
    with pytest.raises(TaskDataError, match=r"expected task3\.csv"):
        load_task(3, tmp_path)
    # re-saved without the index by a spreadsheet: columns are read by name, and the byte-order mark is not part of
    # the first column's name ("did"); "2.0" is type II and "1.0" a label of 1
    (tmp_path / "task1.csv").write_bytes(b"\xef\xbb\xbfdid,tool_name,api_name,instruction,type,tool_use_label\n"
                                         b"1,a,b,hi,2.0,1.0\n")
    item = load_task(1, tmp_path)[0]
    assert (item.id, item.type, item.get("tool_use_label")) == ("1", "II", "1.0")


# ------------------------------------------------------------------------------------------- scorers
def test_task1_macro_as_sklearn() -> None:
    """eval_func.py evaluate_task1: precision_recall_fscore_support(labels, preds, average="macro")."""
    s = score.task1_scores([0, 0, 1, 1, 1], [0, 1, 1, 0, 1])
    # class 0: tp 1, fp 1, fn 1 → P 1/2, R 1/2, F1 1/2; class 1: tp 2, fp 1, fn 1 → P 2/3, R 2/3, F1 2/3
    # macro: P = R = F1 = (1/2 + 2/3) / 2 = 7/12; accuracy 3/5; tool class alone: 2/3
    assert (s["precision"], s["recall"], s["f1"]) == pytest.approx((7 / 12, 7 / 12, 7 / 12))
    assert s["accuracy"] == pytest.approx(3 / 5) and s["tool_precision"] == pytest.approx(2 / 3)
    s = score.task1_scores([1, 0, 0, 0], [1, 1, 0, 0])
    # class 1: tp 1, fp 1, fn 0 → P 1/2, R 1, F1 2/3; class 0: tp 2, fp 0, fn 1 → P 1, R 2/3, F1 4/5
    # macro P = 3/4, R = 5/6, F1 = (2/3 + 4/5) / 2 = 11/15 (the mean of the F1s, not F1 of the means, 0.789)
    assert (s["precision"], s["recall"], s["f1"]) == pytest.approx((3 / 4, 5 / 6, 11 / 15))
    # only class 1 present in labels and predictions: sklearn averages over that class alone → 1, 1, 1
    assert score.task1_scores([1, 1], [1, 1])["f1"] == 1.0
    # a class never predicted: its precision is 0/0 → 0 (zero_division); labels [1,0], preds [0,0]:
    # class 0: tp 1, fp 1 → P 1/2, R 1, F1 2/3; class 1: P 0, R 0, F1 0 → macro P 1/4, R 1/2, F1 1/3
    assert (score.task1_scores([1, 0], [0, 0])["precision"], score.task1_scores([1, 0], [0, 0])["f1"]) == \
        pytest.approx((1 / 4, 1 / 3))


def test_task1_agrees_with_sklearn() -> None:
    """The same numbers as the authors' call, `precision_recall_fscore_support(average="macro")`, on seeded random
    labels and predictions (including single-class cases)."""
    metrics = pytest.importorskip("sklearn.metrics")
    import random

    rng = random.Random(18)
    for n in [1, 2, 3, 5, 8, 13, 40] * 6:
        y = [rng.randint(0, 1) for _ in range(n)]
        p = [rng.randint(0, 1) for _ in range(n)]
        ours = score.task1_scores(y, p)
        prec, rec, f1, _ = metrics.precision_recall_fscore_support(y, p, average="macro", zero_division=0)
        assert (ours["precision"], ours["recall"], ours["f1"]) == pytest.approx((prec, rec, f1))


def test_task2_scores() -> None:
    """eval_func.py evaluate_task2."""
    assert score.task2_item(False, True, None, "web_search", []) == (0, "did not call a function")
    assert score.task2_item(True, False, "web_search", "web_search", [])[0] == 0  # arguments not JSON → 0
    assert score.task2_item(True, True, "image_search", "web_search", ["image_search"]) == \
        (0, "has chosen an incorrect function")
    assert score.task2_item(True, True, "made_up", "web_search", ["image_search"])[1] == \
        "has hallucinated a function name"
    s = score.task2_scores([(1, True), (0, True), (0, False), (0, True)])
    # score = right / items = 1/4; precision = right / items with a call = 1/3; tool-use rate = 3/4
    assert (s["accuracy"], s["precision"], s["tool_use_rate"]) == pytest.approx((1 / 4, 1 / 3, 3 / 4))


def test_task4_scores() -> None:
    """eval_func.py evaluate_task4 + _check_params_with_rule."""
    assert score.task4_rule(False, True, None)[0] == 0
    assert score.task4_rule(True, False, None)[0] == 0
    assert score.task4_rule(True, True, "{'status': 'error', 'msg': 'File Not Found: a.png'}") == (0, "File not found")
    assert score.task4_rule(True, True, '{"status": "error", "msg": "bad city"}') == (1, "WARNING: to double check")
    assert score.task4_rule(True, True, None) == (1, "")  # not executed: nothing to check
    s = score.task4_scores([(1, "call")] * 4, [True, False, False, False])
    # four calls, all pass the rule: precision 4/4 = 1.00 (the paper); our strict figure 1/4 = 0.25
    assert (s["precision"], s["score"], s["strict_correct_rate"]) == pytest.approx((1.0, 1.0, 0.25))
    s = score.task4_scores([(1, "call"), (1, "call"), (0, "call"), (0, "none"), (0, "excluded")],
                           [True, False, False, False, False])
    # 2 of the 3 calls made pass → precision 2/3; score = 2 / 4 items scored (the excluded run is left out, as
    # run_eval.ipynb leaves rows whose run raised out of evaluate_task4) = 1/2; strict 1/5 over every item
    assert (s["precision"], s["score"], s["strict_correct_rate"]) == pytest.approx((2 / 3, 1 / 2, 1 / 5))
    assert score.task4_scores([(0, "excluded")], [False]) == {"precision": 0.0, "score": 0.0,
                                                              "strict_correct_rate": 0.0}


def test_task6_url_rule() -> None:
    """eval_func.py _check_response_w_tool_via_rule: a URL over 30 characters in the reply and not in the result."""
    roles = ["user", "assistant", "tool", "assistant"]
    result = "{'url': 'https://example.org/guides/tide-pools-for-beginners'}"
    assert score.task6_rule(roles, result, "See https://example.org/guides/tide-pools-for-beginners") == (1, "")
    bad = "https://example.org/guides/tide-pools-for-experts"  # 49 characters, not in the result
    assert score.task6_rule(roles, result, f"See {bad}") == (0, f"Found URL not in the function result: {bad}")
    assert score.task6_rule(roles, result, "See https://ex.io/a")[0] == 1  # 18 characters: allowed
    assert score.task6_rule(["system", *roles], result, "fine")[0] == 1
    assert score.task6_rule(["user", "assistant", "tool", "tool", "assistant"], result, "x") == \
        (0, "the roles of messages are not expected")


def test_task7_step_matching() -> None:
    """eval_func.py _check_act_steps."""
    p = score.task7_progress
    # last call kept though it failed: [list_currencies, convert] vs "list_currencies -> convert" → 2/2
    assert p([("list_currencies", True), ("convert", False)], ["list_currencies -> convert"]) == 1.0
    # a failed call before the last is dropped: [a_step, c_step] vs a,b,c → position 0 only → 1/3
    assert p([("a_step", True), ("b_step", False), ("c_step", True)], ["a_step -> b_step -> c_step"]) == \
        pytest.approx(1 / 3)
    # by position: [a_step, x, c_step] → positions 0 and 2 match → 2/3 (a longest-prefix rule would give 1/3)
    assert p([("a_step", True), ("x", True), ("c_step", False)], ["a_step -> b_step -> c_step"]) == \
        pytest.approx(2 / 3)
    # substring and a/b alternatives: "currencies" is in "languages/currencies" → 3/3
    assert p([("typeahead", True), ("currencies", True), ("search", True)],
             ["typeahead -> languages/currencies -> search"]) == 1.0
    # the best over the alternative sequences: 0/3 for the first, 2/2 for the second
    assert p([("languages", True), ("search", True)],
             ["typeahead -> languages/currencies -> search", "languages/currencies -> search"]) == 1.0
    assert p([], ["a -> b"]) == 0.0


def test_verdicts_read_as_the_authors_read_them() -> None:
    """eval_func.py: tasks 4-8 `resp.lower().startswith("yes")`; task 3 (`_check_clarification`) `"yes" in`."""
    assert read_verdict(5, "Yes, the answer is right.").passed  # type: ignore[union-attr]
    assert read_verdict(5, "YES").passed  # type: ignore[union-attr]
    assert not read_verdict(5, " yes").passed  # type: ignore[union-attr]  # not stripped, as the authors
    assert not read_verdict(8, "No. Though yes, partly.").passed  # type: ignore[union-attr]
    assert read_verdict(3, "No... well, yes.").passed  # type: ignore[union-attr]  # substring in task 3
    assert not read_verdict(3, "No.").passed  # type: ignore[union-attr]
    # a JSON verdict is no "yes" for the authors; our JSON form is the named variant json_verdicts=True
    assert not read_verdict(6, '{"label": "pass", "reason": "ok"}').passed  # type: ignore[union-attr]
    assert read_verdict(6, '{"label": "pass", "reason": "ok"}', json_verdicts=True).passed  # type: ignore[union-attr]
    assert read_verdict(3, '{"label": "fail", "reason": "yes-man"}').passed  # type: ignore[union-attr]  # "yes" in
    assert not read_verdict(3, '{"label": "fail", "reason": "yes-man"}',  # type: ignore[union-attr]
                            json_verdicts=True).passed
    assert read_verdict(5, "") is None


# ------------------------------------------------------------------------------------------- tasks end to end
def test_task1_and_task2_with_scripted_model(cat: Catalog) -> None:
    items = load_task(1, DATA)  # labels 0, 1, 1
    model = ScriptedChatModel(replies=[ai("", call("convert", source="EUR", target="JPY", amount=1)),  # misuse
                                       ai("About 40,000 yen."), ai("", call("days_of_month", year=2024, month=3))])
    rep = TaskRunner(cat, model).run(1, items)
    # labels [0,1,1], predictions [1,0,1]: class 0 tp 0 → P 0, R 0, F1 0; class 1 tp 1, fp 1, fn 1 → 1/2 each
    # macro P = R = F1 = 1/4
    assert (rep.metrics["precision"], rep.metrics["recall"], rep.metrics["f1"]) == pytest.approx((0.25, 0.25, 0.25))
    first = model.calls[0]
    assert not any(isinstance(m, SystemMessage) for m in first["messages"])  # the authors send no system prompt
    assert first["tools"] == ["convert"]  # the API's own name (convert_doc_to_openai_format)
    props = first["tool_schemas"][0]["function"]["parameters"]["properties"]
    assert props["amount"]["type"] == "number" and props["on_date"]["type"] == "string"

    model2 = ScriptedChatModel(replies=[ai("", call("web_search", query="tide pools")), _bad_json_call("days_of_month")])
    rep2 = TaskRunner(cat, model2).run(2, load_task(2, DATA))
    # item 1 right; item 2 called, arguments not JSON → 0: accuracy 1/2, precision 1/2, tool-use 2/2
    assert rep2.metrics == pytest.approx({"accuracy": 0.5, "precision": 0.5, "tool_use_rate": 1.0})
    assert model2.calls[0]["tools"] == ["web_search", "image_search", "list_currencies"]  # right API first


def test_task2_reads_calls_as_the_authors_do(cat: Catalog) -> None:
    """eval_func.py _extract_func_calls: a legacy `function_call` counts, and its arguments go through json.loads."""
    legacy_ok = AIMessage(content="", additional_kwargs={"function_call": {"name": "web_search",
                                                                           "arguments": '{"query": "tide pools"}'}})
    legacy_empty = AIMessage(content="", additional_kwargs={"function_call": {"name": "days_of_month",
                                                                              "arguments": ""}})
    rep = TaskRunner(cat, ScriptedChatModel(replies=[legacy_ok, legacy_empty])).run(2, load_task(2, DATA))
    # item 1: right function, arguments parse → 1; item 2: json.loads("") fails → 0, but a call was made
    assert [i.score for i in rep.items] == [1.0, 0.0] and rep.items[1].reason == "function call is not parsed successfully"
    assert rep.metrics == pytest.approx({"accuracy": 0.5, "precision": 0.5, "tool_use_rate": 1.0})


def test_task3_with_evaluator(cat: Catalog, tmp_path: Path) -> None:
    model = ScriptedChatModel(replies=[ai("How much are your savings, and in which currency?"),
                                       ai("", call("days_of_month", year=2025, month=1))])
    with OpenAIChatServer(["Yes"]) as server:
        rep = TaskRunner(cat, model, evaluator=_evaluator(server, tmp_path)).run(3, load_task(3, DATA))
        requests = server.chat_requests
    # item 1: no call, evaluator "Yes" → 1; item 2: a call → "misuse tools" 0, no evaluator call → 1/2
    assert rep.metrics["clarification_rate"] == 0.5 and rep.items[1].reason == "misuse tools"
    assert len(requests) == 1 and [m["role"] for m in requests[0]["messages"]] == ["user"]
    assert "How much are your savings" in requests[0]["messages"][0]["content"]
    assert model.calls[0]["tools"] == ["convert"]  # no ask_user in the paper's protocol
    assert "evaluator judge-test" in rep.table()

    ours = ScriptedChatModel(replies=[ai("", call("ask_user", question="How much?")), ai("Which month?")])
    rep_ours = TaskRunner(cat, ours, protocol="ours", ask_user=True).run(3, load_task(3, DATA))
    assert "ask_user" in ours.calls[0]["tools"] and isinstance(ours.calls[0]["messages"][0], SystemMessage)
    assert rep_ours.metrics["clarification_rate"] == 1.0  # ask_user call; a question mark (no evaluator)


def test_task4_rule_on_the_executed_call(cat: Catalog) -> None:
    # each executed call gets perform_task4's second turn (a reply to the result, scored by nothing)
    model = ScriptedChatModel(replies=[ai("", call("days_of_month", year=2024, month="3")), ai("31 days."),
                                       ai("", call("get_user_profile")), ai("You are Ada.")])
    executor = _executor(cat)
    try:
        rep = TaskRunner(cat, model, executor=executor).run(4, load_task(4, DATA))
        bad = ScriptedChatModel(replies=[_bad_json_call("days_of_month"), ai("Your name is Ada.")])
        rep_bad = TaskRunner(cat, bad, executor=executor).run(4, load_task(4, DATA))
    finally:
        executor.close()
    # both calls executed, no "file not found" → precision 2/2 = 1.0, score 2/2;
    # strict: month "3" is a string where the schema says integer → 1/2
    assert rep.metrics == pytest.approx({"precision": 1.0, "score": 1.0, "strict_correct_rate": 0.5})
    assert "Ada" in rep.items[1].prediction["tool_result"]  # config.yml's USER, served by get_user_profile
    # arguments not JSON: perform_task4's json.loads raises, the row is left out; the other item made no call →
    # precision 0 (no call made), score 0/1, strict 0/2
    assert [i.status for i in rep_bad.items] == ["excluded", "none"]
    assert rep_bad.metrics == {"precision": 0.0, "score": 0.0, "strict_correct_rate": 0.0}
    assert "1 item(s) left out of precision and score" in rep_bad.table()


def test_task5_6_8_with_evaluator(cat: Catalog, tmp_path: Path) -> None:
    answers = [ai("Rayleigh scattering of sunlight."), ai("Something about money.")]
    with OpenAIChatServer(["Yes, correct.", "no, too vague", "YES", "Yes, the plan is sound."]) as server:
        evaluator = _evaluator(server, tmp_path)
        rep5 = TaskRunner(cat, ScriptedChatModel(replies=answers), evaluator=evaluator).run(5, load_task(5, DATA))
        m6 = ScriptedChatModel(replies=[ai("I am in Porto, Portugal."),
                                        ai("See https://example.org/guides/tide-pools-for-experts")])
        rep6 = TaskRunner(cat, m6, evaluator=evaluator).run(6, load_task(6, DATA))
        m8 = ScriptedChatModel(replies=[ai("1. get_my_location\n2. web_search for things to do there")])
        rep8 = TaskRunner(cat, m8, evaluator=evaluator).run(8, load_task(8, DATA))
        requests = server.chat_requests
    assert rep5.metrics["pass_rate"] == 0.5  # yes, no → 1/2
    # task 6: item 1 passes the URL rule, evaluator YES → 1; item 2 a 49-character URL not in the result → 0,
    # never sent to the evaluator → 1/2; URL rule 1/2
    assert rep6.metrics == pytest.approx({"pass_rate": 0.5, "url_rule_pass": 0.5})
    assert len(requests) == 4 and rep6.items[1].reason.startswith("Found URL")
    msgs6 = m6.calls[0]["messages"]
    assert [type(m) for m in msgs6] == [HumanMessage, AIMessage, ToolMessage] and m6.calls[0]["tools"] == []
    assert rep8.metrics["pass_rate"] == 1.0
    assert '"name": "get_my_location"' in m8.calls[0]["messages"][0].content  # tool documents in the request
    assert "Plan an afternoon" in requests[3]["messages"][0]["content"]


def test_task7_evaluator_then_step_progress(cat: Catalog, tmp_path: Path) -> None:
    model = ScriptedChatModel(replies=[
        ai("", call("get_current_time")), ai("", call("get_current_time")), ai("It is a Sunday."),  # item 1
        ai("", call("list_currencies")), ai("", call("convert", source="EUR", target="JPY", amount=100)),
        ai("About 16,000 yen."),  # item 2
    ])
    executor = _executor(cat)
    try:
        with OpenAIChatServer(["No, it never read the calendar.", "Yes, solved."]) as server:
            rep = TaskRunner(cat, model, evaluator=_evaluator(server, tmp_path), executor=executor,
                             task7_steps="calls").run(7, load_task(7, DATA))
            conv = json.loads(server.chat_requests[0]["messages"][0]["content"].split("\n\n")[1])
    finally:
        executor.close()
    # item 1: evaluator no → steps [get_current_time, get_current_time] vs get_current_time -> days_of_month:
    # position 0 matches, position 1 does not → 1/2; item 2: evaluator yes → 1. Mean (1/2 + 1) / 2 = 3/4
    assert [i.score for i in rep.items] == [0.5, 1.0] and rep.metrics["progress"] == pytest.approx(0.75)
    assert rep.metrics["progress_failed_as_0"] == pytest.approx(0.75)  # no run raised
    assert [m["role"] for m in conv] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert model.calls[0]["tools"] == ["days_of_month", "get_current_time"]  # main API, then its dependencies


def test_task7_extracted_steps_read_as_extract_tools_reads_them() -> None:
    """eval_func.py `_extract_tools`: the pattern chosen by the reply's first character ("-" or not) and by a
    backtick anywhere in it; the name's parenthesised part cut (`re.sub`); "success" in the lower-cased result."""
    assert score.extracted_steps("- `get_weather`: success\n- `convert (EUR to JPY)`: Failure") == [
        ("get_weather", True), ("convert", False)]
    # the name's `(.+):` is greedy: it runs to the line's last colon, so "book(flight): failed" is the name there,
    # "book: failed" once its parenthesised part is cut
    assert score.extracted_steps("1. search: Success\n2. book(flight): failed: timeout") == [
        ("search", True), ("book: failed", False)]
    assert score.extracted_steps("The assistant used no tool.") == []
    # the fallback: every function_call of the assistant, each a success (tool_calls too, the tools= form)
    conv = [{"role": "system", "content": "s"}, {"role": "assistant", "function_call": {"name": "a", "arguments": ""}},
            {"role": "assistant", "function_call": json.dumps({"name": "b"})},
            {"role": "assistant", "tool_calls": [{"id": "1", "function": {"name": "c", "arguments": "{}"}}]}]
    assert score.called_functions(conv) == [("a", True), ("b", True), ("c", True)]


def test_task7_progress_reads_the_steps_the_evaluator_lists(cat: Catalog, tmp_path: Path) -> None:
    """eval_func.py `evaluate_task7`: `_check_answer` says no → `_check_act_steps` on `_extract_tools`' list. Item 1
    called get_current_time twice (the calls give 1/2); the evaluator lists get_current_time: success and
    days_of_month: failure → kept [get_current_time] + the last, days_of_month → 2/2 = 1. Item 2: the extraction
    reply lists nothing, so the conversation's function calls (each a success): [list_currencies, convert] → 1."""
    model = ScriptedChatModel(replies=[
        ai("", call("get_current_time")), ai("", call("get_current_time")), ai("It is a Sunday."),
        ai("", call("list_currencies")), ai("", call("convert", source="EUR", target="JPY", amount=100)),
        ai("About 16,000 yen."),
    ])
    replies = ["No.", "1. `get_current_time`: success\n2. `days_of_month (for today)`: failure",
               "No, not converted.", "I cannot tell."]
    executor = _executor(cat)
    try:
        with OpenAIChatServer(replies) as server:
            rep = TaskRunner(cat, model, evaluator=_evaluator(server, tmp_path), executor=executor).run(
                7, load_task(7, DATA))
            prompts = [r["messages"][0]["content"] for r in server.chat_requests]
    finally:
        executor.close()
    assert [i.score for i in rep.items] == [1.0, 1.0]
    assert rep.items[0].prediction["extracted_steps"] == [["get_current_time", True], ["days_of_month", False]]
    assert rep.items[1].prediction["extracted_steps"] == [["list_currencies", True], ["convert", True]]
    # the extraction prompt holds the conversation as _check_answer's does (indented JSON, no system message)
    assert prompts[1].split("\n\n")[1] == prompts[0].split("\n\n")[1]
    assert len(prompts) == 4  # one extraction per item: the first try gave steps


def test_task7_unknown_function_fails_the_item(cat: Catalog) -> None:
    """agent_interface.py perform_task7 raises on a function name it did not offer; the row then scores 0."""
    model = ScriptedChatModel(replies=[ai("", call("get_current_time")), ai("", call("book_flight", to="OPO")),
                                       ai("", call("list_currencies")), ai("", call("convert", source="EUR",
                                                                                    target="JPY", amount=100)),
                                       ai("About 16,000 yen.")])
    executor = _executor(cat)
    try:
        rep = TaskRunner(cat, model, executor=executor).run(7, load_task(7, DATA))
    finally:
        executor.close()
    assert rep.items[0].score == 0.0 and "invalid function name 'book_flight'" in rep.items[0].reason
    # item 2, no evaluator: steps [list_currencies, convert] vs "list_currencies -> convert" → 2/2 = 1.
    # run_eval.ipynb leaves item 1 out of evaluate_task7's average: progress 1/1 = 1.0; counted as 0: (0 + 1)/2
    assert rep.metrics == {"progress": 1.0, "progress_failed_as_0": 0.5} and rep.items[0].status == "excluded"
    assert "1 item(s) left out of progress" in rep.table()


# ------------------------------------------------------------------------------------------- CLI
def test_cli_all_tasks_on_the_release_layout(capsys: Any, tmp_path: Path, monkeypatch: Any) -> None:
    argv = ["eval", "tasks", "--task", "1-8", "--data", str(DATA), "--catalog", str(TOOLSET), "--offline",
            "--execution", "template", "--json", "--evaluator-cache", str(tmp_path / "c")]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["task"] for r in data] == list(range(1, 9))
    assert [len(r["items"]) for r in data] == [3, 2, 2, 2, 2, 2, 2, 1]
    assert all(r["errors"] == 0 and r["protocol"] == "paper" for r in data)
    assert "NOT the paper's" in data[4]["scoring"]  # task 5 without an evaluator
    judged = [*argv[:-2], "--evaluator", "openai:judge-test", "--evaluator-cache", str(tmp_path / "c"), "--task", "5"]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIChatServer(policy=lambda body: "Yes.") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main(judged) == 0
        first = json.loads(capsys.readouterr().out)[0]
        assert main(judged) == 0  # same evaluator, same endpoint: both verdicts come from the cache
        again = json.loads(capsys.readouterr().out)[0]
        assert len(server.chat_requests) == 2
    assert first["metrics"]["pass_rate"] == 1.0 and first["evaluator_calls"] == 2
    assert again["evaluator_calls"] == 0 and again["evaluator_cache_hits"] == 2
    with OpenAIChatServer(policy=lambda body: "No.") as other:  # same model name, another endpoint: no reuse
        monkeypatch.setenv("OPENAI_BASE_URL", other.base_url)
        assert main(judged) == 0
        assert len(other.chat_requests) == 2
    assert json.loads(capsys.readouterr().out)[0]["metrics"]["pass_rate"] == 0.0


def test_cli_errors(capsys: Any, tmp_path: Path) -> None:
    (tmp_path / "task1.csv").write_text(",did,instruction,type\n0,1,hi,1\n")
    assert main(["eval", "tasks", "--task", "1", "--offline", "--data", str(tmp_path)]) == 2
    assert "missing column" in capsys.readouterr().err
    assert main(["eval", "tasks", "--task", "0-3", "--offline"]) == 2
    assert "outside 1-8" in capsys.readouterr().err
    rows = list(csv.reader((DATA / "task4.csv").open()))
    rows[1][2] = "no_such_tool"
    with (tmp_path / "task4.csv").open("w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    assert main(["eval", "tasks", "--task", "4", "--offline", "--data", str(tmp_path), "--catalog", str(TOOLSET)]) == 2
    assert "'days_of_month' of tool 'no_such_tool' is not in catalog" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("task", range(1, 9))
def test_sample_set_offline_end_to_end(task: int) -> None:
    from langgraph_anytool.offline import OfflinePolicyModel

    cat = Catalog.builtin()
    executor = ApiExecutor.for_catalog(cat, kind="local")
    try:
        items = load_task(task)
        rep = TaskRunner(cat, OfflinePolicyModel(catalog=cat), executor=executor, model_label="offline").run(task, items)
    finally:
        executor.close()
    assert len(rep.items) == len(items) and rep.errors == 0
    assert rep.metrics and all(0.0 <= v <= 1.0 for v in rep.metrics.values())


def test_failures_count_as_the_authors_count_them(cat: Catalog, tmp_path: Path) -> None:
    """With failed_as_zero (`--failed-as-zero`), a failed evaluator check costs only its verdict (eval_func.py
    `_check_params_with_gpt4` returns 0 with a warning; `evaluate_task7` scores the row 0 and keeps it in the
    average); a failed run of the model under test
    is left out of tasks 4 and 7's figures (run_eval.ipynb)."""
    executor = _executor(cat)
    try:
        with OpenAIChatServer([]) as server:  # an exhausted script: every evaluator request gets a 400
            evaluator = _evaluator(server, tmp_path)
            m4 = ScriptedChatModel(replies=[ai("", call("days_of_month", year=2024, month=3))])
            rep4 = TaskRunner(cat, m4, evaluator=evaluator, executor=executor,
                              failed_as_zero=True).run(4, load_task(4, DATA)[:1])
            m7 = ScriptedChatModel(replies=[ai("", call("list_currencies")), ai("Here are the currencies.")])
            rep7 = TaskRunner(cat, m7, evaluator=evaluator, executor=executor,
                              failed_as_zero=True).run(7, load_task(7, DATA)[1:])

        def broken(messages: Any, names: Any) -> AIMessage:
            raise RuntimeError("provider down")

        rep4_down = TaskRunner(cat, ScriptedChatModel(responder=broken), executor=executor).run(4, load_task(4, DATA))
    finally:
        executor.close()
    # task 4: the call passes the rule (1/1); our strict figure loses the evaluator's verdict → 0
    assert rep4.metrics == {"precision": 1.0, "score": 1.0, "strict_correct_rate": 0.0}
    assert rep4.items[0].prediction["strict_reason"].startswith("WARNING: evaluator failed")
    # task 7: the evaluator failed → 0, kept in the average: progress 0/1
    assert rep7.metrics == {"progress": 0.0, "progress_failed_as_0": 0.0} and rep7.errors == 0
    # task 4, model under test down: both rows left out → nothing scored (0 by convention), errors counted
    assert rep4_down.errors == 2 and [i.status for i in rep4_down.items] == ["excluded", "excluded"]
    assert rep4_down.metrics == {"precision": 0.0, "score": 0.0, "strict_correct_rate": 0.0}
