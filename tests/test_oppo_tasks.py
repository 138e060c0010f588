"""OPPO's eight tasks: scorers on hand-made predictions, the evaluator through a loopback OpenAI server (real
ChatOpenAI) with its disk cache, the entry points with scripted models, and every task end to end offline."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool import Catalog
from langgraph_anytool.cli import main
from langgraph_anytool.eval import oppo_agent as agent
from langgraph_anytool.eval import oppo_score as score
from langgraph_anytool.eval.oppo_data import TaskDataError, TaskItem, load_task
from langgraph_anytool.eval.oppo_judge import TaskEvaluator, parse_verdict
from langgraph_anytool.eval.oppo_tasks import TaskRunner
from langgraph_anytool.testing import ScriptedChatModel, ai, call
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.servers import OpenAIChatServer


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return Catalog.builtin()


# ------------------------------------------------------------------------------------------- scorers
def test_task1_scores_hand_computed() -> None:
    s = score.task1_scores([True, True, False, False, True], [True, False, True, False, True])
    # positive: tp 2, fp 1, fn 1 → P = R = F1 = 2/3; negative: tp 1, fp 1, fn 1 → F1 = 1/2
    assert s["precision"] == pytest.approx(2 / 3) and s["recall"] == pytest.approx(2 / 3)
    assert s["f1"] == pytest.approx(2 / 3) and s["macro_f1"] == pytest.approx(7 / 12)
    assert s["accuracy"] == pytest.approx(3 / 5)
    never = score.task1_scores([True, False], [False, False])  # never uses a tool: P undefined → 0, R = 0
    assert never["precision"] == 0.0 and never["recall"] == 0.0 and never["macro_f1"] == pytest.approx((0 + 2 / 3) / 2)


def test_progress_hand_computed() -> None:
    ref = ["Add to Date", "Day of Week", "Next Prime"]
    assert score.progress(ref, ["add to date", "Prime Check", "Day of Week"]) == pytest.approx(2 / 3)
    assert score.progress(ref, ["Day of Week", "Next Prime"]) == 0.0  # the first step was skipped
    assert score.progress(ref, ["Add to Date", "Day of Week", "Next Prime"]) == 1.0
    with pytest.raises(ValueError):
        score.progress([], ["x"])


def test_raw_call_checks(cat: Catalog) -> None:
    prime = cat.find_api("Number Theory Toolkit", "Prime Check")
    assert score.check_raw_call(prime, True, {"n": 7919}) == (True, "ok")
    # the raw call is judged before validation: "7919" would be converted by the executor, not here
    assert score.check_raw_call(prime, True, {"n": "7919"})[0] is False
    assert "missing" in score.check_raw_call(prime, True, {})[1]
    assert "unknown" in score.check_raw_call(prime, True, {"n": 3, "x": 1})[1]
    assert score.check_raw_call(prime, False, {"n": 3})[0] is False
    assert score.check_raw_call(prime, True, '{"n": 3}')[0] is False
    assert score.matches_reference({"value": 26.2, "from_unit": "Mile"}, {"value": 26.2, "from_unit": "mile"})[0]
    assert not score.matches_reference({"value": 26}, {"value": 26.2})[0]


def test_facts_and_coverage() -> None:
    assert score.has_facts("It was a Sunday.", ["sunday"]) == (True, "all reference facts present")
    assert score.has_facts("2 and 3", ["2", "3", "5"])[0] is False
    assert score.outline_coverage("1. Loan Payment for the monthly cost\n2. inflation-adjustment later",
                                  ["Loan Payment", "Inflation Adjustment", "Affordable Loan Amount"]) == pytest.approx(2 / 3)
    assert score.rate([1.0, 0.0, 0.5, 0.5]) == pytest.approx(0.5)


def test_parse_verdict() -> None:
    v = parse_verdict('Sure: {"label": "Pass", "reason": "fine"}')
    assert v is not None and v.passed and v.reason == "fine"
    assert parse_verdict("no json") is None and parse_verdict('{"label": "maybe"}') is None


# ------------------------------------------------------------------------------------------- data
def test_sample_set_layout() -> None:
    seen: set[str] = set()
    for task in range(1, 9):
        items = load_task(task)
        assert len(items) >= 15
        seen |= {i.type for i in items}
    assert seen == {"I", "II", "III", "IV", "V"}
    assert {i.type for i in load_task(1)} == {"I", "II"}


def test_loader_errors(tmp_path: Path) -> None:
    (tmp_path / "task2.csv").write_text("id,instruction,type,api\nx,hi,II,A##B\n")
    with pytest.raises(TaskDataError, match=r"task2.csv: missing column\(s\) simi_apis"):
        load_task(2, tmp_path)
    (tmp_path / "task1.csv").write_text("instruction,type,api,tool_use_label\nhello,VI,A##B,1\n")
    with pytest.raises(TaskDataError, match=r"task1.csv: row 2, column 'type'"):
        load_task(1, tmp_path)
    with pytest.raises(TaskDataError, match=r"expected task3\.csv"):
        load_task(3, tmp_path)


def test_unknown_api_names_row(cat: Catalog, tmp_path: Path) -> None:
    (tmp_path / "task4.csv").write_text("instruction,type,api\nhello,II,Nope##Missing\n")
    runner = TaskRunner(cat, ScriptedChatModel(replies=[]))
    with pytest.raises(TaskDataError, match=r"row 2, column 'api'.*'Nope##Missing'"):
        runner.run(4, load_task(4, tmp_path))


# ------------------------------------------------------------------------------------------- scripted agents
def _fn(cat: Catalog, tool: str, api: str) -> str:
    return cat.function_name(cat.find_api(tool, api).id)


def test_task1_and_task3_with_scripted_model(cat: Catalog) -> None:
    items = load_task(1)[:2] + load_task(1)[8:10]  # two type I, then two type II
    prime_fn = [cat.function_name(cat.find_api(*i.get("api").split("##")).id) for i in items]
    model = ScriptedChatModel(replies=[
        ai("Because the Earth's orbit rains."),  # I, no tool: right
        ai("", call(prime_fn[1], year=2024)),  # I, tool: wrong
        ai("", call(prime_fn[2], date="1969-07-20")),  # II, tool: right
        ai("It was a Sunday, I believe."),  # II, no tool: wrong
    ])
    rep = TaskRunner(cat, model).run(1, items)
    # positive class: tp 1, fp 1, fn 1 → P = R = F1 = 1/2; negative likewise 1/2
    assert rep.metrics["precision"] == pytest.approx(0.5) and rep.metrics["macro_f1"] == pytest.approx(0.5)
    assert model.calls[0]["tools"] == [prime_fn[0]]

    items3 = load_task(3)[:3]
    model3 = ScriptedChatModel(replies=[
        ai("", call(agent.ASK_USER, question="Which date do you mean?")),
        ai("Which number should I check?"),
        ai("", call(_fn(cat, "Loan Calculator", "Loan Payment"), principal=1, annual_rate_percent=1, years=1)),
    ])
    rep3 = TaskRunner(cat, model3).run(3, items3)
    assert rep3.metrics["clarification_rate"] == pytest.approx(2 / 3)
    assert [i.prediction["kind"] for i in rep3.items] == ["ask", "ask_text", "call"]
    assert agent.ASK_USER in model3.calls[0]["tools"]


def test_task2_and_task4_with_scripted_model(cat: Catalog) -> None:
    items = load_task(2)[:2]
    right0 = _fn(cat, *items[0].get("api").split("##"))
    wrong1 = _fn(cat, *items[1].lines("simi_apis")[0].split("##"))
    model = ScriptedChatModel(replies=[ai("", call(right0, date="1969-07-20")), ai("", call(wrong1))])
    rep = TaskRunner(cat, model).run(2, items)
    assert rep.metrics["accuracy"] == pytest.approx(0.5)
    assert len(model.calls[0]["tools"]) == 5 and right0 in model.calls[0]["tools"]

    t4 = load_task(4)
    by_api = {i.get("api"): i for i in t4}
    prime, days = by_api["Number Theory Toolkit##Prime Check"], by_api["Date Calculator##Difference Between Dates"]
    model4 = ScriptedChatModel(replies=[
        ai("", call(_fn(cat, "Number Theory Toolkit", "Prime Check"), n="7919")),  # string: wrong on the raw call
        ai("", call(_fn(cat, "Date Calculator", "Difference Between Dates"), start_date="2024-01-15",
                    end_date="2024-03-01")),  # right
    ])
    rep4 = TaskRunner(cat, model4).run(4, [prime, days])
    assert rep4.metrics["correct_call_rate"] == pytest.approx(0.5)
    assert "not of type integer" in rep4.items[0].reason


def test_evaluator_through_loopback_chatopenai_with_cache(cat: Catalog, tmp_path: Path) -> None:
    from langchain_openai import ChatOpenAI

    items = load_task(5)[:3]
    answers = [ai("Rain, mostly."), ai("Leap years fix the calendar."), ai("Primes have two divisors.")]
    verdicts = ['{"label": "pass", "reason": "right"}', '{"label": "fail", "reason": "vague"}', "garbage",
                '{"label": "pass", "reason": "right on retry"}']
    with OpenAIChatServer(verdicts) as server:
        judge_model = ChatOpenAI(model="judge-test", base_url=server.base_url, api_key="sk-test", max_retries=0,
                                 timeout=10)
        evaluator = TaskEvaluator(judge_model, cache_dir=tmp_path / "cache", identity="judge-test")
        first = TaskRunner(cat, ScriptedChatModel(replies=list(answers)), evaluator=evaluator).run(5, items)
        # pass, fail, unusable (fail, not cached) → 1/3
        assert first.metrics["pass_rate"] == pytest.approx(1 / 3) and first.evaluator_calls == 3
        second = TaskRunner(cat, ScriptedChatModel(replies=list(answers)), evaluator=evaluator).run(5, items)
        # two verdicts from the cache; the unusable one asked again → pass: 2/3
        assert second.metrics["pass_rate"] == pytest.approx(2 / 3)
        assert second.evaluator_calls == 1 and second.evaluator_cache_hits == 2
        requests = server.chat_requests
    assert len(requests) == 4 and "Rain, mostly." in json.dumps(requests[0]["messages"])
    assert "scoring: evaluator judge-test" in first.table()
    assert len(list((tmp_path / "cache").glob("*.json"))) == 3


def test_task7_executes_the_chain(cat: Catalog) -> None:
    item = load_task(7)[0]  # Add to Date -> Day of Week
    add, dow = _fn(cat, "Date Calculator", "Add to Date"), _fn(cat, "Date Calculator", "Day of Week")
    model = ScriptedChatModel(replies=[
        ai("", call(dow, date="2025-03-14")),  # starts with the dependent step: no progress from it
        ai("", call(add, date="2025-03-14", days=100)),
        ai("", call(dow, date="2025-06-22")),
        ai("It will be a Sunday (2025-06-22)."),
    ])
    executor = ApiExecutor.for_catalog(cat, kind="local")
    try:
        rep = TaskRunner(cat, model, executor=executor).run(7, [item])
    finally:
        executor.close()
    assert rep.metrics["progress"] == 1.0
    assert [c["ok"] for c in rep.items[0].prediction["calls"]] == [True, True, True]
    assert "2025-06-22" in str(model.calls[2]["messages"][-1].content)  # the executed result reached the model


def test_task6_and_task8_with_scripted_model(cat: Catalog) -> None:
    t6 = load_task(6)[:2]
    model = ScriptedChatModel(replies=[ai("It was a Sunday."), ai("About 40 days.")])
    rep = TaskRunner(cat, model).run(6, t6)
    assert rep.metrics["pass_rate"] == pytest.approx(0.5)  # the second misses the fact "46"
    assert any(type(m).__name__ == "ToolMessage" for m in model.calls[0]["messages"])

    t8 = load_task(8)[:1]
    names = [line.split("/", 1)[1] for line in t8[0].lines("comb")]
    plan = "\n".join(f"{i + 1}. Use {n}." for i, n in enumerate(names))
    rep8 = TaskRunner(cat, ScriptedChatModel(replies=[ai(plan)])).run(8, t8)
    assert rep8.metrics == {"pass_rate": 1.0, "api_coverage": 1.0}


# ------------------------------------------------------------------------------------------- offline, end to end
@pytest.mark.slow
@pytest.mark.parametrize("task", range(1, 9))
def test_every_task_offline_end_to_end(task: int, cat: Catalog) -> None:
    from langgraph_anytool.offline import OfflinePolicyModel

    executor = ApiExecutor.for_catalog(cat, kind="local")
    try:
        items = load_task(task)
        rep = TaskRunner(cat, OfflinePolicyModel(catalog=cat), executor=executor, model_label="offline").run(task, items)
    finally:
        executor.close()
    assert len(rep.items) == len(items) and rep.errors == 0
    assert rep.metrics and all(0.0 <= v <= 1.0 for v in rep.metrics.values())
    assert sum(rep.types.values()) == len(items)


def test_cli_tasks(capsys: Any, tmp_path: Path) -> None:
    assert main(["eval", "tasks", "--task", "2", "--offline", "--limit", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data[0]["task"] == 2 and len(data[0]["items"]) == 3 and "NOT an LLM" in data[0]["model"]
    (tmp_path / "task1.csv").write_text("instruction,type\nhi,I\n")
    assert main(["eval", "tasks", "--task", "1", "--offline", "--data", str(tmp_path)]) == 2
    assert "missing column" in capsys.readouterr().err


def test_upstream_layout_round_trip(tmp_path: Path) -> None:
    """Extra upstream columns are kept; the item reads the named ones."""
    path = tmp_path / "task7.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "instruction", "type", "api", "dep", "hard_reliance", "ref_steps", "extra"])
        w.writerow(["q1", "Quote me", "IV", "t##listquotes", "t##exchange", "1", "listquotes -> exchange", "z"])
    item: TaskItem = load_task(7, tmp_path)[0]
    assert item.ref_steps() == ["listquotes", "exchange"] and item.lines("dep") == ["t##exchange"]
    assert item.get("extra") == "z"
